// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_donor_state: the donor connection state machine
 * (kmod/donor_state.c), which kmod/conn.c changes state through and nothing
 * else.  The table below is the diagram of donor_state.h written out for every
 * ordered pair of states, so a transition added or dropped by accident
 * fails here by name.
 *
 * Errors: an error on a live session fails it; an error while a session
 * connects fails that attempt once, and an attempt that failed never
 * goes live (an error during the I/O queues' handshakes used to be
 * dropped, and the session went live on a dead control queue pair).
 */
#include <kunit/test.h>

#include "donor_state.h"

#define NEW		FARSWAP_DONOR_NEW
#define CONNECTING	FARSWAP_DONOR_CONNECTING
#define LIVE		FARSWAP_DONOR_LIVE
#define FAILED		FARSWAP_DONOR_FAILED
#define WAITING		FARSWAP_DONOR_WAITING
#define DELETING	FARSWAP_DONOR_DELETING

struct transition_case {
	unsigned int from;
	unsigned int to;
	bool allowed;
	const char *why;
};

static const struct transition_case transition_cases[] = {
	{ NEW, NEW, false, "no self transitions" },
	{ NEW, CONNECTING, true, "first connect" },
	{ NEW, LIVE, false, "live only after connecting" },
	{ NEW, FAILED, false, "nothing to fail yet" },
	{ NEW, WAITING, false, "nothing to reconnect yet" },
	{ NEW, DELETING, true, "detach before connecting" },

	{ CONNECTING, NEW, false, "never new again" },
	{ CONNECTING, CONNECTING, false, "one connect at a time" },
	{ CONNECTING, LIVE, true, "all queues connected" },
	{ CONNECTING, FAILED, false, "a failed attempt waits, not fails" },
	{ CONNECTING, WAITING, true, "a reconnect attempt failed" },
	{ CONNECTING, DELETING, true, "detach while connecting" },

	{ LIVE, NEW, false, "never new again" },
	{ LIVE, CONNECTING, false, "tear down before reconnecting" },
	{ LIVE, LIVE, false, "a second go-live would bump the session" },
	{ LIVE, FAILED, true, "an error on a live donor" },
	{ LIVE, WAITING, false, "fail first: the teardown is skipped" },
	{ LIVE, DELETING, true, "detach a live donor" },

	{ FAILED, NEW, false, "never new again" },
	{ FAILED, CONNECTING, false, "wait first: the teardown is skipped" },
	{ FAILED, LIVE, false, "a failed session never comes back" },
	{ FAILED, FAILED, false, "only the first error schedules a teardown" },
	{ FAILED, WAITING, true, "torn down, reconnect scheduled" },
	{ FAILED, DELETING, true, "detach a failed donor" },

	{ WAITING, NEW, false, "never new again" },
	{ WAITING, CONNECTING, true, "reconnect attempt" },
	{ WAITING, LIVE, false, "live only after connecting" },
	{ WAITING, FAILED, false, "nothing live to fail" },
	{ WAITING, WAITING, false, "one reconnect scheduled at a time" },
	{ WAITING, DELETING, true, "detach a waiting donor" },

	{ DELETING, NEW, false, "deleting is final" },
	{ DELETING, CONNECTING, false, "no reconnect while detaching" },
	{ DELETING, LIVE, false, "deleting is final" },
	{ DELETING, FAILED, false, "deleting is final" },
	{ DELETING, WAITING, false, "no reconnect while detaching" },
	{ DELETING, DELETING, false, "deleting is final" },
};

static void transition_desc(const struct transition_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s to %s",
		 farswap_donor_state_name(c->from),
		 farswap_donor_state_name(c->to));
}

KUNIT_ARRAY_PARAM(transition, transition_cases, transition_desc);

static void transition_test(struct kunit *test)
{
	const struct transition_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, farswap_donor_state_allowed(c->from, c->to),
			    c->allowed, "%s", c->why);
}

/* The table above really is every pair, each once. */
static void table_is_complete_test(struct kunit *test)
{
	u8 count[FARSWAP_DONOR_NR_STATES][FARSWAP_DONOR_NR_STATES] = {};
	unsigned int i, a, b;

	for (i = 0; i < ARRAY_SIZE(transition_cases); i++) {
		const struct transition_case *c = &transition_cases[i];

		KUNIT_ASSERT_LT(test, c->from, FARSWAP_DONOR_NR_STATES);
		KUNIT_ASSERT_LT(test, c->to, FARSWAP_DONOR_NR_STATES);
		count[c->from][c->to]++;
	}
	for (a = 0; a < FARSWAP_DONOR_NR_STATES; a++)
		for (b = 0; b < FARSWAP_DONOR_NR_STATES; b++)
			KUNIT_EXPECT_EQ_MSG(test, count[a][b], 1,
					    "pair %u -> %u", a, b);
}

