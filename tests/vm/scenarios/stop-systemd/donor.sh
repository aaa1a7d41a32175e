#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stop-systemd, both donors: farswapd.service from the package; the first
# is stopped (a drain) and started again, the second restarted by a
# package upgrade (its pool kept in systemd's fd store).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

# journal_since SINCE PATTERN FILE: farswapd.service's journal since
# SINCE into FILE, once it holds PATTERN (journald files a line a moment
# after it is written) or 30 s have passed.
journal_since() {
	local end=$((SECONDS + $(bed_secs 30)))

	until journalctl -u farswapd --since "$1" --no-pager >"$3"
		grep -q "$2" "$3" || [ $SECONDS -ge $end ]; do
		sleep 1
	done
	sed 's/^/  journal: /' "$3"
}

# stop_unit: systemctl stop farswapd, which drains first; the journal of
# that stop must say "safe to stop" and the unit must not have failed.
stop_unit() {
	local since t0

	since=$(date '+%Y-%m-%d %H:%M:%S')
	t0=$SECONDS
	systemctl stop farswapd || bed_fail "systemctl stop farswapd failed"
	bed_result stop.first.seconds $((SECONDS - t0))
	journal_since "$since" 'exited cleanly' /run/stop.txt
	grep -q 'drained: no host holds a slab here; safe to stop' /run/stop.txt ||
		bed_fail "systemctl stop farswapd: the unit's drain did not say 'safe to stop'"
	grep -q 'drain asked by uid' /run/stop.txt ||
		bed_fail "systemctl stop farswapd: farswapd was not asked to drain"
	grep -q 'exited cleanly' /run/stop.txt || bed_fail "farswapd did not exit cleanly on stop"
}

# upgrade_unit: the package installed again, as an upgrade installs it:
# its postinst try-restarts farswapd, which keeps the pool: no drain, the
# memfds in systemd's fd store, adopted by the new farswapd, whose host
# resumes its slabs.
upgrade_unit() {
	local since t0

	# The bed's root may be a container image's, whose policy-rc.d forbids
	# package scripts to start or restart services (exit 101); a machine
	# has none, and its upgrades restart farswapd.
	rm -f /usr/sbin/policy-rc.d
	since=$(date '+%Y-%m-%d %H:%M:%S')
	t0=$SECONDS
	dpkg -i "$FARSWAP_SRC"/build/deb/farswap-tools_*_amd64.deb >/run/dpkg-upgrade.log 2>&1 ||
		{ tail -n 20 /run/dpkg-upgrade.log; bed_fail "dpkg -i farswap-tools (the upgrade) failed"; }
	bed_result stop.second.upgrade_seconds $((SECONDS - t0))
	journal_since "$since" 'resumed slab' /run/restart.txt
	grep -q 'no drain, the pool is kept across the restart' /run/restart.txt ||
		bed_fail "the upgrade's restart: the unit's ExecStop did not see a restart"
	! grep -q 'drain asked by uid' /run/restart.txt ||
		bed_fail "the upgrade's restart drained"
	grep -q 'kept pool adopted from the' /run/restart.txt ||
		bed_fail "the restarted farswapd did not adopt the kept pool"
	grep -q 'resumed slab' /run/restart.txt ||
		bed_fail "no host resumed a slab after the restart"
	bed_result stop.second.slabs_resumed "$(grep -c 'resumed slab' /run/restart.txt)"
}

bed_systemd_up
fs_fresh_system
dpkg -i "$FARSWAP_SRC"/build/deb/farswap-tools_*_amd64.deb >/run/dpkg.log 2>&1 ||
	{ tail -n 20 /run/dpkg.log; bed_fail "dpkg -i farswap-tools failed"; }
install -m 0640 -g farswap "$BED/bed.key" /etc/farswap/key
cat >/etc/farswap/farswapd.conf <<CONF
listen = $FARSWAP_ADDR
donate = 256M
slab-size = 16M
key-file = /etc/farswap/key
pressure-interval = 1s
reclaim-deadline = $(bed_secs 60)s
CONF
fs_unit_bed_dropin
systemctl start farswapd
bed_wait_rdma_listen 7471 0
bed_signal ready

if [ "$FARSWAP_ROLE" = donor ]; then
	bed_wait host filled 1000
	stop_unit
	[ "$(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd Result)" = inactive/success ] ||
		bed_fail "farswapd.service stopped as $(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd Result)"
	bed_signal stopped
	bed_wait host checked 600
	systemctl start farswapd
	bed_wait_rdma_listen 7471 0
	bed_signal started
	bed_wait donor2 restarted 1000
else
	bed_wait host back 600
	pid0=$(fs_unit_prop farswapd MainPID)
	upgrade_unit
	[ "$(fs_unit_prop farswapd ActiveState)" = active ] || bed_fail "farswapd.service is $(fs_unit_prop farswapd ActiveState) after the upgrade"
	[ "$(fs_unit_prop farswapd MainPID)" != "$pid0" ] || bed_fail "the upgrade did not restart farswapd"
	bed_wait_rdma_listen 7471 0
	bed_signal restarted
fi
bed_wait host "done" 900
check_kernel_log
