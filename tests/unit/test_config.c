// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd configuration: sizes, percentages, durations, listen
 * addresses, the config file, flags over the file, and resolving sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "config.h"
#include "log.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "256M", 256 * MiB },
		{ "8G", 8 * GiB }, { "8g", 8 * GiB }, { "2MiB", 2 * MiB },
		{ "2MB", 2 * MiB }, { "1T", 1ull << 40 }, { "3K", 3072 },
		{ " 64M ", 64 * MiB }, { "100B", 100 },
		{ "16777215T", 16777215ull << 40 },
	};
	static const char *const bad[] = {
		"", "M", "-1", "1.5G", "8X", "8GG", "8 G B", "0x10", "G8",
		"16777216T", "18446744073709551616", "1Gi", "+5",
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		v = 1;
		assert_int_equal(fsd_parse_size(good[i].s, &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		assert_int_not_equal(fsd_parse_size(bad[i], &v), 0);
		assert_int_equal(v, 12345);	/* untouched on error */
	}
	assert_int_not_equal(fsd_parse_size(NULL, &v), 0);
}

static void test_parse_amount(void **state)
{
	struct fsd_amount a;

	(void)state;
	assert_int_equal(fsd_parse_amount("50%", &a), 0);
	assert_int_equal(a.pct, 50);
	assert_int_equal(fsd_amount_resolve(&a, 1000), 500);
	assert_int_equal(fsd_parse_amount("100%", &a), 0);
	assert_int_equal(fsd_amount_resolve(&a, 977), 977);
	assert_int_equal(fsd_parse_amount("1%", &a), 0);
	assert_int_equal(fsd_amount_resolve(&a, 24 * GiB),
			 24 * GiB / 100);
	assert_int_equal(fsd_parse_amount("8G", &a), 0);
	assert_int_equal(a.pct, 0);
	assert_int_equal(fsd_amount_resolve(&a, 1), 8 * GiB);
	assert_int_not_equal(fsd_parse_amount("0%", &a), 0);
	assert_int_not_equal(fsd_parse_amount("101%", &a), 0);
	assert_int_not_equal(fsd_parse_amount("50%%", &a), 0);
	assert_int_not_equal(fsd_parse_amount("%", &a), 0);
	assert_int_not_equal(fsd_parse_amount("5.5%", &a), 0);
	assert_int_not_equal(fsd_parse_amount("50% x", &a), 0);
	/* Large bases must not overflow. */
	assert_int_equal(fsd_parse_amount("99%", &a), 0);
	assert_int_equal(fsd_amount_resolve(&a, UINT64_MAX / 2),
			 (UINT64_MAX / 2) / 100 * 99 +
				 (UINT64_MAX / 2) % 100 * 99 / 100);
}

static void test_parse_duration(void **state)
{
	uint32_t ms;

	(void)state;
	assert_int_equal(fsd_parse_duration_ms("1s", &ms), 0);
	assert_int_equal(ms, 1000);
	assert_int_equal(fsd_parse_duration_ms("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(fsd_parse_duration_ms("2m", &ms), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(fsd_parse_duration_ms("3", &ms), 0);
	assert_int_equal(ms, 3000);
	assert_int_equal(fsd_parse_duration_ms("86400s", &ms), 0);
	assert_int_not_equal(fsd_parse_duration_ms("86401s", &ms), 0);
	assert_int_not_equal(fsd_parse_duration_ms("1h", &ms), 0);
	assert_int_not_equal(fsd_parse_duration_ms("-1s", &ms), 0);
	assert_int_not_equal(fsd_parse_duration_ms("s", &ms), 0);
	assert_int_not_equal(fsd_parse_duration_ms("1.5s", &ms), 0);
}

static void test_parse_percent100(void **state)
{
	unsigned int p;

	(void)state;
	assert_int_equal(fsd_parse_percent100("12.5", &p), 0);
	assert_int_equal(p, 1250);
	assert_int_equal(fsd_parse_percent100("0.07%", &p), 0);
	assert_int_equal(p, 7);
	assert_int_equal(fsd_parse_percent100("100", &p), 0);
	assert_int_equal(p, 10000);
	assert_int_not_equal(fsd_parse_percent100("100.01", &p), 0);
	assert_int_not_equal(fsd_parse_percent100("1.", &p), 0);
	assert_int_not_equal(fsd_parse_percent100("abc", &p), 0);
}

static void test_parse_listen(void **state)
{
	char addr[FSD_ADDR_LEN];
	uint16_t port;

	(void)state;
	port = 1;
	assert_int_equal(fsd_parse_listen("10.0.0.2", addr, sizeof(addr),
					  &port), 0);
	assert_string_equal(addr, "10.0.0.2");
	assert_int_equal(port, 1);
	assert_int_equal(fsd_parse_listen("10.0.0.2:9000", addr, sizeof(addr),
					  &port), 0);
	assert_string_equal(addr, "10.0.0.2");
	assert_int_equal(port, 9000);
	strcpy(addr, "keep");
	assert_int_equal(fsd_parse_listen(":7000", addr, sizeof(addr), &port),
			 0);
	assert_string_equal(addr, "keep");
	assert_int_equal(port, 7000);
	assert_int_equal(fsd_parse_listen("[fe80::1]:7471", addr, sizeof(addr),
					  &port), 0);
	assert_string_equal(addr, "fe80::1");
	assert_int_equal(fsd_parse_listen("::", addr, sizeof(addr), &port), 0);
	assert_string_equal(addr, "::");
	assert_int_not_equal(fsd_parse_listen("a:0", addr, sizeof(addr), &port),
			     0);
	assert_int_not_equal(fsd_parse_listen("a:65536", addr, sizeof(addr),
					      &port), 0);
	assert_int_not_equal(fsd_parse_listen("a:x", addr, sizeof(addr), &port),
			     0);
	assert_int_not_equal(fsd_parse_listen("", addr, sizeof(addr), &port),
			     0);
	assert_int_not_equal(fsd_parse_listen("[::1", addr, sizeof(addr),
					      &port), 0);
	assert_int_not_equal(fsd_parse_listen("0123456789", addr, 8, &port), 0);
}

static void test_config_set(void **state)
{
	struct fsd_config c;
	char err[256];

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(c.port, FARSWAP_DEFAULT_PORT);
	assert_int_equal(c.slab_size, FARSWAP_SLAB_SIZE_DEFAULT);
	assert_int_equal(fsd_config_set(&c, "slab_size", "4M", err,
					sizeof(err)), 0);
	assert_int_equal(c.slab_size, 4 * MiB);
	assert_int_equal(fsd_config_set(&c, "Slab-Size", "2M", err,
					sizeof(err)), 0);
	assert_int_equal(c.slab_size, 2 * MiB);
	/* Not a power of two, too small, too big. */
	assert_int_not_equal(fsd_config_set(&c, "slab-size", "3M", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "power of two"));
	assert_int_not_equal(fsd_config_set(&c, "slab-size", "1M", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "slab-size", "2T", err,
					    sizeof(err)), 0);
	assert_int_equal(c.slab_size, 2 * MiB);
	assert_int_not_equal(fsd_config_set(&c, "donate", "0", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "donate", "lots", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "no-such-key", "1", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "unknown key"));
	assert_int_not_equal(fsd_config_set(&c, "pressure-interval", "5ms",
					    err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "reclaim-deadline", "0", err,
					    sizeof(err)), 0);
	/* keepalive: at least 100 ms, and it cannot be turned off. */
	assert_int_equal(c.keepalive_ms, 15000);
	assert_int_not_equal(fsd_config_set(&c, "keepalive", "0", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot be turned off"));
	assert_int_equal(c.keepalive_ms, 15000);
	assert_int_equal(fsd_config_set(&c, "keepalive", "2s", err,
					sizeof(err)), 0);
	assert_int_equal(c.keepalive_ms, 2000);
	assert_int_not_equal(fsd_config_set(&c, "keepalive", "50ms", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "keepalive '50ms'"));
	assert_int_not_equal(fsd_config_set(&c, "keepalive", "soon", err,
					    sizeof(err)), 0);
	assert_int_equal(c.keepalive_ms, 2000);
	assert_int_not_equal(fsd_config_set(&c, "log-level", "loud", err,
					    sizeof(err)), 0);
	assert_int_equal(fsd_config_set(&c, "log-level", "debug", err,
					sizeof(err)), 0);
	assert_int_equal(c.log_level, FSD_LOG_DEBUG);
	assert_int_equal(fsd_config_set(&c, "stats-socket", "none", err,
					sizeof(err)), 0);
	assert_string_equal(c.stats_socket, "");
	assert_int_not_equal(fsd_config_set(&c, "donor-id",
					    "seventeen-chars-x", err,
					    sizeof(err)), 0);
	assert_int_equal(fsd_config_set(&c, "donor-id", "rack1-node7", err,
					sizeof(err)), 0);
	assert_memory_equal(c.donor_id, "rack1-node7\0\0\0\0\0", 16);
	assert_int_equal(fsd_config_set(&c, "hugepages", "never", err,
					sizeof(err)), 0);
	assert_int_equal(c.hugepages, FSD_HUGE_NEVER);
	assert_int_not_equal(fsd_config_set(&c, "hugepages", "maybe", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "max-hosts", "0", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "listen", NULL, err,
					    sizeof(err)), 0);
}

/* The limits on who may connect and how much one host may take. */
static void test_limit_keys(void **state)
{
	struct fsd_config c;
	struct fsd_limits lim;
	char err[256];

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(c.allowed_hosts.nr, 0);
	/*
	 * A fair share by default (the pool over the hosts present, a
	 * host's own session's business: no fixed count), auto's grant
	 * rate; a share when set: 50% of 10 slabs is 5.
	 */
	assert_true(c.max_slabs_fair);
	assert_int_equal(c.max_slabs_per_host, 0);
	assert_int_equal(c.max_slabs_pct, 0);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 10), 0);
	c.max_slabs_pct = 50;
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 10), 5);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 3), 1);	/* rounded down */
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 1), 1);	/* never 0 */
	c.max_slabs_pct = 0;
	assert_int_equal(c.max_sessions_per_address, 4);
	assert_int_equal(c.max_unauth_per_address, 2);
	assert_int_equal(c.connect_rate, 10);
	assert_int_equal(c.connect_burst, 20);
	assert_int_equal(c.max_queue_depth, 1024);
	assert_int_equal(c.handshake_timeout_ms, 5000);
	assert_int_equal(c.auth_timeout_ms, 2000);
	assert_false(c.require_session_keys);
	assert_int_equal(c.alloc_rate, 0);
	assert_true(c.alloc_rate_auto);
	assert_int_equal(c.revoke_after, 3);

	assert_int_equal(fsd_config_set(&c, "allowed_hosts",
					"10.0.0.0/24, fd00::/8 name:host-a",
					err, sizeof(err)), 0);
	assert_int_equal(c.allowed_hosts.nr, 3);
	assert_int_equal(c.allowed_hosts.nr_net, 2);
	assert_int_equal(c.allowed_hosts.nr_id, 1);
	/* A bad list is refused and the old one kept. */
	assert_int_not_equal(fsd_config_set(&c, "allowed-hosts", "10.0.0.0/99",
					    err, sizeof(err)), 0);
	assert_non_null(strstr(err, "allowed-hosts: '10.0.0.0/99'"));
	assert_int_equal(c.allowed_hosts.nr, 3);

	/* A count, or a size turned into whole slabs. */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "12", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 64), 12);
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "4G", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 64), 4);
	assert_int_equal(fsd_slab_cap(&c, 16ull << 20, 64), 256);
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "5G", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_slab_cap(&c, 2ull << 30, 64), 2);	/* rounded down */
	assert_int_not_equal(fsd_config_set(&c, "max-slabs-per-host", "lots",
					    err, sizeof(err)), 0);
	assert_non_null(strstr(err, "max-slabs-per-host 'lots'"));
	assert_int_not_equal(fsd_config_set(&c, "max-slabs-per-host", "0G",
					    err, sizeof(err)), 0);
	/* A share of the pool: 1% to 100%, at least one slab. */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "25%", err,
					sizeof(err)), 0);
	assert_int_equal(c.max_slabs_pct, 25);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 64), 16);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 2), 1);
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "100%", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 64), 64);
	assert_int_not_equal(fsd_config_set(&c, "max-slabs-per-host", "0%",
					    err, sizeof(err)), 0);
	assert_non_null(strstr(err, "max-slabs-per-host '0%': want fair, a number of slabs, a size like 4G, or 1% to 100% of the pool"));
	assert_int_not_equal(fsd_config_set(&c, "max-slabs-per-host", "101%",
					    err, sizeof(err)), 0);
	assert_int_equal(c.max_slabs_pct, 100);	/* the refused values left it */
	/* 0: no cap, which a count, a size or a share each replace. */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "0", err,
					sizeof(err)), 0);
	assert_int_equal(c.max_slabs_pct, 0);
	assert_false(c.max_slabs_fair);
	assert_int_equal(fsd_slab_cap(&c, 1ull << 30, 64), 0);
	/* fair replaces them all, and a count replaces fair. */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "25%", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", " fair", err,
					sizeof(err)), 0);
	assert_true(c.max_slabs_fair);
	assert_int_equal(c.max_slabs_pct, 0);
	assert_int_equal(fsd_config_resolve(&c, 8ull << 30, 4ull << 30, &lim,
					    err, sizeof(err)), 0);
	assert_true(lim.max_slabs_fair);
	assert_int_equal(lim.max_slabs_per_host, 0);
	assert_int_not_equal(fsd_config_set(&c, "max-slabs-per-host", "fairer",
					    err, sizeof(err)), 0);
	assert_true(c.max_slabs_fair);	/* the refused value left it */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "0", err,
					sizeof(err)), 0);
	assert_false(c.max_slabs_fair);
	/* Less than one slab: refused once the slab size is known. */
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "512M", err,
					sizeof(err)), 0);
	assert_int_not_equal(fsd_config_resolve(&c, 8ull << 30, 4ull << 30,
						&lim, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "less than one slab"));
	assert_int_equal(fsd_config_set(&c, "max-slabs-per-host", "3", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_config_resolve(&c, 8ull << 30, 4ull << 30, &lim,
					    err, sizeof(err)), 0);
	assert_int_equal(lim.max_slabs_per_host, 3);

	assert_int_equal(fsd_config_set(&c, "max-sessions-per-address", "0",
					err, sizeof(err)), 0);
	assert_int_equal(c.max_sessions_per_address, 0);
	assert_int_not_equal(fsd_config_set(&c, "max-sessions-per-address",
					    "-1", err, sizeof(err)), 0);

	assert_int_equal(fsd_config_set(&c, "max-queue-depth", "256", err,
					sizeof(err)), 0);
	assert_int_equal(c.max_queue_depth, 256);
	assert_int_not_equal(fsd_config_set(&c, "max-queue-depth", "0", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "max-queue-depth '0'"));
	assert_int_not_equal(fsd_config_set(&c, "max-queue-depth", "70000",
					    err, sizeof(err)), 0);

	assert_int_equal(fsd_config_set(&c, "handshake-timeout", "2s", err,
					sizeof(err)), 0);
	assert_int_equal(c.handshake_timeout_ms, 2000);
	assert_int_not_equal(fsd_config_set(&c, "handshake-timeout", "0", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "handshake-timeout '0'"));

	assert_int_equal(fsd_config_set(&c, "alloc-rate", "5", err,
					sizeof(err)), 0);
	assert_int_equal(c.alloc_rate, 5);
	assert_int_equal(c.alloc_burst, 5);
	assert_int_equal(fsd_config_set(&c, "alloc-rate", "2/8", err,
					sizeof(err)), 0);
	assert_int_equal(c.alloc_rate, 2);
	assert_int_equal(c.alloc_burst, 8);
	assert_false(c.alloc_rate_auto);
	assert_int_equal(fsd_config_set(&c, "alloc-rate", "off", err,
					sizeof(err)), 0);
	assert_int_equal(c.alloc_rate, 0);
	assert_false(c.alloc_rate_auto);
	/* auto: 4 GiB of slabs a second, 4 s of them saved up, >= 4/16. */
	assert_int_equal(fsd_config_set(&c, "alloc-rate", "auto", err,
					sizeof(err)), 0);
	assert_true(c.alloc_rate_auto);
	{
		uint32_t rate, burst;

		fsd_alloc_rate(&c, 1ull << 30, &rate, &burst);
		assert_int_equal(rate, 4);
		assert_int_equal(burst, 16);
		fsd_alloc_rate(&c, 64ull << 20, &rate, &burst);
		assert_int_equal(rate, 64);
		assert_int_equal(burst, 256);
		fsd_alloc_rate(&c, 2ull << 20, &rate, &burst);
		assert_int_equal(rate, 2048);
		fsd_alloc_rate(&c, 1ull << 40, &rate, &burst);
		assert_int_equal(rate, 4);
		assert_int_equal(burst, 16);
		/* A rate of its own is taken as it is. */
		assert_int_equal(fsd_config_set(&c, "alloc-rate", "3/5", err,
						sizeof(err)), 0);
		fsd_alloc_rate(&c, 2ull << 20, &rate, &burst);
		assert_int_equal(rate, 3);
		assert_int_equal(burst, 5);
		assert_int_equal(fsd_config_set(&c, "alloc-rate", "0", err,
						sizeof(err)), 0);
		fsd_alloc_rate(&c, 2ull << 20, &rate, &burst);
		assert_int_equal(rate, 0);
	}
	assert_int_not_equal(fsd_config_set(&c, "alloc-rate", "2/0", err,
					    sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "alloc-rate", "fast", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "alloc-rate 'fast'"));

	/* Pending connects per address: 0 (no limit) to 65536. */
	assert_int_equal(fsd_config_set(&c, "max-unauthenticated-per-address",
					"1", err, sizeof(err)), 0);
	assert_int_equal(c.max_unauth_per_address, 1);
	assert_int_equal(fsd_config_set(&c, "max_unauthenticated_per_address",
					"0", err, sizeof(err)), 0);
	assert_int_equal(c.max_unauth_per_address, 0);
	assert_int_not_equal(fsd_config_set(&c,
					    "max-unauthenticated-per-address",
					    "65537", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "max-unauthenticated-per-address '65537': want 0 (no limit) to 65536"));
	assert_int_not_equal(fsd_config_set(&c,
					    "max-unauthenticated-per-address",
					    "-1", err, sizeof(err)), 0);
	assert_int_equal(c.max_unauth_per_address, 0);

	/* Connects per second per address: RATE[/BURST], 0 or off. */
	assert_int_equal(fsd_config_set(&c, "connect-rate", "5", err,
					sizeof(err)), 0);
	assert_int_equal(c.connect_rate, 5);
	assert_int_equal(c.connect_burst, 5);
	assert_int_equal(fsd_config_set(&c, "connect-rate", "2/30", err,
					sizeof(err)), 0);
	assert_int_equal(c.connect_rate, 2);
	assert_int_equal(c.connect_burst, 30);
	assert_int_not_equal(fsd_config_set(&c, "connect-rate", "auto", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "connect-rate 'auto': want RATE or RATE/BURST"));
	assert_int_not_equal(fsd_config_set(&c, "connect-rate", "1/0", err,
					    sizeof(err)), 0);
	assert_int_equal(c.connect_rate, 2);	/* the refused ones left it */
	assert_int_equal(fsd_config_set(&c, "connect-rate", "off", err,
					sizeof(err)), 0);
	assert_int_equal(c.connect_rate, 0);

	assert_int_equal(fsd_config_set(&c, "revoke-after", "0", err,
					sizeof(err)), 0);
	assert_int_equal(c.revoke_after, 0);
	assert_int_not_equal(fsd_config_set(&c, "revoke-after", "2x", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "revoke-after '2x'"));

	/* Every limit is a flag too, and --check-config prints it. */
	{
		char *argv[] = { "farswapd", "--allowed-hosts", "10.1.0.0/16",
				 "--max-slabs-per-host", "8G",
				 "--max-sessions-per-address", "2",
				 "--max-queue-depth", "64",
				 "--handshake-timeout", "3s",
				 "--alloc-rate", "4/6", "--revoke-after", "5",
				 "--max-unauthenticated-per-address", "3",
				 "--connect-rate", "7/9", NULL };
		struct fsd_args a;
		char text[2048];

		assert_int_equal(fsd_parse_args((int)(sizeof(argv) / sizeof(argv[0])) - 1,
						 argv, &a, err, sizeof(err)),
				 0);
		fsd_config_defaults(&c);
		assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)),
				 0);
		fsd_config_print(&c, text, sizeof(text));
		assert_non_null(strstr(text, "\nallowed-hosts 10.1.0.0/16\n"));
		assert_non_null(strstr(text, "\nmax-slabs-per-host 8G\n"));
		assert_non_null(strstr(text, "\nmax-sessions-per-address 2\n"));
		assert_non_null(strstr(text, "\nmax-queue-depth 64\n"));
		assert_non_null(strstr(text, "\nhandshake-timeout 3000ms\n"));
		assert_non_null(strstr(text, "\nalloc-rate 4/6\n"));
		assert_non_null(strstr(text, "\nrevoke-after 5\n"));
		assert_non_null(strstr(text, "\nmax-unauthenticated-per-address 3\n"));
		assert_non_null(strstr(text, "\nconnect-rate 7/9\n"));
		/* The defaults, as --check-config shows them. */
		fsd_config_defaults(&c);
		fsd_config_print(&c, text, sizeof(text));
		assert_non_null(strstr(text, "\nmax-slabs-per-host fair\n"));
		assert_non_null(strstr(text, "\nalloc-rate auto\n"));
		assert_non_null(strstr(text, "\nconnect-rate 10/20\n"));
		assert_non_null(strstr(text, "\nmax-unauthenticated 16\nmax-unauthenticated-per-address 2\nconnect-rate 10/20\n"));
	}
}

