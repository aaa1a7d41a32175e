// SPDX-License-Identifier: GPL-2.0
/*
 * The pool-state table (keep.h): laid out, refused when a farswapd could
 * not trust it (magic, version, slab size, length, damaged records), and
 * written a record at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keep.h"

#define SLAB (4ull << 20)
#define NR 8

static uint8_t *table(void)
{
	static uint8_t buf[4096];

	memset(buf, 0xee, sizeof(buf));
	fsd_keep_format(buf, NR, SLAB, 3);
	return buf;
}

static void test_format_validates(void **state)
{
	uint8_t *buf = table();
	const struct fsd_keep_hdr *h = (const void *)buf;
	char err[128];
	uint32_t i;

	(void)state;
	assert_int_equal(fsd_keep_size(NR), 64 + NR * 32);
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), NR);
	assert_int_equal(h->magic, FSD_KEEP_MAGIC);
	assert_int_equal(h->version, FSD_KEEP_VERSION);
	assert_int_equal(h->mem_kind, 3);
	/* Every record is "not held", whatever the buffer held before. */
	for (i = 0; i < NR; i++)
		assert_int_equal(((const struct fsd_keep_rec *)(h + 1))[i].held, 0);
}

static void test_bad_header_refused(void **state)
{
	struct fsd_keep_hdr *h;
	uint8_t *buf;
	char err[128];

	(void)state;
	buf = table();
	h = (void *)buf;
	h->magic ^= 1;
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "magic"));

	buf = table();
	h = (void *)buf;
	h->version = FSD_KEEP_VERSION + 1;
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "version"));

	/* The slab size the hosts' slab ids and lengths meant. */
	buf = table();
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB * 2,
					   err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "slabs of"));

	/* Records beyond the end, or no header at all. */
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR) - 1, SLAB,
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(fsd_keep_validate(buf, 10, SLAB, err, sizeof(err)),
			 -EINVAL);
	h = (void *)buf;
	h->nr_slabs = 0;
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), -EINVAL);
}

static void test_damaged_record_refused(void **state)
{
	uint8_t *buf = table();
	struct fsd_keep_rec *r = (void *)(buf + sizeof(struct fsd_keep_hdr));
	char err[128];

	(void)state;
	r[3].held = 1;		/* held, but no token to resume it with */
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "slab 3"));
	r[3].token = 7;
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), NR);
	r[3].held = 2;
	assert_int_equal(fsd_keep_validate(buf, fsd_keep_size(NR), SLAB, err,
					   sizeof(err)), -EINVAL);
}

static void test_hold_and_drop(void **state)
{
	uint8_t id[FARSWAP_ID_LEN] = "host-a";
	struct fsd_keep k;
	const struct fsd_keep_rec *r;

	(void)state;
	fsd_keep_attach(&k, table());
	assert_int_equal(k.nr_slabs, NR);
	fsd_keep_hold(&k, 2, id, 1, 0x1234);
	r = fsd_keep_get(&k, 2);
	assert_int_equal(r->held, 1);
	assert_int_equal(r->proof, 1);
	assert_int_equal(r->token, 0x1234);
	assert_memory_equal(r->host_id, id, FARSWAP_ID_LEN);
	/* A host without a token (no FARSWAP_FEAT_RESUME) holds nothing here. */
	fsd_keep_hold(&k, 3, id, 0, 0);
	assert_int_equal(fsd_keep_get(&k, 3)->held, 0);
	/* Out of range: ignored, never written past the table. */
	fsd_keep_hold(&k, NR, id, 0, 1);
	assert_null(fsd_keep_get(&k, NR));
	fsd_keep_drop(&k, 2);
	assert_int_equal(fsd_keep_get(&k, 2)->held, 0);
	assert_int_equal(fsd_keep_get(&k, 2)->token, 0);
	/* No table: every call is a no-op. */
	fsd_keep_hold(NULL, 0, id, 0, 1);
	fsd_keep_drop(NULL, 0);
	assert_null(fsd_keep_get(NULL, 0));
}

/* A process that keeps the pool for the next stops writing at its end. */
static void test_frozen_keeps_records(void **state)
{
	uint8_t id[FARSWAP_ID_LEN] = "host-a";
	struct fsd_keep k;

	(void)state;
	fsd_keep_attach(&k, table());
	fsd_keep_hold(&k, 1, id, 0, 99);
	k.frozen = true;
	fsd_keep_drop(&k, 1);
	fsd_keep_hold(&k, 2, id, 0, 98);
	assert_int_equal(fsd_keep_get(&k, 1)->held, 1);
	assert_int_equal(fsd_keep_get(&k, 1)->token, 99);
	assert_int_equal(fsd_keep_get(&k, 2)->held, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_validates),
		cmocka_unit_test(test_bad_header_refused),
		cmocka_unit_test(test_damaged_record_refused),
		cmocka_unit_test(test_hold_and_drop),
		cmocka_unit_test(test_frozen_keeps_records),
	};

	return cmocka_run_group_tests_name("keep", tests, NULL, NULL);
}
