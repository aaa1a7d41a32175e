#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-repair, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
d3=$FARSWAP_PEER_donor3
rep() { tr ' ' '\n' <"/sys/block/$name/farswap/replicas" | sed -n "s/^$1=//p"; }

# wait_state DONOR WANT|!WANT SECONDS
wait_state() {
	local end=$((SECONDS + $3)) s

	while :; do
		s=$(fs_donor_field "$name" "$1" state)
		if [ "${2#!}" != "$2" ]; then [ "$s" != "${2#!}" ] && return; else [ "$s" = "$2" ] && return; fi
		[ $SECONDS -lt $end ] || bed_fail "$1 is $s after $3 s, waiting for $2"
		sleep 0.5
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

# Re-replication slow enough to cut its target midway: 2 s a chunk.
fs_load_module io_timeout_ms=3000 ctrl_timeout_ms=3000 keepalive_ms=2000 repair_kbps=1024
for d in donor donor2 donor3; do bed_wait "$d" ready 120; done
dev=$(fs_attach --donor "$d1" --donor "$d2" --donor "$d3" --size 256M --replicas 2)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

# donor3 away while the workload fills: every chunk binds on donor and
# donor2 (two domains, so nothing spreads later).
bed_signal stop-farswapd
bed_wait donor3 farswapd-stopped 60
wait_state "$d3" '!live' 60
fs_workload_start 48 16M --procs 2 --no-fork --seed 51
fs_workload_wait_hold 2 900
[ "$(fs_donor_field "$name" "$d3" slabs)" = 0 ] || bed_fail "$d3 holds slabs while away"
bed_signal cont-farswapd
wait_state "$d3" live 180
[ "$(rep degraded)" = 0 ] || bed_fail "$(rep degraded) chunks degraded before any cut"
[ "$(rep colocated)" = 0 ] || bed_fail "$(rep colocated) chunks colocated with three domains"
bound=$(tr ' ' '\n' <"/sys/block/$name/farswap/chunks" | sed -n 's/^bound=//p')
bed_result repair_cut.bound_chunks "$bound"
[ "$bound" -ge 8 ] || bed_fail "only $bound chunks bound: too few to cut a repair midway"

# 1. donor's power: every chunk lost a replica; donor2 -> donor3.
t0=$SECONDS
bed_cut_power donor
wait_state "$d1" '!live' 60
bed_result repair_cut.cut1_noticed_s $((SECONDS - t0))
end=$((SECONDS + 300))
until [ "$(rep repaired)" -ge 2 ]; do
	[ $SECONDS -lt $end ] || bed_fail "only $(rep repaired) chunks re-replicated in 300 s"
	sleep 0.5
done
degraded=$(rep degraded)
repaired=$(rep repaired)
bed_result repair_cut.degraded_at_cut2 "$degraded"
bed_result repair_cut.repaired_at_cut2 "$repaired"
[ "$degraded" -gt 0 ] || bed_fail "re-replication was through before the second cut"

# 2. donor3's power, midway: the target of the repair dies.
t0=$SECONDS
bed_cut_power donor3
wait_state "$d3" '!live' 60
bed_result repair_cut.cut2_noticed_s $((SECONDS - t0))
# The chunks it took are degraded again; the copy in flight fails.
end=$((SECONDS + 60))
until [ "$(rep degraded)" -ge "$bound" ]; do
	[ $SECONDS -lt $end ] || bed_fail "$(rep degraded) of $bound chunks degraded 60 s after the target of the repair died"
	sleep 0.5
done
no_loss
in0=$(fs_vmstat pswpin)
fs_workload_release
bed_result repair_cut.verify_pswpin $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the verify swapped in too little"
no_loss
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" status "$name" | bed_grep "$(rep degraded) chunks degraded" ||
	bed_fail "farswapctl status does not show the degraded chunks"
bed_result repair_cut.repair_failures "$(rep repair_failures)"

# One donor left with every page: swapoff brings them home.
fs_unlimit_workload
swapoff "$dev" || bed_fail "swapoff could not bring every page home"
no_loss
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
