#!/bin/bash
# Build the libFuzzer targets (clang, ASan + UBSan), fuzz each for a
# bounded time from its committed seeds and corpus, then replay every
# committed input.  Prints PASS/FAIL lines; exits non-zero on a failure.
#
#   fuzz_donor   the donor's message parser and dispatcher, and the
#                connect-request path (decision, limits, refusals)
#   fuzz_access  the allowed-hosts parser and matcher
#   fuzz_ctl     the stats socket's commands (farswapd --drain) and replies
#   fuzz_keyfile the key file parser (common/keyfile.c)
#
#   FUZZ_SECONDS=50  fuzzing time in all (default 50 s: 3/4 for fuzz_donor,
#                    1/6 for fuzz_access, the rest for fuzz_ctl and
#                    fuzz_keyfile; the whole run is ~60 s)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/fuzz
secs=${FUZZ_SECONDS:-50}
mkdir -p "$out/crashes"

D=$top/daemon
C=$top/common
U=$top/tests/unit
CFLAGS="-g -O1 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$top/include -I$D -I$C -I$U"

declare -A srcs=(
	[donor]="$here/fuzz_donor.c $U/fake_ops.c $D/log.c $D/access.c $D/config.c $D/parse.c $D/pool.c $D/pressure.c $D/keepalive.c $D/auth.c $D/donor.c $D/dispatch.c $D/handshake.c $D/reclaim.c $D/drain.c $D/keep.c $D/resume.c $C/keyfile.c -lcrypto -lz"
	[access]="$here/fuzz_access.c $D/access.c"
	[ctl]="$here/fuzz_ctl.c $D/statsock.c $D/log.c"
	[keyfile]="$here/fuzz_keyfile.c $C/keyfile.c -lcrypto -lz"
)
# Committed inputs of each target (replayed), and its share of the time.
declare -A inputs=([donor]="seeds corpus crashes" [access]="seeds-access" [ctl]="seeds-ctl"
	[keyfile]="seeds-keyfile")
rest=$((secs - secs * 3 / 4 - secs / 6))
declare -A share=([donor]=$((secs * 3 / 4)) [access]=$((secs / 6))
	[ctl]=$(((rest + 1) / 2)) [keyfile]=$((rest / 2 > 0 ? rest / 2 : 1)))

failed=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1

for target in donor access ctl keyfile; do
	bin=$out/fuzz_$target
	# shellcheck disable=SC2086
	if ! clang $CFLAGS -o "$bin" ${srcs[$target]} >"$out/build-$target.log" 2>&1; then
		echo "FAIL: fuzz/build-$target: $(grep -m1 error "$out/build-$target.log")"
		failed=1
		continue
	fi
	echo "PASS: fuzz/build-$target"

	# Fuzz: new inputs go to a scratch corpus, never into the tree.
	mkdir -p "$out/work-$target"
	dirs=()
	for dir in ${inputs[$target]}; do
		[ -d "$here/$dir" ] && dirs+=("$here/$dir")
	done
	log=$out/fuzz-$target.log
	"$bin" -max_total_time="${share[$target]}" -print_final_stats=1 \
		-max_len=2048 -timeout=10 -artifact_prefix="$out/crashes/$target-" \
		"$out/work-$target" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
	rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
	cov=$(grep -E '^#[0-9]+.*cov:' "$log" | tail -n1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
	if [ "$rc" -eq 0 ]; then
		echo "PASS: fuzz/$target (${share[$target]} s, ${execs:-?} execs, ${rate:-?} execs/s, cov ${cov:-?})"
	else
		echo "FAIL: fuzz/$target: libFuzzer exited $rc: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$log") (artifacts in $out/crashes, log $log)"
		failed=1
	fi

	# Replay every committed input (seeds, corpus, crash reproducers).
	for dir in ${inputs[$target]}; do
		[ -d "$here/$dir" ] || continue
		files=("$here/$dir"/*)
		[ -e "${files[0]}" ] || continue
		if "$bin" -runs=1 "${files[@]}" >"$out/replay-$target-$dir.log" 2>&1; then
			echo "PASS: fuzz/replay-$dir (${#files[@]} inputs)"
		else
			echo "FAIL: fuzz/replay-$dir: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$out/replay-$target-$dir.log")"
			failed=1
		fi
	done
done
exit $failed
