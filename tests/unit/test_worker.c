// SPDX-License-Identifier: GPL-2.0
/*
 * The grant worker thread: jobs run in order, off the caller's thread,
 * the eventfd says when some are done, a job cancelled before it starts
 * never runs, and stopping finishes what was queued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker.h"

struct test_job {
	struct fsd_job job;
	int id;
	pthread_t ran_on;
	int *order;		/* ids appended as they run */
	int *nr_run;
	int gate_fd;		/* read one byte before returning, if >= 0 */
	int ready_fd;		/* and say so on this one first */
};

static int run_test_job(struct fsd_job *job)
{
	struct test_job *t = (struct test_job *)job;
	char c;

	if (t->gate_fd >= 0 && (write(t->ready_fd, "r", 1) != 1 ||
				read(t->gate_fd, &c, 1) != 1))
		return -EIO;
	t->ran_on = pthread_self();
	t->order[(*t->nr_run)++] = t->id;
	return t->id == 3 ? -ENOMEM : 0;
}

/* Wait until the eventfd says jobs are done, then take them. */
static struct fsd_job *reap_wait(struct fsd_worker *w)
{
	struct pollfd p = { .fd = w->efd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 5000), 1);
	return fsd_worker_reap(w);
}

static void test_jobs_in_order_off_thread(void **state)
{
	struct test_job jobs[5];
	int order[5], nr_run = 0, reaped = 0, i;
	struct fsd_worker w;
	struct fsd_job *j;

	(void)state;
	assert_int_equal(fsd_worker_start(&w), 0);
	for (i = 0; i < 5; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].job.run = run_test_job;
		jobs[i].id = i;
		jobs[i].order = order;
		jobs[i].nr_run = &nr_run;
		jobs[i].gate_fd = -1;
		fsd_worker_submit(&w, &jobs[i].job);
	}
	while (reaped < 5)
		for (j = reap_wait(&w); j; j = j->next) {
			struct test_job *t = (struct test_job *)j;

			/* Reaped in the order submitted, results kept. */
			assert_int_equal(t->id, reaped);
			assert_int_equal(j->ret, t->id == 3 ? -ENOMEM : 0);
			assert_false(pthread_equal(t->ran_on, pthread_self()));
			reaped++;
		}
	for (i = 0; i < 5; i++)
		assert_int_equal(order[i], i);
	/* Nothing more to reap: the eventfd is drained. */
	assert_null(fsd_worker_reap(&w));
	fsd_worker_stop(&w);
	fsd_worker_exit(&w);
}

static void test_cancel_and_stop(void **state)
{
	struct test_job jobs[3];
	int order[3], nr_run = 0, gate[2], ready[2], i, n = 0;
	char c;
	struct fsd_worker w;
	struct fsd_job *j;

	(void)state;
	assert_int_equal(pipe(gate), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(fsd_worker_start(&w), 0);
	for (i = 0; i < 3; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].job.run = run_test_job;
		jobs[i].id = i;
		jobs[i].order = order;
		jobs[i].nr_run = &nr_run;
		jobs[i].gate_fd = i == 0 ? gate[0] : -1;
		jobs[i].ready_fd = ready[1];
		fsd_worker_submit(&w, &jobs[i].job);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);	/* job 0 runs */
	/* Job 0 blocks on the gate; 1 is cancelled before it can start. */
	fsd_worker_cancel(&w, &jobs[1].job);
	/* Cancelling the running one changes nothing: it finishes. */
	fsd_worker_cancel(&w, &jobs[0].job);
	assert_int_equal(write(gate[1], "x", 1), 1);
	/* Stop runs what is left (job 2), then the thread ends. */
	fsd_worker_stop(&w);
	for (j = fsd_worker_reap(&w); j; j = j->next, n++)
		assert_ptr_equal(j, &jobs[n].job);
	assert_int_equal(n, 3);
	assert_int_equal(jobs[1].job.ret, -ECANCELED);
	assert_false(jobs[1].job.started);
	assert_int_equal(nr_run, 2);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 2);
	fsd_worker_exit(&w);
	close(gate[0]);
	close(gate[1]);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_in_order_off_thread),
		cmocka_unit_test(test_cancel_and_stop),
	};

	return cmocka_run_group_tests_name("worker", tests, NULL, NULL);
}
