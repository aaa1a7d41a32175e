// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_place: the power of two choices (kmod/place.c).
 *
 * kmod/slab.c picks two donors with farswap_place_pick_two() from two
 * random numbers, refreshes their free counts, and asks donors in the
 * order farswap_place_order() gives until one grants a slab.  The tests
 * feed the random numbers themselves, so "random" choices are checked
 * exhaustively: every ordered pair of usable donors must come out of
 * exactly one pair of inputs, and no unusable donor ever does.
 */
#include <kunit/test.h>
#include <linux/bitops.h>

#include "place.h"

struct usable_case {
	const char *desc;
	unsigned int nr;	/* donors */
	u32 usable;		/* bit i: donor i is usable */
};

static const struct usable_case usable_cases[] = {
	{ "no donor", 0, 0 },
	{ "16 donors, none usable", 16, 0 },
	{ "one donor, usable", 1, 0x1 },
	{ "one usable, the last of 16", 16, 0x8000 },
	{ "two usable, first and last of 16", 16, 0x8001 },
	{ "three usable of 5, with gaps", 5, 0x15 },
	{ "every other of 16 usable", 16, 0x5555 },
	{ "all 16 usable", 16, 0xffff },
};

KUNIT_ARRAY_PARAM_DESC(usable, usable_cases, desc);

static void fill_views(struct farswap_place_view *v, unsigned int nr,
		       u32 usable)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		v[i].usable = usable & BIT(i);
		v[i].free = 100 + i;
	}
}

static void pick_two_test(struct kunit *test)
{
	const struct usable_case *c = test->param_value;
	struct farswap_place_view v[FARSWAP_MAX_DONORS] = {};
	/* seen[a][b]: how many inputs chose the ordered pair (a, b). */
	u8 seen[FARSWAP_MAX_DONORS][FARSWAP_MAX_DONORS] = {};
	unsigned int k = hweight32(c->usable), a, b;
	u32 r1, r2;
	int cand[2];

	fill_views(v, c->nr, c->usable);

	if (k < 2) {
		int n = farswap_place_pick_two(v, c->nr, 12345, U32_MAX, cand);

		KUNIT_ASSERT_EQ(test, n, (int)k);
		if (k)
			KUNIT_EXPECT_EQ(test, cand[0], __ffs(c->usable));
		return;
	}

	/* Random numbers below k * (k - 1) reach every choice once. */
	for (r1 = 0; r1 < k; r1++) {
		for (r2 = 0; r2 < k - 1; r2++) {
			int n = farswap_place_pick_two(v, c->nr, r1, r2, cand);

			KUNIT_ASSERT_EQ(test, n, 2);
			KUNIT_ASSERT_GE(test, cand[0], 0);
			KUNIT_ASSERT_GE(test, cand[1], 0);
			KUNIT_ASSERT_LT(test, cand[0], (int)c->nr);
			KUNIT_ASSERT_LT(test, cand[1], (int)c->nr);
			KUNIT_EXPECT_NE(test, cand[0], cand[1]);
			KUNIT_EXPECT_TRUE(test, v[cand[0]].usable);
			KUNIT_EXPECT_TRUE(test, v[cand[1]].usable);
			seen[cand[0]][cand[1]]++;
		}
	}
	for (a = 0; a < c->nr; a++) {
		for (b = 0; b < c->nr; b++) {
			bool pair = a != b && v[a].usable && v[b].usable;

			KUNIT_EXPECT_EQ_MSG(test, seen[a][b], pair ? 1 : 0,
					    "pair (%u, %u)", a, b);
		}
	}

	/* Any random numbers at all, however large, stay in range. */
	for (a = 0; a < 64; a++) {
		int n;

		r1 = U32_MAX - a * 977;
		r2 = ~r1 ^ (a * 31);
		n = farswap_place_pick_two(v, c->nr, r1, r2, cand);
		KUNIT_ASSERT_EQ(test, n, 2);
		KUNIT_EXPECT_NE(test, cand[0], cand[1]);
		KUNIT_ASSERT_LT(test, (unsigned int)cand[0], c->nr);
		KUNIT_ASSERT_LT(test, (unsigned int)cand[1], c->nr);
		KUNIT_EXPECT_TRUE(test, v[cand[0]].usable && v[cand[1]].usable);
	}
}

#define NONE	-1

struct order_case {
	const char *desc;
	unsigned int nr;
	u32 usable;
	u32 free[6];
	int cand[2];
	int nr_cand;
	int expect[6];		/* the order; NONE-terminated when short */
};

