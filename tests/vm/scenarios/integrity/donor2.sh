#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# integrity, the donor whose memory stays sound (the second replica).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 160M --slab-size 16M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host done 1500
fs_stop_donor
check_kernel_log
