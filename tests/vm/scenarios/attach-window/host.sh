#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-window, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d=$FARSWAP_PEER_donor
key=()
[ -z "$FS_KEY" ] || key=(--key "$FS_KEY")

fs_load_module
bed_wait donor ready 120
echo 20000 >/sys/kernel/debug/farswap/attach_pause_ms
"$FS_CTL" attach --donor "$d" --size 32M "${key[@]}" >/run/attach.out 2>/run/attach.err &
attach=$!
end=$((SECONDS + 60))
until dmesg | bed_grep "attach pauses"; do
	[ $SECONDS -lt $end ] || bed_fail "the attach did not reach its pause in 60 s: $(cat /run/attach.out /run/attach.err)"
	sleep 0.2
done
bed_signal paused
bed_wait donor killed 60
end=$((SECONDS + 30))
until dmesg | bed_grep "donor $d:7471 failed"; do
	[ $SECONDS -lt $end ] || bed_fail "the host did not see the donor fail in 30 s"
	sleep 0.2
done
wait "$attach" || bed_fail "attach failed after its donor failed in the window: $(cat /run/attach.out /run/attach.err)"
echo 0 >/sys/kernel/debug/farswap/attach_pause_ms
# The device on stdout; on stderr, that its donor is not live yet.
dev=$(cat /run/attach.out)
[ -b "$dev" ] || bed_fail "farswapctl printed '$dev', not a block device"
sed 's/^/  farswapctl: /' /run/attach.err
grep -q "donor $d:7471 is .*; it joins when it answers" /run/attach.err ||
	bed_fail "farswapctl attach did not say that $d is not live yet: $(cat /run/attach.err)"
name=${dev#/dev/}
# The fault happened in the window, not after it.
dmesg | grep -E "attach pauses|donor $d:7471 failed|$name: attached" | sed 's/^/  /'
failed_at=$(dmesg | grep -m1 -n "donor $d:7471 failed" | cut -d: -f1)
attached_at=$(dmesg | grep -m1 -n "$name: attached" | cut -d: -f1)
[ "$failed_at" -lt "$attached_at" ] || bed_fail "the donor failed after the attach, not in its window"
bed_signal attached

bed_wait donor restarted 120
fs_wait_donor_state "$name" "$d" live 120
reconnects=$(fs_donor_field "$name" "$d" reconnects)
bed_result attach-window.reconnects "$reconnects"
[ "$reconnects" -ge 1 ] || bed_fail "the donor is live with no reconnect counted"
head -c $((16 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none || bed_fail "writing $dev failed"
dd if="$dev" of=/run/back bs=1M count=16 iflag=direct status=none || bed_fail "reading $dev failed"
cmp -s /run/data /run/back || bed_fail "$dev read back other bytes than were written"
writes=$(fs_donor_field "$name" "$d" writes)
bed_result attach-window.donor_writes "$writes"
[ "$writes" -ge 1 ] || bed_fail "no write reached the donor"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