/* max-unauthenticated: 1 to 65536, key and flag, in --check-config. */
static void test_max_unauthenticated(void **state)
{
	char *argv[] = { "farswapd", "--max-unauthenticated", "3", NULL };
	char err[256], text[4096];
	struct fsd_config c;
	struct fsd_args a;

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(c.max_unauthenticated, 16);
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nmax-hosts 256\nmax-unauthenticated 16\n"));
	err[0] = '\0';
	assert_int_not_equal(fsd_config_set(&c, "max-unauthenticated", "0", err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "max-unauthenticated '0': want 1 to 65536"));
	assert_int_not_equal(fsd_config_set(&c, "max_unauthenticated", "65537",
					    err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "max-unauthenticated", "2x",
					    err, sizeof(err)), 0);
	assert_int_equal(c.max_unauthenticated, 16);
	assert_int_equal(fsd_config_parse(&c, "max-unauthenticated = 65536\n",
					  "f.conf", err, sizeof(err)), 0);
	assert_int_equal(c.max_unauthenticated, 65536);
	assert_int_equal(fsd_parse_args(3, argv, &a, err, sizeof(err)), 0);
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)), 0);
	assert_int_equal(c.max_unauthenticated, 3);
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nmax-unauthenticated 3\n"));
}

/* Bad values in a file name the file and the line. */
static void test_limit_errors_name_line(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "max-hosts 4\nallowed-hosts 10.0.0.0/24 bogus\n",
		  "f.conf:2: allowed-hosts: 'bogus'" },
		{ "\n\n\nmax-queue-depth = 0\n", "f.conf:4: max-queue-depth '0'" },
		{ "alloc-rate 1/x\n", "f.conf:1: alloc-rate '1/x'" },
		{ "# c\nrevoke-after many\n", "f.conf:2: revoke-after 'many'" },
		{ "handshake-timeout 10ms\n", "f.conf:1: handshake-timeout '10ms'" },
		{ "keepalive 0\n", "f.conf:1: keepalive '0'" },
		{ "\nmax-unauthenticated 0\n",
		  "f.conf:2: max-unauthenticated '0': want 1 to 65536" },
		{ "max-sessions-per-address x\n",
		  "f.conf:1: max-sessions-per-address: bad value 'x'" },
		{ "max-slabs-per-host 4Q\n", "f.conf:1: max-slabs-per-host '4Q'" },
	};
	struct fsd_config c;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fsd_config_defaults(&c);
		err[0] = '\0';
		assert_int_not_equal(fsd_config_parse(&c, cases[i].text,
						      "f.conf", err,
						      sizeof(err)), 0);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("'%s' says '%s', want '%s...'", cases[i].text,
				 err, cases[i].want);
	}
}

