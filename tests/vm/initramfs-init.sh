#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test bed's busybox initramfs (bed.py packs it; keep it
# busybox-only).  It loads the modules the bed always needs (the list, in
# load order, is /modules/order: 9p and overlay to reach the machine's
# root, virtio_net and Soft-RoCE for the links), mounts the machine's root
# read-only over 9p with a tmpfs overlay on top, so the guest can write
# anywhere without touching the machine, mounts everything the guest needs
# (including the run's shared directory at /bed) and switch_roots into the
# bed's guest init, a bash script in the checkout (bed_init= on the kernel
# command line).
#
# The mounting is done here rather than in the guest init because under
# TCG a static busybox applet starts in ~15 ms and a dynamically linked
# util-linux binary in ~90 ms: it saves about a second of every boot.

/bin/busybox --install -s /bin
export PATH=/bin

uptime() {
	cut -d' ' -f1 /proc/uptime /newroot/proc/uptime 2>/dev/null
}

fatal() {
	echo "farswap-bed: FATAL: initramfs: $*"
	if [ -n "$bed_role" ] && grep -q ' /newroot/bed ' /proc/mounts; then
		echo "initramfs: $*" >"/newroot/bed/$bed_role.error"
		echo 254 >"/newroot/bed/$bed_role.rc"
	fi
	# Power off rather than panic: bed.py sees the guest stop and points
	# at this line in the console log.
	poweroff -f
	sleep 1000
}

# mount_9p TAG DIR OPTIONS: the 9p mount races the virtio probe (the tag
# appears once virtio_pci has bound the device), so retry for a while.
mount_9p() {
	tries=0
	until mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,$3" "$1" "$2" 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -lt 100 ] || fatal "cannot mount 9p tag $1 on $2"
		sleep 0.05
	done
}

mkdir -p /proc /sys /dev /lower /upper /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# Read the command line before /proc moves.
bed_init=
bed_role=
bed_binds=
for arg in $(cat /proc/cmdline); do
	case $arg in
	bed_binds=*) bed_binds=${arg#bed_binds=} ;;
	bed_init=*) bed_init=${arg#bed_init=} ;;
	bed_role=*) bed_role=${arg#bed_role=} ;;
	esac
done
[ -n "$bed_init" ] || fatal "no bed_init= on the kernel command line"
[ -n "$bed_role" ] || fatal "no bed_role= on the kernel command line"
echo "$bed_role" >/proc/sys/kernel/hostname

# The debug kernel (bed.py --kernel debug) has them all built in: its
# order file is empty and nothing is loaded.
echo "farswap-bed: initramfs: loading modules at $(uptime) s"
for m in $(cat /modules/order); do
	# A module that is already built in or loaded answers EEXIST: fine.
	insmod "/modules/$m" 2>/dev/null || [ -d "/sys/module/${m%.ko}" ] ||
		echo "farswap-bed: initramfs: insmod $m failed"
done

echo "farswap-bed: initramfs: mounting the root at $(uptime) s"
mount_9p farswap_root /lower ro
mount -t tmpfs -o mode=0755 upper /upper
mkdir -p /upper/data /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work \
	overlay /newroot || fatal "cannot mount the overlay root"

n=/newroot
mount --move /proc $n/proc
mount --move /sys $n/sys
mount --move /dev $n/dev
mkdir -p $n/dev/pts $n/dev/shm $n/bed
# No udev here: the links bash process substitution and friends rely on.
ln -s /proc/self/fd $n/dev/fd
ln -s fd/0 $n/dev/stdin
ln -s fd/1 $n/dev/stdout
ln -s fd/2 $n/dev/stderr
mount -t devpts devpts $n/dev/pts
mount -t tmpfs tmpfs $n/dev/shm
# The machine's /tmp and /run show through the overlay; their files mean
# nothing here.  (So a scenario directory must not live under /tmp.)
mount -t tmpfs -o mode=1777 tmpfs $n/tmp
mount -t tmpfs -o mode=0755 tmpfs $n/run
# A guest on another root than the machine's (bed.py's DISTRO_ROOT: a
# Debian 13 userland for a 7.x kernel) still needs some of the machine's
# directories (the checkout, the build, the kernel's modules): bed.py
# names them in bed_binds=, and each is bound, read-only, at its own path.
if [ -n "$bed_binds" ]; then
	mkdir -p $n/run/bed-machine
	mount_9p farswap_machine $n/run/bed-machine ro
	for p in $(echo "$bed_binds" | tr , ' '); do
		mkdir -p "$n$p" && mount -o bind "$n/run/bed-machine$p" "$n$p" ||
			fatal "cannot bind the machine's $p"
	done
fi
[ -f "/newroot$bed_init" ] || fatal "guest init $bed_init not found in the guest's root"
mount -t debugfs debugfs $n/sys/kernel/debug 2>/dev/null
mount -t configfs configfs $n/sys/kernel/config 2>/dev/null
# cgroup v2 with the memory controller available to children, so role
# scripts can confine a workload.
mount -t cgroup2 cgroup2 $n/sys/fs/cgroup || fatal "cannot mount cgroup2"
echo +memory >$n/sys/fs/cgroup/cgroup.subtree_control || fatal "cannot enable the memory controller"

# The run's shared, writable directory.
mount_9p farswap_bed $n/bed rw

echo "farswap-bed: initramfs: switching root at $(uptime) s"
exec switch_root $n /bin/bash "$bed_init"
