#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stay up until the host has pinged us.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

bed_signal ready
bed_wait host "done" 90
check_kernel_log
