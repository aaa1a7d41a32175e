#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attach-degraded, host side (scenario.conf says what and why).
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
ctl=$FS_CTL
# The key as a boot unit has it: a file root alone reads, no keyring.
key=/etc/farswap-test.key
install -m 600 "$BED/bed.key" "$key"

rep() {
	tr ' ' '\n' <"/sys/block/$1/farswap/replicas" | sed -n "s/^$2=//p"
}

# wait_replicated WHAT: every chunk has its replicas within 300 s of WHAT.
wait_replicated() {
	local end=$((SECONDS + $(bed_secs 300)))

	until [ "$(rep "$name" degraded)" = 0 ]; do
		[ $SECONDS -lt $end ] ||
			bed_fail "$(rep "$name" degraded) chunks still short of a replica 300 s after $1"
		sleep 1
	done
}

# A quick reconnect: donor2 comes while the workload runs.
fs_load_module reconnect_delay_ms=1000 keepalive_ms=3000
# Nothing in a keyring: the key file alone authenticates.
keyctl clear @u
FS_KEY=
bed_wait donor ready 120
bed_wait donor2 ready 120

# 1. Attach with one of two donors down: it succeeds, with the other
# left behind and saying why.
t0=$SECONDS
dev=$("$ctl" attach --donor "$d1" --donor "$d2" --size 128M --key-file "$key" 2>/run/attach.err) ||
	bed_fail "attach with one of two donors down: $(cat /run/attach.err)"
