#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-latency, donor3: as the first donor.
exec ./donor.sh
