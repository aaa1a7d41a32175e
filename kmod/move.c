// SPDX-License-Identifier: GPL-2.0
/*
 * The copy engine: copying chunks between donors with farswap_rdma_sync()
 * through the device's bounce buffer.  It moves a slab's chunks to other
 * donors when its donor reclaims it (the reclaim queue, filled by the
 * control channel and emptied by the reclaim work), copies a chunk to
 * a new replica (repair) or out of a shared failure domain (spread), and
 * rewrites damaged pages from an intact copy.
 */
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/wait_bit.h>

#include "farswap.h"
#include "log.h"

/*
 * debugfs copy_pause_ms: tests stretch a move (before each piece of its
 * copy, and before its switch) to land a revoke or a failure in it.
 */
static void farswap_copy_pause(struct farswap_dev *dev)
{
	u32 ms = READ_ONCE(dev->copy_pause_ms);

	if (ms)
		msleep(ms);
}

/* Copy a chunk's written pages from one placement to another. */
static int farswap_copy_chunk(struct farswap_dev *dev,
			      struct farswap_chunk *chunk,
			      const struct farswap_placement *from,
			      const struct farswap_placement *to)
{
	/*
	 * Swap-ins to these donors wait behind each piece on the link: small
	 * pieces keep that wait short (a round trip's gap lets them pass).
	 */
	u32 step = min_t(u32, dev->bounce_len, FARSWAP_COPY_PIECE_BYTES) >>
		   FARSWAP_PAGE_SHIFT;
	u32 first, n;
	int ret;

	for (first = 0; first < FARSWAP_CHUNK_PAGES; first += step) {
		u64 off = (u64)first << FARSWAP_PAGE_SHIFT;
		unsigned long flags;
		bool any;

		n = min(step, FARSWAP_CHUNK_PAGES - first);
		spin_lock_irqsave(&chunk->lock, flags);
		any = farswap_pages_any_written(&chunk->pages, first, n);
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (!any)
			continue;
		/*
		 * A revoked slab is deregistered once its grace ends: a READ
		 * or WRITE there then fails the QP and with it the donor's
		 * whole session, not just that slab.  Checked before every
		 * piece, the copy stops within the grace.
		 */
		farswap_copy_pause(dev);
		if (!farswap_place_live(from) || !farswap_place_live(to))
			return -ENOLINK;
		ret = farswap_rdma_sync(from->donor, false, dev->bounce,
					n << FARSWAP_PAGE_SHIFT,
					from->addr + off, from->rkey, from->gen);
		if (ret)
			return ret;
		ret = farswap_rdma_sync(to->donor, true, dev->bounce,
					n << FARSWAP_PAGE_SHIFT,
					to->addr + off, to->rkey, to->gen);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The end of a migration or repair: the chunk is BOUND again (UNBOUND
 * with no placement left: held writes then bind it afresh), and its held
 * requests move to @held.  Discards during the copy could not let the
 * chunk go (it was not BOUND): one that emptied it lets go now, and the
 * placements to give back are left in @place.
 *
 * Return: how many placements to give back with farswap_put_slot().
 */
static unsigned int farswap_chunk_settle_locked(struct farswap_dev *dev,
						struct farswap_chunk *chunk,
						struct list_head *held,
						struct farswap_placement *place)
{
	unsigned int n;

	lockdep_assert_held(&chunk->lock);
	chunk->state = chunk->nr_places ? FARSWAP_CHUNK_BOUND :
					  FARSWAP_CHUNK_UNBOUND;
	n = farswap_chunk_release_locked(dev, chunk, place);
	list_splice_init(&chunk->held, held);
	return n;
}

/* Slots a settled chunk let go of, then its held requests. */
static void farswap_chunk_settled(struct farswap_dev *dev,
				  struct farswap_placement *place,
				  unsigned int n, struct list_head *held)
{
	unsigned int r;

	for (r = 0; r < n; r++)
		farswap_put_slot(dev, &place[r]);
	farswap_resubmit_held(held);
}

/* Put a chunk back on its placements as they are and release held I/O. */
static void farswap_migrate_abort(struct farswap_dev *dev,
				  struct farswap_chunk *chunk)
{
	struct farswap_placement place[FARSWAP_MAX_REPLICAS];
	unsigned long flags;
	unsigned int n;
	LIST_HEAD(held);

	spin_lock_irqsave(&chunk->lock, flags);
	n = farswap_chunk_settle_locked(dev, chunk, &held, place);
	spin_unlock_irqrestore(&chunk->lock, flags);
	farswap_chunk_settled(dev, place, n, &held);
}

/* Remove placement @r of a chunk, keeping the others' current bits. */
static void farswap_chunk_remove_locked(struct farswap_chunk *chunk,
					unsigned int r)
{
	u8 low = chunk->uptodate & (BIT(r) - 1);
	u8 high = (chunk->uptodate >> (r + 1)) << r;

	lockdep_assert_held(&chunk->lock);
	memmove(&chunk->place[r], &chunk->place[r + 1],
		(chunk->nr_places - r - 1) * sizeof(chunk->place[0]));
	chunk->nr_places--;
	memset(&chunk->place[chunk->nr_places], 0, sizeof(chunk->place[0]));
	chunk->uptodate = low | high;
}

/* Does another live up-to-date copy than place[@r] serve the chunk? */
static bool farswap_other_copies_locked(const struct farswap_chunk *chunk,
					unsigned int r)
{
	struct farswap_replica_set set;

	farswap_chunk_replicas_locked(chunk, &set);
	return farswap_replica_others_serve(&set, r);
}

/* A live, up-to-date placement to copy the chunk from, or -1. */
static int farswap_chunk_source_locked(const struct farswap_chunk *chunk)
{
	struct farswap_replica_set set;

	farswap_chunk_replicas_locked(chunk, &set);
	return farswap_replica_source(&set);
}

/* Is @p still one of the chunk's live, up-to-date placements? */
static bool farswap_chunk_serves_locked(const struct farswap_chunk *chunk,
					const struct farswap_placement *p)
{
	int r = farswap_chunk_place_locked(chunk, p);
	struct farswap_replica_set set;

	if (r < 0)
		return false;
	farswap_chunk_replicas_locked(chunk, &set);
	return farswap_replica_serves(&set, r);
}

/* The chunk's placement in @rs, or -1. */
static int farswap_chunk_find_locked(const struct farswap_chunk *chunk,
				     const struct farswap_rslab *rs)
{
	unsigned int r;

	for (r = 0; r < chunk->nr_places; r++)
		if (chunk->place[r].rslab == rs)
			return r;
	return -1;
}

/*
 * Hold the chunk's writes: called in the same locked section that found
 * the chunk BOUND with the placement to copy, so that a discard cannot
 * let the chunk go in between (a MIGRATING chunk is not released).
 */
static void farswap_hold_writes_locked(struct farswap_chunk *chunk)
{
	lockdep_assert_held(&chunk->lock);
	chunk->state = FARSWAP_CHUNK_MIGRATING;
}

/*
 * Wait for the writes in flight when the chunk's writes were held, so
 * that a copy of it is consistent.  Returns false, the chunk's writes
 * let go again, if they do not land in time.
 */
static bool farswap_wait_writes(struct farswap_dev *dev,
				struct farswap_chunk *chunk)
{
	unsigned long tmo = msecs_to_jiffies(dev->params.io_timeout_ms);

	if (wait_var_event_timeout(&chunk->inflight_writes,
				   !atomic_read(&chunk->inflight_writes), tmo))
		return true;
	farswap_migrate_abort(dev, chunk);
	return false;
}

/**
 * farswap_migrate_chunk - move a chunk's replica out of a slab
 * @dev: the device
 * @chunk: a chunk that was placed in @rs
 * @rs: the slab its donor reclaims, or (with @spread) a slab in a failure
 *	domain that holds another replica of the chunk
 * @spread: the replica moves only to a domain that holds no copy of the
 *	chunk, and stays where it is when none has room (the slab is not
 *	wanted back: only the chunk's copies are to be spread)
 *
 * Writes are held from the start, so the copy is consistent; reads go on
 * until the switch, when everything is held until the reads in flight
 * finish.  A chunk with no page in use simply lets go of the slot, and so
 * does a replica that is not current (the repair work copies the chunk
 * afresh); one that a discard let go since the caller looked has nothing
 * to move.
 *
 * Return: 0, or a negative error when the chunk stays where it is.
 */
static int farswap_migrate_chunk(struct farswap_dev *dev,
				 struct farswap_chunk *chunk,
				 struct farswap_rslab *rs, bool spread)
{
	u32 index = farswap_chunk_index(dev, chunk);
	struct farswap_placement from, to = {};
	unsigned long flags, exclude, avoid;
	struct farswap_placement gone[FARSWAP_MAX_REPLICAS];
	bool empty, uptodate, others, given_up = false;
	unsigned int n;
	LIST_HEAD(held);
	int r, ret = 0;

	spin_lock_irqsave(&chunk->lock, flags);
	r = farswap_chunk_find_locked(chunk, rs);
	if (r < 0) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	if (chunk->state != FARSWAP_CHUNK_BOUND) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return -EBUSY;
	}
	from = chunk->place[r];
	uptodate = chunk->uptodate & BIT(r);
	exclude = farswap_chunk_donors(chunk);
	/*
	 * The moving replica leaves its domain: only the others' count.
	 * Spreading avoids its own too (that is where another copy is).
	 */
	avoid = farswap_chunk_domains(chunk, spread ? -1 : r);
	farswap_hold_writes_locked(chunk);
	spin_unlock_irqrestore(&chunk->lock, flags);

	/* Writes posted before MIGRATING must land before the copy. */
	if (!farswap_wait_writes(dev, chunk))
		return -ETIMEDOUT;

	spin_lock_irqsave(&chunk->lock, flags);
	empty = (!chunk->pages.used && !chunk->pages.nr_lost) || !uptodate;
	others = farswap_other_copies_locked(chunk, r);
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (spread && empty) {
		/* Nothing worth a copy: it stays, and binds as it comes. */
		farswap_migrate_abort(dev, chunk);
		return 0;
	}
	if (spread) {
		ret = farswap_take_slot_outside(dev, exclude, avoid, &to);
	} else if (!empty) {
		ret = farswap_take_slot_any(dev, exclude, avoid, &to);
		/*
		 * No donor without a copy of the chunk has room: the donor
		 * gets its memory back all the same when another copy
		 * serves, and the chunk is repaired when room comes.
		 */
		if (ret && others) {
			empty = true;
			uptodate = false;
			given_up = true;
			ret = 0;
		}
	}
	if (!empty) {
		if (ret) {
			farswap_migrate_abort(dev, chunk);
			return ret;
		}
		ret = farswap_copy_chunk(dev, chunk, &from, &to);
		if (ret) {
			farswap_put_slot(dev, &to);
			farswap_migrate_abort(dev, chunk);
			return ret;
		}
	}

	farswap_copy_pause(dev);
	/* Switch: hold all I/O until reads of the old copy have finished. */
	spin_lock_irqsave(&chunk->lock, flags);
	chunk->state = FARSWAP_CHUNK_SWITCHING;
	spin_unlock_irqrestore(&chunk->lock, flags);
	wait_var_event(&chunk->inflight_reads,
		       !atomic_read(&chunk->inflight_reads));

	spin_lock_irqsave(&chunk->lock, flags);
	/* Writes were held: the placements are as they were. */
	r = farswap_chunk_find_locked(chunk, rs);
	/*
	 * What was true before the copy and its waits may not be now: the
	 * other copy that let this one go with nowhere to move it may have
	 * died, and so may the new one.  Then the chunk keeps its replica
	 * here, and the donor hears that it could not move.
	 */
	if (r < 0 || (given_up && !farswap_other_copies_locked(chunk, r)) ||
	    (!empty && !farswap_place_live(&to))) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (!empty)
			farswap_put_slot(dev, &to);
		farswap_migrate_abort(dev, chunk);
		return r < 0 ? -ENOENT : -ENOLINK;
	}
	if (given_up)
		farswap_dev_pr_info_ratelimited(dev, "chunk %u gives its replica on donor %s back with nowhere to move it: one replica fewer until repaired\n",
						index, from.donor->name);
	if (empty) {
		/* Nothing to move: let go; held writes rebind it. */
		farswap_chunk_remove_locked(chunk, r);
	} else {
		/* The copy holds what the old one held, damage included. */
		to.damage = chunk->place[r].damage;
		chunk->place[r] = to;
		/*
		 * Counted under the lock the colocated count is read under:
		 * a reader that sees the chunk spread sees it counted.
		 */
		atomic64_inc(spread ? &dev->stats.spread :
				      &dev->stats.migrations);
	}
	n = farswap_chunk_settle_locked(dev, chunk, &held, gone);
	spin_unlock_irqrestore(&chunk->lock, flags);

	/*
	 * The reclaiming slab loses the chunk; it is not given back here.
	 * A slab a spread empties is, as any emptied one.
	 */
	if (spread)
		farswap_put_slot(dev, &from);
	else
		farswap_slot_drop(dev, &from);

	if (spread) {
		farswap_dev_pr_debug(dev, "chunk %u: a replica moved from donor %s to %s, out of a failure domain it shared\n",
				     index, from.donor->name, to.donor->name);
	} else if (!empty) {
		farswap_dev_pr_debug(dev, "chunk %u moved from donor %s to %s\n",
				     index, from.donor->name, to.donor->name);
	} else if (!uptodate) {
		queue_work(dev->wq, &dev->repair_work);
	}
	farswap_chunk_settled(dev, gone, n, &held);
	return 0;
}