static void test_config_file(void **state)
{
	static const char text[] =
		"# farswapd test config\n"
		"\n"
		"listen = 192.168.7.1:7000   # trailing comment\n"
		"donate 256M\n"
		"  slab_size=4M\n"
		"headroom \"5%\"\n"
		"hysteresis = 64M\n"
		"pressure-interval 500ms\n"
		"reclaim_deadline = 3s\n"
		"keepalive 20s\n"
		"psi-threshold 12.5\n";
	struct fsd_config c;
	char err[256];

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_parse(&c, text, "t.conf", err,
					  sizeof(err)), 0);
	assert_string_equal(c.listen_addr, "192.168.7.1");
	assert_int_equal(c.port, 7000);
	assert_int_equal(c.donate.bytes, 256 * MiB);
	assert_int_equal(c.donate.pct, 0);
	assert_int_equal(c.slab_size, 4 * MiB);
	assert_int_equal(c.headroom.pct, 5);
	assert_int_equal(c.hysteresis.bytes, 64 * MiB);
	assert_int_equal(c.pressure_interval_ms, 500);
	assert_int_equal(c.reclaim_deadline_ms, 3000);
	assert_int_equal(c.keepalive_ms, 20000);
	assert_int_equal(c.psi_threshold, 1250);

	/* Errors name the file and line. */
	assert_int_not_equal(fsd_config_parse(&c, "donate 1G\nbogus 1\n",
					      "x.conf", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "x.conf:2"));
	assert_int_not_equal(fsd_config_parse(&c, "donate\n", "x.conf", err,
					      sizeof(err)), 0);
	assert_non_null(strstr(err, "missing value"));
	assert_int_not_equal(fsd_config_parse(&c, "slab-size = 5M\n", "x.conf",
					      err, sizeof(err)), 0);
	assert_non_null(strstr(err, "x.conf:1"));
}

