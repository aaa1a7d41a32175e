#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-degraded, donor: up from the start; stopped once (SIGTERM: its
# slabs go, as a donor lost) after the host re-replicated onto donor2,
# then started again; drained and undrained for the host's donor remove.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

args=(--donate 192M --slab-size 16M --headroom 32M --hysteresis 16M)
fs_start_donor "${args[@]}"
bed_signal ready
bed_wait host stop-donor 1200
fs_stop_donor
bed_signal stopped
bed_wait host start-donor 600
fs_start_donor "${args[@]}"
bed_signal started

# The host moves its chunks away, then removes this donor from its device.
bed_wait host drain-donor 900
out=$BED/donor-drain.out
rc=0
"$FS_FARSWAPD" --config /dev/null --drain --wait --timeout "$(bed_secs 300)s" \
	>"$out" 2>&1 || rc=$?
sed 's/^/  drain: /' "$out"
[ "$rc" = 0 ] || bed_fail "farswapd --drain --wait exited $rc"
bed_signal drained
bed_wait host removed 300
# Removed: the host's session is gone, nothing of it is left here.
fs_no_host_left
"$FS_FARSWAPD" --config /dev/null --undrain >/dev/null ||
	bed_fail "farswapd --undrain failed"
bed_signal undrained

bed_wait host done 900
fs_stop_donor
check_kernel_log
