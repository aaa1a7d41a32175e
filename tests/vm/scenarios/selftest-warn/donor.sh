#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
echo "<4>WARNING: CPU: 0 PID: 1 at selftest" >/dev/kmsg
if check_kernel_log; then
	bed_fail "check_kernel_log missed the warning"
fi
# Exit 0: only the bed's own scan of the console may fail this run.
