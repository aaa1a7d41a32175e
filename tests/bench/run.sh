#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: farswap (default and --sync-io), NVMe-oF over RDMA, NBD over
# TCP and zram, side by side on the same two test-bed guests and link
# (tests/vm/scenarios/bench), then the report: results/<date>-<kernel>/
# (results.md, CSV/JSON, PNG plots) and results/LATEST.md.
#
#   tests/bench/run.sh                 the full run (3 rounds, ~1 h under TCG)
#   BENCH_QUICK=1 tests/bench/run.sh   one small round, for development;
#                                      report under results/tmp/ (ignored by git)
#
# Other knobs (environment): BENCH_ROUNDS, BENCH_SYSTEMS (default "farswap
# farswap-sync nvmf nbd zram"; any list of those and of farswap's options
# farswap-nostage, farswap-crc32c, farswap-nocheck, farswap-dmcrypt, farswap-r2: see
# tests/bench/README.md), BENCH_KERNEL (6.12 or 6.1),
# BENCH_FIO_SECONDS, BENCH_FIO_MB, BENCH_FIO_QD, BENCH_SWAP_MB,
# BENCH_SWAP_LIMIT, BENCH_SWAP_PROCS, BENCH_DEV_MB, BENCH_SEED,
# BENCH_TIMEOUT (seconds per round), BENCH_RESULTS (output directory),
# BENCH_RETRIES (rounds run again after a guest kernel crash, default 1),
# BENCH_PROFILE=1 (perf on both guests around every measured run: for
# diagnosis, the sampling perturbs the figures), BENCH_TRACE=1 (farswap's
# trace events during its swap runs, broken down by tests/bench/tracebreak
# into traces.md: for diagnosis too), BENCH_SOURCE=worktree
# (build the working tree, not the committed HEAD), BENCH_BASE=REF (a git
# ref: the system farswap-base runs farswap.ko built from REF, beside
# today's, so that a change to the module is measured against its parent
# in the same run).
#
# Everything happens in main(), called on the last line: bash reads a
# script as it runs it, and this one runs for an hour in a checkout that
# others edit.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
scenario_src=$top/tests/vm/scenarios/bench
# The bench's own build directory: its module, binaries, initramfs and
# guest logs, out of the way of other runs that rebuild build/<kver>/ in
# the shared checkout while this one runs.
bench=${FARSWAP_BUILD_DIR:-$top/build}/bench
bench_build=$bench/bed
bench_bin=$bench/bin
gen=$bench/scenario/bench
data=$bench/data
attempt_logs=$bench/attempts
loadlog=$bench/loadavg.log
runlog=$bench/bed.log

