#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# discard-repair, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
d1=$FARSWAP_PEER_donor
d2=$FARSWAP_PEER_donor2
storm=$FARSWAP_SRC/tests/vm/scenarios/discard-repair/storm.py
img=/tmp/expected

fs_load_module
bed_wait donor ready 120
bed_wait donor2 ready 120
dev=$(fs_attach --donor "$d1" --donor "$d2" --size 64M --replicas 2)
name=${dev#/dev/}
sys=/sys/block/$name/farswap
rep() { sed -n "s/.*\<$1=\([0-9]*\).*/\1/p" "$sys/replicas"; }

python3 "$storm" fill "$dev" "$img" "$seed" 48 || bed_fail "fill failed"
for d in "$d1" "$d2"; do
	[ "$(fs_donor_field "$name" "$d" slabs)" -gt 0 ] || bed_fail "no slab on $d"
done

# donor2 dies: its copies are dropped, the chunks live on donor alone.
bed_signal kill-donor2
bed_wait donor2 farswapd-killed 60
fs_wait_donor_state "$name" "$d2" '!live' 60
end=$((SECONDS + 60))
until [ "$(fs_donor_field "$name" "$d2" slabs)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "donor2's slabs still held 60 s after it died"
	sleep 0.5
done
[ "$(rep lost_pages)" = 0 ] || bed_fail "pages lost with one of two replicas gone"

# Back, empty: every chunk is copied to it again, 2 MiB in 4 s.
echo 512 >"$sys/repair_kbps"
bed_signal restart-donor2
bed_wait donor2 farswapd-restarted 120
fs_wait_donor_state "$name" "$d2" live 120
end=$((SECONDS + 60))
until [ "$(rep repaired)" -gt 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "no chunk repaired 60 s after donor2 came back: $(cat "$sys/replicas")"
	sleep 0.5
done
degraded0=$(rep degraded)
repaired0=$(rep repaired)
[ "$degraded0" -gt 2 ] || bed_fail "only $degraded0 chunks left to repair: the storm would race nothing"

# The storm, while the copies go on.
python3 "$storm" storm "$dev" "$img" "$seed" 40 >/tmp/storm.out || bed_fail "storm failed"
repaired1=$(rep repaired)
bed_log "storm: $(cat /tmp/storm.out); repaired $repaired0 -> $repaired1 during it"
bed_result discard_repair.storm "$(cat /tmp/storm.out)"
bed_result discard_repair.repaired_during_storm $((repaired1 - repaired0))
[ "$repaired1" -gt "$repaired0" ] || bed_fail "no chunk was copied during the storm"
[ "$(fs_blk_stat "$name" discards)" -gt 0 ] || bed_fail "the block layer counted no discard"

echo 0 >"$sys/repair_kbps"
end=$((SECONDS + 300))
until [ "$(rep degraded)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "still degraded after 300 s: $(cat "$sys/replicas")"
	sleep 1
done
python3 "$storm" verify "$dev" "$img" || bed_fail "the device does not read back as written"
bed_log "every byte as written, both donors up: $(cat "$sys/replicas")"

# Only the copies the repair made (and those written since) are left.
bed_signal kill-donor
bed_wait donor farswapd-killed 60
fs_wait_donor_state "$name" "$d1" '!live' 60
python3 "$storm" verify "$dev" "$img" || bed_fail "donor2's copies do not read back as written"
[ "$(rep lost_pages)" = 0 ] || bed_fail "pages lost: $(cat "$sys/replicas")"
bed_result discard_repair.replicas "$(cat "$sys/replicas")"
bed_log "every byte as written from donor2's copies alone"

# Detach with slabs held (nothing discarded them): the slabs' records
# go before the donors.
"$FS_CTL" detach "$name" || bed_fail "detach failed"
rmmod farswap
check_kernel_log
bed_signal done
