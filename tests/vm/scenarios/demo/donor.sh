#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo, donor side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

echo "demo: donor: farswapd --donate 384M --slab-size 16M --key-file /run/farswap-bed.key  (hosts must prove they hold it)"
fs_start_donor --donate 384M --slab-size 16M --headroom 64M --hysteresis 32M
bed_signal ready
bed_wait host filled 1500
"$FS_FARSWAPD" --stats >"$BED/donor-stats.txt" 2>&1 || true
bed_signal stats-taken
bed_wait host done 1500
echo "demo: donor: farswapd's view while the host used it:"
sed 's/^/demo:   /' "$BED/donor-stats.txt" 2>/dev/null || true
fs_stop_donor
check_kernel_log