static void test_config_load_missing(void **state)
{
	struct fsd_config c;
	char err[256];

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_load(&c, "/nonexistent/farswapd.conf",
					 false, err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_load(&c, "/nonexistent/farswapd.conf",
					     true, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent/farswapd.conf"));
}

static void test_flags_override_file(void **state)
{
	char *argv[] = { "farswapd", "--donate", "64M", "-s", "4M", "-v",
			 "-c", "/tmp/fsd-test.conf", "--log-level", "warning",
			 NULL };
	char path[] = "/tmp/fsd-unit-XXXXXX";
	struct fsd_config c;
	struct fsd_args a;
	char err[256];
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("donate 1G\nslab-size 8M\nheadroom 7%\n", f);
	fclose(f);
	argv[7] = path;
	assert_int_equal(fsd_parse_args(10, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_RUN);
	assert_string_equal(a.config_path, path);
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_load(&c, a.config_path, true, err,
					 sizeof(err)), 0);
	assert_int_equal(c.donate.bytes, 1 * GiB);
	assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)), 0);
	assert_int_equal(c.donate.bytes, 64 * MiB);	/* flag wins */
	assert_int_equal(c.slab_size, 4 * MiB);		/* flag wins */
	assert_int_equal(c.headroom.pct, 7);		/* file kept */
	/* --log-level warning, then -v once: notice. */
	assert_int_equal(c.log_level, FSD_LOG_NOTICE);
	unlink(path);
}

