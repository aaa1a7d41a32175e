#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stage, the donor that stays.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 64M --slab-size 4M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host done 560
fs_stop_donor
check_kernel_log
