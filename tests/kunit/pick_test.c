// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_pick: the power of two choices (kmod/pick.c).
 *
 * kmod/slab.c picks two donors with farswap_pick_two() from two
 * random numbers, refreshes their free counts, and asks donors in the
 * order farswap_pick_order() gives until one grants a slab.  The tests
 * feed the random numbers themselves, so "random" choices are checked
 * exhaustively: every ordered pair of usable donors must come out of
 * exactly one pair of inputs, and no unusable donor ever does.
 */
#include <kunit/test.h>
#include <linux/bitops.h>

#include "pick.h"

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

static void fill_views(struct farswap_pick_view *v, unsigned int nr,
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
	struct farswap_pick_view v[FARSWAP_MAX_DONORS] = {};
	/* seen[a][b]: how many inputs chose the ordered pair (a, b). */
	u8 seen[FARSWAP_MAX_DONORS][FARSWAP_MAX_DONORS] = {};
	unsigned int k = hweight32(c->usable), a, b;
	u32 r1, r2;
	int cand[2];

	fill_views(v, c->nr, c->usable);

	if (k < 2) {
		int n = farswap_pick_two(v, c->nr, 12345, U32_MAX, cand);

		KUNIT_ASSERT_EQ(test, n, (int)k);
		if (k)
			KUNIT_EXPECT_EQ(test, cand[0], __ffs(c->usable));
		return;
	}

	/* Random numbers below k * (k - 1) reach every choice once. */
	for (r1 = 0; r1 < k; r1++) {
		for (r2 = 0; r2 < k - 1; r2++) {
			int n = farswap_pick_two(v, c->nr, r1, r2, cand);

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
		n = farswap_pick_two(v, c->nr, r1, r2, cand);
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
	struct farswap_pick_view v[6] = {};
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

	n = farswap_pick_order(v, c->nr, c->cand, c->nr_cand, order);
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
	struct farswap_pick_view v[FARSWAP_MAX_DONORS];
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
		nc = farswap_pick_two(v, nr, mask, mask / 3, cand);
		order[nr] = 0x7777;
		n = farswap_pick_order(v, nr, cand, nc, order);
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

/*
 * Failure domains
 */

static void domain_ids_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "", "rackB", "rackA",
					     NULL, "rackB", "rackC" };
	static const u8 want[] = { 0, 1, 2, 0, 4, 2, 6 };
	u8 ids[ARRAY_SIZE(names)];
	unsigned int i;

	farswap_pick_domain_ids(names, ARRAY_SIZE(names), ids);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		KUNIT_EXPECT_EQ_MSG(test, ids[i], want[i], "donor %u", i);
	/* Unknown domains are not counted. */
	KUNIT_EXPECT_EQ(test, farswap_pick_nr_domains(names, ARRAY_SIZE(names)),
			3);
	KUNIT_EXPECT_EQ(test, farswap_pick_nr_domains(names, 2), 1);
	KUNIT_EXPECT_EQ(test, farswap_pick_nr_domains(names + 1, 1), 0);
}

static void colocated_test(struct kunit *test)
{
	static const u8 two_apart[] = { 0, 2 }, two_same[] = { 3, 3 },
			three_apart[] = { 0, 1, 2 }, three_two[] = { 0, 2, 0 };

	KUNIT_EXPECT_FALSE(test, farswap_pick_colocated(two_apart, 2));
	KUNIT_EXPECT_TRUE(test, farswap_pick_colocated(two_same, 2));
	KUNIT_EXPECT_FALSE(test, farswap_pick_colocated(three_apart, 3));
	KUNIT_EXPECT_TRUE(test, farswap_pick_colocated(three_two, 3));
	KUNIT_EXPECT_FALSE(test, farswap_pick_colocated(two_same, 1));
	KUNIT_EXPECT_FALSE(test, farswap_pick_colocated(two_same, 0));
}

/*
 * One replica of a chunk the way rslab.c asks for a slab: two choices
 * among the donors outside the chunk's domains (@avoid), then the order;
 * the first donor in it with room grants.  Donors in @exclude hold the
 * chunk already.  Returns the donor, or -1.
 */
static int place_one(struct farswap_pick_view *v, unsigned int nr,
		     unsigned long exclude, unsigned long avoid, u32 rnd)
{
	struct farswap_pick_view w[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS], nc, n, i;

	for (i = 0; i < (int)nr; i++) {
		w[i] = v[i];
		w[i].usable = v[i].usable && !(exclude & BIT(i));
	}
	nc = farswap_pick_two_dom(w, nr, avoid, rnd, rnd * 2654435761u,
					cand);
	n = farswap_pick_order_dom(w, nr, avoid, cand, nc, order);
	for (i = 0; i < n; i++) {
		if (!v[order[i]].free)
			continue;	/* NO_SPACE: the next one is asked */
		v[order[i]].free--;
		return order[i];
	}
	return -1;
}

/* Place a chunk's @want replicas; returns how many, fills @donor. */
static unsigned int place_chunk(struct farswap_pick_view *v, unsigned int nr,
				unsigned int want, u32 rnd, int *donor)
{
	unsigned long exclude = 0, avoid = 0;
	unsigned int r;

	for (r = 0; r < want; r++) {
		int d = place_one(v, nr, exclude, avoid, rnd + r);

		if (d < 0)
			break;
		donor[r] = d;
		exclude |= BIT(d);
		avoid |= BIT(v[d].domain);
	}
	return r;
}

static void views_of(struct farswap_pick_view *v, const char *const *names,
		     unsigned int nr, u32 free)
{
	u8 ids[FARSWAP_MAX_DONORS];
	unsigned int i;

	farswap_pick_domain_ids(names, nr, ids);
	for (i = 0; i < nr; i++) {
		v[i].usable = true;
		v[i].free = free;
		v[i].domain = ids[i];
	}
}

/* 3 donors in 2 domains, 2 replicas: always in distinct domains. */
static void domains_distinct_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "rackA", "rackB" };
	struct farswap_pick_view v[3];
	unsigned int c, per_donor[3] = {};
	int donor[2];

	views_of(v, names, 3, 10000);
	for (c = 0; c < 2000; c++) {
		u8 dom[2];

		KUNIT_ASSERT_EQ(test, place_chunk(v, 3, 2, c * 7919, donor), 2);
		KUNIT_EXPECT_NE(test, donor[0], donor[1]);
		dom[0] = v[donor[0]].domain;
		dom[1] = v[donor[1]].domain;
		KUNIT_EXPECT_FALSE_MSG(test, farswap_pick_colocated(dom, 2),
				       "chunk %u on donors %d and %d", c,
				       donor[0], donor[1]);
		per_donor[donor[0]]++;
		per_donor[donor[1]]++;
	}
	/* Every chunk has its rackB replica on the one rackB donor. */
	KUNIT_EXPECT_EQ(test, per_donor[2], 2000);
	/* rackA's replicas still spread over both rackA donors. */
	KUNIT_EXPECT_GT(test, per_donor[0], 500);
	KUNIT_EXPECT_GT(test, per_donor[1], 500);
}

