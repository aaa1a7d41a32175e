/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running daemon: configuration, logic state and the file
 * descriptors of the event loop.
 */
#ifndef FSD_SERVER_H
#define FSD_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#include "config.h"
#include "donor.h"
#include "poolfd.h"
#include "worker.h"

/* What an epoll event points at. */
enum fsd_watch_type {
	FSD_W_CM,
	FSD_W_CQ,
	FSD_W_SIGNAL,
	FSD_W_TIMER,
	FSD_W_KEEPALIVE,
	FSD_W_STATS,
	FSD_W_WORKER,
};

struct fsd_watch {
	enum fsd_watch_type type;
	void *ptr;
};

struct fsd_server {
	struct fsd_config cfg;
	struct fsd_args args;
	const char *config_path;
	bool config_must_exist;
	struct fsd_limits lim;
	struct fsd_donor donor;
	int epfd;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen_id;
	struct fsd_watch cm_watch;
	int sig_fd;
	struct fsd_watch sig_watch;
	int timer_fd;
	struct fsd_watch timer_watch;
	int ka_fd;
	struct fsd_watch ka_watch;
	int stats_fd;
	struct fsd_watch stats_watch;
	int stats_json_fd;			/* the same stats as JSON */
	struct fsd_watch stats_json_watch;
	char stats_json_path[FSD_PATH_LEN];
	char metrics_error[256];		/* the last one logged */
	char notify_status[128];		/* the last STATUS= sent */
	struct fsd_worker worker;	/* slab grants, off the loop */
	struct fsd_watch worker_watch;
	bool stop;
	int exit_code;
	/*
	 * The pool and its state table, in memfds that outlive the process
	 * (farswapd(8), RESTART).  kept_by_store: systemd's fd store holds
	 * both, so SIGTERM leaves the held slabs in them; reexec: SIGUSR2
	 * asked for an exec of self_exe with the memfds.
	 */
	struct fsd_poolfd poolfd;
	bool kept_by_store;
	bool reexec;
	char self_exe[4096];
	char **argv;
};

/*
 * The clock the donor logic is handed its now_ms from, by the event loop
 * (farswapd.c) and by the verbs layer's completions (verbs.c).  Here, not
 * in farswapd.c: the loop calls into the verbs layer, and the verbs layer
 * must need nothing back from the loop, or the two would depend on each
 * other.
 */
static inline uint64_t fsd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif /* FSD_SERVER_H */
