// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_chunkmap: device geometry, cutting requests at chunk
 * boundaries, per-chunk page accounting and the decision the I/O path
 * (kmod/io.c) takes for every read and write, all from kmod/chunkmap.c.
 * "Slab" here means a donor's slab only: the geometry's unit of donor
 * memory, carved into 2 MiB chunk slots.
 *
 * Where the module depends on a property rather than on one value (a
 * request never spans two chunks; extents tile the request exactly), the
 * tests check it against a page-by-page model written here independently
 * of the code under test.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/sizes.h>

#include "farswap_proto.h"
#include "chunkmap.h"

#define PAGE_4K		FARSWAP_PAGE_BYTES

/*
 * Geometry
 */

struct geometry_case {
	const char *desc;
	u64 size;
	u64 slab_size;
	int ret;
	u32 nr_slabs;		/* expected on success */
	u32 slab_pages;
};

static const struct geometry_case geometry_cases[] = {
	{ "4G in 1G slabs", SZ_4G, SZ_1G, 0, 4, 262144 },
	{ "one slab of the smallest size", SZ_2M, SZ_2M, 0, 1, 512 },
	{ "one slab of the largest size", SZ_1T, SZ_1T, 0, 1, 1u << 28 },
	{ "2T in 2M slabs (the most slabs)", 2 * SZ_1T, SZ_2M, 0, 1u << 20,
	  512 },
	{ "2T+2M in 2M slabs (one slab too many)", 2 * SZ_1T + SZ_2M, SZ_2M,
	  -E2BIG },
	{ "2^62 bytes in 2M slabs", 1ull << 62, SZ_2M, -E2BIG },
	{ "largest multiple of 2M", U64_MAX & ~(u64)(SZ_2M - 1), SZ_2M,
	  -E2BIG },
	{ "slab 1M (below the minimum)", SZ_16M, SZ_1M, -EINVAL },
	{ "slab 2T (above the maximum)", 4 * SZ_1T, 2 * SZ_1T, -EINVAL },
	{ "slab 3M (not a power of two)", 12 * SZ_1M, 3 * SZ_1M, -EINVAL },
	{ "slab 0", SZ_4G, 0, -EINVAL },
	{ "size 0", 0, SZ_2M, -EINVAL },
	{ "size 5M in 2M slabs", 5 * SZ_1M, SZ_2M, -EINVAL },
	{ "size one page over a whole slab count", SZ_4G + PAGE_4K, SZ_1G,
	  -EINVAL },
	{ "size below one slab", SZ_1M, SZ_2M, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(geometry, geometry_cases, desc);

static void geometry_init_test(struct kunit *test)
{
	const struct geometry_case *c = test->param_value;
	struct farswap_geometry g = {};
	int ret;

	ret = farswap_geometry_init(&g, c->size, c->slab_size);
	KUNIT_ASSERT_EQ(test, ret, c->ret);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, g.size, c->size);
	KUNIT_EXPECT_EQ(test, g.nr_slabs, c->nr_slabs);
	KUNIT_EXPECT_EQ(test, g.slab_pages, c->slab_pages);
	KUNIT_EXPECT_EQ(test, farswap_slab_bytes(&g), c->slab_size);
	/* Donor slabs tile the device exactly. */
	KUNIT_EXPECT_EQ(test, (u64)g.nr_slabs * farswap_slab_bytes(&g), g.size);
	KUNIT_EXPECT_EQ(test, (u64)g.slab_pages * PAGE_4K, c->slab_size);
	/* Chunks tile the device, and whole chunks tile a slab. */
	KUNIT_EXPECT_EQ(test, (u64)g.nr_chunks * FARSWAP_CHUNK_BYTES, g.size);
	KUNIT_EXPECT_EQ(test, (u64)g.chunks_per_slab * FARSWAP_CHUNK_BYTES,
			c->slab_size);
}

/*
 * Splitting a byte range at chunk boundaries
 */

/* Room for the largest split below, plus a guard entry after max_ext. */
#define SPLIT_MAX_EXT	8

/*
 * Compare @ext[0..n) with a page-by-page walk of [pos, pos + len): the
 * extents must tile the range in order, one maximal extent per chunk.
 * Returns false and describes the first mismatch in @why.
 */
static bool extents_match_model(u64 pos, u64 len,
				const struct farswap_extent *ext, int n,
				char *why, size_t why_len)
{
	u32 in_ext = 0;
	int i = 0;
	u64 off;

	for (off = 0; off < len; off += PAGE_4K) {
		u64 at = pos + off;
		u64 chunk = div64_u64(at, FARSWAP_CHUNK_BYTES);
		u64 page = div64_u64(at - chunk * FARSWAP_CHUNK_BYTES, PAGE_4K);

		if (i < n && in_ext == ext[i].nr_pages) {
			i++;
			in_ext = 0;
		}
		if (i >= n) {
			snprintf(why, why_len, "byte %llu of the range is in no extent",
				 off);
			return false;
		}
		if (ext[i].chunk != chunk || ext[i].first_page + in_ext != page ||
		    ext[i].range_off + (u64)in_ext * PAGE_4K != off ||
		    ext[i].chunk_off + (u64)in_ext * PAGE_4K != page * PAGE_4K) {
			snprintf(why, why_len,
				 "byte %llu (chunk %llu page %llu) is in extent %d (chunk %u first_page %u chunk_off %llu range_off %llu)",
				 off, chunk, page, i, ext[i].chunk,
				 ext[i].first_page, ext[i].chunk_off,
				 ext[i].range_off);
			return false;
		}
		in_ext++;
	}
	if (len && (i != n - 1 || in_ext != ext[i].nr_pages)) {
		snprintf(why, why_len, "%d extents for %d chunks", n, i + 1);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (ext[i].len != (u64)ext[i].nr_pages * PAGE_4K ||
		    !ext[i].nr_pages) {
			snprintf(why, why_len, "extent %d: %u pages but %llu bytes",
				 i, ext[i].nr_pages, ext[i].len);
			return false;
		}
		if (i && ext[i].chunk == ext[i - 1].chunk) {
			snprintf(why, why_len, "extents %d and %d share chunk %u",
				 i - 1, i, ext[i].chunk);
			return false;
		}
	}
	return true;
}

/* The devices the split cases cut. */
enum { DEV16, DEV4G };

static const struct {
	u64 size;
	u64 slab_size;
} split_devs[] = {
	/* eight chunks of 512 pages, in one 16M donor slab */
	[DEV16] = { SZ_16M, SZ_16M },
	[DEV4G] = { SZ_4G, SZ_1G },	/* 2048 chunks in four 1G slabs */
};

struct split_case {
	const char *desc;
	unsigned int dev;
	u64 pos;
	u64 len;
	unsigned int max_ext;
	int ret;
	/* Where the first extent starts and how long the last one is. */
	u32 first_chunk;
	u32 first_page;
	u32 last_chunk;
	u32 last_pages;
};

static const struct split_case split_cases[] = {
	{ "first page of the device", DEV16, 0, PAGE_4K, 1, 1, 0, 0, 0, 1 },
	{ "last page of the device", DEV16, SZ_16M - PAGE_4K, PAGE_4K, 1, 1,
	  7, 511, 7, 1 },
	{ "last page of a chunk", DEV16, SZ_2M - PAGE_4K, PAGE_4K, 1, 1,
	  0, 511, 0, 1 },
	{ "first page of a chunk", DEV16, SZ_2M, PAGE_4K, 1, 1, 1, 0, 1, 1 },
	{ "8K across one boundary", DEV16, SZ_2M - PAGE_4K, SZ_8K, 2, 2,
	  0, 511, 1, 1 },
	{ "8K across one boundary, one extent allowed", DEV16,
	  SZ_2M - PAGE_4K, SZ_8K, 1, -E2BIG },
	{ "2M filling its chunk", DEV16, SZ_4M, SZ_2M, 1, 1, 2, 0, 2, 512 },
	{ "2M one page past a boundary", DEV16, SZ_4M + PAGE_4K, SZ_2M, 2, 2,
	  2, 1, 3, 1 },
	{ "2M one page past a boundary, one extent allowed", DEV16,
	  SZ_4M + PAGE_4K, SZ_2M, 1, -E2BIG },
	{ "last 2M of the device", DEV16, SZ_16M - SZ_2M, SZ_2M, 1, 1,
	  7, 0, 7, 512 },
	{ "across three boundaries", DEV16, SZ_2M - PAGE_4K,
	  SZ_4M + SZ_8K, 4, 4, 0, 511, 3, 1 },
	{ "across three boundaries, room for three", DEV16, SZ_2M - PAGE_4K,
	  SZ_4M + SZ_8K, 3, -E2BIG },
	{ "the whole device", DEV16, 0, SZ_16M, 8, 8, 0, 0, 7, 512 },
	{ "one page, no room at all", DEV16, 0, PAGE_4K, 0, -E2BIG },
	{ "empty range", DEV16, SZ_4M, 0, 1, 0 },
	{ "empty range at the end", DEV16, SZ_16M, 0, 1, 0 },
	{ "position not page aligned", DEV16, 512, PAGE_4K, 1, -EINVAL },
	{ "length not page aligned", DEV16, 0, PAGE_4K + 512, 1, -EINVAL },
	{ "starts past the end", DEV16, SZ_16M + PAGE_4K, PAGE_4K, 1,
	  -EINVAL },
	{ "ends one page past the end", DEV16, SZ_16M - PAGE_4K, SZ_8K, 2,
	  -EINVAL },
	{ "length wraps around 2^64", DEV16, SZ_16M - PAGE_4K,
	  U64_MAX & ~(u64)(PAGE_4K - 1), 8, -EINVAL },
	{ "2M filling a chunk inside a 1G slab", DEV4G, 7 * SZ_2M, SZ_2M, 1,
	  1, 7, 0, 7, 512 },
	{ "2M across a chunk boundary inside a 1G slab", DEV4G,
	  SZ_16M - SZ_1M, SZ_2M, 2, 2, 7, 256, 8, 256 },
	{ "2M across a chunk boundary inside a 1G slab, one extent allowed",
	  DEV4G, SZ_16M - SZ_1M, SZ_2M, 1, -E2BIG },
	{ "2M ending a 1G slab", DEV4G, SZ_1G - SZ_2M, SZ_2M, 1, 1,
	  511, 0, 511, 512 },
	{ "2M across a 1G slab boundary", DEV4G, SZ_1G - SZ_1M, SZ_2M, 2, 2,
	  511, 256, 512, 256 },
	{ "last page of a 4G device", DEV4G, SZ_4G - PAGE_4K, PAGE_4K, 1, 1,
	  2047, 511, 2047, 1 },
};

KUNIT_ARRAY_PARAM_DESC(split, split_cases, desc);

static void split_test(struct kunit *test)
{
	const struct split_case *c = test->param_value;
	struct farswap_geometry g = {};
	struct farswap_extent *ext, guard;
	char why[160];
	int n;

	KUNIT_ASSERT_EQ(test,
			farswap_geometry_init(&g, split_devs[c->dev].size,
					      split_devs[c->dev].slab_size),
			0);
	KUNIT_ASSERT_LE(test, c->max_ext, SPLIT_MAX_EXT);
	ext = kunit_kcalloc(test, SPLIT_MAX_EXT + 1, sizeof(*ext), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ext);
	/* Poison everything: the entry after max_ext must stay untouched. */
	memset(ext, 0xa5, (SPLIT_MAX_EXT + 1) * sizeof(*ext));
	guard = ext[c->max_ext];

	n = farswap_split(&g, c->pos, c->len, ext, c->max_ext);
	KUNIT_EXPECT_EQ(test, n, c->ret);
	KUNIT_EXPECT_MEMEQ_MSG(test, &ext[c->max_ext], &guard, sizeof(guard),
			       "wrote past max_ext");
	if (n <= 0)
		return;
	KUNIT_EXPECT_EQ(test, ext[0].chunk, c->first_chunk);
	KUNIT_EXPECT_EQ(test, ext[0].first_page, c->first_page);
	KUNIT_EXPECT_EQ(test, ext[n - 1].chunk, c->last_chunk);
	KUNIT_EXPECT_EQ(test, ext[n - 1].nr_pages, c->last_pages);
	KUNIT_EXPECT_TRUE_MSG(test,
			      extents_match_model(c->pos, c->len, ext, n,
						  why, sizeof(why)),
			      "%s", why);
}

/*
 * Every request size swap sends, 4K to 2M (THP swap-out), at every page
 * offset within a chunk.  A request that fits its chunk is one extent;
 * the one-extent split the I/O path does (max_ext 1) must refuse exactly
 * the requests that cross into the next chunk, because the queue limits
 * (chunk_sectors = FARSWAP_CHUNK_BYTES) promise it never sees them.
 */
struct request_size_case {
	const char *desc;
	u64 len;
};

static const struct request_size_case request_size_cases[] = {
	{ "4K", SZ_4K }, { "8K", SZ_8K }, { "16K", SZ_16K },
	{ "32K", SZ_32K }, { "64K", SZ_64K }, { "128K", SZ_128K },
	{ "256K", SZ_256K }, { "512K", SZ_512K }, { "1M", SZ_1M },
	{ "2M", SZ_2M },
};

KUNIT_ARRAY_PARAM_DESC(request_size, request_size_cases, desc);

/* Chunk 1 of a device of 2M donor slabs, where each slab is one chunk. */
static void split_every_offset_test(struct kunit *test)
{
	const struct request_size_case *c = test->param_value;
	struct farswap_geometry g = {};
	struct farswap_extent ext[3];
	char why[160];
	u32 page;

	KUNIT_ASSERT_EQ(test, farswap_geometry_init(&g, SZ_8M, SZ_2M), 0);
	for (page = 0; page < FARSWAP_CHUNK_PAGES; page++) {
		u64 pos = FARSWAP_CHUNK_BYTES + (u64)page * PAGE_4K;
		bool crosses = (u64)page * PAGE_4K + c->len >
			       FARSWAP_CHUNK_BYTES;
		int n;

		n = farswap_split(&g, pos, c->len, ext, ARRAY_SIZE(ext));
		KUNIT_ASSERT_EQ_MSG(test, n, crosses ? 2 : 1,
				    "request at chunk 1 page %u", page);
		KUNIT_ASSERT_TRUE_MSG(test,
				      extents_match_model(pos, c->len, ext, n,
							  why, sizeof(why)),
				      "request at chunk 1 page %u: %s", page,
				      why);
		n = farswap_split(&g, pos, c->len, ext, 1);
		KUNIT_ASSERT_EQ_MSG(test, n, crosses ? -E2BIG : 1,
				    "one-extent split at chunk 1 page %u",
				    page);
	}
}

/*
 * A donor slab holds many chunks, placed independently, and the split
 * cuts between them: every request size at every page offset of a chunk
 * inside a slab, and across the slab's last chunk boundary.
 */
static void split_in_slab_every_offset_test(struct kunit *test)
{
	const struct request_size_case *c = test->param_value;
	struct farswap_geometry g = {};
	struct farswap_extent ext[3];
	char why[160];
	u32 page;

	KUNIT_ASSERT_EQ(test, farswap_geometry_init(&g, SZ_64M, SZ_16M), 0);
	KUNIT_ASSERT_EQ(test, g.chunks_per_slab, 8u);
	/* Chunk 3 sits inside slab 0; chunk 7 ends it. */
	for (page = 0; page < 2 * FARSWAP_CHUNK_PAGES; page++) {
		u32 chunk = page < FARSWAP_CHUNK_PAGES ? 3 : 7;
		u32 in = page % FARSWAP_CHUNK_PAGES;
		u64 pos = (u64)chunk * FARSWAP_CHUNK_BYTES + (u64)in * PAGE_4K;
		bool crosses = (u64)in * PAGE_4K + c->len > FARSWAP_CHUNK_BYTES;
		int n;

		n = farswap_split(&g, pos, c->len, ext, ARRAY_SIZE(ext));
		KUNIT_ASSERT_EQ_MSG(test, n, crosses ? 2 : 1,
				    "request at chunk %u page %u", chunk, in);
		KUNIT_EXPECT_EQ(test, ext[0].chunk, chunk);
		KUNIT_EXPECT_EQ(test, ext[0].first_page, in);
		KUNIT_EXPECT_EQ(test, ext[0].chunk_off, (u64)in * PAGE_4K);
		if (crosses) {
			KUNIT_EXPECT_EQ(test, ext[1].chunk, chunk + 1);
			KUNIT_EXPECT_EQ(test, ext[1].first_page, 0u);
			KUNIT_EXPECT_EQ(test, ext[0].len + ext[1].len, c->len);
			KUNIT_EXPECT_EQ(test, ext[1].range_off, ext[0].len);
		} else {
			KUNIT_EXPECT_EQ(test, ext[0].len, c->len);
			KUNIT_EXPECT_EQ(test, ext[0].nr_pages,
					(u32)(c->len / PAGE_4K));
		}
		KUNIT_ASSERT_TRUE_MSG(test,
				      extents_match_model(pos, c->len, ext, n,
							  why, sizeof(why)),
				      "request at chunk %u page %u: %s", chunk,
				      in, why);
		n = farswap_split(&g, pos, c->len, ext, 1);
		KUNIT_ASSERT_EQ_MSG(test, n, crosses ? -E2BIG : 1,
				    "one-extent split at chunk %u page %u",
				    chunk, in);
	}
	/* The device's last page, and one past it. */
	KUNIT_EXPECT_EQ(test, farswap_split(&g, SZ_64M - PAGE_4K, PAGE_4K, ext,
					    1), 1);
	KUNIT_EXPECT_EQ(test, ext[0].chunk, g.nr_chunks - 1);
	KUNIT_EXPECT_EQ(test, farswap_split(&g, SZ_64M, PAGE_4K, ext, 1),
			-EINVAL);
}

/*
 * Page accounting
 */

/*
 * A chunk's pages as struct farswap_chunk holds them: both bitmaps up
 * front.
 * One extra word after each bitmap, poisoned, catches writes past the end.
 */
#define GUARD_WORD	0x5a5a5a5a5a5a5a5aul

static struct farswap_pages *pages_new(struct kunit *test, u32 nr)
{
	size_t longs = BITS_TO_LONGS(nr);
	struct farswap_pages *p;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->written = kunit_kcalloc(test, longs + 1, sizeof(long), GFP_KERNEL);
	p->lost = kunit_kcalloc(test, longs + 1, sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->written);
	KUNIT_ASSERT_NOT_NULL(test, p->lost);
	p->written[longs] = GUARD_WORD;
	p->lost[longs] = GUARD_WORD;
	p->nr_pages = nr;
	return p;
}

/* The counts agree with the bitmaps, and nothing was written past them. */
static void expect_pages_consistent(struct kunit *test,
				    const struct farswap_pages *p)
{
	size_t longs = BITS_TO_LONGS(p->nr_pages);

	KUNIT_EXPECT_EQ(test, p->used, bitmap_weight(p->written, p->nr_pages));
	KUNIT_EXPECT_EQ(test, p->nr_lost, bitmap_weight(p->lost, p->nr_pages));
	KUNIT_EXPECT_EQ(test, p->written[longs], GUARD_WORD);
	KUNIT_EXPECT_EQ(test, p->lost[longs], GUARD_WORD);
}

struct window_case {
	const char *desc;
	u32 first;
	u32 n;
};

static const struct window_case window_cases[] = {
	{ "first page", 0, 1 },
	{ "last page", FARSWAP_CHUNK_PAGES - 1, 1 },
	{ "across a bitmap word", BITS_PER_LONG - 1, 2 },
	{ "one whole bitmap word", BITS_PER_LONG, BITS_PER_LONG },
	{ "last half", FARSWAP_CHUNK_PAGES / 2, FARSWAP_CHUNK_PAGES / 2 },
	{ "whole chunk", 0, FARSWAP_CHUNK_PAGES },
	{ "empty", 200, 0 },
};

KUNIT_ARRAY_PARAM_DESC(window, window_cases, desc);

/* Write, lose, rewrite and discard one window of a chunk. */
static void pages_window_test(struct kunit *test)
{
	const struct window_case *c = test->param_value;
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);
	u32 end = c->first + c->n;

	farswap_pages_mark_written(p, c->first, c->n);
	KUNIT_EXPECT_EQ(test, p->used, c->n);
	KUNIT_EXPECT_EQ(test, farswap_pages_any_written(p, c->first, c->n),
			c->n > 0);
	/* Neighbours stay unwritten: a read of them is zero-filled. */
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_written(p, 0, c->first));
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_written(p, end,
							   FARSWAP_CHUNK_PAGES - end));
	/* Writing the same pages again does not count them twice. */
	farswap_pages_mark_written(p, c->first, c->n);
	KUNIT_EXPECT_EQ(test, p->used, c->n);
	expect_pages_consistent(test, p);

	KUNIT_EXPECT_EQ(test, farswap_pages_lose(p), c->n);
	KUNIT_EXPECT_EQ(test, p->used, 0);
	KUNIT_EXPECT_EQ(test, p->nr_lost, c->n);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_written(p, 0, FARSWAP_CHUNK_PAGES));
	KUNIT_EXPECT_EQ(test, farswap_pages_any_lost(p, c->first, c->n),
			c->n > 0);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, 0, c->first));
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, end,
							FARSWAP_CHUNK_PAGES - end));
	expect_pages_consistent(test, p);

	/* A new write makes the pages whole again... */
	farswap_pages_mark_written(p, c->first, c->n);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 0);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, 0, FARSWAP_CHUNK_PAGES));
	/* ...and a discard forgets them: nothing left in the chunk. */
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, c->first, c->n), 0);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_written(p, 0, FARSWAP_CHUNK_PAGES));
	expect_pages_consistent(test, p);
}

