#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

sock=/run/farswapd-kx.sock
fs_start_donor --donate 64M --slab-size 4M --headroom 16M --hysteresis 8M \
	--stats-socket "$sock" --require-session-keys
bed_signal ready
bed_wait host done 240
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock" | grep '^counters')
echo "  farswapd: $stats"
grep -q " auth_kx=2 " <<<"$stats" || bed_fail "auth_kx: want 2 (basic, badio)"
grep -q " auth_legacy=0 " <<<"$stats" || bed_fail "auth_legacy: want 0"
grep -q " bad_tags=0 " <<<"$stats" || bed_fail "bad_tags: want 0"
grep -Eq " join_refused=[1-9]" <<<"$stats" || bed_fail "join_refused: want the changed tag counted"
grep -q " auth_failed=1 " <<<"$stats" || bed_fail "auth_failed: want 1 (the handshake without a session key)"
fs_stop_donor
check_kernel_log
