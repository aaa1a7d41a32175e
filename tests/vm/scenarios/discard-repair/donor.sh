#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# discard-repair, the first donor: dies last, after the repair.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 128M --slab-size 8M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host kill-donor 800
fs_kill_donor
bed_signal farswapd-killed
bed_wait host done 300
check_kernel_log
