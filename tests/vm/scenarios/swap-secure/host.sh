#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swap-secure, host side.  1. Authentication: refused without the key,
# with a wrong key, with a key that is not there, with key files that are
# not well-formed keys (each for its reason) and with a logon key of a
# key file's text rather than its secret, and a hostile userspace host
# gets nothing; with the key, attach.  2. dm-crypt (plain, random
# key) over /dev/farswap0: swap to it, the raw device holds no plaintext
# swap signature, and every page verifies.  3. farswap's own encryption
# (--encrypt): with it the donor finds nothing of what the host wrote in
# the memory it lends, and swap to it verifies every page; without it
# (the control: the search works), it finds it all.  4. A key of the
# host's own.  5. Pinned donors: an impersonator holding the host's key
# but not the donor key the host pins gets no session, nor does a donor
# without a donor key; the pinned donor does.
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
# process can read it back.  farswapctl add-key puts the 32 bytes the
# key file decodes to there; a wrong key is a well-formed key of other
# bytes (farswapctl gen-key's).
install -m 600 "$BED/shared.key" /run/shared.key
"$FS_CTL" add-key farswap:secure --key-file /run/shared.key >/dev/null ||
	bed_fail "farswapctl add-key farswap:secure failed"
"$FS_CTL" gen-key /run/wrong.key || bed_fail "farswapctl gen-key failed"
[ "$(stat -c '%a' /run/wrong.key)" = 600 ] ||
	bed_fail "farswapctl gen-key made /run/wrong.key mode $(stat -c '%a' /run/wrong.key), not 600"
"$FS_CTL" gen-key /run/wrong.key 2>/dev/null && bed_fail "farswapctl gen-key replaced an existing key file"
"$FS_CTL" add-key farswap:wrong --key-file /run/wrong.key >/dev/null ||
	bed_fail "farswapctl add-key farswap:wrong failed"
# The old way, the file's text as the logon key: the module wants the
# 32-byte secret and says so.
keyctl padd logon farswap:text @u <"$BED/shared.key" >/dev/null
# Without a key the host itself refuses, unless told; told, the donor does.
refused 'insecure_no_auth=1'
refused 'authenticat' --insecure-no-auth
refused 'authenticat' --key farswap:wrong
refused 'farswap:absent' --key farswap:absent
refused "farswap:text' holds 63 bytes; the secret must be exactly 32" --key farswap:text
refused 'authenticat.*/run/wrong.key' --key-file /run/wrong.key

# Key files that are no key: each refused, before anything reaches the
# module, for its reason, naming the file and how to make a key.
good=$(cut -d: -f3 /run/shared.key)
# A base64 character changed: still base64, another secret or CRC.
flipped=${good:0:5}$(tr 'A-Za-z0-9+/' 'B-Za-z0-9+/A' <<<"${good:5:1}")${good:6}
badkey() {
	printf "$2" >"/run/bad-$1.key"
	chmod 600 "/run/bad-$1.key"
}
badkey old "$(head -c 32 /dev/urandom | base64 -w0)"
badkey version "FARSWAP-2:00:$good:\\n"
badkey transform "FARSWAP-1:01:$good:\\n"
badkey base64 "FARSWAP-1:00:${good:0:40}*${good:41}:\\n"
badkey length "FARSWAP-1:00:${good:0:44}:\\n"
badkey checksum "FARSWAP-1:00:$flipped:\\n"
badkey after "FARSWAP-1:00:$good:\\nmore\\n"
for why in "old:not a farswap key" "version:unknown key version 2" \
	   "transform:unknown key transform 01" "base64:bad base64" \
	   "length:wrong length: the base64 decodes to 33 bytes" \
	   "checksum:checksum mismatch" "after:data after the key"; do
	f=/run/bad-${why%%:*}.key
	refused "key-file $f: ${why#*:}.*farswapctl gen-key" --key-file "$f"
	out=$("$FS_CTL" add-key farswap:bad --key-file "$f" 2>&1) &&
		bed_fail "add-key took $f: $out"
	grep -qF "${why#*:}" <<<"$out" || bed_fail "add-key $f: '$out' does not say '${why#*:}'"
	! grep -qF -e "$(fs_key_secret_hex /run/shared.key)" -e "$good" <<<"$out" ||
		bed_fail "the refusal of $f shows the secret"
done
"$fsc" --mode hostile -i hostile "$donor" >"$BED/hostile.log" 2>&1 ||
	bed_fail "fsclient --mode hostile (no key): $(tr "\n" ";" <"$BED/hostile.log")"
"$fsc" --mode hostile -i hostile-k --key-file /run/wrong.key "$donor" >"$BED/hostile-k.log" 2>&1 ||
	bed_fail "fsclient --mode hostile (wrong key): $(tr "\n" ";" <"$BED/hostile-k.log")"
