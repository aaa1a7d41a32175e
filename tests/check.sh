#!/bin/bash
# Run every farswap test suite and print one closing line:
#   N passed, N failed
#
# A suite is an executable tests/<area>/run.sh.  It prints one line per
# test case, "PASS: <name>" or "FAIL: <name>[: why]", and exits non-zero
# if anything failed.  A suite that exits non-zero without printing a FAIL
# line counts as one failure of its own, so a crash is never a pass.
#
# FARSWAP_SUITES="unit fuzz" runs only the named suites.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# Order: fast, local suites first; guests last.
all_suites="build unit sim fuzz kunit dkms vm"
suites=${FARSWAP_SUITES:-$all_suites}

# Logs live outside build/, which 'make clean' removes: a suite's log must
# survive the suite.  FARSWAP_TEST_LOGS puts them elsewhere ('make
# check-debug' keeps its own, so make check's vm.log survives it).
logdir=${FARSWAP_TEST_LOGS:-$top/test-logs}
mkdir -p "$logdir"

passed=0
failed=0
failed_names=()

for s in $suites; do
	runner=tests/$s/run.sh
	if [ ! -x "$runner" ]; then
		echo "FAIL: suite $s: $runner missing"
		failed=$((failed + 1))
		failed_names+=("suite $s")
		continue
	fi
	echo "=== suite $s ==="
	log=$logdir/$s.log
	start=$(date +%s)
	"$runner" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if [ ! -f "$log" ]; then
		echo "FAIL: suite $s: its log $log vanished"
		failed=$((failed + 1))
		failed_names+=("suite $s (log vanished)")
		continue
	fi
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: suite $s exited $rc without naming a failure"
		f=1
		failed_names+=("suite $s (exit $rc)")
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		# A suite that tested nothing has not passed.
		echo "FAIL: suite $s reported no test at all"
		f=1
		failed_names+=("suite $s (no results)")
	fi
	while IFS= read -r line; do
		failed_names+=("$s: ${line#FAIL: }")
	done < <(grep '^FAIL: ' "$log")
	echo "=== suite $s: $p passed, $f failed in $(($(date +%s) - start)) s ==="
	passed=$((passed + p))
	failed=$((failed + f))
done

if [ "$failed" -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failed_names[@]}"
	echo "logs: $logdir (guest console logs: build/vm-logs)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
