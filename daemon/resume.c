// SPDX-License-Identifier: GPL-2.0
/*
 * Slabs that outlive a restart of farswapd (farswapd(8), RESTART) or
 * their host's session: the held slabs of the last farswapd, adopted as
 * KEPT from its pool-state table (keep.h), and those of a session that
 * ended without the host giving them back (donor.c, FARSWAP_FEAT_KEEP);
 * SLAB_RESUME_REQ, by which their hosts take them back, content and all;
 * and the end of the resume grace, which frees those nobody took back.
 * Free of verbs calls, as donor.c is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "donor.h"
#include "donor_internal.h"
#include "log.h"

/*
 * Compare resume tokens in a time that does not depend on where they
 * differ: a host must not learn a token a byte at a time.
 */
static bool token_equal(uint64_t a, uint64_t b)
{
	volatile uint64_t diff = a ^ b;

	return diff == 0;
}

static bool same_id(const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a, b, FARSWAP_ID_LEN);
}

/*
 * May @s take @slab back?  The id must be the one it was kept for, and a
 * slab kept for an id its host proved (host-keys) goes only to a session
 * that proved it again: an id claimed with key-file is anybody's word.
 */
static bool kept_for(const struct fsd_slab *slab, const struct fsd_session *s)
{
	if (!same_id(slab->kept_id, s->host_id))
		return false;
	return slab->kept_proof != FSD_PROOF_HOST_KEY ||
	       s->proof == FSD_PROOF_HOST_KEY;
}

/*
 * A SLAB_RESUME_REQ for a slab @s resumed already, with the token it had
 * (its reply was lost, or the host asks twice): answered again as it was,
 * registered once.
 */
static bool resumed_already(const struct fsd_slab *slab,
			    const struct fsd_session *s, uint64_t token)
{
	return slab && slab->state == FSD_SLAB_HELD && slab->owner == s &&
	       !slab->granting && slab->resumed_from &&
	       token_equal(slab->resumed_from, token);
}

/*
 * Why @s may not have @slab back, or FARSWAP_ST_OK.  Whether the slab
 * exists and the token is right is answered before whose it is, so that
 * a wrong token tells nothing about the slab.
 */
static unsigned int resume_refusal(const struct fsd_donor *d,
				   const struct fsd_session *s,
				   const struct fsd_slab *slab,
				   const struct farswap_slab_resume_req *req,
				   uint64_t now, const char **why)
{
	if (!(s->features & FARSWAP_FEAT_RESUME)) {
		*why = "the session did not negotiate FARSWAP_FEAT_RESUME";
		return FARSWAP_ST_INVALID;
	}
	if (!slab || slab->state != FSD_SLAB_KEPT ||
	    !token_equal(slab->resume, le64_to_cpu(req->resume))) {
		*why = "not kept, or not with that token";
		return FARSWAP_ST_NO_ENTRY;
	}
	if (slab->kept_until && now >= slab->kept_until) {
		*why = "the resume grace is over";
		return FARSWAP_ST_NO_ENTRY;
	}
	if (!kept_for(slab, s)) {
		*why = "kept for another host";
		return FARSWAP_ST_DENIED;
	}
	if (le64_to_cpu(req->slab_size) != d->pool.slab_size) {
		*why = "its size is not this donor's slab size";
		return FARSWAP_ST_SLAB_SIZE;
	}
	return FARSWAP_ST_OK;
}

/*
 * A host asks back, with its token, a slab that an older session of its
 * still holds: the host resumes only the slabs of a session it saw fail,
 * so that session is dead, though its end has not reached the donor yet
 * (a transport error on the host's side).  It ends now, its slabs kept
 * (this one among them) for the host to take back.
 */
