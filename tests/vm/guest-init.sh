#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of every test bed guest, started by the initramfs (initramfs-init.sh)
# after switch_root into the machine's root (read-only 9p, tmpfs overlay),
# with /proc, /sys, /dev, /tmp, /run, cgroup2 and the shared /bed already
# mounted.  It configures the links, runs the role's script and powers
# off.  bed.py reads its "farswap-bed: ..." lines in the console log and
# the files it leaves in /bed:
#
#   /bed/.bed/<role>.env   written by bed.py: the role's environment
#   /bed/.bed/<role>.up    written here when the role script starts (boot time)
#   /bed/<role>.rc         the role script's exit code (254: the guest's
#                          set-up failed, reason in /bed/<role>.error)
#   /bed/<role>.dmesg      the whole kernel log at the end
#   /bed/<role>.journal    the journal at the end (systemd guests only)
#
# A role of the scenario's SYSTEMD_ROLES (BED_SYSTEMD=1 in its
# environment) boots on: once the links are up this script writes two
# units into the overlay and execs systemd as PID 1, whose boot goes to
# bed.target (basic.target, so the whole sysinit runs: journald, udev,
# tmpfiles, sysusers...; no getty, none of the machine's own services).
# bed-role.service then runs this script again as "guest-init.sh role
# ROLE", which runs the role's script as PID 1 does here.
#
# PID 1 must never exit (the kernel would panic), so nothing here uses
# set -e: every step that can fail goes through setup_fail.  Builtins are
# preferred over small programs: each exec costs ~50-100 ms under TCG.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
# The console is a terminal: systemctl and journalctl would start a pager
# there and wait for keys no one types.
export SYSTEMD_PAGER=cat
umask 022
BED_ROLE=$(</proc/sys/kernel/hostname)

say() {
	echo "farswap-bed: $*"
}

power_off() {
	sync
	# busybox poweroff -f calls reboot(2) directly: no init daemon runs
	# here for systemd's poweroff to ask.  Under systemd too, the role's
	# end is the guest's: what the role left running is not stopped
	# (a clean stop is for the role script to test), and /bed is
	# already written.
	busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 1000
}

setup_fail() {
	say "FATAL: $*"
	echo "$*" >"/bed/$BED_ROLE.error"
	echo 254 >"/bed/$BED_ROLE.rc"
	power_off
}

load_env() {
	local envfile=/bed/.bed/$BED_ROLE.env

	[ -f "$envfile" ] || setup_fail "$envfile missing"
	# shellcheck source=/dev/null
	. "$envfile"
}

# The role script under its own deadline, a backstop: bed.py's wall-clock
# timeout normally fires first and names the hung guest.  Then its exit
# code and the logs go to /bed, and the guest powers off.
run_role() {
	local rc up

	read -r up _ </proc/uptime
	echo "$up" >"/bed/.bed/$BED_ROLE.up"
	say "$BED_ROLE up after $up s (kernel $(</proc/sys/kernel/osrelease)), running $BED_SCRIPT"
	cd "$BED_SCENARIO_DIR" || setup_fail "cannot cd to $BED_SCENARIO_DIR"
	timeout -k 5 "$BED_TIMEOUT" bash "$BED_SCRIPT" </dev/null
	rc=$?
	[ $rc -eq 124 ] && say "$BED_ROLE: role script timed out after $BED_TIMEOUT s"
	read -r up _ </proc/uptime
	say "$BED_ROLE: role script exited $rc at $up s"

	cd /
	dmesg >"/bed/$BED_ROLE.dmesg" 2>&1
	if [ -n "${BED_SYSTEMD:-}" ]; then
		journalctl -b --no-pager -o short-monotonic >"/bed/$BED_ROLE.journal" 2>&1
	fi
	# Written last and in one go: bed_wait in the other guests treats an
	# existing .rc as "this role is over".
	echo "$rc" >"/bed/$BED_ROLE.rc.tmp" && mv "/bed/$BED_ROLE.rc.tmp" "/bed/$BED_ROLE.rc"
	power_off
}

# bed-role.service, under systemd (boot_systemd below): the role script,
# after saying how long systemd took from its exec to here.
if [ "${1:-}" = role ]; then
	BED_ROLE=$2
	load_env
	read -r up _ </proc/uptime
	read -r exec_up </run/bed-systemd-exec
	boot_s=$(awk -v a="$exec_up" -v b="$up" 'BEGIN { printf "%.1f", b - a }')
	say "$BED_ROLE: systemd took $boot_s s from its exec to bed-role.service"
	echo "bed_systemd_s_$BED_ROLE $boot_s" >>/bed/results
	run_role
fi

read -r up _ </proc/uptime
say "guest init starts at $up s"
load_env

# The debug kernel (bed.py --kernel debug, every module built in) and the
# unpacked 7.x kernels keep their modules in a cache, not under the
# machine's /lib/modules: link it there (the root is an overlay), so that
# modprobe works as it does on an installed kernel.  On a root that has
# the kernel's headers (DISTRO_ROOT: /lib/modules/<kver> holds the build
# link), lay the modules over that directory instead, with a tmpfs on top
# so that DKMS can install into it and depmod can rewrite its indexes.
if [ -n "${BED_MODULES_DIR:-}" ]; then
	kver=$(</proc/sys/kernel/osrelease)
	mods=/lib/modules/$kver
	if [ ! -e "$mods" ]; then
		ln -s "$BED_MODULES_DIR" "$mods" ||
			setup_fail "cannot link $mods to $BED_MODULES_DIR"
	elif [ ! -e "$mods/modules.dep" ]; then
		mkdir -p /run/bed-modules/upper /run/bed-modules/work
		out=$(mount -t overlay -o "lowerdir=$BED_MODULES_DIR:$mods,upperdir=/run/bed-modules/upper,workdir=/run/bed-modules/work" \
			bed-modules "$mods" 2>&1) ||
			setup_fail "cannot lay $BED_MODULES_DIR over $mods: $out $(dmesg | tail -n 3 | tr '\n' ' ')"
	fi
