#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stage, the donor whose power is cut while the host's writes are staged.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_start_donor --donate 64M --slab-size 4M --headroom 32M --hysteresis 16M
bed_signal ready
bed_wait host cut 400
fs_kill_donor
bed_signal cut-done
bed_wait host done 560
check_kernel_log
