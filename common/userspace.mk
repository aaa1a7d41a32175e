# SPDX-License-Identifier: GPL-2.0
#
# What daemon/Makefile and tools/Makefile share: where things install,
# the compiler flags, the package's version, the JSON and Prometheus
# writers and the key file reader of this directory, and the install
# steps of systemd units and man pages.  Included from either directory
# (paths are relative to it).

PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 \
	  -Wno-format-nonliteral -I../include -I../common -D_GNU_SOURCE -pthread

# The package's version, from dkms.conf: one number for module and tools.
FARSWAP_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' ../dkms.conf)
CFLAGS += -DFARSWAP_VERSION='"$(FARSWAP_VERSION)"'

# The JSON and Prometheus writers and the key file reader, built in the
# including directory as its own objects.
COMMON_SRCS = json.c metrics.c keyfile.c
vpath %.c ../common

# What keyfile.c links: base64 from libcrypto (libssl-dev), the key's
# CRC-32 from zlib (zlib1g-dev).
PKG_CONFIG ?= pkg-config
LDLIBS_CRYPTO := $(shell $(PKG_CONFIG) --libs libcrypto 2>/dev/null || echo -lcrypto)
CFLAGS_CRYPTO := $(shell $(PKG_CONFIG) --cflags libcrypto 2>/dev/null)
LDLIBS_ZLIB := $(shell $(PKG_CONFIG) --libs zlib 2>/dev/null || echo -lz)
CFLAGS_ZLIB := $(shell $(PKG_CONFIG) --cflags zlib 2>/dev/null)
LDLIBS_KEYFILE = $(LDLIBS_CRYPTO) $(LDLIBS_ZLIB)
keyfile.o: CFLAGS += $(CFLAGS_CRYPTO) $(CFLAGS_ZLIB)

# $(call install_units,UNITS): each unit with @SBINDIR@ filled in.
install_units = for u in $(1); do \
		sed 's|@SBINDIR@|$(SBINDIR)|g' $$u > $(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
# $(call install_mans,PAGES) and uninstall_mans: ../docs/man/PAGE, to
# the section its suffix names.
install_mans = for m in $(1); do \
		install -m 0644 ../docs/man/$$m \
			$(DESTDIR)$(MANDIR)/man$${m\#\#*.}/$$m || exit 1; \
	done
uninstall_mans = for m in $(1); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${m\#\#*.}/$$m; \
	done
