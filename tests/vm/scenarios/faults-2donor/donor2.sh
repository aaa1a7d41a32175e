#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-2donor, the donor that stays up.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 192M --slab-size 16M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host done 1500
fs_no_host_left
fs_stop_donor
check_kernel_log