static const struct window_case outside_cases[] = {
	{ "starts at the end", FARSWAP_CHUNK_PAGES, 1 },
	{ "straddles the end", FARSWAP_CHUNK_PAGES - 2, 3 },
	{ "one page too many", 0, FARSWAP_CHUNK_PAGES + 1 },
	{ "first wraps u32", U32_MAX, 2 },
	{ "count wraps u32", 1, U32_MAX },
};

KUNIT_ARRAY_PARAM_DESC(outside, outside_cases, desc);

/* Ranges beyond the chunk change nothing and find nothing. */
static void pages_outside_test(struct kunit *test)
{
	const struct window_case *c = test->param_value;
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);
	size_t bytes = BITS_TO_LONGS(FARSWAP_CHUNK_PAGES) * sizeof(long);
	unsigned long *before;

	/* The last pages written, some of them lost. */
	farswap_pages_mark_written(p, FARSWAP_CHUNK_PAGES - 4, 4);
	farswap_pages_lose(p);
	farswap_pages_mark_written(p, FARSWAP_CHUNK_PAGES - 2, 2);
	before = kunit_kmalloc(test, 2 * bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	memcpy(before, p->written, bytes);
	memcpy((char *)before + bytes, p->lost, bytes);

	farswap_pages_mark_written(p, c->first, c->n);
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, c->first, c->n), 2);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_written(p, c->first, c->n));
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, c->first, c->n));

	KUNIT_EXPECT_EQ(test, p->used, 2);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 2);
	KUNIT_EXPECT_MEMEQ(test, p->written, before, bytes);
	KUNIT_EXPECT_MEMEQ(test, p->lost, (char *)before + bytes, bytes);
	expect_pages_consistent(test, p);
}

