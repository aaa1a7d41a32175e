#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replicas-latency, host side.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"

d1=$FARSWAP_PEER_donor
# Both survivors must hold a copy of all of it: 256 MiB of 320 donated.
mib=256
rep() { tr ' ' '\n' <"/sys/block/$name/farswap/replicas" | sed -n "s/^$1=//p"; }

bed_on_fail() {
	[ -n "${name:-}" ] || return 0
	cat "/sys/block/$name/farswap/replicas"
	"$FS_CTL" status "$name"
	dmesg | grep farswap | tail -n 30
}

# read_latency TAG: 4 KiB random reads at QD1 over what was written, for
# 8 s; results TAG.p50_us, TAG.p99_us, TAG.iops.
read_latency() {
	local out=$BED/fio-$1.json

	fio --name="$1" --filename="$dev" --direct=1 --ioengine=psync --eta=never \
		--rw=randread --bs=4k --size="${mib}M" --time_based --runtime=8 \
		--percentile_list=50:99 --output-format=json --output="$out" ||
		bed_fail "fio $1 failed"
	python3 - "$out" "$1" <<'PY' | while read -r k v; do bed_result "$k" "$v"; done
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]["read"]
pct = job["clat_ns"]["percentile"]
tag = "repair_latency." + sys.argv[2]
print(tag + ".p50_us", round(pct["50.000000"] / 1000))
print(tag + ".p99_us", round(pct["99.000000"] / 1000))
print(tag + ".iops", round(job["iops"]))
PY
}

fs_load_module io_timeout_ms=3000 ctrl_timeout_ms=3000 keepalive_ms=2000
for d in donor donor2 donor3; do bed_wait "$d" ready 120; done
dev=$(fs_attach --donor "$d1" --donor "$FARSWAP_PEER_donor2" \
	--donor "$FARSWAP_PEER_donor3" --size 512M --replicas 2)
name=${dev#/dev/}
[ "$(cat "/sys/block/$name/farswap/repair_kbps")" = 32768 ] ||
	bed_fail "repair_kbps is $(cat "/sys/block/$name/farswap/repair_kbps"), not the default 32768"

# Random bytes, so that a chunk copied wrong cannot read back right.
dd if=/dev/urandom of="$dev" bs=1M count=$mib oflag=direct status=none ||
	bed_fail "writing $mib MiB to $dev failed"
sum0=$(dd if="$dev" bs=1M count=$mib iflag=direct status=none | sha256sum)
[ "$(rep degraded)" = 0 ] || bed_fail "$(rep degraded) chunks degraded before the cut"

read_latency idle

# donor's power: the chunks it held a replica of are copied again.
bed_cut_power donor
end=$((SECONDS + 60))
until [ "$(fs_donor_field "$name" "$d1" state)" != live ]; do
	[ $SECONDS -lt $end ] || bed_fail "$d1's power cut not noticed in 60 s"
	sleep 0.2
done
until [ "$(rep degraded)" -gt 0 ] && [ "$(rep repaired)" -gt 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "no re-replication 60 s after the cut"
	sleep 0.2
done
bytes0=$(rep repair_bytes)
t0=$SECONDS
read_latency repairing
[ "$(rep degraded)" -gt 0 ] ||
	bed_fail "re-replication was through before the measurement ended: measured nothing"
bed_result repair_latency.repair_kib_per_s $((($(rep repair_bytes) - bytes0) / 1024 / (SECONDS - t0)))

# The same at a rate below what this link carries: the throttle at work.
echo 2048 >"/sys/block/$name/farswap/repair_kbps"
# The chunk being copied at the old rate finishes first.
sleep 2
bytes0=$(rep repair_bytes)
t0=$SECONDS
read_latency throttled
[ "$(rep degraded)" -gt 0 ] ||
	bed_fail "re-replication was through before the throttled measurement ended"
rate=$((($(rep repair_bytes) - bytes0) / 1024 / (SECONDS - t0)))
bed_result repair_latency.throttled_kib_per_s "$rate"
# 2 MiB chunks paced at 2048 KiB/s: at most one and a bit per second.
[ "$rate" -le 3072 ] || bed_fail "repair_kbps=2048, yet the repair copied $rate KiB/s"
echo 0 >"/sys/block/$name/farswap/repair_kbps"
end=$((SECONDS + 600))
until [ "$(rep degraded)" = 0 ]; do
	[ $SECONDS -lt $end ] || bed_fail "$(rep degraded) chunks still degraded 600 s after the cut"
	sleep 1
done
bed_result repair_latency.repaired_chunks "$(rep repaired)"
[ "$(rep lost_pages)" = 0 ] || bed_fail "$(rep lost_pages) pages lost with a replica left"
[ "$(dd if="$dev" bs=1M count=$mib iflag=direct status=none | sha256sum)" = "$sum0" ] ||
	bed_fail "the device does not read back what was written"
"$FS_CTL" status "$name" | sed 's/^/  /'
"$FS_CTL" detach "$name"
rmmod farswap
check_kernel_log
bed_signal done
