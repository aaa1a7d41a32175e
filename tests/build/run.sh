#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The build suite of 'make check': the donor daemon and the host's tools
# (their Makefiles build with -Werror), and farswap.ko with W=1 against
# every installed Debian 6.1 and 6.12 header set (and sparse, C=1, there),
# and against the newest 7.0 and 7.3 headers in the trixie chroot
# (scripts/trixie-chroot.sh, made by make setup; FARSWAP_BUILD_7X="7.0 7.3"
# by default names the series).  Any compiler, modpost or sparse warning
# fails a build.  No sparse for 7.x: Debian's sparse (0.6.4, trixie's too)
# cannot parse their headers (__typeof_unqual__), and their kbuild turns
# C=1 off.
# One PASS/FAIL line per build; logs in build/test-logs/build-*.log.
#
# The module is built from scratch in build/check/<KVER>/ every time (an
# incremental build would hide the warnings of files it does not rebuild);
# the bed's own incremental builds in build/<KVER>/ are left alone.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${FARSWAP_BUILD_DIR:-$top/build}
logs=$build/test-logs
mkdir -p "$logs"
failed=0

# judge NAME RC LOG: one verdict line for one build.
judge() {
	local name=$1 rc=$2 log=$3 warn
	warn=$(grep -i 'warning:' "$log" | head -n1)
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: build/$name: exit $rc: $(grep -E -m1 'error|Error|build-module:' "$log" || tail -n1 "$log") (log: $log)"
		failed=1
	elif [ -n "$warn" ]; then
		echo "FAIL: build/$name: $warn (log: $log)"
		failed=1
	else
		echo "PASS: build/$name"
	fi
}

# The daemon.
log=$logs/build-daemon.log
if [ ! -f "$top/daemon/Makefile" ]; then
	echo "FAIL: build/daemon: daemon/Makefile does not exist yet"
	failed=1
else
	make -C "$top/daemon" >"$log" 2>&1
	judge daemon $? "$log"
fi

# The host's tools.
log=$logs/build-tools.log
make -C "$top/tools" >"$log" 2>&1
judge tools $? "$log"

# The man pages: each renders without a single groff warning (-ww).
log=$logs/build-man.log
: >"$log"
pages=$(ls "$top"/docs/man/*.[0-9] 2>/dev/null)
if ! command -v groff >/dev/null; then
	echo "FAIL: build/man: groff is not installed (apt-get install groff-base)"
	failed=1
elif [ "$(wc -w <<<"$pages")" -lt 6 ]; then
	echo "FAIL: build/man: want 6 pages in docs/man, found: $pages"
	failed=1
else
	for page in $pages; do
		LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" >>"$log" 2>&1 ||
			echo "$page: groff exited $?" >>"$log"
	done
	if [ -s "$log" ]; then
		echo "FAIL: build/man: $(head -n1 "$log") (log: $log)"
		failed=1
	else
		echo "PASS: build/man"
	fi
fi

# The module, for every installed 6.1 and 6.12 kernel with headers.
kvers=$(cd /lib/modules && ls -d 6.1.*-amd64 6.12.*-amd64 2>/dev/null | sort -V)
if [ -z "$kvers" ]; then
	echo "FAIL: build/farswap.ko: no 6.1 or 6.12 kernel installed (make setup)"
	failed=1
fi
for kver in $kvers; do
	log=$logs/build-farswap.ko-$kver.log
	if [ ! -f "/lib/modules/$kver/build/Makefile" ]; then
		echo "FAIL: build/farswap.ko-$kver: headers missing (/lib/modules/$kver/build)"
		failed=1
		continue
	fi
	rm -rf "$build/check/$kver"
	FARSWAP_BUILD_DIR=$build/check "$top/scripts/build-module.sh" "$kver" C=1 >"$log" 2>&1
	judge "farswap.ko-$kver" $? "$log"
done

# The module for Linux 7.x, built inside the trixie chroot.
series7=${FARSWAP_BUILD_7X-7.0 7.3}
if [ -n "$series7" ]; then
	if ! "$top/scripts/trixie-chroot.sh" --check; then
		echo "FAIL: build/farswap.ko-7.x: no trixie chroot for the 7.x headers ($("$top/scripts/trixie-chroot.sh" --root)); run 'make setup'"
		failed=1
		series7=
	fi
fi
for s in $series7; do
	if ! kver=$("$top/scripts/trixie-chroot.sh" --kver "$s" 2>&1); then
		echo "FAIL: build/farswap.ko-$s: $kver"
		failed=1
		continue
	fi
	log=$logs/build-farswap.ko-$kver.log
	rm -rf "$build/check/$kver"
	FARSWAP_BUILD_DIR=$build/check "$top/scripts/build-module.sh" "$kver" >"$log" 2>&1
	judge "farswap.ko-$kver" $? "$log"
done

exit $failed
