#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# connect-storm, donor side: farswapd with the key and the default
# pre-authentication deadline; its counters after each storm.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

sock=/run/farswapd-storm.sock
counter() {
	"$FS_FARSWAPD" --stats --stats-socket "$sock" |
		tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'
}

# The bed's slow-guest allowances, then the defaults back for what this
# scenario measures: a keyless connect holds its place 2 s at most.
fs_start_donor --donate 64M --slab-size 4M --headroom 16M --hysteresis 8M \
	--stats-socket "$sock" --auth-timeout 2s --log-level notice
bed_signal ready

for phase in one many; do
	bed_wait host "$phase-done" 300
	"$FS_FARSWAPD" --stats --stats-socket "$sock" | sed "s/^/  $phase: farswapd: /"
	echo "$(counter auth_ok) $(counter unauth_evicted) $(counter refused_connect_rate) $(counter auth_timeouts)" \
		>"$BED/$phase.counters"
	bed_signal "$phase-counted"
done

read -r ok evicted rate timeouts <"$BED/many.counters"
read -r ok1 evicted1 rate1 timeouts1 <"$BED/one.counters"
bed_log "after one address: auth_ok=$ok1 unauth_evicted=$evicted1 refused_connect_rate=$rate1 auth_timeouts=$timeouts1"
bed_log "after many: auth_ok=$ok unauth_evicted=$evicted refused_connect_rate=$rate auth_timeouts=$timeouts"
# Each phase: the host with the key, and nobody else, proved the key.
[ "$ok1" -eq 2 ] && [ "$ok" -eq 3 ] ||
	bed_fail "auth_ok $ok1 then $ok: want 2 then 3 (the keyed host's sessions, no storm connect)"
# One address: connect-rate refused most before anything was set up, and
# the address's own connects made way for each other.
[ "$rate1" -ge 100 ] || bed_fail "refused_connect_rate $rate1 after 200 connects from one address: want most of them"
[ "$evicted1" -ge 1 ] || bed_fail "unauth_evicted $evicted1 after the one-address storm: want its connects making way"
# Many addresses: the table full, each new connect closed the oldest.
[ "$evicted" -gt $((evicted1 + 100)) ] ||
	bed_fail "unauth_evicted went from $evicted1 to $evicted over 200 connects from 32 addresses: want the oldest making way"
grep -q "exited cleanly" "$BED/$FARSWAP_ROLE-farswapd.log" && bed_fail "farswapd exited"
fs_stop_donor
check_kernel_log
