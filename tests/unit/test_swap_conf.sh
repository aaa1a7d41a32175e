#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/farswap-swap and its swap.conf (farswap-swap.conf(5)), with
# farswapctl, mkswap, swapon, modprobe and sleep replaced by recorders:
# the file is parsed (every mistake said with its line, nothing run),
# each [farswapN] section becomes its attach and swapon, an attach that
# found no donor (exit 75) is tried again until retry-seconds, and any
# other failure is not; donors-srv's donors (farswapctl srv, faked) join
# the attach, and refresh makes a live device's donors (a fake
# /sys/block) match them.  The guests run it for real (faults-input,
# attach-degraded).  Prints TAP, as the cmocka suites do.

# ok() always succeeds: "A && ok || not_ok" is an if-then-else here.
# shellcheck disable=SC2015
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../tools/farswap-swap

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$here/tap.sh"

# expect NAME COMMAND...: COMMAND succeeds.
expect() {
	local name=$1 out

	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}

# Recorders: each logs its arguments to $tmp/log.  farswapctl's attach,
# detach and srv answer from $tmp/answers, one exit status per call (the
# last one repeats); srv prints $tmp/srv.  donor add succeeds; donor
# remove is refused for an address in $tmp/holding as the module refuses
# a donor that holds slabs, and for one in $tmp/broken for another reason.
mkdir "$tmp/bin"
for t in mkswap swapon swapoff modprobe sleep; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/log"\n' "$t" "$tmp" >"$tmp/bin/$t"
done
cat >"$tmp/bin/farswapctl" <<EOF
#!/bin/sh
echo "farswapctl \$*" >>"$tmp/log"
if [ "\$1 \$2" = "donor remove" ]; then
	if grep -qxF "\$4" "$tmp/holding" 2>/dev/null; then
		echo "farswapctl: donor remove \$3 \$4 failed: donor \$4 holds 3 slabs of \$3: drain it first (farswapd --drain there moves them to the other donors) (Device or resource busy)" >&2
		exit 1
	fi
	if grep -qxF "\$4" "$tmp/broken" 2>/dev/null; then
		echo "farswapctl: donor remove \$3 \$4 failed: something else" >&2
		exit 1
	fi
	echo "\$3: donor \$4 removed"
	exit 0
fi
[ "\$1" = donor ] && exit 0
rc=\$(head -n1 "$tmp/answers")
[ "\$(wc -l <"$tmp/answers")" -gt 1 ] && sed -i 1d "$tmp/answers"
if [ "\$1" = srv ]; then
	[ "\$rc" = 0 ] && cat "$tmp/srv"
	exit "\$rc"
fi
if [ "\$rc" = 0 ]; then
	for a; do name=\$a; [ "\$prev" = --name ] && break; prev=\$a; done
	echo "/dev/\$name"
fi
exit "\$rc"
EOF
chmod +x "$tmp/bin/"*

# run CONF [ARGS...]: farswap-swap ARGS with CONF, the recorders first.
run() {
	local conf=$1

	shift
	: >"$tmp/log"
	printf '%s\n' "$conf" >"$tmp/swap.conf"
	PATH=$tmp/bin:$PATH FARSWAP_SWAP_CONF=$tmp/swap.conf \
		FARSWAP_SYS=$tmp/sys FARSWAPCTL=$tmp/bin/farswapctl \
		sh "$script" "$@"
}

# refused NAME CONF WANT: check refuses CONF, saying WANT, running nothing.
refused() {
	local out rc=0

	out=$(run "$2" start 2>&1) || rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$3" <<<"$out" && [ ! -s "$tmp/log" ]; then
		ok "$1"
	else
		not_ok "$1" "rc $rc, want '$3': $out; ran: $(cat "$tmp/log")"
	fi
}

two='# two devices, one file
[farswap0]
donors = 10.0.0.2 10.0.0.3:7471
size = 64M
key-file = /etc/farswap/key
swap-priority = 7
options = discard

; the second
[farswap1]
donors=10.0.0.4
size=32M
replicas=1
encrypt=yes
insecure-no-auth = yes
attach-options = --queues 2 --sync-io'

