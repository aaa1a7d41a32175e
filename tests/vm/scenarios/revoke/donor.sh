#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# revoke, donor side: four 16 MiB slabs, then a memory hog.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

headroom_mb=200
# What farswapd counts as available (as daemon-pressure reads it).
avail_mb() {
	awk '/^MemAvailable:/ { a = $2 * 1024 } $1 == "count:" { p += $2 * 4096 }
	     END { print int((a + p) / 1048576) }' /proc/meminfo /proc/zoneinfo
}
counter() { "$FS_FARSWAPD" --stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }

fs_start_donor --donate 64M --slab-size 16M --headroom ${headroom_mb}M \
	--hysteresis 8M --pressure-interval 500ms --reclaim-deadline 2s \
	--revoke-after 2
bed_signal ready

# The host holds three slabs, one is free.  Eat memory until farswapd is
# 24 MiB short: the free slab goes back, then one held slab must.
bed_wait host written 300
mkdir -p /run/hog
mount -t tmpfs -o size=480M hog /run/hog
a=$(avail_mb)
hog=$((a - headroom_mb + 24))
bed_log "available ${a}M: writing a ${hog}M tmpfs file"
dd if=/dev/zero of=/run/hog/hog bs=1M count=$hog status=none
bed_log "available now $(avail_mb)M"

end=$((SECONDS + 120))
until [ "$(counter revoke_notices)" -ge 1 ]; do
	[ $SECONDS -lt $end ] || bed_fail "no slab revoked 120 s into the shortage (revoked_slabs=$(counter revoked_slabs))"
	sleep 0.5
done
bed_result revoke.donor.revoked_slabs "$(counter revoked_slabs)"
bed_result revoke.donor.revoke_notices "$(counter revoke_notices)"
grep -q "revoked: not given back .* the host is told" "$BED/$FARSWAP_ROLE-farswapd.log" ||
	bed_fail "farswapd's log does not say the host was told of the revoke"
# The deadline after the notice: deregistered (or freed by the host).
sleep 4
bed_signal revoked
bed_wait host done 300
rm -f /run/hog/hog
fs_stop_donor
check_kernel_log
