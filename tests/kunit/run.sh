#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kunit suite of make check: farswap's RDMA-free logic (kmod/chunkmap.c,
# pick.c, donor_state.c, latency.c, args.c and the rest of kmod/README.md's
# RDMA-free files, and the checks in farswap_proto.h)
# built into a UML kernel with its KUnit suites, run by kunit.py.
#
#   tests/kunit/run.sh [GLOB]   e.g. farswap_donor_state, 'farswap_d*',
#                               'farswap_args.parse_size*' (kunit.py's glob)
#
# Prints "PASS: kunit/<suite>/<case>[/<parameter>]" or "FAIL: ...: why"
# per test and exits non-zero on any failure.  A tree or build failure is a
# FAIL line too, never a silent pass.
#
# Everything lives under build/kunit (FARSWAP_KUNIT_DIR): the extracted
# linux-source-6.12 tree, uml/ (kunit.py's build dir, kept warm between
# runs) and kunit.log (kunit.py's own output).  FARSWAP_KUNIT_SANITIZE=1
# builds with KASAN and UBSAN instead, in uml-sanitize/.
#
# FARSWAP_KUNIT_SERIES picks the kernel (default 6.12, Debian 12's
# linux-source-6.12, all of the above unchanged).  Any other series,
# e.g. 7.3, is the linux-source of the trixie chroot
# (scripts/trixie-chroot.sh, which installs 7.3's), whose kbuild Debian
# 12 cannot run: the tree is extracted into build/kunit-7.3
# (FARSWAP_KUNIT_DIR-7.3), kunit.py and report.py run inside the chroot,
# and the lines say "PASS: kunit@7.3/<suite>/<case>".  A list
# ("6.12 7.3", make check-full) runs each in turn.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/kunit
series=${FARSWAP_KUNIT_SERIES:-6.12}

# A list of series: one run each, one after the other (two UML builds
# at once would starve the machine's two cores), failing if any fails.
if [ "$(wc -w <<<"$series")" -gt 1 ]; then
	rc=0
	for s in $series; do
		FARSWAP_KUNIT_SERIES=$s "$0" "$@" || rc=1
	done
	exit "$rc"
fi

kdir=${FARSWAP_KUNIT_DIR:-$top/build/kunit}
name=kunit
chroot=
if [ "$series" != 6.12 ]; then
	# A directory of its own: graft.sh keeps one tree per directory.
	kdir=$kdir-$series
	name=kunit@$series
	chroot=1
fi
build=$kdir/uml
log=$kdir/kunit.log
glob=${1:-farswap_*}
extra=()

# FARSWAP_KUNIT_SANITIZE=1: KASAN and UBSAN over the whole UML kernel.
# About 40% more build CPU, so not the default; a build dir of its own
# keeps the plain one warm.  UBSAN's alignment check is left out: UML's
# own task_struct trips it (kernel/exit.c) whatever the test.
if [ "${FARSWAP_KUNIT_SANITIZE:-0}" = 1 ]; then
	build=$kdir/uml-sanitize
	log=$kdir/kunit-sanitize.log
	extra=(--kconfig_add CONFIG_DEBUG_KERNEL=y --kconfig_add CONFIG_KASAN=y
	       --kconfig_add CONFIG_UBSAN=y
	       --kconfig_add '# CONFIG_UBSAN_ALIGNMENT is not set')
fi

fail() {
	echo "FAIL: $name/$1: $2"
	exit 1
}

# with_kbuild CMD...: CMD where the tree's kbuild can run: here for
# 6.12.  For the chroot's series, inside the trixie chroot with the
# checkout and the KUnit directory bound at their own paths:
# drivers/farswap is a symlink to the checkout's path, the paths given
# to kunit.py are host paths, and what it writes (the build, test.log)
# lands where the host reads it.
with_kbuild() {
	if [ -z "$chroot" ]; then
		"$@"
	else
		"$top/scripts/trixie-chroot.sh" run --bind "$top" --bind "$kdir" -- "$@"
	fi
}

