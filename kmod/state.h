/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The donor connection state machine.  One function decides which
 * transitions are legal; conn.c changes state only through it.
 *
 *   NEW -> CONNECTING -> LIVE -> FAILED -> WAITING -> CONNECTING -> ...
 *                    \-> WAITING (a reconnect attempt failed)
 *   any state but DELETING -> DELETING (detach, or a failed attach)
 */
#ifndef FARSWAP_STATE_H
#define FARSWAP_STATE_H

#include <linux/types.h>

enum farswap_donor_state {
	FARSWAP_DONOR_NEW,		/* never connected */
	FARSWAP_DONOR_CONNECTING,	/* rdma_cm handshakes in progress */
	FARSWAP_DONOR_LIVE,		/* all queues connected, I/O flows */
	FARSWAP_DONOR_FAILED,		/* error seen, queues being torn down */
	FARSWAP_DONOR_WAITING,		/* torn down, reconnect scheduled */
	FARSWAP_DONOR_DELETING,		/* device going away */
	FARSWAP_DONOR_NR_STATES
};

bool farswap_donor_state_allowed(unsigned int from, unsigned int to);
const char *farswap_donor_state_name(unsigned int state);

#endif /* FARSWAP_STATE_H */