/*
 * Re-replication
 */

/*
 * A BOUND chunk the repair copies to a new replica now: fewer serve than
 * the live donors allow, but one to copy from.
 */
static bool farswap_chunk_wants_copy_locked(struct farswap_dev *dev,
					    const struct farswap_chunk *chunk)
{
	struct farswap_replica_set set;

	if (chunk->state != FARSWAP_CHUNK_BOUND)
		return false;
	farswap_chunk_replicas_locked(chunk, &set);
	return farswap_replica_wants_copy(&set, farswap_replicas_possible(dev));
}

/* One damaged page of one copy, and the copy to rewrite it from. */
struct farswap_page_fix {
	struct farswap_placement bad, good;
	u32 page;
};

/*
 * The chunk's damaged pages that another copy holds intact, at most @max:
 * the fixes the repair can make.
 */
static unsigned int farswap_page_fixes_locked(const struct farswap_chunk *chunk,
					      struct farswap_page_fix *fix,
					      unsigned int max)
{
	struct farswap_replica_set set;
	unsigned int r, i, k, n = 0;

	farswap_chunk_replicas_locked(chunk, &set);
	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_damage *d = &chunk->place[r].damage;

		if (!(chunk->uptodate & BIT(r)))
			continue;
		for (i = 0; i < d->nr && n < max; i++) {
			for (k = 0; k < chunk->nr_places; k++) {
				const struct farswap_placement *p =
					&chunk->place[k];

				if (k == r || !farswap_replica_serves(&set, k) ||
				    farswap_damage_any(&p->damage, d->page[i], 1))
					continue;
				fix[n].bad = chunk->place[r];
				fix[n].good = *p;
				fix[n].page = d->page[i];
				n++;
				break;
			}
		}
	}
	return n;
}

