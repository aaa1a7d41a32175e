// SPDX-License-Identifier: GPL-2.0
/*
 * Resume: a donor whose farswapd restarts (an upgrade, a config change, a
 * crash that systemd restarts) keeps the memory it lent (farswapd(8),
 * RESTART) and says so with FARSWAP_FEAT_RESUME.  When such a donor's
 * session fails, its slabs are not given up at once: chunks whose last
 * copy is there wait, their I/O held, for up to resume_grace_ms.  When
 * the donor is back, each of those slabs is asked for with the token the
 * donor issued with it (SLAB_RESUME_REQ); the answer gives the same
 * memory under a new rkey, and the held I/O goes on.  The integrity tags
 * check every page read from it as always, so a donor that resumed the
 * wrong memory costs those pages' reads an error, never a wrong byte.
 *
 * A slab the donor does not give back, and every slab once the grace has
 * passed, is lost as it was before: by the loss work (chunk.c), which
 * leaves suspended slabs alone until then.
 */
#include <linux/jiffies.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "farswap.h"
#include "log.h"

/*
 * Does @donor's session @gen still wait to be resumed?  Lockless: the
 * fields change under state_lock, and every decision taken on a stale
 * answer is taken again by the loss work once the grace is over.
 */
static bool farswap_donor_resumable(struct farswap_donor *donor, u32 gen)
{
	return READ_ONCE(donor->resume_open) &&
	       gen - READ_ONCE(donor->resume_first) <=
		       READ_ONCE(donor->resume_last) -
			       READ_ONCE(donor->resume_first) &&
	       time_before(jiffies, READ_ONCE(donor->resume_until));
}

/* Does slab @rs, of a failed session, wait to be resumed? */
bool farswap_rslab_suspended(const struct farswap_rslab *rs)
{
	return READ_ONCE(rs->resume) &&
	       READ_ONCE(rs->state) != FARSWAP_RSLAB_REVOKED &&
	       farswap_donor_resumable(rs->donor, READ_ONCE(rs->gen));
}

/*
 * A donor's session failed: if the donor keeps its slabs across a
 * restart, they wait for it for resume_grace_ms.  Called under state_lock
 * as the session is marked failed (farswap_donor_error()), so that no
 * request completing in between takes the dead session's slabs for lost.
 * A session that fails while earlier ones still wait joins them, and the
 * wait starts again.  Returns whether a new wait began (to be logged).
 */
bool farswap_donor_suspend_locked(struct farswap_donor *donor)
{
	struct farswap_dev *dev = donor->dev;
	unsigned int grace = dev->params.resume_grace_ms;
	bool joined;

	lockdep_assert_held(&donor->state_lock);
	if (!grace || !(donor->features & FARSWAP_FEAT_RESUME) ||
	    READ_ONCE(donor->removing) || !farswap_dev_map_ready(dev))
		return false;
	joined = donor->resume_open &&
		 time_before(jiffies, donor->resume_until);
	if (!joined)
		WRITE_ONCE(donor->resume_first, donor->gen);
	WRITE_ONCE(donor->resume_last, donor->gen);
	WRITE_ONCE(donor->resume_until, jiffies + msecs_to_jiffies(grace));
	WRITE_ONCE(donor->resume_open, true);
	/* Any context: mod_delayed_work() only takes irq-safe locks. */
	mod_delayed_work(dev->wq, &donor->resume_expire_work,
			 msecs_to_jiffies(grace) + 1);
	return !joined;
}

/* Is a resume owed to the session that just went live? */
bool farswap_donor_resume_pending(struct farswap_donor *donor)
{
	return READ_ONCE(donor->resume_open) &&
	       READ_ONCE(donor->resume_last) != READ_ONCE(donor->gen);
}

/* No more waiting for @donor: what was not resumed is the loss work's. */
void farswap_donor_close_resume(struct farswap_donor *donor)
{
	unsigned long flags;

	spin_lock_irqsave(&donor->state_lock, flags);
	WRITE_ONCE(donor->resume_open, false);
	spin_unlock_irqrestore(&donor->state_lock, flags);
}

/* The grace passed without the donor back: lose what waited for it. */
void farswap_donor_resume_expire(struct work_struct *work)
{
	struct farswap_donor *donor = container_of(to_delayed_work(work),
						   struct farswap_donor,
						   resume_expire_work);
	struct farswap_dev *dev = donor->dev;
	unsigned long flags;
	bool expired = false;

	spin_lock_irqsave(&donor->state_lock, flags);
	if (donor->resume_open &&
	    time_after_eq(jiffies, donor->resume_until)) {
		WRITE_ONCE(donor->resume_open, false);
		expired = true;
	}
	spin_unlock_irqrestore(&donor->state_lock, flags);
	if (!expired)
		return;
	farswap_donor_pr_warn(donor, " did not come back within %u ms: its slabs are given up\n",
			      dev->params.resume_grace_ms);
	queue_work(dev->wq, &dev->loss_work);
}

/*
 * Point every placement on a resumed slab (@from[k], granted in session
 * @to[k].gen) at its new session, address and rkey, and let the requests
 * held on those chunks go.  The slab records themselves change after
 * this (farswap_rslab_suspended() stays true for them until then, so no
 * placement is ever seen neither live nor suspended).
 */