out=$(run "$two" check 2>&1)
want='farswap0 10.0.0.2 10.0.0.3:7471 64M
farswap1 10.0.0.4 32M'
[ "$out" = "$want" ] && ok "check lists both devices" ||
	not_ok "check lists both devices" "got: $out"

echo 0 >"$tmp/answers"
expect "start attaches and swaps on both" run "$two" start
want='modprobe farswap
farswapctl attach --name farswap0 --size 64M --donor 10.0.0.2 --donor 10.0.0.3:7471 --key-file /etc/farswap/key
mkswap /dev/farswap0
swapon --priority 7 -o discard /dev/farswap0
farswapctl attach --name farswap1 --size 32M --donor 10.0.0.4 --replicas 1 --encrypt --insecure-no-auth --queues 2 --sync-io
mkswap /dev/farswap1
swapon --priority 10 /dev/farswap1'
# modprobe only when the module is not there (it may be, on this machine).
got=$(grep -v '^modprobe' "$tmp/log")
[ "$got" = "$(grep -v '^modprobe' <<<"$want")" ] && ok "start: attach and swapon arguments" ||
	not_ok "start: attach and swapon arguments" "got: $got"

echo 0 >"$tmp/answers"
run "$two" start farswap1 >/dev/null 2>&1
got=$(grep -c '^farswapctl attach' "$tmp/log")
grep -q -- '--name farswap1' "$tmp/log" && [ "$got" = 1 ] &&
	ok "start farswap1 starts that one alone" ||
	not_ok "start farswap1 starts that one alone" "$(cat "$tmp/log")"

printf '75\n75\n0\n' >"$tmp/answers"
one='[farswap0]
donors = 10.0.0.2
size = 64M
key-file = /etc/farswap/key'
expect "no donor answering twice, then one: started" run "$one" start
got=$(grep -c '^farswapctl attach' "$tmp/log")
[ "$got" = 3 ] && grep -q '^sleep 2$' "$tmp/log" && grep -q '^sleep 4$' "$tmp/log" &&
	grep -q '^swapon' "$tmp/log" && ok "tried three times, pausing 2 s then 4 s" ||
	not_ok "tried three times, pausing 2 s then 4 s" "$(cat "$tmp/log")"

