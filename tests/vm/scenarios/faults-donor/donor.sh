#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-donor, donor side: die when told, come back when told.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 256M --slab-size 16M --headroom 48M --hysteresis 16M)
fs_start_donor "${args[@]}"
bed_signal ready

# 0. farswapd restarts in place (SIGUSR2): the same process execs itself
# with the pool's memfds and adopts them.
bed_wait host restart-farswapd 600
log=$BED/$FARSWAP_ROLE-farswapd.log
n0=$(grep -c 'kept pool adopted from the' "$log" || true)
kill -USR2 "$FS_DONOR_PID"
end=$((SECONDS + $(bed_secs 120)))
until [ "$(grep -c 'kept pool adopted from the' "$log" || true)" -gt "$n0" ]; do
	[ $SECONDS -lt $end ] || bed_fail "farswapd did not come back with its pool after SIGUSR2"
	kill -0 "$FS_DONOR_PID" || bed_fail "farswapd exited on SIGUSR2"
	sleep 0.5
done
bed_wait_rdma_listen 7471 60 "$FS_DONOR_PID"
grep 'SIGUSR2\|kept pool' "$log" | sed 's/^/  farswapd: /'
bed_signal farswapd-reexeced

# 0b. The host's session fails on its side: farswapd keeps its slabs.
bed_wait host host-faulted 600
grep -q 'slabs kept for its host\|its host asks for its slabs back' "$log" ||
	bed_fail "the host's session ended, but farswapd did not keep its slabs"
grep 'slabs kept for its host\|its host asks for its slabs back\|resumed slab' "$log" | tail -n 4 | sed 's/^/  farswapd: /'
bed_signal kept-checked

# 1. farswapd dies: the kernel closes its connections.
bed_wait host kill-farswapd 600
fs_kill_donor
bed_signal farswapd-killed
sleep 5
fs_start_donor "${args[@]}"
bed_signal farswapd-restarted

# 2. The link goes dark: packets vanish, nothing is closed.
bed_wait host link-down 600
bed_link_dark eth0
bed_log "eth0 dark"
bed_wait host donor-failed 120
sleep 2
bed_link_light eth0
bed_log "eth0 carries packets again"
bed_signal link-up

bed_wait host done 600
# The detach said goodbye: nothing of the session is kept.
grep -q 'detaching: [0-9]* slabs given back' "$log" ||
	bed_fail "the host detached without giving its slabs back"
fs_stop_donor
check_kernel_log
