#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# key-revoke, the donor that keeps the host's key and takes its chunks.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

bed_wait host host-key 300
install -d -m 0700 /run/hosts.d
install -m 0600 "$BED/host.key" "/run/hosts.d/$(cat "$BED/host_id")"
fs_start_donor --donate 256M --slab-size 16M --pressure-interval 1s \
	--host-keys /run/hosts.d
bed_signal ready

bed_wait host done 1400
grep -q 'with its own key, .*host id proven' "$BED/donor2-farswapd.log" ||
	bed_fail "the host did not prove its own key here"
fs_no_host_left
fs_stop_donor
check_kernel_log
