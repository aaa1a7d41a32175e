// SPDX-License-Identifier: GPL-2.0
/*
 * Memory pressure: /proc parsing and the policy (how many slabs to free,
 * reclaim or take back; which hosts to ask).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pressure.h"

#define MiB (1ull << 20)
#define SLAB (64 * MiB)

static void test_parse_meminfo(void **state)
{
	static const char text[] =
		"MemTotal:       24684084 kB\n"
		"MemFree:        23659052 kB\n"
		"MemAvailable:   24274036 kB\n"
		"Buffers:           11928 kB\n";
	struct fsd_meminfo mi;

	(void)state;
	assert_int_equal(fsd_parse_meminfo(text, &mi), 0);
	assert_int_equal(mi.mem_total, 24684084ull * 1024);
	assert_int_equal(mi.mem_available, 24274036ull * 1024);
	assert_int_not_equal(fsd_parse_meminfo("MemTotal: 5 kB\n", &mi), 0);
	assert_int_not_equal(fsd_parse_meminfo("MemTotal: x kB\nMemAvailable: 1 kB\n",
					       &mi), 0);
	/* "MemAvailableX" is not "MemAvailable". */
	assert_int_not_equal(fsd_parse_meminfo("MemTotal: 5 kB\nMemAvailableX: 1 kB\n",
					       &mi), 0);
	assert_int_not_equal(fsd_parse_meminfo("", &mi), 0);
}

static void test_parse_psi(void **state)
{
	unsigned int v = 0;

	(void)state;
	assert_int_equal(fsd_parse_psi("some avg10=12.34 avg60=1.00 avg300=0.00 total=5\n"
				       "full avg10=3.00 avg60=0.00 avg300=0.00 total=1\n",
				       &v), 0);
	assert_int_equal(v, 1234);
	assert_int_equal(fsd_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
				       &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(fsd_parse_psi("some avg10=100.00 avg60=0\n", &v), 0);
	assert_int_equal(v, 10000);
	assert_int_not_equal(fsd_parse_psi("full avg10=3.00\n", &v), 0);
	assert_int_not_equal(fsd_parse_psi("some avg60=3.00\nfull avg10=1.00\n",
					   &v), 0);
	assert_int_not_equal(fsd_parse_psi("some avg10=x\n", &v), 0);
	assert_int_not_equal(fsd_parse_psi("some avg10=101.0\n", &v), 0);
}

static void test_read_meminfo(void **state)
{
	struct fsd_meminfo mi;

	(void)state;
	assert_int_equal(fsd_read_meminfo("/proc/meminfo", "/nonexistent", &mi),
			 0);
	assert_true(mi.mem_total > 0);
	assert_true(mi.mem_available <= mi.mem_total);
	assert_false(mi.psi_valid);
	assert_int_not_equal(fsd_read_meminfo("/nonexistent", NULL, &mi), 0);
}

static struct fsd_pressure_in base(uint64_t avail)
{
	struct fsd_pressure_in in = {
		.mem_available = avail,
		.headroom = 1000 * MiB,
		.hysteresis = 200 * MiB,
		.slab_size = SLAB,
		.nr_free = 0,
		.nr_reclaimable = 10,
	};

	return in;
}

static void test_plenty(void **state)
{
	struct fsd_pressure_in in = base(5000 * MiB);
	struct fsd_pressure_out out;

	(void)state;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	assert_int_equal(out.release_free, 0);
	assert_int_equal(out.reclaim, 0);
	assert_int_equal(out.repopulate, 0);
}

static void test_deficit_in_whole_slabs(void **state)
{
	struct fsd_pressure_in in = base(1000 * MiB - 1);
	struct fsd_pressure_out out;

	(void)state;
	/* One byte short: one slab. */
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	assert_int_equal(out.reclaim, 1);
	/* 65 MiB short with 64 MiB slabs: two. */
	in.mem_available = 935 * MiB;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.reclaim, 2);
	/* Exactly at the headroom is not below it. */
	in.mem_available = 1000 * MiB;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	assert_int_equal(out.reclaim, 0);
}

static void test_free_slabs_first(void **state)
{
	struct fsd_pressure_in in = base(700 * MiB); /* 300 MiB: 5 slabs */
	struct fsd_pressure_out out;

	(void)state;
	in.nr_free = 3;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.release_free, 3);
	assert_int_equal(out.reclaim, 2);
	in.nr_free = 9;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.release_free, 5);
	assert_int_equal(out.reclaim, 0);
}

