#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot-systemd, the host: README.md's quick start under systemd, as
# written, and a reboot as a boot does it (scenario.conf says what and
# why).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
dev=farswap0
seed=${FARSWAP_SEED:-$RANDOM}

# The device farswap-swap made: on swap at priority 10, authenticated,
# under /etc/farswap/hostid's id as attach gave it.
check_swapping() {
	local host_id

	grep -Eq "^/dev/${dev}[[:space:]]+partition[[:space:]]+[0-9]+[[:space:]]+[0-9]+[[:space:]]+10\$" /proc/swaps ||
		bed_fail "/dev/$dev is not swapped on at priority 10: $(tr '\n' ';' </proc/swaps)"
	[ "$(</sys/block/$dev/farswap/auth)" = "auth=hmac-sha256 pinned=0" ] ||
		bed_fail "$dev: auth is $(</sys/block/$dev/farswap/auth), not hmac-sha256"
	host_id=$(</sys/block/$dev/farswap/host_id)
	[ "$host_id" = "$(</etc/farswap/hostid)" ] ||
		bed_fail "$dev shows host id $host_id, /etc/farswap/hostid says $(</etc/farswap/hostid)"
	[ "$(</sys/block/$dev/farswap/host_id_source)" = attach ] ||
		bed_fail "$dev: host_id_source is $(</sys/block/$dev/farswap/host_id_source), not attach"
	bed_log "$dev: swapping at priority 10, auth hmac-sha256, host id $host_id (attach)"
}

# swap_for_real MB LIMIT TAG: a workload of MB MiB in a memory cgroup of
# LIMIT swaps to the device and verifies every page, twice.
swap_for_real() {
	local out0 in0 w0 r0 pswpout pswpin

	out0=$(fs_vmstat pswpout)
	in0=$(fs_vmstat pswpin)
	w0=$(fs_blk_stat $dev writes)
	r0=$(fs_blk_stat $dev reads)
	fs_workload_start "$1" "$2" --procs 2 --no-fork --seed "$seed"
	fs_workload_wait_hold 2 600
	fs_workload_release
	pswpout=$(($(fs_vmstat pswpout) - out0))
	pswpin=$(($(fs_vmstat pswpin) - in0))
	bed_result "systemd.$3.pswpout" "$pswpout"
	bed_result "systemd.$3.pswpin" "$pswpin"
	bed_result "systemd.$3.device_writes" $(($(fs_blk_stat $dev writes) - w0))
	bed_result "systemd.$3.device_reads" $(($(fs_blk_stat $dev reads) - r0))
	[ "$pswpout" -ge 2048 ] || bed_fail "$3: only $pswpout pages swapped out"
	[ "$pswpin" -ge 1024 ] || bed_fail "$3: only $pswpin pages swapped in"
	[ $(($(fs_blk_stat $dev writes) - w0)) -gt 0 ] && [ $(($(fs_blk_stat $dev reads) - r0)) -gt 0 ] ||
		bed_fail "$3: $dev wrote or read nothing"
	[ "$(fs_donor_field $dev "$donor" writes)" -gt 0 ] && [ "$(fs_donor_field $dev "$donor" reads)" -gt 0 ] ||
		bed_fail "$3: no RDMA write or read with the donor"
}

bed_systemd_up
fs_fresh_system
! getent passwd farswap >/dev/null || bed_fail "user farswap before the package"
[ ! -e /etc/farswap/hostid ] || bed_fail "/etc/farswap/hostid before the package"

# farswap.ko, the bed's build, in place of farswap-dkms's (DKMS builds it
# under TCG for minutes: deb-install does that); farswap-swap loads it
# when it is not loaded.
fs_insmod

# 1. The quick start's host block, with the donor's key copied here as
# the README says.
bed_wait donor ready 600
install -m 0600 "$BED/donor.key" /root/donor.key
fs_run_readme quickstart:host DONOR="$donor"

