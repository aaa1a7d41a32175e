// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_replica: which replica of a chunk a read goes to,
 * the order reads fail over in, where writes go, what counts as serving,
 * and the questions asked of a chunk's replica set: which serve, the
 * source of a copy, damaged, degraded (kmod/replica.c).
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

/* Three replicas: 0 serves, 1 is stale, 2 is dead. */
#define MIXED_SET	{ .nr = 3, .live = 0x3, .uptodate = 0x5 }

static void set_serving_test(struct kunit *test)
{
	struct farswap_replica_set s = MIXED_SET;

	KUNIT_EXPECT_EQ(test, farswap_replica_nr_serving(&s), 1u);
	KUNIT_EXPECT_TRUE(test, farswap_replica_serves(&s, 0));
	KUNIT_EXPECT_FALSE(test, farswap_replica_serves(&s, 1));
	KUNIT_EXPECT_FALSE(test, farswap_replica_serves(&s, 2));
	KUNIT_EXPECT_FALSE(test, farswap_replica_serves(&s, 7));
	/* Bits past the placements never count. */
	s.nr = 0;
	KUNIT_EXPECT_EQ(test, farswap_replica_nr_serving(&s), 0u);
	KUNIT_EXPECT_FALSE(test, farswap_replica_serves(&s, 0));
}

/* A replica may go only if another serves in its stead. */
static void set_others_serve_test(struct kunit *test)
{
	struct farswap_replica_set s = MIXED_SET;

	KUNIT_EXPECT_FALSE(test, farswap_replica_others_serve(&s, 0));
	KUNIT_EXPECT_TRUE(test, farswap_replica_others_serve(&s, 1));
	KUNIT_EXPECT_TRUE(test, farswap_replica_others_serve(&s, 2));
	s.live = 0x7;
	KUNIT_EXPECT_TRUE(test, farswap_replica_others_serve(&s, 0));
	KUNIT_EXPECT_TRUE(test, farswap_replica_others_serve(&s, 2));
}

/* The source of a copy: the newest serving replica. */
static void set_source_test(struct kunit *test)
{
	struct farswap_replica_set s = MIXED_SET;

	KUNIT_EXPECT_EQ(test, farswap_replica_source(&s), 0);
	s.live = 0x7;
	KUNIT_EXPECT_EQ(test, farswap_replica_source(&s), 2);
	s.uptodate = 0;
	KUNIT_EXPECT_EQ(test, farswap_replica_source(&s), -1);
	s = (struct farswap_replica_set){};
	KUNIT_EXPECT_EQ(test, farswap_replica_source(&s), -1);
}

static void set_all_live_test(struct kunit *test)
{
	struct farswap_replica_set s = MIXED_SET;

	KUNIT_EXPECT_FALSE(test, farswap_replica_all_live(&s));
	KUNIT_EXPECT_FALSE(test, farswap_replica_all_serve(&s));
	s.live = 0x7;
	KUNIT_EXPECT_TRUE(test, farswap_replica_all_live(&s));
	/* Live is not enough to serve: 1 is stale. */
	KUNIT_EXPECT_FALSE(test, farswap_replica_all_serve(&s));
	s.uptodate = 0x7;
	KUNIT_EXPECT_TRUE(test, farswap_replica_all_serve(&s));
	/* No placement at all: nothing dead, nothing stale. */
	s = (struct farswap_replica_set){};
	KUNIT_EXPECT_TRUE(test, farswap_replica_all_live(&s));
	KUNIT_EXPECT_TRUE(test, farswap_replica_all_serve(&s));
}

/* Damage counts on an up-to-date replica, and once the dead are gone. */
static void set_damaged_test(struct kunit *test)
{
	struct farswap_replica_set s = {
		.nr = 2, .live = 0x3, .uptodate = 0x1, .damaged = 0x2,
	};

	KUNIT_EXPECT_FALSE(test, farswap_replica_damaged(&s));
	s.damaged = 0x1;
	KUNIT_EXPECT_TRUE(test, farswap_replica_damaged(&s));
	s.live = 0x1;
	KUNIT_EXPECT_FALSE(test, farswap_replica_damaged(&s));
}

/*
 * The repair copies a chunk short of what the live donors allow, with a
 * replica to copy from and no dead one; sysfs calls degraded any chunk
 * short of the replicas asked for, or damaged.  Two replicas, two asked.
 */
static const struct {
	const char *why;
	u8 live, uptodate, damaged;
	unsigned int possible;
	bool wants_copy, degraded;
} degraded_cases[] = {
	{ "one serves, 1 is stale",		0x3, 0x1, 0, 2, true, true },
	{ "one live donor: no copy to make",	0x3, 0x1, 0, 1, false, true },
	{ "a dead replica: the loss work first",	0x1, 0x1, 0, 2, false, true },
	{ "none serves: nothing to copy from",	0x3, 0x0, 0, 2, false, true },
	{ "whole",				0x3, 0x3, 0, 2, false, false },
	{ "whole but damaged: healed, not copied", 0x3, 0x3, 0x2, 2, false, true },
};

static void set_degraded_test(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(degraded_cases); i++) {
		struct farswap_replica_set s = {
			.nr = 2,
			.live = degraded_cases[i].live,
			.uptodate = degraded_cases[i].uptodate,
			.damaged = degraded_cases[i].damaged,
		};

		KUNIT_EXPECT_EQ_MSG(test, farswap_replica_wants_copy(&s,
				    degraded_cases[i].possible),
				    degraded_cases[i].wants_copy, "%s",
				    degraded_cases[i].why);
		KUNIT_EXPECT_EQ_MSG(test, farswap_replica_degraded(&s, 2),
				    degraded_cases[i].degraded, "%s",
				    degraded_cases[i].why);
	}
}

static struct kunit_case farswap_replica_cases[] = {
	KUNIT_CASE(read_prefers_fast_test),
	KUNIT_CASE(read_spreads_equals_test),
	KUNIT_CASE(read_round_robin_test),
	KUNIT_CASE(read_skips_unusable_test),
	KUNIT_CASE(failover_order_test),
	KUNIT_CASE(write_set_test),
	KUNIT_CASE(latency_average_test),
	KUNIT_CASE(set_serving_test),
	KUNIT_CASE(set_others_serve_test),
	KUNIT_CASE(set_source_test),
	KUNIT_CASE(set_all_live_test),
	KUNIT_CASE(set_damaged_test),
	KUNIT_CASE(set_degraded_test),
	{}
};

static struct kunit_suite farswap_replica_suite = {
	.name = "farswap_replica",
	.test_cases = farswap_replica_cases,
};

kunit_test_suite(farswap_replica_suite);