echo 75 >"$tmp/answers"
out=$(run "$one
retry-seconds = 20" start 2>&1) && not_ok "gives up after retry-seconds" "succeeded: $out"
got=$(grep -c '^farswapctl attach' "$tmp/log")
grep -q "no donor answered in 20s" <<<"$out" && [ "$got" = 5 ] &&
	! grep -q '^swapon' "$tmp/log" && ok "gives up after retry-seconds (2+4+8+16 s: 5 tries)" ||
	not_ok "gives up after retry-seconds" "$got tries: $out"

echo 1 >"$tmp/answers"
out=$(run "$two" start 2>&1) && not_ok "a refused attach is not tried again" "succeeded"
got=$(grep -c '^farswapctl attach' "$tmp/log")
[ "$got" = 2 ] && ! grep -q '^sleep' "$tmp/log" && grep -q "2 device(s) failed to start" <<<"$out" &&
	ok "a refused attach is not tried again, the next device still is" ||
	not_ok "a refused attach is not tried again" "$got tries: $out"

refused "an old shell-style file" 'DONORS="10.0.0.2"
SIZE=16G' ":1: a shell assignment"
refused "a section without donors" '[farswap0]
size = 1G' "has no donors (donors = ADDR..., or donors-srv = an SRV name)"
refused "a donors-srv that is not one name" '[farswap0]
donors-srv = _farswap._tcp.a.net b.net
size = 1G' ":2: donors-srv is one DNS name"
refused "a section without size" '[farswap0]
donors = a' "has no size"
refused "an unknown key" '[farswap0]
donors = a
size = 1G
colour = blue' ":4: unknown key colour"
refused "a key outside a section" 'size = 1G' "before any \[farswapN\] section"
refused "a section not named farswapN" '[swap]' "a section is \[farswapN\]"
refused "a section twice" '[farswap0]
donors = a
size = 1G
key-file = /k
[farswap0]' ":5: \[farswap0\] twice"
echo 0 >"$tmp/answers"
expect "donor-key-files pin the donors" run "$one
donor-key-files = /etc/farswap/donors/a.key  /etc/farswap/donors/b.key" start
grep -qx -- 'farswapctl attach --name farswap0 --size 64M --donor 10.0.0.2 --key-file /etc/farswap/key --donor-key-file /etc/farswap/donors/a.key --donor-key-file /etc/farswap/donors/b.key' "$tmp/log" &&
	ok "donor-key-files: one --donor-key-file each" ||
	not_ok "donor-key-files: one --donor-key-file each" "$(cat "$tmp/log")"
refused "donor-key-files without key-file" '[farswap0]
donors = a
size = 1G
insecure-no-auth = yes
donor-key-files = /d.key' "has donor-key-files but no key-file"
refused "a relative donor key file" '[farswap0]
donors = a
size = 1G
key-file = /k
donor-key-files = d.key' "donor-key-files are absolute paths: d.key"
refused "no key-file, no insecure-no-auth" '[farswap0]
donors = a
size = 1G' "has no key-file: the donors would not be authenticated"
refused "insecure-no-auth neither yes nor no" '[farswap0]
donors = a
size = 1G
insecure-no-auth = sure' "insecure-no-auth is yes or no"
refused "no section at all" '# empty' "no \[farswapN\] section"
refused "a priority that is not a number" '[farswap0]
donors = a
size = 1G
swap-priority = high' "swap-priority is a number"
refused "the priority in options" '[farswap0]
donors = a
size = 1G
options = discard,pri=5' "is swap-priority, not in options"
refused "encrypt neither yes nor no" '[farswap0]
donors = a
size = 1G
encrypt = maybe' "encrypt is yes or no"
refused "a line that is not key = value" '[farswap0]
donors a' ":2: not key = value"

out=$(FARSWAP_SWAP_CONF=$tmp/absent sh "$script" start 2>&1) &&
	not_ok "a missing file" "succeeded"
grep -q "absent: cannot read it" <<<"$out" && ok "a missing file is said" ||
	not_ok "a missing file is said" "$out"

# donors-srv: the donors farswapctl srv prints join donors' (once each:
# 10.0.0.2 is 10.0.0.2:7471), in their order.
srv='[farswap0]
donors = 10.0.0.2
donors-srv = _farswap._tcp.pool.test
size = 64M
key-file = /etc/farswap/key'
printf '10.0.0.2:7471\n[fd00::2]:7471\n10.0.0.5:7472\n' >"$tmp/srv"
out=$(run "$srv" check 2>&1)
[ "$out" = "farswap0 10.0.0.2 srv:_farswap._tcp.pool.test 64M" ] &&
	ok "check shows donors-srv" || not_ok "check shows donors-srv" "got: $out"

echo 0 >"$tmp/answers"
expect "start with donors-srv" run "$srv" start
want='farswapctl srv _farswap._tcp.pool.test
farswapctl attach --name farswap0 --size 64M --donor 10.0.0.2 --donor [fd00::2]:7471 --donor 10.0.0.5:7472 --key-file /etc/farswap/key
mkswap /dev/farswap0
swapon --priority 10 /dev/farswap0'
got=$(grep -v '^modprobe' "$tmp/log")
[ "$got" = "$want" ] && ok "donors-srv: its donors join the attach, once each" ||
	not_ok "donors-srv: its donors join the attach, once each" "got: $got"

printf '75\n0\n0\n' >"$tmp/answers"
expect "no nameserver answering, then one: started" run "$srv" start
got=$(grep -c '^farswapctl srv' "$tmp/log")
[ "$got" = 2 ] && grep -q '^sleep 2$' "$tmp/log" && grep -q '^farswapctl attach' "$tmp/log" &&
	ok "srv tried again after 2 s, then attached" ||
	not_ok "srv tried again after 2 s, then attached" "$(cat "$tmp/log")"

echo 1 >"$tmp/answers"
out=$(run "${srv/donors = 10.0.0.2
/}" start 2>&1) && not_ok "a name that does not resolve" "succeeded"
got=$(grep -c '^farswapctl srv' "$tmp/log")
[ "$got" = 1 ] && ! grep -q '^farswapctl attach' "$tmp/log" &&
	grep -q "1 device(s) failed to start" <<<"$out" &&
	ok "srv failing (NXDOMAIN): not tried again, no attach" ||
	not_ok "srv failing (NXDOMAIN): not tried again, no attach" "$out; $(cat "$tmp/log")"

# refresh: farswap0 is live with three donors; the records now list
# [fd00::9] and 10.0.0.4, donors 10.0.0.2.
live() {
	local i=0 a

	rm -rf "$tmp/sys"
	mkdir -p "$tmp/sys/block/farswap0/donors"
	for a; do
		mkdir "$tmp/sys/block/farswap0/donors/$i"
		echo "$a" >"$tmp/sys/block/farswap0/donors/$i/address"
		i=$((i + 1))
	done
}
live 10.0.0.2:7471 10.0.0.3:7471 '[fd00::9]:7471'
printf '[fd00::9]:7471\n10.0.0.4:7471\n' >"$tmp/srv"
echo 0 >"$tmp/answers"
: >"$tmp/holding"
expect "refresh" run "$srv" refresh
want='farswapctl srv _farswap._tcp.pool.test
farswapctl donor add farswap0 10.0.0.4:7471
farswapctl donor remove farswap0 10.0.0.3:7471'
got=$(cat "$tmp/log")
[ "$got" = "$want" ] && ok "refresh adds the new donor, removes the one gone, keeps donors'" ||
	not_ok "refresh adds the new donor, removes the one gone, keeps donors'" "got: $got"

echo 10.0.0.3:7471 >"$tmp/holding"
out=$(run "$srv" refresh 2>&1) || not_ok "refresh: a donor holding slabs" "failed: $out"
grep -q '^farswapctl donor remove farswap0 10.0.0.3:7471$' "$tmp/log" &&
	grep -q "10.0.0.3:7471 is no longer listed but holds slabs.*the next refresh removes it" <<<"$out" &&
	ok "refresh: a donor holding slabs stays, for the next refresh" ||
	not_ok "refresh: a donor holding slabs stays, for the next refresh" "$out"

: >"$tmp/holding"
echo 10.0.0.3:7471 >"$tmp/broken"
out=$(run "$srv" refresh 2>&1) && not_ok "refresh: a remove that fails otherwise" "succeeded"
grep -q "something else" <<<"$out" && grep -q "1 device(s) failed to refresh" <<<"$out" &&
	ok "refresh: a remove that fails otherwise fails the refresh" ||
	not_ok "refresh: a remove that fails otherwise fails the refresh" "$out"
: >"$tmp/broken"

echo 75 >"$tmp/answers"
out=$(run "$srv" refresh 2>&1) || not_ok "refresh: no nameserver" "failed: $out"
! grep -q '^farswapctl donor' "$tmp/log" && grep -q "donors unchanged" <<<"$out" &&
	ok "refresh: no nameserver answering changes nothing" ||
	not_ok "refresh: no nameserver answering changes nothing" "$out; $(cat "$tmp/log")"

echo 1 >"$tmp/answers"
out=$(run "$srv" refresh 2>&1) && not_ok "refresh: a name gone" "succeeded: $out"
! grep -q '^farswapctl donor' "$tmp/log" && grep -q "farswap0: donors unchanged" <<<"$out" &&
	ok "refresh: a name gone (NXDOMAIN) changes nothing and fails" ||
	not_ok "refresh: a name gone (NXDOMAIN) changes nothing and fails" "$out; $(cat "$tmp/log")"

rm -rf "$tmp/sys"
echo 0 >"$tmp/answers"
out=$(run "$srv
[farswap1]
donors = 10.0.0.7
size = 1G
key-file = /k" refresh 2>&1) || not_ok "refresh: a device not attached" "failed: $out"
[ ! -s "$tmp/log" ] && grep -q "farswap0: not attached" <<<"$out" &&
	ok "refresh: a device not attached, one without donors-srv: nothing run" ||
	not_ok "refresh: a device not attached, one without donors-srv: nothing run" "$out; $(cat "$tmp/log")"

tap_end
