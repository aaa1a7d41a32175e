#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# relay, the relay: two fsrelay, one in front of each farswapd.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

RELAY=$FARSWAP_SRC/tests/tools/fsrelay
MARK=farswap-relay-marker
modprobe rdma_ucm || bed_fail "modprobe rdma_ucm failed"

bed_wait donor ready 300
pids=()
for p in "7471 keyed" "7472 open"; do
	read -r port what <<<"$p"
	"$RELAY" --listen "$FARSWAP_ADDR_host:$port" \
		--upstream "$FARSWAP_PEER_donor:$port" --marker "$MARK" \
		>"$BED/relay-$what.log" 2>&1 &
	pids+=($!)
	bed_wait_rdma_listen "$port" 60 $!
done
keyed=${pids[0]} open=${pids[1]}
bed_signal ready

# report LOG PID: the last report line fsrelay printed after SIGUSR1.
report() {
	local n

	n=$(grep -c ' report ' "$1" || true)
	kill -USR1 "$2"
	for _ in $(seq 50); do
		[ "$(grep -c ' report ' "$1" || true)" -gt "$n" ] && break
		sleep 0.2
	done
	grep ' report ' "$1" | tail -n1
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }

# The control: without session keys the relay gets every page.
bed_wait host open-written 600
rep=$(report "$BED/relay-open.log" "$open")
bed_log "without keys: $rep"
bed_result relay.open.swapped "$(field swapped "$rep")"
bed_result relay.open.marker_pages "$(field marker_pages "$rep")"
[ "$(field swapped "$rep")" -ge 1 ] || bed_fail "the relay changed no ALLOC_REP: the test proves nothing"
[ "$(field marker_pages "$rep")" -ge 64 ] ||
	bed_fail "without keys the relay should hold the host's 64 marker pages, found $(field marker_pages "$rep"): the test proves nothing"
bed_signal open-scanned

# With session keys: the handshake passed through, the pages did not.
bed_wait host keyed-written 600
rep=$(report "$BED/relay-keyed.log" "$keyed")
bed_log "with keys: $rep"
bed_result relay.keyed.sessions "$(field sessions "$rep")"
bed_result relay.keyed.swapped "$(field swapped "$rep")"
bed_result relay.keyed.data_pages "$(field data_pages "$rep")"
[ "$(field swapped "$rep")" -ge 1 ] || bed_fail "the keyed host's ALLOC_REP never passed the relay: nothing was tried"
[ "$(field data_pages "$rep")" = 0 ] ||
	bed_fail "the keyed host wrote $(field data_pages "$rep") pages to the relay's memory"
bed_signal keyed-scanned

bed_wait host done 600
kill -TERM "${pids[@]}"
wait "${pids[@]}" || bed_fail "an fsrelay exited non-zero"
check_kernel_log
