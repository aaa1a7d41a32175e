#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# switch-window, the donor holding the other replicas: killed while the
# host's switch waits.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 64M --slab-size 16M --headroom 64M
bed_signal ready
bed_wait host kill-farswapd 900
fs_kill_donor
bed_signal farswapd-killed
bed_wait host done 600
check_kernel_log
