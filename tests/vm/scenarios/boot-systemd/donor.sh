#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot-systemd, the donor: README.md's quick start under systemd, as
# written (scenario.conf says what and why).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

keyfile=/etc/farswap/key

bed_systemd_up
fs_fresh_system

fs_unit_bed_dropin

# 1. The quick start's donor block.
fs_run_readme quickstart:donor DONOR="$FARSWAP_ADDR"

# farswapd started by systemctl and ready only once it listens: Type=notify
# (systemctl returned after READY=1), and the listener was there at once.
bed_wait_rdma_listen 7471 0
pid=$(fs_unit_prop farswapd MainPID)
bed_log "farswapd.service: $(systemctl show -p Type,MainPID,ActiveState,SubState,User,NRestarts farswapd | tr '\n' ' ')"
[ "$(fs_unit_prop farswapd Type)" = notify ] || bed_fail "farswapd.service is Type=$(fs_unit_prop farswapd Type), not notify"
[ "$(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd SubState)" = active/running ] ||
	bed_fail "farswapd.service is $(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd SubState) after systemctl enable --now"
[ "$(fs_unit_prop farswapd User)" = farswap ] || bed_fail "farswapd.service runs as '$(fs_unit_prop farswapd User)', not farswap"
[ "$(fs_unit_prop farswapd NRestarts)" = 0 ] || bed_fail "farswapd.service restarted $(fs_unit_prop farswapd NRestarts) times"
[ "$(ps -o user= -p "$pid")" = farswap ] ||
	bed_fail "farswapd (pid $pid) runs as $(ps -o user= -p "$pid"), not farswap"
[ "$(systemctl is-enabled farswapd)" = enabled ] || bed_fail "farswapd.service is not enabled"

# The package's farswapd, not the checkout's or make install's.
[ "$(readlink "/proc/$pid/exe")" = /usr/sbin/farswapd ] ||
	bed_fail "farswapd.service runs $(readlink "/proc/$pid/exe"), not the package's /usr/sbin/farswapd"
dpkg-query -W -f='${Status} ${Version}\n' farswap-tools | tee /run/pkg.txt | sed 's/^/  dpkg: farswap-tools /'
bed_grep -E '^install ok installed [0-9]' </run/pkg.txt || bed_fail "farswap-tools is not installed"

# The user, made by systemd-sysusers (the package's postinst) from the
# file the package put in its search path: a system user, no login.
sysusers=/usr/lib/sysusers.d/farswap.conf
[ -f "$sysusers" ] || bed_fail "farswap-tools left no $sysusers"
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd farswap) ||
	bed_fail "no user farswap after installing farswap-tools"
bed_result systemd.donor.farswap_uid "$uid"
[ "$uid" -lt 1000 ] && [ "$shell" = /usr/sbin/nologin ] && [ "$home" = / ] ||
	bed_fail "user farswap is uid $uid, home $home, shell $shell: not sysusers' system user"
[ "$(getent group farswap | cut -d: -f3)" = "$gid" ] || bed_fail "no group farswap of gid $gid"
[ "$(stat -c '%U:%G %a' "$keyfile")" = "root:farswap 640" ] ||
	bed_fail "$keyfile is $(stat -c '%U:%G %a' "$keyfile"), not root:farswap 640"
journalctl -u farswapd --no-pager | bed_grep "listening on $FARSWAP_ADDR:7471" ||
	bed_fail "the journal has no 'listening on $FARSWAP_ADDR:7471' from farswapd"
farswapd --stats | bed_grep -x 'auth hmac-sha256' || bed_fail "farswapd --stats does not say auth hmac-sha256"

# 2. A key only root reads: the start fails, and what farswapd said
# reaches the journal: the file, the user it runs as, the fix.  Then the
# fix it gives, and farswapd starts.
systemctl stop farswapd
chgrp root "$keyfile"
chmod 0600 "$keyfile"
since=$(date '+%Y-%m-%d %H:%M:%S')
if systemctl start farswapd 2>/run/start.err; then
	bed_fail "farswapd started with $keyfile 0600 root:root, which user farswap cannot read"
