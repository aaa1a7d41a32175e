// SPDX-License-Identifier: GPL-2.0
/*
 * Latency histograms (see latency.h).
 */
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/math64.h>

#include "latency.h"

/* Bucket of a sample: exact below 8 ns, then 8 buckets per octave. */
unsigned int farswap_lat_bucket(u64 ns)
{
	unsigned int msb, b;

	if (ns < FARSWAP_LAT_SUB)
		return ns;
	msb = fls64(ns) - 1;
	b = (msb - FARSWAP_LAT_SUB_BITS + 1) * FARSWAP_LAT_SUB +
	    ((ns >> (msb - FARSWAP_LAT_SUB_BITS)) & (FARSWAP_LAT_SUB - 1));
	return b < FARSWAP_LAT_BUCKETS ? b : FARSWAP_LAT_BUCKETS - 1;
}

/* Smallest sample that lands in bucket @b. */
u64 farswap_lat_bucket_floor(unsigned int b)
{
	unsigned int octave = b / FARSWAP_LAT_SUB, sub = b % FARSWAP_LAT_SUB;

	if (b < FARSWAP_LAT_SUB)
		return b;
	return (u64)(FARSWAP_LAT_SUB + sub) << (octave - 1);
}

/* Largest sample that lands in bucket @b (the last bucket is open). */
u64 farswap_lat_bucket_ceil(unsigned int b)
{
	if (b + 1 >= FARSWAP_LAT_BUCKETS)
		return U64_MAX;
	return farswap_lat_bucket_floor(b + 1) - 1;
}

void farswap_lat_record(struct farswap_lat_hist *h, u64 ns)
{
	atomic64_inc(&h->bucket[farswap_lat_bucket(ns)]);
	atomic64_inc(&h->count);
	atomic64_add(ns, &h->sum_ns);
}

void farswap_lat_snapshot(const struct farswap_lat_hist *h, u64 *counts)
{
	unsigned int b;

	for (b = 0; b < FARSWAP_LAT_BUCKETS; b++)
		counts[b] = atomic64_read(&h->bucket[b]);
}

/**
 * farswap_lat_percentile - a percentile of a histogram snapshot
 * @counts: FARSWAP_LAT_BUCKETS counts
 * @ppm: the percentile in parts per million (500000 for the median)
 *
 * Return: the upper bound, in ns, of the bucket holding the percentile (a
 * bound the true value does not exceed), the floor of the last bucket if
 * it holds it, or 0 for an empty histogram.
 */
u64 farswap_lat_percentile(const u64 *counts, u32 ppm)
{
	u64 total = 0, seen = 0, rank;
	unsigned int b;
	u32 rem;

	for (b = 0; b < FARSWAP_LAT_BUCKETS; b++)
		total += counts[b];
	if (!total)
		return 0;
	/*
	 * The sample of rank ceil(total * ppm / 1e6), counting from 1.
	 * total * ppm overflows past 2^44 samples (seven months at a million
	 * I/Os a second), so divide first and round up the remainder's part.
	 */
	rank = div_u64_rem(total, 1000000, &rem) * ppm +
	       div_u64((u64)rem * ppm + 999999, 1000000);
	if (!rank)
		rank = 1;
	for (b = 0; b < FARSWAP_LAT_BUCKETS; b++) {
		seen += counts[b];
		if (seen >= rank)
			break;
	}
	if (b >= FARSWAP_LAT_BUCKETS - 1)
		return farswap_lat_bucket_floor(FARSWAP_LAT_BUCKETS - 1);
	return farswap_lat_bucket_ceil(b);
}
