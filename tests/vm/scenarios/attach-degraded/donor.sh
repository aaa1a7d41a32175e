#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-degraded, donor: up from the start; stopped once (SIGTERM: its
# slabs go, as a donor lost) after the host re-replicated onto donor2,
# then started again for farswap-swap.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 192M --slab-size 16M --headroom 32M --hysteresis 16M)
fs_start_donor "${args[@]}"
bed_signal ready
bed_wait host stop-donor 1200
fs_stop_donor
bed_signal stopped
bed_wait host start-donor 600
fs_start_donor "${args[@]}"
bed_signal started
bed_wait host done 900
fs_stop_donor
check_kernel_log
