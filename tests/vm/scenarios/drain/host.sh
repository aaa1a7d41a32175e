#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# drain, host side.
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
mkswap "$dev" >/dev/null
swapon "$dev"

# Fill across both donors; no verify pass yet (the one after the drain
# reads every page back from where it moved).
fs_workload_start 64 32M --procs 2 --no-fork --passes 0 --seed "$seed"
fs_workload_wait_hold 2 900
"$FS_CTL" status "$name"
on_d1=$(fs_donor_field "$name" "$d1" slabs)
on_d2=$(fs_donor_field "$name" "$d2" slabs)
bed_result drain.slabs_before "$d1=$on_d1 $d2=$on_d2"
[ "$on_d1" -gt 0 ] || bed_fail "no slab on $d1, the donor to drain"
[ "$on_d2" -gt 0 ] || bed_fail "no slab on $d2: the fill did not spread over both donors"
moved0=$(fs_dev_stat "$name" migrations)

# Drain the first donor: every chunk there moves to the second.
t0=$SECONDS
bed_signal filled
bed_wait donor drained 900
bed_result drain.drain_s $((SECONDS - t0))
after_d1=$(fs_donor_field "$name" "$d1" slabs)
after_d2=$(fs_donor_field "$name" "$d2" slabs)
moved=$(($(fs_dev_stat "$name" migrations) - moved0))
bed_result drain.slabs_after "$d1=$after_d1 $d2=$after_d2"
bed_result drain.chunks_moved "$moved"
[ "$after_d1" = 0 ] || bed_fail "the drained donor $d1 still holds $after_d1 slabs"
[ "$after_d2" -ge "$on_d2" ] || bed_fail "$d2 lost slabs: $on_d2 -> $after_d2"
[ "$moved" -ge 1 ] || bed_fail "drained, but no chunk moved"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost during the drain"
[ "$(fs_donor_field "$name" "$d1" revoked)" = 0 ] || bed_fail "$d1 revoked slabs during the drain"
grep -q "donor $d1:7471 took back its slab" <(dmesg) || bed_fail "no slab return logged"

# Its farswapd stops: nothing of ours was there any more.
bed_signal checked
bed_wait donor stopped 120
fs_wait_donor_state "$name" "$d1" '!live' 120
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost when the drained donor stopped"
"$FS_CTL" status "$name"

# Drain the second: nowhere to move the chunks (the first is gone), so
# the host refuses and the drain must wait, never revoke.
n0=$(dmesg | grep -c "donor $d2:7471 reclaims its slab" || true)
bed_signal d1-gone
bed_wait donor2 undrained 600
n1=$(dmesg | grep -c "donor $d2:7471 reclaims its slab" || true)
bed_result drain.refused_requests $((n1 - n0))
[ "$n1" -gt "$n0" ] || bed_fail "$d2's drain asked for no slab"
# An empty spare slab may go back; those with chunks cannot.
[ "$(fs_donor_field "$name" "$d2" slabs)" -gt 0 ] ||
	bed_fail "$d2 holds no slab though its chunks had nowhere to go"
[ "$(fs_donor_field "$name" "$d2" revoked)" = 0 ] || bed_fail "$d2 revoked slabs during its drain"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost during the drain without room"

# Every page reads back what was written: the moved ones from $d2.
in0=$(fs_vmstat pswpin)
fs_workload_release
bed_result drain.pswpin_verify $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the final verify did not swap in"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost"
swapoff "$dev"
"$FS_CTL" detach "$name" || bed_fail "detach failed"
bed_signal detached
rmmod farswap
check_kernel_log
bed_signal done
