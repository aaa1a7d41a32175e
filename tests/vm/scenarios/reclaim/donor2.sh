#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reclaim, the donor with room: takes the slabs the other one gives up.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

avail_mb() { awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo; }

# A short reclaim deadline: requests keep coming while the host detaches.
fs_start_donor --donate 320M --slab-size 16M --headroom 96M --hysteresis 16M \
	--reclaim-deadline 3s --pressure-interval 1s
bed_signal ready

# Once the host swapped off, come under pressure: ask for slabs back.
bed_wait host swapped-off 1500
free=$("$FS_FARSWAPD" --stats | awk '$1 == "slabs_free" { print $2 }')
# Below the headroom once its free slabs went back, not starved: a guest
# without swap and without MemAvailable stalls whole (soft lockups).
hog=$(($(avail_mb) - 96 + free * 16 + 24))
bed_log "a local process takes ${hog} MiB"
"$FS_PAGEVERIFY" --mb "$hog" --procs 1 --no-fork --hold >"$BED/donor2-hog.log" 2>&1 &
hog_pid=$!
bed_wait host detached 600
fs_no_host_left
for pid in $(sed -n 's/^HOLD //p' "$BED/donor2-hog.log"); do kill -USR1 "$pid"; done
wait "$hog_pid" || bed_fail "the memory hog's own pages did not verify"
bed_wait host done 600
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
