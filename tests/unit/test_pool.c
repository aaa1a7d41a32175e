// SPDX-License-Identifier: GPL-2.0
/*
 * Slab pool accounting: take, put, release, populate, reclaim marks,
 * exhaustion, double free and every refused transition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "pool.h"

#define SLAB (4ull << 20)

static struct fsd_session *const A = (struct fsd_session *)0x1000;
static struct fsd_session *const B = (struct fsd_session *)0x2000;

static void populate(struct fsd_pool *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_slabs; i++) {
		p->slabs[i].mem = (void *)(uintptr_t)(0x10000000 + i * SLAB);
		assert_int_equal(fsd_pool_populated(p, &p->slabs[i]), 0);
	}
}

static void test_init(void **state)
{
	struct fsd_pool p;

	(void)state;
	assert_int_not_equal(fsd_pool_init(&p, 0, SLAB), 0);
	assert_int_equal(fsd_pool_init(&p, 4, SLAB), 0);
	/* Nothing is free until memory is behind it. */
	assert_int_equal(p.nr_released, 4);
	assert_int_equal(p.nr_free, 0);
	assert_null(fsd_pool_take(&p, A));
	assert_true(fsd_pool_consistent(&p));
	/* No memory: populating is refused. */
	assert_int_not_equal(fsd_pool_populated(&p, &p.slabs[0]), 0);
	populate(&p);
	assert_int_equal(p.nr_free, 4);
	assert_int_equal(p.nr_released, 0);
	assert_true(fsd_pool_consistent(&p));
	fsd_pool_exit(&p);
}

static void test_take_until_exhausted(void **state)
{
	struct fsd_slab *got[4];
	struct fsd_pool p;
	int i;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 4, SLAB), 0);
	populate(&p);
	for (i = 0; i < 4; i++) {
		got[i] = fsd_pool_take(&p, i & 1 ? B : A);
		assert_non_null(got[i]);
		assert_int_equal(got[i]->state, FSD_SLAB_HELD);
		assert_ptr_equal(got[i]->owner, i & 1 ? B : A);
		assert_true(fsd_pool_consistent(&p));
	}
	/* Four distinct slabs. */
	assert_true(got[0] != got[1] && got[1] != got[2] && got[2] != got[3] &&
		    got[0] != got[3]);
	assert_null(fsd_pool_take(&p, A));
	assert_int_equal(p.nr_free, 0);
	assert_int_equal(p.nr_held, 4);
	assert_null(fsd_pool_take(&p, NULL));
	fsd_pool_exit(&p);
}

static void test_put_and_double_free(void **state)
{
	struct fsd_slab *s, *t;
	struct fsd_pool p;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 2, SLAB), 0);
	populate(&p);
	s = fsd_pool_take(&p, A);
	assert_false(s->dirty);
	assert_int_equal(fsd_pool_put(&p, s), 0);
	assert_true(s->dirty);	/* the host's bytes are still in it */
	assert_null(s->owner);
	assert_int_equal(p.nr_free, 2);
	/* Double free. */
	assert_int_not_equal(fsd_pool_put(&p, s), 0);
	assert_int_equal(p.nr_free, 2);
	assert_true(fsd_pool_consistent(&p));
	/* Clean slabs are handed out before dirty ones. */
	t = fsd_pool_take(&p, B);
	assert_ptr_not_equal(t, s);
	assert_false(t->dirty);
	t = fsd_pool_take(&p, B);
	assert_ptr_equal(t, s);
	fsd_pool_exit(&p);
}

