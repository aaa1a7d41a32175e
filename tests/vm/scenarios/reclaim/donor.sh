#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reclaim, the donor that comes under pressure: once the host's pages are
# on it, a local process takes memory until MemAvailable is below the
# headroom, and farswapd must get slabs back without losing a page.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

avail_mb() { awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo; }

fs_start_donor --donate 192M --slab-size 16M --headroom 160M --hysteresis 32M \
	--reclaim-deadline 60s --pressure-interval 1s
log=$BED/donor-farswapd.log
bed_signal ready

bed_wait host filled 1000
# farswapd first gives free slabs back to the OS; to make it reclaim held
# ones, take all of that slack and 40 MiB more than the headroom allows.
before=$(avail_mb)
free=$("$FS_FARSWAPD" --stats | awk '$1 == "slabs_free" { print $2 }')
hog=$((before - 160 + free * 16 + 40))
bed_log "MemAvailable ${before} MiB, $free free slabs: a local process takes ${hog} MiB"
"$FS_PAGEVERIFY" --mb "$hog" --procs 1 --no-fork --hold >"$BED/donor-hog.log" 2>&1 &
hog_pid=$!
bed_wait host moved 600
bed_log "MemAvailable now $(avail_mb) MiB"
grep -i "reclaim" "$log" | sed 's/^/  farswapd: /' | head -n 20
# The host swaps off: room again, for the chunks the other donor gives up.
bed_wait host swapped-off 600
for pid in $(sed -n 's/^HOLD //p' "$BED/donor-hog.log"); do kill -USR1 "$pid"; done
wait "$hog_pid" || bed_fail "the memory hog's own pages did not verify"
bed_wait host done 600
fs_no_host_left
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
