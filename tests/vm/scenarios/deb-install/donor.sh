#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-install, donor side: install farswap-tools, donate 256 MiB with the
# packaged farswapd until the host is done, then remove the package.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$BED_SCENARIO_DIR/deb-lib.sh"

deb_install farswap-tools
FS_FARSWAPD=/usr/sbin/farswapd
fs_start_donor --donate 256M --slab-size 16M --headroom 64M --hysteresis 32M
bed_signal ready
bed_wait host done 3500
"$FS_FARSWAPD" --stats | sed 's/^/  farswapd: /'
fs_stop_donor
deb_remove farswap-tools
check_kernel_log
