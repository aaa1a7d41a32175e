#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-secure, the donor: lends only to hosts that prove they hold its key.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

counter() { "$FS_FARSWAPD" --stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# The secret, shared with the host through the bed's directory (as an
# admin would copy it): a key farswapd --gen-key makes, root's alone.
FS_KEY_FILE=/run/farswap.key
"$FS_FARSWAPD" --gen-key "$FS_KEY_FILE" || bed_fail "farswapd --gen-key failed"
[ "$(stat -c '%a' "$FS_KEY_FILE")" = 600 ] ||
	bed_fail "farswapd --gen-key made $FS_KEY_FILE mode $(stat -c '%a' "$FS_KEY_FILE"), not 600"
rc=0
"$FS_FARSWAPD" --gen-key "$FS_KEY_FILE" 2>/run/gen-again.err || rc=$?
[ "$rc" != 0 ] && grep -q "exists" /run/gen-again.err ||
	bed_fail "farswapd --gen-key over an existing key: exit $rc, '$(cat /run/gen-again.err)'"
cp "$FS_KEY_FILE" "$BED/shared.key"
# A key per host too: none at first (every host proves key-file's secret).
install -d -m 0700 /run/hosts.d
# Core files allowed, to a known place: farswapd, holding keys, must
# leave none (prctl PR_SET_DUMPABLE), where any other process does.
ulimit -c unlimited
echo "/run/core.%p" >/proc/sys/kernel/core_pattern
fs_start_donor --donate 160M --slab-size 16M --headroom 32M --hysteresis 16M \
	--host-keys /run/hosts.d
"$FS_FARSWAPD" --stats | bed_grep -x 'auth hmac-sha256' || bed_fail "farswapd --stats does not say auth hmac-sha256"
bed_signal ready

bed_wait host refused 600
for c in refused_auth auth_failed; do
	bed_result "secure.donor.$c" "$(counter "$c")"
	[ "$(counter "$c")" -gt 0 ] || bed_fail "the host's refused attempts left $c at 0"
done
[ "$(counter grants)" = 0 ] || bed_fail "slabs granted before any host authenticated"
bed_signal counted

# What this donor can read of the pages it holds.
MEMCORRUPT=$FARSWAP_SRC/tests/tools/memcorrupt
marker_pages() {
	"$MEMCORRUPT" --pid "$FS_DONOR_PID" --min-region $((16 << 20)) \
		--mode find --pattern farswap-plaintext-marker |
		sed -n 's/^memcorrupt: find pages=\([0-9]*\) (of \([0-9]*\) with data)$/\1 \2/p'
}
bed_wait host sealed-written 900
read -r found data < <(marker_pages)
bed_result secure.donor.sealed_marker_pages "$found"
bed_result secure.donor.sealed_data_pages "$data"
[ "${data:-0}" -ge 64 ] || bed_fail "the encrypted marker pages are not in this donor's memory (${data:-no} pages with data)"
[ "$found" = 0 ] || bed_fail "with --encrypt the donor read the marker in $found pages"
bed_signal sealed-scanned
bed_wait host plain-written 900
read -r found data < <(marker_pages)
bed_result secure.donor.plain_marker_pages "$found"
[ "${found:-0}" -ge 64 ] || bed_fail "without encryption the donor should read the host's 64 marker pages, found ${found:-none}"
bed_signal plain-scanned

# The host gets a key of its own, while farswapd runs: from its next
# handshake on, key-file's secret no longer opens a session for its id.
bed_wait host host-id 900
"$FS_FARSWAPD" --gen-key /run/host.key || bed_fail "farswapd --gen-key failed"
cp /run/host.key "$BED/host.key"
install -m 0600 /run/host.key "/run/hosts.d/$(cat "$BED/host_id")"
bed_signal host-key

# Pinned donors (host.sh, 5): two more farswapd here, each with a donor
# key of its own; the first's is handed to the host.
bed_wait host pin-ready 900
"$FS_FARSWAPD" --gen-key /run/donor.key
"$FS_FARSWAPD" --gen-key /run/impostor.key
cp /run/donor.key "$BED/donor.key"
pins=()
for p in "7472 donor" "7473 impostor"; do
	read -r port key <<<"$p"
	"$FS_FARSWAPD" --config /dev/null --listen "$FARSWAP_ADDR:$port" \
		--stats-socket none --host-keys /run/hosts.d \
		--donor-key-file "/run/$key.key" --donate 32M --headroom 16M \
		--slab-size 16M --handshake-timeout 20s --auth-timeout 20s >"$BED/$key-farswapd.log" 2>&1 &
	pins+=($!)
	bed_wait_rdma_listen "$port" 60 $!
done
bed_signal pinned-up

bed_wait host done 900
kill -TERM "${pins[@]}"
wait "${pins[@]}" || bed_fail "a pinned farswapd exited non-zero on SIGTERM"
grep -q "authenticated (hmac-sha256) with its own key, .*: host id proven; it pins this donor's key" "$BED/donor-farswapd.log" ||
	bed_fail "the pinned donor's log does not say the host pinned it"
grep -q "does not pin this donor's key" "$BED/impostor-farswapd.log" ||
	bed_fail "the impersonator's log does not show the unpinned host"
for f in donor impostor; do
	! grep -qF "$(od -An -tx1 "/run/$f.key" | tr -d ' \n')" "$BED/$f-farswapd.log" ||
		bed_fail "a donor key is in $f's log"
done
[ "$(counter auth_ok)" -gt 0 ] || bed_fail "no session authenticated"
bed_result secure.donor.auth_ok "$(counter auth_ok)"
! grep -qF -e "$(fs_key_secret_hex "$FS_KEY_FILE")" -e "$(cut -d: -f3 "$FS_KEY_FILE")" \
	"$BED/$FARSWAP_ROLE-farswapd.log" ||
	bed_fail "the key is in farswapd's log"
fs_stop_donor
# A crash of farswapd (SIGABRT) writes no core with its keys in it; a
# process that holds none does (the control: cores are on here).
"$FS_FARSWAPD" --config /dev/null --listen "$FARSWAP_ADDR:7499" \
	--stats-socket none --key-file "$FS_KEY_FILE" --donate 16M --headroom 16M \
	--slab-size 16M >"$BED/crash-farswapd.log" 2>&1 &
crash=$!
bed_wait_rdma_listen 7499 60 "$crash"
sleep 300 &
control=$!
kill -ABRT "$crash" "$control"
wait "$crash" "$control" 2>/dev/null || true
[ -s "/run/core.$control" ] || bed_fail "no core from the control process: core files are off, the check proves nothing"
[ ! -e "/run/core.$crash" ] || bed_fail "farswapd, holding keys, left a core file"
bed_log "a crashed farswapd left no core file (the control left $(stat -c %s "/run/core.$control") bytes)"
check_kernel_log
