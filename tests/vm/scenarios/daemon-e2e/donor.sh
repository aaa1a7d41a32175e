#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-e2e, donor side: run farswapd with small slabs, check its stats
# and log while the host's clients work and misbehave, then SIGTERM it.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

fsd=$FARSWAP_SRC/daemon/farswapd
log=$BED/$FARSWAP_ROLE-farswapd.log
sock=/run/farswap/farswapd.sock

avail() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

# Part of the settings come from a config file, and a flag overrides one
# of them (slab-size: 8M in the file, 4M on the command line).
conf=/tmp/farswapd.conf
cat >"$conf" <<EOF_CONF
# daemon-e2e
donate = 64M
slab_size 8M
headroom 32M
hysteresis=16M
reclaim-deadline "5s"
log-level debug
key-file = /run/farswap-bed.key
# Limits a hostile host meets (host-q, host-d, host-f); the flood from
# one address meets max-unauthenticated-per-address's default (2) first.
max-slabs-per-host 4
max-queue-depth 128
max-unauthenticated 3
max-sessions-per-address 8
handshake-timeout 8s
auth-timeout 8s
EOF_CONF
# The run's key, readable by root alone (farswapd refuses any other).
install -m 600 "$BED/bed.key" /run/farswap-bed.key
before=$(avail)
"$fsd" --config "$conf" --listen "$FARSWAP_ADDR" --slab-size 4M \
	--donor-id e2e-donor >"$log" 2>&1 &
pid=$!
bed_wait_rdma_listen 7471 60 $pid
pinned=$(avail)
bed_log "farswapd up (pid $pid); MemAvailable ${before} kB -> ${pinned} kB"
# Most of it, not all: the page cache moves under MemAvailable meanwhile
# (seen: 59.9 of 64 MiB); memory that is not pinned would not show at all.
[ $((before - pinned)) -ge $((48 * 1024)) ] ||
	bed_fail "64M donated but MemAvailable fell only $((before - pinned)) kB: not pinned?"
bed_signal ready

# While client A holds its slabs (and the abuse is over): stats.
bed_wait host abuse-done 200
# The abusive sessions' disconnects may still be on their way.
for ((i = 0; i < 50; i++)); do
	stats=$("$fsd" --stats --stats-socket "$sock") || bed_fail "farswapd --stats failed"
	grep -q '^hosts 1$' <<<"$stats" && break
	sleep 0.2
done
echo "$stats" | sed 's/^/  stats: /'
grep -q '^slabs_total 16$' <<<"$stats" || bed_fail "stats: slabs_total is not 16"
grep -q '^slabs_used 4$' <<<"$stats" || bed_fail "stats: want 4 slabs used by host-a"
grep -Eq '^host [0-9]+ id host-a peer [0-9.]+:[0-9]+ slabs 4 bytes 16777216 ' <<<"$stats" ||
	bed_fail "stats: no line for host-a with 4 slabs"
grep -q '^hosts 1$' <<<"$stats" || bed_fail "stats: the abusive sessions are not all gone"
grep -q '^slab_size 4194304$' <<<"$stats" || bed_fail "stats: the --slab-size flag did not override the file"
kill -USR1 $pid
# SIGHUP re-reads the file: a live key changes, a restart-only one is named.
# host-c takes all 16 slabs later: the per-host share goes up with it.
sed -i 's/^headroom 32M/headroom 24M/; s/^donate = 64M/donate = 60M/; s/^max-slabs-per-host 4/max-slabs-per-host 16/' "$conf"
kill -HUP $pid
for ((i = 0; i < 50; i++)); do
	grep -q "reloaded $conf" "$log" && break
	sleep 0.1
done
grep -q "reloaded $conf" "$log" || bed_fail "log: SIGHUP did not reload the config"
grep -q "take effect after a restart" "$log" || bed_fail "log: SIGHUP did not say donate needs a restart"
bed_signal stats-done

bed_wait host done 200
stats=$("$fsd" --stats --stats-socket "$sock")
grep -q '^slabs_free 16$' <<<"$stats" || bed_fail "after the hosts left: not all slabs free: $stats"

