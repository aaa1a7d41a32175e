#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-latency, a donor (the host cuts the first one's power).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 320M --slab-size 16M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host done 1200
fs_stop_donor
check_kernel_log
