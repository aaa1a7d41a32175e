#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-pressure, host side: hold 24 slabs, answer reclaim requests (each
# slab re-read after a 2 s delay, proving the donor has not freed it yet,
# then acked), then wait for the donor's offer and take a slab again.
# Then the fair share: one host fills the donor, a second is refused, the
# first is asked for its excess and the second gets slabs.
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

# max-slabs-per-host fair (the default): host-a fills the donor alone;
# host-b, refused for want of a free slab, has host-a asked for the
# excess (15 at once: the reclaims a session may have in flight), and is
# told when host-a has given them back.
bed_wait donor calm 120
donor=$FARSWAP_PEER_donor
for ((i = 0; i < 100; i++)); do
	out=$("$fsc" -m stats -i host-s "$donor" 2>&1) || bed_fail "stats: $out"
	grep -q 'free 32 ' <<<"$out" && break
	sleep 0.5
done
grep -q 'free 32 ' <<<"$out" || bed_fail "the pool did not come back whole: $out"
rm -f "$BED/host.fair-ready"
"$fsc" -m reclaim -i host-a -n 32 -p 4 --ack-reclaim --reclaims 15 \
	--ready-file "$BED/host.fair-ready" -t 120 "$donor" >/tmp/fair-a.log 2>&1 &
apid=$!
for ((i = 0; i < 1200; i++)); do
	[ -e "$BED/host.fair-ready" ] && break
	kill -0 $apid 2>/dev/null || bed_fail "host-a: $(cat /tmp/fair-a.log)"
	sleep 0.1
done
[ -e "$BED/host.fair-ready" ] || bed_fail "host-a never held the pool: $(cat /tmp/fair-a.log)"
out=$("$fsc" -m share -i host-b -n 8 -p 4 -t 60 "$donor" 2>&1) || bed_fail "host-b: $out"
echo "$out" | grep -E 'NO_SPACE|after the notice|OK' | sed 's/^/  host-b: /'
grep -q '^fsclient: OK$' <<<"$out" || bed_fail "host-b: no OK"
wait $apid || bed_fail "host-a: $(cat /tmp/fair-a.log)"
bed_log "host-a: $(grep -c 'RECLAIM_REQ slab' /tmp/fair-a.log || true) RECLAIM_REQ answered"
grep -q '^fsclient: OK$' /tmp/fair-a.log || bed_fail "host-a: no OK"
bed_signal fair-done
check_kernel_log
