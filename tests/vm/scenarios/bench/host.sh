#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench, host side: for BENCH_ROUNDS rounds (numbered from
# BENCH_FIRST_ROUND, default 1: tests/bench/run.sh boots fresh guests for
# every round), for each system of BENCH_SYSTEMS (the order rotated by the
# round's number, so no system is always first or last), set it up, run
# the workloads on it, tear it down:
#
#   fio on the raw device (direct I/O, 4 KiB, first BENCH_FIO_MB MiB):
#     precondition (write the region once, 1 MiB sequential, so that no
#     system serves reads of never-written blocks: farswap would answer
#     those locally with zeros), then random read and random write at
#     queue depth 1 and BENCH_FIO_QD, BENCH_FIO_SECONDS each
#   swap: mkswap + swapon (the only swap device), pageverify --bench over
#     BENCH_SWAP_MB MiB in a memory cgroup with memory.high BENCH_SWAP_LIMIT
#     (fill, then one random-order verify pass; every page must verify),
#     swapoff
#
# Around each measured run both guests snapshot their counters (CPU
# ticks, NIC and Soft-RoCE counters); results land in
# $BED/bench/r<round>/<system>/ for tests/bench/report.py.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$BED_SCENARIO_DIR/bench-lib.sh"
# tests/bench/run.sh builds once and passes copies (BENCH_BIN), so every
# round runs the same programs whatever happens to the checkout meanwhile.
tracebreak=$FARSWAP_SRC/tests/bench/tracebreak
rdmalat=$FARSWAP_SRC/tests/tools/rdmalat
if [ -n "${BENCH_BIN:-}" ]; then
	FS_CTL=$BENCH_BIN/farswapctl
	FS_FARSWAPD=$BENCH_BIN/farswapd
	FS_PAGEVERIFY=$BENCH_BIN/pageverify
	FARSWAP_KO=$BENCH_BIN/farswap-bench.ko
	tracebreak=$BENCH_BIN/tracebreak
	rdmalat=$BENCH_BIN/rdmalat
fi

donor=$FARSWAP_PEER_donor
netdev=${FARSWAP_NETDEV_donor:-eth0}
rxe=${FARSWAP_DEV_donor:-rxe0}
# For bench_snap, also in fio's exec_prerun children.
export BENCH_NETDEV=$netdev BENCH_RXE=$rxe BENCH_DEV=
read -r -a systems <<<"$BENCH_SYSTEMS"
nqn=farswap-bench
cgroup=/sys/fs/cgroup/bench-workload
swap_limit_mb=${BENCH_SWAP_LIMIT%M}

# The block device under test (set by setup_<system>), and for teardown.
dev=
nvme_ctrl=
# The device whose counters bench_snap takes (its block stat, farswap's
# stat) when that is not $dev: farswapN under a dm-crypt mapping.
stat_dev=
# farswap-dmcrypt's mapping, as crypttab's "swap" option makes it.
crypt_map=fswbench
# farswap-r2's donors: farswapd twice on the donor guest, the second on
# this port (donor.sh).
donor_port2=7472

# sysfs key=value lines of a farswap device: fs_sysfs FILE KEY
fs_sysfs() {
	tr ' ' '\n' <"/sys/block/${dev#/dev/}/farswap/$1" | sed -n "s/^$2=//p"
}

# Setup and teardown, one pair per system --------------------------------

setup_farswap() {
	donor_rpc setup farswap
	fs_load_module
	dev=$(fs_attach --donor "$donor" --size "${BENCH_DEV_MB}M" "$@")
}

teardown_farswap() {
	"$FS_CTL" detach "${dev#/dev/}"
	rmmod farswap
	donor_rpc teardown farswap
}

# farswap.ko of another commit (tests/bench/run.sh's BENCH_BASE), with
# this commit's farswapd and farswapctl: a change to the module against
# its parent, in the same run.
setup_farswap_base() {
	local FARSWAP_KO=$BENCH_BIN/farswap-base.ko

	setup_farswap
}

teardown_farswap_base() {
	teardown_farswap
}