mkdir -p "$kdir" || fail build "cannot create $kdir"
# The chroot's bind mounts need the directory's absolute path.
[ -z "$chroot" ] || kdir=$(cd "$kdir" && pwd)

# One run at a time per build dir: two kunit.py builds in one O= dir
# would corrupt each other.
exec 9>"$kdir/.lock"
if ! flock -w 3600 9; then
	fail build "$kdir is locked by another run for over an hour"
fi

# The suites that must report: every suite defined here that matches,
# on one line.
suites=$(sed -n 's/^[[:space:]]*\.name[[:space:]]*=[[:space:]]*"\(farswap_[a-z0-9_]*\)".*/\1/p' \
	 "$here"/*_test.c | while read -r s; do
		# shellcheck disable=SC2254 # the glob is the point
		case $s in ${glob%%.*}) printf '%s ' "$s" ;; esac
	 done)
[ -n "$suites" ] || fail build "no suite in tests/kunit matches '$glob'"

# The chroot's source tarball, for graft.sh to extract (on the host:
# it only reads the chroot's file).
if [ -n "$chroot" ]; then
	"$top/scripts/trixie-chroot.sh" --check ||
		fail build "no trixie chroot ($("$top/scripts/trixie-chroot.sh" --root)) for Linux $series: run 'make setup'"
	tarball=$("$top/scripts/trixie-chroot.sh" --source "$series" 2>&1) ||
		fail build "$tarball"
	export FARSWAP_KUNIT_TARBALL=$tarball
fi

start=$(date +%s)
if ! tree=$("$here/graft.sh" "$kdir" 2>"$kdir/graft.log") || [ -z "$tree" ]; then
	fail build "kernel tree not ready: $(tail -n1 "$kdir/graft.log")"
fi

if [ -n "$chroot" ]; then
	echo "$name: building and running in $build inside the trixie chroot (log: $log); a cold build takes a few minutes"
else
	echo "kunit: building and running in $build (log: $log); a cold build takes a few minutes"
fi
run_kunit() {
	# A stale log from an earlier run must never pass for this run's.
	rm -f "$build/test.log"
	# shellcheck disable=SC2016 # expanded by the inner sh
	with_kbuild /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$tree" \
		python3 tools/testing/kunit/kunit.py run \
		--kunitconfig="$here" --build_dir="$build" --timeout=300 \
		"${extra[@]}" "$glob" >"$log" 2>&1
}

run_kunit
rc=$?
# A kbuild clean of the checkout (make clean) deletes the objects under
# build/ and, racing a build, leaves ar or ld without an input: once more.
if [ ! -s "$build/test.log" ] &&
   grep -qE '^ERROR:root:(ar|ld): .*No such file or directory' "$log"; then
	echo "$name: objects vanished during the build (a make clean?); building again"
	run_kunit
	rc=$?
fi
echo "$name: kunit.py exited $rc after $(($(date +%s) - start)) s"

if [ ! -s "$build/test.log" ]; then
	# Nothing ran: configuration or build failed.  Say where it broke.
	why=$(grep -m1 -E 'error:|Error [0-9]|ERROR:|Missing:' "$log")
	fail build "no kernel ran (kunit.py exited $rc): ${why:-see $log}"
fi

# The tree's own KTAP parser, under the python that ran its kunit.py.
report=$(with_kbuild python3 "$here/report.py" --tree "$tree" \
	--log "$build/test.log" --suites "$suites" --prefix "$name")
report_rc=$?
[ -z "$report" ] || printf '%s\n' "$report"
# report.py failing without a FAIL line (a traceback: kunit.py's parser
# changed under it) must still say where it broke.
if [ "$report_rc" -ne 0 ] && ! grep -q '^FAIL: ' <<<"$report"; then
	fail report "report.py exited $report_rc without naming a failure (its error above)"
fi
# kunit.py itself failing (timeout, parse error) is a failure even if
# every test that did report passed.
if [ "$report_rc" -eq 0 ] && [ "$rc" -ne 0 ]; then
	fail run "kunit.py exited $rc although every test passed: see $log"
fi
exit "$report_rc"
