#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
echo "<4>WARNING: CPU: 0 PID: 1 at selftest, allowed by selftest-warn" >/dev/kmsg
check_kernel_log || bed_fail "check_kernel_log ignored ALLOW_LOG_PATTERNS"