/* All donors in one domain: placement works as before, all colocated. */
static void domains_one_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "rackA", "rackA" };
	struct farswap_pick_view v[3];
	unsigned int c, colocated = 0;
	int donor[3];

	views_of(v, names, 3, 10000);
	for (c = 0; c < 500; c++) {
		u8 dom[2];

		KUNIT_ASSERT_EQ(test, place_chunk(v, 3, 2, c, donor), 2);
		KUNIT_EXPECT_NE(test, donor[0], donor[1]);
		dom[0] = v[donor[0]].domain;
		dom[1] = v[donor[1]].domain;
		colocated += farswap_pick_colocated(dom, 2);
	}
	KUNIT_EXPECT_EQ(test, colocated, 500);
	/* Three replicas on three donors of one domain. */
	KUNIT_ASSERT_EQ(test, place_chunk(v, 3, 3, 1, donor), 3);
	KUNIT_EXPECT_NE(test, donor[0], donor[1]);
	KUNIT_EXPECT_NE(test, donor[1], donor[2]);
	KUNIT_EXPECT_NE(test, donor[0], donor[2]);
	/* Nothing outside the one domain has room. */
	KUNIT_EXPECT_FALSE(test, farswap_pick_room_outside(v, 3, BIT(0)));
	KUNIT_EXPECT_TRUE(test, farswap_pick_room_outside(v, 3, 0));
}

/*
 * rackB fills up: until then every chunk has a replica there; after, the
 * second replica falls back to the other rackA donor (never the same
 * donor), and only those chunks are colocated.
 */
static void domains_full_fallback_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "rackA", "rackB" };
	struct farswap_pick_view v[3];
	unsigned int c, colocated = 0, fallback = 0;
	int donor[2];

	views_of(v, names, 3, 1000);
	v[2].free = 40;
	for (c = 0; c < 300; c++) {
		bool b_had_room = v[2].free > 0;
		u8 dom[2];

		KUNIT_ASSERT_EQ(test, place_chunk(v, 3, 2, c * 31, donor), 2);
		KUNIT_EXPECT_NE(test, donor[0], donor[1]);
		dom[0] = v[donor[0]].domain;
		dom[1] = v[donor[1]].domain;
		if (farswap_pick_colocated(dom, 2)) {
			colocated++;
			KUNIT_EXPECT_FALSE_MSG(test, b_had_room,
					       "chunk %u colocated while rackB had room",
					       c);
		}
		fallback += !b_had_room;
	}
	KUNIT_EXPECT_EQ(test, v[2].free, 0);
	KUNIT_EXPECT_EQ(test, colocated, 300 - 40);
	KUNIT_EXPECT_EQ(test, fallback, 300 - 40);
	/* The other domain has no room: a replica may share one at once. */
	KUNIT_EXPECT_FALSE(test, farswap_pick_room_outside(v, 3, BIT(0)));
	v[2].free = 1;
	KUNIT_EXPECT_TRUE(test, farswap_pick_room_outside(v, 3, BIT(0)));
	v[2].usable = false;
	KUNIT_EXPECT_FALSE(test, farswap_pick_room_outside(v, 3, BIT(0)));
}

