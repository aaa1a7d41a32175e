#!/bin/bash
# The `dkms` suite: farswap.ko builds and installs with DKMS against every
# installed Debian 6.1 and 6.12 kernel, kernels before 6.1 are refused
# with DKMS's BUILD_EXCLUSIVE message and newer ones than the newest
# supported are tried with a clear word when they fail, make dkms-install
# runs twice, the userspace side installs and uninstalls cleanly, every
# place that writes the version says dkms.conf's, and make deb builds
# farswap-dkms and farswap-tools with what each must hold (dpkg-deb -c,
# -f and the maintainer scripts: keyutils, no restart on upgrade, the
# host id made at configure and removed at purge; lintian if there).
# Installing the .debs is tests/vm/scenarios/deb-install's: dpkg --root
# cannot run their maintainer scripts (DKMS, systemd) outside a system.  Uses private DKMS and install trees, so
# the machine's own /lib/modules and /usr/src are left alone.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
work=$top/build/dkms
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
failed=0

pass() { echo "PASS: dkms/$1"; }
fail() { echo "FAIL: dkms/$1: $2"; failed=1; }

# One version: dkms.conf's is the package's, and every other place that
# writes it says the same, so none can drift: the module, the Debian
# changelog's newest entry, the man pages' headers, and the README's and
# docs/json.md's examples.  farswapctl and farswapd print the Makefiles'
# (dkms.conf's; checked on the packaged programs below).
versions=$(
	printf 'kmod/farswap.h %s\n' "$(sed -n 's/^#define FARSWAP_MODULE_VERSION[[:space:]]*"\(.*\)"/\1/p' kmod/farswap.h)"
	printf 'debian/changelog %s\n' "$(sed -n '1s/^farswap (\([^)]*\)).*/\1/p' debian/changelog)"
	for m in docs/man/*.[1-9]; do
		printf '%s %s\n' "$m" "$(sed -n 's/^\.TH .* "farswap \([^"]*\)".*/\1/p' "$m")"
	done
	grep -oE '/usr/src/farswap-[0-9][0-9A-Za-z.+~-]*[0-9A-Za-z]|farswap-(dkms|tools)_[^_ ]*_' README.md |
		sed -E 's/^(\/usr\/src\/farswap-|farswap-(dkms|tools)_)//; s/_$//; s/^/README.md /'
	grep -oE '"(farswapctl_version|version)": "[^"]*"' docs/json.md |
		sed -E 's/.*: "(.*)"/docs\/json.md \1/'
)
drift=$(awk -v v="$version" '$2 != v { printf "%s says %s; ", $1, ($2 == "" ? "nothing" : $2) }' <<<"$versions")
if [ -n "$version" ] && [ -z "$drift" ] && [ "$(wc -l <<<"$versions")" -ge 8 ]; then
	pass version
else
	fail version "dkms.conf says ${version:-nothing}, but ${drift:-fewer places than expected say it}"
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
		if [ -z "$ko" ] || ! grep -q "^$kver " <<<"$(modinfo -F vermagic "$ko")"; then
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

# make dkms-install, as an admin runs it, once more over what is there:
# the version is added and the module installed for each kernel, and a
# second run must pass over both (it used to fail on dkms add), twice.
ok=1
for run in 1 2; do
	if ! make -s dkms-install DKMS="${dkms[*]}" DKMS_SRC="$work/src/farswap-$version" \
		>"$work/dkms-install-$run.log" 2>&1; then
		ok=
		fail dkms-install-again "make dkms-install (run $run over an installed module) failed: $(tail -n1 "$work/dkms-install-$run.log") (log: $work/dkms-install-$run.log)"
		break
	fi
done
if [ -n "$ok" ] && grep -q 'already added' "$work/dkms-install-2.log"; then
	pass dkms-install-again
elif [ -n "$ok" ]; then
	fail dkms-install-again "make dkms-install did not see the module already added (log: $work/dkms-install-2.log)"
fi