/*
 * kmod/io.c releases a chunk when a discard returns 0: the return value
 * must count what is still written in the whole chunk, not in the range.
 */
static void pages_discard_remaining_test(struct kunit *test)
{
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);
	u32 i;

	for (i = 0; i < FARSWAP_CHUNK_PAGES; i += 2)
		farswap_pages_mark_written(p, i, 1);
	KUNIT_ASSERT_EQ(test, p->used, FARSWAP_CHUNK_PAGES / 2);

	/* Pages 0 and 2 go; 1 and 3 were never written. */
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, 0, 4),
			FARSWAP_CHUNK_PAGES / 2 - 2);
	/* Discarding them again changes nothing. */
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, 0, 4),
			FARSWAP_CHUNK_PAGES / 2 - 2);
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, 5, 1),
			FARSWAP_CHUNK_PAGES / 2 - 2);
	/* The last written page goes last. */
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, 4, FARSWAP_CHUNK_PAGES - 6), 1);
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_written(p, FARSWAP_CHUNK_PAGES - 2,
							  2));
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, FARSWAP_CHUNK_PAGES - 2, 2), 0);
	expect_pages_consistent(test, p);
}

/* A discard also forgets lost pages: a later read of them reads zeros. */
static void pages_discard_lost_test(struct kunit *test)
{
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);

	farswap_pages_mark_written(p, 0, 10);
	KUNIT_ASSERT_EQ(test, farswap_pages_lose(p), 10);
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(p, 0, 5), 0);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 5);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, 0, 5));
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_lost(p, 5, 5));
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_lost(p, 9, 1));
	expect_pages_consistent(test, p);
}

