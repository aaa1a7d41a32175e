#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# relay, the host: its one link leads to the relay, which it is told is
# its donor.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

relay=$FARSWAP_PEER_relay
MARK=farswap-relay-marker

fs_load_module
bed_wait relay ready 300

# 64 pages, each starting with the marker.
for i in $(seq 0 63); do
	printf '%-4096s' "$MARK page $i"
done >/run/marker.bin

# 1. The control: no keys.  The pages go to the relay, and read back
# from it as written: the host sees nothing wrong.
dev=$(fs_attach --donor "$relay:7472" --size 64M --insecure-no-auth)
name=${dev#/dev/}
dd if=/run/marker.bin of="$dev" bs=64K oflag=direct status=none ||
	bed_fail "the write without keys failed"
dd if="$dev" of=/run/back.bin bs=64K count=4 iflag=direct status=none ||
	bed_fail "the read without keys failed"
cmp -s /run/marker.bin /run/back.bin || bed_fail "the pages without keys did not read back"
bed_signal open-written
bed_wait relay open-scanned 300
"$FS_CTL" detach "$name" || bed_fail "detach failed"

# 2. With the key.  The handshake passes the relay, the changed
# ALLOC_REP does not: the host drops the session, and the write fails.
n0=$(dmesg | grep -c 'with a wrong tag' || true)
dev=$(fs_attach --donor "$relay:7471" --size 64M)
name=${dev#/dev/}
rc=0
timeout 300 dd if=/run/marker.bin of="$dev" bs=64K oflag=direct status=none 2>/run/dd.err || rc=$?
bed_log "the keyed write through the relay: exit $rc: $(tr '\n' ' ' </run/dd.err)"
[ "$rc" != 0 ] || bed_fail "the keyed write through the relay succeeded"
[ "$rc" != 124 ] || bed_fail "the keyed write through the relay hung"
n1=$(dmesg | grep -c 'with a wrong tag' || true)
bed_result relay.keyed.wrong_tags $((n1 - n0))
[ "$n1" -gt "$n0" ] || bed_fail "the host never saw the changed message's wrong tag"
bed_signal keyed-written
bed_wait relay keyed-scanned 300
"$FS_CTL" status "$name" || true
"$FS_CTL" detach "$name" || bed_fail "detach failed"
rmmod farswap
check_kernel_log
bed_signal done
