#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# switch-window, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
chunks=24	# 48 MiB: three 16 MiB slabs on each donor
field() { fs_donor_field "$name" "$1" "$2"; }

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 48M --replicas 2)
name=${dev#/dev/}
head -c $((chunks * 2 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none || bed_fail "writing $dev failed"
[ "$(field "$d1" slabs)" = 3 ] || bed_fail "$d1 holds $(field "$d1" slabs) slabs, not 3"
[ "$(field "$d2" slabs)" = 3 ] || bed_fail "$d2 holds $(field "$d2" slabs) slabs, not 3"

# 20 s before each switch: the first chunk's is still to come when the
# other donor dies.
pause=/sys/kernel/debug/farswap/$name/copy_pause_ms
[ -f "$pause" ] || bed_fail "no $pause"
echo 20000 >"$pause"
bed_signal written

end=$((SECONDS + 400))
until dmesg | bed_grep "donor $d1:7471 reclaims its slab"; do
	[ $SECONDS -lt $end ] || bed_fail "$d1 asked for no slab back"
	sleep 0.5
done
bed_signal kill-farswapd
bed_wait donor2 farswapd-killed 60
fs_wait_donor_state "$name" "$d2" '!live' 60
given=$(dmesg | grep -c "gives its replica on donor $d1:7471 back" || true)
[ "$given" = 0 ] || bed_fail "a switch gave a replica up before $d2 died: the window was missed, nothing was tested"
end=$((SECONDS + 120))
until dmesg | bed_grep "donor $d1:7471 reclaims its slab [0-9]*, but"; do
	[ $SECONDS -lt $end ] || bed_fail "the reclaim did not end 120 s after $d2 died"
	sleep 0.5
done
echo 0 >"$pause"
dmesg | grep -E "reclaims its slab|gives its replica|donor $d2:7471 failed" | sed 's/^/  /'
given=$(dmesg | grep -c "gives its replica on donor $d1:7471 back" || true)
bed_result switch-window.host.given_up "$given"
[ "$given" = 0 ] || bed_fail "$given chunks gave up their replica on $d1 after $d2, which held the other, died"
[ "$(field "$d1" state)" = live ] || bed_fail "$d1 is $(field "$d1" state)"

# Every page, from the reclaiming donor alone.
dd if="$dev" of=/run/back bs=1M count=$((chunks * 2)) iflag=direct status=none ||
	bed_fail "reading $dev failed with $d2 dead"
cmp -s /run/data /run/back || bed_fail "$dev read back other bytes than were written"
lost=$(fs_dev_stat "$name" lost_pages)
bed_result switch-window.host.lost_pages "$lost"
[ "$lost" = 0 ] || bed_fail "$lost pages lost"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
