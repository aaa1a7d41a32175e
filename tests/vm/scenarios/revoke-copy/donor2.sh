#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# revoke-copy, the donor with room: dead while the host writes (so that
# every chunk is on the other donor), back, empty, before the reclaim.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 64M --slab-size 16M --headroom 64M)
fs_start_donor "${args[@]}"
bed_signal ready
bed_wait host kill-farswapd 120
fs_kill_donor
bed_signal farswapd-killed
bed_wait host restart-farswapd 600
fs_start_donor "${args[@]}"
bed_wait host done 900
fs_stop_donor
check_kernel_log
