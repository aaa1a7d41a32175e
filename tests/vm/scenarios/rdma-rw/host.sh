#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client side of rdma-rw (and rdma-rw-3): for every donor in turn, rping
# it with validation, then measure RDMA READ and WRITE latency with
# perftest over rdma_cm, reporting average and 99th percentile.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/rdma-lib.sh"

# lat_test OP PEER BASEPORT: ib_<OP>_lat against PEER's server, results.
lat_test() {
	local op=$1 peer=$2 base=$3 addr dev out line
	addr=FARSWAP_PEER_$peer
	dev=FARSWAP_DEV_$peer
	# Polled, at SCHED_IDLE (rdma-lib.sh says why).
	out=$(rdma_connect "$peer" "$op" "$base" $RDMA_POLLER ib_"$op"_lat -R -F -d "${!dev}" \
		-s "$LAT_SIZE" -n "$LAT_ITERS" "${!addr}")
	echo "$out"
	# The result row: #bytes #iterations t_min t_max t_typical t_avg
	# t_stdev 99% 99.9% (all in usec).
	line=$(awk -v s="$LAT_SIZE" '$1 == s && NF >= 9' <<<"$out")
	[ -n "$line" ] || bed_fail "ib_${op}_lat to $peer: no result row in its output"
	read -r _ _ min _ typ avg _ p99 _ <<<"$line"
	bed_result "$peer.rdma_${op}_${LAT_SIZE}B_avg_us" "$avg"
	bed_result "$peer.rdma_${op}_${LAT_SIZE}B_p99_us" "$p99"
	bed_result "$peer.rdma_${op}_${LAT_SIZE}B_typical_us" "$typ"
	bed_result "$peer.rdma_${op}_${LAT_SIZE}B_min_us" "$min"
}

for peer in $FARSWAP_ROLES; do
	[ "$peer" != "$FARSWAP_ROLE" ] || continue
	addr=FARSWAP_PEER_$peer
	bed_log "rping $peer at ${!addr}"
	rdma_connect "$peer" rping 7174 rping -c -a "${!addr}" -C 20 -S 4096 -V >/dev/null
	bed_log "rping $peer: 20 validated round trips"

	lat_test read "$peer" 18515
	lat_test write "$peer" 18525
	bed_signal "done-$peer"
done

check_kernel_log