/* Rewrite one damaged page from the copy that holds it intact. */
static int farswap_fix_page(struct farswap_dev *dev,
			    struct farswap_chunk *chunk,
			    const struct farswap_page_fix *fix)
{
	u64 off = (u64)fix->page << FARSWAP_PAGE_SHIFT;
	unsigned long flags;
	int r, ret;

	if (!farswap_place_live(&fix->good) || !farswap_place_live(&fix->bad))
		return -ENOLINK;
	ret = farswap_rdma_sync(fix->good.donor, false, dev->bounce,
				FARSWAP_PAGE_BYTES, fix->good.addr + off,
				fix->good.rkey, fix->good.gen);
	if (ret)
		return ret;
	ret = farswap_rdma_sync(fix->bad.donor, true, dev->bounce,
				FARSWAP_PAGE_BYTES, fix->bad.addr + off,
				fix->bad.rkey, fix->bad.gen);
	if (ret)
		return ret;
	spin_lock_irqsave(&chunk->lock, flags);
	r = farswap_chunk_place_locked(chunk, &fix->bad);
	if (r >= 0)
		farswap_damage_clear(&chunk->place[r].damage, fix->page, 1);
	spin_unlock_irqrestore(&chunk->lock, flags);
	atomic64_inc(&dev->stats.healed_pages);
	return 0;
}

