#!/bin/bash
# The `dkms` suite: farswap.ko builds and installs with DKMS against every
# installed Debian 6.1 and 6.12 kernel, kernels outside the supported range
# are refused with DKMS's BUILD_EXCLUSIVE message, and the userspace side
# installs and uninstalls cleanly.  Uses private DKMS and install trees, so
# the machine's own /lib/modules and /usr/src are left alone.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
work=$top/build/dkms
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
failed=0

pass() { echo "PASS: dkms/$1"; }
fail() { echo "FAIL: dkms/$1: $2"; failed=1; }

# One version: dkms.conf's is the package's, the module reports the same.
modver=$(sed -n 's/^#define FARSWAP_MODULE_VERSION[[:space:]]*"\(.*\)"/\1/p' kmod/main.c)
if [ "$modver" = "$version" ]; then
	pass version
else
	fail version "dkms.conf says $version, kmod/main.c says $modver"
fi

rm -rf "$work"
mkdir -p "$work/tree" "$work/src" "$work/install"
dkms=(dkms --dkmstree "$work/tree" --sourcetree "$work/src" --installtree "$work/install")

if ! make -s dkms-src DKMS_SRC="$work/src/farswap-$version" ||
   ! "${dkms[@]}" add -m farswap -v "$version" >"$work/add.log" 2>&1; then
	fail add "dkms add failed (see $work/add.log)"
	exit 1
fi
pass add

# Both Debian kernel series must be there and build.
for series in 6.1 6.12; do
	kvers=$(ls -d /lib/modules/"$series".*/build 2>/dev/null | sed 's|/lib/modules/||; s|/build||')
	if [ -z "$kvers" ]; then
		fail "build-$series" "no linux-headers for $series installed (run make setup)"
		continue
	fi
	for kver in $kvers; do
		log=$work/build-$kver.log
		mkdir -p "$work/install/$kver"
		if ! "${dkms[@]}" build -m farswap -v "$version" -k "$kver" >"$log" 2>&1; then
			fail "build-$kver" "dkms build failed: $(grep -m1 -i 'error' "$log" || tail -n1 "$log") (log: $log)"
			continue
		fi
		ko=$(ls "$work/tree/farswap/$version/$kver/x86_64/module/"farswap.ko* 2>/dev/null | head -n1)
		if [ -z "$ko" ] || ! modinfo -F vermagic "$ko" | grep -q "^$kver "; then
			fail "build-$kver" "no farswap.ko for $kver after dkms build"
			continue
		fi
		pass "build-$kver"
		if "${dkms[@]}" install -m farswap -v "$version" -k "$kver" >"$work/install-$kver.log" 2>&1 &&
		   ls "$work/install/$kver/updates/dkms/"farswap.ko* >/dev/null 2>&1; then
			pass "install-$kver"
		else
			fail "install-$kver" "dkms install failed (log: $work/install-$kver.log)"
		fi
	done
done

# An unsupported kernel: DKMS must refuse it up front (exit 77) with the
# BUILD_EXCLUSIVE message, not try to compile.
out=$("${dkms[@]}" build -m farswap -v "$version" -k 5.10.0-99-amd64 2>&1)
rc=$?
if [ "$rc" -eq 77 ] && grep -q BUILD_EXCLUSIVE <<<"$out" && ! grep -q 'error:' <<<"$out"; then
	pass exclusive-old-kernel
else
	fail exclusive-old-kernel "dkms build for 5.10 exited $rc: $(tail -n1 <<<"$out")"
fi

# make install / make uninstall of the userspace side.
dest=$work/destdir
if make -s install DESTDIR="$dest" PREFIX=/usr >"$work/make-install.log" 2>&1 &&
   [ -x "$dest/usr/sbin/farswapd" ] && [ -x "$dest/usr/sbin/farswapctl" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswapd.service" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswap-swap.service" ] && [ -x "$dest/usr/sbin/farswap-swap" ] &&
   [ -f "$dest/etc/farswap/farswapd.conf.example" ] &&
   ! grep -q '@SBINDIR@' "$dest/usr/lib/systemd/system/farswapd.service"; then
	pass make-install
else
	fail make-install "make install did not install farswapd, farswapctl, the unit and the example config (log: $work/make-install.log)"
fi
if make -s uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1 &&
   [ -z "$(find "$dest" -type f)" ]; then
	pass make-uninstall
else
	fail make-uninstall "files left after make uninstall: $(find "$dest" -type f | head -n3 | tr '\n' ' ')"
fi

exit $failed