/* A corrupt state is never a way in or out. */
static void out_of_range_test(struct kunit *test)
{
	static const unsigned int bad[] = {
		FARSWAP_DONOR_NR_STATES, FARSWAP_DONOR_NR_STATES + 1, 63, 64,
		255, UINT_MAX,
	};
	unsigned int i, s;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		for (s = 0; s < FARSWAP_DONOR_NR_STATES; s++) {
			KUNIT_EXPECT_FALSE_MSG(test,
					       farswap_donor_state_allowed(bad[i], s),
					       "%u -> %u", bad[i], s);
			KUNIT_EXPECT_FALSE_MSG(test,
					       farswap_donor_state_allowed(s, bad[i]),
					       "%u -> %u", s, bad[i]);
		}
		KUNIT_EXPECT_FALSE(test,
				   farswap_donor_state_allowed(bad[i], bad[i]));
		KUNIT_EXPECT_STREQ(test, farswap_donor_state_name(bad[i]),
				   "invalid");
	}
}

/* The paths kmod/conn.c takes, step by step, are all allowed. */
static void lifecycle_test(struct kunit *test)
{
	static const unsigned int path[] = {
		NEW, CONNECTING, LIVE,		/* attach */
		FAILED, WAITING, CONNECTING,	/* error, reconnect fails */
		WAITING, CONNECTING, LIVE,	/* reconnect succeeds */
		FAILED, WAITING, DELETING,	/* detach while waiting */
	};
	unsigned int i;

	for (i = 1; i < ARRAY_SIZE(path); i++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      farswap_donor_state_allowed(path[i - 1],
								  path[i]),
				      "step %u: %s to %s", i,
				      farswap_donor_state_name(path[i - 1]),
				      farswap_donor_state_name(path[i]));
}

/*
 * Reachability: from every state but DELETING a donor can get back to
 * LIVE (the reconnect loop is closed) and can always be deleted; from
 * DELETING nothing is reachable.
 */
static unsigned int reachable_from(unsigned int from)
{
	unsigned int seen = BIT(from), grew, s, t;

	do {
		grew = 0;
		for (s = 0; s < FARSWAP_DONOR_NR_STATES; s++) {
			if (!(seen & BIT(s)))
				continue;
			for (t = 0; t < FARSWAP_DONOR_NR_STATES; t++) {
				if (!(seen & BIT(t)) &&
				    farswap_donor_state_allowed(s, t)) {
					seen |= BIT(t);
					grew = 1;
				}
			}
		}
	} while (grew);
	return seen;
}

static void reachability_test(struct kunit *test)
{
	unsigned int s;

	for (s = 0; s < FARSWAP_DONOR_NR_STATES; s++) {
		unsigned int r = reachable_from(s);
		const char *name = farswap_donor_state_name(s);

		if (s == DELETING) {
			KUNIT_EXPECT_EQ(test, r, BIT(DELETING));
			continue;
		}
		KUNIT_EXPECT_TRUE_MSG(test, r & BIT(LIVE),
				      "%s cannot get back to live", name);
		KUNIT_EXPECT_TRUE_MSG(test,
				      farswap_donor_state_allowed(s, DELETING),
				      "%s cannot be deleted", name);
		KUNIT_EXPECT_FALSE_MSG(test, r & BIT(NEW) && s != NEW,
				       "%s can become new again", name);
	}
}

static void names_test(struct kunit *test)
{
	unsigned int a, b;

	for (a = 0; a < FARSWAP_DONOR_NR_STATES; a++) {
		const char *name = farswap_donor_state_name(a);

		KUNIT_ASSERT_NOT_NULL(test, name);
		KUNIT_EXPECT_GT(test, strlen(name), 0);
		KUNIT_EXPECT_STRNEQ(test, name, "invalid");
		for (b = 0; b < a; b++)
			KUNIT_EXPECT_STRNEQ(test, name,
					    farswap_donor_state_name(b));
	}
}

struct error_case {
	unsigned int state;
	bool attempt_failed;
	enum farswap_error_action act;
	const char *why;
};

static const struct error_case error_cases[] = {
	{ NEW, false, FARSWAP_ERR_IGNORE, "never connected" },
	{ CONNECTING, false, FARSWAP_ERR_FAIL_ATTEMPT, "fails the attempt" },
	{ CONNECTING, true, FARSWAP_ERR_IGNORE, "attempt already failed" },
	{ LIVE, false, FARSWAP_ERR_FAIL_SESSION, "fails the session" },
	{ FAILED, false, FARSWAP_ERR_IGNORE, "already failing" },
	{ WAITING, false, FARSWAP_ERR_IGNORE, "torn down" },
	{ DELETING, false, FARSWAP_ERR_IGNORE, "going away" },
	{ DELETING, true, FARSWAP_ERR_IGNORE, "going away, attempt failed" },
	{ FARSWAP_DONOR_NR_STATES, false, FARSWAP_ERR_IGNORE, "out of range" },
};

static void error_desc(const struct error_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %s",
		 farswap_donor_state_name(c->state), c->why);
}

KUNIT_ARRAY_PARAM(error, error_cases, error_desc);