static void test_in_flight_counts(void **state)
{
	struct fsd_pressure_in in = base(700 * MiB); /* 5 slabs */
	struct fsd_pressure_out out;

	(void)state;
	in.nr_reclaiming = 3;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.reclaim, 2);
	in.nr_reclaiming = 7;
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	assert_int_equal(out.reclaim, 0);
	/* Never more than can be asked for. */
	in.nr_reclaiming = 0;
	in.nr_reclaimable = 1;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.reclaim, 1);
}

static void test_hysteresis(void **state)
{
	struct fsd_pressure_in in = base(1100 * MiB);	/* in the band */
	struct fsd_pressure_out out;

	(void)state;
	in.nr_released = 4;
	/* Not under before: entering the band does not start pressure. */
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	assert_int_equal(out.repopulate, 0);	/* but nothing to spare */
	/* Under before: the band keeps it under, with nothing to do. */
	in.was_under = true;
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	assert_int_equal(out.reclaim, 0);
	assert_int_equal(out.repopulate, 0);
	/* Above headroom + hysteresis: over. */
	in.mem_available = 1201 * MiB;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
}

static void test_repopulate_keeps_margin(void **state)
{
	struct fsd_pressure_in in = base(1200 * MiB + 3 * SLAB + 5);
	struct fsd_pressure_out out;

	(void)state;
	in.nr_released = 10;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.repopulate, 3);
	/* After taking them MemAvailable stays above the band. */
	assert_true(in.mem_available - out.repopulate * SLAB >=
		    in.headroom + in.hysteresis);
	in.nr_released = 2;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.repopulate, 2);
	in.nr_released = 0;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.repopulate, 0);
}

static void test_psi(void **state)
{
	struct fsd_pressure_in in = base(1100 * MiB);	/* in the band */
	struct fsd_pressure_out out;

	(void)state;
	in.psi = 3000;
	in.psi_valid = true;
	/* Off by default. */
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	in.psi_threshold = 2000;
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	/* Up to headroom + hysteresis: 100 MiB = 2 slabs. */
	assert_int_equal(out.reclaim, 2);
	/* Stalls with plenty of memory are not ours to fix. */
	in.mem_available = 5000 * MiB;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	/* Below the threshold. */
	in.mem_available = 1100 * MiB;
	in.psi = 1999;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	in.psi = 3000;
	in.psi_valid = false;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
}

static void test_pick_most_held(void **state)
{
	struct fsd_pressure_host h[3] = {
		{ .reclaimable = 2 }, { .reclaimable = 6 }, { .reclaimable = 3 },
	};

	(void)state;
	assert_int_equal(fsd_pressure_pick(h, 3, 1, 16), 1);
	assert_int_equal(h[1].pick, 1);
	assert_int_equal(h[0].pick + h[2].pick, 0);
	/* Levels the biggest down: 6,3,2 less 5 is 2,2,2 (ties: earlier). */
	assert_int_equal(fsd_pressure_pick(h, 3, 5, 16), 5);
	assert_int_equal(h[1].pick, 4);
	assert_int_equal(h[2].pick, 1);
	assert_int_equal(h[0].pick, 0);
	/* Everything, and no more. */
	assert_int_equal(fsd_pressure_pick(h, 3, 100, 16), 11);
	assert_int_equal(h[0].pick, 2);
	assert_int_equal(h[1].pick, 6);
	assert_int_equal(h[2].pick, 3);
}

static void test_pick_outstanding_limit(void **state)
{
	struct fsd_pressure_host h[2] = {
		{ .reclaimable = 40, .outstanding = 14 },
		{ .reclaimable = 1, .outstanding = 0 },
	};

	(void)state;
	assert_int_equal(fsd_pressure_pick(h, 2, 10, 16), 3);
	assert_int_equal(h[0].pick, 2);	/* 14 + 2 = 16: full */
	assert_int_equal(h[1].pick, 1);
	h[0].outstanding = 16;
	h[1].reclaimable = 0;
	assert_int_equal(fsd_pressure_pick(h, 2, 10, 16), 0);
	assert_int_equal(fsd_pressure_pick(h, 0, 10, 16), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_meminfo),
		cmocka_unit_test(test_parse_psi),
		cmocka_unit_test(test_read_meminfo),
		cmocka_unit_test(test_plenty),
		cmocka_unit_test(test_deficit_in_whole_slabs),
		cmocka_unit_test(test_free_slabs_first),
		cmocka_unit_test(test_in_flight_counts),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_repopulate_keeps_margin),
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_pick_most_held),
		cmocka_unit_test(test_pick_outstanding_limit),
	};

	return cmocka_run_group_tests_name("pressure", tests, NULL, NULL);
}
