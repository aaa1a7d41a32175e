#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stop-systemd, both donors: farswapd.service from the package; the first
# is stopped and started again, the second restarted.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

# stop_unit VERB TAG: systemctl VERB farswapd (stop or restart), which
# drains first; the journal of that stop must say "safe to stop" and the
# unit must not have failed.
stop_unit() {
	local since t0 end

	since=$(date '+%Y-%m-%d %H:%M:%S')
	t0=$SECONDS
	systemctl "$1" farswapd || bed_fail "systemctl $1 farswapd failed"
	bed_result "stop.$2.seconds" $((SECONDS - t0))
	# journald files a line a moment after it is written.
	end=$((SECONDS + $(bed_secs 30)))
	until journalctl -u farswapd --since "$since" --no-pager >/run/stop.txt
		grep -q 'exited cleanly' /run/stop.txt || [ $SECONDS -ge $end ]; do
		sleep 1
	done
	sed 's/^/  journal: /' /run/stop.txt
	grep -q 'drained: no host holds a slab here; safe to stop' /run/stop.txt ||
		bed_fail "systemctl $1 farswapd: the unit's drain did not say 'safe to stop'"
	grep -q 'drain asked by uid' /run/stop.txt ||
		bed_fail "systemctl $1 farswapd: farswapd was not asked to drain"
	grep -q 'exited cleanly' /run/stop.txt || bed_fail "farswapd did not exit cleanly on $1"
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
	stop_unit stop first
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
	stop_unit restart second
	[ "$(fs_unit_prop farswapd ActiveState)" = active ] || bed_fail "farswapd.service is $(fs_unit_prop farswapd ActiveState) after restart"
	[ "$(fs_unit_prop farswapd MainPID)" != "$pid0" ] || bed_fail "systemctl restart farswapd left the same process"
	bed_wait_rdma_listen 7471 0
	bed_signal restarted
fi
bed_wait host "done" 900
check_kernel_log
