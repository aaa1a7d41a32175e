#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 13 (trixie) chroot that builds farswap.ko for Linux 7.x.
#
# Debian ships 7.0 to 7.3 in trixie-backports.  Their linux-kbuild needs
# glibc >= 2.38 and gcc-14, which Debian 12 does not have, so the 7.x
# headers are installed and used inside a trixie chroot made with
# mmdebstrap from Debian's own mirror.  The host stays Debian 12: the
# trixie and trixie-backports apt sources exist only inside the chroot.
#
#   scripts/trixie-chroot.sh           make what is missing; silent when
#                                      everything is there (make setup)
#   scripts/trixie-chroot.sh --update  also ask apt for newer 7.x releases
#   scripts/trixie-chroot.sh --check   exit 0 if the chroot is made, else 1
#   scripts/trixie-chroot.sh --root    print the chroot's directory
#   scripts/trixie-chroot.sh --kver SERIES   print the release of SERIES's
#                                      headers in the chroot (7.3 ->
#                                      7.3.4+deb13-amd64); fails if none
#   scripts/trixie-chroot.sh --guest   print the unpacked guest kernel's
#                                      directory (fails if there is none)
#   scripts/trixie-chroot.sh --source SERIES   print the path, outside the
#                                      chroot, of SERIES's newest
#                                      linux-source tarball in it (KUnit);
#                                      fails if there is none
#   scripts/trixie-chroot.sh --guest-root   make the chroot fit to boot a
#                                      guest's root (the packages below,
#                                      once; as root) and print its path
#   scripts/trixie-chroot.sh run [--bind DIR]... -- CMD [ARG...]
#                                      run CMD inside the chroot, as root,
#                                      with each DIR bind-mounted at the
#                                      same path (builds: the build dir)
#
# What it makes (caches outside the checkout, shared by every worktree):
#
#   $FARSWAP_TRIXIE (default /var/cache/farswap/trixie, about 1.1 GB):
#     the chroot, with gcc-14, make, sparse, kmod, pahole, and for each
#     series in $FARSWAP_7X_SERIES (default "7.0 7.1 7.2 7.3") the newest
#     linux-headers-<series>.*-amd64 (with its linux-headers-*-common,
#     linux-kbuild-* and linux-base-*: 7.x headers need no image).  The
#     headers are at /usr/src/linux-headers-<kver>/ and
#     /lib/modules/<kver>/build inside.  For KUnit under UML
#     (tests/kunit/run.sh with FARSWAP_KUNIT_SERIES=7.3), the whole
#     source of $FARSWAP_7X_KUNIT (default 7.3; empty: none), package
#     linux-source-<series> (about 165 MB, /usr/src/linux-source-*.tar.xz),
#     and what kunit.py needs to build a UML kernel from it: python3,
#     flex, bison and gcc (the plain name kbuild calls).
#   $FARSWAP_KERNELS (default /var/cache/farswap/kernels)/<kver>/ (about
#     135 MB): the newest release of $FARSWAP_7X_GUEST (default 7.3), its
#     linux-image, linux-binary (the kernel), linux-modules and linux-base
#     packages downloaded with apt-get download inside the chroot and
#     unpacked with dpkg-deb -x (not installed): usr/lib/modules/<kver>/
#     with vmlinuz and depmod's files, boot/vmlinuz-<kver> and lib/ as
#     links into it, for guests.  DIR/packages lists the .debs.
#   With --guest-root (tests/vm/bed.py, for a scenario whose roles boot
#   the userland of their kernel's release: DISTRO_ROOT), what a Debian 13
#   guest's scripts and farswap's packages need on top: dkms (with
#   build-essential), mount (mount, swapon), iproute2 (ip, rdma), keyutils,
#   procps, busybox, libibverbs1, librdmacm1t64 and ibverbs-providers
#   (about 80 MB).  Not
#   part of make setup: only scenarios run by hand use it.
#
# Versions are never named here: each series' newest release is whatever
# apt in the chroot lists (for a series whose binaries trixie-backports'
# index has dropped, its signed Sources index: see pool_headers).
#
# One writer at a time (flock on $FARSWAP_TRIXIE.lock); a half-made
# chroot (mmdebstrap interrupted) is made anew, not used.  The first run
# downloads about 300 MB from deb.debian.org and took 2 to 6 minutes here
# (the time is kept in $FARSWAP_TRIXIE/.farswap-seconds); KUnit's source
# and tools are 176 MB more (adding them to a made chroot took 32 s).
# Everything after the quick "all there" check runs under nice/ionice.
set -euo pipefail

