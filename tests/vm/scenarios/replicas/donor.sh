#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas, a donor (the host cuts the power of the first two midway).
# $1: its failure domain (donor and donor2: rackA, donor3: rackB); with
# $2 "pause", farswapd is stopped and continued when the host says.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 160M --slab-size 16M --headroom 32M --hysteresis 16M \
	--failure-domain "${1:-rackA}"
bed_signal ready
# farswapd tells its domain in --stats and --stats --json.
"$FS_FARSWAPD" --stats | bed_grep -x "failure_domain ${1:-rackA}" ||
	bed_fail "farswapd --stats does not show failure domain ${1:-rackA}"
"$FS_FARSWAPD" --stats --json | bed_grep "\"failure_domain\": \"${1:-rackA}\"" ||
	bed_fail "farswapd --stats --json does not show failure domain ${1:-rackA}"
if [ "${2:-}" = pause ]; then
	bed_wait host stop-farswapd 600
	kill -STOP "$FS_DONOR_PID"
	bed_log "farswapd stopped"
	bed_signal farswapd-stopped
	bed_wait host cont-farswapd 900
	kill -CONT "$FS_DONOR_PID"
	bed_log "farswapd continued"
fi
bed_wait host done 1500
fs_stop_donor
check_kernel_log
