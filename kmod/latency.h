/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency histograms: log-linear buckets (eight per power of two, so a
 * percentile is within 12.5%) over nanoseconds, lock-free to record from
 * completion context.  Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_LATENCY_H
#define FARSWAP_LATENCY_H

#include <linux/atomic.h>
#include <linux/types.h>

#define FARSWAP_LAT_SUB_BITS	3
#define FARSWAP_LAT_SUB		(1u << FARSWAP_LAT_SUB_BITS)
/* 256 buckets reach 2^34 ns (17 s); slower samples land in the last. */
#define FARSWAP_LAT_BUCKETS	256

struct farswap_lat_hist {
	atomic64_t bucket[FARSWAP_LAT_BUCKETS];
	atomic64_t count;
	atomic64_t sum_ns;
};

unsigned int farswap_lat_bucket(u64 ns);
u64 farswap_lat_bucket_floor(unsigned int b);
u64 farswap_lat_bucket_ceil(unsigned int b);
void farswap_lat_record(struct farswap_lat_hist *h, u64 ns);
void farswap_lat_snapshot(const struct farswap_lat_hist *h, u64 *counts);
u64 farswap_lat_percentile(const u64 *counts, u32 ppm);

#endif /* FARSWAP_LATENCY_H */