static void test_args(void **state)
{
	char *help[] = { "farswapd", "--help", NULL };
	char *stats[] = { "farswapd", "--stats", "--stats-socket", "/x", NULL };
	char *bad[] = { "farswapd", "--donate", NULL };
	char *unknown[] = { "farswapd", "--frobnicate", NULL };
	char *extra[] = { "farswapd", "stray", NULL };
	char *ka[] = { "farswapd", "--keepalive", "3s", NULL };
	struct fsd_config c;
	struct fsd_args a;
	char err[256], text[1024];

	(void)state;
	assert_int_equal(fsd_parse_args(2, help, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_HELP);
	assert_int_equal(fsd_parse_args(4, stats, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_STATS);
	assert_int_equal(a.nr, 1);
	assert_string_equal(a.kv[0].key, "stats-socket");
	assert_int_not_equal(fsd_parse_args(2, bad, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_not_equal(fsd_parse_args(2, unknown, &a, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "--frobnicate"));
	assert_int_not_equal(fsd_parse_args(2, extra, &a, err, sizeof(err)), 0);
	/* --keepalive is the keepalive key, and --check-config prints it. */
	assert_int_equal(fsd_parse_args(3, ka, &a, err, sizeof(err)), 0);
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)), 0);
	assert_int_equal(c.keepalive_ms, 3000);
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nkeepalive 3000ms\n"));
}

/* --gen-key [FILE]: the one operand farswapd takes, and only with it. */
static void test_args_gen_key(void **state)
{
	char *to_file[] = { "farswapd", "--gen-key", "/etc/farswap/key", NULL };
	char *to_stdout[] = { "farswapd", "--gen-key", NULL };
	char *two[] = { "farswapd", "--gen-key", "a", "b", NULL };
	char *not_gen[] = { "farswapd", "--stats", "a", NULL };
	struct fsd_args a;
	char err[256];

	(void)state;
	assert_int_equal(fsd_parse_args(3, to_file, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_GEN_KEY);
	assert_string_equal(a.gen_key_path, "/etc/farswap/key");
	assert_int_equal(fsd_parse_args(2, to_stdout, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_GEN_KEY);
	assert_null(a.gen_key_path);
	assert_int_not_equal(fsd_parse_args(4, two, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "unexpected argument 'b'"));
	assert_int_not_equal(fsd_parse_args(3, not_gen, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "unexpected argument 'a'"));
}

/* metrics-file: an absolute path or none; --metrics-file and --json. */
static void test_metrics_file(void **state)
{
	char *argv[] = { "farswapd", "--stats", "--json", "--metrics-file",
			 "/var/lib/m.prom", NULL };
	struct fsd_config c;
	struct fsd_args a;
	char err[256], text[1024];

	(void)state;
	fsd_config_defaults(&c);
	assert_string_equal(c.metrics_file, "");
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nmetrics-file none\n"));
	assert_int_equal(fsd_config_parse(&c, "metrics_file = /run/x.prom\n",
					  "t", err, sizeof(err)), 0);
	assert_string_equal(c.metrics_file, "/run/x.prom");
	assert_int_equal(fsd_config_set(&c, "metrics-file", "none", err,
					sizeof(err)), 0);
	assert_string_equal(c.metrics_file, "");
	assert_int_not_equal(fsd_config_set(&c, "metrics-file", "rel.prom",
					    err, sizeof(err)), 0);
	assert_non_null(strstr(err, "absolute"));
	assert_int_equal(fsd_parse_args(5, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(a.action, FSD_ACT_STATS);
	assert_true(a.json);
	assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)), 0);
	assert_string_equal(c.metrics_file, "/var/lib/m.prom");
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nmetrics-file /var/lib/m.prom\n"));
}

static void test_resolve(void **state)
{
	struct fsd_config c;
	struct fsd_limits l;
	char err[256];

	(void)state;
	fsd_config_defaults(&c);
	c.slab_size = 4 * MiB;
	c.donate.pct = 0;
	c.donate.bytes = 66 * MiB;	/* rounds down to 16 slabs */
	assert_int_equal(fsd_config_resolve(&c, 1 * GiB, 512 * MiB, &l, err,
					    sizeof(err)), 0);
	assert_int_equal(l.nr_slabs, 16);
	assert_int_equal(l.donate, 64 * MiB);
	assert_int_equal(l.headroom, 1 * GiB / 100 * 10 +
					     1 * GiB % 100 * 10 / 100);
	/* 50% of MemAvailable. */
	c.donate.bytes = 0;
	c.donate.pct = 50;
	assert_int_equal(fsd_config_resolve(&c, 1 * GiB, 512 * MiB, &l, err,
					    sizeof(err)), 0);
	assert_int_equal(l.nr_slabs, 64);
	/* Less than a slab. */
	c.donate.pct = 0;
	c.donate.bytes = 3 * MiB;
	assert_int_not_equal(fsd_config_resolve(&c, 1 * GiB, 512 * MiB, &l,
						err, sizeof(err)), 0);
	assert_non_null(strstr(err, "less than one slab"));
	/* Would eat into the headroom. */
	c.donate.bytes = 500 * MiB;
	assert_int_not_equal(fsd_config_resolve(&c, 1 * GiB, 512 * MiB, &l,
						err, sizeof(err)), 0);
	assert_non_null(strstr(err, "headroom"));
	/* More than there is. */
	c.donate.bytes = 8 * GiB;
	assert_int_not_equal(fsd_config_resolve(&c, 1 * GiB, 512 * MiB, &l,
						err, sizeof(err)), 0);
}

static void test_format_size(void **state)
{
	char b[32];

	(void)state;
	fsd_format_size(64 * MiB, b, sizeof(b));
	assert_string_equal(b, "64M");
	fsd_format_size(3 * GiB / 2, b, sizeof(b));
	assert_string_equal(b, "1.5G");
	fsd_format_size(1000, b, sizeof(b));
	assert_string_equal(b, "1000");
	fsd_format_size(1ull << 40, b, sizeof(b));
	assert_string_equal(b, "1T");
}

/* Every key the example config documents parses, with its example value. */
static void test_example_config(void **state)
{
	char text[16384], line[512], err[256];
	struct fsd_config c;
	size_t off = 0;
	unsigned int keys = 0;
	FILE *f = fopen("../../daemon/farswapd.conf.example", "r");

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *l = line;

		/* "#key = value" lines are settings; "# text" is prose. */
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z') {
			l = line + 1;
			keys++;
		} else if (line[0] == '#') {
			continue;
		}
		assert_true(off + strlen(l) < sizeof(text));
		memcpy(text + off, l, strlen(l));
		off += strlen(l);
	}
	text[off] = '\0';
	fclose(f);
	assert_true(keys >= 13);
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_parse(&c, text, "example", err, sizeof(err)),
			 0);
	/* The example shows the defaults, except the donor id. */
	assert_int_equal(c.slab_size, FARSWAP_SLAB_SIZE_DEFAULT);
	assert_int_equal(c.donate.pct, 50);
	assert_int_equal(c.reclaim_deadline_ms, 10000);
	assert_int_equal(c.keepalive_ms, 15000);
}