root=${FARSWAP_TRIXIE:-/var/cache/farswap/trixie}
kernels=${FARSWAP_KERNELS:-/var/cache/farswap/kernels}
series=${FARSWAP_7X_SERIES:-7.0 7.1 7.2 7.3}
guest=${FARSWAP_7X_GUEST:-7.3}
kunit=${FARSWAP_7X_KUNIT-7.3}
mirror=${FARSWAP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mirror_https=${FARSWAP_DEBIAN_MIRROR_HTTPS:-https://deb.debian.org/debian}
secmirror=${FARSWAP_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
stamp=$root/.farswap-ok

die() {
	echo "trixie-chroot: $*" >&2
	exit 1
}

msg() {
	echo "trixie-chroot: $*" >&2
}

# ere STRING: STRING as an extended regular expression that matches it.
ere() {
	sed 's/[.+]/\\&/g' <<<"$1"
}

# run_in [--bind DIR]... -- CMD...: CMD inside the chroot, in a mount
# namespace of its own (nothing it mounts is seen outside, and all of it
# goes when CMD exits): /proc, /dev, a private /tmp, the host's
# resolv.conf for apt, and each DIR at its own path.
run_in() {
	local binds=()
	while [ $# -gt 0 ]; do
		case $1 in
		--bind) binds+=("$2"); shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command"
	[ -f "$stamp" ] || die "no trixie chroot at $root; run scripts/trixie-chroot.sh (make setup)"
	unshare -m --propagation private -- /bin/bash -c '
		set -e
		root=$1 nbind=$2
		shift 2
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
		: >>"$root/etc/resolv.conf"
		mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
		while [ "$nbind" -gt 0 ]; do
			mkdir -p "$root$1"
			mount --bind "$1" "$root$1"
			shift
			nbind=$((nbind - 1))
		done
		exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive TERM="${TERM:-dumb}" "$@"
	' bash "$root" "${#binds[@]}" "${binds[@]}" "$@"
}

# The headers' release for each wanted series, as installed (a glob of
# the chroot's /usr/src), or as apt lists (newest).
installed_kver() {
	(cd "$root/usr/src" 2>/dev/null && ls -d "linux-headers-$1".*-amd64 2>/dev/null) |
		grep -v -E -- '-(cloud|rt)-amd64$' | sed 's/^linux-headers-//' | sort -V | tail -n1 || true
}

apt_kver() {
	run_in -- apt-cache pkgnames "linux-headers-$1." |
		grep -E "^linux-headers-$(ere "$1")\.[0-9][^ ]*-amd64$" |
		grep -v -E -- '-(cloud|rt)-amd64$' | sed 's/^linux-headers-//' | sort -V | tail -n1 || true
}

# source_tarball SERIES: the chroot's newest linux-source-SERIES tarball
# (Debian names it after the series, linux-source-7.3.tar.xz; glob
# rather than name it), as a path outside the chroot.
source_tarball() {
	local t

	t=$(printf '%s\n' "$root/usr/src/linux-source-$1"*.tar.xz | sort -V | tail -n1)
	[ -f "$t" ] && echo "$t"
}

# kunit_ready: the KUnit source and kunit.py's tools are in the chroot
# (each package here installs the command of its own name).
kunit_ready() {
	local t

	[ -n "$kunit" ] || return 0
	source_tarball "$kunit" >/dev/null || return 1
	for t in gcc python3 flex bison; do
		[ -x "$root/usr/bin/$t" ] || return 1
	done
}

guest_dir() {
	local k
	k=$(cd "$kernels" 2>/dev/null && ls -d "$guest".*-amd64 2>/dev/null | sort -V | tail -n1) || true
	[ -n "$k" ] && [ -f "$kernels/$k/ok" ] && echo "$kernels/$k"
}

# The packages a guest booted on the chroot's userland needs (--guest-root).
guest_root_packages="dkms mount iproute2 keyutils procps busybox libibverbs1 librdmacm1t64 ibverbs-providers"

guest_root_ready() {
	local p

	for p in $guest_root_packages; do
		[ "$(chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] ||
			return 1
	done
}

complete() {
	local s k
	[ -f "$stamp" ] || return 1
	for s in $series; do
		k=$(installed_kver "$s")
		[ -n "$k" ] && [ -f "$root/usr/src/linux-headers-$k/Makefile" ] || return 1
	done
	kunit_ready || return 1
	guest_dir >/dev/null
}

case ${1:-} in
--root)
	echo "$root"
	exit 0
	;;
--check)
	[ -f "$stamp" ]
	exit
	;;
--kver)
	[ -f "$stamp" ] || die "no trixie chroot at $root; run scripts/trixie-chroot.sh (make setup)"
	k=$(installed_kver "${2:?--kver needs a series}")
	[ -n "$k" ] || die "no linux-headers-$2.*-amd64 in $root; run scripts/trixie-chroot.sh (make setup)"
	echo "$k"
	exit 0
	;;
--guest)
	guest_dir || die "no unpacked $guest kernel in $kernels; run scripts/trixie-chroot.sh"
	exit 0
	;;
