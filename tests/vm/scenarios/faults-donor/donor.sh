#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-donor, donor side: die when told, come back when told.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 256M --slab-size 16M --headroom 48M --hysteresis 16M)
fs_start_donor "${args[@]}"
bed_signal ready

# 1. farswapd dies: the kernel closes its connections.
bed_wait host kill-farswapd 600
fs_kill_donor
bed_signal farswapd-killed
sleep 5
fs_start_donor "${args[@]}"
bed_signal farswapd-restarted

# 2. The link goes dark: packets vanish, nothing is closed.
bed_wait host link-down 600
bed_link_dark eth0
bed_log "eth0 dark"
bed_wait host donor-failed 120
sleep 2
bed_link_light eth0
bed_log "eth0 carries packets again"
bed_signal link-up

bed_wait host done 600
fs_stop_donor
check_kernel_log
