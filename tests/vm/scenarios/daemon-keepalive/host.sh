#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# daemon-keepalive, host side: a client that holds slabs and stays idle
# (no I/O, no requests) across several keepalive periods, then one whose
# link this guest takes down under it.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

# The client holds the donor's key.
install -m 600 "$BED/bed.key" /run/farswap-bed.key
fsc=/tmp/fsclient-keyed
printf '#!/bin/sh\nexec %s --key-file /run/farswap-bed.key "$@"\n' \
	"$FARSWAP_SRC/tests/tools/fsclient" >"$fsc"
chmod 755 "$fsc"
donor=$FARSWAP_PEER_donor

bed_wait donor ready 120

# Idle for 12 s (six keepalive periods): the donor's probes arrive as
# unsolicited STATS_REP, the session lives, the data still reads back.
rm -f "$BED/a.ready"
"$fsc" -i host-a -n 3 --hold 12 --verify-every 0 --min-notices 3 \
	--ready-file "$BED/a.ready" "$donor" >/tmp/a.log 2>&1 &
apid=$!
for ((i = 0; i < 600; i++)); do
	[ -e "$BED/a.ready" ] && break
	kill -0 $apid 2>/dev/null || bed_fail "client A died: $(cat /tmp/a.log)"
	sleep 0.1
done
[ -e "$BED/a.ready" ] || bed_fail "client A never got its slabs: $(cat /tmp/a.log)"
bed_signal a-ready
wait $apid || bed_fail "client A failed: $(cat /tmp/a.log)"
sed 's/^/  A: /' /tmp/a.log | grep -v 'slab .* granted'
grep -q '^fsclient: OK$' /tmp/a.log || bed_fail "client A: no OK"
bed_signal a-done

# A client that holds 3 slabs, then its machine drops off the network.
rm -f "$BED/k.ready"
"$fsc" -i host-k -n 3 --keep --ready-file "$BED/k.ready" "$donor" >/tmp/k.log 2>&1 &
kpid=$!
for ((i = 0; i < 600; i++)); do
	[ -e "$BED/k.ready" ] && break
	kill -0 $kpid 2>/dev/null || bed_fail "client K died: $(cat /tmp/k.log)"
	sleep 0.1
done
[ -e "$BED/k.ready" ] || bed_fail "client K never got its slabs: $(cat /tmp/k.log)"
bed_signal k-ready
bed_wait donor k-seen 60
ip link set dev eth0 down
bed_log "eth0 down under client K"
bed_signal cut
bed_wait donor done 120
kill -KILL $kpid 2>/dev/null || true
wait $kpid 2>/dev/null || true
sed 's/^/  K: /' /tmp/k.log | grep -v 'slab .* granted' | tail -n 5
check_kernel_log