--source)
	[ -f "$stamp" ] || die "no trixie chroot at $root; run scripts/trixie-chroot.sh (make setup)"
	source_tarball "${2:?--source needs a series}" ||
		die "no linux-source-$2 in $root; run scripts/trixie-chroot.sh (make setup; FARSWAP_7X_KUNIT names the series it installs)"
	exit 0
	;;
run)
	shift
	run_in "$@"
	exit
	;;
--guest-root)
	[ -f "$stamp" ] || die "no trixie chroot at $root; run scripts/trixie-chroot.sh (make setup)"
	if ! guest_root_ready; then
		[ "$(id -u)" -eq 0 ] || die "must run as root (chroot, apt)"
		exec 9>"$root.lock"
		flock 9
		if ! guest_root_ready; then
			msg "installing what a guest's root needs: $guest_root_packages"
			# shellcheck disable=SC2086 # one word per package
			nice -n 19 ionice -c3 "$0" run -- sh -c 'apt-get update -qq &&
				apt-get install -y -qq -o Dpkg::Use-Pty=0 "$@" >/dev/null &&
				apt-get clean' sh $guest_root_packages ||
				die "apt-get install $guest_root_packages failed"
			guest_root_ready || die "$guest_root_packages installed but dpkg does not list them all"
		fi
	fi
	echo "$root"
	exit 0
	;;
--update | '') ;;
*)
	die "usage: $0 [--update | --check | --root | --kver SERIES | --guest | --guest-root | --source SERIES | run [--bind DIR]... -- CMD...]"
	;;
esac
update=
[ "${1:-}" = --update ] && update=1

[ -n "$update" ] || ! complete || exit 0
[ "$(id -u)" -eq 0 ] || die "must run as root (chroot, mounts)"

mkdir -p "$(dirname "$root")" "$kernels"
exec 9>"$root.lock"
if ! flock -n 9; then
	msg "another run holds $root.lock; waiting"
	flock 9
fi
[ -n "$update" ] || ! complete || exit 0

# Everything below (mmdebstrap, apt, dpkg) is I/O and CPU the machine's
# other work should not wait for.
renice -n 19 -p $$ >/dev/null
ionice -c3 -p $$
start=$(date +%s)

# 1. The chroot itself: trixie with the toolchain, made aside and moved
# into place whole, so that an interrupted mmdebstrap leaves nothing
# that looks usable.
if [ ! -f "$stamp" ]; then
	command -v mmdebstrap >/dev/null ||
		die "mmdebstrap is not installed (apt-get install mmdebstrap; make setup does)"
	rm -rf "$root" "$root.new"
	msg "making the trixie chroot in $root (first time: a few minutes)"
	mmdebstrap --quiet --mode=root --variant=apt \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--include=gcc-14,make,libc6-dev,sparse,kmod,pahole,bc \
		trixie "$root.new" \
		"deb $mirror trixie main" \
		"deb $mirror trixie-updates main" \
		"deb $secmirror trixie-security main" \
		"deb $mirror trixie-backports main" ||
		die "mmdebstrap failed"
	date -u +%FT%TZ >"$root.new/.farswap-ok"
	mv "$root.new" "$root"
	made_chroot=1
