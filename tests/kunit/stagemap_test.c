// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_stagemap: the staging area's bookkeeping
 * (kmod/stagemap.c): which staged write a read of a chunk is served from,
 * when a read or a newer write waits, and a write queue's free staging
 * slots.
 *
 * The ordering cases replay a chunk's staged writes in the order the
 * device stages them (oldest first on the list), and check the rule that
 * keeps swap's pages right: a page reads as its newest staged version,
 * and no older version is written after a newer one.
 */
#include <kunit/test.h>
#include <linux/prandom.h>

#include "stagemap.h"

#define NR_STAGED	8

struct staged_set {
	struct list_head list;
	struct farswap_staged w[NR_STAGED];
	unsigned int n;
};

static void set_init(struct staged_set *set)
{
	INIT_LIST_HEAD(&set->list);
	set->n = 0;
}

static struct farswap_staged *stage(struct staged_set *set, u32 first,
				    u32 nr)
{
	struct farswap_staged *s = &set->w[set->n++];

	s->first_page = first;
	s->nr_pages = nr;
	list_add_tail(&s->node, &set->list);
	return s;
}

static void read_none_test(struct kunit *test)
{
	const struct farswap_staged *from = NULL;
	struct staged_set set;

	set_init(&set);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 0, 16, &from),
			FARSWAP_STAGE_NONE);
	stage(&set, 16, 16);
	/* Adjacent on either side is not overlapping. */
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 0, 16, &from),
			FARSWAP_STAGE_NONE);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 32, 1, &from),
			FARSWAP_STAGE_NONE);
	KUNIT_EXPECT_NULL(test, from);
}

static void read_serve_test(struct kunit *test)
{
	const struct farswap_staged *from = NULL;
	struct staged_set set;
	struct farswap_staged *a;

	set_init(&set);
	a = stage(&set, 16, 16);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 16, 16, &from),
			FARSWAP_STAGE_SERVE);
	KUNIT_EXPECT_PTR_EQ(test, from, (const struct farswap_staged *)a);
	from = NULL;
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 31, 1, &from),
			FARSWAP_STAGE_SERVE);
	KUNIT_EXPECT_PTR_EQ(test, from, (const struct farswap_staged *)a);
}

/* A read past either end of the staged write waits: the rest is elsewhere. */
static void read_partial_waits_test(struct kunit *test)
{
	const struct farswap_staged *from = NULL;
	struct staged_set set;

	set_init(&set);
	stage(&set, 16, 16);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 15, 2, &from),
			FARSWAP_STAGE_WAIT);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 31, 2, &from),
			FARSWAP_STAGE_WAIT);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 0, 64, &from),
			FARSWAP_STAGE_WAIT);
	KUNIT_EXPECT_NULL(test, from);
}

/* The newest version of a page is served, never an older one. */
static void read_newest_test(struct kunit *test)
{
	const struct farswap_staged *from = NULL;
	struct staged_set set;
	struct farswap_staged *new;

	set_init(&set);
	stage(&set, 0, 16);
	new = stage(&set, 4, 4);
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 4, 4, &from),
			FARSWAP_STAGE_SERVE);
	KUNIT_EXPECT_PTR_EQ(test, from, (const struct farswap_staged *)new);
	/*
	 * Pages 0-7: the newest over page 4 holds only 4-7; the older one
	 * holds 0-7 but not the newest 4-7.  Wait.
	 */
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 0, 8, &from),
			FARSWAP_STAGE_WAIT);
	/* Pages 0-3 only the older one holds. */
	KUNIT_EXPECT_EQ(test, farswap_stage_read(&set.list, 0, 4, &from),
			FARSWAP_STAGE_SERVE);
	KUNIT_EXPECT_PTR_EQ(test, from, (const struct farswap_staged *)&set.w[0]);
}

static void write_order_test(struct kunit *test)
{
	struct staged_set set;
	struct farswap_staged *a, *b, *c;

	set_init(&set);
	a = stage(&set, 0, 16);
	b = stage(&set, 32, 16);
	c = stage(&set, 8, 4);
	/* The oldest goes at once, and one with no older overlap. */
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, a, 0, 16),
			FARSWAP_STAGE_NONE);
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, b, 32, 16),
			FARSWAP_STAGE_NONE);
	/* c overlaps the older a: it waits for it. */
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, c, 8, 4),
			FARSWAP_STAGE_WAIT);
	/* a written: c goes. */
	list_del(&a->node);
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, c, 8, 4),
			FARSWAP_STAGE_NONE);
	/* A write not staged waits for any staged write it overlaps. */
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, NULL, 11, 1),
			FARSWAP_STAGE_WAIT);
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, NULL, 47, 8),
			FARSWAP_STAGE_WAIT);
	KUNIT_EXPECT_EQ(test, farswap_stage_write(&set.list, NULL, 12, 20),
			FARSWAP_STAGE_NONE);
}