/*
 * Rewrite a chunk's damaged pages from the copies that hold them intact,
 * a page at a time: a few flipped bits cost a few pages of traffic, not
 * a copy of the whole chunk.  The chunk's writes are held (a write that
 * came first made its pages intact already); it settles at the end.
 *
 * Return: bytes rewritten, or a negative error.
 */
static long farswap_heal_pages(struct farswap_dev *dev,
			       struct farswap_chunk *chunk)
{
	/* Each fix clears a noted page: a bound on the rounds. */
	unsigned int rounds = FARSWAP_MAX_REPLICAS * FARSWAP_DAMAGE_MAX;
	struct farswap_placement gone[FARSWAP_MAX_REPLICAS];
	struct farswap_page_fix fix[4];
	unsigned int nr, i, n;
	unsigned long flags;
	LIST_HEAD(held);
	long bytes = 0;
	int ret = 0;

	while (!ret && rounds--) {
		spin_lock_irqsave(&chunk->lock, flags);
		nr = farswap_page_fixes_locked(chunk, fix, ARRAY_SIZE(fix));
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (!nr)
			break;
		for (i = 0; i < nr && !ret; i++) {
			ret = farswap_fix_page(dev, chunk, &fix[i]);
			if (!ret)
				bytes += FARSWAP_PAGE_BYTES;
		}
	}

	spin_lock_irqsave(&chunk->lock, flags);
	n = farswap_chunk_settle_locked(dev, chunk, &held, gone);
	spin_unlock_irqrestore(&chunk->lock, flags);
	farswap_chunk_settled(dev, gone, n, &held);
	return ret ?: bytes;
}

