// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_replica: which replica of a chunk a read goes to,
 * the order reads fail over in, where writes go, and what counts as
 * serving (kmod/replica.c).
 */
#include <kunit/test.h>

#include "replica.h"

#define LIVE_UP(lat)	{ .live = true, .uptodate = true, .lat_ns = (lat) }

static void read_prefers_fast_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		LIVE_UP(900000), LIVE_UP(300000), LIVE_UP(600000),
	};
	unsigned int spread;

	for (spread = 0; spread < 16; spread++)
		KUNIT_EXPECT_EQ(test, farswap_replica_pick_read(v, 3, spread, FARSWAP_READ_FASTEST), 1);
}

static void read_spreads_equals_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		LIVE_UP(500000), LIVE_UP(520000), LIVE_UP(5000000),
	};
	bool seen[3] = {};
	unsigned int spread;

	for (spread = 0; spread < 16; spread++)
		seen[farswap_replica_pick_read(v, 3, spread, FARSWAP_READ_FASTEST)] = true;
	KUNIT_EXPECT_TRUE(test, seen[0]);
	KUNIT_EXPECT_TRUE(test, seen[1]);
	KUNIT_EXPECT_FALSE(test, seen[2]);
}

/* Round-robin reads every serving copy, however slow, and only those. */
static void read_round_robin_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		LIVE_UP(300000),
		{ .live = false, .uptodate = true, .lat_ns = 1 },
		LIVE_UP(9000000),
	};
	unsigned int seen[3] = {}, spread;

	for (spread = 0; spread < 16; spread++)
		seen[farswap_replica_pick_read(v, 3, spread,
					       FARSWAP_READ_ROUND_ROBIN)]++;
	KUNIT_EXPECT_EQ(test, seen[0], 8u);
	KUNIT_EXPECT_EQ(test, seen[1], 0u);
	KUNIT_EXPECT_EQ(test, seen[2], 8u);
	v[0].tried = true;
	KUNIT_EXPECT_EQ(test, farswap_replica_pick_read(v, 3, 0,
			FARSWAP_READ_ROUND_ROBIN), 2);
}

static void read_skips_unusable_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		{ .live = false, .uptodate = true, .lat_ns = 1 },
		{ .live = true, .uptodate = false, .lat_ns = 1 },
		LIVE_UP(9000000),
	};

	KUNIT_EXPECT_EQ(test, farswap_replica_pick_read(v, 3, 0, FARSWAP_READ_FASTEST), 2);
	v[2].live = false;
	KUNIT_EXPECT_EQ(test, farswap_replica_pick_read(v, 3, 0, FARSWAP_READ_FASTEST), -1);
	KUNIT_EXPECT_EQ(test, farswap_replica_pick_read(v, 0, 0, FARSWAP_READ_FASTEST), -1);
}

/* A failed read moves on: every serving replica once, then none. */
static void failover_order_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		LIVE_UP(100), LIVE_UP(300), LIVE_UP(200),
	};
	int expect[] = { 0, 2, 1, -1 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(expect); i++) {
		int r = farswap_replica_pick_read(v, 3, 7,
						  FARSWAP_READ_FASTEST);

		KUNIT_EXPECT_EQ(test, r, expect[i]);
		if (r >= 0)
			v[r].tried = true;
	}
}

static void write_set_test(struct kunit *test)
{
	struct farswap_replica_view v[] = {
		LIVE_UP(1),
		{ .live = false, .uptodate = true },
		LIVE_UP(1),
	};

	KUNIT_EXPECT_EQ(test, farswap_replica_write_set(v, 3), 0x5u);
	KUNIT_EXPECT_EQ(test, farswap_replica_serving(v, 3), 2u);
	v[0].uptodate = false;
	KUNIT_EXPECT_EQ(test, farswap_replica_write_set(v, 3), 0x4u);
	/* Tried (a failed read) is no reason to skip a write. */
	v[2].tried = true;
	KUNIT_EXPECT_EQ(test, farswap_replica_write_set(v, 3), 0x4u);
	v[2].live = false;
	KUNIT_EXPECT_EQ(test, farswap_replica_serving(v, 3), 0u);
}

static void latency_average_test(struct kunit *test)
{
	u64 avg = farswap_replica_lat_update(0, 800);
	int i;

	KUNIT_EXPECT_EQ(test, avg, 800);
	for (i = 0; i < 100; i++)
		avg = farswap_replica_lat_update(avg, 8000);
	KUNIT_EXPECT_GT(test, avg, 7000);
	KUNIT_EXPECT_LE(test, avg, 8000);
	avg = farswap_replica_lat_update(avg, 0);
	KUNIT_EXPECT_LT(test, avg, 8000);
}

static struct kunit_case farswap_replica_cases[] = {
	KUNIT_CASE(read_prefers_fast_test),
	KUNIT_CASE(read_spreads_equals_test),
	KUNIT_CASE(read_round_robin_test),
	KUNIT_CASE(read_skips_unusable_test),
	KUNIT_CASE(failover_order_test),
	KUNIT_CASE(write_set_test),
	KUNIT_CASE(latency_average_test),
	{}
};

static struct kunit_suite farswap_replica_suite = {
	.name = "farswap_replica",
	.test_cases = farswap_replica_cases,
};

kunit_test_suite(farswap_replica_suite);