name=${dev#/dev/}
sed 's/^/  attach: /' /run/attach.err
grep -Eq "donor $d2:7471 is (re)?connecting: .*$d2" /run/attach.err ||
	bed_fail "attach does not say that $d2 was left behind, and why"
bed_result degraded.attach_seconds $((SECONDS - t0))
state=$(fs_donor_field "$name" "$d2" state)
why=$(fs_donor_field "$name" "$d2" last_error)
[ "$(fs_donor_field "$name" "$d1" state)" = live ] || bed_fail "donor $d1 not live after the attach"
# Its failure domain, by default its id: derived from the machine id,
# never the machine id itself (machine-id(5): not for the network).
dom=$(fs_donor_field "$name" "$d1" domain)
[ -n "$dom" ] && ! grep -qiF "$(cat /etc/machine-id)" <<<"$dom" ||
	bed_fail "donor $d1's id shows the machine id: domain '$dom'"
[ "$state" != live ] || bed_fail "donor $d2 live, yet its farswapd is not running"
grep -q "$d2" <<<"$why" || bed_fail "donor $d2: last_error '$why' does not say what failed"
bed_log "donor $d2 left behind: $state, last_error: $why"
"$ctl" status "$name" | tee /run/status.txt | sed 's/^/  /'
grep -q "last error: .*$d2" /run/status.txt || bed_fail "status does not show why $d2 is down"
"$ctl" status --json "$name" | bed_grep "\"last_error\": \".*$d2" ||
	bed_fail "status --json has no last_error for $d2"
grep -Eq "$name: attached: .* over 2 donors \(1 live\), 2 replicas" <(dmesg) ||
	bed_fail "the kernel log does not say the attach was degraded"
[ "$(cat "/sys/block/$name/farswap/auth")" = "auth=hmac-sha256 pinned=0" ] ||
	bed_fail "not authenticated: auth is $(cat "/sys/block/$name/farswap/auth")"
! keyctl show @u 2>/dev/null | bed_grep farswap ||
	bed_fail "--key-file left a key in the user keyring"

# 2. Swap with one copy.
mkswap "$dev" >/dev/null
swapon "$dev"
out0=$(fs_vmstat pswpout)
in0=$(fs_vmstat pswpin)
fs_workload_start 40 16M --procs 2 --seed "$seed"
fs_workload_wait_hold 2 600
degraded=$(rep "$name" degraded)
bound=$(sed -n 's/.*bound=\([0-9]*\).*/\1/p' "/sys/block/$name/farswap/chunks")
bed_result degraded.bound_chunks "$bound"
bed_result degraded.degraded_chunks "$degraded"
[ "$bound" -gt 0 ] && [ "$degraded" -eq "$bound" ] ||
	bed_fail "$degraded of $bound bound chunks short of a replica, with one donor up: want all"
[ "$(fs_donor_field "$name" "$d2" writes)" = 0 ] || bed_fail "writes reached $d2, which is down"

# 3. donor2 comes: the host reconnects by itself and copies every chunk's
# second replica there.
rep0=$(rep "$name" repaired)
bed_signal start-donor2
bed_wait donor2 started 300
t0=$SECONDS
fs_wait_donor_state "$name" "$d2" live 120
bed_result degraded.reconnect_seconds $((SECONDS - t0))
wait_replicated "$d2 came"
repaired=$(($(rep "$name" repaired) - rep0))
bed_result degraded.repaired_chunks "$repaired"
bed_result degraded.repair_bytes "$(rep "$name" repair_bytes)"
[ "$repaired" -ge "$bound" ] || bed_fail "only $repaired chunks copied to $d2, $bound were bound"
[ "$(fs_donor_field "$name" "$d2" slabs)" -gt 0 ] || bed_fail "$d2 holds no slab after the repair"

# 4. donor's farswapd stops (its slabs freed, as a donor lost): every page
# verifies from the copies on donor2.
bed_signal stop-donor
bed_wait donor stopped 120
fs_wait_donor_state "$name" "$d1" '!live' 60
fs_workload_release
pswpout=$(($(fs_vmstat pswpout) - out0))
pswpin=$(($(fs_vmstat pswpin) - in0))
bed_result degraded.pswpout "$pswpout"
bed_result degraded.pswpin "$pswpin"
[ "$pswpout" -ge 4096 ] || bed_fail "only $pswpout pages swapped out"
[ "$pswpin" -ge 2048 ] || bed_fail "only $pswpin pages swapped in"
[ "$(fs_donor_field "$name" "$d2" reads)" -gt 0 ] || bed_fail "no page read from $d2"
lost=$(rep "$name" lost_pages)
[ "$lost" = 0 ] || bed_fail "$lost pages lost"

# 5. Live membership, the device still swapped on, its chunks bound.  The
# dead donor goes: it holds nothing any more.  Back up, it is added again
# and takes every chunk's second replica.  donor2, which holds slabs,
# cannot be removed.
end=$((SECONDS + $(bed_secs 60)))
until [ "$(fs_donor_field "$name" "$d1" slabs)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "$d1's slabs still held 60 s after it died"
	sleep 1
done
"$ctl" donor remove "$name" "$d1" | sed 's/^/  /'
[ -z "$(fs_donor_field "$name" "$d1" state)" ] || bed_fail "$d1 still listed after its removal"
rc=0
"$ctl" status --check "$name" | sed 's/^/  check: /' || rc=$?
bed_signal start-donor
bed_wait donor started 300
rep0=$(rep "$name" repaired)
out=$("$ctl" donor add "$name" "$d1")
bed_log "$out"
grep -q "added, live" <<<"$out" || bed_fail "donor add: $out"
wait_replicated "$d1 was added"
added=$(($(rep "$name" repaired) - rep0))
bed_result members.repaired_onto_added "$added"
[ "$added" -gt 0 ] || bed_fail "no chunk copied to the added $d1"
[ "$(fs_donor_field "$name" "$d1" slabs)" -gt 0 ] || bed_fail "the added $d1 holds no slab"
rc=0
out=$("$ctl" donor remove "$name" "$d2" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "holds [0-9]* slabs of $name: drain it first" <<<"$out" ||
	bed_fail "removing $d2, which holds slabs: exit $rc, '$out'"
"$ctl" status --check "$name" | sed 's/^/  check: /' ||
	bed_fail "not healthy after the add"
"$ctl" status "$name" | sed 's/^/  /'
swapoff "$dev"
"$ctl" detach "$name"

# 6. Remove after a drain: a one-replica device on donor, donor2 added
# live; donor's farswapd drains (its chunks move to donor2), the device
# lets it go, and donor holds nothing of this host any more.
dev=$(fs_attach --donor "$d1" --size 64M --replicas 1 --key-file "$key")
name=${dev#/dev/}
head -c $((16 << 20)) /dev/urandom >/run/data
dd if=/run/data of="$dev" bs=1M oflag=direct status=none
"$ctl" donor add "$name" "$d2" | sed 's/^/  /'
bed_signal drain-donor
bed_wait donor drained 600
[ "$(fs_donor_field "$name" "$d1" slabs)" = 0 ] || bed_fail "$d1 still holds slabs after its drain"
"$ctl" donor remove "$name" 0 | sed 's/^/  /'
bed_signal removed
cmp <(dd if="$dev" bs=1M count=16 iflag=direct status=none) /run/data ||
	bed_fail "$name reads back other bytes after its donor's drain and removal"
bed_log "16 MiB read back intact from $d2 alone"
bed_wait donor undrained 300
"$ctl" detach "$name"

# 7. farswap-swap: two devices from one INI file, each with its key file,
# priority and swapon options.
mkdir -p /run/fsw
conf=/run/fsw/swap.conf
cat >"$conf" <<CONF
# two devices, one per donor
[farswap0]
donors = $d1
size = 64M
key-file = $key
swap-priority = 5
options = discard

[farswap1]
donors = $d2
size = 64M
key-file = $key
swap-priority = 3
retry-seconds = 300
CONF
swap() {
	PATH=$FARSWAP_SRC/tools:$PATH FARSWAP_SWAP_CONF=$conf \
		"$FARSWAP_SRC/tools/farswap-swap" "$@"
}
swap start
sed 's/^/  /' /proc/swaps
grep -Eq '^/dev/farswap0[[:space:]]+partition[[:space:]]+65532[[:space:]]+0[[:space:]]+5$' /proc/swaps ||
	bed_fail "farswap0 not swapped on at priority 5"
grep -Eq '^/dev/farswap1[[:space:]]+partition[[:space:]]+65532[[:space:]]+0[[:space:]]+3$' /proc/swaps ||
	bed_fail "farswap1 not swapped on at priority 3"
# discard: swapon discarded the whole device; without it, nothing.
disc0=$(fs_blk_stat farswap0 discards)
disc1=$(fs_blk_stat farswap1 discards)
bed_result swapconf.discards "$disc0/$disc1"
[ "$disc0" -gt 0 ] && [ "$disc1" = 0 ] ||
	bed_fail "discards: farswap0 $disc0 (options = discard), farswap1 $disc1 (none)"
swap start || bed_fail "a second start is not a no-op"
swap stop
! ls -d /sys/block/farswap* >/dev/null 2>&1 || bed_fail "farswap-swap stop left devices"

# 8. The boot unit's retry: farswap1's only donor is down when it starts;
# it tries again until the donor comes.
bed_signal stop-donor2
bed_wait donor2 stopped 120
swap start farswap1 >/run/fsw/start.log 2>&1 &
starter=$!
end=$((SECONDS + $(bed_secs 120)))
until grep -q "no donor answered; trying again" /run/fsw/start.log; do
	kill -0 "$starter" 2>/dev/null || bed_fail "farswap-swap start ended: $(cat /run/fsw/start.log)"
	[ $SECONDS -lt $end ] || bed_fail "farswap-swap did not retry: $(cat /run/fsw/start.log)"
	sleep 1
done
bed_signal start-donor2-again
bed_wait donor2 started-again 300
wait "$starter" || bed_fail "farswap-swap start failed after its donor came: $(cat /run/fsw/start.log)"
sed 's/^/  farswap-swap: /' /run/fsw/start.log
bed_result swapconf.retries "$(grep -c 'trying again' /run/fsw/start.log)"
grep -q '^/dev/farswap1 ' /proc/swaps || bed_fail "farswap1 not swapped on after the retry"
swap stop farswap1

# 9. A wrong key file (a well-formed key of other bytes): refused at
# once (not tried again), naming it; a missing one names the file; one
# that is no key (an old-style one: base64 text of random bytes), for
# that reason, saying how to make one.
"$ctl" gen-key /run/fsw/wrong.key || bed_fail "farswapctl gen-key failed"
rc=0
out=$("$ctl" attach --donor "$d1" --size 64M --key-file /run/fsw/wrong.key 2>&1) || rc=$?
[ "$rc" = 1 ] || bed_fail "attach with a wrong key file: exit $rc ($out)"
grep -q "authenticat" <<<"$out" && grep -q "/run/fsw/wrong.key" <<<"$out" ||
	bed_fail "attach with a wrong key file: '$out' does not say authentication and the file"
bed_log "wrong key file: $out"
rc=0
out=$("$ctl" attach --donor "$d1" --size 64M --key-file /run/fsw/absent.key 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "/run/fsw/absent.key: No such file" <<<"$out" ||
	bed_fail "attach with a missing key file: exit $rc, '$out'"
head -c 32 /dev/urandom | base64 -w0 >/run/fsw/old.key
chmod 600 /run/fsw/old.key
rc=0
out=$("$ctl" attach --donor "$d1" --size 64M --key-file /run/fsw/old.key 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "key-file /run/fsw/old.key: not a farswap key" <<<"$out" &&
	grep -q "farswapctl gen-key" <<<"$out" ||
	bed_fail "attach with an old-style key file: exit $rc, '$out'"
bed_log "old-style key file: $out"
! ls -d /sys/block/farswap* >/dev/null 2>&1 || bed_fail "a refused attach left a device"

rmmod farswap
check_kernel_log
bed_signal done
