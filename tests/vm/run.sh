#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The vm suite of 'make check': every scenario listed in suite.list, each
# booted by bed.py.  Prints bed.py's output, whose last line per scenario
# is "PASS: vm/NAME" or "FAIL: vm/NAME: why".  For self-tests of the bed
# (EXPECT_FAIL in scenario.conf) it prints its own verdict instead: PASS if
# bed.py failed the scenario for the expected reason and kept the logs.
# Exits non-zero if anything failed.
#
#   FARSWAP_VM_ONLY="rdma-rw selftest-exit"   run only these (names)
#   FARSWAP_VM_FULL=1   also the scenarios marked 'full' ('make check-full')
#   FARSWAP_VM_KERNEL=debug   the scenarios marked 'debug', on the debug
#                       kernel (KASAN, lockdep: 'make check-debug'), named
#                       vm/NAME@debug; with FARSWAP_VM_ONLY, those named
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${FARSWAP_BUILD_DIR:-$top/build}
bed=$here/bed.py
failed=0
kernel=${FARSWAP_VM_KERNEL:-}
case $kernel in
'' | debug) ;;
*)
	echo "FAIL: vm: FARSWAP_VM_KERNEL=$kernel: only 'debug' (or unset)"
	exit 1
	;;
esac

# The debug kernel is built once, before the first scenario: a build
# failure is one FAIL line here, not one per scenario after as many
# attempts.  A warm cache answers at once.
if [ "$kernel" = debug ]; then
	echo "vm: the debug kernel (scripts/debug-kernel.sh; a cold build takes tens of minutes)"
	dklog=$build/debug-kernel.log
	mkdir -p "$build"
	if ! "$top/scripts/debug-kernel.sh" >"$dklog" 2>&1; then
		echo "FAIL: vm/debug-kernel: scripts/debug-kernel.sh failed: $(tail -n1 "$dklog")"
		exit 1
	fi
	echo "vm: debug kernel $(tail -n1 "$dklog")"
fi

# conf_value FILE KEY: a value from a scenario.conf (shell syntax).
conf_value() {
	(
		set +u
		# shellcheck source=/dev/null
		. "$1" >/dev/null 2>&1
		eval "printf '%s' \"\${$2:-}\""
	)
}

# expected_failure NAME TAG LOG EXPECT: judge a self-test's bed.py output.
expected_failure() {
	local name=$1 tag=$2 log=$3 expect=$4 last logdir roles r
	last=$(grep -E '^(PASS|FAIL): ' "$log" | tail -n1)
	if [ "${last#FAIL: "$tag": }" = "$last" ]; then
		echo "FAIL: $tag: self-test: bed.py should have failed it, said: ${last:-nothing}"
		return 1
	fi
	if ! grep -Eq -- "$expect" <<<"${last#FAIL: "$tag": }"; then
		echo "FAIL: $tag: self-test: wrong reason '${last#FAIL: "$tag": }', expected /$expect/"
		return 1
	fi
	logdir=$build/vm-logs/${tag#vm/}
	roles=$(conf_value "$here/scenarios/$name/scenario.conf" ROLES)
	for r in $roles; do
		if ! grep -qa 'farswap-bed:' "$logdir/$r.console" 2>/dev/null; then
			echo "FAIL: $tag: self-test: console log $logdir/$r.console missing or empty"
			return 1
		fi
	done
	echo "PASS: $tag (failed as it must: ${last#FAIL: "$tag": })"
}

# tcg_eflags_fault CONSOLE: the first trap in CONSOLE (a double fault, or
# a debug trap in kernel mode), if it is the emulation's own: a register
# frame whose EFLAGS has reserved bits set (3, 5, 15, 22-31), a value no
# x86 CPU holds (POPF and IRET leave those bits alone).  Under TCG the
# slab allocator's restore of the interrupt flag now and then loads
# EFLAGS with the low half of RDI, a pointer, ORed with 0x202: with TF
# set the guest takes a debug trap, otherwise a double fault.  Seen on
# hosts and donors alike, in Soft-RoCE's workqueue and in interrupts,
# with or without farswap.ko.
tcg_eflags_fault() {
	local oops eflags line

	oops=$(grep -a -A40 -m1 -E 'traps: PANIC: double fault|at arch/x86/kernel/traps.c:[0-9]+ exc_debug_kernel' "$1") ||
		return 1
	while read -r line; do
		case $line in
		*EFLAGS:*)
			eflags=$(sed -n 's/.*EFLAGS: \([0-9a-f]*\).*/\1/p' <<<"$line")
			if [ -n "$eflags" ] && [ $((0x$eflags & 0xffc08028)) -ne 0 ]; then
				echo "trap with EFLAGS $eflags, reserved bits set"
				return 0
			fi
			;;
		esac
	done <<<"$oops"
	return 1
}

