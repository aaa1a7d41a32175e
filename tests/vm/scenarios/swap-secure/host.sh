#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-secure, host side.  1. Authentication: refused without the key,
# with a wrong key, with a key that is not there, and a hostile userspace
# host gets nothing; with the key, attach.  2. dm-crypt (plain, random
# key) over /dev/farswap0: swap to it, the raw device holds no plaintext
# swap signature, and every page verifies.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
map=fswcrypt
fsc=$FARSWAP_SRC/tests/tools/fsclient

for t in cryptsetup keyctl; do
	command -v "$t" >/dev/null || bed_fail "$t is not installed (make setup installs it)"
done
modprobe dm_crypt || bed_fail "modprobe dm_crypt failed"
modprobe rdma_ucm || bed_fail "modprobe rdma_ucm failed"
fs_load_module
bed_wait donor ready 120

# refused WHY ARGS...: attach must fail, its reason matching WHY.
refused() {
	local why=$1 out

	shift
	if out=$("$FS_CTL" attach --donor "$donor" --size 128M "$@" 2>&1); then
		bed_fail "attach $* succeeded: $out"
	fi
	grep -Eqi -- "$why" <<<"$out" || bed_fail "attach $*: reason '$out' does not say /$why/"
	bed_log "attach $* refused: $out"
}

# 1. Authentication.  The secret as a logon key: the kernel uses it, no
# process can read it back.
keyctl padd logon farswap:secure @u <"$BED/shared.key" >/dev/null
head -c 32 /dev/urandom | keyctl padd logon farswap:wrong @u >/dev/null
refused 'authenticat'
refused 'authenticat' --key farswap:wrong
refused 'farswap:absent' --key farswap:absent
head -c 32 /dev/urandom >/run/wrong.key
"$fsc" --mode hostile -i hostile "$donor" >"$BED/hostile.log" 2>&1 ||
	bed_fail "fsclient --mode hostile (no key): $(tr "\n" ";" <"$BED/hostile.log")"
"$fsc" --mode hostile -i hostile-k --key-file /run/wrong.key "$donor" >"$BED/hostile-k.log" 2>&1 ||
	bed_fail "fsclient --mode hostile (wrong key): $(tr "\n" ";" <"$BED/hostile-k.log")"
bed_log "a hostile userspace host, without the key and with a wrong one, got nothing"
bed_signal refused
bed_wait donor counted 120

dev=$(fs_attach --donor "$donor" --size 128M --key farswap:secure)
name=${dev#/dev/}
grep -qx 'auth=hmac-sha256' "/sys/block/$name/farswap/auth" ||
	bed_fail "sysfs auth says '$(cat "/sys/block/$name/farswap/auth")'"
keyhex=$(od -An -tx1 "$BED/shared.key" | tr -d ' \n')
! grep -rqF "$keyhex" /sys/block/"$name"/farswap/ <(dmesg) <("$FS_CTL" status "$name" --json) ||
	bed_fail "the key shows in sysfs, the kernel log or status"

# 2. Confidentiality: as crypttab's "swap" option, plain mode with a
# fresh random key each time.
cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
	--key-file /dev/urandom "$dev" "$map" || bed_fail "cryptsetup open failed"
mkswap "/dev/mapper/$map" >/dev/null
swapon "/dev/mapper/$map"
grep -q SWAPSPACE2 <(dd if="/dev/mapper/$map" bs=4096 count=1 status=none) ||
	bed_fail "no swap signature through the mapping"

out0=$(fs_vmstat pswpout)
fs_workload_start 40 16M --procs 2 --no-fork --seed "${FARSWAP_SEED:-$RANDOM}"
fs_workload_wait_hold 2 600
pswpout=$(($(fs_vmstat pswpout) - out0))
writes=$(fs_donor_field "$name" "$donor" writes)
bed_result secure.pswpout "$pswpout"
bed_result secure.rdma_writes "$writes"
[ "$pswpout" -ge 2048 ] || bed_fail "only $pswpout pages swapped out"
[ "$writes" -gt 0 ] || bed_fail "no RDMA write went to the donor"

# What the donor holds, as farswap reads it back: the signature written
# through dm-crypt must not be there in the clear.
if grep -q SWAPSPACE2 <(dd if="$dev" bs=4096 count=1 status=none); then
	bed_fail "the swap signature is readable on $dev: the donor holds plaintext"
fi
bed_log "the farswap device holds ciphertext only (no swap signature on $dev)"

in0=$(fs_vmstat pswpin)
fs_unlimit_workload
swapoff "/dev/mapper/$map"
bed_result secure.swapoff_pswpin $(($(fs_vmstat pswpin) - in0))
fs_workload_release
[ "$(fs_dev_stat "$name" reads)" -gt 0 ] || bed_fail "no read came back from the donor"
cryptsetup close "$map"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
