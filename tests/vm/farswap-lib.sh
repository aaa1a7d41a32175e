# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for farswap scenarios, on top of guest-lib.sh (source that first).
#
# Donor side:
#   fs_start_donor ARGS...     start farswapd on this guest's address with
#                              ARGS, wait until it listens; sets FS_DONOR_PID,
#                              logs to $BED/<role>-farswapd.log.  Hosts
#                              must authenticate with the run's key
#                              ($BED/bed.key), or with FS_KEY_FILE's;
#                              FS_KEY_FILE=none: no authentication
#   fs_stop_donor              SIGTERM farswapd, require exit status 0
#   fs_no_host_left            within 60 s, farswapd has no host session up
#                              and holds no slab
#
# Host side:
#   fs_load_module [PARAMS]    fs_insmod, then fs_add_key
#   fs_insmod [PARAMS]         insmod the freshly built farswap.ko (its
#                              dependencies modprobed first), with the
#                              module's timeouts stretched on slow kernels
#   fs_add_key                 the run's key ($BED/bed.key) becomes the
#                              logon key $FS_KEY (farswapctl add-key)
#   fs_key_secret_hex FILE     the secret of key file FILE in hex (what
#                              must show nowhere)
#   fs_attach ARGS...          farswapctl attach ARGS (with --key $FS_KEY
#                              unless ARGS name a key; --insecure-no-auth
#                              if FS_KEY is empty); prints /dev/farswapN
#   fs_vmstat NAME             the /proc/vmstat counter NAME
#   fs_dev_stat DEV KEY        a key=value from /sys/block/DEV/farswap/stat
#                              (zero_reads, errors, binds, lost_pages, ...;
#                              requests and bytes are fs_blk_stat's)
#   fs_blk_stat DEV FIELD      the block layer's count of DEV, from
#                              /sys/block/DEV/stat: reads, read_sectors,
#                              writes, write_sectors or discards (I/Os
#                              completed, sectors of 512 bytes; discards
#                              since Linux 4.18, else empty)
#   fs_donor_field DEV ADDR KEY  of the donor at ADDR (an IP, no port) in
#                              /sys/block/DEV/donors/<i>/: the file KEY
#                              (state, domain, slabs, free_slabs, ...),
#                              else KEY's value in its stat (reads, ...)
#   fs_wait_donor_state DEV ADDR STATE SECS
#                              until that donor's state is STATE ('!STATE':
#                              any other), checked every 0.5 s; fails
#                              after SECS naming the state it is in
#   fs_workload_start MB LIMIT ARGS...
#                              run pageverify --hold over MB MiB in a memory
#                              cgroup of LIMIT; sets FS_WL_PID, FS_WL_LOG
#   fs_workload_wait_hold N [SECS]
#                              wait until N workers finished their first
#                              round (verified every page) and hold
#   fs_workload_release        let the held workers verify again, wait for
#                              pageverify, require every page to verify
#   fs_unlimit_workload        lift the cgroup's memory limit (before
#                              swapoff, which must bring every page back)
#   fs_doomed_start MB LIMIT TAG
#                              a workload that will lose a donor mid-run
#   fs_wait_swapping           until it swapped in 2000 pages
#   fs_doomed_end              end it; no worker may have seen a wrong page
#   fs_workload_release_doomed release held workers whose pages were lost;
#                              they may die, never see a wrong page
#   fs_fresh_system            no trace of an install of farswap in this
#                              guest (the machine's, seen through the
#                              overlay: its user, /etc/farswap, what make
#                              install puts under /usr/local): what a
#                              test then finds, make install made
#   fs_unit_bed_dropin         farswapd.service's one change for the bed
#                              (a drop-in): --handshake-timeout 20s
#                              --auth-timeout 20s
#   fs_unit_prop UNIT PROP     a property of a unit, as systemctl show
#                              tells it
#
# README.md's commands:
#   fs_readme_block NAME       the fenced block after README.md's
#                              "<!-- NAME -->" line, as written
#   fs_run_readme NAME [VAR=VALUE...]
#                              run that block with bash -e, from the
#                              checkout, each VAR= line at its top set
#                              to VALUE (the addresses and ids that are
#                              this bed's; every other line as written)