/*
 * Random staged writes over 64 pages, each written (taken off the list)
 * only when farswap_stage_write() lets it go, in a random order among
 * those it lets go.  The pages' last written versions must be the
 * newest staged ones, and a read served from staging must always see
 * the newest version of its pages.
 */
static void order_random_test(struct kunit *test)
{
	struct rnd_state rnd;
	unsigned int round;

	prandom_seed_state(&rnd, 42);
	for (round = 0; round < 200; round++) {
		struct staged_set set;
		int newest[64], landed[64];
		bool done[NR_STAGED] = { };
		unsigned int i, p, left = NR_STAGED;

		set_init(&set);
		for (p = 0; p < 64; p++)
			newest[p] = landed[p] = -1;
		for (i = 0; i < NR_STAGED; i++) {
			u32 first = prandom_u32_state(&rnd) % 64;
			u32 nr = 1 + prandom_u32_state(&rnd) % (64 - first);

			nr = min(nr, 16U);
			stage(&set, first, nr);
			for (p = first; p < first + nr; p++)
				newest[p] = i;
		}
		while (left) {
			unsigned int go[NR_STAGED], n = 0, pick;
			const struct farswap_staged *from;
			u32 first = prandom_u32_state(&rnd) % 64;

			/* A read of one page sees its newest version. */
			if (farswap_stage_read(&set.list, first, 1, &from) ==
			    FARSWAP_STAGE_SERVE)
				KUNIT_EXPECT_EQ(test, (int)(from - set.w),
						newest[first]);
			for (i = 0; i < NR_STAGED; i++)
				if (!done[i] &&
				    farswap_stage_write(&set.list, &set.w[i],
							set.w[i].first_page,
							set.w[i].nr_pages) ==
				    FARSWAP_STAGE_NONE)
					go[n++] = i;
			/* The oldest left can always go: no deadlock. */
			KUNIT_ASSERT_GT(test, n, 0U);
			pick = go[prandom_u32_state(&rnd) % n];
			for (p = set.w[pick].first_page;
			     p < set.w[pick].first_page + set.w[pick].nr_pages; p++)
				landed[p] = pick;
			list_del(&set.w[pick].node);
			done[pick] = true;
			left--;
		}
		for (p = 0; p < 64; p++)
			KUNIT_EXPECT_EQ(test, landed[p], newest[p]);
	}
}

static void slots_test(struct kunit *test)
{
	struct farswap_stage_slots s;
	u16 free[4];
	int i;

	farswap_stage_slots_init(&s, free, 4);
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, farswap_stage_slots_get(&s), i);
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_get(&s), -ENOSPC);
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 4);
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 2));
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 3);
	/* The slot given back last is taken first. */
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_get(&s), 2);
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 0));
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 1));
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 2));
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 3));
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 0);
}

/* A put that cannot be right changes nothing. */
static void slots_bad_put_test(struct kunit *test)
{
	struct farswap_stage_slots s;
	u16 free[2];

	farswap_stage_slots_init(&s, free, 2);
	KUNIT_EXPECT_FALSE(test, farswap_stage_slots_put(&s, 0));
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_get(&s), 0);
	KUNIT_EXPECT_FALSE(test, farswap_stage_slots_put(&s, 2));
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 1);
	KUNIT_EXPECT_TRUE(test, farswap_stage_slots_put(&s, 0));
	KUNIT_EXPECT_EQ(test, farswap_stage_slots_used(&s), 0);
}

static struct kunit_case farswap_stagemap_cases[] = {
	KUNIT_CASE(read_none_test),
	KUNIT_CASE(read_serve_test),
	KUNIT_CASE(read_partial_waits_test),
	KUNIT_CASE(read_newest_test),
	KUNIT_CASE(write_order_test),
	KUNIT_CASE(order_random_test),
	KUNIT_CASE(slots_test),
	KUNIT_CASE(slots_bad_put_test),
	{}
};

static struct kunit_suite farswap_stagemap_suite = {
	.name = "farswap_stagemap",
	.test_cases = farswap_stagemap_cases,
};

kunit_test_suite(farswap_stagemap_suite);
