// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format writer: one # HELP and # TYPE before a
 * family's first sample, escaped label values and help text, values that
 * parse, names it refuses, and a file replaced whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics.h"
#include "prom_check.h"

static void expect_text(struct fsm *m, const char *want)
{
	const char *text = fsm_finish(m, NULL);
	char why[256];

	assert_non_null(text);
	if (!prom_valid(text, why, sizeof(why)))
		fail_msg("%s", why);
	assert_string_equal(text, want);
	fsm_free(m);
}

static void test_families(void **state)
{
	struct fsm_label l[] = { { "device", "farswap0" }, { "op", "read" } };
	struct fsm m;

	(void)state;
	fsm_init(&m);
	fsm_family(&m, "a_total", FSM_COUNTER, "Things.");
	fsm_u64(&m, NULL, 0, 3);
	fsm_u64(&m, l, 2, UINT64_MAX);
	/* A family without samples writes nothing. */
	fsm_family(&m, "unused", FSM_GAUGE, "Never seen.");
	fsm_family(&m, "b_seconds", FSM_GAUGE, "Time.");
	fsm_double(&m, l, 1, 0.0006);
	fsm_double(&m, l, 1, NAN);
	fsm_double(&m, l, 1, -INFINITY);
	expect_text(&m,
		    "# HELP a_total Things.\n"
		    "# TYPE a_total counter\n"
		    "a_total 3\n"
		    "a_total{device=\"farswap0\",op=\"read\"} 18446744073709551615\n"
		    "# HELP b_seconds Time.\n"
		    "# TYPE b_seconds gauge\n"
		    "b_seconds{device=\"farswap0\"} 0.0006\n"
		    "b_seconds{device=\"farswap0\"} NaN\n"
		    "b_seconds{device=\"farswap0\"} -Inf\n");
}

static void test_escaping(void **state)
{
	struct fsm_label l = { "donor", "a\"b\\c\nd" };
	struct fsm m;

	(void)state;
	fsm_init(&m);
	fsm_family(&m, "x", FSM_GAUGE, "back\\slash \"quoted\"\nnext");
	fsm_u64(&m, &l, 1, 1);
	expect_text(&m,
		    "# HELP x back\\\\slash \"quoted\"\\nnext\n"
		    "# TYPE x gauge\n"
		    "x{donor=\"a\\\"b\\\\c\\nd\"} 1\n");
}

static void test_bad_names_refused(void **state)
{
	struct fsm_label bad_label = { "9lives", "v" };
	struct fsm_label null_value = { "ok", NULL };
	struct fsm m;

	(void)state;
	fsm_init(&m);
	fsm_family(&m, "has-dash", FSM_GAUGE, "");
	fsm_u64(&m, NULL, 0, 1);
	assert_null(fsm_finish(&m, NULL));
	fsm_free(&m);

	fsm_init(&m);
	fsm_family(&m, "ok", FSM_GAUGE, "");
	fsm_u64(&m, &bad_label, 1, 1);
	assert_null(fsm_finish(&m, NULL));
	fsm_free(&m);

	fsm_init(&m);
	fsm_family(&m, "ok", FSM_GAUGE, "");
	fsm_u64(&m, &null_value, 1, 1);
	assert_null(fsm_finish(&m, NULL));
	fsm_free(&m);

	/* A sample before any family. */
	fsm_init(&m);
	fsm_u64(&m, NULL, 0, 1);
	assert_null(fsm_finish(&m, NULL));
	fsm_free(&m);
}

/* The checker must catch what the writer must never produce. */
static void test_checker_catches(void **state)
{
	static const char *const bad[] = {
		"x 1\n",					/* no TYPE */
		"# TYPE x gauge\nx 1\n",			/* no HELP */
		"# HELP x h\n# TYPE x summary\nx 1\n",		/* type */
		"# HELP x h\n# TYPE x gauge\nx one\n",		/* value */
		"# HELP x h\n# TYPE x gauge\nx{a=\"1} 1\n",	/* quote */
		"# HELP x h\n# TYPE x gauge\nx{a=1} 1\n",
		"# HELP x h\n# TYPE x gauge\nx 1\n# HELP y h\n# TYPE y gauge\ny 1\nx 2\n",
		"# HELP x h\n# TYPE x gauge\n# TYPE x gauge\nx 1\n",
		"# HELP x h\n# TYPE x gauge\nx 1",		/* no newline */
	};
	char why[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (prom_valid(bad[i], why, sizeof(why)))
			fail_msg("accepted: %s", bad[i]);
	assert_true(prom_valid("# HELP x h\n# TYPE x gauge\nx{a=\"\\\"\"} +Inf\n",
			       why, sizeof(why)));
}

static int count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_write_file(void **state)
{
	char dir[] = "/tmp/fsm-test-XXXXXX", path[128], buf[64], err[256];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/farswap.prom", dir);
	assert_int_equal(fsm_write_file(path, "a 1\n", 4, err, sizeof(err)), 0);
	assert_int_equal(fsm_write_file(path, "b 2\n", 4, err, sizeof(err)), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "b 2\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* No temporary file left beside it. */
	assert_int_equal(count_entries(dir), 1);
	unlink(path);
	/* A directory that does not exist: an error that says where. */
	snprintf(path, sizeof(path), "%s/none/farswap.prom", dir);
	assert_int_not_equal(fsm_write_file(path, "a 1\n", 4, err,
					    sizeof(err)), 0);
	assert_non_null(strstr(err, "none"));
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_bad_names_refused),
		cmocka_unit_test(test_checker_catches),
		cmocka_unit_test(test_write_file),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
