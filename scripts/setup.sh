#!/bin/bash
# Install every Debian package farswap needs to build, test, demo and
# benchmark, and make the Debian 13 chroot that builds farswap.ko for
# Linux 7.x (scripts/trixie-chroot.sh, cached in /var/cache/farswap).
# Idempotent and quiet when everything is already there.
#
# FARSWAP_NO_7X=1 skips the chroot (no 7.x builds then; the build suite
# says so).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

# Kernel packages are named through Debian's metapackages so that whatever
# 6.1 and 6.12 versions are current get installed; the rest of the project
# globs the installed versions and never names one.
PACKAGES=(
	build-essential bc flex bison libelf-dev libssl-dev zlib1g-dev kmod cpio xz-utils
	git rsync python3 iproute2 iputils-ping procps util-linux
	linux-image-6.12-amd64 linux-headers-6.12-amd64 linux-source-6.12
	linux-image-amd64 linux-headers-amd64
	dkms sparse mmdebstrap
	debhelper dh-dkms dpkg-dev fakeroot
	qemu-system-x86 busybox-static
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev
	libcmocka-dev clang libclang-rt-14-dev llvm
	libsystemd-dev pkg-config groff-base cryptsetup-bin keyutils
	fio nbd-server nbd-client gnuplot-nox
)

missing=()
for p in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Linux 7.x: trixie-backports' headers in a trixie chroot, 7.3's source
# for KUnit (make check-full), and the 7.3 image unpacked for guests.
# Silent when made; the first time takes some minutes and downloads
# about 480 MB.
if [ -z "${FARSWAP_NO_7X:-}" ]; then
	$SUDO "$top/scripts/trixie-chroot.sh"
fi