FS_CTL=$FARSWAP_SRC/tools/farswapctl
FS_FARSWAPD=$FARSWAP_SRC/daemon/farswapd
FS_PAGEVERIFY=$FARSWAP_SRC/tests/workload/pageverify
FS_CGROUP=/sys/fs/cgroup/farswap-workload

fs_start_donor() {
	local log=$BED/$FARSWAP_ROLE-farswapd.log
	local key=${FS_KEY_FILE:-/run/farswap-bed.key} auth

	# As deployed: hosts prove they hold the donor's key.  The run's key
	# is copied out of the shared directory to a file root alone reads
	# (farswapd refuses any other).
	if [ "$key" = none ]; then
		auth=(--insecure-no-auth)
	else
		[ -n "${FS_KEY_FILE:-}" ] || install -m 600 "$BED/bed.key" "$key" ||
			bed_fail "no key for farswapd ($BED/bed.key)"
		auth=(--key-file "$key")
	fi
	# An emulated guest on a loaded machine can stall for seconds; the
	# default handshake-timeout (5 s, ample on hardware) would then close
	# a handshake that is merely slow.
	"$FS_FARSWAPD" --config /dev/null --listen "$FARSWAP_ADDR" \
		--handshake-timeout 20s --auth-timeout 20s "${auth[@]}" "$@" \
		>"$log" 2>&1 &
	FS_DONOR_PID=$!
	bed_wait_rdma_listen 7471 60 "$FS_DONOR_PID"
	bed_log "farswapd listening on $FARSWAP_ADDR (pid $FS_DONOR_PID)"
}

# The host's sessions ended and every slab they held is free again.
fs_no_host_left() {
	local secs end

	secs=$(bed_secs 60)
	end=$((SECONDS + secs))
	# Connections a host gave up on while they were being made hold
	# nothing; only sessions that are up, and slabs, count.
	until ! "$FS_FARSWAPD" --stats | bed_grep '^host .* state up ' &&
	      "$FS_FARSWAPD" --stats | bed_grep -x 'slabs_used 0'; do
		[ $SECONDS -lt $end ] || bed_fail "host sessions or slabs left $secs s after detach: $("$FS_FARSWAPD" --stats | grep -E '^(host|slabs_used) ' | tr '\n' ';')"
		sleep 1
	done
	bed_log "no host session or held slab left"
}

fs_stop_donor() {
	local rc=0

	kill -TERM "$FS_DONOR_PID"
	wait "$FS_DONOR_PID" || rc=$?
	[ "$rc" -eq 0 ] || bed_fail "farswapd exited $rc on SIGTERM"
	bed_log "farswapd exited 0"
}

# farswapd killed (SIGKILL): to its hosts, a donor that died.
fs_kill_donor() {
	kill -KILL "$FS_DONOR_PID"
	wait "$FS_DONOR_PID" || true
	bed_log "farswapd killed (pid $FS_DONOR_PID)"
}

# fs_chunks_intact_or_eio DEV DATA CHUNKS: read DEV 2 MiB chunk by chunk
# against the file DATA (written to it from offset 0): each chunk reads
# back intact or fails (EIO, its pages lost); other bytes fail the test.
# Sets FS_EIO_CHUNKS to how many failed.
fs_chunks_intact_or_eio() {
	local c

	FS_EIO_CHUNKS=0
	for ((c = 0; c < $3; c++)); do
		if dd if="$1" of=/run/chunk bs=1M skip=$((2 * c)) count=2 iflag=direct status=none 2>/dev/null; then
			cmp -s /run/chunk <(dd if="$2" bs=1M skip=$((2 * c)) count=2 status=none) ||
				bed_fail "chunk $c read back other bytes than were written"
		else
			FS_EIO_CHUNKS=$((FS_EIO_CHUNKS + 1))
		fi
	done
}

fs_load_module() {
	fs_insmod "$@"
	fs_add_key
}

