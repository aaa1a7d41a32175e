#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# relay, the donor: a keyed farswapd (7471) and, for the control, one
# without keys (7472); the relay stands between them and the host.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

counter() { "$FS_FARSWAPD" --stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }

fs_start_donor --donate 96M --slab-size 16M --headroom 32M
"$FS_FARSWAPD" --config /dev/null --listen "$FARSWAP_ADDR:7472" \
	--stats-socket none --insecure-no-auth --donate 48M --headroom 16M \
	--slab-size 16M --handshake-timeout 20s --auth-timeout 20s \
	>"$BED/open-farswapd.log" 2>&1 &
open=$!
bed_wait_rdma_listen 7472 60 "$open"
bed_signal ready

bed_wait host done 900
kill -TERM "$open"
wait "$open" || bed_fail "the farswapd without keys exited non-zero on SIGTERM"
# The keyed host proved its key to this donor through the relay (the
# relay forwarded the handshake), and was granted slabs it never used.
for c in auth_ok grants; do
	bed_result "relay.donor.$c" "$(counter "$c")"
	[ "$(counter "$c")" -gt 0 ] || bed_fail "$c is 0: the handshake did not pass the relay"
done
fs_no_host_left
fs_stop_donor
check_kernel_log