/* Each donor loss adds to the lost pages; rewritten pages leave them. */
static void pages_lose_twice_test(struct kunit *test)
{
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);

	farswap_pages_mark_written(p, 0, 4);
	KUNIT_EXPECT_EQ(test, farswap_pages_lose(p), 4);
	/* Rebound elsewhere; pages 1 and 2 are written anew. */
	farswap_pages_mark_written(p, 1, 2);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 2);
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, 1, 2));
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_lost(p, 0, 1));
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_lost(p, 3, 1));
	farswap_pages_mark_written(p, 100, 1);
	/* That donor dies too: pages 1, 2 and 100 are newly lost. */
	KUNIT_EXPECT_EQ(test, farswap_pages_lose(p), 3);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 5);
	KUNIT_EXPECT_EQ(test, p->used, 0);
	/* A loss with nothing written loses nothing more. */
	KUNIT_EXPECT_EQ(test, farswap_pages_lose(p), 0);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 5);
	expect_pages_consistent(test, p);
}

/* One page lost alone: the others stay, lost once, never if unwritten. */
static void pages_lose_one_test(struct kunit *test)
{
	struct farswap_pages *p = pages_new(test, FARSWAP_CHUNK_PAGES);

	farswap_pages_mark_written(p, 0, 8);
	KUNIT_EXPECT_TRUE(test, farswap_pages_lose_one(p, 3));
	KUNIT_EXPECT_EQ(test, p->used, 7);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 1);
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_lost(p, 3, 1));
	KUNIT_EXPECT_FALSE(test, farswap_pages_any_lost(p, 0, 3));
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_written(p, 4, 4));
	/* Lost already, never written, or out of range: nothing happens. */
	KUNIT_EXPECT_FALSE(test, farswap_pages_lose_one(p, 3));
	KUNIT_EXPECT_FALSE(test, farswap_pages_lose_one(p, 100));
	KUNIT_EXPECT_FALSE(test, farswap_pages_lose_one(p, FARSWAP_CHUNK_PAGES));
	KUNIT_EXPECT_EQ(test, p->used, 7);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 1);
	/* The donor of the rest dies: the other seven go. */
	KUNIT_EXPECT_EQ(test, farswap_pages_lose(p), 7);
	KUNIT_EXPECT_EQ(test, p->nr_lost, 8);
	expect_pages_consistent(test, p);
}