fs_insmod() {
	[ -f "$FARSWAP_KO" ] || bed_fail "no module at $FARSWAP_KO"
	# insmod loads no dependencies: the module names its own (they
	# differ between kernels: 7.x has no libcrc32c, for one).
	local deps d
	deps=$(modinfo -F depends "$FARSWAP_KO") ||
		bed_fail "modinfo $FARSWAP_KO failed"
	for d in ${deps//,/ }; do
		modprobe "$d" || bed_fail "modprobe $d (a dependency of farswap.ko) failed"
	done
	# The debug kernel (KASAN, lockdep) under TCG takes seconds per I/O:
	# its timeouts stretch as the bed's waits do, the defaults and a
	# scenario's own short ones alike (replicas' 3 s io_timeout_ms
	# declared every sound donor dead there, and its pages lost).
	# There the module's own defaults are too short too: they go first,
	# stretched like the rest, and a scenario's values after them win.
	local args=() a
	[ "${BED_TIME_SCALE:-1}" -le 1 ] ||
		set -- io_timeout_ms=10000 ctrl_timeout_ms=10000 \
			connect_timeout_ms=5000 keepalive_ms=10000 "$@"
	for a in "$@"; do
		case $a in
		io_timeout_ms=* | ctrl_timeout_ms=* | connect_timeout_ms=* | keepalive_ms=*)
			a=${a%%=*}=$(bed_secs "${a#*=}")
			;;
		esac
		args+=("$a")
	done
	insmod "$FARSWAP_KO" "${args[@]}" ||
		bed_fail "insmod $FARSWAP_KO ${args[*]} failed"
	[ -d /sys/kernel/farswap ] || bed_fail "no /sys/kernel/farswap after insmod"
}

# The donors' key as logon key $FS_KEY: the kernel reads it, no process
# can.  Copied out of the shared directory first to a file root alone
# reads, as farswapctl wants it.
fs_add_key() {
	install -m 600 "$BED/bed.key" /run/farswap-bed-host.key ||
		bed_fail "no key for the host ($BED/bed.key)"
	"$FS_CTL" add-key "$FS_KEY" --key-file /run/farswap-bed-host.key >/dev/null ||
		bed_fail "farswapctl add-key $FS_KEY failed"
}

# The 32 bytes a key file decodes to, in hex: what no log may hold.
fs_key_secret_hex() {
	cut -d: -f3 "$1" | base64 -d | head -c 32 | od -An -tx1 | tr -d ' \n'
}

# The logon key fs_attach authenticates with ("" for none).
FS_KEY=farswap:bed

fs_attach() {
	local dev key=()

	if ! grep -qw -- --key <<<"$*" && ! grep -qw -- --insecure-no-auth <<<"$*"; then
		# FS_KEY empty: a donor without authentication, on purpose.
		if [ -n "$FS_KEY" ]; then
			key=(--key "$FS_KEY")
		else
			key=(--insecure-no-auth)
		fi
	fi
	dev=$("$FS_CTL" attach "$@" "${key[@]}") || bed_fail "farswapctl attach $* ${key[*]} failed"
	[ -b "$dev" ] || bed_fail "farswapctl printed '$dev', not a block device"
	echo "$dev"
}

fs_vmstat() {
	awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat
}

fs_dev_stat() {
	case $2 in
	reads | writes | discards | read_bytes | write_bytes)
		# Gone from farswap/stat: an empty answer would pass for a count.
		bed_fail "fs_dev_stat $1 $2: the block layer counts it (fs_blk_stat)" ;;
	esac
	tr ' ' '\n' <"/sys/block/$1/farswap/stat" | sed -n "s/^$2=//p"
}

# Columns of /sys/block/DEV/stat (Documentation/block/stat.rst), from 1.
fs_blk_stat() {
	local col

	case $2 in
	reads) col=1 ;;
	read_sectors) col=3 ;;
	writes) col=5 ;;
	write_sectors) col=7 ;;
	discards) col=12 ;;
	*) bed_fail "fs_blk_stat: no field '$2' (reads, read_sectors, writes, write_sectors, discards)" ;;
	esac
	awk -v c="$col" '{ print $c }' "/sys/block/$1/stat"
}

