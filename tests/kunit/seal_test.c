// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_seal: sealed pages (kmod/seal.c).
 *
 * What encrypt=1 relies on: a sealed page holds none of its plaintext,
 * opens back to exactly its plaintext at its own index and version, and
 * does not open if a donor changed any byte of it or its tag, handed back
 * an older seal of it or another page's, or if the key differs.  A page
 * that does not open is reported, whatever its bytes became.  The page may
 * come in pieces (direct I/O at sector alignment): pieces seal and open
 * as the whole page does.
 *
 * And what the write path relies on (farswap_seal_next/_open_latest):
 * each seal of a page takes a version of its own, so no two writes share
 * a nonce; the tag published is the one of the version published; a
 * page whose version is exhausted is refused, not sealed again.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "chunkmap.h"
#include "seal.h"
#include "tag.h"

struct seal_ctx {
	struct farswap_seal_key key;
	u8 *plain;		/* the page as written */
	u8 *page;		/* the page as it travels */
	struct farswap_seal_tag tag;
	struct scatterlist sg[FARSWAP_PAGE_BYTES / 512 + 1];
};

static int seal_init(struct kunit *test)
{
	struct seal_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct rnd_state rnd;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->plain = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	c->page = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->plain);
	KUNIT_ASSERT_NOT_NULL(test, c->page);
	prandom_seed_state(&rnd, 7);
	prandom_bytes_state(&rnd, c->plain, FARSWAP_PAGE_BYTES);
	farswap_seal_key_init(&c->key);
	test->priv = c;
	return 0;
}

/* c->sg: the page in @pieces equal pieces, then the tag. */
static struct scatterlist *seal_sg(struct seal_ctx *c, unsigned int pieces)
{
	unsigned int len = FARSWAP_PAGE_BYTES / pieces, i;

	sg_init_table(c->sg, pieces + 1);
	for (i = 0; i < pieces; i++)
		sg_set_buf(&c->sg[i], c->page + i * len, len);
	sg_set_buf(&c->sg[pieces], &c->tag, sizeof(c->tag));
	return c->sg;
}

/* Seal a copy of the plaintext at @index, @version into c->page, c->tag. */
static void seal(struct seal_ctx *c, u64 index, u32 version)
{
	memcpy(c->page, c->plain, FARSWAP_PAGE_BYTES);
	farswap_seal_page(&c->key, index, version, seal_sg(c, 1));
}

static bool open(struct seal_ctx *c, u64 index, u32 version)
{
	return farswap_open_page(&c->key, index, version, seal_sg(c, 1));
}

/* Longest run of bytes the sealed page shares in place with the plain one. */
static unsigned int same_run(const u8 *a, const u8 *b)
{
	unsigned int i, run = 0, best = 0;

	for (i = 0; i < FARSWAP_PAGE_BYTES; i++) {
		run = a[i] == b[i] ? run + 1 : 0;
		best = max(best, run);
	}
	return best;
}

static void round_trip_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;

	seal(c, 42, 1);
	/* A byte may match by chance; a run of 8 would be a leak. */
	KUNIT_EXPECT_LT(test, same_run(c->page, c->plain), 8u);
	KUNIT_EXPECT_TRUE(test, open(c, 42, 1));
	KUNIT_EXPECT_EQ(test, memcmp(c->page, c->plain, FARSWAP_PAGE_BYTES), 0);
}

/* A zero page (what swap writes often) leaks nothing either. */
static void zero_page_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;

	memset(c->plain, 0, FARSWAP_PAGE_BYTES);
	seal(c, 3, 1);
	KUNIT_EXPECT_LT(test, same_run(c->page, c->plain), 8u);
	KUNIT_EXPECT_TRUE(test, open(c, 3, 1));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(c->page, 0, FARSWAP_PAGE_BYTES));
}

/* The same page sealed at another version or index is other bytes. */
static void fresh_nonce_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	u8 *first = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, first);
	seal(c, 9, 1);
	memcpy(first, c->page, FARSWAP_PAGE_BYTES);
	seal(c, 9, 2);
	KUNIT_EXPECT_LT(test, same_run(c->page, first), 8u);
	seal(c, 10, 1);
	KUNIT_EXPECT_LT(test, same_run(c->page, first), 8u);
}

/* Every single-bit flip of the page, and of its tag, fails to open. */
static void bit_flip_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	u32 bit, opened = 0;

	for (bit = 0; bit < FARSWAP_PAGE_BYTES * 8; bit += 7) {
		seal(c, 1234, 9);
		c->page[bit / 8] ^= BIT(bit % 8);
		opened += open(c, 1234, 9);
	}
	for (bit = 0; bit < FARSWAP_SEAL_TAG_BYTES * 8; bit++) {
		seal(c, 1234, 9);
		c->tag.bytes[bit / 8] ^= BIT(bit % 8);
		opened += open(c, 1234, 9);
	}
	KUNIT_EXPECT_EQ(test, opened, 0u);
}

/* An old seal of the page, or another page's, does not open. */
static void substitution_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;

	seal(c, 100, 4);
	KUNIT_EXPECT_FALSE(test, open(c, 100, 5));	/* an older copy */
	seal(c, 100, 4);
	KUNIT_EXPECT_FALSE(test, open(c, 101, 4));	/* another place */
	seal(c, 100, 4);
	KUNIT_EXPECT_FALSE(test, open(c, 100, 3));
	memset(c->page, 0, FARSWAP_PAGE_BYTES);		/* zeroed, tag kept */
	KUNIT_EXPECT_FALSE(test, open(c, 100, 4));
	seal(c, (1ull << 30) - 1, FARSWAP_SEAL_VERSION_MAX);
	KUNIT_EXPECT_TRUE(test, open(c, (1ull << 30) - 1,
				     FARSWAP_SEAL_VERSION_MAX));
}

