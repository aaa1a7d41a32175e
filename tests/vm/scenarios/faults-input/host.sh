#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# faults-input, host side.  Every refused attach must exit non-zero, say
# why (farswapctl and dmesg), take bounded time and leave no device.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

donor=$FARSWAP_PEER_donor
ctl=$FS_CTL

no_devices() {
	! ls -d /sys/block/farswap* >/dev/null 2>&1
}

# expect_refused PATTERN MAXSECS ARGS...: attach must fail, saying PATTERN.
# The attach holds the donors' key: what fails is the input, not that.
expect_refused() {
	local pat=$1 max=$2 out rc=0 t0=$SECONDS

	shift 2
	out=$("$ctl" attach "$@" --key "$FS_KEY" 2>&1) || rc=$?
	[ $rc -ne 0 ] || bed_fail "attach $* succeeded: $out"
	grep -Eq "$pat" <<<"$out" || bed_fail "attach $*: want '$pat', got: $out"
	[ $((SECONDS - t0)) -le "$max" ] || bed_fail "attach $* took $((SECONDS - t0)) s (limit $max)"
	no_devices || bed_fail "attach $* left a device behind"
	bed_log "refused as expected in $((SECONDS - t0)) s: $out"
}

# expect_ctl_refused PATTERN COMMAND: COMMAND written to the control
# device as it is, past farswapctl's checks: the write fails and the
# result read back from the same open file is "error=" and the reason.
expect_ctl_refused() {
	local result=

	exec 3<>/dev/farswap-ctl
	if printf '%s' "$2" >&3 2>/dev/null; then
		exec 3>&-
		bed_fail "control command '$2' succeeded"
	fi
	read -r result <&3 || true
	exec 3>&-
	grep -Eq "^error=.*$1" <<<"$result" ||
		bed_fail "control command '$2': the result is '$result', want '$1'"
	no_devices || bed_fail "control command '$2' left a device behind"
}

fs_load_module ctrl_timeout_ms=3000 connect_timeout_ms=3000
bed_wait donor ready 120

# Malformed commands: refused before any network traffic.
expect_refused "bad size" 2 --donor "$donor" --size 0
expect_refused "bad size" 2 --donor "$donor" --size 12Q
expect_refused "bad donor address" 2 --donor 10.77.1 --size 64M
expect_refused "bad donor address" 2 --donor "$donor:99999" --size 64M
expect_refused "listed twice" 2 --donor "$donor" --donor "$donor:7471" --size 64M
expect_refused "bad slab_size" 2 --donor "$donor" --size 64M --slab-size 3M
expect_refused "bad queues" 2 --donor "$donor" --size 64M --queues 0
expect_refused "needs --donor and --size" 2 --size 64M
expect_ctl_refused "bad option 'bogus'" "bogus"
expect_ctl_refused "unknown option 'colour'" "donor=$donor size=64M colour=blue"
expect_ctl_refused "no donor given" "size=64M"

# Sizes the donor's slabs make impossible (it serves 16 MiB slabs).
expect_refused "not a multiple of the slab size" 20 --donor "$donor" --size 40M
expect_refused "smaller than one slab" 20 --donor "$donor" --size 8M
expect_refused "serves 16 MiB slabs, slab_size asks for 32 MiB" 20 --donor "$donor" --size 64M --slab-size 32M

# Nobody there, nobody listening.
expect_refused "10.77.1.99:7471 (unreachable|did not answer)" 20 --donor 10.77.1.99 --size 64M
expect_refused "refused the connection.*farswapd running" 20 --donor "$donor:7999" --size 64M

# Donors that misbehave at connect time.
expect_refused "malformed reply" 20 --donor "$donor:7481" --size 64M
expect_refused "speaks protocol versions 9-9" 20 --donor "$donor:7482" --size 64M
expect_refused "refused the connection: donor is short of memory" 20 --donor "$donor:7483" --size 64M

