#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ping the donor, report the round trip, tell the donor we are done.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

bed_wait donor ready 60
out=$(ping -c 5 -i 0.2 -W 2 "$FARSWAP_PEER_donor") || bed_fail "ping $FARSWAP_PEER_donor failed: $out"
echo "$out"
# "rtt min/avg/max/mdev = 0.512/0.734/1.021/0.170 ms"
avg=$(sed -n 's|^rtt [^=]*= [^/]*/\([^/]*\)/.*|\1|p' <<<"$out")
bed_result ping_rtt_avg_ms "$avg"
bed_signal "done"
check_kernel_log
