// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's answer to memory pressure, at each pressure check
 * (fsd_donor_tick()): free slabs go back to the OS, held ones are asked
 * back (RECLAIM_REQ, answered by RECLAIM_REP) and revoked when they are
 * not given back within revoke-after deadlines, and memory is taken back
 * once the pressure has passed.  pressure.c decides how much; this file
 * acts.  Free of verbs calls, as donor.c is.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "donor.h"
#include "donor_internal.h"
#include "log.h"
#include "reclaim.h"

/* Give a slab nobody can reach any more back to the OS, or to the pool. */
static void release_slab(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (!d->ops->slab_release(d, slab) && !fsd_pool_released(&d->pool, slab))
		d->cnt.released++;
	else if (slab->state == FSD_SLAB_HELD)
		fsd_pool_put(&d->pool, slab);
}

int fsd_handle_reclaim_rep(struct fsd_donor *d, struct fsd_session *s,
			   const union farswap_msg *m, uint64_t now)
{
	const struct farswap_reclaim_rep *rep = &m->reclaim_rep;
	uint32_t id = le32_to_cpu(rep->slab_id);
	uint64_t cookie = le64_to_cpu(rep->hdr.cookie);
	struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	unsigned int st = le16_to_cpu(rep->status);

	if (!slab || slab->state != FSD_SLAB_HELD || slab->owner != s ||
	    !slab->reclaiming || slab->reclaim_cookie != cookie) {
		pr_notice("host %u (%s, %s): RECLAIM_REP for slab %u (cookie %" PRIu64 ") answers no request; ignored",
			  s->nr, s->name, s->peer, id, cookie);
		return 0;
	}
	s->nr_reclaiming--;
	s->unsolicited--;
	if (st != FARSWAP_ST_OK) {
		fsd_pool_reclaim_end(&d->pool, slab);
		slab->reclaim_retry_after = now + d->reclaim_deadline_ms;
		slab->refused_st = (uint16_t)(st ?: FARSWAP_ST_INTERNAL);
		d->cnt.reclaim_refused++;
		if (fsd_session_draining(d, s)) {
			d->drain.refusals++;
			pr_notice("host %u (%s, %s): keeps slab %u: %s; draining, so asked again in %u ms, never revoked",
				  s->nr, s->name, s->peer, id,
				  st == FARSWAP_ST_NO_SPACE ?
					  "no room elsewhere" :
					  farswap_status_str(st),
				  d->reclaim_deadline_ms);
		} else {
			pr_notice("host %u (%s, %s): keeps slab %u: %s",
				  s->nr, s->name, s->peer, id,
				  farswap_status_str(st));
		}
		return 0;
	}
	s->nr_slabs--;
	d->cnt.reclaim_ok++;
	if (fsd_session_draining(d, s))
		d->drain.slabs_returned++;
	if (!fsd_unregister_slab(d, slab))
		return 0;
	if (d->under_pressure) {
		pr_info("host %u (%s, %s): gave back slab %u; memory returned to the OS",
			s->nr, s->name, s->peer, id);
		release_slab(d, slab);
	} else {
		pr_info("host %u (%s, %s): gave back slab %u; pressure is over, keeping it in the pool",
			s->nr, s->name, s->peer, id);
		fsd_pool_put(&d->pool, slab);
	}
	return 0;
}

/*
 * The places in @s's receive queue that the donor's reclaim requests and
 * revoke notices hold: at most FSD_RECLAIMS_MAX, so that a keepalive
 * probe always fits in the unsolicited budget beside them.
 */
uint32_t fsd_session_asking(const struct fsd_session *s)
{
	return s->nr_reclaiming + s->revokes_in_flight;
}

bool fsd_can_reclaim(const struct fsd_slab *slab, uint64_t now)
{
	const struct fsd_session *s = slab->owner;

	return slab->state == FSD_SLAB_HELD && !slab->reclaiming &&
	       !slab->granting && !slab->revoke_at &&
	       now >= slab->reclaim_retry_after && s && !s->closing &&
	       s->established && (s->features & FARSWAP_FEAT_RECLAIM);
}

/*
 * Ask @s for @slab back (RECLAIM_REQ with a reclaim deadline).  0, or
 * -errno when it could not be sent (the session is closing then).
 */
