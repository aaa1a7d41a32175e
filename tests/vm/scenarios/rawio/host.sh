#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rawio, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$FARSWAP_PEER_donor" --donor "$FARSWAP_PEER_donor2" --size 64M)
name=${dev#/dev/}
slab=$(cat "/sys/block/$name/farswap/slab_size")
[ "$slab" -eq $((4 << 20)) ] || bed_fail "slab size $slab, want 4 MiB"
echo always >/sys/kernel/mm/transparent_hugepage/enabled

python3 "$FARSWAP_SRC/tests/vm/scenarios/rawio/rawio.py" "$dev" "$slab" "$seed" || bed_fail "rawio.py failed"
"$FS_CTL" status "$name"
[ "$(fs_dev_stat "$name" zero_reads)" -gt 0 ] || bed_fail "no read was served as zeros"
for d in "$FARSWAP_PEER_donor" "$FARSWAP_PEER_donor2"; do
	[ "$(fs_donor_field "$name" "$d" writes)" -gt 0 ] || bed_fail "nothing written to $d"
done

# A directory per donor, by attach order, and the latency in debugfs.
[ "$(ls "/sys/block/$name/donors" | tr '\n' ' ')" = "0 1 " ] ||
	bed_fail "donor directories: $(ls "/sys/block/$name/donors" | tr '\n' ' ')"
i=0
for d in "$FARSWAP_PEER_donor" "$FARSWAP_PEER_donor2"; do
	dir=/sys/block/$name/donors/$i
	case $(cat "$dir/address") in
	"$d":[0-9]*) ;;
	*) bed_fail "donors/$i/address is $(cat "$dir/address"), want $d:PORT" ;;
	esac
	[ "$(cat "$dir/state")" = live ] || bed_fail "donors/$i/state: $(cat "$dir/state")"
	[ "$(cat "$dir/slabs")" -gt 0 ] && [ "$(cat "$dir/total_slabs")" -ge "$(cat "$dir/slabs")" ] &&
		[ "$(cat "$dir/free_slabs")" -le "$(cat "$dir/total_slabs")" ] ||
		bed_fail "donors/$i slabs $(cat "$dir/slabs") free $(cat "$dir/free_slabs") total $(cat "$dir/total_slabs")"
	sed 's/=[0-9]*//g' "$dir/stat" | bed_grep -x 'reads writes read_bytes write_bytes errors reconnects migrated_out revoked resumed resume_refused' ||
		bed_fail "donors/$i/stat: $(cat "$dir/stat")"
	for dir_op in read write; do
		grep -Eq "^$(cat "$dir/address" | sed 's/[.[]/\\&/g') $dir_op count=[0-9]+ p50_us=[0-9]+ p90_us=[0-9]+ p99_us=[0-9]+ p999_us=[0-9]+$" \
			"/sys/kernel/debug/farswap/$name/latency" ||
			bed_fail "no $dir_op latency of donor $i: $(cat "/sys/kernel/debug/farswap/$name/latency")"
	done
	i=$((i + 1))
done
for dir_op in read write; do
	grep -Eq "^device $dir_op count=[1-9]" "/sys/kernel/debug/farswap/$name/latency" ||
		bed_fail "no device $dir_op latency: $(cat "/sys/kernel/debug/farswap/$name/latency")"
done
[ ! -e "/sys/block/$name/farswap/donors" ] && [ ! -e "/sys/block/$name/farswap/latency" ] ||
	bed_fail "the old donors and latency files are still there"
bed_log "donors/0 and donors/1 as attached; latency in debugfs for the device and each donor"

# Data in every slab survives its neighbours' traffic: fill the whole
# device, then read it all back.  Traced: the data path's events fire,
# and tests/bench/tracebreak reads them.
tracefs=/sys/kernel/tracing
mountpoint -q "$tracefs" || mount -t tracefs nodev "$tracefs"
: >"$tracefs/trace"
echo 1 >"$tracefs/events/farswap/enable"
head -c 64M /dev/urandom >/tmp/fill
dd if=/tmp/fill of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of=/tmp/back bs=1M iflag=direct status=none
echo 0 >"$tracefs/events/farswap/enable"
cmp /tmp/fill /tmp/back || bed_fail "the whole-device read differs from what was written"
bed_log "64 MiB written and read back through every slab"
cp "$tracefs/trace" /tmp/farswap.trace
for ev in farswap_queue_rq farswap_post farswap_complete farswap_end; do
	grep -q ": $ev: dev=$name " /tmp/farswap.trace || bed_fail "no $ev event in the trace"
done
python3 "$FARSWAP_SRC/tests/bench/tracebreak" /tmp/farswap.trace >/tmp/breakdown ||
	bed_fail "tracebreak failed"
sed 's/^/  /' /tmp/breakdown
for op in read write; do
	grep -Eq "^$op +total +[1-9]" /tmp/breakdown || bed_fail "tracebreak: no $op request ended"
done
bed_log "trace events seen on the data path: $(grep -c ': farswap_end: ' /tmp/farswap.trace) requests ended"

