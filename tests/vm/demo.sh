#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a donor and a host guest (QEMU, Soft-RoCE), swap a
# workload from the host to the donor's memory, and show what went where.
# FARSWAP_DEMO_MB and FARSWAP_DEMO_LIMIT size the workload (default
# 192 MiB in a 96M memory cgroup); --kernel 6.1 boots Debian's 6.1.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
make -s -C tests/workload || exit 1
make -s -C daemon || exit 1
make -s -C tools || exit 1

mkdir -p build
echo "farswap demo: booting a donor and a host guest; this takes a few minutes"
tests/vm/bed.py run demo "$@" >build/demo.log 2>&1
rc=$?
console=build/vm-logs/demo
sed -n 's/^demo: //p' "$console/donor.console" | head -n1
sed -n 's/^demo: //p' "$console/host.console"
sed -n 's/^demo: //p' "$console/donor.console" | tail -n +2
tail -n1 build/demo.log
if [ $rc -ne 0 ]; then
	echo "the demo failed; guest console logs: $console, bed log: build/demo.log"
fi
exit $rc
