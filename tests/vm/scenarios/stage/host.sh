#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stage, host side.  Pages of the device by 4 KiB index: the base data
# fills pages 0-1023 (4 MiB, two chunks, both replicas); A is a staged
# 64 KiB write at pages 64-79, B a newer staged 8 KiB at pages 66-67.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$FARSWAP_PEER_donor" --donor "$FARSWAP_PEER_donor2" \
	--size 64M --encrypt --replicas 2)
name=${dev#/dev/}
pause=/sys/kernel/debug/farswap/$name/stage_pause
stage_field() {
	tr ' ' '\n' <"/sys/block/$name/farswap/stage" | sed -n "s/^$1=//p"
}
# N pages at page P of the device, direct, in one read or write call
# (the block layer cuts a call into requests of at most 64 KiB).
dev_read() {
	dd if="$dev" bs=$(($2 * 4096)) count=1 skip=$(($1 * 4096)) \
		iflag=direct,skip_bytes status=none
}
dev_write() {
	dd if="$1" of="$dev" bs=$(($3 * 4096)) count=1 seek=$(($2 * 4096)) \
		oflag=direct,seek_bytes status=none
}
file_pages() {
	dd if="$1" bs=4K skip="$2" count="$3" status=none
}

queues=$(($(ls "/sys/block/$name/mq" | wc -l) / 2))
slots=$(stage_field slots)
# bytes: each slot's 64 KiB and its context (under 64 KiB more).
bytes=$(stage_field bytes)
[ "$slots" -eq 64 ] && [ "$(stage_field slot_bytes)" -eq 65536 ] &&
	[ "$bytes" -gt $((queues * 64 * 65536)) ] &&
	[ "$bytes" -lt $((queues * 64 * 2 * 65536)) ] &&
	[ "$(stage_field used)" -eq 0 ] ||
	bed_fail "stage: $(cat "/sys/block/$name/farswap/stage"), want 64 slots of 64 KiB on each of $queues write queues"
[ "$(cat "/sys/block/$name/queue/max_hw_sectors_kb")" -eq 64 ] ||
	bed_fail "max_hw_sectors_kb $(cat "/sys/block/$name/queue/max_hw_sectors_kb"), want 64 (a staging slot)"
bed_log "staging: $(cat "/sys/block/$name/farswap/stage")"

# The base: every page of two chunks written (staged once bound) and read back.
head -c 4M /dev/urandom >/tmp/expect
# A chunk's first write binds it, not staged: one each, then all of it.
dev_write /tmp/expect 0 1
dd if=/tmp/expect bs=4K skip=512 count=1 status=none >/tmp/p512
dev_write /tmp/p512 512 1
dev_write /tmp/expect 0 1024
dev_read 0 1024 | cmp -s - /tmp/expect || bed_fail "the base data reads back wrong"
end=$((SECONDS + $(bed_secs 30)))
until [ "$(stage_field used)" -eq 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "staged writes not written: $(cat "/sys/block/$name/farswap/stage")"
	sleep 0.2
done
[ "$(fs_dev_stat "$name" staged)" -gt 0 ] || bed_fail "no write of a bound chunk was staged"
bed_log "base written, $(fs_dev_stat "$name" staged) writes staged"

# Held back: A completes staged, and reads of it are served from the copy.
echo 1 >"$pause"
staged0=$(fs_dev_stat "$name" staged)
sreads0=$(fs_dev_stat "$name" stage_reads)
head -c 64K /dev/urandom >/tmp/a
dev_write /tmp/a 64 16
[ "$(stage_field used)" -eq 1 ] && [ "$(fs_dev_stat "$name" staged)" -eq $((staged0 + 1)) ] ||
	bed_fail "A is not staged: $(cat "/sys/block/$name/farswap/stage"), staged=$(fs_dev_stat "$name" staged)"
dev_read 64 16 | cmp -s - /tmp/a || bed_fail "A read while staged returns other bytes"
dev_read 70 4 | cmp -s - <(file_pages /tmp/a 6 4) || bed_fail "pages 70-73 of A read while staged return other bytes"
[ "$(fs_dev_stat "$name" stage_reads)" -eq $((sreads0 + 2)) ] ||
	bed_fail "$(($(fs_dev_stat "$name" stage_reads) - sreads0)) reads served from staging, want 2"
bed_log "A staged (write done, RDMA held back); two reads of it served from the staged copy"

# A read that A holds only in part waits for it.
dev_read 63 2 >/tmp/part &
part=$!
sleep 2
kill -0 "$part" 2>/dev/null || bed_fail "a read of pages 63-64 (64 staged, 63 not) did not wait for the staged write"

# B over A's pages 66-67: staged too, behind A; reads see B.
head -c 8K /dev/urandom >/tmp/b
dev_write /tmp/b 66 2
[ "$(stage_field used)" -eq 2 ] || bed_fail "B is not staged: $(cat "/sys/block/$name/farswap/stage")"
dev_read 66 2 | cmp -s - /tmp/b || bed_fail "pages 66-67 read while A and B are staged are not B"
dev_read 64 2 | cmp -s - <(file_pages /tmp/a 0 2) || bed_fail "pages 64-65 read while A and B are staged are not A's"
bed_log "B staged behind A; reads see B where it wrote, A elsewhere"

# The expected device: the base, then A, then B.
dd if=/tmp/a of=/tmp/expect bs=4K seek=64 conv=notrunc status=none
dd if=/tmp/b of=/tmp/expect bs=4K seek=66 conv=notrunc status=none

# donor2's power is cut while A and B are staged; then they go out.
bed_signal cut
bed_wait donor2 cut-done 60
fs_wait_donor_state "$name" "$FARSWAP_PEER_donor2" '!live' 60
bed_log "donor2's farswapd killed with A and B staged"
echo 0 >"$pause"
wait "$part" || bed_fail "the read of pages 63-64 failed"
cmp -s /tmp/part <(file_pages /tmp/expect 63 2) || bed_fail "the read of pages 63-64 returned other bytes"
end=$((SECONDS + $(bed_secs 60)))
until [ "$(stage_field used)" -eq 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "staged writes not written after donor2's cut: $(cat "/sys/block/$name/farswap/stage")"
	sleep 0.5
done
dev_read 0 1024 | cmp -s - /tmp/expect || bed_fail "after the cut the device reads other bytes than were written"
[ "$(fs_dev_stat "$name" lost_pages)" -eq 0 ] && [ "$(fs_dev_stat "$name" stage_lost)" -eq 0 ] ||
	bed_fail "pages lost: $(cat "/sys/block/$name/farswap/stat")"
grep -q ' mismatches=0' "/sys/block/$name/farswap/integrity" ||
	bed_fail "pages failed their check: $(cat "/sys/block/$name/farswap/integrity")"
[ "$(fs_donor_field "$name" "$FARSWAP_PEER_donor" writes)" -gt 0 ] || bed_fail "nothing written to donor"
bed_log "after the cut: all 1024 pages read back as written last (A, then B over it), none lost"

# Detach with writes staged: they are written first.
echo 1 >"$pause"
head -c 1M /dev/urandom >/tmp/c
for i in $(seq 0 15); do
	dd if=/tmp/c bs=64K skip="$i" count=1 status=none >/tmp/c1
	dev_write /tmp/c1 $((512 + 16 * i)) 16
done
used=$(stage_field used)
[ "$used" -eq 16 ] || bed_fail "$used writes staged of 16"
"$FS_CTL" detach "$name"
dmesg | grep -q "$name: detaching: waiting for 16 staged writes" ||
	bed_fail "detach did not wait for the 16 staged writes"
dmesg | grep -q "$name: detaching: the staged writes are written" ||
	bed_fail "detach did not see the staged writes written"
bed_log "detach waited for 16 staged writes, and they were written"
rmmod farswap
check_kernel_log
bed_signal done
