#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A donor of the two-donor scenarios: donate until the host is done.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 256M --slab-size 16M --headroom 48M --hysteresis 16M
bed_signal ready
bed_wait host done 1500
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
