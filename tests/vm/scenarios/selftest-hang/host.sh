#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
bed_log "selftest-hang: sleeping past the timeout on purpose"
sleep 1000
