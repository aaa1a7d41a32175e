# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# One-shot rdma_cm servers on a donor and their clients on the host, with
# retries.  Sourced by rdma-rw's host.sh and donor.sh (after guest-lib.sh).
#
# Why retries: on this bed a client's rdma_connect is now and then
# rejected (RDMA_CM_EVENT_REJECTED, reason 8 = invalid service ID) although
# the server's listener is up, and a second connect to the same listener
# then hangs.  Seen with perftest on both kernels, far more often when the
# machine is loaded.  So every attempt gets a fresh server on a fresh port,
# and the number of retries is reported as a result.
#
# Protocol, through /bed, for server NAME and attempt N (port BASE+N-1):
#   donor: <donor>.NAME-ready-N   server N listens
#   host:  <host>.<donor>.NAME-ok-N     client N succeeded: server N may end
#          <host>.<donor>.NAME-retry-N  client N failed: kill server N, start N+1

RDMA_ATTEMPTS=4

# rdma_serve NAME BASEPORT CMD...: serve one client of CMD (which gets
# "-p PORT" appended) until the host says it succeeded.
rdma_serve() {
	local name=$1 base=$2 hub=${FARSWAP_ROLES%% *} attempt port pid log
	shift 2
	for ((attempt = 1; attempt <= RDMA_ATTEMPTS; attempt++)); do
		port=$((base + attempt - 1))
		log=$BED/$FARSWAP_ROLE.$name.$attempt.log
		"$@" -p "$port" >"$log" 2>&1 &
		pid=$!
		if ! (bed_wait_rdma_listen "$port" 30 "$pid"); then
			kill "$pid" 2>/dev/null || true
			bed_fail "$name server did not come up: $(cat "$log")"
		fi
		bed_signal "$name-ready-$attempt"
		while :; do
			if [ -e "$BED/$hub.$FARSWAP_ROLE.$name-ok-$attempt" ]; then
				wait "$pid" || bed_fail "$name server failed: $(cat "$log")"
				bed_log "$name server done (attempt $attempt)"
				return 0
			fi
			if [ -e "$BED/$hub.$FARSWAP_ROLE.$name-retry-$attempt" ]; then
				kill "$pid" 2>/dev/null || true
				wait "$pid" || true
				break
			fi
			[ ! -e "$BED/$hub.rc" ] || bed_fail "$name: $hub's script ended"
			sleep 0.2
		done
	done
	bed_fail "$name: the host gave up after $RDMA_ATTEMPTS attempts"
}

# rdma_connect PEER NAME BASEPORT CMD...: run the client CMD (with
# "-p PORT" appended) against PEER's server NAME; its output goes to
# stdout.  The number of failed attempts is reported as a result.
rdma_connect() {
	local peer=$1 name=$2 base=$3 attempt out
	shift 3
	for ((attempt = 1; attempt <= RDMA_ATTEMPTS; attempt++)); do
		bed_wait "$peer" "$name-ready-$attempt" 90
		if out=$(timeout 60 "$@" -p $((base + attempt - 1)) 2>&1); then
			bed_signal "$peer.$name-ok-$attempt"
			bed_result "$peer.${name}_connect_retries" $((attempt - 1)) >&2
			echo "$out"
			return 0
		fi
		bed_log "$name to $peer failed (attempt $attempt): $(grep -m1 -E 'Event:|error|fail' <<<"$out")" >&2
		bed_signal "$peer.$name-retry-$attempt"
	done
	bed_fail "$name to $peer failed $RDMA_ATTEMPTS times; last output: $out"
}
