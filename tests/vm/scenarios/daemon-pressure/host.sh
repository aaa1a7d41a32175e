#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-pressure, host side: hold 24 slabs, answer reclaim requests (each
# slab re-read after a 2 s delay, proving the donor has not freed it yet,
# then acked), then wait for the donor's offer and take a slab again.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

# The client holds the donor's key.
install -m 600 "$BED/bed.key" /run/farswap-bed.key
fsc=/tmp/fsclient-keyed
printf '#!/bin/sh\nexec %s --key-file /run/farswap-bed.key "$@"\n' \
	"$FARSWAP_SRC/tests/tools/fsclient" >"$fsc"
chmod 755 "$fsc"
bed_wait donor ready 120
rm -f "$BED/host.slabs-written" "$BED/host.reclaimed"
out=$("$fsc" -m reclaim -i host-p -n 24 -p 8 --ack-reclaim --ack-delay 2 \
	--reclaims 2 --ready-file "$BED/host.slabs-written" \
	--reclaimed-file "$BED/host.reclaimed" --expect-notice -t 120 \
	"$FARSWAP_PEER_donor" 2>&1) || bed_fail "fsclient: $out"
echo "$out" | sed 's/^/  fsclient: /'
grep -q '^fsclient: OK$' <<<"$out" || bed_fail "fsclient: no OK"
grep -q 'still reads back; acking' <<<"$out" || bed_fail "no slab re-read before its ack"
grep -q 'stats notice' <<<"$out" || bed_fail "no stats notice seen"
bed_signal done
check_kernel_log