# Donors that misbehave later: the first write fails with EIO in bounded
# time; the host stays up and the device can be detached.
expect_write_fails() {
	local port=$1 pat=$2 dev name t0
	# fakedonor authenticates nobody: attach without a key.
	local FS_KEY=

	dev=$(fs_attach --donor "$donor:$port" --size 64M)
	name=${dev#/dev/}
	t0=$SECONDS
	if dd if=/dev/urandom of="$dev" bs=4k count=1 oflag=direct 2>/dev/null; then
		bed_fail "write to $dev on a donor in mode $port succeeded"
	fi
	[ $((SECONDS - t0)) -le 30 ] || bed_fail "the failing write took $((SECONDS - t0)) s"
	grep -Eq "$pat" <(dmesg) || bed_fail "dmesg does not say '$pat'"
	"$ctl" status "$name" | sed 's/^/  /'
	"$ctl" detach "$name"
	no_devices || bed_fail "detach of $name left it behind"
	bed_log "donor on port $port: write failed in $((SECONDS - t0)) s as expected"
}
# A host with a key never uses a donor that cannot prove it holds it
# (someone answering at a donor's address).
expect_refused "failed authentication: it does not offer it" 20 --donor "$donor:7484" --size 64M
expect_write_fails 7484 "malformed control message"
expect_write_fails 7485 "no reply to SLAB_ALLOC_REQ within 3000 ms"
expect_write_fails 7486 "granted a slab of the wrong size"

# A real donor: duplicate attach, detach while in use.
dev=$(fs_attach --donor "$donor" --size 64M)
name=${dev#/dev/}
expect_refused_dup() {
	local out rc=0

	out=$("$ctl" attach --donor "$donor" --size 64M --key "$FS_KEY" 2>&1) || rc=$?
	[ $rc -ne 0 ] && grep -q "already serves $name" <<<"$out" ||
		bed_fail "duplicate attach: $out"
	[ "$(ls -d /sys/block/farswap* | wc -l)" -eq 1 ] ||
		bed_fail "duplicate attach left a second device"
}
expect_refused_dup
# The device's read-write tunables refuse what they cannot hold and keep
# their value.
wif=/sys/block/$name/farswap/write_inflight_kb
[ "$(cat "$wif")" = 512 ] || bed_fail "write_inflight_kb is $(cat "$wif"), not the default 512"
for bad in -1 1048577 4294967296 abc ""; do
	echo "$bad" >"$wif" 2>/dev/null && bed_fail "write_inflight_kb took '$bad'"
	[ "$(cat "$wif")" = 512 ] || bed_fail "write_inflight_kb is $(cat "$wif") after '$bad' was refused"
done
echo 0 >"$wif" && [ "$(cat "$wif")" = 0 ] || bed_fail "write_inflight_kb 0 (no cap) not taken"
echo 1048576 >"$wif" && [ "$(cat "$wif")" = 1048576 ] || bed_fail "write_inflight_kb 1048576 not taken"
echo 512 >"$wif"
mkswap "$dev" >/dev/null
swapon "$dev"
out=$("$ctl" detach "$name" 2>&1) && bed_fail "detach of a swap device succeeded"
grep -q "in use" <<<"$out" || bed_fail "detach in use: $out"
swapoff "$dev"
"$ctl" detach "$name"
no_devices || bed_fail "detach left $name"

# The boot-time unit's script: attach, mkswap, swapon with a priority;
# and back.
cat >/tmp/swap.conf <<CONF
[farswap0]
donors = $donor
size = 64M
swap-priority = 7
attach-options = --key $FS_KEY
CONF
PATH=$FARSWAP_SRC/tools:$PATH FARSWAP_SWAP_CONF=/tmp/swap.conf \
	"$FARSWAP_SRC/tools/farswap-swap" start
grep -Eq '^/dev/farswap0[[:space:]]+partition[[:space:]]+65532[[:space:]]+0[[:space:]]+7$' /proc/swaps ||
	bed_fail "farswap-swap start: $(cat /proc/swaps)"
PATH=$FARSWAP_SRC/tools:$PATH FARSWAP_SWAP_CONF=/tmp/swap.conf \
	"$FARSWAP_SRC/tools/farswap-swap" stop
no_devices || bed_fail "farswap-swap stop left the device"

# Module parameters make a device at load time.
rmmod farswap
insmod "$FARSWAP_KO" write_inflight_kb=1048577 2>/dev/null &&
	bed_fail "insmod write_inflight_kb=1048577 succeeded"
insmod "$FARSWAP_KO" donors="$donor" size=64M key="$FS_KEY"
[ -b /dev/farswap0 ] || bed_fail "no /dev/farswap0 after insmod donors=... size=... key=..."
"$ctl" status farswap0 | sed 's/^/  /'
rmmod farswap
no_devices || bed_fail "rmmod left a device"
rmmod farswap 2>/dev/null && bed_fail "rmmod twice succeeded"

check_kernel_log
bed_signal done
