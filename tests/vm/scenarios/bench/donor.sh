#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench, donor side: serve the remote end of each system under test when
# the host asks for it, and snapshot this guest's counters (CPU time, NIC,
# Soft-RoCE) around each measured run.  Every remote system serves RAM:
#   farswap  farswapd donating BENCH_DEV_MB (+ a slab) in BENCH_SLAB slabs
#            (also for farswap-sync, -crc32c, -nocheck, -encrypt,
#            -dmcrypt: the options are the host's)
#   farswap-r2  two such farswapd, on two ports, with their own donor ids
#            and failure domains: the host sees two donors
#   nvmf     nvmet + nvmet-rdma exporting a brd ramdisk (/dev/ram0)
#   nbd      nbd-server over TCP exporting the same kind of ramdisk
# Each is torn down completely (modules removed, memory freed) before the
# next one starts, so none runs beside another.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$BED_SCENARIO_DIR/bench-lib.sh"
# tests/bench/run.sh builds once and passes copies (BENCH_BIN), so every
# round runs the same programs whatever happens to the checkout meanwhile.
rdmalat=$FARSWAP_SRC/tests/tools/rdmalat
if [ -n "${BENCH_BIN:-}" ]; then
	FS_CTL=$BENCH_BIN/farswapctl
	FS_FARSWAPD=$BENCH_BIN/farswapd
	FS_PAGEVERIFY=$BENCH_BIN/pageverify
	FARSWAP_KO=$BENCH_BIN/farswap-bench.ko
	rdmalat=$BENCH_BIN/rdmalat
fi

addr=$FARSWAP_ADDR
netdev=${FARSWAP_NETDEV_host:-eth0}
rxe=${FARSWAP_DEV:-rxe0}
nvmet=/sys/kernel/config/nvmet
nqn=farswap-bench
nbd_conf=/run/bench-nbd-server.conf
nbd_pid=/run/bench-nbd-server.pid

# A brd ramdisk of the device size: pages are allocated on first write and
# freed when the module goes.
ramdisk_up() {
	modprobe brd rd_nr=1 rd_size=$((BENCH_DEV_MB * 1024)) max_part=0
	[ -b /dev/ram0 ] || bed_fail "no /dev/ram0 after modprobe brd"
}

ramdisk_down() {
	# The last user (nvmet's namespace, nbd-server's child) may take a
	# moment to let go.
	for _ in $(seq 50); do
		rmmod brd 2>/dev/null && return 0
		sleep 0.2
	done
	rmmod brd
}

# A slab more than the device, so nothing is ever reclaimed; the headroom
# stays well below what is left on this guest, with two of them running
# too (farswap-r2: MEM_donor in scenario.conf leaves room for both).
donor_args=(--donate $((BENCH_DEV_MB + 32))M --slab-size "$BENCH_SLAB"
	--headroom 64M --hysteresis 32M)

setup_farswap() {
	fs_start_donor "${donor_args[@]}" "$@"
}

teardown_farswap() {
	"$FS_FARSWAPD" --stats || true
	fs_stop_donor
}

# farswap-r2's second farswapd: its own port, stats socket and log; the
# key fs_start_donor installed for the first (the bench authenticates).
fsd2_port=7472
fsd2_sock=/run/farswap/bench-donor2.sock
fsd2_pid=

setup_farswap_r2() {
	local mem

	setup_farswap --donor-id bench-a --failure-domain bench-a
	"$FS_FARSWAPD" --config /dev/null --listen "$addr:$fsd2_port" \
		--key-file "${FS_KEY_FILE:-/run/farswap-bed.key}" --stats-socket "$fsd2_sock" \
		--donor-id bench-b --failure-domain bench-b --handshake-timeout 20s \
		--auth-timeout 20s "${donor_args[@]}" \
		>"$BED/$FARSWAP_ROLE-farswapd2.log" 2>&1 &
	fsd2_pid=$!
	bed_wait_rdma_listen "$fsd2_port" 60 "$fsd2_pid"
	# farswapd maps and pins its whole donation before it listens: what
	# is left now must stay clear of the headroom and hysteresis (96M),
	# or the pressure monitors would take slabs back mid-run.
	mem=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
	bed_log "second farswapd listening on $addr:$fsd2_port (pid $fsd2_pid); MemAvailable $mem kB left"
	[ "$mem" -ge $((160 * 1024)) ] ||
		bed_fail "MemAvailable $mem kB beside two donations of $((BENCH_DEV_MB + 32)) MiB: too close to the headroom (raise MEM_donor)"
}

teardown_farswap_r2() {
	local rc=0

	"$FS_FARSWAPD" --stats --stats-socket "$fsd2_sock" || true
	kill -TERM "$fsd2_pid"
	wait "$fsd2_pid" || rc=$?
	[ "$rc" -eq 0 ] || bed_fail "the second farswapd exited $rc on SIGTERM"
	teardown_farswap
}