/* A copy's damaged pages: noted once each, found by range, cleared. */
static void damage_test(struct kunit *test)
{
	struct farswap_damage d = {};
	unsigned int i;

	KUNIT_EXPECT_FALSE(test, farswap_damage_any(&d, 0, FARSWAP_CHUNK_PAGES));
	KUNIT_EXPECT_TRUE(test, farswap_damage_add(&d, 7));
	KUNIT_EXPECT_TRUE(test, farswap_damage_add(&d, 7));
	KUNIT_EXPECT_EQ(test, d.nr, 1);
	KUNIT_EXPECT_TRUE(test, farswap_damage_any(&d, 7, 1));
	KUNIT_EXPECT_TRUE(test, farswap_damage_any(&d, 0, 8));
	KUNIT_EXPECT_FALSE(test, farswap_damage_any(&d, 0, 7));
	KUNIT_EXPECT_FALSE(test, farswap_damage_any(&d, 8, 504));
	KUNIT_EXPECT_FALSE(test, farswap_damage_add(&d, FARSWAP_CHUNK_PAGES));

	/* Full: the next one does not fit, and the caller goes stale. */
	for (i = 1; i < FARSWAP_DAMAGE_MAX; i++)
		KUNIT_EXPECT_TRUE(test, farswap_damage_add(&d, 100 + i));
	KUNIT_EXPECT_EQ(test, d.nr, FARSWAP_DAMAGE_MAX);
	KUNIT_EXPECT_FALSE(test, farswap_damage_add(&d, 511));
	KUNIT_EXPECT_TRUE(test, farswap_damage_add(&d, 101));

	/* A write over 100..102 clears two; the others stay. */
	farswap_damage_clear(&d, 100, 3);
	KUNIT_EXPECT_EQ(test, d.nr, FARSWAP_DAMAGE_MAX - 2);
	KUNIT_EXPECT_FALSE(test, farswap_damage_any(&d, 100, 3));
	KUNIT_EXPECT_TRUE(test, farswap_damage_any(&d, 7, 1));
	KUNIT_EXPECT_TRUE(test, farswap_damage_any(&d, 103, 1));
	farswap_damage_clear(&d, 0, FARSWAP_CHUNK_PAGES);
	KUNIT_EXPECT_EQ(test, d.nr, 0);
	KUNIT_EXPECT_TRUE(test, farswap_damage_add(&d, 511));
	KUNIT_EXPECT_TRUE(test, farswap_damage_any(&d, 511, 1));
}

