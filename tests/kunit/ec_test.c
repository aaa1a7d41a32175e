// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_ec: erasure coding of a page (kmod/ec.c).
 *
 * What a coded device will rely on: for each code it accepts, every set
 * of at most M lost pieces (data, P, Q, any mix) is rebuilt byte for byte
 * from the rest, parity included; more than M lost changes nothing and
 * says so; the codes lib/raid6 cannot make are refused.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "chunkmap.h"
#include "ec.h"

struct code_case {
	unsigned int k, m;
	const char *desc;
};

static const struct code_case code_cases[] = {
	{ 2, 1, "ec 2+1" },
	{ 4, 1, "ec 4+1" },
	{ 8, 1, "ec 8+1" },
	{ 2, 2, "ec 2+2" },
	{ 4, 2, "ec 4+2" },
	{ 8, 2, "ec 8+2" },
};

KUNIT_ARRAY_PARAM_DESC(code, code_cases, desc);

struct coded {
	struct farswap_ec ec;
	u8 *page, *want;
	void *parity[FARSWAP_EC_MAX_PARITY];
	void *want_parity[FARSWAP_EC_MAX_PARITY];
};

/* A page of random bytes, coded; its copies to compare with. */
static void coded_init(struct kunit *test, struct coded *c,
		       const struct code_case *cc, u64 seed)
{
	struct rnd_state rnd;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, farswap_ec_init(&c->ec, cc->k, cc->m), 0);
	/* Page-sized kmallocs are page aligned: lib/raid6 wants 64 bytes. */
	c->page = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	c->want = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->page);
	KUNIT_ASSERT_NOT_NULL(test, c->want);
	for (i = 0; i < FARSWAP_EC_MAX_PARITY; i++) {
		c->parity[i] = kunit_kmalloc(test, c->ec.piece, GFP_KERNEL);
		c->want_parity[i] = kunit_kmalloc(test, c->ec.piece,
						  GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, c->parity[i]);
		KUNIT_ASSERT_NOT_NULL(test, c->want_parity[i]);
		KUNIT_ASSERT_EQ(test, (unsigned long)c->parity[i] % 64, 0);
	}
	prandom_seed_state(&rnd, seed);
	prandom_bytes_state(&rnd, c->page, FARSWAP_PAGE_BYTES);
	farswap_ec_encode(&c->ec, c->page, c->parity);
	memcpy(c->want, c->page, FARSWAP_PAGE_BYTES);
	for (i = 0; i < c->ec.m; i++)
		memcpy(c->want_parity[i], c->parity[i], c->ec.piece);
}

/* Where member @j's piece is: a data piece of the page, or P or Q. */
static void *member(struct coded *c, unsigned int j)
{
	return j < c->ec.k ? c->page + j * c->ec.piece : c->parity[j - c->ec.k];
}

static void expect_whole(struct kunit *test, struct coded *c,
			 unsigned long lost)
{
	unsigned int i;

	KUNIT_EXPECT_EQ_MSG(test, memcmp(c->page, c->want, FARSWAP_PAGE_BYTES), 0,
			    "page after losing %#lx", lost);
	for (i = 0; i < c->ec.m; i++)
		KUNIT_EXPECT_EQ_MSG(test, memcmp(c->parity[i], c->want_parity[i],
						 c->ec.piece), 0,
				    "parity %u after losing %#lx", i, lost);
}

/*
 * Every set of at most m lost members, each lost piece overwritten with
 * garbage first (as a dead donor's or a damaged piece would be), is
 * rebuilt exactly.
 */
static void rebuild_every_loss_test(struct kunit *test)
{
	const struct code_case *cc = test->param_value;
	unsigned int w = cc->k + cc->m, j, seen = 0;
	struct coded c;
	unsigned long lost;

	coded_init(test, &c, cc, 1000 + w);
	for (lost = 1; lost < BIT(w); lost++) {
		if (hweight_long(lost) > cc->m)
			continue;
		for (j = 0; j < w; j++)
			if (lost & BIT(j))
				memset(member(&c, j), 0xa5 ^ j, c.ec.piece);
		KUNIT_ASSERT_EQ(test, farswap_ec_rebuild(&c.ec, c.page, c.parity,
							 lost), 0);
		expect_whole(test, &c, lost);
		seen++;
	}
	/* w + (w choose 2) loss sets with two parity pieces, w with one. */
	KUNIT_EXPECT_EQ(test, seen, cc->m == 2 ? w + w * (w - 1) / 2 : w);
}

