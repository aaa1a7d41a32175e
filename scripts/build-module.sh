#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build farswap.ko out of tree for one kernel:
#
#   scripts/build-module.sh KVER [make args...]
#
# KVER is a full release ("6.12.117+deb12-amd64") or a series ("6.12",
# "6.1"), which picks the newest installed /lib/modules/<series>.*-amd64.
# A release or series the host has no headers for (Linux 7.x: Debian 12
# cannot run their kbuild) is looked up in the trixie chroot that
# scripts/trixie-chroot.sh makes (make setup), and built there: make and
# gcc-14 run inside the chroot, with build/<KVER>/ bind-mounted at its own
# path, so the .ko lands in the same place and messages name the same
# files as a host build's.
# The sources (Kbuild, kmod/, include/) are mirrored with rsync into
# build/<KVER>/ and built there, so builds for 6.1 and 6.12 never share
# objects and each stays incremental.  The module ends up at
#   build/<KVER>/kmod/farswap.ko
# and the script prints that path as its last line.  The build runs with
# W=1; callers that must fail on warnings grep the output for 'warning:'.
#
# FARSWAP_BUILD_DIR overrides the build root (default: <checkout>/build).
# FARSWAP_KDIR=DIR builds against that kernel tree instead of
# /lib/modules/KVER/build (the bed's debug kernel, scripts/debug-kernel.sh,
# whose modules are nowhere under /lib/modules); KVER is then its release
# as given and names the output directory.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

die() {
	echo "build-module: $*" >&2
	exit 1
}

[ $# -ge 1 ] || die "usage: $0 KVER [make args...]"
want=$1
shift

# Resolve a series to the newest installed release of it.  Debian names
# its kernels <series>.<patch>[+debN]-amd64; the glob '6.1.*' cannot match
# 6.12, so series stay apart.
chroot=
if [ -n "${FARSWAP_KDIR:-}" ]; then
	kver=$want
elif [ -d "/lib/modules/$want" ]; then
	kver=$want
else
	kver=$(cd /lib/modules 2>/dev/null && ls -d "$want".*-amd64 2>/dev/null |
		sort -V | tail -n1) || true
fi
if [ -z "${kver:-}" ]; then
	# Not on the host: the trixie chroot's headers (Linux 7.x).
	croot=$("$top/scripts/trixie-chroot.sh" --root)
	if [ -f "$croot/usr/src/linux-headers-$want/Makefile" ]; then
		kver=$want
	else
		kver=$("$top/scripts/trixie-chroot.sh" --kver "$want" 2>/dev/null) ||
			die "no kernel $want installed (/lib/modules/$want.*-amd64, nor in the trixie chroot $croot); run 'make setup'"
	fi
	chroot=$croot
fi

if [ -n "$chroot" ]; then
	kdir=/usr/src/linux-headers-$kver
	[ -f "$chroot$kdir/Makefile" ] ||
		die "kernel headers for $kver missing in the trixie chroot ($chroot$kdir); run 'make setup'"
else
	kdir=${FARSWAP_KDIR:-/lib/modules/$kver/build}
	[ -f "$kdir/Makefile" ] ||
		die "kernel headers for $kver missing ($kdir); install linux-headers-$kver or run 'make setup'"
fi
[ -z "${FARSWAP_KDIR:-}" ] || [ -f "$kdir/Module.symvers" ] ||
	die "$kdir has no Module.symvers: not a built kernel tree"

# A tree without kmod/Kbuild has nothing to build: saying so beats a
# cryptic Kbuild error.
[ -f "$top/kmod/Kbuild" ] || die "kmod/Kbuild does not exist yet: no module to build"

out=${FARSWAP_BUILD_DIR:-$top/build}/$kver
mkdir -p "$out"

# Two bed runs (or a bed run and the build suite) may build the same
# kernel's module at once: serialise them on a lock in the build dir.
exec 9>"$out/.lock"
flock 9

# Mirror the sources.  --delete drops files removed from the checkout;
# the excludes keep (and protect from --delete) the build products so the
# next build stays incremental.  -a keeps mtimes, which make relies on.
products=(--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c'
	--exclude='.*.cmd' --exclude='*.a' --exclude='modules.order'
	--exclude='Module.symvers' --exclude='*.o.d' --exclude='.lock')
rsync -a --delete "${products[@]}" "$top/Kbuild" "$top/kmod" "$top/include" "$out/"

if [ -n "$chroot" ]; then
	echo "build-module: building farswap.ko for $kver in $out (trixie chroot $chroot)"
	"$top/scripts/trixie-chroot.sh" run --bind "$out" -- \
		make -C "$kdir" M="$out" W=1 -j"$(nproc)" "$@" modules
else
	echo "build-module: building farswap.ko for $kver in $out"
	make -C "$kdir" M="$out" W=1 -j"$(nproc)" "$@" modules
fi

ko=$out/kmod/farswap.ko
[ -f "$ko" ] || die "build finished but $ko is missing (does kmod/Kbuild build farswap.o?)"
echo "$ko"
