#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a kernel tree that builds farswap's KUnit suites, and print its path.
#
#   tests/kunit/graft.sh [KUNIT_DIR]      (default: build/kunit)
#
# 1. Extract /usr/src/linux-source-6.12.tar.xz (Debian's linux-source-6.12,
#    installed by scripts/setup.sh) into KUNIT_DIR, unless the same
#    tarball (name, size, mtime: see the .stamp file) is already there.
# 2. Graft the checkout into the tree, as out-of-tree drivers such as evdi
#    do: drivers/farswap -> the checkout, one `source` line in
#    drivers/Kconfig, one `obj-` line in drivers/Makefile.  Each step is
#    skipped when already done, so a warm tree's files keep their mtimes
#    and make has nothing to redo.
#
# Messages go to stderr; stdout carries only the tree's path.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${1:-$top/build/kunit}
tarball=${FARSWAP_KUNIT_TARBALL:-}

if [ -z "$tarball" ]; then
	# One linux-source-6.12 package at a time; glob rather than name it.
	tarball=$(printf '%s\n' /usr/src/linux-source-6.12*.tar.xz |
		  sort -V | tail -n1)
fi
if [ -z "$tarball" ] || [ ! -r "$tarball" ]; then
	echo "graft: no /usr/src/linux-source-6.12*.tar.xz: run 'make setup' (Debian package linux-source-6.12)" >&2
	exit 1
fi

name=$(basename "$tarball" .tar.xz)
tree=$kdir/$name
stamp=$kdir/$name.stamp
want="$(basename "$tarball") $(stat -c '%s %Y' "$tarball")"

# A tree half deleted (make clean racing us) must not pass for a whole one.
tree_whole() {
	local f

	for f in Makefile drivers/Kconfig drivers/Makefile \
		 tools/testing/kunit/kunit.py arch/um/Makefile; do
		[ -f "$tree/$f" ] || return 1
	done
}

mkdir -p "$kdir"
if ! tree_whole || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "graft: extracting $tarball into $kdir" >&2
	rm -rf "$tree" "$stamp" "$kdir/.extract"
	mkdir "$kdir/.extract"
	# The tarball is multi-block: xz decompresses it on every core.
	xz -T0 -dc "$tarball" | tar -x -C "$kdir/.extract" --no-same-owner
	if [ ! -d "$kdir/.extract/$name" ]; then
		echo "graft: $tarball has no top-level $name/" >&2
		exit 1
	fi
	mv "$kdir/.extract/$name" "$tree"
	rmdir "$kdir/.extract"
	# Objects built against another tree would be stale: start over.
	rm -rf "$kdir/uml" "$kdir/uml-sanitize"
	echo "$want" >"$stamp"
fi

# The symlink, re-pointed if the checkout moved.  make judges by mtime,
# and another checkout's files may be older than our objects: drop them.
if [ "$(readlink "$tree/drivers/farswap" 2>/dev/null)" != "$top" ]; then
	ln -sfn "$top" "$tree/drivers/farswap"
	rm -rf "$kdir/uml/drivers/farswap" "$kdir/uml-sanitize/drivers/farswap"
fi

# Append a line to a file unless the file already holds it.
graft_line() {
	local file=$1 line=$2

	grep -qxF "$line" "$file" || printf '\n%s\n' "$line" >>"$file"
}
graft_line "$tree/drivers/Kconfig" 'source "drivers/farswap/tests/kunit/Kconfig"'
# shellcheck disable=SC2016 # a make variable, for make
graft_line "$tree/drivers/Makefile" 'obj-$(CONFIG_FARSWAP_KUNIT_TEST) += farswap/tests/kunit/'

echo "$tree"
