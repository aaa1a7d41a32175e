# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# reclaim's donors: local processes take memory until farswapd asks a
# host for a slab back.
#
#   hog_until_reclaim TAG SECS [FILE]
#                                16 MiB more every 2 s until farswapd's
#                                reclaim_sent counter moves (or FILE exists);
#                                fails after SECS
#   hog_release TAG              the hogs verify their pages and exit
#
# A step at a time: farswapd first gives its free slabs back to the kernel
# (each gives 16 MiB back to the hog), and only once none is left and
# MemAvailable is still under its headroom does it ask hosts.  One big
# hog sized from a reading of MemAvailable and the free slabs raced
# farswapd's one-second check: too big, and the OOM killer took it (or
# farswapd) before any slab went back; too small, and no request came.

HOG_PIDS=()

# farswapd's RECLAIM_REQ count, from the "counters k=v ..." line.
fs_reclaim_sent() {
	local n

	n=$("$FS_FARSWAPD" --stats | sed -n 's/^counters .* reclaim_sent=\([0-9]*\).*/\1/p')
	[ -n "$n" ] || bed_fail "no reclaim_sent in farswapd --stats"
	echo "$n"
}

hog_mem_available_mb() {
	awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo
}

hog_until_reclaim() {
	local tag=$1 end=$((SECONDS + $2)) stop=${3:-} sent0 n=0

	sent0=$(fs_reclaim_sent)
	while [ "$(fs_reclaim_sent)" = "$sent0" ]; do
		[ -z "$stop" ] || [ ! -e "$stop" ] || return 0
		[ $SECONDS -lt $end ] ||
			bed_fail "farswapd asked no host for a slab with $((n * 16)) MiB taken ($(hog_mem_available_mb) MiB available)"
		# Never starve the guest (it has no swap): below 48 MiB
		# farswapd is under its headroom anyway and only needs time.
		if [ "$(hog_mem_available_mb)" -gt 48 ]; then
			# Numbered across calls: hog_release finds every one.
			"$FS_PAGEVERIFY" --mb 16 --procs 1 --no-fork --hold \
				>"$BED/$FARSWAP_ROLE-hog-$tag.${#HOG_PIDS[@]}.log" 2>&1 &
			HOG_PIDS+=($!)
			n=$((n + 1))
		fi
		sleep 2
	done
	bed_log "farswapd asked for slabs back with $((n * 16)) MiB taken by local processes"
}

hog_release() {
	local pid f

	for f in "$BED/$FARSWAP_ROLE-hog-$1".*.log; do
		for pid in $(sed -n 's/^HOLD //p' "$f"); do kill -USR1 "$pid"; done
	done
	for pid in "${HOG_PIDS[@]}"; do
		wait "$pid" || bed_fail "a memory hog's own pages did not verify"
	done
	HOG_PIDS=()
}
