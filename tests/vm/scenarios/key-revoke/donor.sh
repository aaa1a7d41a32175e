#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# key-revoke, the donor whose admin removes the host's key file and
# reloads farswapd.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

counter() { "$FS_FARSWAPD" --stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }

bed_wait host host-key 300
id=$(cat "$BED/host_id")
install -d -m 0700 /run/hosts.d
install -m 0600 "$BED/host.key" "/run/hosts.d/$id"
# revoke-after 1: however the host answers, a reload must never revoke.
fs_start_donor --donate 256M --slab-size 16M --reclaim-deadline "$(bed_secs 60)s" \
	--pressure-interval 1s --revoke-after 1 --host-keys /run/hosts.d
log=$BED/donor-farswapd.log
bed_signal ready

bed_wait host filled 1000
held=$("$FS_FARSWAPD" --stats | sed -n 's/^slabs_used //p')
[ "$held" -gt 0 ] || bed_fail "the host holds no slab here"
rm "/run/hosts.d/$id"
kill -HUP "$FS_DONOR_PID"
t0=$SECONDS
end=$((SECONDS + $(bed_secs 900)))
until [ "$(counter closed_not_allowed)" -ge 1 ] &&
      "$FS_FARSWAPD" --stats | bed_grep -x 'slabs_used 0'; do
	[ $SECONDS -lt $end ] || bed_fail "the host's session still up or slabs held $((SECONDS - t0)) s after its key was removed: $("$FS_FARSWAPD" --stats | grep -E '^(host|slabs_used) ' | tr '\n' ';')"
	sleep 1
done
bed_result keyrevoke.donor.closed_s $((SECONDS - t0))
stats=$("$FS_FARSWAPD" --stats)
sed 's/^/  farswapd: /' <<<"$stats"
grep -q ' revoked_slabs=0 ' <<<"$stats" || bed_fail "slabs revoked: a removed key must drain, not revoke"
grep -Eq "its host-keys file is gone after the reload, but it holds [0-9]+ slabs: asking for them back" "$log" ||
	bed_fail "the reload did not say it asks for the host's slabs back"
grep -q 'closing session: not allowed since a reload; every slab given back' "$log" ||
	bed_fail "the session was not closed once it held no slab"
# The host comes back with the key it had, which this donor no longer
# holds for it: no session gets up (the host finds the donor's proof
# wrong, host.sh checks that).
sleep "$(bed_secs 5)"
! "$FS_FARSWAPD" --stats | bed_grep '^host .* state up ' ||
	bed_fail "a host session is up again after its key was removed"
bed_signal revoked

bed_wait host done 900
fs_stop_donor
check_kernel_log