static void test_release_and_populate(void **state)
{
	struct fsd_slab *s;
	struct fsd_pool p;
	void *mem;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 3, SLAB), 0);
	populate(&p);
	s = fsd_pool_take(&p, A);
	/* Memory must be gone before a slab counts as released. */
	assert_int_equal(fsd_pool_released(&p, s), -EBUSY);
	mem = s->mem;
	s->mem = NULL;
	assert_int_equal(fsd_pool_released(&p, s), 0);
	assert_int_equal(s->state, FSD_SLAB_RELEASED);
	assert_null(s->owner);
	assert_int_equal(p.nr_held, 0);
	assert_int_equal(p.nr_released, 1);
	/* Released twice, or put after release. */
	assert_int_not_equal(fsd_pool_released(&p, s), 0);
	assert_int_not_equal(fsd_pool_put(&p, s), 0);
	assert_true(fsd_pool_consistent(&p));
	/* Back from the OS: clean. */
	s->mem = mem;
	assert_int_equal(fsd_pool_populated(&p, s), 0);
	assert_false(s->dirty);
	assert_int_equal(p.nr_free, 3);
	assert_int_not_equal(fsd_pool_populated(&p, s), 0);
	/* A free slab can be released too. */
	s->mem = NULL;
	assert_int_equal(fsd_pool_released(&p, s), 0);
	assert_int_equal(p.nr_free, 2);
	assert_true(fsd_pool_consistent(&p));
	s->mem = mem;
	fsd_pool_exit(&p);
}

static void test_reclaim_marks(void **state)
{
	struct fsd_slab *s;
	struct fsd_pool p;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 2, SLAB), 0);
	populate(&p);
	/* Only held slabs can be reclaimed. */
	assert_int_not_equal(fsd_pool_reclaim_start(&p, &p.slabs[0], 1, 100),
			     0);
	s = fsd_pool_take(&p, A);
	assert_int_equal(fsd_pool_reclaim_start(&p, s, 7, 100), 0);
	assert_int_equal(p.nr_reclaiming, 1);
	assert_int_equal(s->reclaim_cookie, 7);
	assert_int_not_equal(fsd_pool_reclaim_start(&p, s, 8, 100), 0);
	assert_int_equal(s->reclaim_cookie, 7);
	/* Freeing a slab under reclaim ends the reclaim. */
	assert_int_equal(fsd_pool_put(&p, s), 0);
	assert_int_equal(p.nr_reclaiming, 0);
	assert_false(s->reclaiming);
	assert_true(fsd_pool_consistent(&p));
	/* And releasing one, too. */
	s = fsd_pool_take(&p, A);
	assert_int_equal(fsd_pool_reclaim_start(&p, s, 9, 100), 0);
	s->mem = NULL;
	assert_int_equal(fsd_pool_released(&p, s), 0);
	assert_int_equal(p.nr_reclaiming, 0);
	assert_true(fsd_pool_consistent(&p));
	fsd_pool_reclaim_end(&p, s);	/* harmless */
	assert_int_equal(p.nr_reclaiming, 0);
	fsd_pool_exit(&p);
}

static void test_get(void **state)
{
	struct fsd_pool p;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 5, SLAB), 0);
	assert_ptr_equal(fsd_pool_get(&p, 4), &p.slabs[4]);
	assert_int_equal(fsd_pool_get(&p, 4)->id, 4);
	assert_null(fsd_pool_get(&p, 5));
	assert_null(fsd_pool_get(&p, UINT64_MAX));
	fsd_pool_exit(&p);
}

static void test_consistency_detects_corruption(void **state)
{
	struct fsd_pool p;

	(void)state;
	assert_int_equal(fsd_pool_init(&p, 2, SLAB), 0);
	populate(&p);
	assert_true(fsd_pool_consistent(&p));
	p.nr_free++;
	assert_false(fsd_pool_consistent(&p));
	p.nr_free--;
	p.slabs[1].owner = A;	/* free but owned */
	assert_false(fsd_pool_consistent(&p));
	fsd_pool_exit(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_take_until_exhausted),
		cmocka_unit_test(test_put_and_double_free),
		cmocka_unit_test(test_release_and_populate),
		cmocka_unit_test(test_reclaim_marks),
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_consistency_detects_corruption),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