# Discard everything: every chunk lets go, every donor slab goes back.
blkdiscard "$dev"
end=$((SECONDS + 30))
until grep -q '^held=0 ' "/sys/block/$name/farswap/slabs"; do
	[ $SECONDS -lt $end ] || bed_fail "slabs not given back after discarding everything: $(cat "/sys/block/$name/farswap/slabs")"
	sleep 0.5
done
grep -q ' bound=0 ' "/sys/block/$name/farswap/chunks" ||
	bed_fail "chunks still bound: $(cat "/sys/block/$name/farswap/chunks")"
[ "$(fs_dev_stat "$name" releases)" -eq "$(fs_dev_stat "$name" slab_allocs)" ] ||
	bed_fail "$(fs_dev_stat "$name" slab_allocs) slabs taken, $(fs_dev_stat "$name" releases) given back"
for d in "$FARSWAP_PEER_donor" "$FARSWAP_PEER_donor2"; do
	[ "$(fs_donor_field "$name" "$d" slabs)" -eq 0 ] || bed_fail "$d still holds slabs"
done
dd if="$dev" bs=1M count=64 iflag=direct status=none | cmp -s - <(head -c 64M /dev/zero) ||
	bed_fail "a discarded device does not read as zeros"
bed_log "discarding everything gave every slab back; the device reads as zeros"

# A slot that held another chunk's pages: a read that spans written and
# never-written pages returns only the written ones, zeros for the rest.
chunk=$((2 << 20))
head -c "$chunk" /dev/zero | tr '\0' '\252' >/tmp/old
dd if=/tmp/old of="$dev" bs=1M count=2 oflag=direct status=none
dd if=/tmp/old of="$dev" bs=4K count=1 seek=$((chunk / 4096)) oflag=direct status=none
held=$(sed 's/^held=\([0-9]*\) .*/\1/' "/sys/block/$name/farswap/slabs")
blkdiscard -o 0 -l "$chunk" "$dev"
head -c 4096 /dev/urandom >/tmp/page
dd if=/tmp/page of="$dev" bs=4K count=1 seek=$((2 * chunk / 4096)) oflag=direct status=none
[ "$(sed 's/^held=\([0-9]*\) .*/\1/' "/sys/block/$name/farswap/slabs")" = "$held" ] ||
	bed_fail "the new chunk took a new slab, not the discarded chunk's slot"
dd if="$dev" of=/tmp/back bs=256K count=8 skip=$((2 * chunk / 262144)) iflag=direct status=none
cmp <(head -c 4096 /tmp/back) /tmp/page || bed_fail "the written page of a reused slot reads wrong"
cmp <(tail -c +4097 /tmp/back) <(head -c $((chunk - 4096)) /dev/zero) ||
	bed_fail "never-written pages of a reused slot return the old chunk's data"
bed_log "a reused slot returns zeros for the pages its new chunk never wrote"

# The write cap: with none (0) writes are counted all the same, so the
# count is back at 0 once they are done and a cap set later holds from
# its first write; at a 4 KiB cap, 16 writes at once are held, and all
# complete.
wif=/sys/block/$name/farswap/write_inflight_kb
fio_w=(--name=w --filename="$dev" --direct=1 --ioengine=libaio --bs=4k --rw=randwrite
	--iodepth=16 --size=32M --io_size=2M --output-format=terse)
echo 0 >"$wif"
fio "${fio_w[@]}" >/dev/null || bed_fail "fio: writes with no cap failed"
[ "$(fs_dev_stat "$name" write_inflight_bytes)" = 0 ] ||
	bed_fail "writes with no cap done, yet write_inflight_bytes=$(fs_dev_stat "$name" write_inflight_bytes)"
echo 4 >"$wif"
held0=$(fs_dev_stat "$name" write_throttled)
fio "${fio_w[@]}" >/dev/null || bed_fail "fio: writes at a 4 KiB cap failed"
held1=$(fs_dev_stat "$name" write_throttled)
[ "$held1" -gt "$held0" ] || bed_fail "16 writes at once were never held at a 4 KiB cap"
[ "$(fs_dev_stat "$name" write_inflight_bytes)" = 0 ] ||
	bed_fail "writes at a 4 KiB cap done, yet write_inflight_bytes=$(fs_dev_stat "$name" write_inflight_bytes)"
echo 512 >"$wif"
bed_log "write cap: counted with none; at 4 KiB, writes held $((held1 - held0)) times and all done"

# Readers of the donors' files and the debugfs latency while the device
# goes: detach waits for them, they see the files vanish, nothing else.
(
	while [ -d "/sys/block/$name" ]; do
		cat /sys/block/"$name"/donors/*/* "/sys/kernel/debug/farswap/$name/latency" >/dev/null 2>&1 || :
	done
) &
reader=$!
sleep 0.5
"$FS_CTL" detach "$name"
wait "$reader"
[ ! -e "/sys/kernel/debug/farswap/$name" ] || bed_fail "the device's debugfs directory outlived it"
rmmod farswap
[ ! -e /sys/kernel/debug/farswap ] || bed_fail "farswap's debugfs directory outlived the module"
check_kernel_log
bed_signal done
