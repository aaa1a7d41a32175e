#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-donor, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
seed=${FARSWAP_SEED:-$RANDOM}

donor_state() {
	fs_donor_field "$name" "$donor" state
}

# wait_state STATE SECS: the donor reaches STATE within SECS.
wait_state() {
	local want=$1 end=$((SECONDS + $2))

	until [ "$(donor_state)" = "$want" ]; do
		[ $SECONDS -lt $end ] || bed_fail "donor not $want after $2 s (state $(donor_state))"
		sleep 0.5
	done
}

# A correct run on the device as it is now: every page must verify.
healthy_run() {
	local rc=0

	fs_workload_start "$1" "$2" --procs 2 --seed "$seed" --no-fork
	fs_workload_wait_hold 2 400
	fs_workload_release || rc=$?
	return $rc
}

# A run that loses its donor: workers may die (SIGBUS on pages that died
# with the donor); what matters is that it ends, and nothing hangs.
start_doomed_run() {
	mkdir -p "$FS_CGROUP"
	# memory.high throttles instead of OOM-killing while swap-out fails.
	echo max >"$FS_CGROUP/memory.max"
	echo "$2" >"$FS_CGROUP/memory.high"
	FS_WL_LOG=$BED/host-doomed-$3.log
	(echo $BASHPID >"$FS_CGROUP/cgroup.procs" &&
		exec "$FS_PAGEVERIFY" --mb "$1" --procs 2 --passes 20 --no-fork \
			--seed "$seed") >"$FS_WL_LOG" 2>&1 &
	FS_WL_PID=$!
}

end_doomed_run() {
	local end=$((SECONDS + 300)) rc=0

	while kill -0 "$FS_WL_PID" 2>/dev/null; do
		# Survivors would go on for 20 passes: the point is made.
		[ $SECONDS -lt $end ] || bed_fail "the workload hangs after the donor failed"
		if [ "$(donor_state)" = live ]; then
			pkill -TERM -P "$FS_WL_PID" || true
			kill -TERM "$FS_WL_PID" 2>/dev/null || true
		fi
		sleep 1
	done
	wait "$FS_WL_PID" || rc=$?
	bed_log "the workload that lost its donor ended (exit $rc)"
	echo max >"$FS_CGROUP/memory.high"
}

wait_swapping() {
	local end=$((SECONDS + 300)) in0

	in0=$(fs_vmstat pswpin)
	until [ $(($(fs_vmstat pswpin) - in0)) -ge 2000 ]; do
		[ $SECONDS -lt $end ] || bed_fail "no swap traffic"
		kill -0 "$FS_WL_PID" || bed_fail "the workload died early"
		sleep 1
	done
}

fs_load_module io_timeout_ms=5000 reconnect_delay_ms=1000
bed_wait donor ready 120
dev=$(fs_attach --donor "$donor" --size 256M)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

# 1. farswapd killed mid-run.
start_doomed_run 128 48M kill
wait_swapping
t0=$SECONDS
bed_signal kill-farswapd
bed_wait donor farswapd-killed 60
until grep -q "donor $donor:7471 failed" <(dmesg); do
	[ $((SECONDS - t0)) -le 30 ] || bed_fail "donor death not noticed in 30 s"
	sleep 0.5
done
bed_result faults.kill_noticed_s $((SECONDS - t0))
bed_wait donor farswapd-restarted 120
wait_state live 60
bed_result faults.kill_reconnected_s $((SECONDS - t0))
end_doomed_run
lost=$(fs_dev_stat "$name" lost_pages)
bed_result faults.kill_lost_pages "$lost"
[ "$lost" -gt 0 ] || bed_fail "the donor died holding pages, but none are counted lost"
grep -q "pages lost; reading them fails with EIO" <(dmesg) || bed_fail "no loss report in dmesg"
"$FS_CTL" status "$name"
healthy_run 64 32M
bed_log "swap works again after farswapd came back"

# 2. The donor's link goes dark: the transport must notice.
start_doomed_run 128 48M link
wait_swapping
t0=$SECONDS
n_failed=$(grep -c "donor $donor:7471 failed" <(dmesg) || true)
bed_signal link-down
until [ "$(grep -c "donor $donor:7471 failed" <(dmesg) || true)" -gt "$n_failed" ]; do
	[ $((SECONDS - t0)) -le 60 ] || bed_fail "a dark link not noticed in 60 s"
	sleep 0.5
done
bed_result faults.link_noticed_s $((SECONDS - t0))
bed_signal donor-failed
bed_wait donor link-up 60
wait_state live 120
bed_result faults.link_reconnected_s $((SECONDS - t0))
end_doomed_run
healthy_run 64 32M
bed_log "swap works again after the link came back"

# 3. The host's RDMA device deleted under the module, then re-added.
rdma link delete rxe0
grep -q "RDMA device rxe0 removed" <(dmesg) || bed_fail "device removal not reported"
[ "$(donor_state)" != live ] || bed_fail "donor still live without an RDMA device"
"$FS_CTL" status "$name" | sed 's/^/  /'
rdma link add rxe0 type rxe netdev eth0
wait_state live 120
healthy_run 64 32M
bed_log "swap works again after the RDMA device came back"

swapoff "$dev"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