# An unsupported kernel: DKMS must refuse it up front (exit 77) with the
# BUILD_EXCLUSIVE message, not try to compile.
out=$("${dkms[@]}" build -m farswap -v "$version" -k 5.10.0-99-amd64 2>&1)
rc=$?
if [ "$rc" -eq 77 ] && grep -q BUILD_EXCLUSIVE <<<"$out" && ! grep -q 'error:' <<<"$out"; then
	pass exclusive-old-kernel
else
	fail exclusive-old-kernel "dkms build for 5.10 exited $rc: $(tail -n1 <<<"$out")"
fi

# The range BUILD_EXCLUSIVE_KERNEL lets through: 6.1 and every later
# kernel (a newer one than the tested 7.3 is tried, not refused); before
# 6.1, nothing.  Matched as DKMS matches it ([[ =~ ]]).
bad=$(
	set +u	# dkms.conf names DKMS's own variables
	# shellcheck source=/dev/null
	. ./dkms.conf
	[ -n "$BUILD_EXCLUSIVE_KERNEL" ] || echo "is empty"
	for k in 6.1.0-56-amd64 6.1.192 6.9.1 6.12.117+deb12-amd64 7.0.13+deb13-amd64 \
		7.3.4+deb13-amd64 7.4.1-1-amd64 7.10.2 8.0.0 10.1.0 60.1.0; do
		[[ $k =~ $BUILD_EXCLUSIVE_KERNEL ]] || echo "refuses $k"
	done
	for k in 5.10.0-99-amd64 6.0.12-amd64 4.19.0 3.16.0; do
		[[ $k =~ $BUILD_EXCLUSIVE_KERNEL ]] && echo "accepts $k"
	done
)
if [ -z "$bad" ]; then
	pass exclusive-range
else
	fail exclusive-range "BUILD_EXCLUSIVE_KERNEL $(tr '\n' ' ' <<<"$bad")"
fi

