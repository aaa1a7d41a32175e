#!/bin/bash
# Build and run the farswapd unit tests (cmocka), twice: plain, and under
# AddressSanitizer + UndefinedBehaviorSanitizer; then the Python tools'
# tests (test_*.py: tests/bench/tracebreak) and farswapctl's bash completion
# (test_completion.sh), its gen-key and add-key (test_genkey.sh) and
# farswap-swap's swap.conf (test_swap_conf.sh).
# Prints one line per case:
#   PASS: unit/<suite>.<case>        FAIL: unit/<suite>.<case>: why
# (unit-asan/... for the sanitizer build) and exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/unit
mkdir -p "$out"

CC=${CC:-cc}
CFLAGS="-g -O1 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$top/include -I$top/daemon -I$top/tools -I$top/common -I$here"
D=$top/daemon
T=$top/tools
C=$top/common
core="$D/log.c $D/access.c $D/config.c $D/parse.c $D/cmdline.c $D/pool.c $D/pressure.c $D/keepalive.c $D/auth.c $D/donor.c $D/dispatch.c $D/handshake.c $D/reclaim.c $D/drain.c $D/keep.c $D/resume.c $D/report.c $C/json.c $C/metrics.c $C/keyfile.c"

declare -A srcs=(
	[proto]="test_proto.c"
	[config]="test_config.c $D/access.c $D/config.c $D/parse.c $D/cmdline.c $D/log.c"
	[access]="test_access.c $D/access.c"
	[pool]="test_pool.c $D/pool.c $D/keep.c"
	[keep]="test_keep.c $D/keep.c"
	[pressure]="test_pressure.c $D/pressure.c"
	[keepalive]="test_keepalive.c $D/keepalive.c"
	[donor]="test_donor.c fake_ops.c $core"
	[auth]="test_auth.c fake_ops.c $core"
	[resume]="test_resume.c fake_ops.c $core"
	[restart]="test_restart.c $D/restart.c $D/log.c -lsystemd"
	[slabmem]="test_slabmem.c $D/slabmem.c"
	[poolfd]="test_poolfd.c $core $D/slabmem.c $D/poolfd.c"
	[stats]="test_stats.c $D/statsock.c $D/log.c"
	[json]="test_json.c json_check.c $C/json.c"
	[metrics]="test_metrics.c prom_check.c $C/metrics.c"
	[report]="test_report.c fake_ops.c json_check.c prom_check.c $core $D/statsock.c"
	[devstat]="test_devstat.c fake_sysfs.c json_check.c prom_check.c $T/devstat.c $T/render.c $C/json.c $C/metrics.c"
	[farswapctl]="test_farswapctl.c fake_sysfs.c json_check.c prom_check.c $T/devstat.c $T/render.c $C/json.c $C/metrics.c $C/keyfile.c -lresolv"
	[worker]="test_worker.c $D/worker.c -pthread"
	[keyfile]="test_keyfile.c $C/keyfile.c"
)

failed=0

# Run one binary and turn its TAP into PASS/FAIL lines.
run_tap() {
	local prefix=$1 suite=$2 bin=$3 log=$4 rc line name why
	(cd "$here" && CMOCKA_MESSAGE_OUTPUT=TAP \
		ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$bin") >"$log" 2>&1
	rc=$?
	local seen=0 bad=0
	while IFS= read -r line; do
		case $line in
		"ok "*)
			name=${line#ok * - }
			echo "PASS: $prefix/$suite.${name#test_}"
			seen=$((seen + 1))
			;;
		"not ok "*)
			name=${line#not ok * - }
			why=$(grep -B2 -A3 -F "$line" "$log" | grep -E '^# ' | grep -vE '^# (not )?ok' | sed 's/^# //' | head -n2 | paste -sd ';' -)
			echo "FAIL: $prefix/$suite.${name#test_}: ${why:-failed}"
			seen=$((seen + 1))
			bad=$((bad + 1))
			;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ - ' "$log")
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		why=$(grep -m1 -E 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$log")
		echo "FAIL: $prefix/$suite: exited $rc after $seen cases${why:+: $why} (log: $log)"
		bad=1
	fi
	[ "$bad" -eq 0 ]
}

for variant in plain asan; do
	if [ $variant = asan ]; then
		extra="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
		prefix=unit-asan
	else
		extra=""
		prefix=unit
	fi
	for suite in proto keyfile access config pool keep pressure keepalive donor auth resume restart slabmem poolfd stats worker json metrics devstat farswapctl report; do
		bin=$out/test_${suite}_$variant
		# shellcheck disable=SC2086
		if ! (cd "$here" && $CC $CFLAGS $extra -o "$bin" ${srcs[$suite]} -lcmocka -lcrypto -lz) \
			>"$out/build_${suite}_$variant.log" 2>&1; then
			echo "FAIL: $prefix/$suite: does not build: $(head -n1 "$out/build_${suite}_$variant.log")"
			failed=1
			continue
		fi
		run_tap "$prefix" "$suite" "$bin" "$out/test_${suite}_$variant.log" || failed=1
	done
done

# The Python tools (stdlib only): once, there is nothing to sanitize.  Each
# test prints TAP as the cmocka suites do.
for suite in tracebreak; do
	run_tap unit "$suite" "$here/test_$suite.py" "$out/test_${suite}_python.log" || failed=1
done

# farswap-swap and its swap.conf, with recorders for what it runs.
run_tap unit swap_conf "$here/test_swap_conf.sh" "$out/test_swap_conf.log" || failed=1

# farswapctl's bash completion, checked against the farswapctl built here.
export FARSWAPCTL=$out/farswapctl
# shellcheck disable=SC2086
if $CC $CFLAGS -DFARSWAP_VERSION='"unit"' -o "$FARSWAPCTL" $T/farswapctl.c \
	$T/devstat.c $T/render.c $C/json.c $C/metrics.c $C/keyfile.c -lresolv -lcrypto -lz >"$out/build_farswapctl.log" 2>&1; then
	run_tap unit completion "$here/test_completion.sh" "$out/test_completion.log" || failed=1
	run_tap unit genkey "$here/test_genkey.sh" "$out/test_genkey.log" || failed=1
else
	echo "FAIL: unit/completion: farswapctl does not build: $(head -n1 "$out/build_farswapctl.log")"
	failed=1
fi

exit $failed
