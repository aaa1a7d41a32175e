# SPDX-License-Identifier: GPL-2.0
#
# make            farswap.ko (against KDIR) and the userspace programs
# make check      every test suite; ends with "N passed, N failed"
# make check-full the same with every guest scenario (about twice as long),
#                 and KUnit on the newest series (7.3) as well as on 6.12
# make check-debug the lifetime scenarios on a debug kernel (KASAN, lockdep)
# make demo       boot a donor and a host guest and swap a workload to RDMA
# make bench      farswap against NVMe-oF/RDMA, NBD and zram, side by side
# make setup      apt-get install everything the above need (idempotent)
# make install / uninstall   the userspace side (farswapd, farswapctl, units)
# make deb        Debian packages farswap-dkms and farswap-tools in build/deb/

# Kernel to build against: the running one's headers if installed, else
# the newest Debian 6.12 headers on this machine.
KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d $$d ]; then echo $$d; else \
	ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | sort -V | tail -n1; fi)

PREFIX ?= /usr/local
DESTDIR ?=

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
# Where DKMS finds the module's sources.
DKMS_SRC ?= $(DESTDIR)/usr/src/farswap-$(VERSION)
# Where make deb leaves the .debs.
DEB_DIR ?= $(CURDIR)/build/deb

.PHONY: all module userspace clean check check-full check-debug demo bench setup install uninstall \
	dkms-src dkms-install dkms-uninstall deb

all: module userspace

# The newest kernel series farswap is built and tested on (README,
# "Supported kernels").  DKMS tries any newer kernel (dkms.conf's
# BUILD_EXCLUSIVE_KERNEL stops only those before 6.1); a build there says
# first that the kernel is newer than this, and, if it fails, that the
# kernel is not supported yet.
FARSWAP_NEWEST_SERIES := 7.3

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found: set KDIR or run 'make setup'" >&2; exit 1; }
	@rel=$$(cat "$(KDIR)/include/config/kernel.release" 2>/dev/null); \
	series=$$(echo "$$rel" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'); \
	newer=; \
	if [ -n "$$series" ] && \
	   [ "$$(printf '%s\n' $(FARSWAP_NEWEST_SERIES) "$$series" | sort -V | tail -n1)" != $(FARSWAP_NEWEST_SERIES) ]; then \
		newer=1; \
		echo "farswap: Linux $$rel is newer than $(FARSWAP_NEWEST_SERIES), the newest kernel farswap supports: trying the build anyway" >&2; \
	fi; \
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules && exit 0; \
	[ -z "$$newer" ] || \
		echo "farswap: the build failed on Linux $$rel, which farswap does not support yet (it supports 6.1 to $(FARSWAP_NEWEST_SERIES)); please report it with this log" >&2; \
	exit 1

# The donor's farswapd (daemon/) and the host's farswapctl (tools/).
userspace:
	$(MAKE) -C daemon
	$(MAKE) -C tools

setup:
	@scripts/setup.sh

check: setup
	@tests/check.sh

# KUnit on FARSWAP_NEWEST_SERIES too: its UML kernel is built from the
# trixie chroot's linux-source (tests/kunit/run.sh), a cold build of some
# minutes that make check's time budget has no room for.
check-full: setup
	@FARSWAP_VM_FULL=1 FARSWAP_KUNIT_SERIES="6.12 $(FARSWAP_NEWEST_SERIES)" tests/check.sh

# The scenarios marked 'debug' in tests/vm/suite.list on the bed's debug
# kernel (scripts/debug-kernel.sh: built once, cached in
# /var/cache/farswap/debug-kernel); logs in test-logs/debug.
check-debug: setup
	@FARSWAP_SUITES=vm FARSWAP_VM_KERNEL=debug FARSWAP_TEST_LOGS=$(CURDIR)/test-logs/debug \
		tests/check.sh

demo: setup
	@tests/vm/demo.sh

bench: setup
	@tests/bench/run.sh

install:
	$(MAKE) -C daemon install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

uninstall:
	$(MAKE) -C daemon uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# The module's sources alone, laid out for DKMS.
dkms-src:
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/kmod $(DKMS_SRC)/include
	install -m 0644 dkms.conf Makefile Kbuild $(DKMS_SRC)/
	install -m 0644 kmod/Kbuild kmod/*.c kmod/*.h $(DKMS_SRC)/kmod/
	install -m 0644 include/farswap_proto.h $(DKMS_SRC)/include/

# Build and install farswap.ko with DKMS for every kernel that has headers.
# Runs again without harm: a version DKMS already has is not added twice,
# and a kernel it is installed for is skipped (DKMS says so).  A kernel
# dkms.conf's BUILD_EXCLUSIVE refuses (DKMS exits 77) is skipped with a
# word, not an error.  DKMS: the command, for tests (private DKMS trees).
DKMS ?= dkms
dkms-install: dkms-src
	@if [ -n "$$($(DKMS) status -m farswap -v $(VERSION))" ]; then \
		echo "farswap/$(VERSION) is already added to DKMS"; \
	else \
		$(DKMS) add -m farswap -v $(VERSION) || exit 1; \
	fi
	@for k in /lib/modules/*/build; do \
		k=$${k%/build}; k=$${k##*/}; \
		$(DKMS) install -m farswap -v $(VERSION) -k $$k; rc=$$?; \
		case $$rc in \
		0) ;; \
		77) echo "farswap: Linux $$k is not one farswap builds for (dkms.conf's BUILD_EXCLUSIVE): skipped" ;; \
		*) echo "farswap: dkms install for Linux $$k failed ($$rc)" >&2; exit 1 ;; \
		esac; \
	done

dkms-uninstall:
	-$(DKMS) remove -m farswap -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

# The .debs (debian/), built by dpkg-buildpackage in a copy of the checkout
# under $(DEB_DIR): it writes them beside the tree it builds, and its clean
# step must not touch this one.  No build products go into the copy.
deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/farswap-$(VERSION)
	tar -c --exclude=./build --exclude=./test-logs --exclude=./.git \
		--exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude=modules.order \
		--exclude=Module.symvers . | \
		tar -x -C $(DEB_DIR)/farswap-$(VERSION)
	cd $(DEB_DIR)/farswap-$(VERSION) && dpkg-buildpackage -us -uc -b
	rm -rf $(DEB_DIR)/farswap-$(VERSION)
	@ls $(DEB_DIR)/*.deb

# Not kbuild's clean: it deletes every object file under the checkout,
# the KUnit tree in build/ included.
clean:
	rm -f kmod/*.o kmod/.*.cmd kmod/*.ko kmod/*.mod kmod/*.mod.c \
		kmod/modules.order .*.cmd Module.symvers modules.order
	-$(MAKE) -C daemon clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C tests/tools clean
	-$(MAKE) -C tests/workload clean
	rm -rf build test-logs
