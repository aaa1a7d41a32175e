#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-keepalive, donor side: farswapd with a 2 s keepalive; watch an
# idle live host keep its slabs, then time how long a host whose link was
# cut keeps them.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

log=$BED/$FARSWAP_ROLE-farswapd.log
sock=/run/farswap/farswapd.sock
keepalive_s=2
# 2 s idle + a check up to 0.5 s late + 7 sends 2.15 s apart (15.03 s),
# plus slack for a loaded machine.
bound_s=30

stat_of() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }
counter() { grep -o "$1=[0-9]*" <<<"$2" | cut -d= -f2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

fs_start_donor --donate 64M --slab-size 4M --headroom 16M \
	--keepalive ${keepalive_s}s --log-level debug
grep -q "keepalive 2000 ms: a host gone without a word loses its slabs within 17.5 s" "$log" ||
	bed_fail "log: no keepalive bound at start: $(cat "$log")"
bed_signal ready

# 1. A live host, idle: probed every ~2 s, acknowledged, slabs kept.
bed_wait host a-ready 120
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
grep -Eq '^host [0-9]+ id host-a peer [0-9.]+:[0-9]+ slabs 3 ' <<<"$stats" ||
	bed_fail "stats: host-a does not hold 3 slabs: $stats"
ka0=$(counter keepalives "$stats")
bed_wait host a-done 120
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
ka1=$(counter keepalives "$stats")
bed_log "keepalive probes while host-a idled: $((ka1 - ka0))"
[ $((ka1 - ka0)) -ge 3 ] || bed_fail "want >= 3 keepalive probes to idle host-a, $((ka1 - ka0)) sent"
[ "$(counter keepalive_dead "$stats")" = 0 ] || bed_fail "a live host was taken for dead: $stats"
if grep -q 'host-a.*closing session: keepalive' "$log"; then
	bed_fail "log: host-a closed by the keepalive"
fi
bed_result daemon_keepalive.idle_host_probes $((ka1 - ka0))

# 2. A host whose link goes down: no disconnect ever arrives.
bed_wait host k-ready 120
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
grep -Eq '^host [0-9]+ id host-k peer [0-9.]+:[0-9]+ slabs 3 ' <<<"$stats" ||
	bed_fail "stats: host-k does not hold 3 slabs: $stats"
[ "$(stat_of slabs_used "$stats")" = 3 ] || bed_fail "want 3 slabs used: $stats"
bed_signal k-seen
bed_wait host cut 60
t0=$(now_ms)
freed=
while [ $(($(now_ms) - t0)) -lt $((bound_s * 1000 + 30000)) ]; do
	stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
	if [ "$(stat_of slabs_used "$stats")" = 0 ] && grep -q '^hosts 0$' <<<"$stats"; then
		freed=$(($(now_ms) - t0))
		break
	fi
	sleep 0.25
done
[ -n "$freed" ] || bed_fail "host-k's slabs still held $((bound_s + 30)) s after its link was cut: $stats"
secs=$((freed / 1000)).$((freed % 1000 / 100))
bed_log "host-k's 3 slabs freed ${secs} s after its link was cut"
bed_result daemon_keepalive.dead_host_freed_s "$secs"
[ "$freed" -le $((bound_s * 1000)) ] || bed_fail "freed after ${secs} s, bound ${bound_s} s"
[ "$(stat_of slabs_free "$stats")" = 16 ] || bed_fail "not all slabs free: $stats"
[ "$(counter keepalive_dead "$stats")" = 1 ] || bed_fail "want keepalive_dead=1: $stats"
# Said once, with the host's id and address, and what it cost.
n=$(grep -c 'closing session: keepalive: no answer to the probe' "$log" || true)
[ "$n" -eq 1 ] || bed_fail "log: want one keepalive close, found $n"
grep -Eq "host [0-9]+ \(host-k, $FARSWAP_PEER_host:[0-9]+\): closing session: keepalive: no answer to the probe sent after [0-9.]+ s idle, [0-9.]+ s ago \(transport retry counter exceeded\); host presumed gone, freeing its 3 slabs" "$log" ||
	bed_fail "log: the keepalive close does not name host-k, its address and its 3 slabs: $(grep 'closing session' "$log")"
grep 'closing session: keepalive' "$log" | sed 's/^/  /'
bed_signal done

fs_stop_donor
check_kernel_log
