#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

donor=$FARSWAP_PEER_donor
fsc=$FARSWAP_SRC/tests/tools/fsclient
install -m 600 "$BED/bed.key" /run/farswap-bed.key
bed_wait donor ready 120
run() {
	local name=$1 out
	shift
	out=$("$fsc" -k /run/farswap-bed.key "$@" "$donor" 2>&1) || {
		echo "$out" | sed "s/^/  $name: /"
		bed_fail "$name: $(tail -n 1 <<<"$out")"
	}
	echo "$out" | sed "s/^/  $name: /"
	grep -q '^fsclient: OK$' <<<"$out" || bed_fail "$name: no OK"
}
run basic --kx -i host-k -n 3
run badio --kx -m badio -i host-x
# Without a session key: require-session-keys refuses it.
if out=$("$fsc" -k /run/farswap-bed.key -m stats -i host-old "$donor" 2>&1); then
	bed_fail "a handshake without a session key got in: $out"
fi
echo "$out" | sed 's/^/  legacy: /'
bed_signal done
check_kernel_log