/*
 * Copy one degraded chunk to a new replica: a stale one is dropped and a
 * slot on a donor that holds no copy of the chunk takes its place.
 * Writes are held during the copy (as for a reclaim move); reads go on
 * from the current replicas.
 *
 * Return: bytes copied (0 if nothing was to be done), or a negative error.
 */
static long farswap_repair_chunk(struct farswap_dev *dev,
				 struct farswap_chunk *chunk)
{
	struct farswap_placement src, to = {};
	struct farswap_placement stale[FARSWAP_MAX_REPLICAS];
	struct farswap_placement gone[FARSWAP_MAX_REPLICAS];
	unsigned int nr_stale = 0, r, n;
	unsigned long flags, exclude, avoid;
	LIST_HEAD(held);
	bool wants_copy;
	long bytes;
	int s, ret;

	spin_lock_irqsave(&chunk->lock, flags);
	wants_copy = farswap_chunk_wants_copy_locked(dev, chunk);
	if (!wants_copy && !farswap_chunk_damaged_locked(chunk)) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	farswap_hold_writes_locked(chunk);
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (!farswap_wait_writes(dev, chunk))
		return -ETIMEDOUT;
	/* As many copies as it can have: only damaged pages to rewrite. */
	if (!wants_copy)
		return farswap_heal_pages(dev, chunk);

	spin_lock_irqsave(&chunk->lock, flags);
	/*
	 * The source is chosen now that writes are held: reads went on
	 * while they drained, and one that failed its check may have made
	 * a copy stale (farswap_heal()).
	 */
	s = farswap_chunk_source_locked(chunk);
	if (s < 0) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		farswap_migrate_abort(dev, chunk);
		return 0;
	}
	src = chunk->place[s];
	/* Stale copies go: the new one replaces them. */
	for (r = chunk->nr_places; r-- > 0;) {
		if (chunk->uptodate & BIT(r))
			continue;
		stale[nr_stale++] = chunk->place[r];
		farswap_chunk_remove_locked(chunk, r);
	}
	exclude = farswap_chunk_donors(chunk);
	/* The new replica goes to a domain holding no copy when it can. */
	avoid = farswap_chunk_domains(chunk, -1);
	bytes = (long)chunk->pages.used << FARSWAP_PAGE_SHIFT;
	spin_unlock_irqrestore(&chunk->lock, flags);
	for (r = 0; r < nr_stale; r++)
		farswap_slot_drop(dev, &stale[r]);

	ret = farswap_take_slot_any(dev, exclude, avoid, &to);
	if (!ret) {
		ret = farswap_copy_chunk(dev, chunk, &src, &to);
		if (ret)
			farswap_put_slot(dev, &to);
	}

	spin_lock_irqsave(&chunk->lock, flags);
	/*
	 * A read from the source may have failed its check during the copy:
	 * then so may the copy, and it is not a replica.  The next pass
	 * copies from another one.
	 */
	if (!ret && (!farswap_chunk_serves_locked(chunk, &src) ||
		     !farswap_place_live(&to) ||
		     chunk->nr_places >= FARSWAP_MAX_REPLICAS))
		ret = -EAGAIN;
	if (!ret) {
		/*
		 * It holds what its source held, damage included: as the
		 * chunk notes it now, reads during the copy may have added
		 * pages.
		 */
		to.damage = src.damage;
		s = farswap_chunk_place_locked(chunk, &src);
		if (s >= 0)
			to.damage = chunk->place[s].damage;
		chunk->place[chunk->nr_places] = to;
		chunk->uptodate |= BIT(chunk->nr_places);
		chunk->nr_places++;
	}
	n = farswap_chunk_settle_locked(dev, chunk, &held, gone);
	spin_unlock_irqrestore(&chunk->lock, flags);
	if (ret == -EAGAIN) {
		farswap_put_slot(dev, &to);
		queue_work(dev->wq, &dev->repair_work);
	}
	farswap_chunk_settled(dev, gone, n, &held);
	return ret ?: bytes;
}

/*
 * A chunk with two replicas in one failure domain (bound so when no other
 * domain had room, or while a domain was away) moves one of them to a
 * domain that holds no copy, as soon as a live donor there has room: the
 * loss of one domain must not take every copy.  The replica that moves
 * is the last one placed in a shared domain.
 *
 * Return: bytes copied (0 if nothing was to be done), or a negative error.
 */
