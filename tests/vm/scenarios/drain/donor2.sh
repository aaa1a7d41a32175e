#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# drain, the donor that takes the first one's chunks, then is drained
# with nowhere for them to go: the drain waits, never revokes, and gives
# up at its --timeout saying why; --undrain puts it back in service.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

# Room for everything the host puts on both; revoke-after 1 and a short
# deadline: a drain must not revoke however often the host refuses.
fs_start_donor --donate 256M --slab-size 16M --reclaim-deadline 3s \
	--pressure-interval 1s --revoke-after 1
log=$BED/donor2-farswapd.log
bed_signal ready

bed_wait host d1-gone 1500
before=$("$FS_FARSWAPD" --stats | sed -n 's/^slabs_used //p')
[ "$before" -gt 0 ] || bed_fail "no slab held here before the drain"
out=$BED/donor2-drain.out
rc=0
"$FS_FARSWAPD" --config /dev/null --drain --wait --timeout 30s \
	>"$out" 2>&1 || rc=$?
sed 's/^/  drain: /' "$out"
[ "$rc" = 1 ] || bed_fail "a drain with no room elsewhere exited $rc at its timeout, not 1"
grep -q 'not drained after' "$out" || bed_fail "no timeout message"
grep -q 'no room elsewhere' "$out" || bed_fail "the drain did not say why it waits"
stats=$("$FS_FARSWAPD" --stats)
sed 's/^/  farswapd: /' <<<"$stats"
grep -qx 'drain draining' <<<"$stats" || bed_fail "--stats does not say draining"
# An empty spare may go back (nothing to move); the slabs with chunks stay.
left=$(sed -n 's/^slabs_used //p' <<<"$stats")
bed_result drain.slabs_kept "$before -> $left"
[ "$left" -gt 0 ] || bed_fail "every slab went back, though the host had nowhere to move its chunks"
grep -q ' revoked_slabs=0 ' <<<"$stats" || bed_fail "slabs revoked during the drain"
refusals=$(sed -n 's/^drain_refusals //p' <<<"$stats")
bed_result drain.refusals "$refusals"
[ "$refusals" -gt 0 ] || bed_fail "no refusal counted"
grep -q ' draining yes refused [1-9]' <<<"$stats" || bed_fail "the host line shows no refusal"
grep -q 'keeps slab .*: no room elsewhere; draining, so asked again' "$log" ||
	bed_fail "the daemon did not log the host's refusal"
"$FS_FARSWAPD" --config /dev/null --undrain | bed_grep 'back in service' ||
	bed_fail "--undrain did not say back in service"
"$FS_FARSWAPD" --stats | bed_grep -x 'drain no' || bed_fail "still draining after --undrain"
bed_signal undrained

bed_wait host detached 900
fs_no_host_left
bed_wait host done 600
fs_stop_donor
check_kernel_log
