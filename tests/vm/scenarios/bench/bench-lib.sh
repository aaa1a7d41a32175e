# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the bench scenario's host and donor scripts (source
# guest-lib.sh and farswap-lib.sh first).
#
# The host drives; the donor serves requests from it, one at a time, in
# order (a request is a numbered file in $BED/bench-rpc/, its answer a
# bed_signal):
#
#   donor_rpc CMD ARGS...      host: run CMD on the donor (donor_do, in
#                              donor.sh), wait for it; fail if it failed.
#                              Callable from child processes too (fio's
#                              exec_prerun): the sequence lives in a file
#   bench_serve_donor          donor: serve requests until "quit"; a
#                              failing request ends the donor's script
#   bench_counters NETDEV RXE [FILES...]
#                              print this guest's counters, "key value" a
#                              line: /proc/stat CPU ticks, the NIC's and the
#                              Soft-RoCE device's counters, swap, UDP and
#                              TCP counters, uptime; FILES may add a block
#                              device's stat and farswap's stat
#   bench_snap PATH start|end  host: both guests' counters around a
#                              measured run, into $BENCH_OUT/PATH.{host,donor}.EDGE
#                              (needs BENCH_NETDEV, BENCH_RXE, BENCH_DEV)
#   bench_nap SECONDS          sleep without starting a process
#   bench_perf_start / bench_perf_stop OUT
#                              with BENCH_PROFILE=1: sample this guest's CPUs
#                              (perf record -a -e cpu-clock), then write a
#                              flat profile (perf report) to OUT; bench_snap
#                              does this on both guests around every run
#
# Results go under $BENCH_OUT ($BED/bench): per round and system a
# directory with fio JSON, pageverify's log and counter snapshots; the
# machine turns them into the report (tests/bench/report.py).
#
# Under TCG on a loaded machine every exec costs a tenth of a second or
# more, so the helpers that run around measurements start few processes.

# shellcheck disable=SC2034  # used by the role scripts
BENCH_OUT=$BED/bench
BENCH_RPC=$BED/bench-rpc

# A pipe nobody writes to: read -t on it is a sleep inside bash.
exec {BENCH_NAP_FD}<> <(:)
bench_nap() {
	read -r -t "$1" -u "$BENCH_NAP_FD" _ || true
}

bench_counters() {
	local netdev=$1 rxe=$2

	shift 2
	awk '
	FILENAME == "/proc/stat" {
		# cpu  user nice system idle iowait irq softirq steal (USER_HZ ticks)
		if ($1 == "cpu") {
			split("user nice system idle iowait irq softirq steal", f, " ")
			for (i = 1; i <= 8; i++)
				print "cpu." f[i], $(i + 1)
		} else if ($1 ~ /^cpu[0-9]/) {
			ncpu++
		}
		next
	}
	FILENAME == "/proc/vmstat" {
		if ($1 ~ /^(pswpin|pswpout|pgmajfault)$/)
			print "vm." $1, $2
		next
	}
	FILENAME == "/proc/net/snmp" {
		# The guest s own UDP drops (Soft-RoCE rides on UDP) and TCP
		# retransmits (NBD rides on TCP): header line, then values.
		if ($1 != "Udp:" && $1 != "Tcp:")
			next
		if (!($1 in head)) {
			head[$1] = $0
			next
		}
		n = split(head[$1], k, " ")
		for (i = 2; i <= n; i++)
			print tolower(substr($1, 1, 3)) "." k[i], $i
		next
	}
	FILENAME == "/proc/uptime" { print "time.uptime", $1; next }
	FILENAME == "/proc/meminfo" {
		if ($1 == "MemAvailable:")
			print "mem.available_kb", $2
		next
	}
	FILENAME ~ /\/statistics\// || FILENAME ~ /\/hw_counters\// {
		n = FILENAME
		sub(/.*\//, "", n)
		print (FILENAME ~ /statistics/ ? "net." : "rxe.") n, $1
		next
	}
	FILENAME ~ /\/farswap\/stat$/ {
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			print "farswap." kv[1], kv[2]
		}
		next
	}
	FILENAME ~ /^\/sys\/block\/[^\/]*\/stat$/ {
		split("read_ios read_merges read_sectors read_ticks write_ios write_merges write_sectors write_ticks in_flight io_ticks time_in_queue", f, " ")
		for (i = 1; i <= 11; i++)
			print "dev." f[i], $i + 0
		next
	}
	END { print "cpu.ncpu", ncpu }
	' /proc/stat /proc/vmstat /proc/net/snmp /proc/uptime /proc/meminfo \
		/sys/class/net/"$netdev"/statistics/* \
		/sys/class/infiniband/"$rxe"/ports/1/hw_counters/* "$@"
}

# Host side ----------------------------------------------------------------