/*
 * A full device: every page of every chunk written by 2M requests, then
 * discarded by one range over the whole device, cut at chunk boundaries
 * the way kmod/io.c cuts a discard.  The device is one 8M donor slab, so
 * the cuts fall inside it.
 */
static void full_device_test(struct kunit *test)
{
	struct farswap_geometry g = {};
	struct farswap_pages **chunk;
	struct farswap_extent e;
	u64 pos;
	u32 i;

	KUNIT_ASSERT_EQ(test, farswap_geometry_init(&g, SZ_8M, SZ_8M), 0);
	KUNIT_ASSERT_EQ(test, g.nr_chunks, 4u);
	chunk = kunit_kcalloc(test, g.nr_chunks, sizeof(*chunk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, chunk);
	for (i = 0; i < g.nr_chunks; i++)
		chunk[i] = pages_new(test, FARSWAP_CHUNK_PAGES);

	for (pos = 0; pos < g.size; pos += SZ_2M) {
		KUNIT_ASSERT_EQ(test, farswap_split(&g, pos, SZ_2M, &e, 1), 1);
		farswap_pages_mark_written(chunk[e.chunk], e.first_page,
					   e.nr_pages);
	}
	for (i = 0; i < g.nr_chunks; i++) {
		KUNIT_EXPECT_EQ(test, chunk[i]->used, FARSWAP_CHUNK_PAGES);
		KUNIT_EXPECT_TRUE(test, bitmap_full(chunk[i]->written,
						    FARSWAP_CHUNK_PAGES));
		expect_pages_consistent(test, chunk[i]);
	}
	/* Rewriting the last page of a full device counts nothing new. */
	KUNIT_ASSERT_EQ(test, farswap_split(&g, g.size - PAGE_4K, PAGE_4K, &e,
					    1), 1);
	KUNIT_EXPECT_EQ(test, e.chunk, g.nr_chunks - 1);
	KUNIT_EXPECT_EQ(test, e.first_page, FARSWAP_CHUNK_PAGES - 1);
	farswap_pages_mark_written(chunk[e.chunk], e.first_page, e.nr_pages);
	KUNIT_EXPECT_EQ(test, chunk[e.chunk]->used, FARSWAP_CHUNK_PAGES);
	/* Nothing fits past the end of a full device. */
	KUNIT_EXPECT_EQ(test, farswap_split(&g, g.size, PAGE_4K, &e, 1),
			-EINVAL);

	/* Discard from the second page to the end, chunk by chunk. */
	for (pos = PAGE_4K; pos < g.size; ) {
		u64 len = min(g.size - pos, SZ_2M - (pos & (SZ_2M - 1)));

		KUNIT_ASSERT_EQ(test, farswap_split(&g, pos, len, &e, 1), 1);
		KUNIT_EXPECT_EQ(test,
				farswap_pages_discard(chunk[e.chunk],
						      e.first_page, e.nr_pages),
				e.chunk ? 0 : 1);
		pos += len;
	}
	KUNIT_EXPECT_TRUE(test, farswap_pages_any_written(chunk[0], 0, 1));
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(chunk[0], 0, 1), 0);
}

/*
 * Chunk state names (sysfs shows them)
 */

static void chunk_state_name_test(struct kunit *test)
{
	unsigned int a, b;

	for (a = 0; a < FARSWAP_CHUNK_NR_STATES; a++) {
		const char *name = farswap_chunk_state_name(a);

		KUNIT_ASSERT_NOT_NULL(test, name);
		KUNIT_EXPECT_GT(test, strlen(name), 0);
		KUNIT_EXPECT_STRNEQ(test, name, "invalid");
		for (b = 0; b < a; b++)
			KUNIT_EXPECT_STRNEQ(test, name,
					    farswap_chunk_state_name(b));
	}
	KUNIT_EXPECT_STREQ(test, farswap_chunk_state_name(FARSWAP_CHUNK_BOUND),
			   "bound");
	KUNIT_EXPECT_STREQ(test,
			   farswap_chunk_state_name(FARSWAP_CHUNK_NR_STATES),
			   "invalid");
	KUNIT_EXPECT_STREQ(test, farswap_chunk_state_name(UINT_MAX), "invalid");
}

/*
 * What a read or write does with its chunk
 */

#define RD	false
#define WR	true

struct decide_case {
	const char *desc;
	unsigned int state;
	bool write;
	bool written;
	bool lost;
	bool live;
	enum farswap_io_action expect;
};

