// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_latency: the log-linear latency histogram
 * (kmod/latency.c) behind the latency attribute in sysfs.
 *
 * The promises checked: buckets tile the whole u64 range with no gap or
 * overlap, each is at most 1/8 of its floor wide, and a percentile is
 * the upper bound of the bucket that holds the true percentile of the
 * samples, as a sorted copy of the samples computes it here.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/sizes.h>
#include <linux/sort.h>
#include <linux/time64.h>

#include "latency.h"

#define LAST	(FARSWAP_LAT_BUCKETS - 1)

/* Every bucket, against its neighbours and its own bounds. */
static void buckets_tile_test(struct kunit *test)
{
	unsigned int b;

	KUNIT_EXPECT_EQ(test, farswap_lat_bucket_floor(0), 0);
	for (b = 0; b < FARSWAP_LAT_BUCKETS; b++) {
		u64 lo = farswap_lat_bucket_floor(b);
		u64 hi = farswap_lat_bucket_ceil(b);

		KUNIT_ASSERT_LE_MSG(test, lo, hi, "bucket %u", b);
		KUNIT_EXPECT_EQ_MSG(test, farswap_lat_bucket(lo), b,
				    "floor of bucket %u", b);
		KUNIT_EXPECT_EQ_MSG(test, farswap_lat_bucket(hi), b,
				    "ceil of bucket %u", b);
		if (b < LAST) {
			KUNIT_EXPECT_EQ_MSG(test,
					    farswap_lat_bucket_floor(b + 1),
					    hi + 1, "gap after bucket %u", b);
			KUNIT_EXPECT_EQ_MSG(test, farswap_lat_bucket(hi + 1),
					    b + 1, "after bucket %u", b);
		}
		/* Exact below 8 ns, then at most 12.5% wide. */
		if (b < FARSWAP_LAT_SUB)
			KUNIT_EXPECT_EQ(test, lo, hi);
		else if (b < LAST)
			KUNIT_EXPECT_LE_MSG(test, (hi - lo + 1) * 8, lo,
					    "bucket %u: [%llu, %llu]", b, lo,
					    hi);
	}
	KUNIT_EXPECT_EQ(test, farswap_lat_bucket_ceil(LAST), U64_MAX);
	KUNIT_EXPECT_EQ(test, farswap_lat_bucket(U64_MAX), LAST);
}

struct sample_case {
	const char *desc;
	u64 ns;
	unsigned int bucket;
};

static const struct sample_case sample_cases[] = {
	{ "0 ns", 0, 0 },
	{ "7 ns (last exact)", 7, 7 },
	{ "8 ns (first shared)", 8, 8 },
	{ "15 ns", 15, 15 },
	{ "16 ns", 16, 16 },
	{ "17 ns (shares 16's bucket)", 17, 16 },
	{ "18 ns", 18, 17 },
	{ "31 ns", 31, 23 },
	{ "32 ns", 32, 24 },
	{ "1 us", 1000, 63 },
	{ "1 ms", 1000000, 143 },
	{ "last exact octave bucket (15 * 2^30 - 1)", 15ull * SZ_1G - 1,
	  LAST - 1 },
	{ "last bucket floor (15 * 2^30)", 15ull * SZ_1G, LAST },
	{ "2^34 - 1 ns", (1ull << 34) - 1, LAST },
	{ "2^34 ns (first beyond)", 1ull << 34, LAST },
	{ "an hour", 3600ull * NSEC_PER_SEC, LAST },
	{ "U64_MAX", U64_MAX, LAST },
};

KUNIT_ARRAY_PARAM_DESC(sample, sample_cases, desc);

static void sample_bucket_test(struct kunit *test)
{
	const struct sample_case *c = test->param_value;
	unsigned int b = farswap_lat_bucket(c->ns);

	KUNIT_EXPECT_EQ(test, b, c->bucket);
	KUNIT_EXPECT_LE(test, farswap_lat_bucket_floor(b), c->ns);
	KUNIT_EXPECT_GE(test, farswap_lat_bucket_ceil(b), c->ns);
}

/* A longer latency never lands in an earlier bucket. */
static void bucket_monotonic_test(struct kunit *test)
{
	unsigned int prev = 0, k;
	int d;

	for (k = 1; k < 64; k++) {
		for (d = -1; d <= 1; d++) {
			u64 ns = (1ull << k) + d;
			unsigned int b = farswap_lat_bucket(ns);

			KUNIT_EXPECT_GE_MSG(test, b, prev, "%llu ns", ns);
			prev = b;
		}
	}
}

static struct farswap_lat_hist *hist_new(struct kunit *test)
{
	struct farswap_lat_hist *h = kunit_kzalloc(test, sizeof(*h),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	return h;
}

static u64 *counts_new(struct kunit *test)
{
	u64 *counts = kunit_kcalloc(test, FARSWAP_LAT_BUCKETS,
				    sizeof(*counts), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, counts);
	return counts;
}

static void record_test(struct kunit *test)
{
	static const u64 ns[] = { 5, 1000, 1000, 1000000, 20 * NSEC_PER_SEC };
	struct farswap_lat_hist *h = hist_new(test);
	u64 *counts = counts_new(test);
	u64 sum = 0, total = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		farswap_lat_record(h, ns[i]);
		sum += ns[i];
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->count), ARRAY_SIZE(ns));
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->sum_ns), sum);

	farswap_lat_snapshot(h, counts);
	for (i = 0; i < FARSWAP_LAT_BUCKETS; i++)
		total += counts[i];
	KUNIT_EXPECT_EQ(test, total, ARRAY_SIZE(ns));
	KUNIT_EXPECT_EQ(test, counts[farswap_lat_bucket(5)], 1);
	KUNIT_EXPECT_EQ(test, counts[farswap_lat_bucket(1000)], 2);
	KUNIT_EXPECT_EQ(test, counts[farswap_lat_bucket(1000000)], 1);
	KUNIT_EXPECT_EQ(test, counts[LAST], 1);
}

