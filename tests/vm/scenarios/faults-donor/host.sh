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
	fs_wait_donor_state "$name" "$donor" "$1" "$2"
}

# A correct run on the device as it is now: every page must verify.
healthy_run() {
	local rc=0

	fs_workload_start "$1" "$2" --procs 2 --seed "$seed" --no-fork
	fs_workload_wait_hold 2 400
	fs_workload_release || rc=$?
	return $rc
}

# A verify starts over a filled workload (every page swapped out, one
# replica); the fault comes next, while the verify runs.
verify_starts() {
	fs_workload_start 48 16M --procs 2 --no-fork --passes 0 --seed "$seed"
	fs_workload_wait_hold 2 600
	held=$(fs_donor_field "$name" "$donor" slabs)
	res0=$(fs_donor_field "$name" "$donor" resumed)
	rec0=$(fs_donor_field "$name" "$donor" reconnects)
	in0=$(fs_vmstat pswpin)
	for pid in $(sed -n 's/^HOLD //p' "$FS_WL_LOG"); do
		kill -USR1 "$pid" 2>/dev/null || true
	done
}

# The host waits resume_grace_ms (30 s) for a donor that keeps its slabs;
# on the debug kernel farswapd's re-exec and adoption alone took 30 s,
# so the wait scales with the bed's time.
fs_load_module io_timeout_ms=5000 reconnect_delay_ms=1000 \
	resume_grace_ms=$(($(bed_secs 30) * 1000))
bed_wait donor ready 120
dev=$(fs_attach --donor "$donor" --size 256M)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

# Every slab the donor held when the verify started is resumed (after $1).
wait_resumed() {
	until [ $(($(fs_donor_field "$name" "$donor" resumed) - res0)) -ge "$held" ]; do
		[ $((SECONDS - t0)) -le $(bed_secs 120) ] ||
			bed_fail "$1, but $(($(fs_donor_field "$name" "$donor" resumed) - res0)) of $held slabs were resumed"
		sleep 0.5
	done
}

# The verify ends: every page it swapped in verified, none lost (after $1).
verified_after() {
	fs_workload_release
	bed_result "faults.$2_pswpin" $(($(fs_vmstat pswpin) - in0))
	[ $(($(fs_vmstat pswpin) - in0)) -gt 500 ] || bed_fail "the verify around $1 did not swap in"
	[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "$1 lost $(fs_dev_stat "$name" lost_pages) pages"
	[ "$(fs_donor_field "$name" "$donor" resume_refused)" = 0 ] || bed_fail "slabs not resumed after $1"
}

# 0. farswapd restarted in place (SIGUSR2, the restart without systemd)
# while a verify runs, with one replica: the host holds the I/O of the
# chunks there, resumes every slab with its content, and loses nothing.
verify_starts
t0=$SECONDS
bed_signal restart-farswapd
bed_wait donor farswapd-reexeced 300
wait_state live 120
wait_resumed "farswapd restarted"
bed_result faults.restart_to_resumed_s $((SECONDS - t0))
bed_result faults.restart_slabs_resumed "$(fs_donor_field "$name" "$donor" resumed)"
verified_after "a restart of farswapd" restart
[ $(($(fs_donor_field "$name" "$donor" reconnects) - rec0)) -eq 1 ] ||
	bed_fail "the restart cost $(($(fs_donor_field "$name" "$donor" reconnects) - rec0)) reconnects, not one"
bed_log "farswapd restarted in place: $held slabs resumed, every page verified"

# 0b. The session fails on the host's side alone (debugfs fail_donor, as
# a transport error there would), farswapd runs on: it keeps the slabs
# for the host, which takes them back in its next session, content and
# all; the verify around it loses nothing.
verify_starts
t0=$SECONDS
echo "$donor:7471" >/sys/kernel/debug/farswap/"$name"/fail_donor
wait_resumed "the host's session failed"
wait_state live 60
bed_result faults.hostfail_to_resumed_s $((SECONDS - t0))
verified_after "a fault on the host's side" hostfail
[ $(($(fs_donor_field "$name" "$donor" reconnects) - rec0)) -ge 1 ] || bed_fail "fail_donor did not fail the session"
bed_signal host-faulted
bed_wait donor kept-checked 60
bed_log "the host's session failed: $held slabs kept by farswapd and resumed, every page verified"

# 1. farswapd killed mid-run.
fs_doomed_start 128 48M kill
fs_wait_swapping
t0=$SECONDS
n_failed=$(grep -c "donor $donor:7471 failed" <(dmesg) || true)
bed_signal kill-farswapd
bed_wait donor farswapd-killed 60
until [ "$(grep -c "donor $donor:7471 failed" <(dmesg) || true)" -gt "$n_failed" ]; do
	[ $((SECONDS - t0)) -le 30 ] || bed_fail "donor death not noticed in 30 s"
	sleep 0.5
done
bed_result faults.kill_noticed_s $((SECONDS - t0))
bed_wait donor farswapd-restarted 120
wait_state live 60
bed_result faults.kill_reconnected_s $((SECONDS - t0))
fs_doomed_end
lost=$(fs_dev_stat "$name" lost_pages)
bed_result faults.kill_lost_pages "$lost"
[ "$lost" -gt 0 ] || bed_fail "the donor died holding pages, but none are counted lost"
grep -q "pages lost; reading them fails with EIO" <(dmesg) || bed_fail "no loss report in dmesg"
"$FS_CTL" status "$name"
healthy_run 40 16M
bed_log "swap works again after farswapd came back"

# 2. The donor's link goes dark: the transport must notice.
fs_doomed_start 128 48M link
fs_wait_swapping
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
fs_doomed_end
healthy_run 40 16M
bed_log "swap works again after the link came back"

# 3. The host's RDMA device deleted under the module, then re-added:
# the donor keeps the session's slabs, and the host takes them back.
held=$(fs_donor_field "$name" "$donor" slabs)
res0=$(fs_donor_field "$name" "$donor" resumed)
t0=$SECONDS
rdma link delete rxe0
grep -q "RDMA device rxe0 removed" <(dmesg) || bed_fail "device removal not reported"
[ "$(donor_state)" != live ] || bed_fail "donor still live without an RDMA device"
"$FS_CTL" status "$name" | sed 's/^/  /'
rdma link add rxe0 type rxe netdev eth0
wait_state live 120
wait_resumed "the RDMA device came back"
bed_result faults.device_slabs_resumed "$held"
healthy_run 40 16M
bed_log "swap works again after the RDMA device came back"

swapoff "$dev"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
