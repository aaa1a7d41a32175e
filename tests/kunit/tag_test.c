// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_tag: per-page integrity tags (kmod/tag.c).
 *
 * What the read path relies on: a tag changes with any change of the page
 * that a donor could make (a flipped bit, zeroed bytes, another page's
 * contents, an older copy of the same page) and with the page's place
 * (index), write version and device; the same page written the same way
 * always gets the same tag.
 *
 * And what the write path relies on (farswap_tag_next/_matches): each
 * write of a page takes the next version, even when writes of one page
 * run at once, and the version and tag a read sees are one write's.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "chunkmap.h"
#include "tag.h"

struct tag_ctx {
	struct farswap_tag_key key;
	u8 *a, *b;
};

static int tag_init(struct kunit *test)
{
	struct tag_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct rnd_state rnd;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->a = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	c->b = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->a);
	KUNIT_ASSERT_NOT_NULL(test, c->b);
	prandom_seed_state(&rnd, 42);
	prandom_bytes_state(&rnd, c->a, FARSWAP_PAGE_BYTES);
	prandom_bytes_state(&rnd, c->b, FARSWAP_PAGE_BYTES);
	test->priv = c;
	return 0;
}

static const enum farswap_tag_alg checked_algs[] = {
	FARSWAP_TAG_SIPHASH, FARSWAP_TAG_CRC32C,
};

static void names_test(struct kunit *test)
{
	enum farswap_tag_alg alg;
	int i;

	for (i = 0; i < FARSWAP_TAG_NR_ALGS; i++) {
		KUNIT_EXPECT_EQ(test,
				farswap_tag_alg_parse(farswap_tag_alg_name(i),
						      &alg), 0);
		KUNIT_EXPECT_EQ(test, alg, i);
	}
	KUNIT_EXPECT_EQ(test, farswap_tag_alg_parse("sha1", &alg), -EINVAL);
	KUNIT_EXPECT_EQ(test, farswap_tag_alg_parse("", &alg), -EINVAL);
	KUNIT_EXPECT_EQ(test, farswap_tag_alg_parse("SIPHASH", &alg), -EINVAL);
	KUNIT_EXPECT_STREQ(test, farswap_tag_alg_name(FARSWAP_TAG_NR_ALGS),
			   "invalid");
}

static void stable_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(checked_algs); i++) {
		farswap_tag_key_init(&c->key, checked_algs[i]);
		KUNIT_EXPECT_EQ(test, farswap_tag_page(&c->key, 7, 3, c->a),
				farswap_tag_page(&c->key, 7, 3, c->a));
	}
}

static void off_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;

	farswap_tag_key_init(&c->key, FARSWAP_TAG_OFF);
	KUNIT_EXPECT_EQ(test, farswap_tag_page(&c->key, 7, 3, c->a), 0);
	KUNIT_EXPECT_EQ(test, farswap_tag_page(&c->key, 8, 1, c->b), 0);
}

/* Every single-bit flip of the page changes its tag. */
static void bit_flip_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	u32 bit, missed;
	int i;

	for (i = 0; i < ARRAY_SIZE(checked_algs); i++) {
		u64 good;

		farswap_tag_key_init(&c->key, checked_algs[i]);
		good = farswap_tag_page(&c->key, 1234, 9, c->a);
		for (missed = 0, bit = 0; bit < FARSWAP_PAGE_BYTES * 8; bit++) {
			c->a[bit / 8] ^= BIT(bit % 8);
			missed += farswap_tag_page(&c->key, 1234, 9, c->a) ==
				  good;
			c->a[bit / 8] ^= BIT(bit % 8);
		}
		KUNIT_EXPECT_EQ_MSG(test, missed, 0, "%s missed %u flips",
				    farswap_tag_alg_name(checked_algs[i]),
				    missed);
	}
}

/* What a lying donor returns instead of the page last written. */
static void substitution_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	u8 *zero = kunit_kzalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, zero);
	for (i = 0; i < ARRAY_SIZE(checked_algs); i++) {
		const char *name = farswap_tag_alg_name(checked_algs[i]);
		u64 now;

		farswap_tag_key_init(&c->key, checked_algs[i]);
		/* Page 100 held a, then was written again with b. */
		now = farswap_tag_page(&c->key, 100, 2, c->b);
		KUNIT_EXPECT_NE_MSG(test, farswap_tag_page(&c->key, 100, 2, c->a),
				    now, "%s: old copy passes", name);
		KUNIT_EXPECT_NE_MSG(test, farswap_tag_page(&c->key, 100, 2, zero),
				    now, "%s: zeroed page passes", name);
		/* The same bytes at another place or version are not ours. */
		KUNIT_EXPECT_NE_MSG(test, farswap_tag_page(&c->key, 101, 2, c->b),
				    now, "%s: index not bound", name);
		KUNIT_EXPECT_NE_MSG(test, farswap_tag_page(&c->key, 100, 1, c->b),
				    now, "%s: version not bound", name);
		KUNIT_EXPECT_NE_MSG(test, farswap_tag_page(&c->key, 100, 3, c->b),
				    now, "%s: version not bound", name);
	}
}