fs_donor_field() {
	local d addr

	# In index order (donors/10 after donors/2), as the module lists them.
	for d in $(printf '%s\n' "/sys/block/$1/donors"/*/ | sort -V); do
		[ -f "$d/address" ] || continue
		addr=$(cat "$d/address")
		[ "${addr#"$2":}" != "$addr" ] || continue
		if [ -f "$d/$3" ]; then
			cat "$d/$3"
		else
			tr ' ' '\n' <"$d/stat" | sed -n "s/^$3=//p"
		fi
	done
}

fs_wait_donor_state() {
	# Stretched: a debug kernel's farswapd takes minutes to start.
	local want=$3 secs end now

	secs=$(bed_secs "$4")
	end=$((SECONDS + secs))

	while :; do
		now=$(fs_donor_field "$1" "$2" state)
		if [ "${want#!}" != "$want" ]; then
			[ "$now" = "${want#!}" ] || return 0
		elif [ "$now" = "$want" ]; then
			return 0
		fi
		[ $SECONDS -lt $end ] ||
			bed_fail "donor $2: state $now after $secs s, waiting for $want"
		sleep 0.5
	done
}

fs_workload_start() {
	local mb=$1 limit=$2

	shift 2
	[ -x "$FS_PAGEVERIFY" ] || bed_fail "$FS_PAGEVERIFY not built (make -C tests/workload)"
	mkdir -p "$FS_CGROUP"
	# memory.high is the limit the workload is sized against: past it the
	# kernel reclaims and throttles.  memory.max is only a backstop, above
	# the whole workload: a hard limit OOM-kills a workload that thrashes
	# faster than an emulated link can swap (seen under TCG, device idle,
	# and while a new chunk waits for its slabs), and a test must fail on
	# a wrong page, never on a slow emulator.
	local high max
	case $limit in
	*K) high=$((${limit%K} * 1024)) ;;
	*M) high=$((${limit%M} * 1048576)) ;;
	*G) high=$((${limit%G} * 1073741824)) ;;
	*) high=$limit ;;
	esac
	[[ $high =~ ^[0-9]+$ ]] || bed_fail "bad memory limit '$limit'"
	max=$(((mb + 64) * 1048576))
	[ "$max" -ge $((high * 2)) ] || max=$((high * 2))
	echo max >"$FS_CGROUP/memory.high"
	echo "$max" >"$FS_CGROUP/memory.max"
	echo "$high" >"$FS_CGROUP/memory.high"
	echo max >"$FS_CGROUP/memory.swap.max"
	FS_WL_LOG=$BED/$FARSWAP_ROLE-pageverify.log
	# The subshell joins the cgroup, then becomes pageverify.
	(echo $BASHPID >"$FS_CGROUP/cgroup.procs" &&
		exec "$FS_PAGEVERIFY" --mb "$mb" --hold "$@") >"$FS_WL_LOG" 2>&1 &
	FS_WL_PID=$!
	bed_log "pageverify: $mb MiB in a $limit memory cgroup (pid $FS_WL_PID)"
}

fs_workload_wait_hold() {
	local n=$1 secs end

	secs=$(bed_secs "${2:-600}")
	end=$((SECONDS + secs))
	while [ "$(grep -c '^HOLD ' "$FS_WL_LOG" || true)" -lt "$n" ]; do
		if ! kill -0 "$FS_WL_PID" 2>/dev/null; then
			sed 's/^/  pageverify: /' "$FS_WL_LOG" | tail -n 30
			# Why a worker died: the OOM killer, or SIGBUS on a read.
			sed 's/^/  memory.events: /' "$FS_CGROUP/memory.events" || true
			dmesg | grep -iE 'killed process|oom|farswap' | tail -n 20 || true
			bed_fail "pageverify ended before all workers verified"
		fi
		[ $SECONDS -lt $end ] || bed_fail "pageverify: workers not done in $secs s"
		sleep 1
	done
	if grep -q 'MISMATCH\|bad=[1-9]' "$FS_WL_LOG"; then
		grep -m 20 'MISMATCH\|bad=[1-9]' "$FS_WL_LOG"
		bed_fail "pageverify found corrupted pages"
	fi
	if grep -q 'phase=verify-random' "$FS_WL_LOG"; then
		bed_log "pageverify: every page of $n workers verified (sequential, random, copy-on-write)"
	else
		bed_log "pageverify: $n workers wrote their pages (--passes 0: no verify yet)"
	fi
}

fs_unlimit_workload() {
	echo max >"$FS_CGROUP/memory.max"
	echo max >"$FS_CGROUP/memory.high"
}

fs_workload_release() {
	local rc=0 pid

	# A worker the caller released already (to verify while a fault
	# happens) may have verified and exited: its result is in the log.
	for pid in $(sed -n 's/^HOLD //p' "$FS_WL_LOG"); do
		kill -USR1 "$pid" 2>/dev/null || true
	done
	wait "$FS_WL_PID" || rc=$?
	sed -n 's/^RESULT /  /p' "$FS_WL_LOG"
	grep -m 20 'MISMATCH' "$FS_WL_LOG" || true
	[ "$rc" -eq 0 ] || bed_fail "pageverify failed (exit $rc)"
	grep -q 'phase=verify-after-hold.*bad=0' "$FS_WL_LOG" ||
		bed_fail "pageverify did not verify after the hold"
	bed_log "pageverify: every page verified again after the hold"
}

# A workload that is to lose a donor mid-run: MB MiB, memory.high LIMIT,
# TAG names its log.  Its workers may die (SIGBUS on pages that died with
# the donor); none may ever see a wrong page.  Sets FS_WL_PID, FS_WL_LOG.
fs_doomed_start() {
	mkdir -p "$FS_CGROUP"
	# memory.high throttles instead of OOM-killing while swap-out fails.
	echo max >"$FS_CGROUP/memory.max"
	echo "$2" >"$FS_CGROUP/memory.high"
	FS_WL_LOG=$BED/$FARSWAP_ROLE-doomed-$3.log
	(echo $BASHPID >"$FS_CGROUP/cgroup.procs" &&
		exec "$FS_PAGEVERIFY" --mb "$1" --procs 2 --passes 20 --no-fork \
			--seed "${FARSWAP_SEED:-$RANDOM}") >"$FS_WL_LOG" 2>&1 &
	FS_WL_PID=$!
}

# Until the doomed workload swapped in 2000 pages (it must still run).
fs_wait_swapping() {
	local end in0

	end=$((SECONDS + $(bed_secs 300)))
	in0=$(fs_vmstat pswpin)
	until [ $(($(fs_vmstat pswpin) - in0)) -ge 2000 ]; do
		[ $SECONDS -lt $end ] || bed_fail "no swap traffic"
		kill -0 "$FS_WL_PID" || bed_fail "the workload died early"
		sleep 1
	done
}

# End the doomed workload (survivors would go on for 20 passes: the point
# is made) and require that no worker saw a wrong page.
fs_doomed_end() {
	local rc=0

	pkill -TERM -P "$FS_WL_PID" || true
	kill -TERM "$FS_WL_PID" 2>/dev/null || true
	wait "$FS_WL_PID" || rc=$?
	echo max >"$FS_CGROUP/memory.high"
	if grep -q MISMATCH "$FS_WL_LOG"; then
		grep -m 10 MISMATCH "$FS_WL_LOG"
		bed_fail "a process saw a wrong page after its donor failed"
	fi
	bed_log "the workload that lost its donor ended (exit $rc), no wrong page seen"
}

# Release held workers whose pages may have died with their donors: they
# may die of it, but none may see a wrong page.
fs_workload_release_doomed() {
	local rc=0 pid

	for pid in $(sed -n 's/^HOLD //p' "$FS_WL_LOG"); do
		kill -USR1 "$pid" 2>/dev/null || true
	done
	wait "$FS_WL_PID" || rc=$?
	if grep -q MISMATCH "$FS_WL_LOG"; then
		grep -m 10 MISMATCH "$FS_WL_LOG"
		bed_fail "a process saw a wrong page after its donors failed"
	fi
	bed_log "the held workload whose pages were lost or damaged ended (exit $rc), no wrong page seen"
}

# Under TCG on a loaded machine a handshake can take longer than the
# default 5 s (as fs_start_donor allows): the bed's one word to the
# package's unit, not to the README or farswapd.conf (flags win over it).
fs_unit_prop() {
	systemctl show -P "$2" "$1"
}

fs_unit_bed_dropin() {
	mkdir -p /etc/systemd/system/farswapd.service.d
	printf '%s\n' '[Service]' 'ExecStart=' \
		'ExecStart=/usr/sbin/farswapd --handshake-timeout 20s --auth-timeout 20s' \
		>/etc/systemd/system/farswapd.service.d/bed.conf
	systemctl daemon-reload
}

fs_fresh_system() {
	local gone=()

	if getent passwd farswap >/dev/null; then
		userdel farswap || bed_fail "cannot remove the user farswap"
		gone+=("user farswap")
	fi
	if getent group farswap >/dev/null; then
		groupdel farswap || bed_fail "cannot remove the group farswap"
		gone+=("group farswap")
	fi
	for f in /etc/farswap /usr/local/sbin/farswap* /usr/local/lib/sysusers.d/farswap.conf \
		/usr/local/lib/systemd/system/farswap*; do
		[ -e "$f" ] || continue
		rm -rf "$f" || bed_fail "cannot remove $f"
		gone+=("$f")
	done
	[ ${#gone[@]} = 0 ] || {
		systemctl daemon-reload
		bed_log "removed the machine's install from this guest: ${gone[*]}"
	}
}

fs_readme_block() {
	local readme=$FARSWAP_SRC/README.md

	if [ "$(grep -cxF "<!-- $1 -->" "$readme")" != 1 ]; then
		echo "README.md has no single '<!-- $1 -->' line"
		return 1
	fi
	# The marker, then an opening fence, the block, the closing fence.
	awk -v mark="<!-- $1 -->" '
		$0 == mark { at = NR; next }
		at && NR == at + 1 { if ($0 !~ /^```/) exit; inside = 1; next }
		inside && /^```/ { done = 1; exit }
		inside { print }
		END { exit !done }' "$readme" || {
		echo "README.md: '<!-- $1 -->' is not followed by a fenced block"
		return 1
	}
}

fs_run_readme() {
	local name=$1 block var value line rc=0

	shift
	block=$(fs_readme_block "$name") || bed_fail "$block"
	# Only the values of the VAR= lines change: each must be in the
	# block, at the start of a line, once; the rest of its line (a
	# comment) stays.
	for var in "$@"; do
		value=${var#*=}
		var=${var%%=*}
		[ "$(grep -c "^$var=" <<<"$block")" = 1 ] ||
			bed_fail "README.md's $name block has no single $var= line to set"
		block=$(awk -v v="$var" -v val="$value" '
			index($0, v "=") == 1 {
				rest = substr($0, length(v) + 2)
				sub(/^[^ \t]*/, "", rest)
				$0 = v "=" val rest
			}
			{ print }' <<<"$block")
	done
	bed_log "README.md's $name block, run as written${*:+ but $*}:"
	while IFS= read -r line; do
		echo "  | $line"
	done <<<"$block"
	(cd "$FARSWAP_SRC" && bash -e -x -c "$block") </dev/null 2>&1 |
		sed "s/^/  $name: /" || rc=$?
	[ "$rc" = 0 ] || bed_fail "README.md's $name block failed (exit $rc)"
	bed_log "README.md's $name block ran to its end"
}

# On a failure, what every farswap device and its queues looked like.
bed_on_fail() {
	local d f

	trap - ERR
	set +e
	for d in /sys/block/farswap*; do
		[ -d "$d/farswap" ] || continue
		echo "bed_on_fail: ${d##*/}"
		"$FS_CTL" status "${d##*/}" 2>&1 | sed 's/^/  /'
		for f in "$d"/farswap/*; do
			[ -f "$f" ] && [ -r "$f" ] && sed "s|^|  ${f##*/}: |" "$f" 2>/dev/null
		done
		mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
		for f in /sys/kernel/debug/block/"${d##*/}"/hctx*/{busy,dispatch,state,dispatched,queued,run} \
			 /sys/kernel/debug/block/"${d##*/}"/requeue_list; do
			[ -s "$f" ] && sed "s|^|  ${f#/sys/kernel/debug/block/}: |" "$f" 2>/dev/null | head -n 20
		done
	done
	grep -E '^(Dirty|Writeback|SwapCached|SwapFree|SwapTotal):' /proc/meminfo | sed 's/^/  /'
	return 0
}