/* Another device's key opens nothing of this one's. */
static void keyed_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	struct farswap_seal_key mine = c->key;

	farswap_seal_key_init(&c->key);
	KUNIT_EXPECT_NE(test, memcmp(&mine, &c->key, sizeof(mine)), 0);
	seal(c, 5, 1);
	c->key = mine;
	KUNIT_EXPECT_FALSE(test, open(c, 5, 1));
	/* A page that failed to open is garbage: seal it again. */
	seal(c, 5, 1);
	KUNIT_EXPECT_TRUE(test, open(c, 5, 1));
}

/* A page in sector-sized pieces seals and opens as the whole page. */
static void pieces_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	u8 *whole = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);
	struct farswap_seal_tag tag;

	KUNIT_ASSERT_NOT_NULL(test, whole);
	seal(c, 77, 2);
	memcpy(whole, c->page, FARSWAP_PAGE_BYTES);
	tag = c->tag;
	memcpy(c->page, c->plain, FARSWAP_PAGE_BYTES);
	farswap_seal_page(&c->key, 77, 2, seal_sg(c, 8));
	KUNIT_EXPECT_EQ(test, memcmp(c->page, whole, FARSWAP_PAGE_BYTES), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&c->tag, &tag, sizeof(tag)), 0);
	KUNIT_EXPECT_TRUE(test, farswap_open_page(&c->key, 77, 2,
						  seal_sg(c, 2)));
	KUNIT_EXPECT_EQ(test, memcmp(c->page, c->plain, FARSWAP_PAGE_BYTES), 0);
}

/* Two writes of one page: two nonces, and only the last one opens. */
static void next_version_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	struct farswap_seal_tag tags[4] = {};
	struct farswap_page_locks l;
	u32 versions[4] = {}, v;
	u8 *first = kunit_kmalloc(test, FARSWAP_PAGE_BYTES, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, first);
	farswap_page_locks_init(&l);
	memcpy(c->page, c->plain, FARSWAP_PAGE_BYTES);
	KUNIT_ASSERT_TRUE(test, farswap_seal_next(&c->key, &l, versions, tags,
						  2, seal_sg(c, 1), &c->tag,
						  &v));
	KUNIT_EXPECT_EQ(test, v, 1u);
	KUNIT_EXPECT_EQ(test, memcmp(&tags[2], &c->tag, sizeof(c->tag)), 0);
	memcpy(first, c->page, FARSWAP_PAGE_BYTES);

	/* The same bytes again: another nonce, so other ciphertext. */
	memcpy(c->page, c->plain, FARSWAP_PAGE_BYTES);
	KUNIT_ASSERT_TRUE(test, farswap_seal_next(&c->key, &l, versions, tags,
						  2, seal_sg(c, 1), &c->tag,
						  &v));
	KUNIT_EXPECT_EQ(test, v, 2u);
	KUNIT_EXPECT_EQ(test, versions[2], 2u);
	KUNIT_EXPECT_LT(test, same_run(c->page, first), 8u);

	/* The page as last written opens, with the tag published for it. */
	memset(&c->tag, 0, sizeof(c->tag));
	KUNIT_EXPECT_TRUE(test, farswap_open_latest(&c->key, &l, versions,
						    tags, 2, seal_sg(c, 1),
						    &c->tag));
	KUNIT_EXPECT_EQ(test, memcmp(c->page, c->plain, FARSWAP_PAGE_BYTES), 0);
	/* The first write's ciphertext is an old copy now. */
	memcpy(c->page, first, FARSWAP_PAGE_BYTES);
	KUNIT_EXPECT_FALSE(test, farswap_open_latest(&c->key, &l, versions,
						     tags, 2, seal_sg(c, 1),
						     &c->tag));
}

/* A page at the last version is refused, and nothing of it changes. */
static void exhausted_test(struct kunit *test)
{
	struct seal_ctx *c = test->priv;
	struct farswap_seal_tag tags[1], before;
	struct farswap_page_locks l;
	u32 versions[1] = { FARSWAP_SEAL_VERSION_MAX }, v = 0;

	farswap_page_locks_init(&l);
	memset(tags, 0x5a, sizeof(tags));
	before = tags[0];
	memcpy(c->page, c->plain, FARSWAP_PAGE_BYTES);
	KUNIT_EXPECT_FALSE(test, farswap_seal_next(&c->key, &l, versions, tags,
						   0, seal_sg(c, 1), &c->tag,
						   &v));
	KUNIT_EXPECT_EQ(test, v, FARSWAP_SEAL_VERSION_MAX);
	KUNIT_EXPECT_EQ(test, versions[0], FARSWAP_SEAL_VERSION_MAX);
	KUNIT_EXPECT_EQ(test, memcmp(&tags[0], &before, sizeof(before)), 0);
	/* Not sealed: the page still holds its plaintext. */
	KUNIT_EXPECT_EQ(test, memcmp(c->page, c->plain, FARSWAP_PAGE_BYTES), 0);
}

static struct kunit_case farswap_seal_cases[] = {
	KUNIT_CASE(round_trip_test),
	KUNIT_CASE(zero_page_test),
	KUNIT_CASE(fresh_nonce_test),
	KUNIT_CASE(bit_flip_test),
	KUNIT_CASE(substitution_test),
	KUNIT_CASE(keyed_test),
	KUNIT_CASE(pieces_test),
	KUNIT_CASE(next_version_test),
	KUNIT_CASE(exhausted_test),
	{}
};

static struct kunit_suite farswap_seal_suite = {
	.name = "farswap_seal",
	.init = seal_init,
	.test_cases = farswap_seal_cases,
};

kunit_test_suite(farswap_seal_suite);
