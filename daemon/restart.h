/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How farswapd restarts without losing a page (farswapd(8), RESTART):
 * the pool's two memfds handed to systemd's fd store and taken back from
 * it at the next start (the sd_listen_fds protocol), the same protocol
 * for an exec of a new farswapd without systemd (SIGUSR2), and the
 * question an ExecStop asks systemd: is this stop part of a restart?
 */
#ifndef FSD_RESTART_H
#define FSD_RESTART_H

#include <stdbool.h>
#include <stddef.h>

#define FSD_FDNAME_POOL "pool"
#define FSD_FDNAME_STATE "pool-state"

/* The fds the last farswapd left: both, or -1 each. */
struct fsd_handed {
	int pool;
	int state;
	bool in_store;		/* systemd's fd store holds them too */
};

void fsd_restart_take_fds(struct fsd_handed *h);
bool fsd_restart_store_fds(int pool, int state);
int fsd_restart_exec(const char *exe, char **argv, int pool, int state,
		     bool in_store);
int fsd_restart_self_exe(char *buf, size_t len);
int fsd_systemd_restarting(char *why, size_t len);

#endif /* FSD_RESTART_H */
