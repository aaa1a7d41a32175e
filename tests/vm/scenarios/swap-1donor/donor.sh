#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-1donor, donor side: donate 384 MiB in 16 MiB slabs until the host
# is done, then check farswapd frees everything on SIGTERM.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 384M --slab-size 16M --headroom 64M --hysteresis 32M
bed_signal ready
bed_wait host done 1500
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
check_kernel_log