/* Another device (another attach) tags the same page differently. */
static void device_bound_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	struct farswap_tag_key other;
	int i;

	for (i = 0; i < ARRAY_SIZE(checked_algs); i++) {
		farswap_tag_key_init(&c->key, checked_algs[i]);
		farswap_tag_key_init(&other, checked_algs[i]);
		KUNIT_EXPECT_NE(test, c->key.nonce, other.nonce);
		KUNIT_EXPECT_NE(test, farswap_tag_page(&c->key, 5, 1, c->a),
				farswap_tag_page(&other, 5, 1, c->a));
	}
}

/* The keyed tag depends on each key, not only on the nonce. */
static void keyed_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	struct farswap_tag_key other;
	u64 t;

	farswap_tag_key_init(&c->key, FARSWAP_TAG_SIPHASH);
	t = farswap_tag_page(&c->key, 5, 1, c->a);
	other = c->key;
	other.page_key.key[0] ^= 1;
	KUNIT_EXPECT_NE(test, farswap_tag_page(&other, 5, 1, c->a), t);
	other = c->key;
	other.bind_key.key[1] ^= 1ull << 63;
	KUNIT_EXPECT_NE(test, farswap_tag_page(&other, 5, 1, c->a), t);
}

/* Each write takes the next version; a read checks against the last. */
static void next_version_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	struct farswap_page_locks l;
	u32 versions[8] = {};
	u64 tags[8] = {};

	farswap_page_locks_init(&l);
	farswap_tag_key_init(&c->key, FARSWAP_TAG_SIPHASH);
	KUNIT_EXPECT_EQ(test, farswap_tag_next(&c->key, &l, versions, tags, 3,
					       c->a), 1u);
	KUNIT_EXPECT_TRUE(test, farswap_tag_matches(&c->key, &l, versions,
						    tags, 3, c->a));
	KUNIT_EXPECT_EQ(test, farswap_tag_next(&c->key, &l, versions, tags, 3,
					       c->b), 2u);
	KUNIT_EXPECT_TRUE(test, farswap_tag_matches(&c->key, &l, versions,
						    tags, 3, c->b));
	/* The older write of the page is not the page any more. */
	KUNIT_EXPECT_FALSE(test, farswap_tag_matches(&c->key, &l, versions,
						     tags, 3, c->a));
	/* Its neighbours are untouched. */
	KUNIT_EXPECT_EQ(test, versions[2], 0u);
	KUNIT_EXPECT_EQ(test, versions[4], 0u);
}

#define RACE_WRITES	2000

struct race {
	const struct farswap_tag_key *key;
	struct farswap_page_locks *l;
	u32 *versions;
	u64 *tags;
	const u8 *page;
	unsigned long *seen;	/* versions taken, by all writers */
	atomic_t dups;
	struct completion done[2];
};

struct racer {
	struct race *r;
	int who;
};

static int racer_fn(void *arg)
{
	struct racer *me = arg;
	struct race *r = me->r;
	unsigned int i;

	for (i = 0; i < RACE_WRITES; i++) {
		u32 v = farswap_tag_next(r->key, r->l, r->versions, r->tags, 0,
					 r->page);

		if (v > 2 * RACE_WRITES || test_and_set_bit(v, r->seen))
			atomic_inc(&r->dups);
		if (!(i % 64))
			cond_resched();
	}
	complete(&r->done[me->who]);
	return 0;
}

/*
 * Two writers of one page at once (two O_DIRECT writes of one block):
 * every write gets a version of its own, and the last is the count.
 */
static void concurrent_writes_test(struct kunit *test)
{
	struct tag_ctx *c = test->priv;
	struct farswap_page_locks l;
	struct racer racer[2];
	struct race r = {};
	u32 versions[1] = {};
	u64 tags[1] = {};
	int i;

	farswap_page_locks_init(&l);
	farswap_tag_key_init(&c->key, FARSWAP_TAG_CRC32C);
	r.key = &c->key;
	r.l = &l;
	r.versions = versions;
	r.tags = tags;
	r.page = c->a;
	r.seen = kunit_kcalloc(test, BITS_TO_LONGS(2 * RACE_WRITES + 1),
			       sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r.seen);
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		init_completion(&r.done[i]);
		racer[i].r = &r;
		racer[i].who = i;
		t = kthread_run(racer_fn, &racer[i], "farswap-race%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	for (i = 0; i < 2; i++)
		wait_for_completion(&r.done[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&r.dups), 0);
	KUNIT_EXPECT_EQ(test, versions[0], 2u * RACE_WRITES);
	KUNIT_EXPECT_EQ(test, bitmap_weight(r.seen, 2 * RACE_WRITES + 1),
			2u * RACE_WRITES);
	KUNIT_EXPECT_TRUE(test, farswap_tag_matches(&c->key, &l, versions,
						    tags, 0, c->a));
}

static struct kunit_case farswap_tag_cases[] = {
	KUNIT_CASE(names_test),
	KUNIT_CASE(stable_test),
	KUNIT_CASE(off_test),
	KUNIT_CASE(bit_flip_test),
	KUNIT_CASE(substitution_test),
	KUNIT_CASE(device_bound_test),
	KUNIT_CASE(keyed_test),
	KUNIT_CASE(next_version_test),
	KUNIT_CASE(concurrent_writes_test),
	{}
};

static struct kunit_suite farswap_tag_suite = {
	.name = "farswap_tag",
	.init = tag_init,
	.test_cases = farswap_tag_cases,
};

kunit_test_suite(farswap_tag_suite);
