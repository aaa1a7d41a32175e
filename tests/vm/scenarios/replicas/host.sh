#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
d3=$FARSWAP_PEER_donor3
rep() { tr ' ' '\n' <"/sys/block/$name/farswap/replicas" | sed -n "s/^$1=//p"; }

# A power cut noticed within 60 s.
wait_failed() {
	fs_wait_donor_state "$name" "$1" !live 60
}

wait_repaired() {
	local end=$((SECONDS + $(bed_secs 400)))

	until [ "$(rep degraded)" = 0 ]; do
		[ $SECONDS -lt $end ] || bed_fail "$(rep degraded) chunks still degraded after $(bed_secs 400) s"
		sleep 1
	done
}

no_loss() {
	[ "$(rep lost_pages)" = 0 ] || bed_fail "$(rep lost_pages) pages lost with a replica left"
	! grep -q "pages lost; reading them fails" <(dmesg) || bed_fail "the kernel reports lost pages"
}

bed_on_fail() {
	[ -n "${name:-}" ] || return 0
	cat "/sys/block/$name/farswap/replicas"
	"$FS_CTL" status "$name"
	dmesg | grep farswap | tail -n 30
}

# A power cut is noticed by the keepalive (2 s) and the control timeout;
# the I/O timeout is for a donor that answers pings but not I/O, and 3 s
# was too short for sound donors under this swap storm on 7.3 under TCG
# (both rackA donors declared dead in the same instant, their pages lost).
fs_load_module io_timeout_ms=10000 ctrl_timeout_ms=3000 keepalive_ms=2000
for d in donor donor2 donor3; do bed_wait "$d" ready 120; done
dev=$(fs_attach --donor "$d1" --donor "$d2" --donor "$d3" --size 256M --replicas 2)
name=${dev#/dev/}
[ "$(rep replicas)" = 2 ] || bed_fail "$name has $(rep replicas) replicas, asked for 2"
mkswap "$dev" >/dev/null
swapon "$dev"

# rackB away: donor3's farswapd is stopped, so the host fails it, and the
# first workload's chunks get both replicas in rackA (no other domain
# has room).  When it is back, one replica of each moves there.
bed_signal stop-farswapd
bed_wait donor3 farswapd-stopped 60
wait_failed "$d3"

# Two workloads: the first's pages are out on the donors and it verifies
# while a donor dies; the second is still filling (swap-outs in flight)
# when it dies, and waits for swapoff.
fs_workload_start 48 16M --procs 2 --no-fork --seed 41
fs_workload_wait_hold 2 900
w1_pid=$FS_WL_PID
w1_log=$FS_WL_LOG
colocated=$(rep colocated)
bed_result replicas.colocated_rackB_away "$colocated"
[ "$colocated" -gt 0 ] || bed_fail "rackB away, yet no chunk has both replicas in rackA"
"$FS_CTL" status "$name" | bed_grep "$colocated chunks have replicas in one failure domain" ||
	bed_fail "farswapctl status does not warn of the $colocated colocated chunks"
t0=$SECONDS
bed_signal cont-farswapd
fs_wait_donor_state "$name" "$d3" live 180
end=$((SECONDS + $(bed_secs 300)))
until [ "$(rep colocated)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "$(rep colocated) chunks still have both replicas in rackA $(bed_secs 300) s after rackB came back"
	sleep 1
done
bed_result replicas.spread_s $((SECONDS - t0))
bed_result replicas.spread "$(rep spread)"
[ "$(rep spread)" -ge "$colocated" ] ||
	bed_fail "$colocated chunks were colocated, $(rep spread) replicas spread"
"$FS_CTL" status "$name" | sed 's/^/  /'
# A donor failed by a late reply on this loaded bed leaves chunks with
# one copy until the repair work is through: cut power only when every
# chunk has its two.
wait_repaired

# Failure domains: donor and donor2 are rackA, donor3 rackB.  donor3 has
# room for a replica of every chunk, so no chunk has both in rackA.
for d in "$d1" "$d2"; do
	[ "$(fs_donor_field "$name" "$d" domain)" = rackA ] ||
		bed_fail "$d is in domain '$(fs_donor_field "$name" "$d" domain)', not rackA"
done
[ "$(fs_donor_field "$name" "$d3" domain)" = rackB ] ||
	bed_fail "$d3 is in domain '$(fs_donor_field "$name" "$d3" domain)', not rackB"
[ "$(rep domains)" = 2 ] || bed_fail "$name counts $(rep domains) failure domains, not 2"
[ "$(rep colocated)" = 0 ] ||
	bed_fail "$(rep colocated) chunks have both replicas in one failure domain (rackA): not every chunk has one on $d3"
bed_result replicas.colocated_before_cuts "$(rep colocated)"
"$FS_CTL" status "$name" | bed_grep "replicas: 2 per chunk, 2 failure domains" ||
	bed_fail "farswapctl status does not show the failure domains"
"$FS_CTL" status "$name" | bed_grep "domain rackB," ||
	bed_fail "farswapctl status does not show $d3's domain"
! "$FS_CTL" status "$name" | bed_grep "replicas in one failure domain" ||
	bed_fail "farswapctl status warns of colocated chunks"
"$FS_CTL" status "$name" --json | bed_grep '"domain": "rackB"' ||
	bed_fail "farswapctl status --json does not show $d3's domain"
"$FS_CTL" status "$name" --json | bed_grep '"colocated": 0' ||
	bed_fail "farswapctl status --json does not show colocated 0"

# The second workload starts filling; the cut comes once it has swapped
# out a few thousand pages (or, on a fast machine, once it is through).
out0=$(fs_vmstat pswpout)
FS_WL_LOG=$BED/host-pageverify-2.log
(echo $BASHPID >"$FS_CGROUP/cgroup.procs" &&
	exec "$FS_PAGEVERIFY" --mb 48 --hold --procs 2 --no-fork --seed 42) \
	>"$FS_WL_LOG" 2>&1 &
w2_pid=$!
w2_log=$FS_WL_LOG
end=$((SECONDS + $(bed_secs 300)))
until [ $(($(fs_vmstat pswpout) - out0)) -ge 3000 ] ||
	[ "$(grep -c '^HOLD ' "$w2_log" || true)" -ge 2 ]; do
	kill -0 "$w2_pid" 2>/dev/null || bed_fail "the second workload ended during its fill: $(tail -n 5 "$w2_log")"
	[ $SECONDS -lt $end ] || bed_fail "the second workload swapped out too little in $(bed_secs 300) s"
	sleep 0.5
done

# 1. Power cut on one donor while the first workload verifies and the
# second fills.
in0=$(fs_vmstat pswpin)
for pid in $(sed -n 's/^HOLD //p' "$w1_log"); do kill -USR1 "$pid"; done
sleep 1
# On a fast machine the verify may be through before the cut lands: say
# how many workers were still verifying, and whether the fill went on.
running=0
for pid in $(sed -n 's/^HOLD //p' "$w1_log"); do
	! kill -0 "$pid" 2>/dev/null || running=$((running + 1))
done
filling=$((2 - $(grep -c '^HOLD ' "$w2_log" || true)))
t0=$SECONDS
bed_cut_power donor
bed_result replicas.cut1_verifying_workers "$running"
bed_result replicas.cut1_filling_workers "$filling"
wait_failed "$d1"
bed_result replicas.cut1_noticed_s $((SECONDS - t0))
FS_WL_PID=$w1_pid
FS_WL_LOG=$w1_log
fs_workload_release
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the verify swapped in too little"
# The fill goes on without the donor, then verifies every page once.
FS_WL_PID=$w2_pid
FS_WL_LOG=$w2_log
fs_workload_wait_hold 2 900
no_loss
wait_repaired
bed_result replicas.cut1_repaired_s $((SECONDS - t0))
bed_result replicas.repaired_chunks "$(rep repaired)"
bed_result replicas.failovers "$(rep failovers)"
[ "$(rep repaired)" -gt 0 ] || bed_fail "no chunk was copied to a new replica"
for d in "$d2" "$d3"; do
	[ "$(fs_donor_field "$name" "$d" slabs)" -gt 0 ] || bed_fail "no slab on $d"
done
"$FS_CTL" status "$name" | sed 's/^/  /'

# 2. Power cut on a second donor: the third holds a copy of everything.
t0=$SECONDS
bed_cut_power donor2
wait_failed "$d2"
bed_result replicas.cut2_noticed_s $((SECONDS - t0))
fs_unlimit_workload
swapoff "$dev" || bed_fail "swapoff could not bring every page home"
no_loss
FS_WL_PID=$w2_pid
FS_WL_LOG=$w2_log
fs_workload_release
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
