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
[ "$(fs_dev_stat "$name" releases)" -ge 1 ] || bed_fail "the discarded slab did not go back to its donor"
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

"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
