#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# integrity, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
donor2=$FARSWAP_PEER_donor2
integ() { tr ' ' '\n' <"/sys/block/$name/farswap/integrity" | sed -n "s/^$1=//p"; }

# attach ALG [ARGS...]: a fresh device with that check, swapped on;
# chacha20poly1305: an encrypting one, whose check is the cipher's tag.
attach() {
	local alg=$1 how=(--integrity "$1")

	shift
	[ "$alg" != chacha20poly1305 ] || how=(--encrypt)
	dev=$(fs_attach --donor "$donor" --size 128M "${how[@]}" "$@")
	name=${dev#/dev/}
	[ "$(integ alg)" = "$alg" ] || bed_fail "$name: integrity $(integ alg), asked for $alg"
	[ "$alg" != chacha20poly1305 ] || grep -q "^alg=$alg " "/sys/block/$name/farswap/encrypt" ||
		bed_fail "$name: encrypt says '$(cat "/sys/block/$name/farswap/encrypt")'"
	grep -q -- --read-policy <<<"$*" ||
		[ "$(cat "/sys/block/$name/farswap/read_policy")" = fastest ] ||
		bed_fail "$name: read_policy $(cat "/sys/block/$name/farswap/read_policy"), not the default fastest"
	mkswap "$dev" >/dev/null
	swapon "$dev"
}

detach() {
	fs_unlimit_workload
	swapoff "$dev"
	"$FS_CTL" detach "$name"
}

# held SEED [PASSES]: a workload whose pages are out on the donor,
# waiting, after PASSES verify passes (1 by default; 0 where only the
# pages' presence on the donor counts: its verify after the damage reads
# every page, or dies at the first damaged one).
held() {
	fs_workload_start 40 16M --procs 2 --no-fork --passes "${2:-1}" --seed "$1"
	fs_workload_wait_hold 2 600
	[ "$(fs_vmstat pswpout)" -gt 0 ] || bed_fail "nothing swapped out"
}

# damage WHAT...: the donor alters its memory; waits until it has.
damage() {
	bed_signal "damage-$1"
	bed_wait donor "damaged-$1" 300
}

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120

# 1. Integrity off: the damage reaches the workload (the fault is real).
attach off
held 11 0
damage flip
for pid in $(sed -n 's/^HOLD //p' "$FS_WL_LOG"); do kill -USR1 "$pid"; done
wait "$FS_WL_PID" && bed_fail "integrity off, flipped bits on the donor, yet every page verified"
grep -q MISMATCH "$FS_WL_LOG" ||
	bed_fail "integrity off, flipped bits on the donor, yet no process saw them"
bed_log "integrity off: the flipped bits reached the workload ($(grep -c MISMATCH "$FS_WL_LOG") MISMATCH lines)"
[ "$(integ checked)" = 0 ] || bed_fail "integrity off, yet pages were checked"
detach

# 2. to 4. The keyed check (the default), crc32c, and encryption (the
# cipher's tag): damage of every kind is caught; the workload's only
# errors are failed reads.
for alg in siphash crc32c chacha20poly1305; do
	attach "$alg"
	if [ "$alg" != crc32c ]; then
		# An old copy: pages of a first workload, saved on the donor,
		# are written back over a second workload's pages at the same
		# places.
		held 21 0
		damage "snapshot-$alg"
		fs_workload_release
		# Freed swap clusters go to the back of the free list, so the
		# second workload would take fresh ones; after swapoff and
		# swapon it starts from the front again, where the first one
		# was: its pages land at the first one's places.
		swapoff "$dev"
		swapon "$dev"
	fi
	held 22
	damage "all-$alg"
	in0=$(fs_vmstat pswpin)
	fs_workload_release_doomed
	mism=$(integ mismatches)
	bed_result "integrity.$alg.checked" "$(integ checked)"
	bed_result "integrity.$alg.mismatches" "$mism"
	[ "$mism" -gt 0 ] || bed_fail "$alg: the donor damaged pages, none failed a check"
	[ "$(integ checked)" -gt 1000 ] || bed_fail "$alg: too few pages checked"
	[ $(($(fs_vmstat pswpin) - in0)) -gt 0 ] || bed_fail "$alg: nothing swapped in"
	grep -q "failed its integrity check ($alg)" <(dmesg) || bed_fail "$alg: no integrity failure logged"
	"$FS_CTL" status "$name" | sed 's/^/  /'
	detach
done

# 5. Two replicas, encrypted: a page that fails to open on the damaged
# donor (left garbage in the request's page) is read from the other one,
# the damaged page is noted in that copy and rewritten from the other (a
# page, not the whole chunk), and the workload loses nothing: every page
# verifies.
rep() { tr ' ' '\n' <"/sys/block/$name/farswap/replicas" | sed -n "s/^$1=//p"; }
# Reads go to the fastest donor by default, and under TCG either may be
# the faster: round-robin makes half of them read the damaged copies.
key=()
[ -z "$FS_KEY" ] || key=(--key "$FS_KEY")
err=$("$FS_CTL" attach --donor "$donor" --donor "$donor2" --size 128M \
	"${key[@]}" --read-policy sideways 2>&1) &&
	bed_fail "attach took an unknown read policy"
grep -q "bad read_policy 'sideways'" <<<"$err" ||
	bed_fail "attach refused an unknown read policy without saying why: $err"
attach chacha20poly1305 --donor "$donor2" --replicas 2 --read-policy round-robin
[ "$(rep replicas)" = 2 ] || bed_fail "$name has $(rep replicas) replicas, asked for 2"
policy=/sys/block/$name/farswap/read_policy
[ "$(cat "$policy")" = round-robin ] || bed_fail "read_policy $(cat "$policy"), attached with round-robin"
echo fastest >"$policy"
[ "$(cat "$policy")" = fastest ] || bed_fail "read_policy did not change to fastest"
echo sideways >"$policy" 2>/dev/null && bed_fail "read_policy took an unknown policy"
echo round-robin >"$policy"
held 23
damage heal
fs_workload_release
for f in heals failovers; do
	bed_result "integrity.heal.$f" "$(rep $f)"
	[ "$(rep $f)" -gt 0 ] || bed_fail "two replicas, damaged pages, yet no $f"
done
bed_result integrity.heal.mismatches "$(integ mismatches)"
[ "$(rep lost_pages)" = 0 ] || bed_fail "$(rep lost_pages) pages lost with a good replica left"
end=$((SECONDS + 300))
until [ "$(rep degraded)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "$(rep degraded) chunks still degraded 300 s after the damage"
	sleep 1
done
for f in repaired healed_pages repair_bytes; do
	bed_result "integrity.heal.$f" "$(rep $f)"
done
[ "$(rep repaired)" -gt 0 ] || bed_fail "no damaged replica was repaired"
[ "$(rep healed_pages)" -gt 0 ] || bed_fail "no damaged page was rewritten alone"
# Page by page: less traffic than copying each repaired chunk whole.
[ "$(rep repair_bytes)" -lt $(($(rep repaired) << 21)) ] ||
	bed_fail "repair moved $(rep repair_bytes) bytes for $(rep repaired) chunks: whole chunks copied"
"$FS_CTL" status "$name" | sed 's/^/  /'
detach

rmmod farswap
check_kernel_log
bed_signal done
