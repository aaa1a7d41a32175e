#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas, donor3: the same as the first donor, in a failure domain of
# its own: every chunk should have a replica here.  Its farswapd is
# stopped while the first workload fills (the host binds in rackA alone)
# and continued after.
exec ./donor.sh rackB pause