static long farswap_spread_chunk(struct farswap_dev *dev,
				 struct farswap_chunk *chunk)
{
	struct farswap_rslab *rs = NULL;
	unsigned long flags, exclude, avoid, seen = 0;
	struct farswap_replica_set set;
	unsigned int r;
	long bytes;
	int ret;

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->state != FARSWAP_CHUNK_BOUND || !chunk->pages.used ||
	    !farswap_chunk_colocated_locked(chunk)) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	/* Dead copies are the loss work's; stale ones the repair's. */
	farswap_chunk_replicas_locked(chunk, &set);
	if (!farswap_replica_all_serve(&set)) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_placement *p = &chunk->place[r];
		unsigned long dom = BIT(farswap_donor_dom(p->donor));

		if (seen & dom)
			rs = p->rslab;
		seen |= dom;
	}
	exclude = farswap_chunk_donors(chunk);
	avoid = farswap_chunk_domains(chunk, -1);
	bytes = (long)chunk->pages.used << FARSWAP_PAGE_SHIFT;
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (!rs || !farswap_room_outside(dev, exclude, avoid))
		return 0;
	ret = farswap_migrate_chunk(dev, chunk, rs, true);
	return ret ?: bytes;
}

/* Sleep what @bytes of copying may take at repair_kbps (0: no limit). */
static void farswap_repair_pace(struct farswap_dev *dev, long bytes)
{
	unsigned int kbps = READ_ONCE(dev->params.repair_kbps);

	if (kbps)
		msleep(div_u64((u64)bytes * 1000, (u64)kbps << 10));
	cond_resched();
}

/*
 * Copy every degraded chunk to new replicas, a chunk at a time, at most
 * repair_kbps (so that swap-ins sharing the link stay fast).  A chunk
 * that cannot be repaired now (no donor with room) is tried again when
 * something changes (a donor comes back, a slab is granted).  Then, if
 * every repair could be made, chunks whose copies share a failure domain
 * spread out (farswap_spread_chunk()), at the same rate.
 */
void farswap_repair_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       repair_work);
	unsigned int noio = memalloc_noio_save();
	u32 i, failed = 0;

	for (i = 0; i < dev->geo.nr_chunks; i++) {
		long bytes;

		mutex_lock(&dev->map_mutex);
		bytes = farswap_repair_chunk(dev, &dev->chunks[i]);
		mutex_unlock(&dev->map_mutex);
		if (bytes < 0) {
			atomic64_inc(&dev->stats.repair_failures);
			/* Out of room or donors: the next change retries. */
			if (++failed >= 8)
				break;
			continue;
		}
		if (!bytes)
			continue;
		atomic64_inc(&dev->stats.repaired);
		atomic64_add(bytes, &dev->stats.repair_bytes);
		farswap_repair_pace(dev, bytes);
	}
	/* Then chunks whose copies share a domain, while room lasts. */
	for (i = 0; i < dev->geo.nr_chunks && !failed; i++) {
		long bytes;

		mutex_lock(&dev->map_mutex);
		bytes = farswap_spread_chunk(dev, &dev->chunks[i]);
		mutex_unlock(&dev->map_mutex);
		if (bytes < 0)
			break;	/* out of room: the next change retries */
		if (!bytes)
			continue;
		atomic64_add(bytes, &dev->stats.repair_bytes);
		farswap_repair_pace(dev, bytes);
	}
	memalloc_noio_restore(noio);
}

/*
 * Move every chunk out of the slab a donor reclaims.  Chunks already
 * moved stay moved even if a later one cannot move: nothing is lost, and
 * the donor asks again.
 */
