#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-pressure, donor side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

log=$BED/$FARSWAP_ROLE-farswapd.log
sock=/run/farswap/farswapd.sock
headroom_mb=200

# What farswapd counts as available: MemAvailable plus the free pages on
# the per-CPU lists (/proc/zoneinfo), where memory just given back waits,
# for seconds, before MemAvailable shows it.
avail_mb() {
	awk '/^MemAvailable:/ { a = $2 * 1024 } $1 == "count:" { p += $2 * 4096 }
	     END { print int((a + p) / 1048576) }' /proc/meminfo /proc/zoneinfo
}
stat_of() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }

fs_start_donor --donate 128M --slab-size 4M --headroom ${headroom_mb}M \
	--hysteresis 32M --pressure-interval 500ms --reclaim-deadline 5s \
	--log-level debug
bed_log "farswapd up: 32 slabs of 4M, headroom ${headroom_mb}M, available $(avail_mb)M"
bed_signal ready

# The host holds 24 slabs, 8 are free.
bed_wait host slabs-written 120
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
[ "$(stat_of slabs_used "$stats")" = 24 ] || bed_fail "want 24 slabs used: $stats"
grep -q '^pressure no$' <<<"$stats" || bed_fail "under pressure before the hog"

# Eat memory until the available memory is 44M (11 slabs) below the
# headroom: the 8 free slabs go back to the OS first, the other 3 must be
# reclaimed.
mkdir -p /run/hog
mount -t tmpfs -o size=480M hog /run/hog
a=$(avail_mb)
hog=$((a - headroom_mb + 44))
bed_log "available ${a}M: writing a ${hog}M tmpfs file"
dd if=/dev/zero of=/run/hog/hog bs=1M count=$hog status=none
low=$(avail_mb)
bed_log "available now ${low}M"

# The host acks (after re-reading each slab); wait for it to say so.
bed_wait host reclaimed 120
for ((i = 0; i < 20; i++)); do
	stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
	[ "$(stat_of slabs_reclaiming "$stats")" = 0 ] && break
	sleep 0.5
done
echo "$stats" | sed 's/^/  stats: /'
# (Pressure may be over already: what came back can exceed the deficit.)
grep -q 'memory pressure: MemAvailable' "$log" || bed_fail "log: pressure never started"
released=$(stat_of slabs_released "$stats")
[ "$released" -ge 10 ] || bed_fail "want >= 10 slabs released (8 free + 2 reclaimed), have $released"
# Free slabs go first: all 8 released before the first RECLAIM_REQ.
freed_first=$(awk '/RECLAIM_REQ slab/ { exit } match($0, /released [0-9]+ free slabs/) { split(substr($0, RSTART, RLENGTH), w, " "); n += w[2] } END { print n + 0 }' "$log")
[ "$freed_first" = 8 ] || bed_fail "log: $freed_first free slabs released before the first RECLAIM_REQ, want 8"
nreq=$(grep -c 'RECLAIM_REQ slab' "$log" || true)
nok=$(grep -c 'gave back slab .*memory returned to the OS' "$log" || true)
[ "$nreq" -ge 2 ] || bed_fail "want >= 2 RECLAIM_REQ, log has $nreq"
[ "$nok" -ge 2 ] || bed_fail "want >= 2 acked reclaims, log has $nok"
# It converges on the shortfall (11 slabs: the 8 free, then 3 held), give
# or take the guest's own memory noise, instead of asking again at every
# check while what it gave back does not show in MemAvailable yet.
[ "$released" -le 13 ] ||
	bed_fail "over-reclaim: $released slabs given back ($nreq reclaim requests) for an 11-slab shortfall"
# Nothing freed before its request: each "gave back slab N" comes after
# "RECLAIM_REQ slab N".
grep -n -E 'RECLAIM_REQ slab|gave back slab' "$log" | awk '
	/RECLAIM_REQ slab/ { match($0, /slab [0-9]+/); req[substr($0, RSTART + 5, RLENGTH - 5)] = 1 }
	/gave back slab/ { match($0, /slab [0-9]+/); s = substr($0, RSTART + 5, RLENGTH - 5)
			   if (!(s in req)) { print "slab " s " freed without a request"; bad = 1 } }
	END { exit bad }' || bed_fail "log: a slab was freed without a reclaim request"
# Without the donor, the available memory would now be about a - hog;
# each released 4M slab must show (allowing a quarter for noise).
after=$(avail_mb)
gain=$((after - (a - hog)))
bed_log "available ${a}M - ${hog}M hog = $((a - hog))M expected without the donor; ${after}M now: ${gain}M back from $released slabs"
[ "$gain" -ge $((released * 3)) ] ||
	bed_fail "available memory gained only ${gain}M for $released released slabs: memory not returned"
bed_result daemon_pressure.slabs_released "$released"
bed_result daemon_pressure.reclaim_requests "$nreq"
bed_result daemon_pressure.memavail_gain_mb "$gain"

# Memory comes back: farswapd takes slabs back and offers them.
rm -f /run/hog/hog
bed_log "hog removed, available $(avail_mb)M"
bed_wait host done 120
grep -q 'memory pressure over' "$log" || bed_fail "log: pressure never ended"
grep -q 'took [0-9]* slabs back from the OS' "$log" || bed_fail "log: slabs not taken back"
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
echo "$stats" | sed 's/^/  stats: /'
grep -Eq 'notices=[1-9]' <<<"$stats" || bed_fail "no unsolicited STATS_REP sent"

# The fair share (host.sh): host-a over its share is asked, never revoked.
bed_signal calm
bed_wait host fair-done 180
stats=$("$FS_FARSWAPD" --stats --stats-socket "$sock")
fair=$(grep -o 'fair_reclaims=[0-9]*' <<<"$stats" | cut -d= -f2)
bed_result daemon_pressure.fair_reclaims "$fair"
[ "${fair:-0}" -ge 8 ] || bed_fail "want >= 8 slabs asked back for the fair share: $stats"
grep -q 'over its fair share by 16 slabs while another host waits' "$log" ||
	bed_fail "log: host-a not asked for its excess"
grep -Eq 'revoked_slabs=0( |$)' <<<"$stats" || bed_fail "a slab was revoked for the fair share"

fs_stop_donor
umount /run/hog
check_kernel_log