fi
sed 's/^/  systemctl start: /' /run/start.err
why="key-file $keyfile: Permission denied (farswapd runs as user farswap); fix: let user farswap read it, keeping root its owner: chown root:farswap $keyfile && chmod 640 $keyfile"
# within_30s CMD GREP-ARGS...: CMD's output (kept in /run/out.txt)
# matches within 30 s: journald files a line a moment after it is written.
within_30s() {
	local cmd=$1 end=$((SECONDS + $(bed_secs 30)))

	shift
	until eval "$cmd" >/run/out.txt 2>&1; grep -q "$@" /run/out.txt; do
		[ $SECONDS -lt $end ] || return 1
		sleep 1
	done
}
within_30s "journalctl -u farswapd --since '$since' --no-pager" -F -- "$why" || {
	sed 's/^/  journal: /' /run/out.txt
	bed_fail "journalctl -u farswapd does not say: $why"
}
grep -F "$why" /run/out.txt | sed 's/^/  journal: /'
bed_log "with $keyfile 0600 root:root farswapd said, in journalctl -u farswapd: $why"
# farswapd exits 78 (EX_CONFIG), which RestartPreventExitStatus= keeps
# from restarting: the unit stays failed, and systemctl status shows
# that, the exit status and farswapd's own line (systemd shows a unit's
# lines since its last start: none while Restart= waits).
within_30s "systemctl status farswapd --no-pager -l -n 20" -F -- "$why" || {
	sed 's/^/  | /' /run/out.txt
	bed_fail "systemctl status farswapd does not show why it failed: $why"
}
sed 's/^/  | /' /run/out.txt
bed_grep -E "Active: failed \(Result: exit-code\)" </run/out.txt ||
	bed_fail "systemctl status does not show farswapd failed (exit-code)"
[ "$(fs_unit_prop farswapd ExecMainStatus)" = 78 ] ||
	bed_fail "farswapd exited $(fs_unit_prop farswapd ExecMainStatus), not 78 (EX_CONFIG)"
sleep "$(bed_secs 8)"	# past RestartSec=5s: no start again
[ "$(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd NRestarts)" = failed/0 ] ||
	bed_fail "farswapd.service is $(fs_unit_prop farswapd ActiveState) after $(fs_unit_prop farswapd NRestarts) restarts: EX_CONFIG restarted"
chown root:farswap "$keyfile" && chmod 640 "$keyfile"
systemctl restart farswapd
[ "$(systemctl is-active farswapd)" = active ] || bed_fail "farswapd not active after the fix"
bed_wait_rdma_listen 7471 0

# The copy the README asks for (scp): the key to the host.
cp "$keyfile" "$BED/donor.key"
bed_signal ready

# 3. A key for the host alone, named by its id.
bed_wait host host-id 900
host_id=$(<"$BED/host.id")
fs_run_readme quickstart:donor-host-key HOST_ID="$host_id"
[ "$(stat -c '%U:%G %a' "/etc/farswap/hosts.d/$host_id")" = "root:farswap 640" ] ||
	bed_fail "hosts.d/$host_id is $(stat -c '%U:%G %a' "/etc/farswap/hosts.d/$host_id")"
cmp -s "$keyfile" "/etc/farswap/hosts.d/$host_id" && bed_fail "the host's key is the key-file's"
cp "/etc/farswap/hosts.d/$host_id" "$BED/host.key"
since=$(date '+%Y-%m-%d %H:%M:%S')
bed_signal host-key

# 4. After the host's reboot: its session is up, under its id, with the
# key of its own (the only one it holds).
bed_wait host rebooted 900
id_hex=${host_id//-/}
farswapd --stats | tee /run/stats.txt | sed 's/^/  stats: /'
bed_grep -E "^host [0-9]+ id $id_hex peer $FARSWAP_PEER_host.* state up " </run/stats.txt ||
	bed_fail "no session up of host $id_hex after the host's reboot"
journalctl -u farswapd --since "$since" --no-pager >/run/journal.txt
grep "$id_hex" /run/journal.txt | sed 's/^/  journal: /' || true
bed_grep -E "host [0-9]+ \($id_hex, ${FARSWAP_PEER_host}[^)]*\): authenticated \(hmac-sha256\) with its own key, host-keys file /etc/farswap/hosts.d/[^:]*: host id proven" </run/journal.txt ||
	bed_fail "the journal does not show host $id_hex authenticated with its own host-keys file after its reboot"
bed_log "host $host_id authenticated after its reboot, with the key in hosts.d/$host_id, the only one it holds"
bed_signal checked

# 5. The unit's stop: no host holds a slab, so the drain is short and the
# stop clean.
bed_wait host "done" 900
fs_no_host_left
systemctl stop farswapd
[ "$(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd Result)" = inactive/success ] ||
	bed_fail "farswapd.service stopped as $(fs_unit_prop farswapd ActiveState)/$(fs_unit_prop farswapd Result)"
journalctl -u farswapd --no-pager | bed_grep "exited cleanly" || bed_fail "farswapd did not say it exited cleanly"
check_kernel_log