setup_nvmf() {
	local sub=$nvmet/subsystems/$nqn port=$nvmet/ports/1

	ramdisk_up
	modprobe nvmet
	modprobe nvmet-rdma
	mkdir "$sub"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo -n /dev/ram0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable"
	mkdir "$port"
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$addr" >"$port/addr_traddr"
	echo 4420 >"$port/addr_trsvcid"
	ln -s "$sub" "$port/subsystems/$nqn"
	bed_wait_rdma_listen 4420 30
	grep -H . "$port"/param_* "$sub/namespaces/1/device_path" 2>/dev/null || true
}

teardown_nvmf() {
	local sub=$nvmet/subsystems/$nqn port=$nvmet/ports/1

	rm -f "$port/subsystems/$nqn"
	rmdir "$port"
	echo 0 >"$sub/namespaces/1/enable"
	rmdir "$sub/namespaces/1"
	rmdir "$sub"
	rmmod nvmet-rdma nvmet
	ramdisk_down
}

setup_nbd() {
	ramdisk_up
	# One export; the server forks a child per connection.
	cat >"$nbd_conf" <<-EOF
		[generic]
		user = root
		group = root
		listenaddr = $addr
		port = 10809
		[bench]
		exportname = /dev/ram0
	EOF
	nbd-server -C "$nbd_conf" -p "$nbd_pid"
	for _ in $(seq 100); do
		ss -Hltn "sport = :10809" | bed_grep . && return 0
		sleep 0.1
	done
	bed_fail "nbd-server is not listening on port 10809"
}

teardown_nbd() {
	local pid pids p

	pid=$(cat "$nbd_pid")
	# The per-connection children have ended when the host disconnected;
	# stop any left, by pid, with the server.
	pids="$pid $(pgrep -P "$pid" || true)"
	# shellcheck disable=SC2086  # a list of pids
	kill -TERM $pids 2>/dev/null || true
	for p in $pids; do
		for _ in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
	done
	rm -f "$nbd_pid"
	ramdisk_down
}

# The raw RDMA latency servers (rdmalat, tests/tools), one at a time: the
# host's client of each either succeeds or is retried on a fresh port
# (tests/vm/scenarios/rdma-rw/rdma-lib.sh says why).
raw_pid=
raw_log=

raw_serve() {
	local op=$1 port=$2

	raw_log=$BED/donor.raw-$op-$port.log
	"$rdmalat" --serve "$FARSWAP_ADDR" --port "$port" \
		--size 4096 >"$raw_log" 2>&1 &
	raw_pid=$!
	bed_wait_rdma_listen "$port" 30 "$raw_pid"
}

raw_end() {
	if [ "$1" = kill ]; then
		kill "$raw_pid" 2>/dev/null || true
		wait "$raw_pid" || true
	else
		wait "$raw_pid" || bed_fail "raw RDMA server failed: $(tail -n 5 "$raw_log")"
	fi
	raw_pid=
}

# One request from the host (bench_serve_donor).
donor_do() {
	local what=$1

	shift
	case $what in
	setup | teardown)
		bed_log "$what $1: MemAvailable $(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo) kB"
		case $1 in
		farswap | farswap-r2 | nvmf | nbd) "${what}_${1//-/_}" ;;
		*) bed_fail "no remote end for system '$1'" ;;
		esac
		;;
	raw-serve) raw_serve "$@" ;;
	raw-end) raw_end "$@" ;;
	mtu)
		# mtu MTU RXE_MTU: this guest's side of the link (a -jumbo
		# variant), and Soft-RoCE's active MTU that follows it
		ip link set dev "$netdev" mtu "$1" || bed_fail "cannot set $netdev's MTU to $1"
		for _ in $(seq 50); do
			[ "$(ibv_devinfo -d "$rxe" | awk '$1 == "active_mtu:" { print $2 }')" = "$2" ] && break
			sleep 0.1
		done
		[ "$(ibv_devinfo -d "$rxe" | awk '$1 == "active_mtu:" { print $2 }')" = "$2" ] ||
			bed_fail "$rxe: active MTU is not $2 at $netdev MTU $1"
		bed_log "link at MTU $1"
		;;
	snap)
		# snap PATH: this guest's counters into $BENCH_OUT/PATH
		mkdir -p "$(dirname "$BENCH_OUT/$1")"
		bench_counters "$netdev" "$rxe" >"$BENCH_OUT/$1"
		;;
	info)
		mkdir -p "$BENCH_OUT"
		{
			echo "kernel $(uname -r)"
			echo "cpus $(nproc)"
			echo "mem_total_kb $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)"
			echo "mtu $(cat /sys/class/net/"$netdev"/mtu)"
			echo "rxe_active_mtu $(ibv_devinfo -d "$rxe" | awk '$1 == "active_mtu:" { print $2 }')"
		} >"$BENCH_OUT/donor-info.txt"
		;;
	perf-start) bench_perf_start ;;
	perf-stop) bench_perf_stop "$BENCH_OUT/$1" ;;
	quit) ;;
	*) bed_fail "unknown request '$what $*'" ;;
	esac
}

bench_serve_donor
check_kernel_log