static const struct order_case order_cases[] = {
	{ "roomier candidate first, then the rest by room", 5, 0x1f,
	  { 5, 9, 2, 9, 0 }, { 2, 0 }, 2, { 0, 2, 1, 3, 4 } },
	{ "candidates ahead of roomier donors", 4, 0xf,
	  { 50, 1, 2, 60 }, { 1, 2 }, 2, { 2, 1, 3, 0 } },
	{ "tie between candidates: the first drawn first", 4, 0xf,
	  { 3, 7, 1, 7 }, { 3, 1 }, 2, { 3, 1, 0, 2 } },
	{ "tie among the rest: lower index first", 5, 0x1f,
	  { 4, 4, 9, 4, 4 }, { 2, NONE }, 1, { 2, 0, 1, 3, 4 } },
	{ "unusable donors left out", 5, 0x15,
	  { 1, 99, 2, 99, 3 }, { 4, 0 }, 2, { 4, 0, 2, NONE } },
	{ "unusable candidate left out", 4, 0xd,
	  { 1, 99, 2, 3 }, { 1, 2 }, 2, { 2, 3, 0, NONE } },
	{ "out-of-range candidates ignored", 3, 0x7,
	  { 1, 2, 3 }, { NONE, 3 }, 2, { 2, 1, 0 } },
	{ "one candidate drawn twice", 3, 0x7,
	  { 1, 2, 3 }, { 0, 0 }, 2, { 0, 2, 1 } },
	{ "no candidates: everyone by room", 4, 0xf,
	  { 0, 10, 5, 10 }, { NONE, NONE }, 0, { 1, 3, 2, 0 } },
	{ "nobody usable", 3, 0,
	  { 1, 2, 3 }, { 0, 1 }, 2, { NONE } },
	{ "no free slab anywhere: still asked", 3, 0x7,
	  { 0, 0, 0 }, { 2, 1 }, 2, { 2, 1, 0 } },
};

KUNIT_ARRAY_PARAM_DESC(order, order_cases, desc);

static void order_test(struct kunit *test)
{
	const struct order_case *c = test->param_value;
	struct farswap_place_view v[6] = {};
	int order[6 + 1], want = 0, n, i;

	for (i = 0; i < (int)c->nr; i++) {
		v[i].usable = c->usable & BIT(i);
		v[i].free = c->free[i];
	}
	while (want < (int)ARRAY_SIZE(c->expect) && want < (int)c->nr &&
	       c->expect[want] != NONE)
		want++;
	/* The order holds at most nr donors: the entry after must survive. */
	for (i = 0; i < (int)ARRAY_SIZE(order); i++)
		order[i] = 0x7777;

	n = farswap_place_order(v, c->nr, c->cand, c->nr_cand, order);
	KUNIT_ASSERT_EQ(test, n, want);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, order[i], c->expect[i], "position %d",
				    i);
	KUNIT_EXPECT_EQ(test, order[c->nr], 0x7777);
}

/*
 * Whatever the candidates, the order lists every usable donor exactly
 * once (a slab is only refused when every live donor refused it), and
 * never lists more than nr.
 */
static void order_is_permutation_test(struct kunit *test)
{
	struct farswap_place_view v[FARSWAP_MAX_DONORS];
	int order[FARSWAP_MAX_DONORS + 1], cand[2];
	unsigned int mask, nr = 7, i;

	for (mask = 0; mask < BIT(nr); mask++) {
		unsigned int seen = 0;
		int n, nc;

		for (i = 0; i < nr; i++) {
			v[i].usable = mask & BIT(i);
			/* Free counts with ties, differing per mask. */
			v[i].free = (mask * 7 + i * 3) % 5;
		}
		nc = farswap_place_pick_two(v, nr, mask, mask / 3, cand);
		order[nr] = 0x7777;
		n = farswap_place_order(v, nr, cand, nc, order);
		KUNIT_ASSERT_EQ_MSG(test, n, hweight32(mask), "mask %#x", mask);
		KUNIT_EXPECT_EQ(test, order[nr], 0x7777);
		for (i = 0; i < n; i++) {
			KUNIT_ASSERT_TRUE_MSG(test, order[i] >= 0 &&
					      order[i] < nr &&
					      v[order[i]].usable,
					      "mask %#x position %u: %d", mask,
					      i, order[i]);
			KUNIT_EXPECT_FALSE_MSG(test, seen & BIT(order[i]),
					       "mask %#x: donor %d twice",
					       mask, order[i]);
			seen |= BIT(order[i]);
		}
		/* The drawn candidates lead, the roomier one first. */
		if (nc == 2) {
			int first = v[cand[1]].free > v[cand[0]].free;

			KUNIT_EXPECT_EQ(test, order[0], cand[first]);
			KUNIT_EXPECT_EQ(test, order[1], cand[!first]);
		}
		/* Behind them, room never increases. */
		for (i = nc + 1; i < n; i++)
			KUNIT_EXPECT_GE_MSG(test, v[order[i - 1]].free,
					    v[order[i]].free, "mask %#x", mask);
	}
}

static struct kunit_case farswap_place_cases[] = {
	KUNIT_CASE_PARAM(pick_two_test, usable_gen_params),
	KUNIT_CASE_PARAM(order_test, order_gen_params),
	KUNIT_CASE(order_is_permutation_test),
	{}
};

static struct kunit_suite farswap_place_suite = {
	.name = "farswap_place",
	.test_cases = farswap_place_cases,
};

kunit_test_suite(farswap_place_suite);
