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

/* A 6.12 guest's /proc/zoneinfo, cut down: three pagesets, 2 CPUs. */
static const char zoneinfo[] =
	"Node 0, zone      DMA\n"
	"  per-node stats\n"
	"      nr_inactive_anon 1234\n"
	"  pages free     3840\n"
	"        min      89\n"
	"        protection: (0, 446, 446, 446, 446)\n"
	"  pagesets\n"
	"    cpu: 0\n"
	"              count:    0\n"
	"              high:     0\n"
	"              batch:    1\n"
	"  vm stats threshold: 4\n"
	"Node 0, zone    DMA32\n"
	"  pages free     5120\n"
	"  pagesets\n"
	"    cpu: 0\n"
	"              count:    8228\n"
	"              high:     8192\n"
	"              batch:    63\n"
	"              high_min: 1981\n"
	"              high_max: 16384\n"
	"    cpu: 1\n"
	"              count:    12\n"
	"              high:     1981\n"
	"              batch:    63\n"
	"  vm stats threshold: 24\n"
	"  node_unreclaimable:  0\n"
	"  start_pfn:           4096\n";

static void test_parse_pcp(void **state)
{
	uint64_t pages = 0, bytes = 0;

	(void)state;
	assert_int_equal(fsd_parse_pcp(zoneinfo, &pages), 0);
	assert_int_equal(pages, 8228 + 12);
	assert_int_equal(fsd_pcp_line("              count:    63\n", &pages),
			 1);
	assert_int_equal(pages, 63);
	assert_int_equal(fsd_pcp_line("  pages free     5120\n", &pages), 0);
	assert_int_equal(fsd_pcp_line("count: x\n", &pages), 0);
	assert_int_equal(fsd_pcp_line("nr_free_count: 5\n", &pages), 0);
	assert_int_not_equal(fsd_parse_pcp("Node 0, zone DMA\n", &pages), 0);
	/* The real file, if the kernel has one (every Linux since 2.6). */
	assert_int_equal(fsd_read_pcp("/proc/zoneinfo", 4096, &bytes), 0);
	assert_int_equal(bytes % 4096, 0);
	assert_int_not_equal(fsd_read_pcp("/nonexistent", 4096, &bytes), 0);
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

/*
 * Revokes are bounded by what the deficit needs beyond free slabs, less
 * slabs already revoked; unanswered requests do not count against it
 * (one of them may be the slab revoked).
 */
static void test_revoke_bounded(void **state)
{
	struct fsd_pressure_in in = base(700 * MiB); /* 5 slabs */
	struct fsd_pressure_out out;

	(void)state;
	in.nr_free = 2;
	in.nr_reclaiming = 3;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.revoke, 3);
	assert_int_equal(out.reclaim, 0);
	in.nr_revoking = 2;
	in.nr_reclaiming = 0;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.revoke, 1);
	assert_int_equal(out.reclaim, 1);
	in.nr_revoking = 4;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.revoke, 0);
	assert_int_equal(out.reclaim, 0);
	/* Within the hysteresis band: under pressure, nothing to revoke. */
	in = base(1000 * MiB + 1);
	in.was_under = true;
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	assert_int_equal(out.revoke, 0);
}

/*
 * Memory given back a moment ago sits on per-CPU free lists, which
 * MemAvailable does not count: it is available all the same.
 */
static void test_hidden_free_counts(void **state)
{
	struct fsd_pressure_in in = base(700 * MiB);	/* 5 slabs short */
	struct fsd_pressure_out out;

	(void)state;
	in.nr_free = 2;
	in.mem_hidden = 3 * SLAB;	/* 3 slabs just released, not shown */
	fsd_pressure_decide(&in, &out);
	assert_true(out.under);
	assert_int_equal(out.release_free, 2);
	assert_int_equal(out.reclaim, 0);
	/* All 5 given back, none shown yet: nothing more to do. */
	in.nr_free = 0;
	in.mem_hidden = 5 * SLAB;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	assert_int_equal(out.release_free + out.reclaim, 0);
	/* Hidden pages and requests in flight both count. */
	in.mem_hidden = 2 * SLAB;
	in.nr_reclaiming = 2;
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.reclaim, 1);
	/* Ending pressure and taking memory back count them too. */
	in = base(1100 * MiB);
	in.was_under = true;
	in.nr_released = 4;
	in.mem_hidden = 2 * SLAB + 1;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
	assert_int_equal(out.repopulate, 0);	/* 1228 MiB: none to spare */
	in.mem_hidden = 4 * SLAB;	/* 1356 MiB: 2 slabs above the band */
	fsd_pressure_decide(&in, &out);
	assert_int_equal(out.repopulate, 2);
	/* No overflow. */
	in.mem_available = UINT64_MAX - 1;
	in.mem_hidden = UINT64_MAX - 1;
	fsd_pressure_decide(&in, &out);
	assert_false(out.under);
}

