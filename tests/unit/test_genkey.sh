#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# farswapctl gen-key and add-key from the shell: gen-key FILE makes a
# key file of mode 0600 whatever the umask, refuses an existing FILE (and
# leaves it as it was), writes to stdout without FILE; two keys differ;
# add-key refuses a malformed key file with its reason, and its usage
# errors exit 2.  $FARSWAPCTL is the farswapctl to run (tests/unit/run.sh
# builds it).  Prints TAP, as the cmocka suites do.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ctl=${FARSWAPCTL:?FARSWAPCTL names the farswapctl binary to test}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$here/tap.sh"

# check NAME WANT GOT: equal, or a failure that shows both.
check() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "want '$2', got '$3'"
	fi
}

key_re='^FARSWAP-1:00:[A-Za-z0-9+/]{48}:$'

(umask 0; "$ctl" gen-key "$tmp/a.key") 2>"$tmp/err"
check gen-key-exit 0 "$?"
check gen-key-mode 600 "$(stat -c %a "$tmp/a.key")"
check gen-key-one-line 1 "$(wc -l <"$tmp/a.key")"
if grep -Eq "$key_re" "$tmp/a.key"; then ok gen-key-format; else not_ok gen-key-format "$(cat "$tmp/a.key")"; fi

cp "$tmp/a.key" "$tmp/a.before"
"$ctl" gen-key "$tmp/a.key" 2>"$tmp/err"
check gen-key-refuses-overwrite 1 "$?"
if grep -q "a.key exists" "$tmp/err"; then ok gen-key-says-exists; else not_ok gen-key-says-exists "$(cat "$tmp/err")"; fi
if cmp -s "$tmp/a.key" "$tmp/a.before"; then ok gen-key-leaves-file; else not_ok gen-key-leaves-file "the key changed"; fi

ln -s "$tmp/elsewhere.key" "$tmp/link.key"
"$ctl" gen-key "$tmp/link.key" 2>"$tmp/err"
check gen-key-refuses-symlink 1 "$?"
check gen-key-symlink-target-untouched no "$([ -e "$tmp/elsewhere.key" ] && echo yes || echo no)"

out=$("$ctl" gen-key)
check gen-key-stdout-exit 0 "$?"
if grep -Eq "$key_re" <<<"$out"; then ok gen-key-stdout-format; else not_ok gen-key-stdout-format "$out"; fi
if [ "$out" != "$(cat "$tmp/a.key")" ]; then ok gen-key-fresh; else not_ok gen-key-fresh "two keys alike"; fi

"$ctl" gen-key "$tmp/a.key" "$tmp/b.key" 2>/dev/null
check gen-key-two-files-usage 2 "$?"

# add-key: the file is read and checked before any keyring is touched.
printf '%s' "$(head -c 32 /dev/urandom | base64 -w0)" >"$tmp/old.key"
chmod 600 "$tmp/old.key"
"$ctl" add-key farswap:unit-test --key-file "$tmp/old.key" 2>"$tmp/err"
check add-key-refuses-old-style 1 "$?"
if grep -q "key-file $tmp/old.key: not a farswap key.*farswapctl gen-key" "$tmp/err"; then
	ok add-key-says-why
else
	not_ok add-key-says-why "$(cat "$tmp/err")"
fi
"$ctl" add-key farswap:unit-test 2>/dev/null
check add-key-needs-key-file 2 "$?"
"$ctl" add-key no-prefix --key-file "$tmp/a.key" 2>/dev/null
check add-key-needs-prefix 2 "$?"
"$ctl" add-key farswap:unit-test --key-file "$tmp/a.key" --keyring @x 2>/dev/null
check add-key-bad-keyring 2 "$?"

tap_end