static void error_action_test(struct kunit *test)
{
	const struct error_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, farswap_donor_error_action(c->state,
							 c->attempt_failed),
			c->act);
}

/*
 * Going live: only from CONNECTING, only if the attempt did not fail;
 * and whatever a session fails with, it moves only where the table lets
 * it.
 */
static void go_live_test(struct kunit *test)
{
	unsigned int s;

	for (s = 0; s <= FARSWAP_DONOR_NR_STATES; s++) {
		KUNIT_EXPECT_EQ_MSG(test, farswap_donor_may_go_live(s, false),
				    s == CONNECTING, "state %u", s);
		KUNIT_EXPECT_FALSE_MSG(test, farswap_donor_may_go_live(s, true),
				       "state %u after a failed attempt", s);
		if (farswap_donor_error_action(s, false) ==
		    FARSWAP_ERR_FAIL_SESSION)
			KUNIT_EXPECT_TRUE_MSG(test,
					      farswap_donor_state_allowed(s, FAILED),
					      "state %u", s);
	}
}

/*
 * An attempt: connect, an error during the I/O queues' handshakes, then
 * the try to go live, which must fail; the next attempt starts clean.
 */
static void failed_attempt_test(struct kunit *test)
{
	unsigned int state = WAITING;
	bool failed = false;

	KUNIT_ASSERT_TRUE(test, farswap_donor_state_allowed(state, CONNECTING));
	state = CONNECTING;
	failed = false;		/* farswap_donor_connect() clears it */
	KUNIT_ASSERT_EQ(test, farswap_donor_error_action(state, failed),
			FARSWAP_ERR_FAIL_ATTEMPT);
	failed = true;
	/* The teardown's flushes report nothing more. */
	KUNIT_EXPECT_EQ(test, farswap_donor_error_action(state, failed),
			FARSWAP_ERR_IGNORE);
	KUNIT_EXPECT_FALSE(test, farswap_donor_may_go_live(state, failed));
	KUNIT_ASSERT_TRUE(test, farswap_donor_state_allowed(state, WAITING));
	state = WAITING;
	KUNIT_ASSERT_TRUE(test, farswap_donor_state_allowed(state, CONNECTING));
	state = CONNECTING;
	failed = false;
	KUNIT_EXPECT_TRUE(test, farswap_donor_may_go_live(state, failed));
}

struct passes_case {
	int err;
	bool passes;
	const char *why;
};

/* What kmod/conn.c returns for each way a first connect fails. */
static const struct passes_case passes_cases[] = {
	{ -ETIMEDOUT, true, "did not answer within the timeout" },
	{ -EHOSTUNREACH, true, "address resolution failed" },
	{ -ENETUNREACH, true, "route resolution failed" },
	{ -EADDRNOTAVAIL, true, "no local RDMA device routes to it yet" },
	{ -ENODEV, true, "no RDMA device yet (a link coming up at boot)" },
	{ -ECONNREFUSED, true, "nobody listening: farswapd stopped" },
	{ -ECONNRESET, true, "failed while connecting" },
	{ -ENOSPC, true, "donor short of memory" },
	{ -EBUSY, true, "donor full (max-hosts)" },
	{ -EACCES, false, "wrong key, or a key it requires" },
	{ -EPROTONOSUPPORT, false, "another protocol version" },
	{ -EPROTO, false, "not farswapd's reply" },
	{ -EINVAL, false, "slabs of another size" },
	{ -EOPNOTSUPP, false, "an RDMA device farswap cannot use" },
	{ -EXDEV, false, "queues on two RDMA devices" },
	{ -ENOMEM, false, "this host is out of memory" },
	{ 0, false, "not a failure" },
};

static void passes_desc(const struct passes_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%d: %s", c->err, c->why);
}

KUNIT_ARRAY_PARAM(passes, passes_cases, passes_desc);

/*
 * A degraded attach goes on without a donor whose failure may pass and
 * fails on one that refused for good.
 */
static void connect_error_passes_test(struct kunit *test)
{
	const struct passes_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, farswap_connect_error_passes(c->err),
			    c->passes, "%s", c->why);
}

static struct kunit_case farswap_donor_state_cases[] = {
	KUNIT_CASE_PARAM(transition_test, transition_gen_params),
	KUNIT_CASE(table_is_complete_test),
	KUNIT_CASE(out_of_range_test),
	KUNIT_CASE(lifecycle_test),
	KUNIT_CASE(reachability_test),
	KUNIT_CASE(names_test),
	KUNIT_CASE_PARAM(error_action_test, error_gen_params),
	KUNIT_CASE(go_live_test),
	KUNIT_CASE(failed_attempt_test),
	KUNIT_CASE_PARAM(connect_error_passes_test, passes_gen_params),
	{}
};

static struct kunit_suite farswap_donor_state_suite = {
	.name = "farswap_donor_state",
	.test_cases = farswap_donor_state_cases,
};

kunit_test_suite(farswap_donor_state_suite);