/* failure-domain: 1 to 31 printable characters without spaces. */
static void test_failure_domain(void **state)
{
	static const char *const bad[] = {
		"", "rack A", "rack\tA", "r\x7f", "r\x01", "caf\xc3\xa9",
		"12345678901234567890123456789012",
	};
	char *flag[] = { "farswapd", "--failure-domain", "rackB", NULL };
	char err[256], text[4096], out[FSD_DOMAIN_MAX + 1];
	struct fsd_config c;
	struct fsd_args a;
	size_t i;

	(void)state;
	fsd_config_defaults(&c);
	assert_string_equal(c.failure_domain, "");
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nfailure-domain (the donor id)\n"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(fsd_parse_domain(bad[i], out, sizeof(out)),
				 -EINVAL);
		assert_int_not_equal(fsd_config_set(&c, "failure-domain",
						    bad[i], err, sizeof(err)),
				     0);
		assert_non_null(strstr(err, "failure-domain"));
		assert_non_null(strstr(err, "1 to 31 printable characters without spaces"));
		assert_string_equal(c.failure_domain, "");
	}
	assert_int_equal(fsd_parse_domain("1234567890123456789012345678901",
					  out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 31);
	/* Too small an output buffer is refused, not overrun. */
	assert_int_equal(fsd_parse_domain("rackA", out, 8), -EINVAL);
	assert_int_equal(fsd_config_set(&c, "failure-domain", "rack-A/row:3",
					err, sizeof(err)), 0);
	assert_string_equal(c.failure_domain, "rack-A/row:3");
	fsd_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nfailure-domain rack-A/row:3\n"));
	/* In a file, and as a flag. */
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_parse(&c, "failure-domain = rackA\n", "t",
					  err, sizeof(err)), 0);
	assert_string_equal(c.failure_domain, "rackA");
	assert_int_equal(fsd_parse_args(3, flag, &a, err, sizeof(err)), 0);
	assert_int_equal(fsd_config_apply_args(&c, &a, err, sizeof(err)), 0);
	assert_string_equal(c.failure_domain, "rackB");
}

/* Print one key's value as --check-config does: the text after "KEY ". */
static void key_value(const struct fsd_config *c, const struct fsd_key *k,
		      char *out, size_t len)
{
	char text[8192], want[64];
	const char *p, *e;

	fsd_config_print(c, text, sizeof(text));
	snprintf(want, sizeof(want), "\n%s ", k->name);
	if (!strncmp(text, want + 1, strlen(want + 1)))
		p = text + strlen(want + 1);
	else
		p = strstr(text, want) ? strstr(text, want) + strlen(want) :
					 NULL;
	assert_non_null(p);
	e = strchr(p, '\n');
	assert_non_null(e);
	snprintf(out, len, "%.*s", (int)(e - p), p);
}

/*
 * Every key of the table parses the value --check-config prints for its
 * default, and that leaves the config as it was.
 */
static void test_key_table_defaults(void **state)
{
	struct fsd_config def, c;
	char err[256], val[4096], before[8192], after[8192];
	size_t i;

	(void)state;
	fsd_config_defaults(&def);
	fsd_config_print(&def, before, sizeof(before));
	assert_true(fsd_nr_keys >= 27);
	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];

		assert_non_null(k->parse);
		assert_non_null(k->help);
		assert_ptr_equal(fsd_config_key(k->name), k);
		if (!k->print)
			continue;	/* donor-id: machine-id, not a value */
		/* Unset, it stands for the donor id: not a value either. */
		if (!strcmp(k->name, "failure-domain"))
			continue;
		key_value(&def, k, val, sizeof(val));
		c = def;
		if (fsd_config_set(&c, k->name, val, err, sizeof(err)))
			fail_msg("%s: its default '%s' is refused: %s", k->name,
				 val, err);
		fsd_config_print(&c, after, sizeof(after));
		assert_string_equal(before, after);
		if (!fsd_config_key_same(k, &def, &c))
			fail_msg("%s '%s' changes the default", k->name, val);
	}
}

