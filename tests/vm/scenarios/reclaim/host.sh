#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reclaim, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 512M --replicas 1)
name=${dev#/dev/}

# Every page on the donor that will run short: donor2's farswapd is
# killed before the first write (the device holds nothing there yet) and
# started again after the fill, an empty donor with room.
bed_signal kill-farswapd
bed_wait donor2 farswapd-killed 60
fs_wait_donor_state "$name" "$d2" '!live' 60
mkswap "$dev" >/dev/null
swapon "$dev"

# No verify pass before the move: the one after it reads every page.
fs_workload_start 64 32M --procs 2 --no-fork --passes 0 --seed "$seed"
fs_workload_wait_hold 2 900
[ "$(fs_donor_field "$name" "$d2" slabs)" = 0 ] || bed_fail "slabs on $d2 while its farswapd was dead"
bed_signal restart-farswapd
fs_wait_donor_state "$name" "$d2" live 120
"$FS_CTL" status "$name"
on_d1=$(fs_donor_field "$name" "$d1" slabs)
on_d2=$(fs_donor_field "$name" "$d2" slabs)
[ "$on_d1" -gt 0 ] || bed_fail "no slab on the donor to be reclaimed"
bed_result reclaim.slabs_before "$d1=$on_d1 $d2=$on_d2"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost with $d2, which held none"

# The donor comes under pressure and asks for slabs back: the host moves
# their chunks to the other donor, and only then lets the slabs go.
t0=$SECONDS
bed_signal filled
# The first slab back may be the spare, empty: wait for a chunk to move.
until [ "$(fs_dev_stat "$name" migrations)" -ge 1 ] &&
	[ "$(fs_donor_field "$name" "$d1" slabs)" -lt "$on_d1" ]; do
	[ $((SECONDS - t0)) -le 600 ] || bed_fail "no chunk moved in 600 s ($(fs_donor_field "$name" "$d1" slabs) slabs on $d1)"
	sleep 1
done
bed_result reclaim.first_move_s $((SECONDS - t0))
# Let the reclaim run its course (the donor may want several slabs).
sleep 20
moved=$(fs_dev_stat "$name" migrations)
after_d1=$(fs_donor_field "$name" "$d1" slabs)
after_d2=$(fs_donor_field "$name" "$d2" slabs)
bed_result reclaim.chunks_moved "$moved"
bed_result reclaim.slabs_after "$d1=$after_d1 $d2=$after_d2"
[ "$moved" -ge 1 ] || bed_fail "slabs went back but no chunk moved"
[ "$after_d2" -ge "$on_d2" ] || bed_fail "the donor with room lost slabs: $on_d2 -> $after_d2"
grep -q "donor $d1:7471 took back its slab" <(dmesg) || bed_fail "no slab return logged"
"$FS_CTL" status "$name"
bed_signal moved

# Still under the cgroup's limit: verifying reads the moved pages back.
in0=$(fs_vmstat pswpin)
fs_workload_release
bed_result reclaim.pswpin_after_move $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the final verify did not swap in"

# Detach while a donor asks for slabs back.  swapoff keeps the chunks
# bound (no discards), so the slabs stay held; the second donor comes
# under pressure and sends reclaim requests, which the host works on
# (moving chunks back to the first donor) as the device goes away.
swapoff "$dev"
held=$(fs_donor_field "$name" "$d2" slabs)
[ "$held" -gt 0 ] || bed_fail "no slab held on $d2 after swapoff"
asked() { dmesg | grep -c "donor $d2:7471 reclaims its slab" || true; }
n0=$(asked)
bed_signal swapped-off
t0=$SECONDS
until [ "$(asked)" -gt "$n0" ]; do
	[ $((SECONDS - t0)) -le 300 ] || bed_fail "no reclaim request from $d2 in 300 s"
	sleep 0.5
done
t0=$SECONDS
"$FS_CTL" detach "$name" || bed_fail "detach while $d2 reclaims failed"
bed_result reclaim.detach_during_reclaim_s $((SECONDS - t0))
bed_log "detached after $(($(asked) - n0)) reclaim requests from $d2 ($held slabs held)"
bed_signal detached
rmmod farswap
check_kernel_log
bed_signal done
