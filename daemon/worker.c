// SPDX-License-Identifier: GPL-2.0
/*
 * The grant worker: a FIFO of jobs, one thread, an eventfd back to the
 * event loop.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "worker.h"

static void *worker_main(void *arg)
{
	struct fsd_worker *w = arg;
	struct fsd_job *job;
	uint64_t one = 1;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->todo && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		job = w->todo;
		if (!job)
			break;	/* stopping, and nothing left to do */
		w->todo = job->next;
		if (!w->todo)
			w->todo_tail = &w->todo;
		job->next = NULL;
		job->started = !job->cancelled;
		pthread_mutex_unlock(&w->lock);

		job->ret = job->started ? job->run(job) : -ECANCELED;

		pthread_mutex_lock(&w->lock);
		*w->done_tail = job;
		w->done_tail = &job->next;
		/* Fails only with a full counter: the loop is told already. */
		if (write(w->efd, &one, sizeof(one)) < 0)
			continue;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int fsd_worker_start(struct fsd_worker *w)
{
	int ret;

	memset(w, 0, sizeof(*w));
	w->todo_tail = &w->todo;
	w->done_tail = &w->done;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0)
		return -errno;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	ret = pthread_create(&w->thread, NULL, worker_main, w);
	if (ret) {
		close(w->efd);
		w->efd = -1;
		return -ret;
	}
	w->running = true;
	return 0;
}

void fsd_worker_submit(struct fsd_worker *w, struct fsd_job *job)
{
	job->next = NULL;
	job->ret = 0;
	job->cancelled = false;
	job->started = false;
	pthread_mutex_lock(&w->lock);
	*w->todo_tail = job;
	w->todo_tail = &job->next;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Skip @job if it has not started.  It is reaped all the same (ret
 * -ECANCELED); one already running finishes, and is reaped as usual.
 */
void fsd_worker_cancel(struct fsd_worker *w, struct fsd_job *job)
{
	pthread_mutex_lock(&w->lock);
	job->cancelled = true;
	pthread_mutex_unlock(&w->lock);
}

/* Every finished job, oldest first (a list by ->next); NULL if none. */
struct fsd_job *fsd_worker_reap(struct fsd_worker *w)
{
	struct fsd_job *list;
	uint64_t n;

	if (read(w->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return NULL;
	pthread_mutex_lock(&w->lock);
	list = w->done;
	w->done = NULL;
	w->done_tail = &w->done;
	pthread_mutex_unlock(&w->lock);
	return list;
}

/*
 * Run what is queued (cancelled jobs are skipped), then end the thread.
 * The done jobs are still to be reaped afterwards.
 */
void fsd_worker_stop(struct fsd_worker *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->running = false;
}

/* After fsd_worker_stop() and the last reap. */
void fsd_worker_exit(struct fsd_worker *w)
{
	if (w->efd >= 0)
		close(w->efd);
	w->efd = -1;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
}
