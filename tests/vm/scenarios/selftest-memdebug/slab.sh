#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
insmod "$BED_TEST_KO" mode=slab || bed_fail "insmod $BED_TEST_KO mode=slab failed"
# SLUB checks a free object's poison when it hands the object out again
# or when the cache is validated: validate, so the check does not wait
# for an allocation that may never come.  The debug kernel boots without
# slub_debug (KASAN has reported already): validate then refuses, EINVAL.
validate=/sys/kernel/slab/memdebug_selftest/validate
[ -e "$validate" ] || bed_fail "no $validate"
if ! echo 1 2>/dev/null >"$validate"; then
	dmesg | bed_grep "KASAN: slab-use-after-free" ||
		bed_fail "the cache cannot be validated (no slub_debug) and KASAN saw nothing"
fi
rmmod memdebug_selftest || bed_fail "rmmod memdebug_selftest failed"
bed_log "wrote after free and validated the cache"
