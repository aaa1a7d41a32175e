#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# integrity, the donor whose memory goes bad on request.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

MEMCORRUPT=$FARSWAP_SRC/tests/tools/memcorrupt
snap=/tmp/integrity-snapshot

fs_start_donor --donate 160M --slab-size 16M --headroom 32M --hysteresis 16M

corrupt() {
	"$MEMCORRUPT" --pid "$FS_DONOR_PID" --min-region $((16 << 20)) \
		--seed "$RANDOM" "$@" || bed_fail "memcorrupt $* changed nothing"
}

bed_signal ready
# Integrity off.
bed_wait host damage-flip 900
corrupt --mode flip --pages 3000
bed_signal damaged-flip

for alg in siphash crc32c chacha20poly1305; do
	if [ "$alg" != crc32c ]; then
		bed_wait host "damage-snapshot-$alg" 900
		corrupt --mode snapshot --pages 3000 --file "$snap"
		bed_signal "damaged-snapshot-$alg"
	fi
	bed_wait host "damage-all-$alg" 900
	[ "$alg" = crc32c ] || corrupt --mode restore --file "$snap"
	corrupt --mode flip --pages 1000
	corrupt --mode zero --pages 500
	corrupt --mode swap --pages 500
	bed_signal "damaged-all-$alg"
done

# With two replicas: the other donor's copies heal the damage.
bed_wait host damage-heal 900
corrupt --mode flip --pages 1000
corrupt --mode zero --pages 500
corrupt --mode swap --pages 500
bed_signal damaged-heal

bed_wait host done 900
fs_stop_donor
check_kernel_log