setup_farswap_sync() {
	setup_farswap --sync-io
	[ "$(cat "/sys/block/${dev#/dev/}/farswap/sync_io")" = 1 ] ||
		bed_fail "$dev: --sync-io did not stick"
}

teardown_farswap_sync() {
	teardown_farswap
}

# Staging off (--stage-kb 0): every swap-out waits for its RDMA WRITEs,
# as the module did before staging.
setup_farswap_nostage() {
	setup_farswap --stage-kb 0
	[ "$(fs_sysfs stage slots)" = 0 ] ||
		bed_fail "$dev: --stage-kb 0 did not stick ($(cat "/sys/block/${dev#/dev/}/farswap/stage"))"
}

teardown_farswap_nostage() {
	teardown_farswap
}

# farswap's page check: the default is siphash (keyed); crc32c, or none.
farswap_integrity() {
	setup_farswap --integrity "$1"
	[ "$(fs_sysfs integrity alg)" = "$1" ] ||
		bed_fail "$dev: --integrity $1 did not stick ($(cat "/sys/block/${dev#/dev/}/farswap/integrity"))"
}

setup_farswap_crc32c() {
	farswap_integrity crc32c
}

teardown_farswap_crc32c() {
	teardown_farswap
}

setup_farswap_nocheck() {
	farswap_integrity off
}

teardown_farswap_nocheck() {
	teardown_farswap
}

# Confidentiality by farswap itself: every page sealed on the host
# (ChaCha20-Poly1305), whose tag is then the page check.
setup_farswap_encrypt() {
	setup_farswap --encrypt
	[ "$(fs_sysfs encrypt alg)" = chacha20poly1305 ] ||
		bed_fail "$dev: --encrypt did not stick ($(cat "/sys/block/${dev#/dev/}/farswap/encrypt"))"
}

teardown_farswap_encrypt() {
	teardown_farswap
}

# Confidentiality as deployed today: dm-crypt in plain mode with a fresh
# random key over /dev/farswapN (what /etc/crypttab's "swap" option sets
# up), as tests/vm/scenarios/swap-secure does it.  The bench runs on the
# mapping; the counters are farswapN's.
setup_farswap_dmcrypt() {
	command -v cryptsetup >/dev/null || bed_fail "cryptsetup is not installed (make setup installs it)"
	modprobe dm_crypt || bed_fail "modprobe dm_crypt failed"
	setup_farswap
	stat_dev=$dev
	cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
		--key-file /dev/urandom "$dev" "$crypt_map" || bed_fail "cryptsetup open $dev failed"
	dev=/dev/mapper/$crypt_map
	[ -b "$dev" ] || bed_fail "no $dev after cryptsetup open"
	bed_log "dm-crypt: $dev over $stat_dev ($(cryptsetup status "$crypt_map" | awk '$1 == "cipher:" { print $2 }'))"
}

teardown_farswap_dmcrypt() {
	cryptsetup close "$crypt_map"
	dev=$stat_dev
	teardown_farswap
}

# Two replicas of every page on two donors: two farswapd on the donor
# guest, on two ports, with their own donor ids and failure domains.
setup_farswap_r2() {
	donor_rpc setup farswap-r2
	fs_load_module
	dev=$(fs_attach --donor "$donor" --donor "$donor:$donor_port2" \
		--size "${BENCH_DEV_MB}M" --replicas 2)
	[ "$(fs_sysfs replicas replicas)" = 2 ] ||
		bed_fail "$dev: --replicas 2 did not stick ($(cat "/sys/block/${dev#/dev/}/farswap/replicas"))"
	bed_log "replicas: $(cat "/sys/block/${dev#/dev/}/farswap/replicas")"
}

teardown_farswap_r2() {
	# The two farswapd must have counted as two donors in two failure
	# domains, else this was not the system it is named after.  A donor
	# given up on by a late reply on a loaded bed (degraded chunks,
	# failovers) shows in the log line, and in the figures.
	bed_log "replicas: $(cat "/sys/block/${dev#/dev/}/farswap/replicas")"
	[ "$(fs_sysfs replicas domains)" = 2 ] ||
		bed_fail "$dev: $(fs_sysfs replicas domains) failure domain(s), not 2: the donors were not told apart"
	"$FS_CTL" detach "${dev#/dev/}"
	rmmod farswap
	donor_rpc teardown farswap-r2
}

# Variants of a system, by the name's form (run_system picks them):
#   farswap-wifN  farswap with module parameter write_inflight_kb=N (the
#                 swap-out bytes in flight per write queue; 0 = no cap)
#   farswap-qdN   farswap with module parameter queue_depth=N (requests
#                 per hardware queue: what swap-out can park in blk-mq)
#   farswap-stageN  farswap with module parameter stage_kb=N (staging per
#                 write queue, KiB; 0 is farswap-nostage)
#   SYSTEM-jumbo  SYSTEM over both guests' link at MTU 9000: Soft-RoCE's
#                 path MTU becomes 4096, one packet per 4 KiB page

# farswap with module parameter $1=$2, checked in the device's farswap/
# directory when the device shows it there, else in the module's.
setup_farswap_param() {
	local seen

	donor_rpc setup farswap
	fs_load_module "$1=$2"
	dev=$(fs_attach --donor "$donor" --size "${BENCH_DEV_MB}M")
	seen=$(cat "/sys/block/${dev#/dev/}/farswap/$1" 2>/dev/null ||
	       cat "/sys/module/farswap/parameters/$1")
	[ "$seen" = "$2" ] || bed_fail "$dev: $1=$2 did not stick ($seen)"
	bed_log "$dev: $1=$2, nr_requests $(cat "/sys/block/${dev#/dev/}/queue/nr_requests")"
}

setup_farswap_wif() { setup_farswap_param write_inflight_kb "$1"; }
teardown_farswap_wif() { teardown_farswap; }
setup_farswap_qd() { setup_farswap_param queue_depth "$1"; }
teardown_farswap_qd() { teardown_farswap; }
setup_farswap_stage() { setup_farswap_param stage_kb "$1"; }
teardown_farswap_stage() { teardown_farswap; }

jumbo_mtu=9000
# The link's MTU before a -jumbo variant raised it.
jumbo_saved=

# This guest's side of the link at MTU $1; Soft-RoCE follows the netdev
# (its port's active MTU), and new connections take the new path MTU.
link_mtu() {
	local want=$2

	ip link set dev "$netdev" mtu "$1" || bed_fail "cannot set $netdev's MTU to $1"
	for _ in $(seq 50); do
		[ "$(ibv_devinfo -d "$rxe" | awk '$1 == "active_mtu:" { print $2 }')" = "$want" ] && return 0
		sleep 0.1
	done
	bed_fail "$rxe: active MTU is not $want at $netdev MTU $1"
}

setup_jumbo() {
	jumbo_saved=$(cat "/sys/class/net/$netdev/mtu")
	donor_rpc mtu "$jumbo_mtu" 4096
	link_mtu "$jumbo_mtu" 4096
	bed_log "link at MTU $jumbo_mtu (was $jumbo_saved)"
	"setup_${1//-/_}"
}

teardown_jumbo() {
	local mtu=$jumbo_saved

	"teardown_${1//-/_}"
	# Soft-RoCE's active MTU for the default 1500: 1024.
	link_mtu "$mtu" 1024
	donor_rpc mtu "$mtu" 1024
}

# setup or teardown ($1) of system $2, variants included.
system_do() {
	if [[ $2 =~ ^farswap-wif[0-9]+$ ]]; then
		"$1_farswap_wif" "${2#farswap-wif}"
	elif [[ $2 =~ ^farswap-qd[0-9]+$ ]]; then
		"$1_farswap_qd" "${2#farswap-qd}"
	elif [[ $2 =~ ^farswap-stage[0-9]+$ ]]; then
		"$1_farswap_stage" "${2#farswap-stage}"
	elif [[ $2 == ?*-jumbo ]]; then
		"$1_jumbo" "${2%-jumbo}"
	else
		"$1_${2//-/_}"
	fi
}

setup_nvmf() {
	local reply try b

	dev=

	donor_rpc setup nvmf
	modprobe nvme-rdma
	# rdma_cm connects are sometimes rejected on this bed although the
	# target listens (tests/vm/README.md, pitfalls): try again.
	for try in 1 2 3; do
		reply=
		if exec 3<>/dev/nvme-fabrics; then
			if printf '%s' "transport=rdma,traddr=$donor,trsvcid=4420,nqn=$nqn" >&3 2>/dev/null; then
				read -r reply <&3 || true
			fi
			exec 3>&-
		fi
		[ -z "$reply" ] || break
		bed_log "nvme connect attempt $try failed; retrying"
		sleep 2
	done
	[ -n "$reply" ] || bed_fail "nvme-rdma: cannot connect to $donor:4420 ($nqn)"
	# "instance=N,cntlid=M"
	nvme_ctrl=nvme${reply#instance=}
	nvme_ctrl=${nvme_ctrl%%,*}
	for _ in $(seq 100); do
		# With native multipath the disk is the subsystem's head
		# (nvmeXnY); the per-path nvmeXcZnY is hidden.
		for b in /sys/block/nvme*n*; do
			b=${b##*/}
			if [[ $b =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -b "/dev/$b" ]; then
				dev=/dev/$b
			fi
		done
		[ -z "$dev" ] || break
		sleep 0.1
	done
	[ -n "$dev" ] || bed_fail "no NVMe namespace after connecting $nvme_ctrl"
	bed_log "nvme-rdma: $nvme_ctrl ($reply), namespace $dev, $(cat "/sys/class/nvme/$nvme_ctrl/queue_count" 2>/dev/null || echo '?') queues"
}

teardown_nvmf() {
	echo 1 >"/sys/class/nvme/$nvme_ctrl/delete_controller"
	modprobe -r nvme-rdma
	donor_rpc teardown nvmf
}

setup_nbd() {
	donor_rpc setup nbd
	modprobe nbd nbds_max=1
	# As many connections (blk-mq queues) as farswap and nvme-rdma get
	# queues by default: one per CPU.  The kernel marks the sockets
	# memalloc for swap itself; nbd-client (netlink) does not stay.
	nbd-client -N bench -b 4096 -C "$(nproc)" "$donor" 10809 /dev/nbd0
	dev=/dev/nbd0
}

teardown_nbd() {
	nbd-client -d /dev/nbd0
	rmmod nbd
	donor_rpc teardown nbd
}

setup_zram() {
	modprobe zram num_devices=1
	echo "${BENCH_DEV_MB}M" >/sys/block/zram0/disksize
	dev=/dev/zram0
	bed_log "zram: $(cat /sys/block/zram0/comp_algorithm)"
}

teardown_zram() {
	echo 1 >/sys/block/zram0/reset
	rmmod zram
}

# Measurements --------------------------------------------------------------

# BENCH_TRACE=1: farswap's trace events during the swap workload, turned
# into a per-phase breakdown (tests/bench/tracebreak) once it is over.
# The ring buffer is enlarged for the run (a swap-in is four events) and
# given back after.  Tracing costs CPU: a traced run is for diagnosis.
tracefs=/sys/kernel/tracing
trace_saved_kb=

trace_wanted() {
	[ "${BENCH_TRACE:-0}" = 1 ] && [[ $BENCH_DEV == /dev/farswap* ]]
}

trace_start() {
	mountpoint -q "$tracefs" || mount -t tracefs nodev "$tracefs"
	[ -d "$tracefs/events/farswap" ] || bed_fail "no farswap trace events in $tracefs"
	# "7 (expanded: 1408)" until the buffer is first used
	trace_saved_kb=$(sed 's/.*expanded: \([0-9]*\).*/\1/; s/ .*//' "$tracefs/buffer_size_kb")
	echo 32768 >"$tracefs/buffer_size_kb"
	: >"$tracefs/trace"
	echo 1 >"$tracefs/events/farswap/enable"
}

trace_stop() {
	echo 0 >"$tracefs/events/farswap/enable"
}

# After the counters are taken: parsing the trace is not measured.
trace_report() {
	local run=$1

	"$tracebreak" --json-out "$BENCH_OUT/$run/swap.trace-breakdown.json" \
		"$tracefs/trace" >"$BENCH_OUT/$run/swap.trace-breakdown.txt" ||
		bed_fail "$run: tracebreak failed"
	sed 's/^/  trace: /' "$BENCH_OUT/$run/swap.trace-breakdown.txt"
	: >"$tracefs/trace"
	echo "$trace_saved_kb" >"$tracefs/buffer_size_kb"
}

# The fio jobs, in order, as NAME:OPTIONS.
fio_jobs() {
	local qd rw

	# Every block of the region holds data before anything is measured.
	echo "precondition:rw=write bs=1M iodepth=4"
	for qd in 1 "$BENCH_FIO_QD"; do
		for rw in randread randwrite; do
			echo "$rw-qd$qd:rw=$rw bs=4k iodepth=$qd time_based runtime=$BENCH_FIO_SECONDS"
		done
	done
}

# All jobs in one fio process, one after the other (stonewall): fio takes
# many seconds to start under TCG.  Each job's exec_prerun/exec_postrun
# snapshots both guests' counters right around its I/O.
run_fio() {
	local run=$1 dir=$BENCH_OUT/$1 name opts o job

	{
		echo "[global]"
		echo "filename=$dev"
		echo "direct=1"
		echo "ioengine=libaio"
		echo "size=${BENCH_FIO_MB}M"
		echo "lat_percentiles=1"
		echo "percentile_list=50:90:99:99.9"
		echo "stonewall"
		while IFS=: read -r name opts; do
			echo "[$name]"
			for o in $opts; do
				echo "$o"
			done
			echo "exec_prerun=$BED_SCENARIO_DIR/snap.sh $run/fio-$name start"
			echo "exec_postrun=$BED_SCENARIO_DIR/snap.sh $run/fio-$name end"
		done < <(fio_jobs)
	} >"$dir/fio.job"
	# exec_prerun's output goes to files in the current directory.
	(cd "$dir" && fio --eta=never --output-format=json+ --output="$dir/fio.json" "$dir/fio.job")
	while IFS=: read -r job _; do
		for o in host.start host.end donor.start donor.end; do
			[ -s "$dir/fio-$job.$o" ] ||
				bed_fail "$run: fio job $job: no counter snapshot $o (see $dir/$job.*run.txt)"
		done
	done < <(fio_jobs)
	bed_log "fio: $(awk -F'[:,]' '/"jobname"/ { gsub(/[ "]/, "", $2); j = $2 }
		/"iops" :/ && $2 + 0 > 0 { printf "%s %.0f IOPS; ", j, $2 }' "$dir/fio.json")"
}

# $dev as the only swap device, and the workload's memory cgroup at $1 MiB.
swap_on() {
	local limit_mb=$1 active

	mkswap "$dev" >/dev/null
	swapon "$dev"
	active=$(swapon --show=NAME --noheadings)
	# A dm mapping may be listed as /dev/dm-N: compare the device numbers.
	[ "$active" = "$dev" ] ||
		[ "$(stat -Lc %t:%T "$active" 2>/dev/null)" = "$(stat -Lc %t:%T "$dev")" ] ||
		bed_fail "active swap devices: '$active', expected only $dev"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mkdir -p "$cgroup"
	# memory.high, not memory.max, is the limit: past it the workload is
	# reclaimed and throttled, never OOM-killed.  A hard memory.max gives
	# up reclaiming while swap writes are still in flight and OOM-kills
	# the workload when the device is slow (seen with NVMe-oF/RDMA on a
	# loaded machine).  memory.max at twice the limit is the backstop;
	# memory.peak in the results shows how close the limit held.
	echo "${limit_mb}M" >"$cgroup/memory.high"
	echo $((limit_mb * 2))M >"$cgroup/memory.max"
	echo max >"$cgroup/memory.swap.max"
}

run_swap() {
	local run=$1 seed=$2 pid rc=0 out in

	swap_on "$swap_limit_mb"

	bench_snap "$run/swap" start
	! trace_wanted || trace_start
	(echo $BASHPID >"$cgroup/cgroup.procs" &&
		exec "$FS_PAGEVERIFY" --mb "$BENCH_SWAP_MB" --procs "$BENCH_SWAP_PROCS" \
			--seed "$seed" --bench --seq --passes 1) >"$BENCH_OUT/$run/pageverify.log" 2>&1 &
	pid=$!
	wait "$pid" || rc=$?
	! trace_wanted || trace_stop
	bench_snap "$run/swap" end
	! trace_wanted || trace_report "$run"
	cp "$cgroup/memory.events" "$BENCH_OUT/$run/memory.events"
	cp "$cgroup/memory.peak" "$BENCH_OUT/$run/memory.peak" 2>/dev/null || true
	swapoff "$dev"
	rmdir "$cgroup"

	sed -n 's/^RESULT all /  /p' "$BENCH_OUT/$run/pageverify.log"
	if [ "$rc" -ne 0 ] || grep -q MISMATCH "$BENCH_OUT/$run/pageverify.log" ||
		! grep -q '^RESULT all phase=verify-random pass=1 .* bad=0 ' "$BENCH_OUT/$run/pageverify.log"; then
		grep -m 20 -v '^RESULT worker' "$BENCH_OUT/$run/pageverify.log"
		bed_fail "$run: pageverify failed (exit $rc): pages lost or corrupted"
	fi
	# The pages really went through the device: at least three quarters
	# of what does not fit the cgroup went out during the fill and half
	# of it came back during the verify.
	out=$(sed -n 's/^RESULT all phase=fill .* pswpout=\([0-9]*\).*/\1/p' "$BENCH_OUT/$run/pageverify.log")
	in=$(sed -n 's/^RESULT all phase=verify-random .* pswpin=\([0-9]*\).*/\1/p' "$BENCH_OUT/$run/pageverify.log")
	[ "$out" -ge $(((BENCH_SWAP_MB - swap_limit_mb) * 256 * 3 / 4)) ] ||
		bed_fail "$run: only $out pages swapped out during the fill"
	[ "$in" -ge $(((BENCH_SWAP_MB - swap_limit_mb) * 256 / 2)) ] ||
		bed_fail "$run: only $in pages swapped in during the verify"
}

# A real program larger than its memory limit: GNU sort, in one buffer
# (-S: no temporary files) and one thread, of BENCH_SORT_LINES numbers
# in a shuffled order, in the cgroup at BENCH_SORT_LIMIT.  The input is
# made once per round in this guest's tmpfs, outside the cgroup; the
# output must be the numbers in order (its sha256 against seq's), and
# the sort must have swapped.
sort_input=/tmp/bench-sort.in
sort_want=

sort_prepare() {
	local seed=$1

	seq -f '%09.0f' 0 $((BENCH_SORT_LINES - 1)) |
		shuf --random-source=<(yes "$seed") -o "$sort_input"
	sort_want=$(seq -f '%09.0f' 0 $((BENCH_SORT_LINES - 1)) | sha256sum)
	sort_want=${sort_want%% *}
	bed_log "sort input: $BENCH_SORT_LINES lines, $(stat -c %s "$sort_input") bytes"
}

run_sort() {
	local run=$1 limit_mb=${BENCH_SORT_LIMIT%M} t0 t1 got rc=0 out

	swap_on "$limit_mb"
	bench_snap "$run/sort" start
	t0=$EPOCHREALTIME
	got=$( (echo $BASHPID >"$cgroup/cgroup.procs" &&
		LC_ALL=C exec sort --parallel=1 -S 512M "$sort_input") | sha256sum) || rc=$?
	t1=$EPOCHREALTIME
	bench_snap "$run/sort" end
	cp "$cgroup/memory.peak" "$BENCH_OUT/$run/sort.memory.peak" 2>/dev/null || true
	swapoff "$dev"
	rmdir "$cgroup"
	got=${got%% *}
	[ "$rc" -eq 0 ] && [ "$got" = "$sort_want" ] ||
		bed_fail "$run: sort exited $rc, output sha256 $got, want $sort_want"
	out=$(awk '$1 == "vm.pswpout" { print $2 }' "$BENCH_OUT/$run/sort.host.end")
	out=$((out - $(awk '$1 == "vm.pswpout" { print $2 }' "$BENCH_OUT/$run/sort.host.start")))
	[ "$out" -ge $((limit_mb * 256 / 2)) ] ||
		bed_fail "$run: sort swapped out only $out pages"
	echo "RESULT sort lines=$BENCH_SORT_LINES seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') pswpout=$out" |
		tee "$BENCH_OUT/$run/sort.log"
}

# The bed's own limit, every round before the systems: 4 KiB RDMA READ
# and WRITE between the same two guests, waited for on a completion
# channel as farswap's requests are (rdmalat, tests/tools; perftest
# busy-polls, and on these one-vCPU guests its pollers and Soft-RoCE's
# kernel threads take turns on the CPU): one verb at a time (latency),
# then 16 in flight on one queue pair (rate), as fio's QD1 and QD16 jobs.
# A connect this bed rejects now and then is retried on a fresh port.
raw_rdma() {
	local round=$1 op depth name run attempt port=18600 out

	mkdir -p "$BENCH_OUT/r$round/raw"
	for run in read:1 write:1 read:16 write:16; do
		op=${run%:*} depth=${run#*:}
		name=$op
		[ "$depth" -eq 1 ] || name=$op-$depth
		for attempt in 1 2 3 4; do
			port=$((port + 1))
			donor_rpc raw-serve "$name" "$port"
			if out=$(timeout 120 "$rdmalat" --to "$donor" --port "$port" --op "$op" \
				--depth "$depth" --size 4096 --iters "$BENCH_RAW_ITERS" 2>&1); then
				donor_rpc raw-end ok
				echo "$out" >"$BENCH_OUT/r$round/raw/$name.txt"
				break
			fi
			bed_log "rdmalat $name to $donor failed (attempt $attempt): $(head -n1 <<<"$out")"
			donor_rpc raw-end kill
		done
		[ -f "$BENCH_OUT/r$round/raw/$name.txt" ] ||
			bed_fail "rdmalat $name to $donor failed 4 times; last output: $out"
	done
}

# One system, one round.
run_system() {
	local round=$1 pos=$2 sys=$3 run t0 t1 t2 t3

	run=r$round/$sys
	mkdir -p "$BENCH_OUT/$run"
	bed_log "round $round, #$pos: $sys"
	[ -z "$(swapon --show=NAME --noheadings)" ] || bed_fail "a swap device is still active"
	t0=$SECONDS
	system_do setup "$sys"
	export BENCH_DEV=${stat_dev:-$dev}
	t1=$SECONDS
	run_fio "$run"
	t2=$SECONDS
	run_swap "$run" "$((BENCH_SEED + round))"
	[ "${BENCH_SORT_LINES:-0}" -eq 0 ] || run_sort "$run"
	t3=$SECONDS
	system_do teardown "$sys"
	dev=
	stat_dev=
	cat >"$BENCH_OUT/$run/meta.txt" <<-EOF
		system $sys
		round $round
		position $pos
		seed $((BENCH_SEED + round))
		setup_s $((t1 - t0))
		fio_s $((t2 - t1))
		swap_s $((t3 - t2))
		teardown_s $((SECONDS - t3))
	EOF
	bed_result "bench.r$round.$sys.seconds" $((SECONDS - t0))
}

host_info() {
	{
		echo "kernel $(uname -r)"
		echo "cpus $(nproc)"
		echo "mem_total_kb $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)"
		echo "cmdline $(cat /proc/cmdline)"
		echo "zswap_enabled $(cat /sys/module/zswap/parameters/enabled 2>/dev/null || echo absent)"
		echo "page_cluster $(cat /proc/sys/vm/page-cluster)"
		echo "swappiness $(cat /proc/sys/vm/swappiness)"
		echo "fio $(fio --version)"
		echo "nbd_client $(nbd-client -V 2>&1 | head -n1)"
		echo "mtu $(cat /sys/class/net/"$netdev"/mtu)"
		echo "rxe_active_mtu $(ibv_devinfo -d "$rxe" | awk '$1 == "active_mtu:" { print $2 }')"
		env | grep '^BENCH_' | sort | sed 's/=/ /'
	} >"$BENCH_OUT/host-info.txt"
}

mkdir -p "$BENCH_OUT"
[ -x "$FS_PAGEVERIFY" ] || bed_fail "$FS_PAGEVERIFY not built (make -C tests/workload)"
[ "$(cat /sys/module/zswap/parameters/enabled 2>/dev/null || echo N)" = N ] ||
	bed_fail "zswap is on: swap traffic would not all reach the device under test"
host_info
donor_rpc info

n=${#systems[@]}
first=${BENCH_FIRST_ROUND:-1}
for round in $(seq "$first" $((first + BENCH_ROUNDS - 1))); do
	[ "${BENCH_RAW_ITERS:-0}" -eq 0 ] || raw_rdma "$round"
	[ "${BENCH_SORT_LINES:-0}" -eq 0 ] || sort_prepare "$((BENCH_SEED + round))"
	for i in $(seq 0 $((n - 1))); do
		run_system "$round" $((i + 1)) "${systems[$(((i + round - 1) % n))]}"
	done
done
: >"$BENCH_OUT/complete"
donor_rpc quit
check_kernel_log
bed_signal done
