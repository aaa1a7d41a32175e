#!/bin/bash
# Build the fuzz_donor libFuzzer target (clang, ASan + UBSan), fuzz it for
# a bounded time from the committed seeds and corpus, then replay every
# committed input.  Prints PASS/FAIL lines; exits non-zero on a failure.
#
#   FUZZ_SECONDS=50  fuzzing time (default 50 s; the whole run is ~60 s)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/fuzz
secs=${FUZZ_SECONDS:-50}
mkdir -p "$out/work" "$out/crashes"

D=$top/daemon
U=$top/tests/unit
bin=$out/fuzz_donor
if ! clang -g -O1 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$top/include" -I"$D" -I"$U" -o "$bin" "$here/fuzz_donor.c" \
	"$U/fake_ops.c" "$D/log.c" "$D/config.c" "$D/pool.c" "$D/pressure.c" \
	"$D/keepalive.c" "$D/donor.c" >"$out/build.log" 2>&1; then
	echo "FAIL: fuzz/build: $(grep -m1 error "$out/build.log")"
	exit 1
fi
echo "PASS: fuzz/build"

failed=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1

# Fuzz: new inputs go to a scratch corpus, never into the tree.
log=$out/fuzz.log
"$bin" -max_total_time="$secs" -print_final_stats=1 -max_len=2048 \
	-timeout=10 -artifact_prefix="$out/crashes/" \
	"$out/work" "$here/seeds" "$here/corpus" >"$log" 2>&1
rc=$?
execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
cov=$(grep -E '^#[0-9]+.*cov:' "$log" | tail -n1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
if [ "$rc" -eq 0 ]; then
	echo "PASS: fuzz/donor ($secs s, ${execs:-?} execs, ${rate:-?} execs/s, cov ${cov:-?})"
else
	echo "FAIL: fuzz/donor: libFuzzer exited $rc: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$log") (artifacts in $out/crashes, log $log)"
	failed=1
fi

# Replay every committed input (seeds, corpus, crash reproducers).
for dir in seeds corpus crashes; do
	[ -d "$here/$dir" ] || continue
	files=("$here/$dir"/*)
	[ -e "${files[0]}" ] || continue
	if "$bin" -runs=1 "${files[@]}" >"$out/replay-$dir.log" 2>&1; then
		echo "PASS: fuzz/replay-$dir (${#files[@]} inputs)"
	else
		echo "FAIL: fuzz/replay-$dir: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$out/replay-$dir.log")"
		failed=1
	fi
done
exit $failed
