#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-2donor, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 512M)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

out0=$(fs_vmstat pswpout)
in0=$(fs_vmstat pswpin)
t0=$SECONDS
fs_workload_start 96 48M --procs 3 --seed "$seed"
fs_workload_wait_hold 3 900
bed_result swap2.seconds_first_round $((SECONDS - t0))
pswpout=$(($(fs_vmstat pswpout) - out0))
pswpin=$(($(fs_vmstat pswpin) - in0))
"$FS_CTL" status "$name"
bed_result swap2.pswpout "$pswpout"
bed_result swap2.pswpin "$pswpin"
[ "$pswpout" -ge 16384 ] || bed_fail "only $pswpout pages swapped out"
[ "$pswpin" -ge 16384 ] || bed_fail "only $pswpin pages swapped in"
for d in "$d1" "$d2"; do
	slabs=$(fs_donor_field "$name" "$d" slabs)
	writes=$(fs_donor_field "$name" "$d" writes)
	reads=$(fs_donor_field "$name" "$d" reads)
	bed_result "swap2.slabs_on_$d" "$slabs"
	[ "$slabs" -gt 0 ] || bed_fail "donor $d holds no slab"
	[ "$writes" -gt 0 ] && [ "$reads" -gt 0 ] || bed_fail "no RDMA traffic to $d"
done

fs_unlimit_workload
swapoff "$dev"
fs_workload_release

# swapon --discard discards the whole device: every chunk but the one with
# the swap header lets go, and every donor slab but those holding its
# replicas (one on each donor) goes back to its donor.  Then a second
# workload binds chunks again.
replicas=$(tr ' ' '\n' <"/sys/block/$name/farswap/replicas" | sed -n 's/^replicas=//p')
[ "$replicas" = 2 ] || bed_fail "two donors, yet $replicas replicas by default"
held=$(sed -n 's/.*held=\([0-9]*\).*/\1/p' "/sys/block/$name/farswap/slabs")
rel0=$(fs_dev_stat "$name" releases)
swapon --discard "$dev"
end=$((SECONDS + 60))
until [ "$(sed -n 's/.*held=\([0-9]*\).*/\1/p' "/sys/block/$name/farswap/slabs")" -le "$replicas" ]; do
	[ $SECONDS -lt $end ] || bed_fail "slabs not given back after swapon --discard: $(cat "/sys/block/$name/farswap/slabs")"
	sleep 1
done
bound=$(sed -n 's/.*bound=\([0-9]*\).*/\1/p' "/sys/block/$name/farswap/chunks")
[ "$bound" -le 1 ] || bed_fail "$bound chunks still bound after swapon --discard"
released=$(($(fs_dev_stat "$name" releases) - rel0))
bed_result swap2.slabs_released_on_discard "$released"
[ "$released" -ge $((held - replicas)) ] || bed_fail "$held slabs were held, only $released given back"
fs_workload_start 64 32M --procs 2 --seed "$((seed + 1))" --no-fork
fs_workload_wait_hold 2 600
fs_workload_release
"$FS_CTL" status "$name"
swapoff "$dev"
"$FS_CTL" detach "$name"

# The synchronous swap-in option (on 6.12 it also makes every swap-out
# wait for its completion, so a smaller run, and one replica: half the
# pages fit, as above).
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 256M --sync-io --replicas 1)
name=${dev#/dev/}
[ "$(cat "/sys/block/$name/farswap/sync_io")" = 1 ] || bed_fail "sync_io not set"
mkswap "$dev" >/dev/null
swapon "$dev"
in0=$(fs_vmstat pswpin)
fs_workload_start 24 12M --procs 2 --seed "$((seed + 2))"
fs_workload_wait_hold 2 600
fs_unlimit_workload
swapoff "$dev"
fs_workload_release
bed_result swap2.sync_pswpin $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "sync_io run did not swap in"
"$FS_CTL" status "$name"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
