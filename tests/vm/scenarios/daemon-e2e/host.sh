#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-e2e, host side: fsclient sessions against farswapd on the donor.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

donor=$FARSWAP_PEER_donor
# Every client holds the donor's key: what they do wrong is not that.
install -m 600 "$BED/bed.key" /run/farswap-bed.key
fsc=/tmp/fsclient-keyed
printf '#!/bin/sh\nexec %s --key-file /run/farswap-bed.key "$@"\n' \
	"$FARSWAP_SRC/tests/tools/fsclient" >"$fsc"
chmod 755 "$fsc"

bed_wait donor ready 120

# Client A: 4 slabs, patterns written and verified, then held and
# re-verified every second while the others misbehave.
rm -f "$BED/a.rkey" "$BED/a.ready" "$BED/a.stop"
"$fsc" -i host-a -n 4 -q 2 --rkey-file "$BED/a.rkey" --ready-file "$BED/a.ready" \
	--hold 250 --stop-file "$BED/a.stop" "$donor" >/tmp/a.log 2>&1 &
apid=$!
for ((i = 0; i < 600; i++)); do
	[ -e "$BED/a.ready" ] && break
	kill -0 $apid 2>/dev/null || bed_fail "client A died: $(cat /tmp/a.log)"
	sleep 0.1
done
[ -e "$BED/a.ready" ] || bed_fail "client A never got its slabs written: $(cat /tmp/a.log)"
sed 's/^/  A: /' /tmp/a.log

run() {
	local name=$1 out
	shift
	if ! out=$("$fsc" "$@" "$donor" 2>&1); then
		echo "$out" | sed "s/^/  $name: /"
		bed_fail "$name: $(tail -n 1 <<<"$out")"
	fi
	echo "$out" | sed "s/^/  $name: /"
	grep -q '^fsclient: OK$' <<<"$out" || bed_fail "$name: no OK"
}

# Another session cannot touch A's slab with A's rkey.
run steal -m steal -i host-b --steal "$BED/a.rkey"
# Malformed messages close the sender's session, nothing else.
for kind in bad_magic short long huge bad_type version length_field reserved donor_type; do
	run "malformed-$kind" -m malformed -i host-m --malformed "$kind" -t 15
done
# A version nobody speaks is rejected with the reason.
run version -m version -i host-v
# Wrong token, duplicate qid, another host's token: rejected, session lives.
run badio -m badio -i host-x
# A host over its share (max-slabs-per-host 4) is refused NO_SPACE.
run quota -m quota -i host-q -n 4
# An absurd I/O queue depth is cut (max-queue-depth), not a failure.
run deep -i host-d --queue-depth 1000000
# A connect flood without the key, from this one address: every connect
# is taken, the address's oldest unproven making way, so at most
# max-unauthenticated-per-address (2, the default) stay, each until
# handshake-timeout (8 s); then a host with the key comes in.
run flood -m flood -i host-f --sessions 5 --accepted 2 -t 60

kill -0 $apid 2>/dev/null || bed_fail "client A died during the abuse: $(cat /tmp/a.log)"
bed_signal abuse-done
bed_wait donor stats-done 60
# A verified its data every second throughout; now it verifies once more,
# frees its slabs (and checks a double free is refused) and disconnects.
: >"$BED/a.stop"
wait $apid || bed_fail "client A failed: $(cat /tmp/a.log)"
sed 's/^/  A: /' /tmp/a.log | tail -n 6
grep -q '^fsclient: OK$' /tmp/a.log || bed_fail "client A: no OK"

# A host that vanishes (SIGKILL, no goodbye) loses its slabs to the pool.
rm -f "$BED/k.ready"
"$fsc" -i host-k -n 3 --ready-file "$BED/k.ready" --keep "$donor" >/tmp/k.log 2>&1 &
kpid=$!
for ((i = 0; i < 600; i++)); do
	[ -e "$BED/k.ready" ] && break
	sleep 0.1
done
[ -e "$BED/k.ready" ] || bed_fail "vanishing client never got ready: $(cat /tmp/k.log)"
kill -KILL $kpid
wait $kpid || true
for ((i = 0; i < 50; i++)); do
	out=$("$fsc" -m stats -i host-s "$donor" 2>&1) || bed_fail "stats: $out"
	grep -q 'free 16 ' <<<"$out" && break
	sleep 0.2
done
grep -q 'free 16 ' <<<"$out" || bed_fail "the killed client's slabs were not freed: $out"
bed_log "a SIGKILLed client's 3 slabs went back to the pool"

# All 16 slabs, including A's four (dirty): each must read as zeros first.
run all-slabs -i host-c -n 16 -q 4 -p 8
run stats -m stats -i host-s

bed_signal done
check_kernel_log