# The scenario as committed holds the full run's values; a run's go in a
# generated copy whose scenario.conf ends with the overrides (bed.py: a
# later KEY= wins).  Scripts are copied, not linked: editing the checkout
# must not reach a running bench.
make_scenario() {
	local kv

	rm -rf "$gen"
	mkdir -p "$gen"
	cp "$scenario_src"/*.sh "$scenario_src/scenario.conf" "$gen/"
	for kv in "$@"; do
		printf '%s=%q\n' "${kv%%=*}" "${kv#*=}" >>"$gen/scenario.conf"
	done
}

conf() {
	(
		set +u
		# shellcheck source=/dev/null
		. "$gen/scenario.conf"
		eval "printf '%s' \"\${$1}\""
	)
}

# Build once, keep copies: every round runs the same module and programs
# even if someone rebuilds the checkout's meanwhile.  The sources are the
# committed ones (git archive HEAD): the checkout is shared, and what is
# half-edited in it is not what to measure.  BENCH_SOURCE=worktree builds
# the working tree instead (development).
build_all() {
	local series=$1 src=$bench/src ko

	rm -rf "$src"
	mkdir -p "$src"
	if [ "${BENCH_SOURCE:-head}" = worktree ]; then
		src=$top
	else
		git archive HEAD | tar -x -C "$src"
	fi
	ko=$(FARSWAP_BUILD_DIR=$bench_build "$src/scripts/build-module.sh" "$series" 2>&1 |
		tee "$bench/module-build.log" | tail -n 1)
	[ -f "$ko" ] || {
		echo "bench: building farswap.ko failed: see $bench/module-build.log" >&2
		return 1
	}
	{ make -s -C "$src/daemon" && make -s -C "$src/tools" &&
		make -s -C "$src/tests/workload" &&
		make -s -C "$src/tests/tools" rdmalat; } \
		>"$bench/daemon-build.log" 2>&1 || {
		echo "bench: building the daemon, farswapctl, pageverify or rdmalat failed: see $bench/daemon-build.log" >&2
		return 1
	}
	rm -rf "$bench_bin"
	mkdir -p "$bench_bin"
	cp "$src/daemon/farswapd" "$src/tools/farswapctl" "$src/tests/workload/pageverify" \
		"$src/tests/tools/rdmalat" "$src/tests/bench/tracebreak" "$bench_bin/"
	# Not named *.ko: a kbuild clean over the checkout (make -C KDIR
	# M=<checkout> clean) deletes every *.ko below it, build/ included,
	# and one did so in the middle of a bench.
	cp "$ko" "$bench_bin/farswap-bench.ko"
	[ -z "${BENCH_BASE:-}" ] || build_base "$series" || return 1
	"$bench_bin/farswapd" --version >/dev/null
	{
		echo "git $(git rev-parse HEAD)"
		echo "source ${BENCH_SOURCE:-head}"
		[ "${BENCH_SOURCE:-head}" != worktree ] ||
			git status --porcelain -- kmod daemon tools common include tests/workload tests/tools | sed 's/^/local-change /'
		sha256sum "$bench_bin"/* | awk '{ n = $2; sub(/.*\//, "", n); print "sha256 " n " " $1 }'
		modinfo -F srcversion "$ko" | sed 's/^/srcversion /'
		[ -z "${BENCH_BASE:-}" ] || echo "base $(git rev-parse "$BENCH_BASE^{commit}")"
	} >"$data/binaries.txt"
}

# farswap-base's module: farswap.ko of commit BENCH_BASE, built as the
# bench's own (its own build directory), run with today's userspace.
build_base() {
	local series=$1 src=$bench/src-base ko

	rm -rf "$src"
	mkdir -p "$src"
	git archive "$BENCH_BASE" | tar -x -C "$src" || {
		echo "bench: BENCH_BASE=$BENCH_BASE is not a commit of this repository" >&2
		return 1
	}
	ko=$(FARSWAP_BUILD_DIR=$bench/bed-base "$src/scripts/build-module.sh" "$series" 2>&1 |
		tee "$bench/module-build-base.log" | tail -n 1)
	[ -f "$ko" ] || {
		echo "bench: building farswap.ko of $BENCH_BASE failed: see $bench/module-build-base.log" >&2
		return 1
	}
	cp "$ko" "$bench_bin/farswap-base.ko"
}

main() {
	local mode=full overrides=() k rounds nsys retries per started t0 rc=0
	local round attempt tag brc verdict crashed running logs elapsed kver day out
	local command series=${BENCH_KERNEL:-6.12} sampler f shared d line
	local report_args=()

	cd "$top"
	if [ "${BENCH_QUICK:-0}" = 1 ]; then
		mode=quick
		: "${BENCH_ROUNDS:=1}" "${BENCH_DEV_MB:=256}" "${BENCH_FIO_MB:=64}"
		: "${BENCH_FIO_SECONDS:=4}" "${BENCH_SWAP_MB:=96}" "${BENCH_SWAP_LIMIT:=48M}"
		: "${BENCH_SORT_LINES:=1500000}" "${BENCH_SORT_LIMIT:=32M}"
	fi
	for k in BENCH_ROUNDS BENCH_SYSTEMS BENCH_DEV_MB BENCH_FIO_MB BENCH_FIO_SECONDS \
		BENCH_FIO_QD BENCH_SWAP_MB BENCH_SWAP_LIMIT BENCH_SWAP_PROCS BENCH_SEED \
		BENCH_SLAB BENCH_PROFILE BENCH_TRACE BENCH_RAW_ITERS BENCH_SORT_LINES \
		BENCH_SORT_LIMIT; do
		[ -z "${!k:-}" ] || overrides+=("$k=${!k}")
	done
	mkdir -p "$bench"
	make_scenario "${overrides[@]}"
	rounds=$(conf BENCH_ROUNDS)
	nsys=$(conf BENCH_SYSTEMS | wc -w)
	# A misspelt system would fail only in the guest, after the build
	# and the boot: every one needs its setup_ in host.sh.
	# Variants (farswap-wifN, farswap-qdN, farswap-stageN, SYSTEM-jumbo)
	# need their base's.
	for k in $(conf BENCH_SYSTEMS); do
		if [[ $k =~ ^farswap-(wif|qd|stage)[0-9]+$ ]]; then
			k=farswap
		elif [[ $k == ?*-jumbo ]]; then
			k=${k%-jumbo}
		fi
		[ "$k" != farswap-base ] || [ -n "${BENCH_BASE:-}" ] || {
			echo "bench: farswap-base needs BENCH_BASE=REF, the commit to build it from" >&2
			return 1
		}
		grep -q "^setup_${k//-/_}() {" "$gen/host.sh" || {
			echo "bench: no system '$k' (BENCH_SYSTEMS; see tests/bench/README.md)" >&2
			return 1
		}
	done
	retries=${BENCH_RETRIES:-1}
	# Up to 10 minutes per system under a loaded TCG machine in the full
	# run (farswap --sync-io's swap is the slowest), 5 in the quick one,
	# plus boot; bed.py stops the guests after that.
	if [ -z "${BENCH_TIMEOUT:-}" ]; then
		per=$([ $mode = quick ] && echo 300 || echo 600)
		BENCH_TIMEOUT=$((300 + nsys * per))
	fi

	rm -rf "$data" "$attempt_logs"
	mkdir -p "$data" "$attempt_logs"
	echo "bench: $mode run, $rounds round(s) of: $(conf BENCH_SYSTEMS)"
	echo "bench: building farswap.ko ($series), farswapd, farswapctl, pageverify, rdmalat into $bench"
	build_all "$series"
	logs=$bench_build/vm-logs/bench
	[ "$series" = 6.12 ] || logs=$bench_build/vm-logs/bench@$series

	echo "bench: machine load before: $(cut -d' ' -f1-3 /proc/loadavg); up to $BENCH_TIMEOUT s per round"
	echo "bench: fresh guests every round; consoles of each attempt in $attempt_logs/"
	# Sample the machine's load while the guests run, with the runs in
	# progress at that moment (a round/system directory in the guests'
	# shared directory without its meta.txt yet): this machine is shared,
	# TCG slows down with its load, and the report shows the load each
	# system saw.
	: >"$loadlog"
	(
		shared=$bench_build/vm-runs/bench/shared/bench
		while :; do
			line="$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"
			for d in "$shared"/r*/*/; do
				[ -d "$d" ] && [ ! -f "$d/meta.txt" ] || continue
				d=${d%/}
				line+=" ${d#"$shared"/}"
			done
			echo "$line" >>"$loadlog"
			sleep 15
		done
	) &
	sampler=$!
	trap 'kill "$sampler" 2>/dev/null || true' EXIT

	# One bed.py run per round, on fresh guests: nothing a round leaves
	# behind (guest memory, module state) reaches the next, and a guest
	# kernel crash (seen: Soft-RoCE's workqueue oopsing under TCG, on
	# host and donor alike; see the report) costs one round, which is
	# then run again, at most BENCH_RETRIES times.  A page that fails to
	# verify without such a crash fails the bench at once: never retried.
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	t0=$(date +%s)
	: >"$data/attempts.txt"
	for round in $(seq "$rounds"); do
		attempt=1
		while :; do
			tag=r$round-a$attempt
			make_scenario "${overrides[@]}" BENCH_ROUNDS=1 BENCH_FIRST_ROUND="$round" \
				NEEDS_MODULE=0 NEEDS_DAEMON=0 BENCH_BIN="$bench_bin"
			echo "bench: round $round/$rounds, attempt $attempt (load $(cut -d' ' -f1 /proc/loadavg))"
			brc=0
			FARSWAP_BUILD_DIR=$bench_build "$python" tests/vm/bed.py run "$gen" \
				--kernel "$series" --timeout "$BENCH_TIMEOUT" \
				>"$attempt_logs/$tag.bed.log" 2>&1 || brc=$?
			rm -rf "${attempt_logs:?}/$tag"
			cp -r "$logs" "$attempt_logs/$tag"
			verdict=$(grep -E '^(PASS|FAIL): ' "$attempt_logs/$tag.bed.log" | tail -n 1 || true)
			echo "bench:   ${verdict:-no verdict from bed.py (exit $brc)}"
			# What the guests measured this round, whatever happened.
			if [ -d "$logs/bed/bench/r$round" ]; then
				rm -rf "${data:?}/r$round"
				cp -r "$logs/bed/bench/r$round" "$data/"
			fi
			for f in host-info.txt donor-info.txt; do
				[ -f "$data/$f" ] || [ ! -f "$logs/bed/bench/$f" ] ||
					cp "$logs/bed/bench/$f" "$data/"
			done
			crashed=$(cat "$logs"/*.console 2>/dev/null |
				grep -aE 'Oops|BUG:|Kernel panic|double fault|general protection' |
				head -n 1 || true)
			running=$(grep -ah '^bed host .*: round [0-9]*, #[0-9]*: ' "$logs/host.console" 2>/dev/null |
				tail -n 1 | sed 's/.*: //' || true)
			echo "$tag ${verdict:-no verdict} | system running: ${running:-?} | first crash line: ${crashed:-none}" \
				>>"$data/attempts.txt"
			[ "$brc" -ne 0 ] || break
			if [ -z "$crashed" ] || [ "$attempt" -gt "$retries" ]; then
				rc=1
				break 2
			fi
			echo "bench:   a guest kernel crashed while ${running:-?} ran: running round $round again"
			attempt=$((attempt + 1))
		done
	done
	elapsed=$(($(date +%s) - t0))
	kill "$sampler" 2>/dev/null || true
	trap - EXIT
	cat "$attempt_logs"/*.bed.log >"$runlog"

	if [ ! -f "$data/host-info.txt" ]; then
		echo "bench: no data from the guests; see $attempt_logs/" >&2
		return 1
	fi
	kver=$(sed -n 's/^kernel //p' "$data/host-info.txt")
	day=$(date -u +%Y-%m-%d)
	if [ -n "${BENCH_RESULTS:-}" ]; then
		out=$BENCH_RESULTS
	elif [ $mode = quick ]; then
		out=results/tmp/$day-$kver-quick
	else
		out=results/$day-$kver
		# Never overwrite an earlier run's committed results.
		[ ! -e "$out" ] || out=results/$day-$(date -u +%H%M)-$kver
	fi
	rm -rf "$out"
	mkdir -p "$out"

	command="make bench"
	[ $mode = full ] || command="BENCH_QUICK=1 tests/bench/run.sh"
	[ ${#overrides[@]} -eq 0 ] || command="${overrides[*]} $command"
	[ -z "${BENCH_KERNEL:-}" ] || command="BENCH_KERNEL=$BENCH_KERNEL $command"
	report_args=(--data "$data" --bed-log "$runlog" --load-log "$loadlog" --out "$out"
		--mode "$mode" --command "$command" --started "$started" --elapsed "$elapsed"
		--bed-rc "$rc")
	[ $mode = quick ] || report_args+=(--latest results/LATEST.md)
	"$python" tests/bench/report.py "${report_args[@]}"
	echo "bench: report in $out/results.md"
	if [ "$rc" -ne 0 ]; then
		echo "bench: FAILED: $(grep -E '^FAIL: ' "$runlog" | tail -n 1)" >&2
		return 1
	fi
}

main "$@"
exit
