/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keepalive: when to probe an idle host session.  Pure functions,
 * unit-tested in tests/unit/test_keepalive.c.
 *
 * A host that dies without disconnecting (power lost, link cut) leaves
 * RC connections that look alive to a donor that never sends on them, and
 * its slabs stay held.  So a session on which no control message was
 * received or sent for the keepalive interval gets an unsolicited
 * STATS_REP (cookie 0).  A live host's transport acknowledges it, however
 * busy the host is; a dead host's send fails once the control QP's
 * retries run out, and the session is torn down, freeing its slabs.
 */
#ifndef FSD_KEEPALIVE_H
#define FSD_KEEPALIVE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The donor's control QP: local ACK timeout (4.096 us * 2^19 = 2.1 s) and
 * transport retries (6; 7 would mean "forever" to Soft-RoCE).  A send to a
 * dead host fails after (6 + 1) * 2.1 s = ~15 s.  RNR retries stay
 * infinite: a host that is slow to repost receives is alive.
 */
#define FSD_CTRL_ACK_TIMEOUT	19
#define FSD_CTRL_RETRY_CNT	6
#define FSD_CTRL_RNR_RETRY	7

enum fsd_ka_verdict {
	FSD_KA_OFF,		/* keepalive off, or not a session to probe */
	FSD_KA_ACTIVE,		/* traffic within the interval */
	FSD_KA_PROBE,		/* idle: send a probe now */
	FSD_KA_WAIT,		/* idle, a probe or notice in flight: its completion tells */
	FSD_KA_NO_ROOM,		/* idle, no unsolicited message may be added now */
};

struct fsd_ka_in {
	uint64_t now;			/* monotonic ms */
	uint64_t last_active;		/* ms: last control message in or out */
	uint32_t interval;		/* ms; 0: keepalive off */
	bool eligible;			/* up, not closing, takes unsolicited STATS_REP */
	bool notice_in_flight;		/* an unsolicited STATS_REP not completed */
	uint32_t unsolicited;		/* unsolicited messages outstanding */
	uint32_t max_unsolicited;
};

enum fsd_ka_verdict fsd_keepalive_check(const struct fsd_ka_in *in);
const char *fsd_keepalive_verdict_str(enum fsd_ka_verdict v);
uint32_t fsd_keepalive_period(uint32_t interval);
uint64_t fsd_rc_give_up_ms(unsigned int ack_timeout, unsigned int retry_cnt);
uint64_t fsd_keepalive_bound_ms(uint32_t interval);

#endif /* FSD_KEEPALIVE_H */