static const struct decide_case decide_cases[] = {
	/* Reads of never-written pages are zeros, never RDMA, never held. */
	{ "read unwritten, unbound", FARSWAP_CHUNK_UNBOUND, RD, 0, 0, 0,
	  FARSWAP_IO_ZERO },
	{ "read unwritten, binding", FARSWAP_CHUNK_BINDING, RD, 0, 0, 0,
	  FARSWAP_IO_ZERO },
	{ "read unwritten, bound and live", FARSWAP_CHUNK_BOUND, RD, 0, 0, 1,
	  FARSWAP_IO_ZERO },
	{ "read unwritten, bound to a dead donor", FARSWAP_CHUNK_BOUND, RD,
	  0, 0, 0, FARSWAP_IO_ZERO },
	{ "read unwritten, switching", FARSWAP_CHUNK_SWITCHING, RD, 0, 0, 1,
	  FARSWAP_IO_ZERO },
	{ "read unwritten, releasing", FARSWAP_CHUNK_RELEASING, RD, 0, 0, 1,
	  FARSWAP_IO_ZERO },
	/* Written pages come from the placement while it lives. */
	{ "read written, bound and live", FARSWAP_CHUNK_BOUND, RD, 1, 0, 1,
	  FARSWAP_IO_RDMA },
	{ "read written, bound to a dead donor", FARSWAP_CHUNK_BOUND, RD,
	  1, 0, 0, FARSWAP_IO_FAIL },
	{ "read written, migrating (old copy still good)",
	  FARSWAP_CHUNK_MIGRATING, RD, 1, 0, 1, FARSWAP_IO_RDMA },
	{ "read written, migrating from a dead donor", FARSWAP_CHUNK_MIGRATING,
	  RD, 1, 0, 0, FARSWAP_IO_FAIL },
	{ "read written, switching", FARSWAP_CHUNK_SWITCHING, RD, 1, 0, 1,
	  FARSWAP_IO_HOLD },
	{ "read written, unbound", FARSWAP_CHUNK_UNBOUND, RD, 1, 0, 0,
	  FARSWAP_IO_FAIL },
	/* Lost pages fail, even on a live chunk, even mixed with good ones. */
	{ "read lost, unbound", FARSWAP_CHUNK_UNBOUND, RD, 0, 1, 0,
	  FARSWAP_IO_FAIL },
	{ "read lost, rebound and live", FARSWAP_CHUNK_BOUND, RD, 0, 1, 1,
	  FARSWAP_IO_FAIL },
	{ "read lost and written, bound and live", FARSWAP_CHUNK_BOUND, RD,
	  1, 1, 1, FARSWAP_IO_FAIL },
	{ "read lost, binding", FARSWAP_CHUNK_BINDING, RD, 0, 1, 0,
	  FARSWAP_IO_FAIL },
	/* Writes bind an unbound chunk and wait for every other change. */
	{ "write, unbound", FARSWAP_CHUNK_UNBOUND, WR, 0, 0, 0,
	  FARSWAP_IO_BIND },
	{ "write over lost pages, unbound", FARSWAP_CHUNK_UNBOUND, WR, 0, 1, 0,
	  FARSWAP_IO_BIND },
	{ "write, binding", FARSWAP_CHUNK_BINDING, WR, 0, 0, 0,
	  FARSWAP_IO_HOLD },
	{ "write, bound and live", FARSWAP_CHUNK_BOUND, WR, 1, 0, 1,
	  FARSWAP_IO_RDMA },
	{ "write over lost pages, bound and live", FARSWAP_CHUNK_BOUND, WR,
	  0, 1, 1, FARSWAP_IO_RDMA },
	{ "write, bound to a dead donor", FARSWAP_CHUNK_BOUND, WR, 1, 0, 0,
	  FARSWAP_IO_HOLD },
	{ "write, migrating", FARSWAP_CHUNK_MIGRATING, WR, 1, 0, 1,
	  FARSWAP_IO_HOLD },
	{ "write, switching", FARSWAP_CHUNK_SWITCHING, WR, 1, 0, 1,
	  FARSWAP_IO_HOLD },
	{ "write, releasing", FARSWAP_CHUNK_RELEASING, WR, 0, 0, 1,
	  FARSWAP_IO_HOLD },
	/* A corrupt state never reaches RDMA. */
	{ "read, state out of range", FARSWAP_CHUNK_NR_STATES, RD, 1, 0, 1,
	  FARSWAP_IO_FAIL },
	{ "write, state out of range", FARSWAP_CHUNK_NR_STATES, WR, 0, 0, 1,
	  FARSWAP_IO_FAIL },
	{ "write, state UINT_MAX", UINT_MAX, WR, 0, 0, 1, FARSWAP_IO_FAIL },
};

KUNIT_ARRAY_PARAM_DESC(decide, decide_cases, desc);

static void io_decide_test(struct kunit *test)
{
	const struct decide_case *c = test->param_value;
	struct farswap_io_view v = {
		.state = c->state,
		.write = c->write,
		.any_written = c->written,
		.any_lost = c->lost,
		.place_live = c->live,
	};

	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), c->expect);
}

/* The rules of chunkmap.h, over every state and every combination. */
static void io_decide_rules_test(struct kunit *test)
{
	unsigned int state, bits;

	for (state = 0; state < FARSWAP_CHUNK_NR_STATES; state++) {
		for (bits = 0; bits < 16; bits++) {
			struct farswap_io_view v = {
				.state = state,
				.write = bits & 1,
				.any_written = bits & 2,
				.any_lost = bits & 4,
				.place_live = bits & 8,
			};
			enum farswap_io_action act = farswap_io_decide(&v);
			const char *s = farswap_chunk_state_name(state);

			KUNIT_EXPECT_LE_MSG(test, act, FARSWAP_IO_FAIL,
					    "%s bits %u", s, bits);
			if (act == FARSWAP_IO_RDMA)
				KUNIT_EXPECT_TRUE_MSG(test, v.place_live,
						      "RDMA to a dead donor: %s bits %u",
						      s, bits);
			if (!v.write) {
				KUNIT_EXPECT_NE_MSG(test, act, FARSWAP_IO_BIND,
						    "a read binds: %s bits %u",
						    s, bits);
				if (v.any_lost)
					KUNIT_EXPECT_EQ_MSG(test, act,
							    FARSWAP_IO_FAIL,
							    "lost page read: %s bits %u",
							    s, bits);
				else if (!v.any_written)
					KUNIT_EXPECT_EQ_MSG(test, act,
							    FARSWAP_IO_ZERO,
							    "unwritten read: %s bits %u",
							    s, bits);
				continue;
			}
			KUNIT_EXPECT_NE_MSG(test, act, FARSWAP_IO_ZERO,
					    "a write zero-fills: %s bits %u",
					    s, bits);
			KUNIT_EXPECT_NE_MSG(test, act, FARSWAP_IO_FAIL,
					    "a write fails: %s bits %u", s,
					    bits);
			if (state == FARSWAP_CHUNK_UNBOUND)
				KUNIT_EXPECT_EQ_MSG(test, act, FARSWAP_IO_BIND,
						    "unbound write: bits %u",
						    bits);
			if (act == FARSWAP_IO_RDMA)
				KUNIT_EXPECT_EQ_MSG(test, state,
						    FARSWAP_CHUNK_BOUND,
						    "write RDMA while %s", s);
		}
	}
}

/*
 * A copy waiting for its restarted donor (resume.c): reads of written
 * pages wait instead of failing, and nothing else changes.
 */
