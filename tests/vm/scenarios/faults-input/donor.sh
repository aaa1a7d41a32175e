#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-input, donor side: a real farswapd on 7471 and a misbehaving
# fake donor per mode on 7481-7486.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fake=$FARSWAP_SRC/tests/tools/fakedonor
port=7481
pids=()
for mode in bad-accept bad-version reject-busy garbage silent wrong-size; do
	"$fake" --listen "$FARSWAP_ADDR:$port" --mode "$mode" \
		>"$BED/fakedonor-$mode.log" 2>&1 &
	pids+=($!)
	bed_wait_rdma_listen $port 30 $!
	port=$((port + 1))
done
fs_start_donor --donate 128M --slab-size 16M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host done 560
for pid in "${pids[@]}"; do
	kill -0 "$pid" || bed_fail "a fake donor died (pid $pid)"
	kill -TERM "$pid"
done
wait "${pids[@]}" || true
fs_stop_donor
check_kernel_log
