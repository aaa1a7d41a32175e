#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-repair, donor3: away while the workload fills, then the
# target of the re-replication, whose power is cut midway.
exec ./donor.sh rackC pause
