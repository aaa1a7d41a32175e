#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo, host side: narrate each step with "demo:" lines.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

say() { echo "demo: $*"; }
donor=$FARSWAP_PEER_donor
mb=${FARSWAP_DEMO_MB:-192}
limit=${FARSWAP_DEMO_LIMIT:-96M}

fs_load_module
bed_wait donor ready 120
say "host: farswapctl add-key $FS_KEY --key-file the-donors-key  (its secret to the kernel; no process can read it back)"
say "host: farswapctl attach --donor $donor --size 512M --key $FS_KEY"
dev=$(fs_attach --donor "$donor" --size 512M)
name=${dev#/dev/}
say "host: created $dev; mkswap $dev; swapon $dev"
mkswap "$dev" >/dev/null
swapon "$dev"
sed 's/^/demo:   /' /proc/swaps

out0=$(fs_vmstat pswpout)
in0=$(fs_vmstat pswpin)
say "host: pageverify writes a distinct pattern into every page of $mb MiB"
say "      (2 processes, one forks) inside a $limit memory cgroup, then checks"
say "      every page sequentially, in random order and across the fork"
t0=$SECONDS
fs_workload_start "$mb" "$limit" --procs 2
fs_workload_wait_hold 2 1000
secs=$((SECONDS - t0))
pswpout=$(($(fs_vmstat pswpout) - out0))
pswpin=$(($(fs_vmstat pswpin) - in0))
# The donor's view, taken there while the host's pages are on it.
bed_signal filled
bed_wait donor stats-taken 120
say "host: every page verified after ${secs} s:"
sed -n 's/^RESULT /demo:   /p' "$FS_WL_LOG"
say "host: pages swapped out $pswpout ($((pswpout / 256)) MiB), swapped in $pswpin ($((pswpin / 256)) MiB)"
say "host: farswapctl status $name"
"$FS_CTL" status "$name" | sed 's/^/demo:   /'
[ "$pswpout" -gt 0 ] && [ "$pswpin" -gt 0 ] || bed_fail "nothing was swapped"

say "host: swapoff $dev brings every page home; pageverify checks them again"
fs_unlimit_workload
swapoff "$dev"
fs_workload_release >/dev/null
say "host: all $((mb * 256)) pages verified again; farswapctl detach $name"
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log >/dev/null
say "host: done, kernel log clean"
bed_signal done