fi

# The sources of trixie-backports too: they name the releases whose
# binaries the index has dropped (pool_headers).
echo "deb-src $mirror trixie-backports main" >"$root/etc/apt/sources.list.d/farswap-backports-src.list"
run_in -- apt-get update -qq || die "apt-get update in the chroot failed"

# pool_headers SERIES: the newest headers of a series whose binaries
# trixie-backports no longer lists.  Debian's backports index keeps the
# binaries of recent uploads only (7.0 and 7.1 went when 7.2 came), but
# its Sources index, signed like every index, still lists every upload of
# linux with the binaries it built, and Debian's pool still holds them.
# So apt names the release, and its four packages (headers, -common,
# linux-kbuild, linux-base) come from the pool over https, each checked
# to be the package and version asked for before apt installs them (and
# the rest, from trixie).  apt cannot check these four against a signed
# index: that is the one step here that trusts the mirror's TLS instead.
pool_headers() {
	local s=$1 re line pkg ver kver abi p arch f url debs=()
	re="^linux-headers-${s//./\\.}\\.[0-9]+\\+deb[0-9]+-amd64\$"
	line=$(run_in -- apt-cache showsrc linux | awk -v re="$re" '
		function flush(  n, a, i) {
			n = split(b, a, /[ ,]+/)
			for (i = 1; i <= n; i++)
				if (a[i] ~ re)
					print a[i], v
			b = ""; v = ""
		}
		/^Version:/ { v = $2 }
		/^Binary:/ { b = substr($0, 8); inb = 1; next }
		inb && /^ / { b = b $0; next }
		{ inb = 0 }
		/^$/ { flush() }
		END { flush() }' | sort -V -k2 | tail -n1) || true
	[ -n "$line" ] ||
		die "trixie-backports lists neither binaries nor sources of linux-headers-$s.*-amd64"
	pkg=${line% *}
	ver=${line#* }
	kver=${pkg#linux-headers-}
	abi=${kver%-amd64}
	[ "$(installed_kver "$s")" = "$kver" ] &&
		[ -f "$root/usr/src/linux-headers-$kver/Makefile" ] && return 0
	msg "installing linux-headers-$kver $ver from Debian's pool (superseded in trixie-backports' binary index)"
	rm -rf "$root/var/cache/farswap-pool"
	mkdir -p "$root/var/cache/farswap-pool"
	for p in "linux-headers-$kver:amd64" "linux-headers-$abi-common:all" \
		"linux-kbuild-$abi:amd64" "linux-base-$kver:amd64"; do
		arch=${p##*:}
		p=${p%:*}
		f=${p}_${ver}_$arch.deb
		url=$mirror_https/pool/main/l/linux/${f//+/%2B}
		curl -fsS --proto =https --retry 3 -o "$root/var/cache/farswap-pool/$f" "$url" ||
			die "could not fetch $url"
		[ "$(dpkg-deb -f "$root/var/cache/farswap-pool/$f" Package Version | tr '\n' ' ')" = \
			"Package: $p Version: $ver " ] ||
			die "$url is not $p $ver"
		debs+=("/var/cache/farswap-pool/$f")
	done
	run_in -- apt-get install -y -qq -o Dpkg::Use-Pty=0 "${debs[@]}" >/dev/null ||
		die "apt-get install of linux-headers-$kver from the pool failed"
	rm -rf "$root/var/cache/farswap-pool"
	[ -f "$root/usr/src/linux-headers-$kver/Makefile" ] ||
		die "linux-headers-$kver installed but $root/usr/src/linux-headers-$kver/Makefile is missing"
}

# 2. Each series' newest headers (and their -common, linux-kbuild and
# linux-base packages, by dependency).
for s in $series; do
	want=$(apt_kver "$s")
	if [ -z "$want" ]; then
		pool_headers "$s"
		continue
	fi
	[ "$(installed_kver "$s")" = "$want" ] &&
		[ -f "$root/usr/src/linux-headers-$want/Makefile" ] && continue
	msg "installing linux-headers-$want"
	run_in -- apt-get install -y -qq -o Dpkg::Use-Pty=0 "linux-headers-$want" >/dev/null ||
		die "apt-get install linux-headers-$want failed"
	[ -f "$root/usr/src/linux-headers-$want/Makefile" ] ||
		die "linux-headers-$want installed but $root/usr/src/linux-headers-$want/Makefile is missing"
done

# 3. KUnit: the newest linux-source of $kunit (apt picks the release) and
# the tools kunit.py builds a UML kernel with.  Asked of apt only when
# something is missing, or on --update (a newer release then replaces
# the tarball, and graft.sh extracts it anew).
if [ -n "$kunit" ] && { [ -n "$update" ] || ! kunit_ready; }; then
	msg "installing linux-source-$kunit, python3, flex, bison and gcc (KUnit under UML)"
	run_in -- apt-get install -y -qq -o Dpkg::Use-Pty=0 \
		"linux-source-$kunit" python3 flex bison gcc >/dev/null ||
		die "apt-get install linux-source-$kunit python3 flex bison gcc failed"
	kunit_ready || die "linux-source-$kunit installed but no $root/usr/src/linux-source-$kunit*.tar.xz"
fi

# The downloaded .debs (about 120 MB, and the source's 165 MB) are not
# needed once installed.
run_in -- apt-get clean

# 4. The guest kernel: the newest $guest image and modules, unpacked.
k=$(apt_kver "$guest")
[ -n "$k" ] || die "trixie-backports lists no linux-headers-$guest.*-amd64"
dir=$kernels/$k
if [ ! -f "$dir/ok" ]; then
	msg "downloading and unpacking the $k image and modules into $dir"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	# Debian's 7.x image is split: linux-image-KVER (empty, depends on
	# the rest), linux-binary-KVER (the signed vmlinuz), linux-modules-KVER
	# and linux-base-KVER (config, System.map, modules.builtin*).
	pkgs=$(run_in -- apt-cache pkgnames "linux-" |
		grep -x -E "linux-(image|binary|modules|base)-$(ere "$k")" | sort) || true
	grep -q "^linux-image-" <<<"$pkgs" || die "no linux-image-$k package"
	grep -q "^linux-modules-" <<<"$pkgs" || die "no linux-modules-$k package"
	# shellcheck disable=SC2086 # one word per package
	run_in --bind "$dir/debs" -- sh -c 'cd "$1" && shift && apt-get download -qq -o APT::Sandbox::User=root "$@"' \
		sh "$dir/debs" $pkgs || die "apt-get download $pkgs failed"
	for deb in "$dir"/debs/*.deb; do
		run_in --bind "$dir" -- dpkg-deb -x "$deb" "$dir" ||
			die "dpkg-deb -x $deb failed"
	done
	# 7.x packages ship the kernel as usr/lib/modules/KVER/vmlinuz (the
	# postinst links /boot); the links make the tree read like an
	# installed, merged-/usr one: boot/vmlinuz-KVER, lib/modules/KVER.
	[ -f "$dir/usr/lib/modules/$k/vmlinuz" ] ||
		die "$dir/usr/lib/modules/$k/vmlinuz missing after unpacking"
	[ -e "$dir/lib" ] || ln -s usr/lib "$dir/lib"
	mkdir -p "$dir/boot"
	ln -sfn "../usr/lib/modules/$k/vmlinuz" "$dir/boot/vmlinuz-$k"
	run_in --bind "$dir" -- depmod -b "$dir" "$k" || die "depmod for $k failed"
	(cd "$dir/debs" && ls) >"$dir/packages"
	rm -rf "$dir/debs"
	touch "$dir/ok"
fi

if [ -n "${made_chroot:-}" ]; then
	secs=$(($(date +%s) - start))
	echo "$secs" >"$root/.farswap-seconds"
	msg "made in ${secs}s; $(du -sh "$root" | cut -f1) in $root, $(du -sh "$dir" | cut -f1) in $dir"
fi
exit 0
