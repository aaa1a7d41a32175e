// SPDX-License-Identifier: GPL-2.0
/*
 * Keepalive decisions: is a session idle enough to probe, how often to
 * look, and how long a dead host can keep its slabs.
 */
#include "keepalive.h"

/*
 * A session is probed once nothing was received or sent on its control
 * QP for @interval ms.  One probe at a time: while a probe (or any other
 * unsolicited STATS_REP) is in flight its completion decides, and a probe
 * that waits for a slow acknowledgement is left alone.  The probe counts
 * against the host's unsolicited budget like any other notice.
 */
enum fsd_ka_verdict fsd_keepalive_check(const struct fsd_ka_in *in)
{
	if (!in->interval || !in->eligible)
		return FSD_KA_OFF;
	if (in->now < in->last_active ||
	    in->now - in->last_active < in->interval)
		return FSD_KA_ACTIVE;
	if (in->notice_in_flight)
		return FSD_KA_WAIT;
	if (in->unsolicited >= in->max_unsolicited)
		return FSD_KA_NO_ROOM;
	return FSD_KA_PROBE;
}

const char *fsd_keepalive_verdict_str(enum fsd_ka_verdict v)
{
	switch (v) {
	case FSD_KA_OFF:
		return "off";
	case FSD_KA_ACTIVE:
		return "active";
	case FSD_KA_PROBE:
		return "probe";
	case FSD_KA_WAIT:
		return "probe in flight";
	case FSD_KA_NO_ROOM:
		return "no room for a probe";
	}
	return "?";
}

/*
 * How often to look for idle sessions: a quarter of the interval, between
 * 100 ms and 1 s (never more often than the interval itself); 0 when
 * keepalive is off.
 */
uint32_t fsd_keepalive_period(uint32_t interval)
{
	uint32_t p = interval / 4;

	if (!interval)
		return 0;
	if (p > 1000)
		p = 1000;
	if (p < 100)
		p = interval < 100 ? interval : 100;
	return p;
}

/*
 * How long an RC send to a peer that never answers takes to fail: the
 * first transmission and @retry_cnt retries, each waiting the local ACK
 * timeout of 4.096 us * 2^@ack_timeout.  A timeout of 0 never expires and
 * Soft-RoCE retries forever at a count of 7: UINT64_MAX.
 */
uint64_t fsd_rc_give_up_ms(unsigned int ack_timeout, unsigned int retry_cnt)
{
	uint64_t one_ns;

	if (!ack_timeout || ack_timeout > 31 || retry_cnt >= 7)
		return UINT64_MAX;
	one_ns = 4096ull << ack_timeout;
	return (one_ns * (retry_cnt + 1) + 999999) / 1000000;
}

/*
 * The longest a dead host keeps its slabs, from its last word to the
 * session's teardown: the idle interval, one check period late at most,
 * then the probe's retries.  UINT64_MAX when keepalive is off.
 */
uint64_t fsd_keepalive_bound_ms(uint32_t interval)
{
	if (!interval)
		return UINT64_MAX;
	return (uint64_t)interval + fsd_keepalive_period(interval) +
	       fsd_rc_give_up_ms(FSD_CTRL_ACK_TIMEOUT, FSD_CTRL_RETRY_CNT);
}
