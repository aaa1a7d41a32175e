#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# drain, the donor taken out of service: farswapd --drain --wait until
# "safe to stop", then stopped.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

# A deadline ample for the copies (a debug kernel's take minutes).
fs_start_donor --donate 256M --slab-size 16M --reclaim-deadline "$(bed_secs 60)s" \
	--pressure-interval 1s --revoke-after 1
log=$BED/donor-farswapd.log
bed_signal ready

bed_wait host filled 1000
out=$BED/donor-drain.out
t0=$SECONDS
rc=0
"$FS_FARSWAPD" --config /dev/null --drain --wait --timeout "$(bed_secs 600)s" \
	>"$out" 2>&1 || rc=$?
sed 's/^/  drain: /' "$out"
bed_result drain.wait_s $((SECONDS - t0))
[ "$rc" = 0 ] || bed_fail "farswapd --drain --wait exited $rc"
grep -q '^drained: no host holds a slab here; safe to stop' "$out" ||
	bed_fail "no 'safe to stop' from farswapd --drain --wait"
stats=$("$FS_FARSWAPD" --stats)
sed 's/^/  farswapd: /' <<<"$stats"
grep -qx 'drain drained' <<<"$stats" || bed_fail "--stats does not say drained"
grep -qx 'slabs_used 0' <<<"$stats" || bed_fail "slabs still held after the drain"
grep -q ' revoked_slabs=0 ' <<<"$stats" || bed_fail "slabs revoked during the drain"
"$FS_FARSWAPD" --stats --json | bed_grep '"state": "drained"' ||
	bed_fail "--stats --json does not say drained"
# Granting nothing while drained: the host was told 0 free.
grep -q 'drain asked by uid 0' "$log" || bed_fail "the drain was not logged"
grep -q 'drained: no host holds a slab here; safe to stop' "$log" ||
	bed_fail "the daemon did not log 'safe to stop'"
bed_signal drained

bed_wait host checked 300
fs_stop_donor
bed_signal stopped
bed_wait host done 900
check_kernel_log
