#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# revoke, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
chunks=24	# 48 MiB: three 16 MiB slabs of 8 chunks
field() { fs_donor_field "$name" "$donor" "$1"; }

fs_load_module
bed_wait donor ready 120
dev=$(fs_attach --donor "$donor" --size 48M)
name=${dev#/dev/}
head -c $((chunks * 2 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none || bed_fail "writing $dev failed"
[ "$(field slabs)" = 3 ] || bed_fail "the device holds $(field slabs) slabs, not 3"
bed_signal written

bed_wait donor revoked 300
[ "$(field state)" = live ] || bed_fail "the donor is $(field state) after revoking one slab: the whole session went"
[ "$(field reconnects)" = 0 ] || bed_fail "the donor reconnected $(field reconnects) times: the revoke took the session"
revoked=$(field revoked)
bed_result revoke.host.revoked "$revoked"
[ "$revoked" -ge 1 ] || bed_fail "the host counts no revoked slab"
[ "$revoked" -lt 3 ] || bed_fail "every slab revoked: nothing left to check"
grep -q "revoked its slab" <(dmesg) || bed_fail "the kernel log does not say the slab was revoked"

# Chunk by chunk: the revoked slabs' chunks fail, the others are intact.
fs_chunks_intact_or_eio "$dev" /run/data "$chunks"
bad=$FS_EIO_CHUNKS
bed_result revoke.host.eio_chunks "$bad"
[ "$bad" = $((revoked * 8)) ] || bed_fail "$bad chunks fail to read, $revoked revoked slabs held $((revoked * 8))"
lost=$(fs_dev_stat "$name" lost_pages)
bed_result revoke.host.lost_pages "$lost"
[ "$lost" = $((revoked * 4096)) ] || bed_fail "$lost pages counted lost, $revoked revoked slabs held $((revoked * 4096))"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