/* Nothing lost: nothing changes. */
static void rebuild_nothing_test(struct kunit *test)
{
	const struct code_case *cc = test->param_value;
	struct coded c;

	coded_init(test, &c, cc, 7);
	KUNIT_EXPECT_EQ(test, farswap_ec_rebuild(&c.ec, c.page, c.parity, 0), 0);
	expect_whole(test, &c, 0);
}

/*
 * More than m lost, or a member the code does not have: -EINVAL, and not
 * a byte of the page or its parity is touched.
 */
static void rebuild_too_many_test(struct kunit *test)
{
	const struct code_case *cc = test->param_value;
	unsigned int w = cc->k + cc->m;
	struct coded c;

	coded_init(test, &c, cc, 99);
	KUNIT_EXPECT_EQ(test, farswap_ec_rebuild(&c.ec, c.page, c.parity,
						 GENMASK(cc->m, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, farswap_ec_rebuild(&c.ec, c.page, c.parity,
						 BIT(w)), -EINVAL);
	KUNIT_EXPECT_EQ(test, farswap_ec_rebuild(&c.ec, c.page, c.parity,
						 GENMASK(w - 1, 0)), -EINVAL);
	expect_whole(test, &c, 0);
}

/*
 * The code is the page's: a changed byte changes the parity of its piece
 * (P always; Q too with two), and a page of zeros codes to zeros.
 */
static void encode_test(struct kunit *test)
{
	const struct code_case *cc = test->param_value;
	struct coded c;
	unsigned int i;

	coded_init(test, &c, cc, 5);
	c.page[c.ec.piece + 3] ^= 0x10;
	farswap_ec_encode(&c.ec, c.page, c.parity);
	for (i = 0; i < c.ec.m; i++)
		KUNIT_EXPECT_NE(test, memcmp(c.parity[i], c.want_parity[i],
					     c.ec.piece), 0);
	memset(c.page, 0, FARSWAP_PAGE_BYTES);
	farswap_ec_encode(&c.ec, c.page, c.parity);
	for (i = 0; i < c.ec.m; i++)
		KUNIT_EXPECT_TRUE(test, !memchr_inv(c.parity[i], 0, c.ec.piece));
}

/* What lib/raid6 cannot make, or more members than donors, is refused. */
static void init_test(struct kunit *test)
{
	static const unsigned int bad[][2] = {
		{ 1, 1 }, { 3, 2 }, { 6, 2 }, { 4, 0 }, { 4, 3 }, { 16, 0 },
		{ 16, 1 }, { 32, 1 }, { 0, 2 },
	};
	struct farswap_ec ec;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_ec_init(&ec, bad[i][0], bad[i][1]),
				    -EINVAL, "ec %u+%u", bad[i][0], bad[i][1]);
	KUNIT_ASSERT_EQ(test, farswap_ec_init(&ec, 8, 2), 0);
	KUNIT_EXPECT_EQ(test, ec.piece, 512);
	KUNIT_ASSERT_EQ(test, farswap_ec_init(&ec, 2, 1), 0);
	KUNIT_EXPECT_EQ(test, ec.piece, 2048);
}

static struct kunit_case farswap_ec_cases[] = {
	KUNIT_CASE_PARAM(rebuild_every_loss_test, code_gen_params),
	KUNIT_CASE_PARAM(rebuild_nothing_test, code_gen_params),
	KUNIT_CASE_PARAM(rebuild_too_many_test, code_gen_params),
	KUNIT_CASE_PARAM(encode_test, code_gen_params),
	KUNIT_CASE(init_test),
	{}
};

static struct kunit_suite farswap_ec_suite = {
	.name = "farswap_ec",
	.test_cases = farswap_ec_cases,
};

kunit_test_suite(farswap_ec_suite);
