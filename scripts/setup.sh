#!/bin/bash
# Install every Debian package farswap needs to build, test, demo and
# benchmark.  Idempotent and quiet when everything is already there.
set -euo pipefail

# Kernel packages are named through Debian's metapackages so that whatever
# 6.1 and 6.12 versions are current get installed; the rest of the project
# globs the installed versions and never names one.
PACKAGES=(
	build-essential bc flex bison libelf-dev libssl-dev kmod cpio xz-utils
	git rsync python3 iproute2 iputils-ping procps util-linux
	linux-image-6.12-amd64 linux-headers-6.12-amd64 linux-source-6.12
	linux-image-amd64 linux-headers-amd64
	dkms sparse
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
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
