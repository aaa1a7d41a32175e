#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# connect-storm, host side: the storms (fsclient --mode storm, no key)
# from addresses of their own on this guest's link, and a host with the
# key (fsclient, the link's own address) timed while each runs.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"

donor=$FARSWAP_PEER_donor
fsc=$FARSWAP_SRC/tests/tools/fsclient
netdev=$FARSWAP_NETDEV_donor
net=${FARSWAP_ADDR%.*}
install -m 600 "$BED/bed.key" /run/farswap-bed.key

# 32 more addresses on the link (Soft-RoCE gives each its GID).
sources=()
for ((i = 0; i < 32; i++)); do
	ip addr add "$net.$((100 + i))/24" dev "$netdev"
	sources+=("$net.$((100 + i))")
done
# Wait for their GIDs (the link's own and IPv6 link-local are two more).
gids() {
	cat "/sys/class/infiniband/$FARSWAP_DEV/ports/1/gids/"* 2>/dev/null |
		grep -vc '^0000:0000:0000:0000:0000:0000:0000:0000$' || true
}
for ((i = 0; i < 100; i++)); do
	[ "$(gids)" -ge 33 ] && break
	sleep 0.1
done
[ "$(gids)" -ge 33 ] || bed_fail "Soft-RoCE has $(gids) GIDs, want the 32 new addresses' too"
bed_wait donor ready 120

# storm PHASE SOURCES: the storm in the background; once its connects
# fill the donor's table, the keyed host comes in, within 2 s.
storm() {
	local phase=$1 srcs=$2 spid lpid rc=0
	rm -f "$BED/$phase.full"
	"$fsc" -m storm -i storm --sessions 200 --sources "$srcs" \
		--ready-file "$BED/$phase.full" -t 30 "$donor" >"/tmp/$phase.log" 2>&1 &
	spid=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "$BED/$phase.full" ] && break
		kill -0 $spid 2>/dev/null || bed_fail "$phase: the storm ended before it filled the table: $(cat /tmp/$phase.log)"
		sleep 0.05
	done
	[ -e "$BED/$phase.full" ] || bed_fail "$phase: the storm never had 16 connects taken: $(cat /tmp/$phase.log)"
	"$fsc" -k /run/farswap-bed.key -m stats -i host-l -q 1 --within 2000 -t 10 \
		"$donor" >"/tmp/$phase-host.log" 2>&1 || rc=$?
	kill -0 $spid 2>/dev/null && storming=yes || storming=no
	sed "s/^/  $phase: keyed host: /" "/tmp/$phase-host.log"
	[ $rc -eq 0 ] || bed_fail "$phase: the host with the key did not get in within 2 s: $(tail -n 1 /tmp/$phase-host.log)"
	wait $spid || bed_fail "$phase: the storm failed: $(tail -n 1 /tmp/$phase.log)"
	sed "s/^/  $phase: /" "/tmp/$phase.log"
	bed_log "$phase: the keyed host was in while the storm still ran: $storming"
	grep -q '^fsclient: storm: 0 unauthenticated sessions still open' "/tmp/$phase.log" ||
		bed_fail "$phase: storm connects still open 30 s later: $(grep 'still open' /tmp/$phase.log)"
}

# The keyed host with no storm: what the storms are measured against.
"$FARSWAP_SRC/tests/tools/fsclient" -k /run/farswap-bed.key -m stats -i host-l -q 1 \
	-t 10 "$donor" >/tmp/quiet-host.log 2>&1 ||
	bed_fail "quiet: the host with the key did not get in: $(tail -n 1 /tmp/quiet-host.log)"
sed "s/^/  quiet: keyed host: /" /tmp/quiet-host.log
storm one "${sources[0]}"
bed_signal one-done
bed_wait donor one-counted 60
storm many "$(IFS=,; echo "${sources[*]}")"
bed_signal many-done
bed_wait donor many-counted 60
check_kernel_log