static void percentile_empty_test(struct kunit *test)
{
	u64 *counts = counts_new(test);

	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 0), 0);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500000), 0);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 1000000), 0);
}

/* The sample of rank ceil(n * ppm / 10^6), at least 1, in sorted order. */
static u64 true_percentile(const u64 *sorted, unsigned int n, u32 ppm)
{
	u64 rank = div_u64((u64)n * ppm + 999999, 1000000);

	return sorted[clamp_t(u64, rank, 1, n) - 1];
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct ppm_case {
	const char *desc;
	u32 ppm;
};

static const struct ppm_case ppm_cases[] = {
	{ "p0", 0 }, { "p1", 10000 }, { "p50", 500000 }, { "p90", 900000 },
	{ "p99", 990000 }, { "p99.9", 999000 }, { "p99.99", 999900 },
	{ "p100", 1000000 },
};

KUNIT_ARRAY_PARAM_DESC(ppm, ppm_cases, desc);

#define NR_SAMPLES	1000

/*
 * 1000 latencies from 200 ns to ~100 ms, skewed like swap-ins: most
 * fast, a long tail.  Deterministic, so a failure is reproducible.
 */
static void percentile_vs_sorted_test(struct kunit *test)
{
	const struct ppm_case *c = test->param_value;
	struct farswap_lat_hist *h = hist_new(test);
	u64 *counts = counts_new(test);
	u64 *ns, truth, p;
	unsigned int i;

	ns = kunit_kcalloc(test, NR_SAMPLES, sizeof(*ns), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ns);
	for (i = 0; i < NR_SAMPLES; i++) {
		u64 base = 200 + (i * 7919) % 50000;

		ns[i] = i % 10 ? base : base * (1 + (i * 31) % 2000);
		farswap_lat_record(h, ns[i]);
	}
	sort(ns, NR_SAMPLES, sizeof(*ns), cmp_u64, NULL);
	farswap_lat_snapshot(h, counts);

	truth = true_percentile(ns, NR_SAMPLES, c->ppm);
	p = farswap_lat_percentile(counts, c->ppm);
	/* A bound the true value does not exceed, by at most 12.5%. */
	KUNIT_EXPECT_GE(test, p, truth);
	KUNIT_EXPECT_LE(test, p, truth + truth / 8);
	KUNIT_EXPECT_EQ(test, p,
			farswap_lat_bucket_ceil(farswap_lat_bucket(truth)));
}

/* The rank rounds up: just past the median is the next sample's bucket. */
static void percentile_rank_test(struct kunit *test)
{
	u64 *counts = counts_new(test);
	u64 fast = farswap_lat_bucket_ceil(farswap_lat_bucket(1000));
	u64 slow = farswap_lat_bucket_ceil(farswap_lat_bucket(2000));

	counts[farswap_lat_bucket(1000)] = 50;
	counts[farswap_lat_bucket(2000)] = 50;
	KUNIT_ASSERT_NE(test, fast, slow);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 0), fast);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 1), fast);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500000), fast);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500001), slow);
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 1000000), slow);
}

/* The open last bucket reports its floor, never U64_MAX. */
static void percentile_last_bucket_test(struct kunit *test)
{
	u64 *counts = counts_new(test);
	u64 floor_last = farswap_lat_bucket_floor(LAST);

	counts[farswap_lat_bucket(1000)] = 1;
	counts[farswap_lat_bucket(60 * NSEC_PER_SEC)] = 1;
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500000),
			farswap_lat_bucket_ceil(farswap_lat_bucket(1000)));
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 1000000),
			floor_last);

	/* The bucket before it is an ordinary one. */
	counts[LAST] = 0;
	counts[LAST - 1] = 3;
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 990000),
			floor_last - 1);
}

/*
 * Counts grow for as long as the device lives: 2^45 samples per bucket
 * is about a year at a million I/Os per second.  The percentile must not
 * overflow on the way to the rank.
 */
static void percentile_huge_counts_test(struct kunit *test)
{
	u64 *counts = counts_new(test);

	counts[100] = 1ull << 45;
	counts[200] = 1ull << 45;
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 10000),
			farswap_lat_bucket_ceil(100));
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500000),
			farswap_lat_bucket_ceil(100));
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 500001),
			farswap_lat_bucket_ceil(200));
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 990000),
			farswap_lat_bucket_ceil(200));
	KUNIT_EXPECT_EQ(test, farswap_lat_percentile(counts, 1000000),
			farswap_lat_bucket_ceil(200));
}

static struct kunit_case farswap_latency_cases[] = {
	KUNIT_CASE(buckets_tile_test),
	KUNIT_CASE_PARAM(sample_bucket_test, sample_gen_params),
	KUNIT_CASE(bucket_monotonic_test),
	KUNIT_CASE(record_test),
	KUNIT_CASE(percentile_empty_test),
	KUNIT_CASE_PARAM(percentile_vs_sorted_test, ppm_gen_params),
	KUNIT_CASE(percentile_rank_test),
	KUNIT_CASE(percentile_last_bucket_test),
	KUNIT_CASE(percentile_huge_counts_test),
	{}
};

static struct kunit_suite farswap_latency_suite = {
	.name = "farswap_latency",
	.test_cases = farswap_latency_cases,
};

kunit_test_suite(farswap_latency_suite);
