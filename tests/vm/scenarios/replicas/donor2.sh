#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas, donor2: the same as the first donor, in its failure domain.
exec ./donor.sh rackA