int fsd_reclaim_slab(struct fsd_donor *d, struct fsd_session *s,
		     struct fsd_slab *slab, uint64_t now)
{
	union farswap_msg m;
	uint64_t cookie;
	int ret;

	cookie = ++s->next_cookie;
	farswap_msg_init(&m, FARSWAP_MSG_RECLAIM_REQ, s->version, cookie);
	m.reclaim_req.slab_id = cpu_to_le32(slab->id);
	m.reclaim_req.deadline_ms = cpu_to_le32(d->reclaim_deadline_ms);
	ret = fsd_send_msg(d, s, &m, 0);
	if (ret)
		return ret;
	fsd_pool_reclaim_start(&d->pool, slab, cookie,
			       now + d->reclaim_deadline_ms);
	if (!slab->reclaim_first)
		slab->reclaim_first = now;
	s->nr_reclaiming++;
	s->unsolicited++;
	s->last_active = now;
	d->cnt.reclaim_sent++;
	pr_info("host %u (%s, %s): RECLAIM_REQ slab %u, deadline %u ms",
		s->nr, s->name, s->peer, slab->id, d->reclaim_deadline_ms);
	return 0;
}

static void send_reclaims(struct fsd_donor *d, struct fsd_session *s,
			  uint32_t n, uint64_t now)
{
	uint32_t i;

	/* Highest slab ids first: the pool hands out low ids first. */
	for (i = d->pool.nr_slabs; i-- > 0 && n && !s->closing;) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->owner != s || !fsd_can_reclaim(slab, now))
			continue;
		if (fsd_reclaim_slab(d, s, slab, now))
			return;
		n--;
	}
}

static void reclaim_from_hosts(struct fsd_donor *d, uint32_t want,
			       uint64_t now)
{
	struct fsd_pressure_host *hosts;
	struct fsd_session **ss, *s;
	unsigned int n = 0, i;
	uint32_t j;

	if (!d->nr_sessions)
		return;
	hosts = calloc(d->nr_sessions, sizeof(*hosts));
	ss = calloc(d->nr_sessions, sizeof(*ss));
	if (!hosts || !ss)
		goto out_free;
	for (s = d->sessions; s && n < d->nr_sessions; s = s->next) {
		ss[n] = s;
		hosts[n].outstanding = fsd_session_asking(s);
		n++;
	}
	for (j = 0; j < d->pool.nr_slabs; j++) {
		struct fsd_slab *slab = &d->pool.slabs[j];

		if (!fsd_can_reclaim(slab, now))
			continue;
		for (i = 0; i < n; i++)
			if (ss[i] == slab->owner)
				hosts[i].reclaimable++;
	}
	fsd_pressure_pick(hosts, n, want, FSD_RECLAIMS_MAX);
	for (i = 0; i < n; i++)
		if (hosts[i].pick)
			send_reclaims(d, ss[i], hosts[i].pick, now);
out_free:
	free(hosts);
	free(ss);
}

/* Did @s refuse to give a slab back within the last reclaim deadline? */
static bool refused_lately(const struct fsd_donor *d,
			   const struct fsd_session *s, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs; i++)
		if (d->pool.slabs[i].owner == s &&
		    now < d->pool.slabs[i].reclaim_retry_after)
			return true;
	return false;
}

/*
 * max-slabs-per-host fair: a host under its share was refused for want of
 * a free slab (fair_wait_until), so each host over its share is asked for
 * the excess, a reclaim like pressure's: a host moves those chunks to its
 * other donors or refuses (then it is left alone for a reclaim deadline),
 * and is never revoked.  Once a slab is free the
 * hosts are told, and the one waiting takes it.
 */
