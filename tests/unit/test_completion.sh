#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/farswapctl.bash-completion in a non-interactive bash: it parses,
# registers itself for farswapctl, and completes what farswapctl itself
# says it takes: the commands and global options of 'farswapctl --help',
# each command's options of 'farswapctl COMMAND --help', the values of
# attach's --integrity and --read-policy, and the devices of a fake
# /sys/block.  $FARSWAPCTL is the farswapctl to ask (tests/unit/run.sh
# builds it).  Prints TAP, as the cmocka suites do.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
completion=$here/../../tools/farswapctl.bash-completion
ctl=${FARSWAPCTL:?FARSWAPCTL names the farswapctl binary to check against}

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

# complete WORD...: what the completion offers for the last WORD, sorted
# and on one line.
complete_words() {
	COMP_WORDS=(farswapctl "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	_farswapctl
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | paste -sd ' ' -
}

# words: stdin's words, sorted and on one line.
words() {
	tr -s ' ' '\n' | sed '/^$/d' | sort -u | paste -sd ' ' -
}

if bash -n "$completion" 2>"$tmp/syntax"; then
	ok syntax
else
	not_ok syntax "$(head -n1 "$tmp/syntax")"
fi

# shellcheck source=../../tools/farswapctl.bash-completion
. "$completion"
check registered "complete -F _farswapctl farswapctl" "$(complete -p farswapctl 2>&1)"

# The commands: those of the list under "commands:" in --help.
want=$("$ctl" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' | words)
check commands "$want" "$(complete_words '')"
check commands-prefix "detach" "$(complete_words de)"
check help-command "$want" "$(complete_words help '')"

# The global options: every option --help names.
want=$("$ctl" --help | grep -oE -- '(^|[ [|,])--?[a-z][a-z-]*' |
	sed 's/^[ [|,]//' | words)
check global-options "$want" "$(complete_words -)"
check global-json-then-command "status" "$(complete_words -j st)"

# Each command's options: every long option its --help names.
for cmd in $("$ctl" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
	want=$("$ctl" "$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | words)
	check "options-$cmd" "$want" "$(complete_words "$cmd" --)"
done

check attach-integrity "crc32c off siphash" "$(complete_words attach --integrity '')"
check attach-read-policy "round-robin" "$(complete_words attach --donor 10.0.0.2 --read-policy r)"
check attach-size-value "" "$(complete_words attach --size '')"

# Devices: the farswap ones of /sys/block only, for one operand only.
mkdir -p "$tmp/block/farswap0" "$tmp/block/farswap12" "$tmp/block/sda"
_farswapctl_block_dir=$tmp/block
check detach-devices "farswap0 farswap12" "$(complete_words detach '')"
check status-devices "farswap12" "$(complete_words -j status --json farswap1)"
check detach-one-device "" "$(complete_words detach farswap0 '')"
check donor-verbs "add remove" "$(complete_words donor '')"
check donor-devices "farswap0 farswap12" "$(complete_words donor add '')"
check donor-address "" "$(complete_words donor add farswap0 '')"
_farswapctl_block_dir=$tmp/none
check no-devices "" "$(complete_words detach '')"

# gen-key FILE and add-key --key-file FILE: file names; --keyring: the
# special keyrings.
touch "$tmp/host.key"
check gen-key-file "$tmp/host.key" "$(complete_words gen-key "$tmp/host.k")"
check gen-key-one-file "" "$(complete_words gen-key "$tmp/host.key" "$tmp/host.k")"
check add-key-file "$tmp/host.key" "$(complete_words add-key farswap:pool --key-file "$tmp/host.k")"
check add-key-keyring "@p @s @t @u" "$(complete_words add-key farswap:pool --keyring '')"
check add-key-name "" "$(complete_words add-key '')"

# metrics --output: a file name.
touch "$tmp/farswap.prom"
check metrics-output "$tmp/farswap.prom" "$(complete_words metrics --output "$tmp/farswap.p")"

tap_end
