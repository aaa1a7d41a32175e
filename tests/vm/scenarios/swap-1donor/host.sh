#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-1donor, host side: attach, mkswap, swapon, run pageverify (128 MiB
# over three processes, one of which forks, in a 64 MiB cgroup), check
# that the pages really went through the device to the donor, swapoff
# (every page comes back and verifies), detach, rmmod.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
donor=$FARSWAP_PEER_donor

fs_load_module
bed_wait donor ready 120
dev=$(fs_attach --donor "$donor" --size 512M)
name=${dev#/dev/}
bed_log "attached $dev"
mkswap "$dev" >/dev/null
swapon "$dev"

out0=$(fs_vmstat pswpout)
in0=$(fs_vmstat pswpin)
t0=$SECONDS
fs_workload_start 128 64M --procs 3 --seed "$seed"
fs_workload_wait_hold 3 720
bed_result swap1.seconds_first_round $((SECONDS - t0))

pswpout=$(($(fs_vmstat pswpout) - out0))
pswpin=$(($(fs_vmstat pswpin) - in0))
writes=$(fs_blk_stat "$name" writes)
reads=$(fs_blk_stat "$name" reads)
rdma_writes=$(fs_donor_field "$name" "$donor" writes)
rdma_reads=$(fs_donor_field "$name" "$donor" reads)
slabs=$(fs_donor_field "$name" "$donor" slabs)
"$FS_CTL" status "$name"
bed_result swap1.pswpout "$pswpout"
bed_result swap1.pswpin "$pswpin"
bed_result swap1.rdma_writes "$rdma_writes"
bed_result swap1.rdma_reads "$rdma_reads"
# 128 MiB in 64 MiB: at least 64 MiB must have gone out and come back.
[ "$pswpout" -ge 16384 ] || bed_fail "only $pswpout pages swapped out"
[ "$pswpin" -ge 16384 ] || bed_fail "only $pswpin pages swapped in"
[ "$writes" -gt 0 ] && [ "$rdma_writes" -gt 0 ] || bed_fail "no RDMA writes counted"
[ "$reads" -gt 0 ] && [ "$rdma_reads" -gt 0 ] || bed_fail "no RDMA reads counted"
[ "$slabs" -gt 0 ] || bed_fail "the donor holds no slab"

# swapoff must bring every page back: lift the limit first.
fs_unlimit_workload
t0=$SECONDS
swapoff "$dev"
bed_result swap1.swapoff_seconds $((SECONDS - t0))
fs_workload_release

"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
