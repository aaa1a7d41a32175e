#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
insmod "$BED_TEST_KO" mode=slab || bed_fail "insmod $BED_TEST_KO mode=slab failed"
# SLUB checks a free object's poison when it hands the object out again
# or when the cache is validated: validate, so the check does not wait
# for an allocation that may never come.  (KASAN has reported already.)
validate=/sys/kernel/slab/memdebug_selftest/validate
[ -e "$validate" ] || bed_fail "no $validate"
echo 1 >"$validate"
rmmod memdebug_selftest || bed_fail "rmmod memdebug_selftest failed"
bed_log "wrote after free and validated the cache"