static int farswap_reclaim_one(struct farswap_dev *dev,
			       struct farswap_donor *donor,
			       const struct farswap_reclaim_item *item)
{
	struct farswap_rslab *rs = NULL, *it;
	u32 moved = 0, i, left;
	unsigned long flags;
	bool revoked;
	int ret = 0;

	mutex_lock(&dev->map_mutex);
	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(it, &dev->rslabs, node) {
		if (it->donor == donor && it->gen == item->gen &&
		    it->remote_id == item->remote_id &&
		    it->state == FARSWAP_RSLAB_LIVE) {
			rs = it;
			rs->state = FARSWAP_RSLAB_RECLAIMING;
			if (dev->cur_rslab == rs)
				dev->cur_rslab = NULL;
			break;
		}
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	if (!rs) {
		mutex_unlock(&dev->map_mutex);
		return FARSWAP_ST_NO_ENTRY;
	}

	for (i = 0; i < dev->geo.nr_chunks && !ret; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		bool here;

		/* Revoked meanwhile: the loss work drops what is left. */
		if (READ_ONCE(rs->state) == FARSWAP_RSLAB_REVOKED) {
			ret = -ENOLINK;
			break;
		}

		spin_lock_irqsave(&chunk->lock, flags);
		here = farswap_chunk_find_locked(chunk, rs) >= 0;
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (!here)
			continue;
		ret = farswap_migrate_chunk(dev, chunk, rs, false);
		if (!ret)
			moved++;
	}

	spin_lock_irqsave(&dev->rslab_lock, flags);
	left = rs->slots.used;
	revoked = rs->state == FARSWAP_RSLAB_REVOKED;
	if (!left) {
		list_del(&rs->node);
		dev->nr_rslabs--;
	} else if (!revoked) {
		rs->state = FARSWAP_RSLAB_LIVE;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	mutex_unlock(&dev->map_mutex);

	if (left && revoked) {
		/* The loss work retires it, and drops the chunks left there. */
		farswap_donor_pr_warn(donor, " revoked its slab %u while its chunks moved: %u moved, %u left there\n",
				      item->remote_id, moved, left);
		return FARSWAP_ST_NO_SPACE;
	}
	if (left) {
		farswap_donor_pr_warn(donor, " reclaims its slab %u, but %u of its chunks could not move (%d): keeping it\n",
				      item->remote_id, left, ret);
		return FARSWAP_ST_NO_SPACE;
	}
	atomic64_inc(&donor->stats.migrated_out);
	farswap_donor_pr_info(donor, " took back its slab %u: %u chunks moved to other donors\n",
			      item->remote_id, moved);
	/* The donor frees it on our answer: no SLAB_FREE_REQ. */
	farswap_rslab_free(dev, rs);
	return FARSWAP_ST_OK;
}

void farswap_reclaim_enqueue(struct farswap_donor *donor,
			     const struct farswap_reclaim_req *req)
{
	struct farswap_reclaim_item item = {
		.remote_id = le32_to_cpu(req->slab_id),
		.deadline_ms = le32_to_cpu(req->deadline_ms),
		.cookie = le64_to_cpu(req->hdr.cookie),
		.gen = READ_ONCE(donor->gen),
	};
	unsigned long flags;
	bool queued;

	spin_lock_irqsave(&donor->reclaim_lock, flags);
	if (donor->stopping) {
		/* Detaching: the session and every slab in it end anyway. */
		spin_unlock_irqrestore(&donor->reclaim_lock, flags);
		return;
	}
	queued = kfifo_put(&donor->reclaim, item);
	spin_unlock_irqrestore(&donor->reclaim_lock, flags);

	if (queued)
		queue_work(donor->dev->wq, &donor->reclaim_work);
	else
		farswap_donor_pr_warn_ratelimited(donor, " sent more reclaim requests than the protocol allows; ignoring one\n");
}

static bool farswap_reclaim_pop(struct farswap_donor *donor,
				struct farswap_reclaim_item *item)
{
	return kfifo_out_spinlocked(&donor->reclaim, item, 1,
				    &donor->reclaim_lock);
}

static bool farswap_rslab_held(struct farswap_dev *dev,
			       struct farswap_donor *donor, u32 gen,
			       u32 remote_id)
{
	struct farswap_rslab *rs;
	unsigned long flags;
	bool held = false;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(rs, &dev->rslabs, node)
		held |= rs->donor == donor && rs->gen == gen &&
			rs->remote_id == remote_id;
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	return held;
}

/* A slab granted after its request timed out: the reclaim work frees it. */
void farswap_late_grant(struct farswap_donor *donor, u32 slab_id)
{
	u32 gen = READ_ONCE(donor->gen);
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&donor->reclaim_lock, flags);
	if (donor->late_gen != gen)
		donor->nr_late_grants = 0;
	donor->late_gen = gen;
	if (!donor->stopping &&
	    donor->nr_late_grants < ARRAY_SIZE(donor->late_grant)) {
		donor->late_grant[donor->nr_late_grants++] = slab_id;
		queued = true;
	}
	spin_unlock_irqrestore(&donor->reclaim_lock, flags);
	if (queued)
		queue_work(donor->dev->wq, &donor->reclaim_work);
}

/* A slab granted after its request timed out: give it straight back. */
static bool farswap_late_grant_pop(struct farswap_donor *donor, u32 *slab_id,
				   u32 *gen)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&donor->reclaim_lock, flags);
	if (donor->nr_late_grants) {
		*slab_id = donor->late_grant[--donor->nr_late_grants];
		*gen = donor->late_gen;
		got = true;
	}
	spin_unlock_irqrestore(&donor->reclaim_lock, flags);
	return got;
}

