/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One worker thread for the slow part of a slab grant (zeroing what is
 * not clean yet, pinning and registering up to a slab of memory), so the
 * event loop keeps serving every other host meanwhile.
 *
 * Jobs run one at a time in the order they were submitted, so one host's
 * grants are answered in order.  A finished job goes on the done list and
 * the eventfd becomes readable; the loop takes the list with
 * fsd_worker_reap().  A job never touches the loop's state: it reads its
 * own inputs and writes its own results, and the loop applies them.
 */
#ifndef FSD_WORKER_H
#define FSD_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct fsd_job {
	struct fsd_job *next;
	/* On the worker thread; not called for a job cancelled in time. */
	int (*run)(struct fsd_job *job);
	int ret;		/* run's result, or -ECANCELED */
	bool cancelled;		/* set by the loop, read by the worker */
	bool started;
};

struct fsd_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct fsd_job *todo, **todo_tail;
	struct fsd_job *done, **done_tail;
	int efd;		/* readable while done jobs wait */
	bool stop;
	bool running;
};

int fsd_worker_start(struct fsd_worker *w);
void fsd_worker_submit(struct fsd_worker *w, struct fsd_job *job);
void fsd_worker_cancel(struct fsd_worker *w, struct fsd_job *job);
struct fsd_job *fsd_worker_reap(struct fsd_worker *w);
void fsd_worker_stop(struct fsd_worker *w);
void fsd_worker_exit(struct fsd_worker *w);

#endif /* FSD_WORKER_H */
