#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client side of rdma-rw (and rdma-rw-3): for every donor in turn, rping
# it with validation, then measure 4 KiB RDMA READ and WRITE latency with
# rdmalat (tests/tools: one verb at a time, waited for on the completion
# channel, the READs' data checked), reporting percentiles, and the READ
# rate with 16 in flight.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/rdma-lib.sh"

# lat_test OP DEPTH PEER BASEPORT: rdmalat against PEER's server NAME
# (OP, or OP-DEPTH beyond depth 1), results.
lat_test() {
	local op=$1 depth=$2 peer=$3 base=$4 name=$1 addr out line key v n prev=0
	[ "$depth" -eq 1 ] || name=$op-$depth
	addr=FARSWAP_PEER_$peer
	out=$(rdma_connect "$peer" "$name" "$base" "$FARSWAP_SRC/tests/tools/rdmalat" \
		--to "${!addr}" --op "$op" --size "$LAT_SIZE" --iters "$LAT_ITERS" --depth "$depth")
	echo "$out"
	line=$(grep -m1 "^rdmalat: $op $LAT_SIZE B x $LAT_ITERS depth $depth: " <<<"$out") ||
		bed_fail "rdmalat $name to $peer: no result line in its output"
	# The percentiles must be in order: min <= p50 <= ... <= max.
	for key in min p50 p90 p99 p999 max; do
		v=$(grep -oE " ${key}_us=[0-9.]+" <<<"$line" | cut -d= -f2) ||
			bed_fail "rdmalat $op to $peer: no ${key}_us in '$line'"
		awk -v a="$prev" -v b="$v" 'BEGIN { exit !(b > 0 && b >= a) }' ||
			bed_fail "rdmalat $op to $peer: ${key}_us=$v out of order in '$line'"
		prev=$v
		case $key in min | p50 | p99) bed_result "$peer.rdma_${name}_${LAT_SIZE}B_${key}_us" "$v" ;; esac
	done
	n=$(grep -oE " avg_us=[0-9.]+" <<<"$line" | cut -d= -f2)
	bed_result "$peer.rdma_${name}_${LAT_SIZE}B_avg_us" "$n"
	n=$(grep -oE " iops=[0-9]+$" <<<"$line" | cut -d= -f2)
	[ "${n:-0}" -gt 0 ] || bed_fail "rdmalat $name to $peer: no iops in '$line'"
	bed_result "$peer.rdma_${name}_${LAT_SIZE}B_iops" "$n"
}

for peer in $FARSWAP_ROLES; do
	[ "$peer" != "$FARSWAP_ROLE" ] || continue
	addr=FARSWAP_PEER_$peer
	bed_log "rping $peer at ${!addr}"
	rdma_connect "$peer" rping 7174 rping -c -a "${!addr}" -C 20 -S 4096 -V >/dev/null
	bed_log "rping $peer: 20 validated round trips"

	lat_test read 1 "$peer" 18515
	lat_test write 1 "$peer" 18525
	lat_test read 16 "$peer" 18535
	bed_signal "done-$peer"
done

check_kernel_log
