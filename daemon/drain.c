// SPDX-License-Identifier: GPL-2.0
/*
 * The drain: every held slab goes back to the donor by its host's word,
 * never by force.  farswapd --drain drains every host (an operator's
 * maintenance); a reload whose allowed-hosts no longer names a host that
 * holds slabs drains that host alone (s->disallowed), then closes its
 * session.  A draining host is granted nothing (ALLOC: NO_SPACE, 0 free)
 * and is asked for its slabs a round at a time, at a bounded pace: a slab
 * carries the number of the round it was last asked in, and a round ends
 * when every held slab has been asked in it.  A refusal (the host has
 * nowhere to move the chunks) is asked again a reclaim deadline later,
 * and revoke_due() (reclaim.c) never revokes a draining host's slab: a
 * drain may wait for ever, it never loses a page.  Free of verbs calls,
 * as donor.c is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "donor.h"
#include "donor_internal.h"
#include "log.h"
#include "outbuf.h"

/*
 * Drained: no slab held, and none kept for a host that may still resume
 * it (a restart's, resume.c): stopping now would lose its pages too.
 */
enum fsd_drain_state fsd_drain_state(const struct fsd_donor *d)
{
	if (!d->drain.on)
		return FSD_DRAIN_OFF;
	return d->pool.nr_held || d->pool.nr_kept ? FSD_DRAIN_DRAINING :
						    FSD_DRAIN_DRAINED;
}

const char *fsd_drain_state_str(enum fsd_drain_state st)
{
	switch (st) {
	case FSD_DRAIN_OFF:
		return "no";
	case FSD_DRAIN_DRAINING:
		return "draining";
	case FSD_DRAIN_DRAINED:
		return "drained";
	}
	return "?";
}

/*
 * Held slabs of @s its host refused to give back at its last request, and
 * (@status) the last refusal's status.
 */
uint32_t fsd_session_refused_slabs(const struct fsd_donor *d,
				   const struct fsd_session *s,
				   unsigned int *status)
{
	uint32_t i, n = 0;

	if (status)
		*status = FARSWAP_ST_OK;
	for (i = 0; i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_HELD || slab->owner != s ||
		    !slab->refused_st)
			continue;
		n++;
		if (status)
			*status = slab->refused_st;
	}
	return n;
}

/* Drain every host: grant nothing, ask every held slab back.  -EALREADY. */
int fsd_donor_drain(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t round = d->drain.round;

	if (d->drain.on)
		return -EALREADY;
	/* A new round: slabs asked by an earlier drain are asked again. */
	memset(&d->drain, 0, sizeof(d->drain));
	d->drain.on = true;
	d->drain.since = now_ms;
	d->drain.round = round + 1;
	pr_notice("drain: %u slabs held by %u hosts; granting none, asking for every one back (never revoked)",
		  d->pool.nr_held, d->nr_sessions);
	fsd_drain_tick(d, now_ms);
	return 0;
}

/* Back to service: grant again, and tell the hosts so.  -EALREADY. */
int fsd_donor_undrain(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t i;

	if (!d->drain.on)
		return -EALREADY;
	d->drain.on = false;
	for (i = 0; i < d->pool.nr_slabs; i++)
		d->pool.slabs[i].refused_st = 0;
	pr_notice("undrain: granting slabs again (%u held, %" PRIu64 " given back during the drain)",
		  d->pool.nr_held, d->drain.slabs_returned);
	if (fsd_slabs_offered(d))
		fsd_send_notices(d, now_ms);
	return 0;
}

/* Room for one more request to @s: its share of unsolicited messages. */
static bool drain_room(const struct fsd_session *s)
{
	return fsd_session_asking(s) < FSD_RECLAIMS_MAX &&
	       s->unsolicited < FSD_UNSOLICITED_MAX - 1;
}

/*
 * One pass: ask for the held slabs of draining hosts not asked in this
 * round yet, at most @budget; false when every one was (the round is
 * over).  A slab that cannot be asked now (a request in flight, a refusal
 * less than a deadline ago, a grant not answered yet) waits in its round.
 */
