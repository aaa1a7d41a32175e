// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_admit: what the I/O path lets through
 * (kmod/admit.c).
 *
 * The write budget: a write goes while its queue's bytes in flight stay
 * within the cap, or when nothing else of its queue is in flight; no cap
 * lets everything go.  What the data path relies on is that no sequence
 * of writes, completions and cap changes leaves a queue refusing writes
 * with nothing in flight (the stall of a count that went negative and was
 * compared as unsigned), and that a queue's count cannot overflow.
 *
 * DMA-mapping retries: a request whose mapping keeps failing fails after
 * both FARSWAP_NOMAP_TRIES failures in a row and the span of time, never
 * before either (a transient shortage of bounce buffers), and always
 * eventually (the livelock of a segment the DMA layer never takes); a
 * success starts the count over.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/sizes.h>

#include "admit.h"

struct budget_case {
	const char *desc;
	s64 now;		/* in flight, the write's bytes included */
	u32 bytes;
	u32 cap;
	bool admit;
};

static const struct budget_case budget_cases[] = {
	{ "no cap, a lot in flight", 3ll * SZ_1G, SZ_2M, 0, true },
	{ "within the cap", SZ_256K, SZ_4K, SZ_512K, true },
	{ "exactly the cap", SZ_512K, SZ_4K, SZ_512K, true },
	{ "one byte over", SZ_512K + 1, SZ_4K, SZ_512K, false },
	{ "alone and larger than the cap", SZ_2M, SZ_2M, SZ_512K, true },
	{ "alone, count below zero", -(s64)SZ_1M + SZ_4K, SZ_4K, SZ_512K,
	  true },
	{ "count below zero, within the cap", -(s64)SZ_4K, SZ_4K, SZ_512K,
	  true },
	{ "past INT_MAX with others in flight", (s64)1024 * SZ_2M + SZ_2M,
	  SZ_2M, SZ_1G, false },
	{ "largest cap, past U32_MAX", (s64)U32_MAX + SZ_4K, SZ_4K, SZ_1G,
	  false },
};

static void budget_case_desc(const struct budget_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(budget, budget_cases, budget_case_desc);

static void budget_table_test(struct kunit *test)
{
	const struct budget_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, farswap_write_budget_admit(c->now, c->bytes,
							 c->cap), c->admit);
}

/* A queue as dev.c keeps it: the count, and the writes that hold budget. */
#define MODEL_DEPTH	64

struct budget_model {
	s64 count;
	u32 held[MODEL_DEPTH];
	unsigned int nr;
	u32 cap;
};

/* farswap_write_budget_get() without the atomics. */
static bool model_get(struct budget_model *m, u32 bytes)
{
	m->count += bytes;
	if (farswap_write_budget_admit(m->count, bytes, m->cap)) {
		m->held[m->nr++] = bytes;
		return true;
	}
	m->count -= bytes;
	return false;
}

static void model_put(struct budget_model *m, unsigned int i)
{
	m->count -= m->held[i];
	m->held[i] = m->held[--m->nr];
}

static s64 model_sum(const struct budget_model *m)
{
	s64 sum = 0;
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		sum += m->held[i];
	return sum;
}

/*
 * Writes, completions and cap changes at random, the cap going to and
 * from 0 (no cap) while writes are in flight: the count is always the sum
 * of the writes that hold budget, a queue with nothing in flight admits
 * any write, and the writes in flight exceed the cap only by one.
 */
static void budget_model_test(struct kunit *test)
{
	static const u32 caps[] = { 0, SZ_4K, SZ_64K, SZ_512K, SZ_1G };
	static const u32 sizes[] = { SZ_4K, SZ_8K, SZ_64K, SZ_2M };
	struct budget_model m = {};
	struct rnd_state rnd;
	unsigned int step;

	prandom_seed_state(&rnd, 7);
	for (step = 0; step < 100000; step++) {
		u32 r = prandom_u32_state(&rnd);
		u32 bytes = sizes[r % ARRAY_SIZE(sizes)];

		switch ((r >> 8) % 8) {
		case 0:
			m.cap = caps[(r >> 16) % ARRAY_SIZE(caps)];
			break;
		case 1:
		case 2:
		case 3:
			if (m.nr) {
				model_put(&m, (r >> 16) % m.nr);
				break;
			}
			fallthrough;
		default:
			if (m.nr == MODEL_DEPTH)
				break;
			if (!m.nr)
				KUNIT_ASSERT_TRUE_MSG(test, model_get(&m, bytes),
						      "step %u: idle queue refused %u bytes under cap %u",
						      step, bytes, m.cap);
			else if (model_get(&m, bytes) && m.cap)
				KUNIT_ASSERT_LE_MSG(test,
						    model_sum(&m) - bytes,
						    (s64)m.cap,
						    "step %u: admitted past the cap",
						    step);
			break;
		}
		KUNIT_ASSERT_EQ_MSG(test, m.count, model_sum(&m),
				    "step %u: count drifted", step);
	}
	while (m.nr)
		model_put(&m, 0);
	KUNIT_EXPECT_EQ(test, m.count, 0);
}

