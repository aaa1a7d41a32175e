#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# discard-repair, the second donor: dies, comes back empty, takes the
# copies.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 128M --slab-size 8M --headroom 32M --hysteresis 16M)
fs_start_donor "${args[@]}"
bed_signal ready
bed_wait host kill-donor2 300
fs_kill_donor
bed_signal farswapd-killed
bed_wait host restart-donor2 300
fs_start_donor "${args[@]}"
bed_signal farswapd-restarted
bed_wait host done 800
fs_stop_donor
check_kernel_log
