#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# revoke-copy, the donor that runs short: four 16 MiB slabs, the host's
# three all here; it asks one back, and revokes it 6 s later.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/reclaim/hog.sh"

counter() { "$FS_FARSWAPD" --stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }

fs_start_donor --donate 64M --slab-size 16M --headroom 160M \
	--hysteresis 8M --pressure-interval 500ms --reclaim-deadline 2s \
	--revoke-after 3
bed_signal ready

bed_wait host written 600
hog_until_reclaim pressure 300
end=$((SECONDS + 120))
until [ "$(counter revoke_notices)" -ge 1 ]; do
	[ $SECONDS -lt $end ] || bed_fail "no slab revoked 120 s into the shortage (revoked_slabs=$(counter revoked_slabs))"
	sleep 0.5
done
bed_result revoke-copy.donor.revoke_notices "$(counter revoke_notices)"
# The grace (one deadline) runs out: the slab is deregistered, unless the
# host freed it first (it drops the slab once its copy stopped).
sleep 4
grep -Eq "revoked slab [0-9]+ deregistered|slab [0-9]+ freed" "$BED/$FARSWAP_ROLE-farswapd.log" ||
	bed_fail "the revoked slab was neither deregistered nor freed by the host"
bed_signal revoked
bed_wait host done 300
hog_release pressure
fs_stop_donor
check_kernel_log