/*
 * The stall of the review (N7): a count that went below zero while no
 * cap was set must not refuse the next write once a cap is set.
 */
static void budget_negative_test(struct kunit *test)
{
	s64 count = -(s64)SZ_2M;

	KUNIT_EXPECT_TRUE(test, farswap_write_budget_admit(count + SZ_4K,
							   SZ_4K, SZ_512K));
}

/* Rapid retries (every completion reruns the queue) wait for the span. */
static void nomap_rapid_test(struct kunit *test)
{
	struct farswap_nomap n = {};
	unsigned long t = 1000;
	unsigned int i;

	for (i = 1; i < 10000; i++)
		KUNIT_ASSERT_FALSE_MSG(test, farswap_nomap_give_up(&n, t, 500),
				       "gave up after %u tries within the span",
				       i);
	KUNIT_EXPECT_TRUE(test, farswap_nomap_give_up(&n, t + 500, 500));
}

/* Slow retries (the requeue delay) wait for the count. */
static void nomap_slow_test(struct kunit *test)
{
	struct farswap_nomap n = {};
	unsigned long t = 0;
	unsigned int i;

	for (i = 1; i < FARSWAP_NOMAP_TRIES; i++, t += 1000)
		KUNIT_ASSERT_FALSE_MSG(test, farswap_nomap_give_up(&n, t, 10),
				       "gave up after %u tries", i);
	KUNIT_EXPECT_TRUE(test, farswap_nomap_give_up(&n, t, 10));
}

/* A mapping that succeeds in between starts the count and the span over. */
static void nomap_reset_test(struct kunit *test)
{
	struct farswap_nomap n = {};
	unsigned long t = 0;
	unsigned int i;

	for (i = 1; i < FARSWAP_NOMAP_TRIES; i++, t += 100)
		KUNIT_ASSERT_FALSE(test, farswap_nomap_give_up(&n, t, 50));
	farswap_nomap_reset(&n);
	for (i = 1; i < FARSWAP_NOMAP_TRIES; i++, t += 100)
		KUNIT_ASSERT_FALSE(test, farswap_nomap_give_up(&n, t, 50));
	KUNIT_EXPECT_TRUE(test, farswap_nomap_give_up(&n, t, 50));
}

/* The span is measured across a jiffies wrap. */
static void nomap_wrap_test(struct kunit *test)
{
	struct farswap_nomap n = {};
	unsigned long t = ULONG_MAX - 100;
	unsigned int i;

	/* The first failure, at t + 1, starts the span. */
	for (i = 1; i < FARSWAP_NOMAP_TRIES; i++)
		KUNIT_ASSERT_FALSE(test, farswap_nomap_give_up(&n, t + i, 300));
	KUNIT_EXPECT_FALSE(test, farswap_nomap_give_up(&n, t + 300, 300));
	KUNIT_EXPECT_TRUE(test, farswap_nomap_give_up(&n, t + 301, 300));
}

static struct kunit_case admit_cases[] = {
	KUNIT_CASE_PARAM(budget_table_test, budget_gen_params),
	KUNIT_CASE(budget_model_test),
	KUNIT_CASE(budget_negative_test),
	KUNIT_CASE(nomap_rapid_test),
	KUNIT_CASE(nomap_slow_test),
	KUNIT_CASE(nomap_reset_test),
	KUNIT_CASE(nomap_wrap_test),
	{}
};

static struct kunit_suite admit_suite = {
	.name = "farswap_admit",
	.test_cases = admit_cases,
};

kunit_test_suite(admit_suite);
