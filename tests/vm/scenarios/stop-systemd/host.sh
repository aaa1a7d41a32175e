#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stop-systemd, the host: one replica over two donors whose farswapd.service
# is stopped (a drain) and restarted (a resume) under it.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2

# no_loss WHEN: no page lost, no slab revoked on either donor.
no_loss() {
	[ "$(fs_dev_stat "$name" lost_pages)" = 0 ] || bed_fail "pages lost $1"
	[ "$(fs_donor_field "$name" "$d1" revoked)" = 0 ] || bed_fail "$d1 revoked slabs $1"
	[ "$(fs_donor_field "$name" "$d2" revoked)" = 0 ] || bed_fail "$d2 revoked slabs $1"
}

fs_load_module
bed_wait donor ready 300
bed_wait donor2 ready 300
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 512M --replicas 1)
name=${dev#/dev/}
mkswap "$dev" >/dev/null
swapon "$dev"

# Fill across both donors and hold; the verify pass comes at the end.
fs_workload_start 64 32M --procs 2 --no-fork --passes 0 --seed "$seed"
fs_workload_wait_hold 2 900
"$FS_CTL" status "$name"
on_d1=$(fs_donor_field "$name" "$d1" slabs)
on_d2=$(fs_donor_field "$name" "$d2" slabs)
bed_result stop.slabs_before "$d1=$on_d1 $d2=$on_d2"
[ "$on_d1" -gt 0 ] && [ "$on_d2" -gt 0 ] ||
	bed_fail "the fill did not spread over both donors: $d1=$on_d1 $d2=$on_d2"
moved0=$(fs_dev_stat "$name" migrations)

# 1. systemctl stop farswapd on the first donor: its chunks move here.
bed_signal filled
bed_wait donor stopped 1000
fs_wait_donor_state "$name" "$d1" '!live' 120
moved=$(($(fs_dev_stat "$name" migrations) - moved0))
bed_result stop.chunks_moved_by_stop "$moved"
[ "$moved" -ge 1 ] || bed_fail "the first donor stopped, but no chunk moved"
[ "$(fs_donor_field "$name" "$d1" slabs)" = 0 ] ||
	bed_fail "$d1 stopped holding $(fs_donor_field "$name" "$d1" slabs) of our slabs"
no_loss "when the first donor's unit stopped"

# 2. It starts again: the host reconnects and may use it.
bed_signal checked
bed_wait donor started 600
fs_wait_donor_state "$name" "$d1" live 300
"$FS_CTL" status "$name"

# 3. The second restarted by a package upgrade (dpkg -i, whose postinst
# try-restarts farswapd) during the verify: a restart keeps farswapd's
# memory (the fd store), so nothing moves; the
# chunks whose one copy is there wait for it, and the host resumes its
# slabs with their content.
moved0=$(fs_dev_stat "$name" migrations)
rec0=$(fs_donor_field "$name" "$d2" reconnects)
held=$(fs_donor_field "$name" "$d2" slabs)
in0=$(fs_vmstat pswpin)
bed_signal back
fs_wait_donor_state "$name" "$d2" '!live' 300
t0=$SECONDS
# The verify starts while the donor is away: its reads wait for it.
for pid in $(sed -n 's/^HOLD //p' "$FS_WL_LOG"); do
	kill -USR1 "$pid" 2>/dev/null || true
done
bed_wait donor2 restarted 1000
fs_wait_donor_state "$name" "$d2" live 300
end=$((SECONDS + $(bed_secs 60)))
until [ "$(fs_donor_field "$name" "$d2" resumed)" -ge "$held" ]; do
	[ $SECONDS -lt $end ] ||
		bed_fail "$d2 is back, but $(fs_donor_field "$name" "$d2" resumed) of its $held slabs were resumed"
	sleep 1
done
bed_result stop.restart_to_resumed_s $((SECONDS - t0))
bed_result stop.slabs_resumed "$(fs_donor_field "$name" "$d2" resumed)"
bed_result stop.reconnects $(($(fs_donor_field "$name" "$d2" reconnects) - rec0))
[ $(($(fs_donor_field "$name" "$d2" reconnects) - rec0)) -eq 1 ] ||
	bed_fail "the restart cost $(($(fs_donor_field "$name" "$d2" reconnects) - rec0)) reconnects, not one"
[ "$(fs_donor_field "$name" "$d2" resume_refused)" = 0 ] ||
	bed_fail "$d2 refused to resume $(fs_donor_field "$name" "$d2" resume_refused) slabs"
moved=$(($(fs_dev_stat "$name" migrations) - moved0))
bed_result stop.chunks_moved_by_restart "$moved"
[ "$moved" -eq 0 ] || bed_fail "the second donor's restart moved $moved chunks: it drained"
no_loss "when the second donor's unit restarted"
"$FS_CTL" status "$name" | tee /run/status.txt
grep -q 'slabs resumed' /run/status.txt || bed_fail "farswapctl status does not show the resumed slabs"

# Every page reads back what was written.
fs_workload_release
bed_result stop.pswpin_verify $(($(fs_vmstat pswpin) - in0))
[ $(($(fs_vmstat pswpin) - in0)) -gt 1000 ] || bed_fail "the final verify did not swap in"
no_loss "at the end"
swapoff "$dev"
"$FS_CTL" detach "$name" || bed_fail "detach failed"
rmmod farswap
check_kernel_log
bed_signal "done"
