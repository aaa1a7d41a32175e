#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-window, donor side: killed while the host's attach pauses.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 64M --slab-size 16M)
fs_start_donor "${args[@]}"
bed_signal ready
bed_wait host paused 120
fs_kill_donor
bed_signal killed
bed_wait host attached 120
fs_start_donor "${args[@]}"
bed_signal restarted
bed_wait host done 300
fs_stop_donor
check_kernel_log