bed_log "a hostile userspace host, without the key and with a wrong one, got nothing"
bed_signal refused
bed_wait donor counted 120

# What a handshake with session keys costs an attach, end to end (the
# control QP, X25519 and the proofs, the I/O QPs' joins): a figure.
t0=$(date +%s%N)
dev=$(fs_attach --donor "$donor" --size 128M --key farswap:secure)
bed_log "attach with the key (session keys, tagged control messages) took $((($(date +%s%N) - t0) / 1000000)) ms"
name=${dev#/dev/}
grep -qx 'auth=hmac-sha256 pinned=0' "/sys/block/$name/farswap/auth" ||
	bed_fail "sysfs auth says '$(cat "/sys/block/$name/farswap/auth")'"
keyhex=$(fs_key_secret_hex /run/shared.key)
! grep -rqF -e "$keyhex" -e "$good" /sys/block/"$name"/farswap/ /sys/block/"$name"/donors/ <(dmesg) <("$FS_CTL" status "$name" --json) ||
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
[ "$(fs_blk_stat "$name" reads)" -gt 0 ] || bed_fail "no read came back from the donor"
cryptsetup close "$map"
"$FS_CTL" status "$name" | sed 's/^/  /'

# 3. Encryption on the host.  Pages of a marker, written straight to the
# device: the donor looks for it in the memory it lends.
marker=farswap-plaintext-marker
head -c $((64 * 4096)) < <(yes "$marker") >/run/marker
"$FS_CTL" status "$name" | bed_grep 'encryption: off' || bed_fail "status does not say encryption is off"
# put_marker: 64 pages of it at 64 MiB, read back whole through farswap.
put_marker() {
	dd if=/run/marker of="$dev" bs=4096 seek=16384 oflag=direct conv=fsync status=none ||
		bed_fail "writing the marker to $dev failed"
	cmp /run/marker <(dd if="$dev" bs=4096 skip=16384 count=64 iflag=direct status=none) ||
		bed_fail "the marker did not read back from $dev"
}
"$FS_CTL" detach "$name"

err=$("$FS_CTL" attach --donor "$donor" --size 128M --key farswap:secure --encrypt --integrity crc32c 2>&1) &&
	bed_fail "attach took --encrypt with --integrity"
grep -q "integrity= with encrypt=1" <<<"$err" || bed_fail "--encrypt --integrity refused without saying why: $err"
dev=$(fs_attach --donor "$donor" --size 128M --key farswap:secure --encrypt)
name=${dev#/dev/}
enc() { tr ' ' '\n' <"/sys/block/$name/farswap/$1" | sed -n "s/^$2=//p"; }
[ "$(enc encrypt alg)" = chacha20poly1305 ] || bed_fail "encrypt says '$(cat "/sys/block/$name/farswap/encrypt")'"
[ "$(enc integrity alg)" = chacha20poly1305 ] || bed_fail "integrity says '$(cat "/sys/block/$name/farswap/integrity")'"
[ "$(cat "/sys/block/$name/queue/max_hw_sectors_kb")" = 64 ] ||
	bed_fail "an encrypting device takes requests of $(cat "/sys/block/$name/queue/max_hw_sectors_kb") KiB, its bounce pages hold 64"
put_marker
bed_signal sealed-written
bed_wait donor sealed-scanned 300

mkswap "$dev" >/dev/null
swapon "$dev"
out0=$(fs_vmstat pswpout)
fs_workload_start 40 16M --procs 2 --no-fork --seed "${FARSWAP_SEED:-$RANDOM}"
fs_workload_wait_hold 2 600
pswpout=$(($(fs_vmstat pswpout) - out0))
bed_result secure.encrypt.pswpout "$pswpout"
[ "$pswpout" -ge 2048 ] || bed_fail "encrypted: only $pswpout pages swapped out"
in0=$(fs_vmstat pswpin)
fs_unlimit_workload
swapoff "$dev"
pswpin=$(($(fs_vmstat pswpin) - in0))
bed_result secure.encrypt.swapoff_pswpin "$pswpin"
fs_workload_release
bed_result secure.encrypt.checked "$(enc integrity checked)"
[ "$(enc integrity checked)" -ge "$pswpin" ] ||
	bed_fail "$(enc integrity checked) pages opened, $pswpin swapped in"
[ "$(enc integrity mismatches)" = 0 ] || bed_fail "$(enc integrity mismatches) sealed pages failed to open"
! grep -rqF "$keyhex" /sys/block/"$name"/farswap/ /sys/block/"$name"/donors/ <("$FS_CTL" status "$name" --json) ||
	bed_fail "the key shows in sysfs or status"
grep -q '"encrypt": {' <("$FS_CTL" status "$name" --json) || bed_fail "status --json has no encrypt object"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"

# The control, last: so no earlier marker can linger in the donor's
# free slabs before they are zeroed.
dev=$(fs_attach --donor "$donor" --size 128M --key farswap:secure)
name=${dev#/dev/}
put_marker
bed_signal plain-written
bed_wait donor plain-scanned 300
"$FS_CTL" detach "$name"

# 4. A key of this host's own (farswapd's host-keys, named by this
# host's persistent id, /etc/farswap/hostid as the package makes it,
# which farswapctl attach sends): the shared secret is refused from now
# on, its own works, and the device says whose id it shows.
mkdir -p /etc/farswap
cat /proc/sys/kernel/random/uuid >/etc/farswap/hostid
cp /etc/farswap/hostid "$BED/host_id"
bed_signal host-id
bed_wait donor host-key 300
refused 'authenticat' --key farswap:secure
install -m 600 "$BED/host.key" /run/host.key
"$FS_CTL" add-key farswap:own --key-file /run/host.key >/dev/null ||
	bed_fail "farswapctl add-key farswap:own failed"
dev=$(fs_attach --donor "$donor" --size 128M --key farswap:own)
name=${dev#/dev/}
bed_log "with a key of its own: $dev"
[ "$(</sys/block/"$name"/farswap/host_id)" = "$(</etc/farswap/hostid)" ] ||
	bed_fail "$name shows host id $(</sys/block/"$name"/farswap/host_id), not /etc/farswap/hostid's"
[ "$(</sys/block/"$name"/farswap/host_id_source)" = attach ] ||
	bed_fail "$name's host_id_source is $(</sys/block/"$name"/farswap/host_id_source), not attach"
[ "$(</sys/kernel/farswap/host_id)" != "$(</etc/farswap/hostid)" ] ||
	bed_fail "the module's own id is the file's: the attach option proved nothing"
"$FS_CTL" status "$name" | bed_grep "host id: $(</etc/farswap/hostid)" ||
	bed_fail "farswapctl status does not show the device's host id"
"$FS_CTL" detach "$name"

# 5. Pinned donors.  On the donor's machine: at port 7472 the donor this
# host pins (its donor-key-file is $BED/donor.key, handed to this host as
# an admin would), at 7473 an impersonator that holds this host's key
# too (as any other donor of the pool does) but another donor key, and at
# 7471 the donor without a donor key.  Pinned, only the first gets the
# session; unpinned, the impersonator does too (what pinning closes).
bed_signal pin-ready
bed_wait donor pinned-up 300
install -m 0600 "$BED/donor.key" /run/donor.key
pinned() { "$FS_CTL" attach --key farswap:own --donor-key-file /run/donor.key "$@"; }
for at in "$donor:7473 none of the 1 donor key this device pins" \
	  "$donor:7471 no donor key to prove"; do
	read -r addr why <<<"$at"
	if out=$(pinned --donor "$addr" --size 64M 2>&1); then
		bed_fail "a pinned attach to $addr succeeded: $out"
	fi
	grep -qF -- "$why" <<<"$out" || bed_fail "pinned attach to $addr: '$out' does not say '$why'"
	bed_log "pinned attach to $addr refused: $out"
done
dev=$(pinned --donor "$donor:7472" --size 64M) || bed_fail "the pinned donor refused: $dev"
name=${dev#/dev/}
[ "$(</sys/block/"$name"/farswap/auth)" = "auth=hmac-sha256 pinned=1" ] ||
	bed_fail "a pinned device's auth says '$(</sys/block/"$name"/farswap/auth)'"
"$FS_CTL" status "$name" | bed_grep "donors pinned: each proves one of 1 donor key" ||
	bed_fail "farswapctl status does not say the donors are pinned"
head -c 16M /dev/urandom >/run/pinned-data
dd if=/run/pinned-data of="$dev" bs=1M oflag=direct conv=fsync status=none
cmp /run/pinned-data <(dd if="$dev" bs=1M count=16 iflag=direct status=none) ||
	bed_fail "16 MiB written to the pinned donor did not read back"
[ "$(fs_donor_field "$name" "$donor" writes)" -gt 0 ] || bed_fail "no write reached the pinned donor"
"$FS_CTL" detach "$name"
# Unpinned, the same host key lets the impersonator answer.
dev=$(fs_attach --donor "$donor:7473" --size 64M --key farswap:own) ||
	bed_fail "an unpinned attach to the impersonator failed: $dev"
"$FS_CTL" status "${dev#/dev/}" | bed_grep "donors not pinned" ||
	bed_fail "farswapctl status does not say the donors are not pinned"
"$FS_CTL" detach "${dev#/dev/}"
bed_log "pinned: the donor key's holder alone got the session; unpinned, the impersonator did too"
rmmod farswap
check_kernel_log
bed_signal done
