// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON emitter: layout, escaping of every kind of byte, numbers, and
 * the misuses it must refuse rather than print invalid JSON.  Every
 * document it accepts is checked by an independent validator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "json_check.h"

/* Finish @j, check it parses and equals @want; free it. */
static void expect_doc(struct fsj *j, const char *want)
{
	const char *text;
	size_t len = 0;

	text = fsj_finish(j, &len);
	assert_non_null(text);
	assert_true(json_valid(text, len));
	assert_int_equal(len, strlen(text));
	assert_string_equal(text, want);
	fsj_free(j);
}

static void expect_refused(struct fsj *j)
{
	assert_null(fsj_finish(j, NULL));
	fsj_free(j);
}

static void test_layout(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	fsj_u64(&j, "a", 1);
	fsj_object_begin(&j, "empty");
	fsj_object_end(&j);
	fsj_array_begin(&j, "list");
	fsj_bool(&j, NULL, true);
	fsj_null(&j, NULL);
	fsj_array_begin(&j, NULL);
	fsj_array_end(&j);
	fsj_array_end(&j);
	fsj_string(&j, "s", "x");
	fsj_object_end(&j);
	expect_doc(&j,
		   "{\n"
		   "  \"a\": 1,\n"
		   "  \"empty\": {},\n"
		   "  \"list\": [\n"
		   "    true,\n"
		   "    null,\n"
		   "    []\n"
		   "  ],\n"
		   "  \"s\": \"x\"\n"
		   "}\n");
}

static void test_top_level_scalar(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_string(&j, NULL, "only");
	expect_doc(&j, "\"only\"\n");
}

static void test_escapes(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_array_begin(&j, NULL);
	fsj_string(&j, NULL, "quote\" back\\ slash/");
	fsj_string(&j, NULL, "\n\r\t\b\f");
	fsj_string(&j, NULL, "\x01\x1f\x7f");
	fsj_string_len(&j, NULL, "nul\0byte", 8);
	fsj_array_end(&j);
	expect_doc(&j,
		   "[\n"
		   "  \"quote\\\" back\\\\ slash/\",\n"
		   "  \"\\n\\r\\t\\b\\f\",\n"
		   "  \"\\u0001\\u001f\x7f\",\n"
		   "  \"nul\\u0000byte\"\n"
		   "]\n");
}

/* Keys are escaped like values. */
static void test_key_escaped(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	fsj_u64(&j, "a\"b\n", 0);
	fsj_object_end(&j);
	expect_doc(&j, "{\n  \"a\\\"b\\n\": 0\n}\n");
}

static void test_utf8(void **state)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		/* Well-formed: copied as they are. */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"\n" },
		{ "\xe2\x82\xac", "\"\xe2\x82\xac\"\n" },
		{ "\xf0\x9f\x92\xbe", "\"\xf0\x9f\x92\xbe\"\n" },
		/* Not UTF-8: each bad byte becomes U+FFFD. */
		{ "\xff", "\"\\ufffd\"\n" },
		{ "a\x80z", "\"a\\ufffdz\"\n" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"\n" },		/* overlong */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"\n" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n" },
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"\n" },		/* truncated */
		{ "\xe2\x82z", "\"\\ufffd\\ufffdz\"\n" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fsj j;

		fsj_init(&j);
		fsj_string(&j, NULL, cases[i].in);
		expect_doc(&j, cases[i].out);
	}
}

/* Every byte value, alone and in a string: the document always parses. */
static void test_every_byte(void **state)
{
	char s[4];
	int b;

	(void)state;
	for (b = 0; b < 256; b++) {
		const char *text;
		struct fsj j;
		size_t len;

		s[0] = 'x';
		s[1] = (char)b;
		s[2] = 'y';
		fsj_init(&j);
		fsj_string_len(&j, NULL, s, 3);
		text = fsj_finish(&j, &len);
		assert_non_null(text);
		assert_true(json_valid(text, len));
		fsj_free(&j);
	}
}

static void test_numbers(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_array_begin(&j, NULL);
	fsj_u64(&j, NULL, UINT64_MAX);
	fsj_i64(&j, NULL, INT64_MIN);
	fsj_double(&j, NULL, 0.25);
	fsj_double(&j, NULL, 12.5);
	fsj_double(&j, NULL, NAN);
	fsj_double(&j, NULL, INFINITY);
	fsj_bool(&j, NULL, false);
	fsj_array_end(&j);
	expect_doc(&j,
		   "[\n"
		   "  18446744073709551615,\n"
		   "  -9223372036854775808,\n"
		   "  0.25,\n"
		   "  12.5,\n"
		   "  null,\n"
		   "  null,\n"
		   "  false\n"
		   "]\n");
}

static void test_null_string_is_null(void **state)
{
	struct fsj j;

	(void)state;
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	fsj_string(&j, "v", NULL);
	fsj_object_end(&j);
	expect_doc(&j, "{\n  \"v\": null\n}\n");
}

static void test_misuse_refused(void **state)
{
	struct fsj j;
	int i;

	(void)state;
	/* A member without a key. */
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	fsj_u64(&j, NULL, 1);
	fsj_object_end(&j);
	expect_refused(&j);
	/* A key inside an array. */
	fsj_init(&j);
	fsj_array_begin(&j, NULL);
	fsj_u64(&j, "k", 1);
	fsj_array_end(&j);
	expect_refused(&j);
	/* Left open. */
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	expect_refused(&j);
	/* Closed with the wrong bracket. */
	fsj_init(&j);
	fsj_object_begin(&j, NULL);
	fsj_array_end(&j);
	expect_refused(&j);
	/* Two top-level values. */
	fsj_init(&j);
	fsj_u64(&j, NULL, 1);
	fsj_u64(&j, NULL, 2);
	expect_refused(&j);
	/* Nothing at all. */
	fsj_init(&j);
	expect_refused(&j);
	/* Nested too deep. */
	fsj_init(&j);
	for (i = 0; i <= FSJ_MAX_DEPTH; i++)
		fsj_array_begin(&j, NULL);
	for (i = 0; i <= FSJ_MAX_DEPTH; i++)
		fsj_array_end(&j);
	expect_refused(&j);
}

/* The validator itself must catch what the emitter must never print. */
static void test_validator_catches(void **state)
{
	static const char *const bad[] = {
		"", "{", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "\"\x01\"",
		"\"\xff\"", "01", "1.", "nul", "\"\\x\"", "{} {}",
	};
	const char *good;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(json_valid(bad[i], strlen(bad[i])));
	good = "{\"a\": [1, -0.5e3, \"\\u00e9\", true, null]}";
	assert_true(json_valid(good, strlen(good)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_top_level_scalar),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_key_escaped),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_null_string_is_null),
		cmocka_unit_test(test_misuse_refused),
		cmocka_unit_test(test_validator_catches),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