fi

# Each guest writes its own view of the peers: role names resolve.
{
	echo "127.0.0.1 localhost"
	echo "127.0.1.1 $BED_ROLE"
	for r in $FARSWAP_ROLES; do
		v=FARSWAP_PEER_$r
		[ -n "${!v:-}" ] && echo "${!v} $r"
	done
} >/etc/hosts

ip link set dev lo up || setup_fail "cannot bring up lo"

# BED_LINKS: one "mac,netdev,rxedev,address/prefix,peer" per link, in the
# order of the NICs on QEMU's command line.  Find each NIC by its MAC (the
# bed chose it) and give it the name the bed promised the role script.
# virtio_net and rdma_rxe were loaded by the initramfs.
for link in ${BED_LINKS:-}; do
	IFS=, read -r mac netdev rxe addr peer <<<"$link"
	found=
	for ((i = 0; i < 50; i++)); do
		for d in /sys/class/net/*; do
			[ "$(<"$d/address")" = "$mac" ] && found=${d##*/}
		done
		[ -n "$found" ] && break
		sleep 0.1
	done
	[ -n "$found" ] || setup_fail "no NIC with MAC $mac (link to $peer)"
	if [ "$found" != "$netdev" ]; then
		ip link set dev "$found" name "$netdev" || setup_fail "cannot rename $found to $netdev"
	fi
	ip addr add "$addr" dev "$netdev" || setup_fail "cannot address $netdev"
	ip link set dev "$netdev" up || setup_fail "cannot bring up $netdev"
	rdma link add "$rxe" type rxe netdev "$netdev" || setup_fail "rdma link add $rxe on $netdev failed"
done

# Swap traffic must reach the swap device under test: zswap is off on the
# command line; say so loudly if something turned it back on.  (The debug
# kernel has no zswap at all.)
zswap=/sys/module/zswap/parameters/enabled
if [ -r $zswap ] && [ "$(<$zswap)" = Y ]; then
	say "warning: zswap is enabled"
fi

# SYSTEMD_ROLES: systemd is PID 1 from here on.  The overlay gets the
# bed's target and the unit that runs the role script; the machine's own
# enablements (its /etc/systemd/system/*.wants: a getty, its daemons and
# timers) are removed in the overlay, so that the boot starts systemd's
# own sysinit and what the role enables, nothing else.  The hostname is
# the role's (systemd sets it from /etc/hostname), and the root is the
# bed's overlay, not what the machine's fstab describes.
boot_systemd() {
	local units=/etc/systemd/system up

	rm -rf "$units"/*.wants "$units"/*.requires ||
		setup_fail "cannot clear the machine's enabled units from $units"
	echo "$BED_ROLE" >/etc/hostname
	# udev would give the links predictable names (eth0 became ens4, while
	# up, with net.ifnames=0 on the command line too): a .link file per
	# NIC keeps the name the bed gave it.
	mkdir -p /etc/systemd/network || setup_fail "cannot make /etc/systemd/network"
	for link in ${BED_LINKS:-}; do
		IFS=, read -r mac netdev _ <<<"$link"
		printf '[Match]\nMACAddress=%s\n\n[Link]\nName=%s\n' "$mac" "$netdev" \
			>"/etc/systemd/network/10-bed-$netdev.link" ||
			setup_fail "cannot write /etc/systemd/network/10-bed-$netdev.link"
	done
	echo "# the test bed's guest: its root is the initramfs's overlay" >/etc/fstab
	cat >"$units/bed.target" <<EOF || setup_fail "cannot write $units/bed.target"
[Unit]
Description=farswap test bed: the $BED_ROLE role
Documentation=file:$FARSWAP_SRC/tests/vm/README.md
# basic.target: sysinit.target (journald, udev, tmpfiles, sysusers,
# modules, sysctl...), sockets and timers, as on any boot; no getty.
Requires=basic.target
After=basic.target
Wants=bed-role.service
AllowIsolate=yes
EOF
	cat >"$units/bed-role.service" <<EOF || setup_fail "cannot write $units/bed-role.service"
[Unit]
Description=farswap test bed: the $BED_ROLE role's script
Documentation=file:$FARSWAP_SRC/tests/vm/README.md

[Service]
# Started once the system is up (after basic.target, by default); it
# writes /bed/$BED_ROLE.rc and powers the guest off itself.
Type=simple
ExecStart=/bin/bash $0 role $BED_ROLE
# Its output on the console, as every role's: bed.py reads it there.
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/console
TTYReset=no
TTYVHangup=no
EOF
	read -r up _ </proc/uptime
	echo "$up" >/run/bed-systemd-exec
	say "$BED_ROLE: systemd becomes PID 1 at $up s (bed.target)"
	# shellcheck disable=SC2093 # it returns only if systemd cannot run
	exec /lib/systemd/systemd --unit=bed.target
	setup_fail "cannot exec /lib/systemd/systemd"
}

[ -z "${BED_SYSTEMD:-}" ] || boot_systemd
run_role