static void reclaim_fair_share(struct fsd_donor *d, uint64_t now)
{
	struct fsd_session *s;
	uint32_t want, room, before;

	if (!d->fair_wait_until || now >= d->fair_wait_until ||
	    d->under_pressure || d->drain.on)
		return;
	if (fsd_slabs_offered(d)) {
		d->fair_wait_until = 0;
		fsd_send_notices(d, now);
		return;
	}
	for (s = d->sessions; s; s = s->next) {
		want = fsd_host_excess(d, s);
		if (!want || fsd_session_asking(s) >= FSD_RECLAIMS_MAX ||
		    refused_lately(d, s, now))
			continue;
		room = FSD_RECLAIMS_MAX - fsd_session_asking(s);
		before = s->nr_reclaiming;
		send_reclaims(d, s, want < room ? want : room, now);
		if (s->nr_reclaiming > before) {
			d->cnt.fair_reclaims += s->nr_reclaiming - before;
			pr_notice("host %u (%s, %s): over its fair share by %u slabs while another host waits for one: %u asked back",
				  s->nr, s->name, s->peer, want,
				  s->nr_reclaiming - before);
		}
	}
}

/*
 * Zero freed slabs a bounded amount at a time, so that a grant rarely has
 * a whole slab to clear while every other host waits.
 */
static void zero_some(struct fsd_donor *d)
{
	uint64_t budget = FSD_ZERO_BYTES, size = d->pool.slab_size, n;
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs && budget; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_FREE || !slab->dirty)
			continue;
		n = size - slab->clean_upto;
		if (n > budget)
			n = budget;
		d->ops->slab_zero(d, slab, slab->clean_upto, n);
		slab->clean_upto += n;
		budget -= n;
		if (slab->clean_upto == size) {
			slab->dirty = false;
			slab->clean_upto = 0;
		}
	}
}

/*
 * The end of a revoke: deregister the slab (its rkey is dead: the host's
 * next RDMA to it fails) and give the memory to the kernel.
 */
static void revoke_finish(struct fsd_donor *d, struct fsd_slab *slab)
{
	fsd_slab_leaves(slab->owner, slab);
	if (fsd_unregister_slab(d, slab))
		release_slab(d, slab);
}

/* Does @s take SLAB_REVOKE notices (so must be told before a revoke)? */
static bool takes_revoke(const struct fsd_session *s)
{
	return (s->features & FARSWAP_FEAT_REVOKE) && !s->closing &&
	       s->established;
}

/*
 * Can @slab's revoke start now?  A host that takes the notice has room
 * for it in its receive queue only within the donor's unsolicited budget;
 * past it the revoke waits for a later pass.  Revoking untold instead
 * would leave the host an rkey that is dead without a word: its next RDMA
 * to the slab kills the queue pair and with it every slab of the session,
 * not one.  A slab with a reclaim request unanswered already holds a
 * place, which its notice takes over.
 */
static bool revoke_room(const struct fsd_slab *slab)
{
	const struct fsd_session *s = slab->owner;

	return !takes_revoke(s) || slab->reclaiming ||
	       fsd_session_asking(s) < FSD_RECLAIMS_MAX;
}

/*
 * Tell @slab's host it is revoked (SLAB_REVOKE): it stops using the slab
 * and loses only that slab's copies, not its session.  The notice counts
 * against the unsolicited budget until the host's transport acknowledges
 * it (fsd_revoke_sent()).  False when the host does not take the notice
 * or it cannot be sent now.
 */
static bool revoke_notify(struct fsd_donor *d, struct fsd_slab *slab,
			  uint64_t now)
{
	struct fsd_session *s = slab->owner;
	union farswap_msg m;

	if (!takes_revoke(s) || !revoke_room(slab))
		return false;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_REVOKE, s->version,
			 ++s->next_cookie);
	m.slab_revoke.slab_id = cpu_to_le32(slab->id);
	m.slab_revoke.grace_ms = cpu_to_le32(d->reclaim_deadline_ms);
	if (fsd_send_msg(d, s, &m, FSD_SEND_REVOKE))
		return false;
	if (slab->reclaiming) {
		/* Moot now: a late RECLAIM_REP for it is ignored. */
		fsd_pool_reclaim_end(&d->pool, slab);
		s->nr_reclaiming--;
	} else {
		s->unsolicited++;
	}
	s->revokes_in_flight++;
	slab->revoke_at = now + d->reclaim_deadline_ms;
	d->cnt.revoke_notices++;
	return true;
}

/*
 * Take a held slab back without its host's word.  A host that takes the
 * notice is told first and has a reclaim deadline to stop using the slab
 * (or free it); one that does not loses the slab at once, and to it this
 * is the slab's donor dying.
 */