static void end_stale_owner(struct fsd_donor *d, struct fsd_session *s,
			    const struct fsd_slab *slab, uint64_t token)
{
	struct fsd_session *old = slab ? slab->owner : NULL;

	if (!old || old == s || old->closing ||
	    slab->state != FSD_SLAB_HELD || slab->granting ||
	    !(old->features & FARSWAP_FEAT_KEEP) ||
	    old->proof != s->proof || !same_id(old->host_id, s->host_id) ||
	    !token_equal(slab->resume, token))
		return;
	fsd_session_close(d, old, FSD_LOG_NOTICE,
			  "its host asks for its slabs back in session %u: this one is gone on the host's side",
			  s->nr);
}

/*
 * SLAB_RESUME_REQ: a host takes a kept slab back, registered anew (the
 * same path as a grant, off the event loop), with a new rkey and a new
 * token.  Not charged to alloc-rate or max-slabs-per-host: the host had
 * the slab before the restart.  Answered while draining too, so that its
 * pages are not lost: the drain then asks for it back like any other.
 */
int fsd_handle_resume(struct fsd_donor *d, struct fsd_session *s,
		      const union farswap_msg *m, uint64_t now)
{
	const struct farswap_slab_resume_req *req = &m->resume_req;
	uint64_t cookie = le64_to_cpu(req->hdr.cookie), token;
	uint32_t id = le32_to_cpu(req->slab_id);
	struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	const char *why = NULL;
	uint32_t missed = 0;
	unsigned int st;

	if (resumed_already(slab, s, le64_to_cpu(req->resume)))
		return fsd_send_grant_rep(d, s, cookie, FARSWAP_ST_OK, slab,
					  true, id);
	if (s->features & FARSWAP_FEAT_RESUME)
		end_stale_owner(d, s, slab, le64_to_cpu(req->resume));
	st = resume_refusal(d, s, slab, req, now, &why);
	if (st == FARSWAP_ST_OK && fsd_new_resume_token(d, s, &token)) {
		why = "no random token";
		st = FARSWAP_ST_INTERNAL;
	}
	if (st != FARSWAP_ST_OK) {
		d->cnt.resume_refused++;
		if (fsd_ratelimit_pass(&d->alloc_log, now, FSD_REFUSE_LOG_MS,
				       FSD_REFUSE_LOG_BURST, &missed))
			pr_notice("host %u (%s, %s): SLAB_RESUME_REQ for slab %u refused (%s): %s",
				  s->nr, s->name, s->peer, id,
				  farswap_status_str(st), why);
		return fsd_send_grant_rep(d, s, cookie, st, NULL, true, id);
	}
	fsd_pool_resume(&d->pool, slab, s);
	slab->resuming = true;
	slab->host_slab = 0;
	return fsd_start_grant(d, s, slab, cookie, token);
}

/*
 * Is @id the host of one of the first @n held records that @counted
 * picks?  For counting hosts, each once.
 */
typedef bool (*rec_pick)(const struct fsd_keep_rec *r, uint32_t id,
			 const void *arg);

static bool id_seen(const struct fsd_keep_rec *rec, uint32_t n,
		    const uint8_t *id, rec_pick counted, const void *arg)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (rec[i].held && same_id(rec[i].host_id, id) &&
		    counted(&rec[i], i, arg))
			return true;
	return false;
}

static bool adopted_rec(const struct fsd_keep_rec *r, uint32_t id,
			const void *arg)
{
	const struct fsd_donor *d = arg;
	const struct fsd_slab *slab = id < d->pool.nr_slabs ?
					      &d->pool.slabs[id] : NULL;

	(void)r;
	return slab && slab->state == FSD_SLAB_KEPT;
}

static bool dropped_rec(const struct fsd_keep_rec *r, uint32_t id,
			const void *arg)
{
	return !adopted_rec(r, id, arg);
}

/*
 * The last farswapd's held slabs (@rec, its table, @nr_rec records) become
 * KEPT, their memory mapped again (fsd_ops.slab_populate maps the pool's
 * memfd, content and all), resumable by their hosts for @grace_ms from
 * @now_ms.  Those the pool no longer has (nr_slabs shrank) or that cannot
 * be mapped are counted in @out as dropped: their pages are lost.
 * Returns the number kept.
 */
