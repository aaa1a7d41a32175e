# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for test bed role scripts.  Source it first thing:
#
#   #!/bin/bash
#   set -euo pipefail
#   . "$FARSWAP_SRC/tests/vm/guest-lib.sh"
#
# Guests of one run share the directory $BED (/bed, 9p, read-write); the
# helpers below coordinate through files in it.  Every helper is safe under
# set -euo pipefail.
#
#   bed_log MSG...             print MSG with role and uptime to the console
#   bed_fail MSG...            print MSG and exit 1 (from the calling shell:
#                              inside $(...) or a pipeline it ends only that)
#   bed_signal NAME            tell the other guests NAME happened here
#                              (creates $BED/<role>.NAME)
#   bed_wait ROLE NAME [SECS]  wait for ROLE's bed_signal NAME (default 120 s);
#                              fails at once if ROLE's script already ended
#                              without signalling (its .rc exists), and with
#                              a clear message on timeout
#   bed_cut_power ROLE         the bed kills ROLE's QEMU (a power cut)
#   bed_link_dark IF           every packet into and out of IF vanishes,
#                              while IF stays up (a dead switch port)
#   bed_link_light IF          IF carries packets again
#   CMD | bed_grep GREP-ARGS   grep -q over the whole of CMD's output (a bare
#                              "CMD | grep -q" fails under pipefail when grep,
#                              done at its first match, leaves CMD to die of
#                              SIGPIPE on its next write)
#   bed_secs SECS              SECS stretched by BED_TIME_SCALE: bed.py
#                              slows every wait on a slow kernel (debug)
#   bed_result KEY VALUE       report a measurement: appended to
#                              $BED/results, printed by bed.py at the end
#   bed_wait_rdma_listen PORT [SECS [PID]]
#                              wait until an rdma_cm listener on PORT exists
#                              here (a server is ready for clients); with
#                              PID, fail at once if that process is gone
#   bed_systemd_up             in a SYSTEMD_ROLES guest: systemd is PID 1,
#                              its boot is done and no unit failed
#   check_kernel_log           scan dmesg for oopses, warnings, lockdep and
#                              the rest of tests/vm/bad-patterns.txt, minus
#                              the scenario's ALLOW_LOG_PATTERNS; prints the
#                              offending lines and returns 1 if any

: "${BED:=/bed}"
: "${FARSWAP_ROLE:=$(hostname)}"

bed_log() {
	local up
	read -r up _ </proc/uptime
	echo "bed $FARSWAP_ROLE +${up}s: $*"
}