static void revoke_slab(struct fsd_donor *d, struct fsd_slab *slab,
			uint64_t now)
{
	struct fsd_session *s = slab->owner;
	uint64_t asked = ms_since(now, slab->reclaim_first);
	bool told;

	d->cnt.revoked++;
	told = revoke_notify(d, slab, now);
	pr_warn("host %u (%s, %s): slab %u revoked: not given back %" PRIu64 ".%01" PRIu64 " s (%u deadlines of %u ms) after the first RECLAIM_REQ, while short of memory; %s",
		s->nr, s->name, s->peer, slab->id, asked / 1000,
		asked % 1000 / 100, d->lim.revoke_after,
		d->reclaim_deadline_ms,
		told ? "the host is told, and its memory goes back to the OS after one more deadline" :
		       "its memory goes back to the OS now");
	/*
	 * fsd_send_msg() closes a session it cannot send on, freeing its
	 * slabs.
	 */
	if (!told && slab->state == FSD_SLAB_HELD && slab->owner == s)
		revoke_finish(d, slab);
}

/*
 * Under pressure, has @slab had revoke-after deadlines to come back?  A
 * draining host's never has: a drain waits, it never loses a page.
 */
static bool revoke_due(const struct fsd_donor *d, const struct fsd_slab *slab,
		       uint64_t now)
{
	return d->under_pressure && d->lim.revoke_after &&
	       slab->state == FSD_SLAB_HELD && !slab->granting &&
	       slab->owner && !fsd_session_draining(d, slab->owner) &&
	       revoke_room(slab) &&
	       !slab->revoke_at && slab->reclaim_first &&
	       ms_since(now, slab->reclaim_first) >=
		       (uint64_t)d->lim.revoke_after * d->reclaim_deadline_ms;
}

/*
 * While the donor stays short of memory, a slab its host neither gave
 * back nor answered for (or refused: it is asked again after a deadline's
 * time) within revoke-after deadlines of the first request is revoked:
 * at most @budget of them (what the deficit still needs), the longest
 * asked first.  Returns how many of those had no request in flight, so
 * were not counted as on their way yet.
 */
static uint32_t revoke_overdue(struct fsd_donor *d, uint32_t budget,
			       uint64_t now)
{
	uint32_t i, unasked = 0;

	for (; budget; budget--) {
		struct fsd_slab *oldest = NULL;

		for (i = 0; i < d->pool.nr_slabs; i++) {
			struct fsd_slab *slab = &d->pool.slabs[i];

			if (revoke_due(d, slab, now) &&
			    (!oldest ||
			     slab->reclaim_first < oldest->reclaim_first))
				oldest = slab;
		}
		if (!oldest)
			break;
		if (!oldest->reclaiming)
			unasked++;
		revoke_slab(d, oldest, now);
	}
	return unasked;
}

/*
 * Missed reclaim deadlines are logged once per request; revoked slabs
 * whose host had its grace are deregistered.
 */
static void check_deadlines(struct fsd_donor *d, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];
		struct fsd_session *s = slab->owner;

		if (slab->state == FSD_SLAB_HELD && slab->revoke_at &&
		    now >= slab->revoke_at) {
			pr_info("host %u (%s, %s): revoked slab %u deregistered",
				s->nr, s->name, s->peer, slab->id);
			revoke_finish(d, slab);
			continue;
		}
		if (!slab->reclaiming || slab->deadline_logged ||
		    now < slab->reclaim_deadline)
			continue;
		slab->deadline_logged = true;
		d->cnt.reclaim_late++;
		if (d->lim.revoke_after)
			pr_warn("host %u (%s, %s): no answer to RECLAIM_REQ for slab %u within %u ms; revoked if not back %u deadlines after the first request while short of memory",
				s->nr, s->name, s->peer, slab->id,
				d->reclaim_deadline_ms, d->lim.revoke_after);
		else
			pr_warn("host %u (%s, %s): no answer to RECLAIM_REQ for slab %u within %u ms; the slab stays theirs until they answer",
				s->nr, s->name, s->peer, slab->id,
				d->reclaim_deadline_ms);
	}
}

