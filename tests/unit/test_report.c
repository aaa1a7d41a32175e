// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's stats as JSON and metrics, from a donor with fake ops: the
 * numbers of the text stats under the same names, hosts' ids escaped,
 * well-formed output; and the JSON socket's path beside the text one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_ops.h"
#include "json_check.h"
#include "log.h"
#include "prom_check.h"
#include "report.h"
#include "statsock.h"

#define SLAB (4ull << 20)

struct ctx {
	struct fsd_donor d;
	struct fake f;
};

static int setup(void **state)
{
	static struct ctx c;
	struct fsd_session *a, *b;

	memset(&c, 0, sizeof(c));
	if (fake_donor_init(&c.d, &c.f, 8, SLAB))
		return -1;
	a = fake_session(&c.d, "host-a", 2);
	b = fake_session(&c.d, "q\"uo\\te", 1);
	if (!a || !b)
		return -1;
	a->nr_slabs = 3;
	a->io_attached = 0x3;
	snprintf(b->peer, sizeof(b->peer), "[fe80::1]:7\n");
	c.d.cnt.grants = 7;
	c.d.cnt.keepalive_dead = 2;
	c.d.mem.mem_available = 1000;
	c.d.mem.mem_total = 4000;
	c.d.mem.psi_some_avg10 = 1250;
	c.d.under_pressure = true;
	*state = &c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	fake_donor_exit(&c->d);
	return 0;
}

#define assert_has(text, s)						\
	do {								\
		if (!strstr((text), (s)))				\
			fail_msg("missing: %s\nin:\n%s", (s), (text));	\
	} while (0)

static void test_json(void **state)
{
	struct ctx *c = *state;
	size_t len;
	char *doc = fsd_donor_json_text(&c->d, &len);

	assert_non_null(doc);
	assert_int_equal(len, strlen(doc));
	assert_true(json_valid(doc, len));
	assert_has(doc, "\"schema_version\": 1,");
	assert_has(doc, "\"slab_size\": 4194304,");
	assert_has(doc, "\"slabs_total\": 8,");
	assert_has(doc, "\"bytes_total\": 33554432,");
	assert_has(doc, "\"pressure\": true,");
	assert_has(doc, "\"mem_available\": 1000,");
	assert_has(doc, "\"psi_some_avg10\": 12.5,");
	assert_has(doc, "\"grants\": 7,");
	assert_has(doc, "\"keepalive_dead\": 2,");
	assert_has(doc, "\"refused_malformed\": 0");
	assert_has(doc, "\"slabs_quarantined\": 0,");
	assert_has(doc, "\"id\": \"host-a\",");
	assert_has(doc, "\"slabs\": 3,\n      \"bytes\": 12582912,");
	assert_has(doc, "\"io_queues_attached\": 2,\n      \"io_queues\": 2,\n      \"state\": \"up\"");
	assert_has(doc, "\"id\": \"q\\\"uo\\\\te\",");
	assert_has(doc, "\"peer\": \"[fe80::1]:7\\n\",");
	free(doc);
}

/* Every counter of the text's counters line is in the JSON, same name. */
static void test_json_has_every_text_counter(void **state)
{
	struct ctx *c = *state;
	char text[4096], key[64], *doc, *p;
	size_t len;

	assert_true(fsd_donor_stats(&c->d, text, sizeof(text)) > 0);
	doc = fsd_donor_json_text(&c->d, &len);
	assert_non_null(doc);
	p = strstr(text, "counters ");
	assert_non_null(p);
	for (p += 9; *p && *p != '\n'; p += strcspn(p, " \n"), p += *p == ' ') {
		size_t n = strcspn(p, "=");
		char val[32];

		snprintf(key, sizeof(key), "\"%.*s\": ", (int)n, p);
		snprintf(val, sizeof(val), "%.*s", (int)strcspn(p + n + 1, " \n"),
			 p + n + 1);
		strncat(key, val, sizeof(key) - strlen(key) - 1);
		assert_has(doc, key);
	}
	free(doc);
}

static void test_metrics(void **state)
{
	struct ctx *c = *state;
	char why[256], *text;
	size_t len;

	text = fsd_donor_metrics_text(&c->d, &len);
	assert_non_null(text);
	if (!prom_valid(text, why, sizeof(why)))
		fail_msg("%s\n%s", why, text);
	assert_has(text, "# TYPE farswapd_grants_total counter\n");
	assert_has(text, "farswapd_grants_total 7\n");
	assert_has(text, "farswapd_pool_slabs 8\n");
	assert_has(text, "farswapd_slabs{state=\"free\"} 8\n");
	assert_has(text, "farswapd_under_pressure 1\n");
	assert_has(text, "farswapd_psi_some_avg10 12.5\n");
	assert_has(text, "farswapd_hosts 2\n");
	assert_has(text, "farswapd_host_slabs{host=\"1\",id=\"host-a\",peer=\"10.0.0.1:5000\"} 3\n");
	assert_has(text, "farswapd_host_io_queues{host=\"1\",id=\"host-a\",peer=\"10.0.0.1:5000\"} 2\n");
	assert_has(text, "{host=\"2\",id=\"q\\\"uo\\\\te\",peer=\"[fe80::1]:7\\n\"} 1\n");
	free(text);
}

/*
 * What the JSON says of authentication is what the text says: a donor
 * with host-keys alone authenticates every host as one with a key-file.
 */
static void test_json_auth_as_text(void **state)
{
	struct ctx *c = *state;
	const char *want[] = { "none", "hmac-sha256" };
	char name[64], text[64];
	static char stats[1 << 16];
	size_t len;
	int i;

	for (i = 0; i < 2; i++) {
		char *doc;

		fsd_donor_set_host_keys(&c->d, i ? "/etc/farswap/hosts.d" : "");
		doc = fsd_donor_json_text(&c->d, &len);
		assert_non_null(doc);
		snprintf(name, sizeof(name), "\"auth\": \"%s\"", want[i]);
		assert_has(doc, name);
		free(doc);
		snprintf(text, sizeof(text), "auth %s\n", want[i]);
		assert_true(fsd_donor_stats(&c->d, stats, sizeof(stats)) > 0);
		assert_has(stats, text);
	}
	fsd_donor_set_host_keys(&c->d, "");
}

static void test_json_path(void **state)
{
	char out[128], longpath[200];

	(void)state;
	assert_int_equal(fsd_stats_json_path("/run/farswap/farswapd.sock", out,
					     sizeof(out)), 0);
	assert_string_equal(out, "/run/farswap/farswapd.sock.json");
	assert_int_not_equal(fsd_stats_json_path("", out, sizeof(out)), 0);
	/* Fits sun_path without ".json", not with it. */
	memset(longpath, 'a', 104);
	longpath[0] = '/';
	longpath[104] = '\0';
	assert_int_equal(fsd_stats_json_path(longpath, out, sizeof(out)),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_has_every_text_counter),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_json_auth_as_text),
		cmocka_unit_test(test_json_path),
	};

	fsd_log_init(FSD_LOG_ERR, false);
	return cmocka_run_group_tests_name("report", tests, setup, teardown);
}