/* What --check-config prints, fed back as a config file, prints the same. */
static void test_key_table_round_trip(void **state)
{
	static const char text[] =
		"listen 10.9.8.7:7000\ndonate 3G\nslab-size 16M\n"
		"headroom 512M\nhysteresis 2%\npressure-interval 250ms\n"
		"reclaim-deadline 2m\nkeepalive 100ms\npsi-threshold 0.07\n"
		"hugepages yes\nmax-hosts 65536\nmax-unauthenticated 1\n"
		"max-unauthenticated-per-address 0\nconnect-rate 1/50\n"
		"log-level notice\nstats-socket rel.sock\n"
		"allowed-hosts 10.0.0.0/8 fd00::1 name:a id:00112233445566778899aabbccddeeff\n"
		"max-slabs-per-host 40G\nmax-sessions-per-address 0\n"
		"max-queue-depth 65536\nhandshake-timeout 1s\nalloc-rate 3/9\n"
		"revoke-after 1000\nmetrics-file /run/m.prom\n"
		"donor-id node-1\nfailure-domain rack:7\nkey-file /etc/k\n"
		"host-keys NONE\nrequire-session-keys yes\n"
		"insecure-no-auth true\nauth-timeout 300ms\n";
	struct fsd_config c, again;
	char err[256], first[8192], second[8192];
	char *auth;

	(void)state;
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_parse(&c, text, "t", err, sizeof(err)), 0);
	fsd_config_print(&c, first, sizeof(first));
	/* The last line, how hosts authenticate, is not a key. */
	auth = strstr(first, "\nauth hmac-sha256\n");
	assert_non_null(auth);
	assert_string_equal(auth + strlen("\nauth hmac-sha256\n"), "");
	auth[1] = '\0';
	fsd_config_defaults(&again);
	if (fsd_config_parse(&again, first, "printed", err, sizeof(err)))
		fail_msg("the printed config does not parse: %s", err);
	fsd_config_print(&again, second, sizeof(second));
	auth = strstr(second, "\nauth ");
	assert_non_null(auth);
	auth[1] = '\0';
	assert_string_equal(first, second);
	/* The printer keeps its order: the table's. */
	assert_int_equal(strncmp(first, "listen 10.9.8.7:7000\n", 21), 0);
	assert_non_null(strstr(first, "\nhost-keys none\ndonor-key-file none\nrequire-session-keys yes\ninsecure-no-auth yes\n"));
	assert_non_null(strstr(first, "\nhandshake-timeout 1000ms\nauth-timeout 300ms\n"));
	/* A short buffer gets the first bytes, terminated. */
	fsd_config_print(&c, second, 10);
	assert_string_equal(second, "listen 10");
	/*
	 * An IPv6 address prints without its brackets, as it always has:
	 * that line does not read back as the same address.
	 */
	assert_int_equal(fsd_config_set(&c, "listen", "[fd00::7]:7000", err,
					sizeof(err)), 0);
	fsd_config_print(&c, first, sizeof(first));
	assert_int_equal(strncmp(first, "listen fd00::7:7000\n", 20), 0);
}

/* The limits in the table are the ones the setter enforces. */
static void test_key_table_ranges(void **state)
{
	struct fsd_config c;
	char err[256], val[64];
	size_t i;
	unsigned int ranged = 0;

	(void)state;
	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];
		char before[8192], after[8192];
		bool ms = strstr(k->arg ? k->arg : "", "DUR") != NULL;

		if (!k->min && !k->max)
			continue;
		ranged++;
		fsd_config_defaults(&c);
		fsd_config_print(&c, before, sizeof(before));
		if (k->min) {
			/* One below the least is refused, and changes nothing. */
			snprintf(val, sizeof(val), "%" PRIu64 "%s", k->min - 1,
				 ms ? "ms" : "");
			err[0] = '\0';
			if (!fsd_config_set(&c, k->name, val, err, sizeof(err)))
				fail_msg("%s takes %s", k->name, val);
			assert_non_null(strstr(err, k->name));
			assert_non_null(strstr(err, val));
			fsd_config_print(&c, after, sizeof(after));
			assert_string_equal(before, after);
			snprintf(val, sizeof(val), "%" PRIu64 "%s", k->min,
				 ms ? "ms" : "");
			if (fsd_config_set(&c, k->name, val, err, sizeof(err)))
				fail_msg("%s refuses %s: %s", k->name, val, err);
		}
		if (k->max && k->parse != fsd_config_key("psi-threshold")->parse &&
		    k->parse != fsd_config_key("donor-id")->parse) {
			snprintf(val, sizeof(val), "%" PRIu64, k->max);
			if (fsd_config_set(&c, k->name, val, err, sizeof(err)))
				fail_msg("%s refuses %s: %s", k->name, val, err);
			snprintf(val, sizeof(val), "%" PRIu64, k->max + 1);
			if (!fsd_config_set(&c, k->name, val, err, sizeof(err)))
				fail_msg("%s takes %s", k->name, val);
			assert_non_null(strstr(err, val));
		}
	}
	assert_true(ranged >= 12);
	/* The ranges in other units. */
	fsd_config_defaults(&c);
	assert_int_equal(fsd_config_set(&c, "psi-threshold", "100", err,
					sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "psi-threshold", "100.01", err,
					    sizeof(err)), 0);
	assert_string_equal(err, "psi-threshold: bad value '100.01'");
	assert_int_equal(fsd_config_set(&c, "donor-id", "0123456789abcdef",
					err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&c, "donor-id", "0123456789abcdefg",
					    err, sizeof(err)), 0);
	assert_string_equal(err, "donor-id '0123456789abcdefg': want 1 to 16 characters");
	assert_int_not_equal(fsd_config_set(&c, "donate", "0M", err,
					    sizeof(err)), 0);
	assert_string_equal(err, "donate: bad value '0M'");
	assert_int_equal(fsd_config_set(&c, "headroom", "0", err,
					sizeof(err)), 0);
	/* The generic message keeps the key as it was spelt. */
	assert_int_not_equal(fsd_config_set(&c, "Max_Hosts", "0", err,
					    sizeof(err)), 0);
	assert_string_equal(err, "Max_Hosts: bad value '0'");
	assert_int_not_equal(fsd_config_set(&c, "max_queue_depth", "0", err,
					    sizeof(err)), 0);
	assert_string_equal(err, "max-queue-depth '0': want 1 to 65536");
}

