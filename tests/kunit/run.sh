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
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/kunit
kdir=${FARSWAP_KUNIT_DIR:-$top/build/kunit}
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
	echo "FAIL: kunit/$1: $2"
	exit 1
}

mkdir -p "$kdir" || fail build "cannot create $kdir"

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

start=$(date +%s)
if ! tree=$("$here/graft.sh" "$kdir" 2>"$kdir/graft.log") || [ -z "$tree" ]; then
	fail build "kernel tree not ready: $(tail -n1 "$kdir/graft.log")"
fi

echo "kunit: building and running in $build (log: $log); a cold build takes a few minutes"
run_kunit() {
	# A stale log from an earlier run must never pass for this run's.
	rm -f "$build/test.log"
	(cd "$tree" && python3 tools/testing/kunit/kunit.py run \
		--kunitconfig="$here" --build_dir="$build" --timeout=300 \
		"${extra[@]}" "$glob") >"$log" 2>&1
}

run_kunit
rc=$?
# A kbuild clean of the checkout (make clean) deletes the objects under
# build/ and, racing a build, leaves ar or ld without an input: once more.
if [ ! -s "$build/test.log" ] &&
   grep -qE '^ERROR:root:(ar|ld): .*No such file or directory' "$log"; then
	echo "kunit: objects vanished during the build (a make clean?); building again"
	run_kunit
	rc=$?
fi
echo "kunit: kunit.py exited $rc after $(($(date +%s) - start)) s"

if [ ! -s "$build/test.log" ]; then
	# Nothing ran: configuration or build failed.  Say where it broke.
	why=$(grep -m1 -E 'error:|Error [0-9]|ERROR:|Missing:' "$log")
	fail build "no kernel ran (kunit.py exited $rc): ${why:-see $log}"
fi

python3 "$here/report.py" --tree "$tree" --log "$build/test.log" \
	--suites "$suites"
report_rc=$?
# kunit.py itself failing (timeout, parse error) is a failure even if
# every test that did report passed.
if [ "$report_rc" -eq 0 ] && [ "$rc" -ne 0 ]; then
	fail run "kunit.py exited $rc although every test passed: see $log"
fi
exit "$report_rc"