[ "$(systemctl is-enabled farswap-swap)" = enabled ] || bed_fail "farswap-swap.service is not enabled"
[ "$(fs_unit_prop farswap-swap ActiveState)" = active ] || bed_fail "farswap-swap.service is $(fs_unit_prop farswap-swap ActiveState)"
grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' /etc/farswap/hostid ||
	bed_fail "farswap-tools's postinst made no /etc/farswap/hostid with a UUID: $(cat /etc/farswap/hostid 2>&1)"
[ "$(systemctl show -P FragmentPath farswap-swap)" = /lib/systemd/system/farswap-swap.service ] ||
	bed_fail "farswap-swap.service is $(systemctl show -P FragmentPath farswap-swap), not the package's"
[ "$(stat -c '%U %a' /etc/farswap/key)" = "root 600" ] ||
	bed_fail "/etc/farswap/key is $(stat -c '%U %a' /etc/farswap/key), not root's 0600"
[ ! -e /root/donor.key ] || bed_fail "the README's host block left /root/donor.key"
check_swapping
# options = discard: swapon discarded the whole device.
[ "$(fs_blk_stat $dev discards)" -gt 0 ] || bed_fail "options = discard: swapon discarded nothing"
host_id=$(</etc/farswap/hostid)
bed_result systemd.host_id "$host_id"

# 2. Swap for real: 40 MiB through a 16 MiB memory cgroup.
swap_for_real 40 16M boot

# 3. A key of its own: the donor makes it, named by this host's id.
cp /etc/farswap/hostid "$BED/host.id"
bed_signal host-id
bed_wait donor host-key 600
install -m 0600 "$BED/host.key" /root/host.key
fs_run_readme quickstart:host-key
cmp -s /etc/farswap/key "$BED/donor.key" && bed_fail "/etc/farswap/key is still the donor's key-file"

# 4. A reboot, as a boot does it: the unit stops (swapoff, detach), the
# module goes and comes back, the unit starts.
systemctl stop farswap-swap
[ "$(fs_unit_prop farswap-swap ActiveState)" = inactive ] || bed_fail "farswap-swap.service is $(fs_unit_prop farswap-swap ActiveState) after stop"
! grep -q "^/dev/$dev " /proc/swaps || bed_fail "$dev still swapped on after systemctl stop farswap-swap"
[ ! -e /sys/block/$dev ] || bed_fail "$dev still attached after systemctl stop farswap-swap"
rmmod farswap
fs_insmod

# A key file swap.conf names that is not there: the start fails, naming it.
mv /etc/farswap/key /etc/farswap/key.away
since=$(date '+%Y-%m-%d %H:%M:%S')
if systemctl start farswap-swap; then
	bed_fail "farswap-swap started without its key file"
fi
journalctl -u farswap-swap --since "$since" --no-pager | tee /run/start.log | sed 's/^/  journal: /'
bed_grep -F "/etc/farswap/key: No such file" </run/start.log ||
	bed_fail "farswap-swap's failure does not name the missing /etc/farswap/key"
[ "$(fs_unit_prop farswap-swap ActiveState)" = failed ] || bed_fail "farswap-swap.service is $(fs_unit_prop farswap-swap ActiveState), not failed"
[ ! -e /sys/block/$dev ] || bed_fail "a failed start left $dev"
mv /etc/farswap/key.away /etc/farswap/key

t0=$SECONDS
systemctl start farswap-swap
bed_result systemd.reboot.start_seconds $((SECONDS - t0))
[ "$(fs_unit_prop farswap-swap ActiveState)" = active ] || bed_fail "farswap-swap.service is $(fs_unit_prop farswap-swap ActiveState) after the reboot"
check_swapping
[ "$(</sys/block/$dev/farswap/host_id)" = "$host_id" ] || bed_fail "another host id after the reboot"
bed_signal rebooted
bed_wait donor checked 300

# 5. Swap for real again, then the unit's stop brings every page back.
swap_for_real 32 16M reboot
farswapctl status | sed 's/^/  /'
systemctl stop farswap-swap
! grep -q "^/dev/$dev " /proc/swaps || bed_fail "$dev still swapped on after the stop"
rmmod farswap
check_kernel_log
bed_signal "done"
