#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
# mode=page writes after free, allocates pages until it gets that one
# back (page_poison checks it then), and refuses to load (-EAGAIN):
# nothing stays loaded.
if insmod "$BED_TEST_KO" mode=page; then
	bed_fail "insmod mode=page loaded: the module should have refused"
fi
bed_log "wrote into a freed page and allocated it again"