/* A pressure spell is over: the next one counts deadlines afresh. */
static void forget_reclaim_times(struct fsd_donor *d)
{
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs; i++)
		d->pool.slabs[i].reclaim_first = 0;
}

/*
 * The periodic pressure check: decide (fsd_pressure_decide), then act:
 * release free slabs, ask hosts for held ones, or take memory back and
 * tell hosts there are slabs to be had.
 */
void fsd_donor_tick(struct fsd_donor *d, const struct fsd_meminfo *mi,
		    uint64_t now)
{
	struct fsd_pressure_in in = { 0 };
	struct fsd_pressure_out out;
	char avail[32], head[32];
	uint32_t i, n;
	bool was = d->under_pressure;

	d->mem = *mi;
	in.mem_available = mi->mem_available;
	in.mem_hidden = mi->pcp_valid ? mi->pcp_free : 0;
	in.headroom = d->headroom;
	in.hysteresis = d->hysteresis;
	in.slab_size = d->pool.slab_size;
	in.psi = mi->psi_some_avg10;
	in.psi_valid = mi->psi_valid;
	in.psi_threshold = d->psi_threshold;
	in.was_under = was;
	in.nr_free = d->pool.nr_free;
	in.nr_released = d->pool.nr_released;
	for (i = 0; i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];

		if (fsd_can_reclaim(slab, now))
			in.nr_reclaimable++;
		if (slab->state == FSD_SLAB_HELD && slab->revoke_at)
			in.nr_revoking++;
		else if (slab->reclaiming)
			in.nr_reclaiming++;
	}
	fsd_pressure_decide(&in, &out);
	if (out.under || was)
		pr_debug("pressure check: MemAvailable %" PRIu64 " KiB + %" PRIu64 " KiB on per-CPU lists; %u free, %u reclaiming, %u released: release %u, reclaim %u",
			 in.mem_available >> 10, in.mem_hidden >> 10,
			 in.nr_free, in.nr_reclaiming, in.nr_released,
			 out.release_free, out.reclaim);

	d->under_pressure = out.under;
	fsd_format_size_mb(mi->mem_available, avail, sizeof(avail));
	fsd_format_size_mb(d->headroom, head, sizeof(head));
	if (out.under && !was)
		pr_warn("memory pressure: MemAvailable %s, headroom %s, PSI some avg10 %u.%02u%%: no new slabs until it passes",
			avail, head, mi->psi_some_avg10 / 100,
			mi->psi_some_avg10 % 100);
	else if (!out.under && was)
		pr_notice("memory pressure over: MemAvailable %s", avail);
	if (!out.under && was)
		forget_reclaim_times(d);

	for (i = d->pool.nr_slabs, n = 0; i-- > 0 && n < out.release_free;) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_FREE)
			continue;
		release_slab(d, slab);
		n++;
	}
	if (n)
		pr_info("released %u free slabs to the OS", n);
	/* A slab revoked without a request in flight is on its way now. */
	n = revoke_overdue(d, out.revoke, now);
	out.reclaim -= n < out.reclaim ? n : out.reclaim;
	if (out.reclaim)
		reclaim_from_hosts(d, out.reclaim, now);

	/* Faulting in and pinning takes time: a bounded amount per check. */
	if (out.repopulate > FSD_REPOPULATE_BYTES / d->pool.slab_size)
		out.repopulate = FSD_REPOPULATE_BYTES / d->pool.slab_size ?: 1;
	for (i = 0, n = 0; i < d->pool.nr_slabs && n < out.repopulate; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_RELEASED)
			continue;
		if (d->ops->slab_populate(d, slab)) {
			pr_warn("cannot take slab %u back from the OS; will retry",
				slab->id);
			break;
		}
		fsd_pool_populated(&d->pool, slab);
		d->cnt.repopulated++;
		n++;
	}
	if (n)
		pr_info("took %u slabs back from the OS", n);
	if ((n || (was && !out.under)) && fsd_slabs_offered(d))
		fsd_send_notices(d, now);
	reclaim_fair_share(d, now);
	check_deadlines(d, now);
	fsd_donor_expire_kept(d, now);
	fsd_drain_tick(d, now);
	zero_some(d);
}
