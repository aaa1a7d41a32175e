#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bed's debug guest kernel: Debian's linux-source-6.12 built with
# 'make allnoconfig' plus tests/vm/debug-kernel.config (KASAN, lockdep,
# debug objects, everything the bed needs built in), cached outside the
# checkout, and its directory printed as the last line of stdout:
#
#   scripts/debug-kernel.sh            build if needed, print DIR
#   scripts/debug-kernel.sh --check    print DIR if it is built, else fail
#
#   DIR/bzImage        the kernel bed.py boots (--kernel debug)
#   DIR/kver           its release, e.g. 6.12.117-farswap-debug
#   DIR/build/         the O= tree: farswap.ko builds against it (KDIR),
#                      Module.symvers and modules_prepare's output included
#   DIR/modules/lib/modules/KVER/   modules.builtin and friends, for the
#                      guests' modprobe of built-in modules (no .ko here)
#   DIR/build.log, DIR/build-seconds   the last build's output and time
#
# DIR is $FARSWAP_DEBUG_KERNEL_CACHE/<key> (default cache
# /var/cache/farswap/debug-kernel), the key a hash of the fragment, the
# source tarball (name, size, mtime), the compiler and RECIPE below: a
# change to any of them builds a new kernel in a new directory, and an
# unchanged one is never rebuilt.  Old directories are not removed
# (about 550 MB each; the extracted source is 1.7 GB): delete them by
# hand.  The tarball is extracted once into CACHE/src/ (shared by every
# key of that tarball).  A cold build takes about 30 minutes of CPU on 2
# cores (KASAN instruments every object); it runs under nice -n 19.  One
# build at a time (flock on CACHE/.lock).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
fragment=$top/tests/vm/debug-kernel.config
cache=${FARSWAP_DEBUG_KERNEL_CACHE:-/var/cache/farswap/debug-kernel}
check_only=
[ "${1:-}" = --check ] && check_only=1
# Bump when a change to this script changes what it builds (an edit
# that does not should not cost a cold build).
RECIPE=1

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

msg() {
	echo "debug-kernel: $*" >&2
}

tarball=$(printf '%s\n' /usr/src/linux-source-6.12*.tar.xz | sort -V | tail -n1)
[ -r "$tarball" ] ||
	die "no /usr/src/linux-source-6.12*.tar.xz: run 'make setup' (Debian package linux-source-6.12)"
[ -r "$fragment" ] || die "$fragment missing"

name=$(basename "$tarball" .tar.xz)
tarstamp="$(basename "$tarball") $(stat -c '%s %Y' "$tarball")"
key=$({
	echo "tarball $tarstamp"
	gcc --version | head -n1
	echo "recipe $RECIPE"
	cat "$fragment"
} | sha256sum | cut -c1-16)
dir=$cache/$key

if [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi
[ -z "$check_only" ] ||
	die "no debug kernel built for this config ($dir); run scripts/debug-kernel.sh"

mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
	msg "another build holds $cache/.lock; waiting"
	flock 9
fi
# The build we waited for may have been this one.
if [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi

# The source tree, once per tarball.  The stamp is written last, so a
# half-extracted tree is never taken for a whole one.
srcdir=$cache/src/$(echo "$tarstamp" | sha256sum | cut -c1-16)
tree=$srcdir/$name
if [ "$(cat "$srcdir/stamp" 2>/dev/null)" != "$tarstamp" ] || [ ! -f "$tree/Makefile" ]; then
	msg "extracting $tarball into $srcdir"
	rm -rf "$srcdir"
	mkdir -p "$srcdir/.extract"
	xz -T0 -dc "$tarball" | tar -x -C "$srcdir/.extract" --no-same-owner
	[ -d "$srcdir/.extract/$name" ] || die "$tarball has no top-level $name/"
	mv "$srcdir/.extract/$name" "$tree"
	rmdir "$srcdir/.extract"
	echo "$tarstamp" >"$srcdir/stamp"
fi

rm -rf "$dir"
mkdir -p "$dir/build"
log=$dir/build.log
msg "building in $dir (log: $log); a cold build takes tens of minutes"
start=$(date +%s)

kmake() {
	nice -n 19 make -C "$tree" O="$dir/build" ARCH=x86_64 "$@" >>"$log" 2>&1
}

# allnoconfig with the fragment as KCONFIG_ALLCONFIG: every symbol the
# fragment names is forced, everything else is as small as it gets.
kmake KCONFIG_ALLCONFIG="$fragment" allnoconfig ||
	die "allnoconfig failed: $(tail -n3 "$log")"
# A symbol whose dependency is off is dropped without a word: say which.
missing=$(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$fragment" | while IFS= read -r l; do
	grep -qxF "$l" "$dir/build/.config" || printf '%s ' "$l"
done)
[ -z "$missing" ] || die "not in the final .config (a dependency is missing from $fragment): $missing"

kmake -j"$(nproc)" bzImage modules ||
	die "build failed: $(grep -m1 -E 'error:|Error [0-9]' "$log" || tail -n3 "$log")"
# No module is built (everything is =y), but modules_install still writes
# modules.builtin*, which the guests' modprobe reads for built-ins.
kmake INSTALL_MOD_PATH="$dir/modules" modules_install ||
	die "modules_install failed: $(tail -n3 "$log")"
kver=$(cat "$dir/build/include/config/kernel.release")
[ -f "$dir/modules/lib/modules/$kver/modules.builtin" ] ||
	die "no modules.builtin for $kver after modules_install"
# modules_install's build and source links point into this directory by
# absolute path; nothing reads them (farswap.ko builds against DIR/build).
rm -f "$dir/modules/lib/modules/$kver/build" "$dir/modules/lib/modules/$kver/source"
cp "$dir/build/arch/x86/boot/bzImage" "$dir/bzImage"
echo "$kver" >"$dir/kver"
echo $(($(date +%s) - start)) >"$dir/build-seconds"
touch "$dir/ok"
msg "built $kver in $(cat "$dir/build-seconds") s"
echo "$dir"