/* SIGHUP takes the live keys, keeps the others, and says which. */
static void test_key_table_reload(void **state)
{
	/* A value other than the default, for every key. */
	static const char *const next_vals[][2] = {
		{ "listen", "10.0.0.1:7000" }, { "donate", "4G" },
		{ "slab-size", "2M" }, { "headroom", "1G" },
		{ "hysteresis", "3%" }, { "pressure-interval", "2s" },
		{ "reclaim-deadline", "5s" }, { "keepalive", "1s" },
		{ "psi-threshold", "5" }, { "hugepages", "never" },
		{ "max-hosts", "9" }, { "max-unauthenticated", "2" },
		{ "max-unauthenticated-per-address", "3" },
		{ "connect-rate", "1/2" },
		{ "log-level", "debug" }, { "stats-socket", "/tmp/s" },
		{ "allowed-hosts", "10.0.0.0/8" },
		{ "max-slabs-per-host", "5" },
		{ "max-sessions-per-address", "7" },
		{ "max-queue-depth", "16" }, { "handshake-timeout", "9s" },
		{ "auth-timeout", "1s" },
		{ "resume-grace", "2m" }, { "alloc-rate", "1/2" },
		{ "revoke-after", "8" },
		{ "metrics-file", "/tmp/m" }, { "donor-id", "other" },
		{ "failure-domain", "rackZ" }, { "key-file", "/k" },
		{ "host-keys", "/hk" }, { "donor-key-file", "/dk" },
		{ "require-session-keys", "yes" },
		{ "insecure-no-auth", "yes" },
	};
	struct fsd_config cur, next, run;
	char err[256], keys[256];
	size_t i, j;

	(void)state;
	assert_int_equal(ARRAY_SIZE(next_vals), fsd_nr_keys);
	fsd_config_restart_keys(keys, sizeof(keys));
	assert_string_equal(keys, "listen, donate, slab-size, hugepages, stats-socket, resume-grace, key-file, host-keys, donor-key-file and insecure-no-auth");
	fsd_config_defaults(&cur);
	/* Nothing changed: nothing to say. */
	next = cur;
	assert_false(fsd_config_reload(&cur, &next));
	for (i = 0; i < ARRAY_SIZE(next_vals); i++) {
		const struct fsd_key *k = fsd_config_key(next_vals[i][0]);

		assert_non_null(k);
		fsd_config_defaults(&next);
		assert_int_equal(fsd_config_set(&next, next_vals[i][0],
						next_vals[i][1], err,
						sizeof(err)), 0);
		assert_false(fsd_config_key_same(k, &cur, &next));
		run = cur;
		/* A warning for exactly the restart keys. */
		assert_int_equal(fsd_config_reload(&run, &next),
				 k->reload == FSD_KEY_RESTART);
		if (k->reload == FSD_KEY_LIVE)
			assert_true(fsd_config_key_same(k, &run, &next));
		else
			assert_true(fsd_config_key_same(k, &run, &cur));
		/* And no other key moves. */
		for (j = 0; j < fsd_nr_keys; j++)
			if (j != (size_t)(k - fsd_keys))
				assert_true(fsd_config_key_same(&fsd_keys[j],
								&run, &cur));
	}
	assert_int_equal(fsd_config_key("donor-id")->reload,
			 FSD_KEY_RESTART_QUIET);
	assert_int_equal(fsd_config_key("failure-domain")->reload,
			 FSD_KEY_LIVE);
	/* A path set and then unset is the same as one never set. */
	fsd_config_defaults(&next);
	assert_int_equal(fsd_config_set(&next, "stats-socket", "/tmp/x", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_config_set(&next, "stats-socket", "none", err,
					sizeof(err)), 0);
	fsd_config_defaults(&cur);
	assert_int_equal(fsd_config_set(&cur, "stats-socket", "", err,
					sizeof(err)), 0);
	assert_false(fsd_config_reload(&cur, &next));
}

/* Every key is a long option of its name, and --help lists it. */
static void test_key_table_flags(void **state)
{
	char *bad[] = { "farswapd", "--max-s", "3", NULL };
	char *argv[4] = { "farswapd", NULL, NULL, NULL };
	char opt[64], err[256], *help = NULL;
	struct fsd_args a;
	size_t i, n = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&help, &n);
	assert_non_null(f);
	fsd_usage(f);
	fclose(f);
	assert_non_null(strstr(help, "Usage: farswapd [OPTIONS]\n"));
	assert_non_null(strstr(help, "\n  -h, --help                   this text\n"));
	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];

		snprintf(opt, sizeof(opt), "--%s", k->name);
		if (!strstr(help, opt))
			fail_msg("--help does not list %s", opt);
		argv[1] = opt;
		argv[2] = (char *)(k->arg ? "1" : NULL);
		assert_int_equal(fsd_parse_args(k->arg ? 3 : 2, argv, &a, err,
						sizeof(err)), 0);
		assert_int_equal(a.nr, 1);
		assert_string_equal(a.kv[0].key, k->name);
		assert_string_equal(a.kv[0].val, k->arg ? "1" : "yes");
		if (k->short_opt) {
			snprintf(opt, sizeof(opt), "-%c", k->short_opt);
			assert_int_equal(fsd_parse_args(3, argv, &a, err,
							sizeof(err)), 0);
			assert_string_equal(a.kv[0].key, k->name);
		}
	}
	/* Line up as they always have. */
	assert_non_null(strstr(help, "\n  -l, --listen ADDR[:PORT]     address to listen on (default 0.0.0.0:7471)\n"));
	assert_non_null(strstr(help, "\n      --max-slabs-per-host fair|N|SIZE|PCT%\n                               slabs one host may hold (default fair: the pool\n                               shared among the hosts with a session, all of\n                               it to a host alone; 0: no cap; PCT% of the pool,\n                               at least one slab), by the id its host-keys file\n                               proves, else the id it claims\n"));
	assert_non_null(strstr(help, "\n      --insecure-no-auth       run without key-file: any host on the fabric\n                               can take this donor's memory\n"));
	free(help);
	/* A prefix of two keys is neither. */
	assert_int_not_equal(fsd_parse_args(3, bad, &a, err, sizeof(err)), 0);
}

static void test_log_level(void **state)
{
	(void)state;
	assert_int_equal(fsd_log_parse_level("error"), FSD_LOG_ERR);
	assert_int_equal(fsd_log_parse_level("WARN"), FSD_LOG_WARN);
	assert_int_equal(fsd_log_parse_level("warning"), FSD_LOG_WARN);
	assert_int_equal(fsd_log_parse_level("7"), FSD_LOG_DEBUG);
	assert_int_equal(fsd_log_parse_level("8"), -1);
	assert_int_equal(fsd_log_parse_level(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_failure_domain),
		cmocka_unit_test(test_parse_amount),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_percent100),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_config_set),
		cmocka_unit_test(test_limit_keys),
		cmocka_unit_test(test_max_unauthenticated),
		cmocka_unit_test(test_limit_errors_name_line),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_config_load_missing),
		cmocka_unit_test(test_flags_override_file),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_args_gen_key),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_example_config),
		cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_metrics_file),
		cmocka_unit_test(test_key_table_defaults),
		cmocka_unit_test(test_key_table_round_trip),
		cmocka_unit_test(test_key_table_ranges),
		cmocka_unit_test(test_key_table_reload),
		cmocka_unit_test(test_key_table_flags),
	};

	fsd_log_init(FSD_LOG_ERR, false);
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
