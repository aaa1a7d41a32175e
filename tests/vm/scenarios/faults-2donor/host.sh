#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-2donor, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
seed=${FARSWAP_SEED:-$RANDOM}

# wait_state ADDR STATE SECS: the donor reaches STATE within SECS.
wait_state() {
	local end=$((SECONDS + $3))

	until [ "$(fs_donor_field "$name" "$1" state)" = "$2" ]; do
		[ $SECONDS -lt $end ] || bed_fail "donor $1 not $2 after $3 s (state $(fs_donor_field "$name" "$1" state))"
		sleep 0.5
	done
}

failures() { dmesg | grep -c "donor $1:7471 failed" || true; }

# A correct run on the device as it is now: every page must verify, and
# it must have gone through swap.
healthy_run() {
	local in0 out0

	in0=$(fs_vmstat pswpin)
	out0=$(fs_vmstat pswpout)
	fs_workload_start "$1" "$2" --procs 2 --seed "$seed" --no-fork
	fs_workload_wait_hold 2 600
	fs_workload_release
	[ $(($(fs_vmstat pswpout) - out0)) -gt 2000 ] || bed_fail "the run swapped out too little"
	[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the run swapped in too little"
}

grep -qw 'swiotlb=force' /proc/cmdline || bed_fail "the host runs without swiotlb=force"
fs_load_module io_timeout_ms=5000 ctrl_timeout_ms=3000 keepalive_ms=2000 \
	reconnect_delay_ms=1000
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 256M)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

# 1. farswapd stopped on a donor mid-swap.  Its kernel still serves RDMA,
# so only the control channel can tell: the keepalive's STATS_REQ gets
# no answer within ctrl_timeout_ms and the host fails the donor.
fs_doomed_start 128 48M stop
fs_wait_swapping
[ "$(fs_donor_field "$name" "$d1" slabs)" -gt 0 ] || bed_fail "no slab on $d1 before it stops"
n=$(failures "$d1")
t0=$SECONDS
bed_signal stop-farswapd
bed_wait donor farswapd-stopped 60
until [ "$(failures "$d1")" -gt "$n" ]; do
	[ $((SECONDS - t0)) -le 40 ] || bed_fail "a stopped farswapd not noticed in 40 s"
	sleep 0.5
done
bed_result faults2.stop_noticed_s $((SECONDS - t0))
fs_doomed_end
[ "$(fs_donor_field "$name" "$d2" state)" = live ] || bed_fail "$d2 failed with $d1"
w0=$(fs_donor_field "$name" "$d2" writes)
healthy_run 40 16M
[ "$(fs_donor_field "$name" "$d1" state)" != live ] || bed_fail "$d1 live while its farswapd is stopped"
[ "$(fs_donor_field "$name" "$d2" writes)" -gt "$w0" ] || bed_fail "swap did not go on to $d2"
bed_log "swap went on to $d2 while $d1's farswapd was stopped"
bed_signal cont-farswapd
wait_state "$d1" live 180
bed_result faults2.stop_reconnected_s $((SECONDS - t0))

# 2. Both donors fail at once: the host's two RDMA devices deleted back to
# back, while chunks on both hold pages of a waiting workload.
fs_workload_start 96 48M --procs 2 --seed "$seed" --no-fork
fs_workload_wait_hold 2 600
for d in "$d1" "$d2"; do
	[ "$(fs_donor_field "$name" "$d" slabs)" -gt 0 ] || bed_fail "no slab on $d before the devices go"
done
lost0=$(fs_dev_stat "$name" lost_pages)
rdma link delete "$FARSWAP_DEV_donor"
rdma link delete "$FARSWAP_DEV_donor2"
for d in "$d1" "$d2"; do
	[ "$(fs_donor_field "$name" "$d" state)" != live ] || bed_fail "$d live without an RDMA device"
done
rdma link add "$FARSWAP_DEV_donor" type rxe netdev "$FARSWAP_NETDEV_donor"
rdma link add "$FARSWAP_DEV_donor2" type rxe netdev "$FARSWAP_NETDEV_donor2"
wait_state "$d1" live 180
wait_state "$d2" live 180
[ "$(fs_dev_stat "$name" lost_pages)" -gt "$lost0" ] || bed_fail "pages on two dead donors, none counted lost"
for d in "$d1" "$d2"; do
	grep -q "donor $d:7471 is gone with" <(dmesg) || bed_fail "no loss report for $d"
done
fs_workload_release_doomed
"$FS_CTL" status "$name" | sed 's/^/  /'
# New pages bind to slots in new slabs: each must hold its own page.
healthy_run 40 16M
bed_log "swap verified every page after both donors failed at once"

swapoff "$dev"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
