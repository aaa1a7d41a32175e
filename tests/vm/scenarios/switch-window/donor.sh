#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# switch-window, the donor that runs short and asks a slab back (never
# revoking it: the chunks that stay must stay readable).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/reclaim/hog.sh"

fs_start_donor --donate 64M --slab-size 16M --headroom 160M \
	--hysteresis 8M --pressure-interval 500ms --reclaim-deadline 60s \
	--revoke-after 0
bed_signal ready
bed_wait host written 600
hog_until_reclaim pressure 300
bed_wait host done 600
hog_release pressure
fs_stop_donor
check_kernel_log
