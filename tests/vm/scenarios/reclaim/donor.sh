#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reclaim, the donor that comes under pressure: once the host's pages are
# on it, local processes take memory until MemAvailable is below the
# headroom, and farswapd must get slabs back without losing a page.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/reclaim/hog.sh"

# A deadline ample for the copies (a debug kernel's take minutes): this
# scenario moves every page, a revoke would be its failure.
fs_start_donor --donate 192M --slab-size 16M --headroom 160M --hysteresis 32M \
	--reclaim-deadline "$(bed_secs 60)s" --pressure-interval 1s
log=$BED/donor-farswapd.log
bed_signal ready

bed_wait host filled 1000
# The slab asked back may be the host's spare, empty (a slab taken ahead
# of its writes): that moves nothing and ends the shortage.  So the
# pressure stays on, request after request, until the host has moved
# chunks.
hog_until_reclaim pressure 300
while [ ! -e "$BED/host.moved" ]; do
	hog_until_reclaim pressure 300 "$BED/host.moved"
done
bed_wait host moved 600
grep -i "reclaim" "$log" | sed 's/^/  farswapd: /' | head -n 20
# The host swaps off: room again, for the chunks the other donor gives up.
bed_wait host swapped-off 600
hog_release pressure
bed_wait host done 600
fs_no_host_left
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
