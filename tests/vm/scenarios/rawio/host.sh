#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rawio, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$FARSWAP_PEER_donor" --donor "$FARSWAP_PEER_donor2" --size 64M)
name=${dev#/dev/}
slab=$(cat "/sys/block/$name/farswap/slab_size")
[ "$slab" -eq $((4 << 20)) ] || bed_fail "slab size $slab, want 4 MiB"
echo always >/sys/kernel/mm/transparent_hugepage/enabled

python3 "$FARSWAP_SRC/tests/vm/scenarios/rawio/rawio.py" "$dev" "$slab" "$seed" || bed_fail "rawio.py failed"
"$FS_CTL" status "$name"
[ "$(fs_dev_stat "$name" zero_reads)" -gt 0 ] || bed_fail "no read was served as zeros"
for d in "$FARSWAP_PEER_donor" "$FARSWAP_PEER_donor2"; do
	[ "$(fs_donor_field "$name" "$d" writes)" -gt 0 ] || bed_fail "nothing written to $d"
done

# Data in every slab survives its neighbours' traffic: fill the whole
# device, then read it all back.
head -c 64M /dev/urandom >/tmp/fill
dd if=/tmp/fill of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of=/tmp/back bs=1M iflag=direct status=none
cmp /tmp/fill /tmp/back || bed_fail "the whole-device read differs from what was written"
bed_log "64 MiB written and read back through every slab"

# Discard everything: every chunk lets go, every donor slab goes back.
blkdiscard "$dev"
end=$((SECONDS + 30))
until grep -q '^held=0 ' "/sys/block/$name/farswap/slabs"; do
	[ $SECONDS -lt $end ] || bed_fail "slabs not given back after discarding everything: $(cat "/sys/block/$name/farswap/slabs")"
	sleep 0.5
done
grep -q ' bound=0 ' "/sys/block/$name/farswap/chunks" ||
	bed_fail "chunks still bound: $(cat "/sys/block/$name/farswap/chunks")"
[ "$(fs_dev_stat "$name" releases)" -eq "$(fs_dev_stat "$name" slab_allocs)" ] ||
	bed_fail "$(fs_dev_stat "$name" slab_allocs) slabs taken, $(fs_dev_stat "$name" releases) given back"
for d in "$FARSWAP_PEER_donor" "$FARSWAP_PEER_donor2"; do
	[ "$(fs_donor_field "$name" "$d" slabs)" -eq 0 ] || bed_fail "$d still holds slabs"
done
dd if="$dev" bs=1M count=64 iflag=direct status=none | cmp -s - <(head -c 64M /dev/zero) ||
	bed_fail "a discarded device does not read as zeros"
bed_log "discarding everything gave every slab back; the device reads as zeros"

"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
