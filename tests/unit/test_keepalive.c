// SPDX-License-Identifier: GPL-2.0
/*
 * Keepalive decisions: when an idle session is probed, how often the
 * daemon looks, how long a dead host keeps its slabs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "keepalive.h"

static struct fsd_ka_in idle_for(uint64_t ms)
{
	struct fsd_ka_in in = {
		.now = 100000 + ms,
		.last_active = 100000,
		.interval = 15000,
		.eligible = true,
		.max_unsolicited = 16,
	};

	return in;
}

static void test_probe_only_when_idle(void **state)
{
	struct fsd_ka_in in = idle_for(14999);

	(void)state;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_ACTIVE);
	in = idle_for(15000);
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_PROBE);
	in = idle_for(86400000);
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_PROBE);
	/* A clock that seems to run backwards is not idleness. */
	in = idle_for(0);
	in.now = in.last_active - 1;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_ACTIVE);
}

static void test_off(void **state)
{
	struct fsd_ka_in in = idle_for(60000);

	(void)state;
	in.interval = 0;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_OFF);
	/* Closing, not up yet, or no unsolicited STATS_REP wanted. */
	in = idle_for(60000);
	in.eligible = false;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_OFF);
}

static void test_one_probe_at_a_time(void **state)
{
	struct fsd_ka_in in = idle_for(60000);

	(void)state;
	/* A probe waiting for a slow ACK is left alone: no second one. */
	in.notice_in_flight = true;
	in.unsolicited = 1;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_WAIT);
	/* ... however long it waits: only its completion decides. */
	in.now += 10 * 60000;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_WAIT);
}

static void test_flow_control(void **state)
{
	struct fsd_ka_in in = idle_for(60000);

	(void)state;
	in.unsolicited = 15;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_PROBE);
	in.unsolicited = 16;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_NO_ROOM);
	in.unsolicited = 17;
	assert_int_equal(fsd_keepalive_check(&in), FSD_KA_NO_ROOM);
	assert_string_equal(fsd_keepalive_verdict_str(FSD_KA_NO_ROOM),
			    "no room for a probe");
}

static void test_period(void **state)
{
	(void)state;
	assert_int_equal(fsd_keepalive_period(0), 0);
	assert_int_equal(fsd_keepalive_period(15000), 1000);
	assert_int_equal(fsd_keepalive_period(2000), 500);
	assert_int_equal(fsd_keepalive_period(400), 100);
	assert_int_equal(fsd_keepalive_period(100), 100);
	assert_int_equal(fsd_keepalive_period(50), 50);
	assert_int_equal(fsd_keepalive_period(86400000), 1000);
}

static void test_give_up_time(void **state)
{
	(void)state;
	/* 7 transmissions of 4.096 us * 2^19 = 2.147 s: 15.03 s, rounded up. */
	assert_int_equal(fsd_rc_give_up_ms(19, 6), 15033);
	assert_int_equal(fsd_rc_give_up_ms(18, 6), 7517);
	assert_int_equal(fsd_rc_give_up_ms(14, 0), 68);
	/* Never: no timeout, or a count Soft-RoCE retries forever. */
	assert_true(fsd_rc_give_up_ms(0, 6) == UINT64_MAX);
	assert_true(fsd_rc_give_up_ms(19, 7) == UINT64_MAX);
	assert_true(fsd_rc_give_up_ms(32, 1) == UINT64_MAX);
	/* The donor's own control QP settings are bounded, 10-20 s. */
	assert_true(fsd_rc_give_up_ms(FSD_CTRL_ACK_TIMEOUT,
				      FSD_CTRL_RETRY_CNT) >= 10000);
	assert_true(fsd_rc_give_up_ms(FSD_CTRL_ACK_TIMEOUT,
				      FSD_CTRL_RETRY_CNT) <= 20000);
	assert_int_equal(FSD_CTRL_RNR_RETRY, 7);	/* slow hosts live */
}

static void test_bound(void **state)
{
	(void)state;
	/* 15 s idle, a check at most 1 s late, 15.03 s of retries. */
	assert_int_equal(fsd_keepalive_bound_ms(15000), 31033);
	assert_int_equal(fsd_keepalive_bound_ms(2000), 17533);
	assert_true(fsd_keepalive_bound_ms(0) == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_only_when_idle),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_one_probe_at_a_time),
		cmocka_unit_test(test_flow_control),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_give_up_time),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests_name("keepalive", tests, NULL, NULL);
}
