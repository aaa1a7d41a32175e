#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-repair, donor2: the donor that keeps every page.
exec ./donor.sh rackB
