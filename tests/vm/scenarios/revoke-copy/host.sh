#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# revoke-copy, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
chunks=24	# 48 MiB: three 16 MiB slabs of 8 chunks
field() { fs_donor_field "$name" "$1" "$2"; }

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 48M --replicas 1)
name=${dev#/dev/}

bed_signal kill-farswapd
bed_wait donor2 farswapd-killed 60
fs_wait_donor_state "$name" "$d2" '!live' 60
head -c $((chunks * 2 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none || bed_fail "writing $dev failed"
[ "$(field "$d1" slabs)" = 3 ] || bed_fail "$d1 holds $(field "$d1" slabs) slabs, not 3"
bed_signal restart-farswapd
fs_wait_donor_state "$name" "$d2" live 120

# 50 ms before each 64 KiB piece: a chunk takes 1.6 s or more to move,
# a slab's eight far longer than the donor's 6 s to the revoke.
pause=/sys/kernel/debug/farswap/$name/copy_pause_ms
[ -f "$pause" ] || bed_fail "no $pause"
echo 50 >"$pause"
bed_signal written

bed_wait donor revoked 600
# Past the grace: the reclaim stopped copying from the revoked slab.
echo 0 >"$pause"
stopped=$(dmesg | grep -c "donor $d1:7471 revoked its slab [0-9]* while its chunks moved" || true)
bed_result revoke-copy.host.stopped_copies "$stopped"
if [ "$stopped" = 0 ]; then
	dmesg | grep -E "reclaims|revoked|took back" | sed 's/^/  /'
	bed_fail "no revoke landed in a copy: the window was missed, nothing was tested"
fi
dmesg | grep "revoked its slab [0-9]* while its chunks moved" | sed 's/^/  /'
[ "$(field "$d1" state)" = live ] || bed_fail "$d1 is $(field "$d1" state) after revoking one slab mid-copy: the whole session went"
[ "$(field "$d1" reconnects)" = 0 ] || bed_fail "$d1 reconnected $(field "$d1" reconnects) times: the copy read a deregistered slab"
revoked=$(field "$d1" revoked)
bed_result revoke-copy.host.revoked "$revoked"
[ "$revoked" -ge 1 ] || bed_fail "the host counts no revoked slab"
# The loss work has the map once the reclaim lets go of it.
end=$((SECONDS + 60))
until [ "$(fs_dev_stat "$name" lost_pages)" -gt 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "no page counted lost 60 s after the revoke"
	sleep 1
done
sleep 2

# Chunk by chunk: moved chunks read back intact, the rest fail.
fs_chunks_intact_or_eio "$dev" /run/data "$chunks"
bad=$FS_EIO_CHUNKS
moved=$(fs_dev_stat "$name" migrations)
lost=$(fs_dev_stat "$name" lost_pages)
bed_result revoke-copy.host.chunks_moved "$moved"
bed_result revoke-copy.host.eio_chunks "$bad"
bed_result revoke-copy.host.lost_pages "$lost"
[ "$bad" -ge 1 ] || bed_fail "no chunk lost: the revoked slab held none"
[ "$bad" -lt "$chunks" ] || bed_fail "every chunk lost"
[ "$lost" = $((bad * 512)) ] || bed_fail "$lost pages counted lost, $bad chunks fail to read ($((bad * 512)) pages)"

# The session is whole, not just up: a READ of the slab after the donor
# deregistered it would have failed with a remote access error, which
# puts the queue pair the copy used (the first I/O queue's, the one
# writes take) in error; writes there would then fail the donor.
rm -f /run/data /run/chunk
head -c $((chunks * 2 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none || bed_fail "writing $dev again after the revoke failed"
dd if="$dev" of=/run/back bs=1M count=$((chunks * 2)) iflag=direct status=none || bed_fail "reading $dev after the rewrite failed"
cmp -s /run/data /run/back || bed_fail "$dev read back other bytes than were written after the revoke"
rm -f /run/back
[ "$(field "$d1" reconnects)" = 0 ] || bed_fail "$d1 reconnected $(field "$d1" reconnects) times writing after the revoke: its queue pair was in error (a READ of the deregistered slab)"
[ "$(field "$d1" errors)" = 0 ] || bed_fail "$d1 counts $(field "$d1" errors) errors"
[ "$(field "$d1" writes)" -gt 0 ] || bed_fail "no write reached $d1"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
