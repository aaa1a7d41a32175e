#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-install, host side: install farswap-dkms and farswap-tools with
# dpkg -i, check that DKMS built and installed farswap.ko for this kernel,
# modprobe it, attach with the packaged farswapctl (through
# /dev/farswap-ctl), check the control device's answers, swap a
# page-verifying workload (128 MiB over two processes in a 64 MiB cgroup)
# to the donor, swapoff, detach, rmmod, and purge both packages: DKMS
# must take the module away again.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/farswap-lib.sh"
. "$BED_SCENARIO_DIR/deb-lib.sh"

seed=${FARSWAP_SEED:-$RANDOM}
donor=$FARSWAP_PEER_donor
kver=$(uname -r)

# The machine's own DKMS registration of farswap, if any, shows through
# the overlay: the package's postinst must build its own.
if [ -e /var/lib/dkms/farswap ]; then
	bed_log "removing the machine's DKMS farswap in this guest's overlay"
	dkms remove farswap/"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$FARSWAP_SRC/dkms.conf")" --all >/dev/null 2>&1 || true
	rm -rf /var/lib/dkms/farswap /usr/src/farswap-*
fi
find /lib/modules/"$kver" -name 'farswap.ko*' -delete
# So is the machine's host id, if it has one: the postinst must make one.
rm -f /etc/farswap/hostid
# A root with other kernels' headers (Debian 13's for 7.x holds 7.0 to
# 7.3 for the build suite) is a machine with those kernels installed: the
# postinst would build for each of them, minutes apiece under TCG.  This
# guest is a machine with its running kernel only.
for d in /lib/modules/*; do
	[ "${d##*/}" = "$kver" ] || [ ! -e "$d/build" ] || {
		bed_log "hiding ${d##*/}'s headers: only the running kernel is installed here"
		rm -rf "$d"
	}
done

t0=$SECONDS
deb_install farswap-dkms farswap-tools
bed_result deb.install_seconds $((SECONDS - t0))
dkms status farswap | sed 's/^/  dkms: /'
# The host's persistent identity, made once by the postinst.
hostid=$(cat /etc/farswap/hostid 2>/dev/null) ||
	bed_fail "farswap-tools' postinst made no /etc/farswap/hostid"
[[ $hostid =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]] ||
	bed_fail "/etc/farswap/hostid holds '$hostid', not a UUID"
bed_log "host id $hostid"
dkms status farswap -k "$kver" | bed_grep ': installed' ||
	bed_fail "DKMS did not install farswap for $kver: $(dkms status farswap)"
ko=$(modinfo -n farswap) || bed_fail "modinfo finds no farswap module"
case $ko in
*/updates/dkms/farswap.ko*) bed_log "farswap.ko from DKMS: $ko" ;;
*) bed_fail "modprobe would load $ko, not DKMS's" ;;
esac

FS_CTL=/usr/sbin/farswapctl
[ -x "$FS_CTL" ] || bed_fail "farswap-tools installed no $FS_CTL"
modprobe farswap || bed_fail "modprobe farswap failed"
[ -c /dev/farswap-ctl ] || bed_fail "no /dev/farswap-ctl after modprobe farswap"
fs_add_key
[ "$(stat -c %a /dev/farswap-ctl)" = 600 ] ||
	bed_fail "/dev/farswap-ctl has mode $(stat -c %a /dev/farswap-ctl), not 600"
"$FS_CTL" --version | sed 's/^/  /'

# The control device's answers, each on its own open file.
exec 3<>/dev/farswap-ctl
if echo "donor=$donor size=64M size=128M" >&3; then
	bed_fail "a duplicate size= was accepted"
fi
read -r answer <&3
[ "$answer" = "error=option 'size' given twice" ] ||
	bed_fail "/dev/farswap-ctl answered '$answer' to a duplicate size="
exec 3>&-
out=$("$FS_CTL" detach farswap7 2>&1) && bed_fail "detach of no device succeeded"
grep -q 'no device farswap7' <<<"$out" || bed_fail "farswapctl detach said '$out'"

bed_wait donor ready 2300
dev=$(fs_attach --donor "$donor" --size 256M)
name=${dev#/dev/}
bed_log "attached $dev"
[ "$(cat /sys/block/"$name"/farswap/host_id)" = "$hostid" ] &&
	[ "$(cat /sys/block/"$name"/farswap/host_id_source)" = attach ] ||
	bed_fail "$name does not show /etc/farswap/hostid as its host id (attach)"
mkswap "$dev" >/dev/null
swapon "$dev"

out0=$(fs_vmstat pswpout)
in0=$(fs_vmstat pswpin)
fs_workload_start 128 64M --procs 2 --seed "$seed"
fs_workload_wait_hold 2 900
pswpout=$(($(fs_vmstat pswpout) - out0))
pswpin=$(($(fs_vmstat pswpin) - in0))
rdma_writes=$(fs_donor_field "$name" "$donor" writes)
rdma_reads=$(fs_donor_field "$name" "$donor" reads)
"$FS_CTL" status "$name"
bed_result deb.pswpout "$pswpout"
bed_result deb.pswpin "$pswpin"
# 128 MiB in 64 MiB: at least 32 MiB must have gone out and come back.
[ "$pswpout" -ge 8192 ] || bed_fail "only $pswpout pages swapped out"
[ "$pswpin" -ge 8192 ] || bed_fail "only $pswpin pages swapped in"
[ "$rdma_writes" -gt 0 ] && [ "$rdma_reads" -gt 0 ] ||
	bed_fail "no RDMA traffic counted (writes $rdma_writes, reads $rdma_reads)"

fs_unlimit_workload
swapoff "$dev"
fs_workload_release

"$FS_CTL" detach "$name"
[ ! -e "/sys/block/$name" ] || bed_fail "$name still there after detach"
rmmod farswap
deb_remove farswap-tools farswap-dkms
[ ! -e /etc/farswap/hostid ] || bed_fail "/etc/farswap/hostid left after dpkg --purge"
if find /lib/modules/"$kver" -name 'farswap.ko*' | bed_grep .; then
	bed_fail "farswap.ko left in /lib/modules/$kver after purging farswap-dkms"
fi
check_kernel_log
bed_signal done
