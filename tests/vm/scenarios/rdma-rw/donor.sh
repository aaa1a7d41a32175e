#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server side of rdma-rw (and rdma-rw-3): serve one rping, one
# ib_read_lat and one ib_write_lat client from the host, in that order.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

dev=$FARSWAP_DEV_host
perftest_port=18515

# serve NAME PORT CMD...: start a one-shot server, tell the host once it
# listens, wait for it to finish.
serve() {
	local name=$1 port=$2 pid
	shift 2
	"$@" >"/tmp/$name.log" 2>&1 &
	pid=$!
	if ! (bed_wait_rdma_listen "$port" 30 $pid); then
		kill $pid 2>/dev/null || true
		bed_fail "$name server did not come up: $(cat "/tmp/$name.log")"
	fi
	bed_signal "$name-ready"
	wait $pid || bed_fail "$name server failed: $(cat "/tmp/$name.log")"
	bed_log "$name server done"
}

serve rping 7174 rping -s -a "$FARSWAP_ADDR" -C 20 -S 4096 -V
serve read $perftest_port ib_read_lat -R -F -e -d "$dev" -s "$LAT_SIZE" -n "$LAT_ITERS"
serve write $perftest_port ib_write_lat -R -F -d "$dev" -s "$LAT_SIZE" -n "$LAT_ITERS"

bed_wait host "done-$FARSWAP_ROLE" 120
check_kernel_log
