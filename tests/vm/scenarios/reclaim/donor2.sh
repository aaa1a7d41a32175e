#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reclaim, the donor with room: takes the slabs the other one gives up.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/reclaim/hog.sh"

# A short reclaim deadline: requests keep coming while the host detaches.
args=(--donate 320M --slab-size 16M --headroom 96M --hysteresis 16M
      --reclaim-deadline 3s --pressure-interval 1s)
fs_start_donor "${args[@]}"
bed_signal ready

# Dead while the host fills the other donor, back before that one runs
# short: the chunks it gives up then have only this donor to go to.
bed_wait host kill-farswapd 120
fs_kill_donor
bed_signal farswapd-killed
bed_wait host restart-farswapd 1200
fs_start_donor "${args[@]}"

# Once the host swapped off, come under pressure: ask for slabs back.
bed_wait host swapped-off 1500
hog_until_reclaim detach 300
bed_wait host detached 600
fs_no_host_left
hog_release detach
bed_wait host done 600
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