static void io_decide_suspended_test(struct kunit *test)
{
	struct farswap_io_view v = {
		.state = FARSWAP_CHUNK_BOUND,
		.any_written = true,
		.place_suspended = true,
	};

	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_HOLD);
	v.state = FARSWAP_CHUNK_MIGRATING;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_HOLD);
	v.state = FARSWAP_CHUNK_BOUND;
	v.place_live = true;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_RDMA);
	v.place_live = false;
	/* A page already lost stays lost; one never written reads zeros. */
	v.any_lost = true;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_FAIL);
	v.any_lost = false;
	v.any_written = false;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_ZERO);
	/* Without the wait, the dead copy's pages fail as before. */
	v.any_written = true;
	v.place_suspended = false;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_FAIL);
	/* Writes to it wait either way. */
	v.write = true;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_HOLD);
	v.place_suspended = true;
	KUNIT_EXPECT_EQ(test, farswap_io_decide(&v), FARSWAP_IO_HOLD);
}

/*
 * One chunk through its life, driven the way kmod/io.c drives it: decide
 * under the chunk lock, mark pages written when a write goes to RDMA.
 */
struct model_chunk {
	unsigned int state;
	bool live;
	struct farswap_pages *pages;
};

static enum farswap_io_action model_io(struct model_chunk *s, bool write,
				       u32 first, u32 n)
{
	struct farswap_io_view v = {
		.state = s->state,
		.write = write,
		.any_written = farswap_pages_any_written(s->pages, first, n),
		.any_lost = farswap_pages_any_lost(s->pages, first, n),
		.place_live = s->state != FARSWAP_CHUNK_UNBOUND && s->live,
	};
	enum farswap_io_action act = farswap_io_decide(&v);

	if (act == FARSWAP_IO_RDMA && write)
		farswap_pages_mark_written(s->pages, first, n);
	if (act == FARSWAP_IO_BIND)
		s->state = FARSWAP_CHUNK_BINDING;
	return act;
}

static void chunk_lifecycle_test(struct kunit *test)
{
	struct model_chunk s = {
		.state = FARSWAP_CHUNK_UNBOUND,
		.pages = pages_new(test, FARSWAP_CHUNK_PAGES),
	};

	/* Swap-in of a page never swapped out: zeros, no donor needed. */
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 1), FARSWAP_IO_ZERO);
	/* The first write binds the chunk; the next write waits for it. */
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 5, 1), FARSWAP_IO_BIND);
	KUNIT_EXPECT_EQ(test, s.state, FARSWAP_CHUNK_BINDING);
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 6, 1), FARSWAP_IO_HOLD);
	/* The chunk got its slot: the held writes go out. */
	s.state = FARSWAP_CHUNK_BOUND;
	s.live = true;
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 5, 1), FARSWAP_IO_RDMA);
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 6, 1), FARSWAP_IO_RDMA);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 2), FARSWAP_IO_RDMA);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 7, 1), FARSWAP_IO_ZERO);
	KUNIT_EXPECT_EQ(test, s.pages->used, 2);

	/* The donor dies: reads of its pages fail, writes wait. */
	s.live = false;
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 1), FARSWAP_IO_FAIL);
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 8, 1), FARSWAP_IO_HOLD);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 8, 1), FARSWAP_IO_ZERO);
	/* The loss work unbinds it: pages 5 and 6 are lost for good. */
	KUNIT_EXPECT_EQ(test, farswap_pages_lose(s.pages), 2);
	s.state = FARSWAP_CHUNK_UNBOUND;
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 1), FARSWAP_IO_FAIL);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 4, 2), FARSWAP_IO_FAIL);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 7, 1), FARSWAP_IO_ZERO);

	/* The held write binds it again, on a live donor. */
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 8, 1), FARSWAP_IO_BIND);
	s.state = FARSWAP_CHUNK_BOUND;
	s.live = true;
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 8, 1), FARSWAP_IO_RDMA);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 6, 1), FARSWAP_IO_FAIL);
	/* Swapping page 5 out again makes it readable. */
	KUNIT_EXPECT_EQ(test, model_io(&s, WR, 5, 1), FARSWAP_IO_RDMA);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 1), FARSWAP_IO_RDMA);
	/* Discarded pages read as zeros again, lost or not. */
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(s.pages, 5, 2), 1);
	KUNIT_EXPECT_EQ(test, model_io(&s, RD, 5, 2), FARSWAP_IO_ZERO);
	KUNIT_EXPECT_EQ(test, farswap_pages_discard(s.pages, 8, 1), 0);
	expect_pages_consistent(test, s.pages);
}

static struct kunit_case farswap_chunkmap_cases[] = {
	KUNIT_CASE_PARAM(geometry_init_test, geometry_gen_params),
	KUNIT_CASE_PARAM(split_test, split_gen_params),
	KUNIT_CASE_PARAM(split_every_offset_test, request_size_gen_params),
	KUNIT_CASE_PARAM(split_in_slab_every_offset_test,
			 request_size_gen_params),
	KUNIT_CASE_PARAM(pages_window_test, window_gen_params),
	KUNIT_CASE_PARAM(pages_outside_test, outside_gen_params),
	KUNIT_CASE(pages_discard_remaining_test),
	KUNIT_CASE(pages_discard_lost_test),
	KUNIT_CASE(pages_lose_twice_test),
	KUNIT_CASE(pages_lose_one_test),
	KUNIT_CASE(damage_test),
	KUNIT_CASE(full_device_test),
	KUNIT_CASE(chunk_state_name_test),
	KUNIT_CASE_PARAM(io_decide_test, decide_gen_params),
	KUNIT_CASE(io_decide_rules_test),
	KUNIT_CASE(io_decide_suspended_test),
	KUNIT_CASE(chunk_lifecycle_test),
	{}
};

static struct kunit_suite farswap_chunkmap_suite = {
	.name = "farswap_chunkmap",
	.test_cases = farswap_chunkmap_cases,
};

kunit_test_suite(farswap_chunkmap_suite);

/* One module holds all six suites (see Kbuild): its license, once. */
MODULE_DESCRIPTION("KUnit tests for farswap's RDMA-free logic");
MODULE_LICENSE("GPL");
