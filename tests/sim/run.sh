#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet simulation (fleetsim.c): farswap.ko's placement code built for
# userspace, over small fleets with several seeds (every invariant a
# line), under AddressSanitizer and UBSan too, its refusals of bad input,
# and last the table at the scale README.md quotes (1,000 hosts, 1,000
# donors, 50 failure domains).
# Prints PASS: sim/<case> or FAIL: sim/<case>: why; exits non-zero on a failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/sim
mkdir -p "$out"

CC=${CC:-cc}
CFLAGS="-g -O2 -std=gnu11 -Wall -Wextra -Werror -I$here -I$top/kmod -I$top/include"
srcs="$here/fleetsim.c $top/kmod/pick.c $top/kmod/slots.c"
schemes="replicas:2 replicas:3 ec:4+2 ec:8+2"
small="--hosts 60 --donors 60 --domains 12 --chunks 256 --slab-mb 64 --donor-gb 4"
failed=0

pass() { echo "PASS: sim/$1"; }
fail() { echo "FAIL: sim/$1: $2"; failed=1; }

# fleetsim --check's TAP as PASS/FAIL lines named $1.
tap() {
	local name=$1 log=$2 line
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$name ${line#ok * - }" ;;
		"not ok "*) fail "$name ${line#not ok * - }" "(log: $log)" ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ - ' "$log")
}

for variant in plain asan; do
	bin=$out/fleetsim_$variant
	extra=
	[ $variant = plain ] || extra="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS $extra -o "$bin" $srcs >"$out/build_$variant.log" 2>&1; then
		fail "$variant.build" "$(head -n1 "$out/build_$variant.log")"
		continue
	fi
	pass "$variant.build"
	for seed in 1 2 3; do
		log=$out/${variant}_seed$seed.log
		# shellcheck disable=SC2086
		"$bin" $small --seed $seed --check $schemes >"$log" 2>&1
		rc=$?
		tap "$variant.seed$seed" "$log"
		[ $rc -eq 0 ] || [ "$(grep -c '^not ok' "$log")" -gt 0 ] ||
			fail "$variant.seed$seed" "exited $rc with no failed check (log: $log)"
	done
done
bin=$out/fleetsim_plain
[ -x "$bin" ] || exit 1

# A fleet too small for three copies: the check fails, and says why.
log=$out/full.log
# shellcheck disable=SC2086
"$bin" $small --donor-gb 1 --check replicas:3 >"$log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^not ok .*every chunk placed' "$log" &&
	grep -q 'the fleet has no room' "$log"; then
	pass "full_fleet_fails"
else
	fail "full_fleet_fails" "exit $rc: $(tail -n2 "$log" | paste -sd' ')"
fi

# Fewer domains than members: colocation is counted and allowed, never a
# lost page after a single donor's loss.
log=$out/few_domains.log
# shellcheck disable=SC2086
"$bin" --hosts 40 --donors 40 --domains 4 --chunks 128 --slab-mb 64 --donor-gb 4 --check ec:4+2 >"$log" 2>&1
rc=$?
col=$(awk '$1 == "ec:4+2" { print $5 }' "$log")
if [ $rc -eq 0 ] && [ "${col:-0}" -gt 0 ] && grep -q '^ok .*one donor lost: 0 pages lost' "$log"; then
	pass "few_domains_colocate ($col chunks colocated)"
else
	fail "few_domains_colocate" "exit $rc, colocated '${col:-}' (log: $log)"
fi

# Bad input is refused with a reason (exit 2), never simulated.
bad() {
	local name=$1 want=$2 rc
	shift 2
	"$bin" "$@" >"$out/bad_$name.log" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$out/bad_$name.log"; then
		pass "refuses_$name"
	else
		fail "refuses_$name" "exit $rc: $(head -n1 "$out/bad_$name.log")"
	fi
}
bad ec_3 'is not replicas:R or ec:K+M' ec:3+2
bad ec_too_wide 'is not replicas:R or ec:K+M' ec:8+9
bad replicas_0 'is not replicas:R or ec:K+M' replicas:0
bad view_short 'needs 10 donors per host' --view 8 ec:8+2
bad view_17 'is not a number from 1 to 16' --view 17 replicas:2
bad domains 'must be a multiple of --domains' --donors 10 --domains 3 replicas:2
bad slab 'power of two' --slab-mb 3 replicas:2
bad no_scheme 'usage' --hosts 3

# The table README.md quotes: 1,000 hosts of 4 GiB, 1,000 donors of
# 32 GiB in 50 domains, 1 GiB slabs (the defaults).
log=$out/scale.log
start=$(date +%s)
if "$bin" $schemes >"$log" 2>&1; then
	sed 's/^/sim: /' "$log"
	pass "scale ($(($(date +%s) - start)) s)"
else
	fail "scale" "$(tail -n1 "$log")"
fi
exit $failed
