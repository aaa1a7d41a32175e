// SPDX-License-Identifier: GPL-2.0
/*
 * allowed-hosts: parsing, CIDR matching (IPv4, IPv6, IPv4-mapped IPv6),
 * host identities, and the two limiters (log rate limit, token bucket).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "access.h"

static struct fsd_addr v4(const char *s)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct fsd_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &in.sin_addr), 1);
	assert_int_equal(fsd_addr_from_sockaddr(&in, &a), 0);
	return a;
}

static struct fsd_addr v6(const char *s)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct fsd_addr a;

	assert_int_equal(inet_pton(AF_INET6, s, &in6.sin6_addr), 1);
	assert_int_equal(fsd_addr_from_sockaddr(&in6, &a), 0);
	return a;
}

static const uint8_t *id(const char *name)
{
	static uint8_t buf[FARSWAP_ID_LEN];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, name, strlen(name));
	return buf;
}

static enum fsd_access_verdict check(const char *list, struct fsd_addr a,
				     const uint8_t *host)
{
	static struct fsd_access acl;
	char err[256];

	assert_int_equal(fsd_access_parse(list, &acl, err, sizeof(err)), 0);
	return fsd_access_check(&acl, &a, host);
}

static void test_empty_allows_any(void **state)
{
	(void)state;
	assert_int_equal(check("", v4("1.2.3.4"), id("x")), FSD_ACCESS_OK);
	assert_int_equal(check(" , ", v6("::1"), id("x")), FSD_ACCESS_OK);
	assert_int_equal(check("any", v6("::1"), id("x")), FSD_ACCESS_OK);
}

static void test_ipv4_cidr(void **state)
{
	(void)state;
	assert_int_equal(check("10.0.0.0/24", v4("10.0.0.77"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("10.0.0.0/24", v4("10.0.1.77"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	/* Host bits in the rule are ignored. */
	assert_int_equal(check("10.0.0.9/8", v4("10.200.1.1"), id("h")),
			 FSD_ACCESS_OK);
	/* A bare address is /32. */
	assert_int_equal(check("192.168.1.5", v4("192.168.1.5"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("192.168.1.5", v4("192.168.1.6"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	/* /0 is every IPv4 address; /31 and odd prefixes. */
	assert_int_equal(check("0.0.0.0/0", v4("8.8.8.8"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("10.0.0.4/31", v4("10.0.0.5"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("10.0.0.4/31", v4("10.0.0.6"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	assert_int_equal(check("172.16.0.0/12", v4("172.31.255.1"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("172.16.0.0/12", v4("172.32.0.1"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	/* Any of several. */
	assert_int_equal(check("1.1.1.1, 10.0.0.0/8 2.2.2.2", v4("10.9.9.9"),
			       id("h")), FSD_ACCESS_OK);
}

static void test_ipv6_and_mapped(void **state)
{
	(void)state;
	assert_int_equal(check("2001:db8::/32", v6("2001:db8:1::5"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("2001:db8::/32", v6("2001:db9::5"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	assert_int_equal(check("[fe80::1]", v6("fe80::1"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("[fe80::]/64", v6("fe80::abcd"), id("h")),
			 FSD_ACCESS_OK);
	/* An IPv4 rule matches an IPv4-mapped IPv6 peer (a :: listener). */
	assert_int_equal(check("10.0.0.0/24", v6("::ffff:10.0.0.8"), id("h")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("10.0.0.0/24", v6("::ffff:10.0.1.8"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	/* And a mapped rule matches a plain IPv4 peer. */
	assert_int_equal(check("::ffff:10.0.0.0/120", v4("10.0.0.8"), id("h")),
			 FSD_ACCESS_OK);
	/* An IPv4 rule never matches a real IPv6 peer, nor the reverse. */
	assert_int_equal(check("0.0.0.0/0", v6("2001:db8::1"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	assert_int_equal(check("2001:db8::/32", v4("32.1.13.184"), id("h")),
			 FSD_ACCESS_BAD_ADDRESS);
	/* A peer that is not IP (AF_IB) matches no address rule. */
	{
		struct fsd_addr none = { 0 };

		assert_int_equal(check("::/0", none, id("h")),
				 FSD_ACCESS_BAD_ADDRESS);
		assert_int_equal(check("name:h", none, id("h")),
				 FSD_ACCESS_OK);
	}
}

static void test_identities(void **state)
{
	uint8_t uuid[FARSWAP_ID_LEN] = {
		0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	};

	(void)state;
	assert_int_equal(check("id:12345678-9abc-def0-0123-456789abcdef",
			       v4("1.2.3.4"), uuid), FSD_ACCESS_OK);
	assert_int_equal(check("ID:123456789ABCDEF00123456789ABCDEF",
			       v4("1.2.3.4"), uuid), FSD_ACCESS_OK);
	uuid[15] ^= 1;
	assert_int_equal(check("id:12345678-9abc-def0-0123-456789abcdef",
			       v4("1.2.3.4"), uuid), FSD_ACCESS_BAD_ID);
	assert_int_equal(check("name:host-a", v4("1.2.3.4"), id("host-a")),
			 FSD_ACCESS_OK);
	assert_int_equal(check("name:host-a", v4("1.2.3.4"), id("host-ab")),
			 FSD_ACCESS_BAD_ID);
	/* Both kinds: both must match. */
	assert_int_equal(check("10.0.0.0/8 name:host-a", v4("10.1.1.1"),
			       id("host-a")), FSD_ACCESS_OK);
	assert_int_equal(check("10.0.0.0/8 name:host-a", v4("11.1.1.1"),
			       id("host-a")), FSD_ACCESS_BAD_ADDRESS);
	assert_int_equal(check("10.0.0.0/8 name:host-a", v4("10.1.1.1"),
			       id("host-b")), FSD_ACCESS_BAD_ID);
}

static void test_bad_lists(void **state)
{
	static const char *const bad[] = {
		"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0/8", "host.example",
		"id:1234", "id:123456789abcdef00123456789abcdefff", "id:xyz",
		"name:", "name:seventeen-letters", "[10.0.0.1]", "[::1", "10.0.0.0/-1",
		"1.2.3.4/8x", "any any",
	};
	struct fsd_access acl;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(fsd_access_parse(bad[i], &acl, err,
						      sizeof(err)), 0);
		assert_non_null(strstr(err, "allowed-hosts: '"));
		assert_int_equal(acl.nr, 0);
	}
	assert_int_not_equal(fsd_access_parse("10.0.0.0/40", &acl, err,
					      sizeof(err)), 0);
	assert_non_null(strstr(err, "prefix length"));
}

static void test_too_many(void **state)
{
	static char list[FSD_ACCESS_MAX * 20];
	struct fsd_access acl;
	char err[256];
	size_t off = 0;
	int i;

	(void)state;
	for (i = 0; i < FSD_ACCESS_MAX; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off,
					"10.0.%d.%d,", i / 256, i % 256);
	assert_int_equal(fsd_access_parse(list, &acl, err, sizeof(err)), 0);
	assert_int_equal(acl.nr, FSD_ACCESS_MAX);
	snprintf(list + off, sizeof(list) - off, "10.9.9.9");
	assert_int_not_equal(fsd_access_parse(list, &acl, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "too many"));
}

static void test_format(void **state)
{
	struct fsd_access acl;
	char buf[512], err[128];
	struct fsd_addr a = v6("::ffff:10.1.2.3");

	(void)state;
	fsd_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "10.1.2.3");
	a = v6("2001:db8::7");
	fsd_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::7");
	assert_int_equal(fsd_access_parse("10.0.0.9/24 2001:db8::/32 name:ab",
					  &acl, err, sizeof(err)), 0);
	fsd_access_format(&acl, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.0/24,2001:db8::/32,name:ab");
	fsd_access_parse("", &acl, err, sizeof(err));
	fsd_access_format(&acl, buf, sizeof(buf));
	assert_string_equal(buf, "any");
	/* What is printed parses back to the same list. */
	fsd_access_parse("10.0.0.9/24 ::ffff:1.2.3.0/120 id:00112233445566778899aabbccddeeff id:2c000000000000000000000000000000 name:h",
			 &acl, err, sizeof(err));
	{
		struct fsd_access again;

		fsd_access_format(&acl, buf, sizeof(buf));
		assert_int_equal(fsd_access_parse(buf, &again, err,
						  sizeof(err)), 0);
		assert_memory_equal(&acl, &again, sizeof(acl));
	}
}

static void test_addr_equal(void **state)
{
	struct fsd_addr a = v4("10.0.0.1"), b = v6("::ffff:10.0.0.1");
	struct fsd_addr c = v4("10.0.0.2"), none = { 0 };

	(void)state;
	assert_true(fsd_addr_equal(&a, &b));
	assert_false(fsd_addr_equal(&a, &c));
	assert_false(fsd_addr_equal(&none, &none));
}

static void test_ratelimit(void **state)
{
	struct fsd_ratelimit rl = { 0 };
	uint32_t missed = 99;
	int i, passed = 0;

	(void)state;
	for (i = 0; i < 10; i++)
		passed += fsd_ratelimit_pass(&rl, 1000 + i, 5000, 3, &missed);
	assert_int_equal(passed, 3);
	assert_int_equal(rl.suppressed, 7);
	/* The next window: the first line says how many were held back. */
	assert_true(fsd_ratelimit_pass(&rl, 6000, 5000, 3, &missed));
	assert_int_equal(missed, 7);
	assert_true(fsd_ratelimit_pass(&rl, 6001, 5000, 3, &missed));
	assert_int_equal(missed, 0);
}

static void test_bucket(void **state)
{
	struct fsd_bucket b = { 0 };
	int i, got = 0;

	(void)state;
	/* 2 a second, burst 4: four at once, then one per 500 ms. */
	for (i = 0; i < 10; i++)
		got += fsd_bucket_take(&b, 1000, 2, 4);
	assert_int_equal(got, 4);
	assert_false(fsd_bucket_take(&b, 1499, 2, 4));
	assert_true(fsd_bucket_take(&b, 1500, 2, 4));
	assert_false(fsd_bucket_take(&b, 1500, 2, 4));
	assert_false(fsd_bucket_take(&b, 1999, 2, 4));
	assert_true(fsd_bucket_take(&b, 2000, 2, 4));
	/* A long idle time saves up no more than the burst. */
	got = 0;
	for (i = 0; i < 10; i++)
		got += fsd_bucket_take(&b, 100000000000ull, 2, 4);
	assert_int_equal(got, 4);
	/* Time going backwards adds nothing. */
	assert_false(fsd_bucket_take(&b, 5, 2, 4));
	/* 1 a second, burst 1: one now, one a second later. */
	memset(&b, 0, sizeof(b));
	assert_true(fsd_bucket_take(&b, 0, 1, 1));
	assert_false(fsd_bucket_take(&b, 999, 1, 1));
	assert_true(fsd_bucket_take(&b, 1000, 1, 1));
}

/* The summary of an interval that is over, even with no event after it. */
static void test_ratelimit_flush(void **state)
{
	struct fsd_ratelimit rl = { 0 };
	uint32_t missed = 99;
	int i;

	(void)state;
	/* Nothing held back: nothing to say. */
	assert_int_equal(fsd_ratelimit_flush(&rl, 50000, 1000), 0);
	for (i = 0; i < 10; i++)
		fsd_ratelimit_pass(&rl, 1000, 1000, 3, &missed);
	/* Not while the interval lasts, then once. */
	assert_int_equal(fsd_ratelimit_flush(&rl, 1999, 1000), 0);
	assert_int_equal(fsd_ratelimit_flush(&rl, 2000, 1000), 7);
	assert_int_equal(fsd_ratelimit_flush(&rl, 9000, 1000), 0);
	/* Told by the flush, so not again by the next event let through. */
	assert_true(fsd_ratelimit_pass(&rl, 9000, 1000, 3, &missed));
	assert_int_equal(missed, 0);
	/* A new interval began at the flush: 3 more lines fit in it. */
	assert_true(fsd_ratelimit_pass(&rl, 9001, 1000, 3, &missed));
	assert_true(fsd_ratelimit_pass(&rl, 9002, 1000, 3, &missed));
	assert_false(fsd_ratelimit_pass(&rl, 9003, 1000, 3, &missed));
}

/* connect-rate: a bucket per address, in a table of bounded size. */
static void test_connect_rate(void **state)
{
	static struct fsd_connect_table t;
	struct fsd_addr a = v4("10.0.0.1"), b = v4("10.0.0.2");
	struct fsd_addr mapped = v6("::ffff:10.0.0.1"), none = { 0 };
	int i, got = 0;

	(void)state;
	memset(&t, 0, sizeof(t));
	/* 2 a second, burst 3: three at once, then refused. */
	for (i = 0; i < 10; i++)
		got += fsd_connect_take(&t, &a, 1000, 2, 3);
	assert_int_equal(got, 3);
	/* The same address written as IPv4-mapped IPv6 is the same one. */
	assert_false(fsd_connect_take(&t, &mapped, 1000, 2, 3));
	/* Another address has its own bucket. */
	assert_true(fsd_connect_take(&t, &b, 1000, 2, 3));
	/* Refused connects took no token: one is back 500 ms later. */
	assert_true(fsd_connect_take(&t, &a, 1500, 2, 3));
	assert_false(fsd_connect_take(&t, &a, 1500, 2, 3));
	/* 0: no limit; no IP address: nothing to limit by. */
	assert_true(fsd_connect_take(&t, &a, 1500, 0, 0));
	for (i = 0; i < 10; i++)
		assert_true(fsd_connect_take(&t, &none, 1500, 2, 3));
	assert_true(fsd_connect_take(&t, NULL, 1500, 2, 3));
	/*
	 * The table is bounded: as many other addresses as it holds push
	 * out the one seen longest ago, a (b was seen since), which comes
	 * back with a full bucket.
	 */
	assert_true(fsd_connect_take(&t, &b, 1600, 2, 3));
	for (i = 0; i < FSD_CONNECT_ADDRS - 1; i++) {
		struct fsd_addr o = { 0 };

		o.family = 2;
		o.bytes[0] = 0x20;
		o.bytes[14] = (uint8_t)(i >> 8);
		o.bytes[15] = (uint8_t)i;
		assert_true(fsd_connect_take(&t, &o, 1700, 2, 3));
	}
	assert_false(fsd_connect_take(&t, &b, 1700, 2, 3) &&
		     fsd_connect_take(&t, &b, 1700, 2, 3) &&
		     fsd_connect_take(&t, &b, 1700, 2, 3));
	got = 0;
	for (i = 0; i < 10; i++)
		got += fsd_connect_take(&t, &a, 1700, 2, 3);
	assert_int_equal(got, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_allows_any),
		cmocka_unit_test(test_ipv4_cidr),
		cmocka_unit_test(test_ipv6_and_mapped),
		cmocka_unit_test(test_identities),
		cmocka_unit_test(test_bad_lists),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_addr_equal),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_ratelimit_flush),
		cmocka_unit_test(test_connect_rate),
	};

	return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
