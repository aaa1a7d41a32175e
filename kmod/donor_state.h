/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The donor connection state machine.  One function decides which
 * transitions are legal; conn.c changes state only through it.
 *
 *   NEW -> CONNECTING -> LIVE -> FAILED -> WAITING -> CONNECTING -> ...
 *                    \-> WAITING (a reconnect attempt failed)
 *   any state but DELETING -> DELETING (detach, or a failed attach)
 */
#ifndef FARSWAP_DONOR_STATE_H
#define FARSWAP_DONOR_STATE_H

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

/*
 * What an error seen on a donor's queues does.  A live session fails
 * (and is torn down and reconnected); an error while the session is
 * being connected fails that attempt, which the connect path sees
 * before it goes live; in any other state the session is already going.
 */
enum farswap_error_action {
	FARSWAP_ERR_IGNORE,
	FARSWAP_ERR_FAIL_SESSION,	/* LIVE -> FAILED */
	FARSWAP_ERR_FAIL_ATTEMPT,	/* mark the connect attempt failed */
};

enum farswap_error_action farswap_donor_error_action(unsigned int state,
						     bool attempt_failed);
bool farswap_donor_may_go_live(unsigned int state, bool attempt_failed);
bool farswap_connect_error_passes(int err);
const char *farswap_donor_state_name(unsigned int state);

#endif /* FARSWAP_DONOR_STATE_H */