# A kernel newer than the newest supported series: make module (DKMS's
# MAKE) says so before building, and says it is not supported yet when
# the build fails; a failure on a supported kernel says neither.  A stub
# kernel tree whose modules target fails stands in for the headers.
stub=$work/stub-kernel
mkdir -p "$stub/include/config"
printf 'modules:\n\t@echo "error: stub kernel tree"; exit 1\n' >"$stub/Makefile"
newest=$(sed -n 's/^FARSWAP_NEWEST_SERIES := //p' Makefile)
next=${newest%.*}.$((${newest#*.} + 1))
echo "$next.1-1-amd64" >"$stub/include/config/kernel.release"
out=$(make -s module KDIR="$stub" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && grep -q "Linux $next.1-1-amd64 is newer than $newest" <<<"$out" &&
   grep -q "which farswap does not support yet" <<<"$out"; then
	pass newer-kernel-message
else
	fail newer-kernel-message "make module against a $next tree exited $rc: $(tr '\n' ' ' <<<"$out")"
fi
echo "$newest.4+deb13-amd64" >"$stub/include/config/kernel.release"
out=$(make -s module KDIR="$stub" 2>&1)
if ! grep -q -E "newer than|not support yet" <<<"$out"; then
	pass supported-kernel-no-message
else
	fail supported-kernel-no-message "make module against a $newest tree said: $(tr '\n' ' ' <<<"$out")"
fi

# make install / make uninstall of the userspace side.
dest=$work/destdir
if make -s install DESTDIR="$dest" PREFIX=/usr >"$work/make-install.log" 2>&1 &&
   [ -x "$dest/usr/sbin/farswapd" ] && [ -x "$dest/usr/sbin/farswapctl" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswapd.service" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswap-swap.service" ] && [ -x "$dest/usr/sbin/farswap-swap" ] &&
   [ -f "$dest/etc/farswap/farswapd.conf.example" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswap-metrics.service" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswap-metrics.timer" ] &&
   [ -f "$dest/usr/lib/systemd/system/farswap-swap-refresh.timer" ] &&
   [ -f "$dest/usr/share/man/man4/farswap.4" ] && [ -f "$dest/usr/share/man/man5/farswapd.conf.5" ] &&
   [ -f "$dest/usr/share/man/man8/farswapctl.8" ] && [ -f "$dest/usr/share/man/man8/farswapd.8" ] &&
   [ -f "$dest/usr/share/bash-completion/completions/farswapctl" ] &&
   ! grep -q '@SBINDIR@' "$dest/usr/lib/systemd/system/farswapd.service" \
	"$dest/usr/lib/systemd/system/farswap-metrics.service"; then
	pass make-install
else
	fail make-install "make install did not install farswapd, farswapctl, the units, the man pages, the bash completion and the example config (log: $work/make-install.log)"
fi
# The host id: a staged install (DESTDIR) makes none, since every machine
# the tree went to would share it; HOSTID_FILE (the real install's
# /etc/farswap/hostid) is made once, 0644, one UUID, and kept after.
hostid=$work/hostid/hostid
rm -rf "$work/hostid"
uuid_re='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
if [ -e "$dest/etc/farswap/hostid" ]; then
	fail make-install-hostid "make install DESTDIR= made $dest/etc/farswap/hostid"
elif ! make -s -C tools install DESTDIR="$dest" PREFIX=/usr HOSTID_FILE="$hostid" \
	>"$work/make-install-hostid.log" 2>&1 || [ ! -f "$hostid" ]; then
	fail make-install-hostid "make install HOSTID_FILE=$hostid made no file (log: $work/make-install-hostid.log)"
elif [ "$(stat -c %a "$hostid")" != 644 ] || [ "$(wc -l <"$hostid")" != 1 ] ||
     ! grep -qE "$uuid_re" "$hostid"; then
	fail make-install-hostid "$hostid is not one UUID line of mode 0644: $(stat -c %a "$hostid") '$(head -c 80 "$hostid")'"
else
	first=$(cat "$hostid")
	make -s -C tools install DESTDIR="$dest" PREFIX=/usr HOSTID_FILE="$hostid" >/dev/null 2>&1
	if [ "$(cat "$hostid")" = "$first" ]; then
		pass make-install-hostid
	else
		fail make-install-hostid "a second make install replaced $hostid"
	fi
fi
if make -s uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1 &&
   [ -z "$(find "$dest" -type f)" ]; then
	pass make-uninstall
else
	fail make-uninstall "files left after make uninstall: $(find "$dest" -type f | head -n3 | tr '\n' ' ')"
fi

# make deb: farswap-dkms and farswap-tools build with dpkg-buildpackage,
# each holds what it must, and the tools run from the unpacked package.
debdir=$work/deb
deblog=$work/make-deb.log

# deb_has DEB PATH...: every PATH is in DEB (dpkg-deb -c); prints the missing.
deb_has() {
	local deb=$1 list p missing=()

	shift
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qxF "$p" <<<"$list" || missing+=("$p")
	done
	echo "${missing[*]}"
}

if make -s deb DEB_DIR="$debdir" >"$deblog" 2>&1; then
	pass deb-build
else
	fail deb-build "make deb failed: $(grep -m1 -E 'error|dpkg-buildpackage: error|dh_[a-z]+: error' "$deblog" || tail -n1 "$deblog") (log: $deblog)"
fi

dkms_deb=$(ls "$debdir"/farswap-dkms_"$version"_all.deb 2>/dev/null)
if [ -z "$dkms_deb" ]; then
	fail deb-dkms-contents "no farswap-dkms_${version}_all.deb in $debdir"
else
	src=/usr/src/farswap-$version
	want=("$src/dkms.conf" "$src/Makefile" "$src/Kbuild" "$src/kmod/Kbuild"
	      "$src/include/farswap_proto.h")
	for f in kmod/*.c kmod/*.h; do
		# kbuild's own output of a module built in the checkout.
		[[ $f = *.mod.c ]] || want+=("$src/$f")
	done
	missing=$(deb_has "$dkms_deb" "${want[@]}")
	# Sources only: an object or a module built here would be stale there.
	extra=$(dpkg-deb -c "$dkms_deb" | awk '{ print $6 }' |
		grep -E '\.(o|ko|mod|cmd)$|\.mod\.c$' | head -n3 | tr '\n' ' ')
	ctl=$(dpkg-deb -f "$dkms_deb" Depends)
	if [ -n "$missing" ]; then
		fail deb-dkms-contents "farswap-dkms lacks $missing"
	elif [ -n "$extra" ]; then
		fail deb-dkms-contents "farswap-dkms carries build products: $extra"
	elif ! grep -q '^dkms' <<<"$ctl"; then
		fail deb-dkms-contents "farswap-dkms does not depend on dkms (Depends: $ctl)"
	elif ! dpkg-deb --fsys-tarfile "$dkms_deb" |
	     tar -xO ".$src/dkms.conf" | cmp -s - dkms.conf; then
		fail deb-dkms-contents "farswap-dkms's dkms.conf is not the checkout's"
	elif ! grep -q 'common.postinst' <<<"$(dpkg-deb -I "$dkms_deb" postinst 2>/dev/null)"; then
		fail deb-dkms-contents "farswap-dkms's postinst does not register the module with DKMS"
	else
		pass deb-dkms-contents
	fi
fi

tools_deb=$(ls "$debdir"/farswap-tools_"$version"_*.deb 2>/dev/null | head -n1)
if [ -z "$tools_deb" ]; then
	fail deb-tools-contents "no farswap-tools_${version}_*.deb in $debdir"
else
	units=/lib/systemd/system
	missing=$(deb_has "$tools_deb" /usr/sbin/farswapd /usr/sbin/farswapctl \
		  /usr/sbin/farswap-swap "$units/farswapd.service" \
		  "$units/farswap-swap.service" "$units/farswap-metrics.service" \
		  "$units/farswap-metrics.timer" \
		  "$units/farswap-swap-refresh.service" \
		  "$units/farswap-swap-refresh.timer" /usr/share/man/man4/farswap.4.gz \
		  /usr/share/man/man5/farswapd.conf.5.gz \
		  /usr/share/man/man8/farswapctl.8.gz \
		  /usr/share/man/man8/farswapd.8.gz \
		  /usr/share/bash-completion/completions/farswapctl \
		  /etc/farswap/farswapd.conf.example \
		  /etc/farswap/swap.conf.example \
		  /usr/lib/sysusers.d/farswap.conf \
		  /usr/share/doc/farswap-tools/copyright)
	unpacked=$work/deb-root
	rm -rf "$unpacked"
	dpkg-deb -x "$tools_deb" "$unpacked"
	if [ -n "$missing" ]; then
		fail deb-tools-contents "farswap-tools lacks $missing"
	elif ! grep -q '^ExecStart=/usr/sbin/farswapd' "$unpacked$units/farswapd.service"; then
		fail deb-tools-contents "farswapd.service does not run /usr/sbin/farswapd: $(grep ExecStart "$unpacked$units/farswapd.service")"
	elif ! grep -qx "farswapctl $version" <<<"$("$unpacked/usr/sbin/farswapctl" --version)"; then
		fail deb-tools-contents "the packaged farswapctl --version does not say $version"
	elif ! grep -q "^farswapd $version," <<<"$("$unpacked/usr/sbin/farswapd" --version)"; then
		fail deb-tools-contents "the packaged farswapd --version does not say $version"
	elif ! "$unpacked/usr/sbin/farswapd" --help >/dev/null 2>&1; then
		fail deb-tools-contents "the packaged farswapd --help failed"
	# Read whole before grep -q: under pipefail, grep's early exit is
	# tar's SIGPIPE and the pipeline's failure (CI once failed so).
	elif ! grep -q 'systemd-sysusers farswap.conf' \
		<<<"$(dpkg-deb --ctrl-tarfile "$tools_deb" | tar -xO ./postinst)"; then
		fail deb-tools-contents "farswap-tools's postinst does not create the farswap user"
	elif [ -e "$unpacked/etc/farswap/hostid" ]; then
		fail deb-tools-contents "farswap-tools ships /etc/farswap/hostid: every host would share it"
	else
		pass deb-tools-contents
	fi

	# Depends: keyutils, for keyctl (attach --key).
	depends=$(dpkg-deb -f "$tools_deb" Depends)
	if grep -qE '(^|[ ,])keyutils([ ,(]|$)' <<<"$depends"; then
		pass deb-tools-depends
	else
		fail deb-tools-depends "farswap-tools does not depend on keyutils (Depends: $depends)"
	fi
	# zlib (the key files' CRC-32), through shlibs:Depends.
	if grep -qE '(^|[ ,])zlib1g([ ,(]|$)' <<<"$depends"; then
		pass deb-tools-depends-zlib
	else
		fail deb-tools-depends-zlib "farswap-tools does not depend on zlib1g (Depends: $depends)"
	fi

	# README.md and daemon/README.md both, apart (dh_installdocs copies
	# by name: one would write over the other).
	doc=$unpacked/usr/share/doc/farswap-tools
	readme=$(ls "$doc"/README.md "$doc"/README.md.gz 2>/dev/null | head -n1)
	dreadme=$(ls "$doc"/README.farswapd.md "$doc"/README.farswapd.md.gz 2>/dev/null | head -n1)
	if [ -z "$readme" ] || [ -z "$dreadme" ]; then
		fail deb-tools-docs "farswap-tools lacks README.md or README.farswapd.md in /usr/share/doc/farswap-tools: $(ls "$doc" | tr '\n' ' ')"
	elif ! zcat -f "$readme" | cmp -s - README.md || ! zcat -f "$dreadme" | cmp -s - daemon/README.md; then
		fail deb-tools-docs "the packaged READMEs are not README.md and daemon/README.md"
	else
		pass deb-tools-docs
	fi

	# The maintainer scripts, as dpkg runs them.
	scripts=$work/deb-scripts
	rm -rf "$scripts"
	mkdir -p "$scripts"
	dpkg-deb --ctrl-tarfile "$tools_deb" | tar -x -C "$scripts"

	# An upgrade try-restarts farswapd, and nothing else: its restart
	# keeps the pool (the fd store) and its hosts resume their slabs,
	# while a restart of farswap-swap would swap off and pull every page
	# back.  No stop in preinst; prerm stops only on remove (farswapd's
	# ExecStop drains).
	why=
	grep -q "deb-systemd-invoke try-restart 'farswapd.service'" "$scripts/postinst" 2>/dev/null ||
		why="postinst does not try-restart farswapd.service on upgrade"
	starts=$(grep -E 'deb-systemd-invoke .*(restart|start)' "$scripts/postinst" 2>/dev/null)
	[ -n "$starts" ] && grep -qv "try-restart 'farswapd.service'" <<<"$starts" &&
		why="postinst (re)starts units other than farswapd: $(grep -m1 -v "try-restart 'farswapd.service'" <<<"$starts")"
	grep -q 'deb-systemd-invoke' "$scripts/preinst" 2>/dev/null &&
		why="preinst stops units before the upgrade: $(grep -m1 deb-systemd-invoke "$scripts/preinst")"
	if [ -f "$scripts/prerm" ] &&
	   awk '/deb-systemd-invoke/ && prev !~ /"\$1" = remove/ { bad = 1 } { prev = $0 } END { exit !bad }' "$scripts/prerm"; then
		why="prerm stops units other than on remove"
	fi
	grep -q 'deb-systemd-invoke stop farswapd.service' "$scripts/prerm" 2>/dev/null ||
		why="prerm does not stop farswapd on remove"
	if [ -z "$why" ]; then
		pass deb-tools-upgrade
	else
		fail deb-tools-upgrade "$why"
	fi

	# The host id block of the postinst, run against a private /etc:
	# configure makes one UUID line, 0644, and never writes over it.
	block() {	# block FILE START: from the line START to the first "fi"
		awk -v start="$2" 'index($0, start) == 1 { on = 1 } on { print } on && /^fi$/ { exit }' "$1"
	}
	sandbox=$work/deb-sandbox
	rm -rf "$sandbox"
	mkdir -p "$sandbox/etc/farswap" "$sandbox/prom"
	hostid_block=$(block "$scripts/postinst" 'hostid=/etc/farswap/hostid' |
		sed "s|/etc/farswap|$sandbox/etc/farswap|g")
	made=$sandbox/etc/farswap/hostid
	if [ -z "$hostid_block" ]; then
		fail deb-tools-hostid "farswap-tools's postinst does not make /etc/farswap/hostid"
	elif ! sh -e -c "$hostid_block" postinst configure ||
	     [ ! -f "$made" ] || [ "$(stat -c %a "$made")" != 644 ] ||
	     [ "$(wc -l <"$made")" != 1 ] || ! grep -qE "$uuid_re" "$made"; then
		fail deb-tools-hostid "the postinst's configure did not make one UUID line of mode 0644 ($(ls -l "$made" 2>&1))"
	else
		first=$(cat "$made")
		sh -e -c "$hostid_block" postinst configure 2>/dev/null
		if [ "$(cat "$made")" = "$first" ]; then
			pass deb-tools-hostid
		else
			fail deb-tools-hostid "a second configure replaced /etc/farswap/hostid"
		fi
	fi

	# The postrm: purge removes the host id and the metrics file
	# farswap-metrics.service writes; remove keeps them.
	prom=/var/lib/prometheus/node-exporter/farswap.prom
	if ! grep -qF -- "--output $prom" "$unpacked$units/farswap-metrics.service"; then
		fail deb-tools-purge "farswap-metrics.service no longer writes $prom: the postrm must follow"
	elif [ ! -f "$scripts/postrm" ]; then
		fail deb-tools-purge "farswap-tools has no postrm"
	else
		purge_block=$(block "$scripts/postrm" 'if [ "$1" = purge ]' |
			sed "s|/etc/farswap|$sandbox/etc/farswap|g; s|${prom%/*}|$sandbox/prom|g")
		echo 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 >"$made"
		echo "farswap_host_devices 0" >"$sandbox/prom/farswap.prom"
		sh -e -c "$purge_block" postrm remove
		if [ ! -f "$made" ] || [ ! -f "$sandbox/prom/farswap.prom" ]; then
			fail deb-tools-purge "postrm remove deleted the host id or the metrics file"
		elif ! sh -e -c "$purge_block" postrm purge || [ -e "$made" ] ||
		     [ -e "$sandbox/prom/farswap.prom" ]; then
			fail deb-tools-purge "postrm purge left $(ls "$made" "$sandbox/prom/farswap.prom" 2>/dev/null | sed "s|$sandbox||" | tr '\n' ' ')"
		else
			pass deb-tools-purge
		fi
	fi
fi

# lintian, when installed: errors fail, warnings are shown.
if ! command -v lintian >/dev/null; then
	echo "dkms: lintian not installed, the .debs were not linted"
elif [ -n "${dkms_deb:-}" ] && [ -n "${tools_deb:-}" ]; then
	lintian --tag-display-limit 0 "$dkms_deb" "$tools_deb" >"$work/lintian.log" 2>&1
	if grep -q '^E: ' "$work/lintian.log"; then
		fail deb-lintian "$(grep -m1 '^E: ' "$work/lintian.log") (log: $work/lintian.log)"
	else
		grep '^W: ' "$work/lintian.log" | sed 's/^/dkms: lintian: /'
		pass deb-lintian
	fi
fi

exit $failed