/*
 * Re-replication after a donor died: the new replica goes to a domain
 * the surviving replica is not in, when a donor there has room.
 */
static void domains_repair_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "rackA", "rackB" };
	struct farswap_pick_view v[3];
	u32 rnd;

	views_of(v, names, 3, 100);
	/* Replicas on donor 0 (rackA) and 2 (rackB); donor 0 died. */
	v[0].usable = false;
	for (rnd = 0; rnd < 64; rnd++)
		KUNIT_EXPECT_EQ(test, place_one(v, 3, BIT(2), BIT(v[2].domain),
						rnd), 1);
	/*
	 * Replicas on donors 1 (rackA) and 2 (rackB); donor 2 died and
	 * rackB has no other donor: the copy goes to rackA's donor 0.
	 */
	v[0].usable = true;
	v[2].usable = false;
	KUNIT_EXPECT_EQ(test, place_one(v, 3, BIT(1), BIT(v[1].domain), 3), 0);
	/* A colocated chunk (donors 0 and 1) that lost donor 1 gets rackB. */
	v[2].usable = true;
	for (rnd = 0; rnd < 64; rnd++)
		KUNIT_EXPECT_EQ(test, place_one(v, 3, BIT(0), BIT(v[0].domain),
						rnd), 2);
	/* rackB full: the copy stays in rackA rather than not being made. */
	v[2].free = 0;
	KUNIT_EXPECT_EQ(test, place_one(v, 3, BIT(0), BIT(v[0].domain), 5), 1);
}

/*
 * The order for a replica of a chunk in rackA (domain 0): rackB and
 * rackC donors first (the candidates, then by room), rackA's last, by
 * room; unusable donors never.
 */
static void order_dom_test(struct kunit *test)
{
	static const char *const names[] = { "rackA", "rackB", "rackA",
					     "rackC", "rackA", "rackB" };
	struct farswap_pick_view v[6];
	static const u32 free[] = { 9, 1, 7, 5, 8, 3 };
	/* Candidates by room (3 before 5), rackB's 1, then rackA by room. */
	static const int want[] = { 3, 5, 1, 0, 4, 2 };
	int cand[2] = { 5, 3 }, order[7], n, i;

	views_of(v, names, 6, 0);
	for (i = 0; i < 6; i++)
		v[i].free = free[i];
	order[6] = 0x7777;
	n = farswap_pick_order_dom(v, 6, BIT(0), cand, 2, order);
	KUNIT_ASSERT_EQ(test, n, 6);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, order[i], want[i], "position %d", i);
	KUNIT_EXPECT_EQ(test, order[6], 0x7777);

	/* The two choices are drawn outside rackA whatever the numbers. */
	for (i = 0; i < 1000; i++) {
		int nc = farswap_pick_two_dom(v, 6, BIT(0), i, i * 13,
						    cand);

		KUNIT_ASSERT_EQ(test, nc, 2);
		KUNIT_EXPECT_NE(test, v[cand[0]].domain, 0);
		KUNIT_EXPECT_NE(test, v[cand[1]].domain, 0);
	}
	/* Only rackA usable: chosen there, as without domains. */
	v[1].usable = v[3].usable = v[5].usable = false;
	KUNIT_EXPECT_EQ(test, farswap_pick_two_dom(v, 6, BIT(0), 1, 2,
							 cand), 2);
	KUNIT_EXPECT_EQ(test, v[cand[0]].domain, 0);
	n = farswap_pick_order_dom(v, 6, BIT(0), cand, 2, order);
	KUNIT_EXPECT_EQ(test, n, 3);
}

static struct kunit_case farswap_pick_cases[] = {
	KUNIT_CASE_PARAM(pick_two_test, usable_gen_params),
	KUNIT_CASE_PARAM(order_test, order_gen_params),
	KUNIT_CASE(order_is_permutation_test),
	KUNIT_CASE(domain_ids_test),
	KUNIT_CASE(colocated_test),
	KUNIT_CASE(domains_distinct_test),
	KUNIT_CASE(domains_one_test),
	KUNIT_CASE(domains_full_fallback_test),
	KUNIT_CASE(domains_repair_test),
	KUNIT_CASE(order_dom_test),
	{}
};

static struct kunit_suite farswap_pick_suite = {
	.name = "farswap_pick",
	.test_cases = farswap_pick_cases,
};

kunit_test_suite(farswap_pick_suite);