# The RDMA devices' non-zero port counters (Soft-RoCE's send_err,
# retry_exceeded_err, rcvd_seq_err, ...), on one line: an error that
# reached the verbs only as a flushed completion still shows here.
bed_rdma_counters() {
	local f v line=

	for f in /sys/class/infiniband/*/ports/*/hw_counters/*; do
		[ -r "$f" ] || continue
		v=$(cat "$f" 2>/dev/null) || continue
		[ "$v" = 0 ] || line+=" $(echo "${f#/sys/class/infiniband/}" | sed 's|/ports/\([0-9]*\)/hw_counters/|/\1:|')=$v"
	done
	[ -z "$line" ] || bed_log "RDMA counters:$line"
}

bed_fail() {
	bed_log "FAILED: $*"
	bed_rdma_counters || true
	# A scenario may define bed_on_fail to log the state it failed in.
	if declare -F bed_on_fail >/dev/null; then
		bed_on_fail || true
	fi
	exit 1
}

bed_secs() {
	echo $(($1 * ${BED_TIME_SCALE:-1}))
}

bed_grep() {
	local text
	text=$(cat)
	grep -q "$@" <<<"$text"
}

bed_signal() {
	[ $# -eq 1 ] || bed_fail "usage: bed_signal NAME"
	: >"$BED/$FARSWAP_ROLE.$1"
}

# bed_link_dark IF: packets vanish both ways; this guest's own sends still
# succeed, as behind a dead switch port.  Not 'ip link set IF down': that
# fails local sends, and Soft-RoCE puts a QP whose send failed in the
# error state for good, its QP1 too, which leaves this guest's connection
# manager deaf until its RDMA device is made again (seen: a donor whose
# link came back answered no connect request after).
bed_link_dark() {
	[ $# -eq 1 ] || bed_fail "usage: bed_link_dark IF"
	# netem's loss reports success to the sender; an egress drop action
	# would not.
	tc qdisc replace dev "$1" root netem loss 100% ||
		bed_fail "cannot drop $1's outgoing packets (sch_netem)"
	tc qdisc add dev "$1" handle ffff: ingress &&
		tc filter add dev "$1" parent ffff: matchall action drop ||
		bed_fail "cannot drop $1's incoming packets (sch_ingress, cls_matchall)"
}

bed_link_light() {
	[ $# -eq 1 ] || bed_fail "usage: bed_link_light IF"
	tc qdisc del dev "$1" ingress || bed_fail "cannot restore $1's ingress"
	tc qdisc del dev "$1" root || bed_fail "cannot restore $1's egress"
}

# bed_cut_power ROLE: the bed kills ROLE's QEMU at once (a power cut: no
# FIN, no disconnect); returns once it is gone.
bed_cut_power() {
	local end=$((SECONDS + 30))

	: >"$BED/cut-power.$1"
	while [ ! -e "$BED/cut-power.$1.done" ]; do
		[ $SECONDS -lt $end ] || bed_fail "the bed did not cut $1's power in 30 s"
		sleep 0.2
	done
	bed_log "$1's power cut"
}

bed_wait() {
	[ $# -ge 2 ] || bed_fail "usage: bed_wait ROLE NAME [TIMEOUT]"
	local role=$1 name=$2 secs
	secs=$(bed_secs "${3:-120}")
	local end=$((SECONDS + secs))

	while [ ! -e "$BED/$role.$name" ]; do
		# The signal is written before the .rc, so a .rc without the
		# signal (checked again) means it will never come.
		if [ -e "$BED/$role.rc" ] && [ ! -e "$BED/$role.$name" ]; then
			bed_fail "waiting for $role.$name: $role's script already exited $(cat "$BED/$role.rc") without signalling it"
		fi
		[ $SECONDS -lt $end ] || bed_fail "timed out after $secs s waiting for $role to signal $name"
		sleep 0.2
	done
}

bed_result() {
	[ $# -ge 2 ] || bed_fail "usage: bed_result KEY VALUE"
	local key=$1
	shift
	echo "$key $*" >>"$BED/results"
	bed_log "result: $key $*"
}

bed_wait_rdma_listen() {
	[ $# -ge 1 ] || bed_fail "usage: bed_wait_rdma_listen PORT [TIMEOUT [PID]]"
	local port=$1 secs pid=${3:-}
	secs=$(bed_secs "${2:-60}")
	local end=$((SECONDS + secs))

	# rdma_cm listeners are not sockets: ss cannot see them, but the
	# rdma tool lists every cm_id with its state and source port.
	# iproute2 prints "src-addr A:PORT" (older: "src-port PORT").
	until rdma resource show cm_id 2>/dev/null |
		grep -Eq "state LISTEN .*(src-port |src-addr [^ ]*:)$port( |\$)"; do
		[ $SECONDS -lt $end ] || bed_fail "no rdma_cm listener on port $port after $secs s"
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			bed_fail "process $pid exited before listening on rdma_cm port $port"
		fi
		sleep 0.1
	done
}

bed_systemd_up() {
	local state

	[ "$(</proc/1/comm)" = systemd ] ||
		bed_fail "PID 1 is $(</proc/1/comm), not systemd: is $FARSWAP_ROLE in SYSTEMD_ROLES?"
	state=$(systemctl is-system-running --wait) || true
	if [ "$state" != running ]; then
		systemctl --failed --no-pager || true
		bed_fail "systemd says the system is '$state', not running"
	fi
	bed_log "systemd is up: $(systemd-analyze time 2>&1 | head -n 1)"
}

check_kernel_log() {
	local patterns=$FARSWAP_SRC/tests/vm/bad-patterns.txt log bad rc=0

	log=$(dmesg) || bed_fail "check_kernel_log: dmesg failed"
	bad=$(grep -E -f <(grep -Ev '^(#|$)' "$patterns") <<<"$log") || rc=$?
	[ $rc -le 1 ] || bed_fail "check_kernel_log: grep failed (exit $rc)"
	if [ -n "$bad" ] && [ -n "${ALLOW_LOG_PATTERNS:-}" ]; then
		bad=$(grep -Ev -- "$ALLOW_LOG_PATTERNS" <<<"$bad" || true)
	fi
	if [ -n "$bad" ]; then
		bed_log "check_kernel_log: bad kernel log lines:"
		head -n 20 <<<"$bad" | sed 's/^/  >> /'
		return 1
	fi
	bed_log "check_kernel_log: clean"
}