static bool drain_pass(struct fsd_donor *d, uint32_t *budget, uint64_t now)
{
	bool pending = false;
	uint32_t i;

	/* Highest slab ids first, as reclaim.c asks. */
	for (i = d->pool.nr_slabs; i-- > 0;) {
		struct fsd_slab *slab = &d->pool.slabs[i];
		struct fsd_session *s = slab->owner;

		if (slab->state != FSD_SLAB_HELD || !s ||
		    !fsd_session_draining(d, s) ||
		    slab->drain_round == d->drain.round)
			continue;
		pending = true;
		if (!*budget || !fsd_can_reclaim(slab, now) || !drain_room(s))
			continue;
		if (fsd_reclaim_slab(d, s, slab, now))
			continue;	/* @s is closing: its slabs are freed */
		slab->drain_round = d->drain.round;
		d->drain.reclaim_sent++;
		(*budget)--;
	}
	return pending;
}

/*
 * At each pressure check (and when a drain begins): ask for slabs, close
 * the sessions a reload no longer allows once they hold none, and say
 * when the drain is done.
 */
void fsd_drain_tick(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t budget = FSD_DRAIN_BATCH;
	struct fsd_session *s;
	bool any = d->drain.on;

	for (s = d->sessions; s; s = s->next) {
		if (!s->disallowed || s->closing)
			continue;
		if (!s->nr_slabs) {
			d->cnt.closed_not_allowed++;
			fsd_session_close(d, s, FSD_LOG_NOTICE,
					  "not allowed since a reload; every slab given back");
			continue;
		}
		any = true;
	}
	if (!any)
		return;
	if (!d->drain.round)
		d->drain.round = 1;
	/* A round over: the next one begins at once. */
	if (!drain_pass(d, &budget, now_ms)) {
		d->drain.round++;
		drain_pass(d, &budget, now_ms);
	}
	if (fsd_drain_state(d) == FSD_DRAIN_DRAINED && !d->drain.drained_logged) {
		uint64_t took = ms_since(now_ms, d->drain.since);

		d->drain.drained_logged = true;
		pr_notice("drained: no host holds a slab here; safe to stop (%" PRIu64 " slabs given back in %" PRIu64 ".%01" PRIu64 " s)",
			  d->drain.slabs_returned, took / 1000,
			  took % 1000 / 100);
	}
}

/*
 * The drain's state for farswapd --drain and --undrain: "key value"
 * lines, then a "waiting" line per host that still holds slabs, saying
 * why.  Its length, or -ENOSPC when it does not fit @len.
 */
int fsd_drain_report(const struct fsd_donor *d, char *buf, size_t len)
{
	struct fsd_outbuf o = { buf, len, 0, false };
	const struct fsd_session *s;
	uint32_t hosts = 0;

	for (s = d->sessions; s; s = s->next)
		if (s->nr_slabs)
			hosts++;
	fsd_emit(&o, "state %s\n", fsd_drain_state_str(fsd_drain_state(d)));
	fsd_emit(&o, "slabs_left %u\nhosts_holding %u\n", d->pool.nr_held, hosts);
	fsd_emit(&o, "slabs_returned %" PRIu64 "\nbytes_moved %" PRIu64 "\n",
	     d->drain.slabs_returned,
	     d->drain.slabs_returned * d->pool.slab_size);
	fsd_emit(&o, "refusals %" PRIu64 "\n", d->drain.refusals);
	if (d->pool.nr_kept)
		fsd_emit(&o, "waiting kept: %u slabs kept across the restart, for their hosts to resume (then asked back) or the resume grace to end\n",
		     d->pool.nr_kept);
	for (s = d->sessions; s; s = s->next) {
		unsigned int st;
		uint32_t refused;

		if (!s->nr_slabs)
			continue;
		if (!fsd_session_draining(d, s))
			continue;
		refused = fsd_session_refused_slabs(d, s, &st);
		if (refused)
			fsd_emit(&o, "waiting host %u %s: %u slabs, %s (%u refused, asked again every %u ms)\n",
			     s->nr, s->name, s->nr_slabs,
			     st == FARSWAP_ST_NO_SPACE ? "no room elsewhere" :
							 farswap_status_str(st),
			     refused, d->reclaim_deadline_ms);
		else if (s->nr_reclaiming)
			fsd_emit(&o, "waiting host %u %s: %u slabs, %u being moved\n",
			     s->nr, s->name, s->nr_slabs, s->nr_reclaiming);
		else
			fsd_emit(&o, "waiting host %u %s: %u slabs, not asked yet\n",
			     s->nr, s->name, s->nr_slabs);
	}
	return o.full ? -ENOSPC : (int)o.off;
}
