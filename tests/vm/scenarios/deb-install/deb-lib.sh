# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# deb-install's helpers (source after guest-lib.sh).  The guest's root is a
# tmpfs overlay on the machine's: what dpkg installs here is gone at
# power-off, and the machine's own dpkg database is never written.
#
#   deb_file PKG       the path of PKG's .deb in $FARSWAP_DEB_DIR (none: false)
#   deb_install PKG... dpkg -i them; fail on any error
#   deb_remove PKG...  dpkg --purge them; no file of theirs may be left

FARSWAP_DEB_DIR=${FARSWAP_DEB_DIR:-$FARSWAP_SRC/build/deb}

deb_file() {
	local f

	f=$(ls "$FARSWAP_DEB_DIR/$1"_*.deb 2>/dev/null | sort -V | tail -n1)
	[ -n "$f" ] && echo "$f"
}

deb_install() {
	local debs=() p f log=$BED/$FARSWAP_ROLE-dpkg.log

	for p in "$@"; do
		f=$(deb_file "$p") ||
			bed_fail "no $p .deb in $FARSWAP_DEB_DIR: run 'make deb' on the machine first"
		debs+=("$f")
	done
	bed_log "dpkg -i ${debs[*]##*/}"
	DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}" >>"$log" 2>&1 ||
		{ tail -n 30 "$log"; bed_fail "dpkg -i $* failed (log: $log)"; }
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" | bed_grep -x 'install ok installed' ||
			bed_fail "$p is not installed after dpkg -i"
	done
}

deb_remove() {
	local p files log=$BED/$FARSWAP_ROLE-dpkg.log

	files=$(dpkg-query -L "$@" | sort -u)
	bed_log "dpkg --purge $*"
	DEBIAN_FRONTEND=noninteractive dpkg --purge "$@" >>"$log" 2>&1 ||
		{ tail -n 30 "$log"; bed_fail "dpkg --purge $* failed (log: $log)"; }
	for p in $files; do
		[ -d "$p" ] || [ ! -e "$p" ] || bed_fail "$p left after dpkg --purge $*"
	done
}
