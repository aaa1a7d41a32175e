# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# TAP for the shell tests of this directory (source it): ok NAME,
# not_ok NAME WHY, and tap_end last, which prints the plan and returns
# non-zero if any case failed.  tests/unit/run.sh turns the lines into
# PASS/FAIL as it does the cmocka suites'.

tap_n=0
tap_bad=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_bad=$((tap_bad + 1))
	echo "not ok $tap_n - $1"
	# One comment line, however long WHY is.
	echo "# $(tr '\n' ' ' <<<"$2" | head -c 2000)"
}

tap_end() {
	echo "1..$tap_n"
	[ "$tap_bad" -eq 0 ]
}
