#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-degraded, donor2: its farswapd starts only when the host says
# (the host attached without it); later stopped and started again while
# farswap-swap waits for it.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 192M --slab-size 16M --headroom 32M --hysteresis 16M)
bed_signal ready
bed_wait host start-donor2 900
fs_start_donor "${args[@]}"
bed_signal started
bed_wait host stop-donor2 1200
fs_stop_donor
bed_signal stopped
bed_wait host start-donor2-again 600
fs_start_donor "${args[@]}"
bed_signal started-again
bed_wait host done 900
fs_stop_donor
check_kernel_log