donor_rpc() {
	local n secs=${BENCH_RPC_TIMEOUT:-300} end

	mkdir -p "$BENCH_RPC"
	n=$(($(cat "$BENCH_RPC/seq" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$BENCH_RPC/seq"
	end=$((SECONDS + secs))
	# Written whole, then renamed: the donor never reads half a request.
	echo "$*" >"$BENCH_RPC/$n.tmp"
	mv "$BENCH_RPC/$n.tmp" "$BENCH_RPC/$n.req"
	# A failed request ends the donor's script (set -e): show why.
	while [ ! -e "$BED/donor.rpc-$n" ]; do
		if [ -e "$BED/donor.rc" ] && [ ! -e "$BED/donor.rpc-$n" ]; then
			sed 's/^/  donor: /' "$BENCH_RPC/$n.log" 2>/dev/null | tail -n 20
			bed_fail "donor: '$*' failed: its script exited $(cat "$BED/donor.rc")"
		fi
		[ $SECONDS -lt $end ] || bed_fail "donor: '$*' not done after $secs s"
		bench_nap 0.05
	done
}

bench_snap() {
	local path=$1 edge=$2 name=${BENCH_DEV#/dev/} files=()

	[ -f "/sys/block/$name/stat" ] && files+=("/sys/block/$name/stat")
	[ -f "/sys/block/$name/farswap/stat" ] && files+=("/sys/block/$name/farswap/stat")
	# The donor's window encloses the host's.
	if [ "$edge" = start ]; then
		donor_rpc snap "$path.donor.start"
		if [ "${BENCH_PROFILE:-0}" = 1 ]; then
			donor_rpc perf-start
			bench_perf_start
		fi
	fi
	bench_counters "$BENCH_NETDEV" "$BENCH_RXE" "${files[@]}" >"$BENCH_OUT/$path.host.$edge"
	if [ "$edge" = end ]; then
		donor_rpc snap "$path.donor.end"
		# farswap's histograms are in debugfs (mounted in the guests).
		if [ -f "/sys/kernel/debug/farswap/$name/latency" ]; then
			cp "/sys/kernel/debug/farswap/$name/latency" "$BENCH_OUT/$path.farswap-latency"
		fi
		if [ "${BENCH_PROFILE:-0}" = 1 ]; then
			bench_perf_stop "$BENCH_OUT/$path.perf-host.txt"
			donor_rpc perf-stop "$path.perf-donor.txt"
		fi
	fi
}

# perf runs in the background of whichever process starts it (fio's
# exec_prerun is a process of its own): its pid goes through a file.
BENCH_PERF_DATA=/run/bench-perf.data
BENCH_PERF_PID=/run/bench-perf.pid

bench_perf_start() {
	rm -f "$BENCH_PERF_DATA"
	# cpu-clock: TCG has no hardware counters.  ~250 Hz per CPU keeps
	# the sampling's own cost small under emulation.
	perf record -a -e cpu-clock -F 249 -o "$BENCH_PERF_DATA" >/dev/null 2>&1 &
	echo $! >"$BENCH_PERF_PID"
}

bench_perf_stop() {
	local out=$1 pid

	pid=$(cat "$BENCH_PERF_PID")
	kill -INT "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do
		bench_nap 0.1
	done
	{
		echo "# perf record -a -e cpu-clock -F 249 on $(hostname); perf report --sort comm,dso,sym"
		perf report -i "$BENCH_PERF_DATA" --stdio --no-children --sort comm,dso,sym \
			--percent-limit 0.5 2>&1 | grep -v '^$'
	} >"$out"
	rm -f "$BENCH_PERF_DATA" "$BENCH_PERF_PID"
}

# Donor side ---------------------------------------------------------------

# Wait for the host's request N; fails if the host's script ended first.
# The donor's CPU time is measured, and this loop runs all through: look
# often just after a request (the next one tends to follow at once), then
# back off to a few looks a second, each without starting a process.
bench_wait_request() {
	local req=$BENCH_RPC/$1.req nap=0.02

	while [ ! -e "$req" ]; do
		if [ -e "$BED/host.rc" ] && [ ! -e "$req" ]; then
			bed_fail "the host's script exited $(cat "$BED/host.rc") without sending 'quit'"
		fi
		bench_nap "$nap"
		case $nap in
		0.02) nap=0.05 ;;
		0.05) nap=0.1 ;;
		*) nap=0.25 ;;
		esac
	done
}

# Serve the host's requests in order.  Each runs in this shell, as a
# plain statement: farswapd must stay our child for fs_stop_donor's wait,
# and set -e must stay in force, so that a failing step ends the script
# and the host (donor_rpc) shows the request's log.
bench_serve_donor() {
	local n=0 cmd

	mkdir -p "$BENCH_RPC"
	while :; do
		n=$((n + 1))
		bench_wait_request "$n"
		cmd=$(<"$BENCH_RPC/$n.req")
		bed_log "request $n: $cmd"
		# shellcheck disable=SC2086  # the request is words
		donor_do $cmd >"$BENCH_RPC/$n.log" 2>&1
		bed_signal "rpc-$n"
		[ "$cmd" != quit ] || return 0
	done
}