void farswap_reclaim_work(struct work_struct *work)
{
	struct farswap_donor *donor = container_of(work, struct farswap_donor,
						   reclaim_work);
	struct farswap_dev *dev = donor->dev;
	struct farswap_reclaim_item item;
	unsigned int noio = memalloc_noio_save();
	u32 slab_id, gen;

	while (farswap_late_grant_pop(donor, &slab_id, &gen)) {
		/* A session that ended freed it already. */
		if (!farswap_donor_live(donor, gen))
			continue;
		/* A donor repeating a grant we hold must not make us drop it. */
		if (farswap_rslab_held(dev, donor, gen, slab_id)) {
			farswap_donor_pr_warn_ratelimited(donor, " repeated the grant of slab %u, which this host holds: ignored\n",
							  slab_id);
			continue;
		}
		farswap_donor_pr_info(donor, " granted slab %u after the request timed out: giving it back\n",
				      slab_id);
		farswap_donor_free_slab(donor, slab_id);
	}

	while (farswap_reclaim_pop(donor, &item)) {
		union farswap_msg rep;
		int st;

		farswap_donor_pr_info(donor, " reclaims its slab %u (deadline %u ms)\n",
				      item.remote_id, item.deadline_ms);
		st = farswap_reclaim_one(dev, donor, &item);

		/* The answer only means something to the session that asked. */
		if (!farswap_donor_live(donor, item.gen))
			continue;
		farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, donor->version,
				 item.cookie);
		rep.reclaim_rep.status = cpu_to_le16(st);
		rep.reclaim_rep.slab_id = cpu_to_le32(item.remote_id);
		farswap_ctrl_send(donor, &rep);
	}
	memalloc_noio_restore(noio);
}

static void farswap_sync_put(struct farswap_donor *donor)
{
	if (atomic_dec_and_test(&donor->sync_inflight))
		wake_up_var(&donor->sync_inflight);
}

struct farswap_sync_op {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void farswap_sync_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_sync_op *op =
		container_of(wc->wr_cqe, struct farswap_sync_op, cqe);
	struct farswap_queue *q = cq->cq_context;

	WRITE_ONCE(q->last_progress, jiffies);
	op->status = wc->status;
	complete(&op->done);
}

/**
 * farswap_rdma_sync - one RDMA READ or WRITE of a kernel buffer, waited for
 * @donor: where the remote memory is
 * @write: WRITE (else READ)
 * @buf: physically contiguous kernel buffer
 * @len: bytes
 * @remote_addr: remote address
 * @rkey: remote key
 * @gen: the session @rkey belongs to
 *
 * Used to copy chunks between donors.  Posts on the first I/O queue, whose
 * send queue keeps FARSWAP_SQ_RESERVE entries for this.
 */
int farswap_rdma_sync(struct farswap_donor *donor, bool write, void *buf,
		      size_t len, u64 remote_addr, u32 rkey, u32 gen)
{
	enum dma_data_direction dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	unsigned int tmo = donor->dev->params.io_timeout_ms;
	struct farswap_sync_op op = { .cqe.done = farswap_sync_done };
	struct farswap_queue *q;
	struct ib_rdma_wr wr = {};
	struct ib_device *ibdev;
	struct ib_sge sge;
	u64 dma;
	int ret;

	init_completion(&op.done);
	rcu_read_lock();
	if (!farswap_donor_live(donor, gen)) {
		rcu_read_unlock();
		return -ENOTCONN;
	}
	ibdev = donor->ibdev;
	dma = ib_dma_map_single(ibdev, buf, len, dir);
	if (ib_dma_mapping_error(ibdev, dma)) {
		rcu_read_unlock();
		return -ENOMEM;
	}
	/* The teardown waits for us to unmap before it lets @ibdev go. */
	atomic_inc(&donor->sync_inflight);
	sge.addr = dma;
	sge.length = len;
	sge.lkey = donor->pd->local_dma_lkey;
	wr.wr.wr_cqe = &op.cqe;
	wr.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = remote_addr;
	wr.rkey = rkey;
	q = &donor->ioq[0];
	WRITE_ONCE(q->last_progress, jiffies);
	ret = ib_post_send(q->qp, &wr.wr, NULL);
	rcu_read_unlock();
	if (ret) {
		ib_dma_unmap_single(ibdev, dma, len, dir);
		farswap_sync_put(donor);
		farswap_donor_error(donor, "posting a chunk copy failed");
		return ret;
	}

	/* As for requests: fail the donor only if its queue stalled. */
	while (!wait_for_completion_timeout(&op.done, msecs_to_jiffies(tmo))) {
		if (time_before(jiffies, READ_ONCE(q->last_progress) +
				msecs_to_jiffies(tmo)))
			continue;
		/*
		 * A failed (or detaching) donor's teardown flushes it; the
		 * stack frame must outlive it.  The teardown runs on a
		 * workqueue of its own, so this wait cannot block it.
		 */
		farswap_donor_error(donor, "chunk copy stalled");
		wait_for_completion(&op.done);
		break;
	}
	ib_dma_unmap_single(ibdev, dma, len, dir);
	farswap_sync_put(donor);
	return op.status == IB_WC_SUCCESS ? 0 : -EIO;
}