static void farswap_resume_places(struct farswap_dev *dev,
				  struct farswap_donor *donor, u32 new_gen,
				  struct farswap_rslab **from,
				  const struct farswap_rslab *to,
				  unsigned int nr)
{
	unsigned long flags;
	u32 i;

	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		bool moved = false;
		LIST_HEAD(held);
		unsigned int r, k;

		spin_lock_irqsave(&chunk->lock, flags);
		for (r = 0; r < chunk->nr_places; r++) {
			struct farswap_placement *p = &chunk->place[r];

			if (p->donor != donor)
				continue;
			for (k = 0; k < nr; k++)
				if (from[k] == p->rslab && p->gen == to[k].gen)
					break;
			if (k == nr)
				continue;
			p->addr = to[k].addr +
				  ((u64)p->slot << FARSWAP_CHUNK_SHIFT);
			p->rkey = to[k].rkey;
			/* Release: a reader that sees the gen sees the rest. */
			smp_store_release(&p->gen, new_gen);
			moved = true;
		}
		if (moved)
			list_splice_init(&chunk->held, &held);
		spin_unlock_irqrestore(&chunk->lock, flags);
		farswap_resubmit_held(&held);
	}
}

/*
 * The donor is back (a new session, live): ask for every slab of the
 * failed sessions that still waits.  Runs on dev->wq under map_mutex, as
 * the loss work does, so neither sees the other half done.  A refusal
 * loses that slab; a session that fails under it leaves the rest waiting
 * for the next one.
 */
void farswap_donor_resume_work(struct work_struct *work)
{
	struct farswap_donor *donor = container_of(work, struct farswap_donor,
						   resume_work);
	struct farswap_dev *dev = donor->dev;
	u64 bytes = farswap_slab_bytes(&dev->geo);
	struct farswap_rslab **from = NULL, *to = NULL;
	unsigned int noio = memalloc_noio_save();
	unsigned int nr = 0, ok = 0, refused = 0, i, max;
	u32 first, last, new_gen = READ_ONCE(donor->gen);
	bool interrupted = false;
	struct farswap_rslab *rs;
	unsigned long flags;
	int ret = 0;

	mutex_lock(&dev->map_mutex);
	first = READ_ONCE(donor->resume_first);
	last = READ_ONCE(donor->resume_last);
	if (!READ_ONCE(donor->resume_open))
		goto out;
	if (!farswap_donor_live(donor, new_gen)) {
		interrupted = true;
		goto out;
	}
	max = READ_ONCE(dev->nr_rslabs);
	from = kcalloc(max, sizeof(*from), GFP_NOIO);
	to = kcalloc(max, sizeof(*to), GFP_NOIO);
	if (!from || !to) {
		ret = -ENOMEM;
		goto out;
	}
	/* Records not retired stay while map_mutex is held. */
	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(rs, &dev->rslabs, node) {
		if (nr < max && rs->donor == donor &&
		    farswap_rslab_suspended(rs))
			from[nr++] = rs;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);

	for (i = 0; i < nr; i++) {
		u32 old = from[i]->gen, gen;

		ret = farswap_donor_resume_slab(donor, from[i], bytes, &to[ok],
						&gen);
		if (!ret && gen == new_gen) {
			to[ok].gen = old;
			from[ok++] = from[i];
			continue;
		}
		if (!farswap_donor_live(donor, new_gen)) {
			/* Not a refusal: the next session asks again. */
			interrupted = true;
			break;
		}
		farswap_donor_pr_warn(donor, " did not give slab %u back (%d): the pages only it held are lost\n",
				      from[i]->remote_id, ret);
		refused++;
		/* No longer waited for: the loss work lets it go. */
		WRITE_ONCE(from[i]->resume, 0);
	}
	if (ok) {
		farswap_resume_places(dev, donor, new_gen, from, to, ok);
		spin_lock_irqsave(&dev->rslab_lock, flags);
		for (i = 0; i < ok; i++) {
			from[i]->addr = to[i].addr;
			from[i]->rkey = to[i].rkey;
			WRITE_ONCE(from[i]->resume, to[i].resume);
			WRITE_ONCE(from[i]->gen, new_gen);
		}
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		atomic64_add(ok, &donor->stats.resumed);
	}
	atomic64_add(refused, &donor->stats.resume_refused);
out:
	/*
	 * The wait ends here unless the session failed under it (its
	 * successor asks for the rest) or another failure opened a new one.
	 */
	spin_lock_irqsave(&donor->state_lock, flags);
	if (!interrupted && donor->resume_first == first &&
	    donor->resume_last == last)
		WRITE_ONCE(donor->resume_open, false);
	spin_unlock_irqrestore(&donor->state_lock, flags);
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);
	kfree(from);
	kfree(to);
	if (nr || ret == -ENOMEM)
		farswap_donor_pr_info(donor, " is back: %u of %u slabs resumed with their content%s%s\n",
				      ok, nr, interrupted ? " (it failed again: the rest wait)" : "",
				      ret == -ENOMEM ? " (out of memory: the rest are lost)" : "");
	if (interrupted)
		return;
	/* What was not resumed is lost now; room and repairs as on any return. */
	queue_work(dev->wq, &dev->loss_work);
	farswap_chunks_want_room(dev);
	queue_work(dev->wq, &dev->repair_work);
}