# Every kind of abuse was logged, once, with the peer's address.
for why in "bad magic" "length 15 outside" "length 164 outside" "too long for a receive buffer of 256 bytes" \
	"unknown message type 42" "version 2, session speaks 1" "length field 17" \
	"reserved bytes set" "RECLAIM_REQ is only sent by a donor"; do
	n=$(grep -c "closing session: .*$why" "$log" || true)
	[ "$n" -eq 1 ] || bed_fail "log: want one 'closing session: ... $why', found $n"
done
grep -Eq 'host [0-9]+ \(host-m, [0-9.]+:[0-9]+\): closing session: bad message' "$log" ||
	bed_fail "log: bad message closes do not name the host and its address"
grep -q "rejected: no protocol version in common" "$log" || bed_fail "log: version reject missing"
grep -q "rejected: no session with that token" "$log" || bed_fail "log: bad token reject missing"
grep -q "rejected: session token belongs to another host" "$log" || bed_fail "log: intruder reject missing"
grep -q "rejected: I/O queue id already connected" "$log" || bed_fail "log: duplicate qid reject missing"
grep -q "stats: host" "$log" || bed_fail "log: SIGUSR1 did not dump the stats"
# The limits held, each said once with the host it held back.
grep -q "(host-q, .*SLAB_ALLOC_REQ refused (no free slab): its host holds 4 slabs, max-slabs-per-host 4 (host id claimed)" "$log" ||
	bed_fail "log: host-q's slab over max-slabs-per-host not refused"
grep -q "limits: max-slabs-per-host 4 of 16 slabs, alloc-rate 1024/s burst 4096, connect-rate 10/s burst 20 per address, max-unauthenticated 3 (2 per address)" "$log" ||
	bed_fail "log: the limits at start (alloc-rate auto for 4M slabs, connect-rate's default) not said"
grep -Eq "host [0-9]+ \(host-a, [0-9.]+:[0-9]+\): authenticated \(hmac-sha256\) with the shared key-file /run/farswap-bed.key: host id claimed, not proven" "$log" ||
	bed_fail "log: host-a's authentication does not name the key-file it proved"
grep -q "(host-d, .*queue depth 1000000 cut to 128 (max-queue-depth)" "$log" ||
	bed_fail "log: host-d's queue depth not cut"
n=$(grep -c "rejected: too many sessions not authenticated yet (max-unauthenticated)" "$log" || true)
[ "$n" -eq 0 ] || bed_fail "log: $n flood connects refused for max-unauthenticated: a full table must make room"
n=$(grep -c "rejected: .*(connect-rate)" "$log" || true)
[ "$n" -eq 0 ] || bed_fail "log: $n connects refused for connect-rate: the clients' pace is well under 10 a second"
"$fsd" --stats --stats-socket "$sock" | bed_grep " unauth_evicted=3 unauth_evicted_per_address=3" ||
	bed_fail "--stats does not count the 3 flood sessions that made way for their own address's (unauth_evicted, unauth_evicted_per_address)"
n=$(grep -c "(host-f, .*closing session: not authenticated after [0-9]* ms: its place goes to a new connect (max-unauthenticated-per-address)" "$log" || true)
[ "$n" -eq 3 ] || bed_fail "log: want the 3 flood sessions that made way logged, found $n"
n=$(grep -c "(host-f, .*closing session: not authenticated within 8000 ms (handshake-timeout)" "$log" || true)
[ "$n" -eq 2 ] || bed_fail "log: want 2 flood sessions closed at handshake-timeout, found $n"

kill -TERM $pid
rc=0
wait $pid || rc=$?
[ $rc -eq 0 ] || bed_fail "farswapd exited $rc on SIGTERM"
grep -q "exited cleanly" "$log" || bed_fail "log: no clean exit"
[ ! -e "$sock" ] || bed_fail "stats socket left behind"
after=$(avail)
bed_log "farswapd exited 0; MemAvailable ${pinned} kB -> ${after} kB"
[ $((after - pinned)) -ge $((60 * 1024)) ] ||
	bed_fail "MemAvailable grew only $((after - pinned)) kB after exit: memory not freed"
bed_result daemon_e2e.memavail_returned_kB $((after - pinned))
check_kernel_log