int fsd_donor_adopt(struct fsd_donor *d, const struct fsd_keep_rec *rec,
		    uint32_t nr_rec, uint64_t now_ms, uint32_t grace_ms,
		    struct fsd_adopted *out)
{
	uint32_t i;

	memset(out, 0, sizeof(*out));
	d->resume_grace_ms = grace_ms;
	for (i = 0; i < nr_rec; i++) {
		struct fsd_slab *slab = fsd_pool_get(&d->pool, i);

		if (!rec[i].held)
			continue;
		if (slab && slab->state == FSD_SLAB_RELEASED &&
		    !d->ops->slab_populate(d, slab) &&
		    !fsd_pool_kept(&d->pool, slab, rec[i].host_id,
				   rec[i].proof, rec[i].token)) {
			slab->kept_until = now_ms + grace_ms;
			fsd_keep_hold(d->pool.keep, i, rec[i].host_id,
				      rec[i].proof, rec[i].token);
			continue;
		}
		if (slab && slab->mem && slab->state == FSD_SLAB_RELEASED)
			d->ops->slab_release(d, slab);
		out->dropped++;
	}
	for (i = 0; i < nr_rec; i++) {
		if (!rec[i].held)
			continue;
		if (adopted_rec(&rec[i], i, d)) {
			out->slabs++;
			if (!id_seen(rec, i, rec[i].host_id, adopted_rec, d))
				out->hosts++;
		} else if (!id_seen(rec, i, rec[i].host_id, dropped_rec, d)) {
			out->dropped_hosts++;
		}
	}
	return (int)out->slabs;
}

/* Is @slab kept still at @now_ms?  A slab kept since the last tick starts its wait now. */
static bool kept_wait(struct fsd_donor *d, struct fsd_slab *slab,
		      uint64_t now_ms)
{
	if (!slab->kept_until)
		slab->kept_until = now_ms + d->resume_grace_ms;
	return now_ms < slab->kept_until;
}

/*
 * Every kept slab whose grace is over and that nobody took back is freed,
 * its memory punched out of the pool, with one line per host.
 */
void fsd_donor_expire_kept(struct fsd_donor *d, uint64_t now_ms)
{
	char name[FSD_NAME_LEN];
	uint8_t id[FARSWAP_ID_LEN];
	uint32_t first, i, n;

	for (first = 0; d->pool.nr_kept && first < d->pool.nr_slabs; first++) {
		struct fsd_slab *slab = &d->pool.slabs[first];

		if (slab->state != FSD_SLAB_KEPT || kept_wait(d, slab, now_ms))
			continue;
		memcpy(id, slab->kept_id, FARSWAP_ID_LEN);
		for (n = 0, i = first; i < d->pool.nr_slabs; i++) {
			slab = &d->pool.slabs[i];
			if (slab->state != FSD_SLAB_KEPT ||
			    !same_id(slab->kept_id, id) ||
			    kept_wait(d, slab, now_ms))
				continue;
			if (d->ops->slab_release(d, slab) ||
			    fsd_pool_released(&d->pool, slab)) {
				pr_err("slab %u kept for a host: cannot free it; it stays out of use",
				       slab->id);
				return;
			}
			d->cnt.kept_expired++;
			n++;
		}
		fsd_format_host_id(id, name);
		pr_notice("%u slabs kept for host %s were not resumed within %u s: freed",
			  n, name, d->resume_grace_ms / 1000);
	}
}

/*
 * Held slabs a restart would lose: all of them when the pool does not
 * outlive the process, else those of hosts that cannot resume (no
 * FARSWAP_FEAT_RESUME).  What decides whether a restart must drain first
 * (farswapd --drain --unless-restarting).
 */
uint32_t fsd_slabs_lost_on_restart(const struct fsd_donor *d)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_HELD)
			continue;
		if (!d->pool_kept || !slab->owner ||
		    !(slab->owner->features & FARSWAP_FEAT_RESUME))
			n++;
	}
	return n;
}