# environment_fault LOGDIR: "ROLE: LINE" if a guest of the run that does
# not load farswap.ko (a donor: stock kernel, farswapd) hit a fault of the
# emulation: a kernel crash, its NIC's transmit queue stalling, or a
# process other than farswapd killed by a CPU trap.  Under QEMU's TCG on
# this kind of machine such guests now and then die in Soft-RoCE's
# workqueue with a double fault or a spurious debug trap whose EFLAGS
# holds a register's value, see `sleep` take a general protection fault
# in libc, or stop sending on virtio-net.  No farswap code runs there;
# a crash of farswapd itself is never excused.
environment_fault() {
	local console role line
	# A memory-safety or locking report (KASAN, KFENCE, SLUB, page
	# poisoning, lockdep, debug objects) is a finding on any guest, never
	# the emulation's: no retry may hide it.
	if grep -aqE 'BUG: (KASAN|KFENCE)|BUG [^ :]+ \((Not tainted|Tainted: [^)]*)\):|pagealloc: memory corruption|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage|ODEBUG:' \
		"$1"/*.console 2>/dev/null; then
		return 1
	fi
	for console in "$1"/*.console; do
		[ -f "$console" ] || continue
		if line=$(tcg_eflags_fault "$console"); then
			echo "$(basename "$console" .console): $line"
			return 0
		fi
		grep -aqE '\] farswap: loaded' "$console" && continue
		grep -aqE 'Modules linked in:.* farswap(\(|$| )' "$console" && continue
		line=$(grep -aE -m1 'Oops|BUG:|Kernel panic|WARNING: CPU|NETDEV WATCHDOG' "$console") ||
			line=$(grep -aE 'traps: [^ ]+\[[0-9]+\] (general protection|segfault|trap invalid opcode)' "$console" |
				grep -av 'traps: farswapd\[' | head -n1) || true
		[ -n "$line" ] || continue
		role=$(basename "$console" .console)
		echo "$role: ${line#*] }"
		return 0
	done
	return 1
}

# run_bed LABEL NAME LOG [ARGS...]: one bed.py run, its output shown with
# the verdict relabelled ("LABEL: PASS: ...", so it is not counted) and
# kept raw in LOG.
run_bed() {
	local label=$1 name=$2 log=$3

	shift 3
	/usr/bin/python3 "$bed" run "$name" "$@" 2>&1 | tee "$log" |
		sed -u -E "s/^(PASS|FAIL): /$label: \\1: /"
	return "${PIPESTATUS[0]}"
}

while read -r name opts; do
	case $name in '' | '#'*) continue ;; esac
	# Whole names: grep -w would take "replicas" in "replicas-repair".
	if [ -n "${FARSWAP_VM_ONLY:-}" ] &&
		! tr ' \t' '\n\n' <<<"$FARSWAP_VM_ONLY" | grep -qxF -- "$name"; then
		continue
	fi
	args=()
	tag=vm/$name
	full=
	debug=
	series=
	for o in $opts; do
		case $o in
		full) full=1 ;;
		debug) debug=1 ;;
		kernel=*) series=${o#kernel=} ;;
		timeout=*) args+=(--timeout "${o#timeout=}") ;;
		'#'*) break ;;
		*)
			echo "FAIL: $tag: suite.list: unknown option '$o'"
			failed=1
			continue 2
			;;
		esac
	done

	if [ "$kernel" = debug ]; then
		# 'make check-debug': the lines marked 'debug' (or named), once
		# each on the debug kernel; a line for another kernel series
		# (swap-1donor kernel=6.1) is that series' test, not this one.
		[ -z "$series" ] || continue
		[ -n "$debug" ] || [ -n "${FARSWAP_VM_ONLY:-}" ] || continue
		series=debug
	elif [ -n "$full" ] && [ -z "${FARSWAP_VM_FULL:-}" ] &&
		[ -z "${FARSWAP_VM_ONLY:-}" ]; then
		# A 'full' scenario runs in 'make check-full', or when named.
		continue
	fi
	if [ -n "$series" ]; then
		args+=(--kernel "$series")
		tag=$tag@$series
	fi

	conf=$here/scenarios/$name/scenario.conf
	expect=
	[ -f "$conf" ] && expect=$(conf_value "$conf" EXPECT_FAIL)
	log=$(mktemp)
	if [ -n "$expect" ]; then
		# bed.py's own FAIL line is the expected outcome here: keep it
		# from being counted by relabelling it.
		run_bed "self-test outcome" "$name" "$log" "${args[@]}"
		expected_failure "$name" "$tag" "$log" "$expect" || failed=1
	else
		# bed.py's verdict lines are relabelled: the counted verdict is
		# the one printed below, after a possible second run.
		run_bed "bed.py said" "$name" "$log" "${args[@]}"
		rc=$?
		# Up to three more runs, never more, after a fault of the
		# environment in a guest without farswap.ko; the logs of each
		# such run are kept (NAME.retried-1 to -3).
		logdir=$build/vm-logs/${tag#vm/}
		for retry in 1 2 3; do
			[ "$rc" -ne 0 ] && why=$(environment_fault "$logdir") || break
			rm -rf "$logdir.retried-$retry"
			mv "$logdir" "$logdir.retried-$retry"
			echo "RETRY: $tag: $why (a fault of the QEMU TCG environment); logs in $logdir.retried-$retry"
			run_bed "bed.py said" "$name" "$log" "${args[@]}"
			rc=$?
		done
		last=$(grep -E '^(PASS|FAIL): ' "$log" | tail -n1)
		if [ -z "$last" ]; then
			echo "FAIL: $tag: bed.py exited $rc without a verdict"
			failed=1
		elif [ "$rc" -ne 0 ] || [ "${last#PASS: }" = "$last" ]; then
			case $last in
			"FAIL: "*) echo "$last" ;;
			*) echo "FAIL: $tag: bed.py exited $rc after '$last'" ;;
			esac
			failed=1
		else
			echo "$last"
		fi
	fi
	rm -f "$log"
done <"$here/suite.list"

exit $failed