/*
 * The episode daemon-pressure plays, in a model of the kernel: a 141 MiB
 * tmpfs file is written over a few checks while 8 slabs are free and 24
 * held; MemAvailable must stay above 200 MiB.  Freed memory goes to the
 * per-CPU lists first and drains into MemAvailable at an eighth per
 * second (6.12's decay_pcp_high()); hosts answer a reclaim 2 s after it is
 * sent.  Returns the slabs given back or asked for.
 */
static uint32_t play_episode(bool see_hidden, uint64_t grow_per_tick)
{
	const uint64_t mb = MiB, slab = 4 * mb, hog = 141 * mb;
	uint64_t buddy = 297 * mb, pcp = 0, grown = 0;
	uint32_t nr_free = 8, nr_held = 24, released = 0, asked = 0;
	uint32_t answer_at[64] = { 0 }, nr_reclaiming = 0;
	struct fsd_pressure_out out;
	bool under = false;
	unsigned int t, i;

	for (t = 1; t < 120; t++) {
		struct fsd_pressure_in in = {
			.headroom = 200 * mb,
			.hysteresis = 32 * mb,
			.slab_size = slab,
		};
		uint64_t g = hog - grown < grow_per_tick ? hog - grown :
							   grow_per_tick;
		uint64_t drain = pcp / 8;

		buddy -= g;
		grown += g;
		pcp -= drain;
		buddy += drain;
		for (i = 0; i < nr_reclaiming; i++) {
			if (answer_at[i] != t)
				continue;
			answer_at[i--] = answer_at[--nr_reclaiming];
			nr_held--;
			released++;
			pcp += slab;
		}
		in.mem_available = buddy;
		in.mem_hidden = see_hidden ? pcp : 0;
		in.was_under = under;
		in.nr_free = nr_free;
		in.nr_reclaiming = nr_reclaiming;
		in.nr_reclaimable = nr_held - nr_reclaiming;
		in.nr_released = released;
		fsd_pressure_decide(&in, &out);
		under = out.under;
		/* Taking back what was given too much: not with a fair count. */
		if (see_hidden)
			assert_int_equal(out.repopulate, 0);
		nr_free -= out.release_free;
		released += out.release_free;
		pcp += out.release_free * slab;
		for (i = 0; i < out.reclaim; i++)
			answer_at[nr_reclaiming++] = t + 2;
		asked += out.release_free + out.reclaim;
	}
	/* Everything settled: the memory is all back in MemAvailable. */
	assert_int_equal(nr_reclaiming, 0);
	assert_true(buddy + pcp >= 200 * mb);
	return asked;
}

static void test_converges_on_shortfall(void **state)
{
	(void)state;
	/* 297 - 141 = 156 MiB: 44 MiB short of 200, 11 slabs; not one more. */
	assert_int_equal(play_episode(true, 47 * MiB), 11);
	assert_int_equal(play_episode(true, 8 * MiB), 11);
	assert_int_equal(play_episode(true, 141 * MiB), 11);
	/* Going by MemAvailable alone is what took 15 to 18 in the VM. */
	assert_true(play_episode(false, 47 * MiB) > 13);
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
		cmocka_unit_test(test_parse_pcp),
		cmocka_unit_test(test_plenty),
		cmocka_unit_test(test_deficit_in_whole_slabs),
		cmocka_unit_test(test_free_slabs_first),
		cmocka_unit_test(test_in_flight_counts),
		cmocka_unit_test(test_revoke_bounded),
		cmocka_unit_test(test_hidden_free_counts),
		cmocka_unit_test(test_converges_on_shortfall),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_repopulate_keeps_margin),
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_pick_most_held),
		cmocka_unit_test(test_pick_outstanding_limit),
	};

	return cmocka_run_group_tests_name("pressure", tests, NULL, NULL);
}
