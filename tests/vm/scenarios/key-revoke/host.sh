#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# key-revoke, the host.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2

# A persistent id and a key of this host's own, handed to both donors
# as an admin would (host-keys/ID).
mkdir -p /etc/farswap
cat /proc/sys/kernel/random/uuid >/etc/farswap/hostid
cp /etc/farswap/hostid "$BED/host_id"
"$FS_CTL" gen-key /run/host.key || bed_fail "farswapctl gen-key failed"
cp /run/host.key "$BED/host.key"
bed_signal host-key

fs_load_module
"$FS_CTL" add-key farswap:own --key-file /run/host.key >/dev/null ||
	bed_fail "farswapctl add-key farswap:own failed"
bed_wait donor ready 300
bed_wait donor2 ready 300
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 512M --replicas 1 --key farswap:own)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

fs_workload_start 64 32M --procs 2 --no-fork --passes 0 --seed "$seed"
fs_workload_wait_hold 2 900
"$FS_CTL" status "$name"
on_d1=$(fs_donor_field "$name" "$d1" slabs)
on_d2=$(fs_donor_field "$name" "$d2" slabs)
bed_result keyrevoke.slabs_before "$d1=$on_d1 $d2=$on_d2"
[ "$on_d1" -gt 0 ] || bed_fail "no slab on $d1, the donor that revokes the key"
moved0=$(fs_dev_stat "$name" migrations)
refused0=$(dmesg | grep -c "donor $d1:7471 failed authentication" || true)

# The key goes on the first donor.
t0=$SECONDS
bed_signal filled
bed_wait donor revoked 1000
bed_result keyrevoke.drain_s $((SECONDS - t0))
fs_wait_donor_state "$name" "$d1" '!live' 120
after_d1=$(fs_donor_field "$name" "$d1" slabs)
moved=$(($(fs_dev_stat "$name" migrations) - moved0))
bed_result keyrevoke.slabs_after "$d1=$after_d1 $d2=$(fs_donor_field "$name" "$d2" slabs)"
bed_result keyrevoke.chunks_moved "$moved"
[ "$after_d1" = 0 ] || bed_fail "$d1 revoked the key, but the host still holds $after_d1 slabs there"
[ "$moved" -ge 1 ] || bed_fail "no chunk moved off $d1"
[ "$(fs_donor_field "$name" "$d1" revoked)" = 0 ] || bed_fail "$d1 revoked slabs instead of asking for them"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost when the key was revoked"

# Its reconnects fail: the donor proves key-file's secret for this id
# now, which is not the host's key.
end=$((SECONDS + $(bed_secs 120)))
until [ "$(dmesg | grep -c "donor $d1:7471 failed authentication" || true)" -gt "$refused0" ]; do
	[ $SECONDS -lt $end ] || bed_fail "no failed reconnect to $d1 logged after the key was revoked"
	sleep 1
done
fs_donor_field "$name" "$d1" state | bed_grep -vx live ||
	bed_fail "$d1 is live again for a host whose key it revoked"

# Every page reads back what was written, the moved ones from $d2.
in0=$(fs_vmstat pswpin)
fs_workload_release
bed_result keyrevoke.pswpin_verify $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the final verify did not swap in"
[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost"
swapoff "$dev"
"$FS_CTL" detach "$name" || bed_fail "detach failed"
rmmod farswap
check_kernel_log
bed_signal done
