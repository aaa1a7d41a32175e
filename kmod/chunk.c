// SPDX-License-Identifier: GPL-2.0
/*
 * The chunk table: binding a chunk on its first write, letting go of a
 * chunk with nothing in it, unbinding the chunks of a donor that died
 * and of a slab its donor revoked.  The slabs and their slots are
 * rslab.c's; moving a chunk between donors is move.c's.
 *
 * The work items of the chunk map (here, in rslab.c and in move.c) run on
 * the device's WQ_MEM_RECLAIM workqueue (they sit in the swap-out path)
 * under dev->map_mutex, with memalloc_noio so nothing they allocate
 * recurses into swap.
 */
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "farswap.h"
#include "log.h"

int farswap_chunks_alloc(struct farswap_dev *dev)
{
	u32 i;

	/* Everything up front: the swap-out path must not allocate. */
	dev->chunks = kvcalloc(dev->geo.nr_chunks, sizeof(*dev->chunks),
			       GFP_KERNEL);
	if (!dev->chunks)
		return -ENOMEM;
	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];

		spin_lock_init(&chunk->lock);
		INIT_LIST_HEAD(&chunk->held);
		INIT_LIST_HEAD(&chunk->staged);
		INIT_LIST_HEAD(&chunk->stage_wait);
		INIT_LIST_HEAD(&chunk->bind_node);
		chunk->pages.nr_pages = FARSWAP_CHUNK_PAGES;
		chunk->pages.written = chunk->written;
		chunk->pages.lost = chunk->lost;
	}
	return 0;
}

/*
 * Only at detach: the sessions' end frees every slab on the donors.  The
 * chunks' slots go first, so that retired slabs still pointed at by
 * chunks are freed with their last slot.
 */
void farswap_chunks_free(struct farswap_dev *dev)
{
	struct farswap_rslab *rs, *next;
	u32 i, r;

	for (i = 0; dev->chunks && i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];

		for (r = 0; r < chunk->nr_places; r++)
			farswap_slot_drop(dev, &chunk->place[r]);
		chunk->nr_places = 0;
	}
	list_for_each_entry_safe(rs, next, &dev->rslabs, node) {
		list_del(&rs->node);
		farswap_rslab_free(dev, rs);
	}
	kvfree(dev->chunks);
	dev->chunks = NULL;
}

u32 farswap_chunk_index(struct farswap_dev *dev,
			struct farswap_chunk *chunk)
{
	return chunk - dev->chunks;
}

void farswap_chunk_queue_bind(struct farswap_dev *dev,
			      struct farswap_chunk *chunk)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->work_lock, flags);
	if (list_empty(&chunk->bind_node))
		list_add_tail(&chunk->bind_node, &dev->bind_list);
	spin_unlock_irqrestore(&dev->work_lock, flags);
	queue_work(dev->wq, &dev->bind_work);
}

static struct farswap_chunk *farswap_pop_bind(struct farswap_dev *dev)
{
	struct farswap_chunk *chunk;

	spin_lock_irq(&dev->work_lock);
	chunk = list_first_entry_or_null(&dev->bind_list,
					 struct farswap_chunk, bind_node);
	if (chunk)
		list_del_init(&chunk->bind_node);
	spin_unlock_irq(&dev->work_lock);
	return chunk;
}

/* The donors holding the chunk's placements, a bit per donor index. */
unsigned long farswap_chunk_donors(const struct farswap_chunk *chunk)
{
	unsigned long mask = 0;
	unsigned int r;

	for (r = 0; r < chunk->nr_places; r++)
		mask |= BIT(chunk->place[r].donor->index);
	return mask;
}

/*
 * The failure domains of the chunk's placements but placement @skip (-1:
 * none), a bit per domain number.
 */
unsigned long farswap_chunk_domains(const struct farswap_chunk *chunk,
				    int skip)
{
	unsigned long mask = 0;
	unsigned int r;

	for (r = 0; r < chunk->nr_places; r++)
		if ((int)r != skip)
			mask |= BIT(farswap_donor_dom(chunk->place[r].donor));
	return mask;
}

/* Do two of a bound chunk's placements share a failure domain? */
bool farswap_chunk_colocated_locked(const struct farswap_chunk *chunk)
{
	u8 dom[FARSWAP_MAX_REPLICAS];
	unsigned int r;

	lockdep_assert_held(&chunk->lock);
	/*
	 * A chunk being moved keeps its placements until the switch, which
	 * counts the spread under this lock: counted here until then, a
	 * reader never sees a chunk neither colocated nor spread.
	 */
	if (chunk->state != FARSWAP_CHUNK_BOUND &&
	    chunk->state != FARSWAP_CHUNK_MIGRATING &&
	    chunk->state != FARSWAP_CHUNK_SWITCHING)
		return false;
	for (r = 0; r < chunk->nr_places; r++)
		dom[r] = farswap_donor_dom(chunk->place[r].donor);
	return farswap_pick_colocated(dom, chunk->nr_places);
}

/*
 * Bind a chunk that holds no data to free slots of held slabs, on
 * distinct donors, up to the device's replicas.  Each replica goes to a
 * failure domain the chunk has no replica in yet; to one it has only with
 * @any (for the first replica added: the caller was just granted a slab
 * after asking the other domains first), or when no live donor of another
 * domain has room to ask for.
 * Never sleeps.
 */
void farswap_chunk_fill_locked(struct farswap_dev *dev,
			       struct farswap_chunk *chunk, bool any)
{
	lockdep_assert_held(&chunk->lock);
	while (chunk->nr_places < dev->params.replicas) {
		struct farswap_placement *p = &chunk->place[chunk->nr_places];
		unsigned long exclude = farswap_chunk_donors(chunk);
		unsigned long avoid = farswap_chunk_domains(chunk, -1);

		if (!farswap_take_slot(dev, exclude, avoid, p) &&
		    (!avoid ||
		     (!any && farswap_room_outside(dev, exclude, avoid)) ||
		     !farswap_take_slot(dev, exclude, 0, p)))
			break;
		/* No page written yet: an empty slot is a current copy. */
		chunk->uptodate |= BIT(chunk->nr_places);
		chunk->nr_places++;
		/* @any is for one replica: the slab just granted. */
		any = false;
	}
}

/* @place of the chunk missed a write or returned damage: not current. */
void farswap_chunk_stale_locked(struct farswap_dev *dev,
				struct farswap_chunk *chunk,
				const struct farswap_placement *place)
{
	int r = farswap_chunk_place_locked(chunk, place);

	if (r >= 0)
		chunk->uptodate &= ~BIT(r);
}

/*
 * Slots for the chunk's missing replicas, asking donors if need be: a
 * donor of a failure domain the chunk is not in yet first (held slabs,
 * then a new slab); one of a domain it is in only when none of those has
 * room.
 */
static int farswap_bind_fill(struct farswap_dev *dev,
			     struct farswap_chunk *chunk)
{
	unsigned int want = max(1U, farswap_replicas_possible(dev));
	unsigned long flags, exclude, avoid;
	bool any = false;
	int ret = 0;

	for (;;) {
		spin_lock_irqsave(&chunk->lock, flags);
		farswap_chunk_fill_locked(dev, chunk, any);
		exclude = farswap_chunk_donors(chunk);
		avoid = farswap_chunk_domains(chunk, -1);
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (hweight_long(exclude) >= want)
			return 0;
		/*
		 * Donors outside the chunk's domains are asked first; a slab
		 * granted inside them means none outside had room.
		 */
		ret = farswap_acquire_rslab(dev, exclude, avoid, !exclude);
		any = true;
		/* Fewer replicas than wanted: the repair work adds them. */
		if (ret)
			return exclude ? 0 : ret;
	}
}

static void farswap_bind_chunk(struct farswap_dev *dev,
			       struct farswap_chunk *chunk)
{
	u32 index = farswap_chunk_index(dev, chunk);
	unsigned long flags;
	bool bound = false;
	LIST_HEAD(held);
	int ret;

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->state != FARSWAP_CHUNK_BINDING) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&chunk->lock, flags);

	ret = farswap_bind_fill(dev, chunk);

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->nr_places) {
		chunk->state = FARSWAP_CHUNK_BOUND;
		bound = true;
	} else {
		chunk->state = FARSWAP_CHUNK_UNBOUND;
	}
	list_splice_init(&chunk->held, &held);
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (bound) {
		atomic64_inc(&dev->stats.binds);
		farswap_resubmit_held(&held);
		return;
	}
	atomic64_inc(&dev->stats.bind_failures);
	farswap_dev_pr_err_ratelimited(dev, "no donor could take chunk %u (%d): failing its writes\n",
				       index, ret);
	farswap_fail_held(&held, BLK_STS_IOERR);
}

void farswap_bind_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       bind_work);
	struct farswap_chunk *chunk;
	unsigned int noio = memalloc_noio_save();

	while ((chunk = farswap_pop_bind(dev))) {
		mutex_lock(&dev->map_mutex);
		farswap_bind_chunk(dev, chunk);
		mutex_unlock(&dev->map_mutex);
	}
	memalloc_noio_restore(noio);
}

/* Forget a chunk's placements; held writes then bind it afresh. */
static bool farswap_chunk_unbind_locked(struct farswap_chunk *chunk)
{
	lockdep_assert_held(&chunk->lock);
	memset(chunk->place, 0, sizeof(chunk->place));
	chunk->nr_places = 0;
	chunk->uptodate = 0;
	if (list_empty(&chunk->held)) {
		chunk->state = FARSWAP_CHUNK_UNBOUND;
		return false;
	}
	chunk->state = FARSWAP_CHUNK_BINDING;
	return true;
}

/**
 * farswap_chunk_release_locked - let go of a chunk with nothing in it
 * @dev: the device
 * @chunk: a chunk whose pages were all discarded, its lock held
 * @place: receives the placements to give back with farswap_put_slot()
 *
 * Return: how many placements the chunk let go of (call farswap_put_slot()
 * on each once the chunk lock is dropped); 0 if it is busy or still
 * holds something.  A staged write of the chunk keeps it (its slots are
 * where it goes): the write's end releases it (stage.c).
 */
unsigned int farswap_chunk_release_locked(struct farswap_dev *dev,
					  struct farswap_chunk *chunk,
					  struct farswap_placement *place)
{
	unsigned int n = chunk->nr_places;

	lockdep_assert_held(&chunk->lock);
	if (chunk->state != FARSWAP_CHUNK_BOUND || chunk->pages.used ||
	    chunk->pages.nr_lost || atomic_read(&chunk->inflight_reads) ||
	    atomic_read(&chunk->inflight_writes) || !list_empty(&chunk->held) ||
	    !list_empty(&chunk->staged))
		return 0;
	memcpy(place, chunk->place, n * sizeof(*place));
	farswap_chunk_unbind_locked(chunk);
	return n;
}

/*
 * A page damaged in a copy was served by another one; with that copy gone,
 * a page no surviving copy holds intact is lost alone, not with the rest
 * of the chunk.  Returns how many pages were lost.
 */
static u32 farswap_lose_damaged_locked(struct farswap_chunk *chunk)
{
	u32 lost = 0;
	unsigned int r, i, k;

	lockdep_assert_held(&chunk->lock);
	for (r = 0; r < chunk->nr_places; r++) {
		struct farswap_damage *d = &chunk->place[r].damage;

		for (i = 0; i < d->nr;) {
			u32 page = d->page[i];
			bool intact = false;

			for (k = 0; k < chunk->nr_places; k++)
				intact |= k != r &&
					  (chunk->uptodate & BIT(k)) &&
					  !farswap_damage_any(&chunk->place[k].damage,
							      page, 1);
			if (intact) {
				i++;
				continue;
			}
			lost += farswap_pages_lose_one(&chunk->pages, page);
			for (k = 0; k < chunk->nr_places; k++)
				farswap_damage_clear(&chunk->place[k].damage,
						     page, 1);
			/* d->page[i] now holds another page: look again. */
		}
	}
	return lost;
}

/*
 * Does the chunk's content wait for a donor to resume it: no live copy
 * holds every written page, but a suspended one does?  Then it keeps
 * every placement and its held I/O until the resume or the grace ends.
 */
static bool farswap_chunk_awaits_resume_locked(const struct farswap_chunk *chunk)
{
	bool suspended = false;
	unsigned int r;

	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_placement *p = &chunk->place[r];

		if (!(chunk->uptodate & BIT(r)))
			continue;
		if (farswap_place_live(p))
			return false;
		suspended |= farswap_place_suspended(p);
	}
	return suspended;
}

/*
 * A donor's session ended: every chunk placed in a dead session drops
 * that placement.  A chunk left with a current replica keeps serving from
 * it and is repaired (copied to a new replica) in the background; one
 * left with none loses its written pages (reads of them fail from now
 * on, never return other data) and is unbound; writes held on it bind it
 * to live donors.  The dead slabs are retired: the donor freed them with
 * the session.  A chunk whose last copy waits for its donor to come back
 * and resume it, and that slab, are left as they are (resume.c) until
 * the resume or its grace ends.
 *
 * Another donor may die while this runs: chunks scanned before it died
 * still point at its slabs, which are then retired but not freed; the
 * pass its teardown queues lets those chunks go, and the last one frees
 * the record.
 */
void farswap_loss_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       loss_work);
	u64 lost_pages[FARSWAP_MAX_DONORS] = {};
	u32 lost_slabs[FARSWAP_MAX_DONORS] = {};
	unsigned int noio = memalloc_noio_save();
	struct farswap_rslab *rs, *next;
	bool degraded = false;
	unsigned long flags;
	LIST_HEAD(dead);
	u32 i;

	mutex_lock(&dev->map_mutex);
	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		struct farswap_placement drop[FARSWAP_MAX_REPLICAS];
		unsigned int nr_drop = 0, r, k = 0;
		bool rebind = false;
		u8 uptodate = 0;
		LIST_HEAD(held);
		int donor = -1;

		spin_lock_irqsave(&chunk->lock, flags);
		if (chunk->state != FARSWAP_CHUNK_BOUND || !chunk->nr_places ||
		    farswap_chunk_awaits_resume_locked(chunk)) {
			spin_unlock_irqrestore(&chunk->lock, flags);
			continue;
		}
		for (r = 0; r < chunk->nr_places; r++) {
			struct farswap_placement *p = &chunk->place[r];

			if (farswap_place_live(p)) {
				if (chunk->uptodate & BIT(r))
					uptodate |= BIT(k);
				chunk->place[k++] = *p;
				continue;
			}
			drop[nr_drop++] = *p;
			if (chunk->uptodate & BIT(r))
				donor = p->donor->index;
		}
		if (!nr_drop && uptodate) {
			spin_unlock_irqrestore(&chunk->lock, flags);
			continue;
		}
		chunk->nr_places = k;
		chunk->uptodate = uptodate;
		if (uptodate && nr_drop) {
			u32 n = farswap_lose_damaged_locked(chunk);

			if (donor >= 0)
				lost_pages[donor] += n;
			else
				atomic64_add(n, &dev->stats.lost_pages);
		}
		if (!uptodate) {
			/* No copy of its pages is left. */
			if (donor >= 0)
				lost_pages[donor] +=
					farswap_pages_lose(&chunk->pages);
			else
				farswap_pages_lose(&chunk->pages);
			for (r = 0; r < k; r++)
				drop[nr_drop++] = chunk->place[r];
			rebind = farswap_chunk_unbind_locked(chunk);
		} else {
			/* Held behind the dead copies: go on with the rest. */
			list_splice_init(&chunk->held, &held);
			degraded = true;
		}
		spin_unlock_irqrestore(&chunk->lock, flags);

		for (r = 0; r < nr_drop; r++)
			farswap_slot_drop(dev, &drop[r]);
		if (rebind)
			farswap_chunk_queue_bind(dev, chunk);
		farswap_resubmit_held(&held);
	}

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry_safe(rs, next, &dev->rslabs, node) {
		if (farswap_donor_live(rs->donor, rs->gen) &&
		    rs->state != FARSWAP_RSLAB_REVOKED)
			continue;
		/* Its donor may come back with it (resume.c). */
		if (farswap_rslab_suspended(rs))
			continue;
		list_del(&rs->node);
		dev->nr_rslabs--;
		if (dev->cur_rslab == rs)
			dev->cur_rslab = NULL;
		lost_slabs[rs->donor->index]++;
		/* Chunks still placed here free it with their last slot. */
		if (farswap_slots_retire(&rs->slots))
			list_add(&rs->node, &dead);
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	list_for_each_entry_safe(rs, next, &dead, node) {
		list_del(&rs->node);
		/* Revoked, nothing here any more: the donor may let it go now. */
		if (rs->state == FARSWAP_RSLAB_REVOKED &&
		    farswap_donor_live(rs->donor, rs->gen))
			farswap_donor_free_slab(rs->donor, rs->remote_id);
		farswap_rslab_free(dev, rs);
	}
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);
	if (degraded)
		queue_work(dev->wq, &dev->repair_work);

	for (i = 0; i < farswap_nr_donors(dev); i++) {
		/* A live donor lost slabs only by revoking them. */
		const char *how = farswap_donor_state(dev->donors[i]) ==
				  FARSWAP_DONOR_LIVE ? "took back" : "is gone with";

		if (!lost_slabs[i] && !lost_pages[i])
			continue;
		atomic64_add(lost_pages[i], &dev->stats.lost_pages);
		if (lost_pages[i])
			farswap_donor_pr_err(dev->donors[i], " %s %u slabs: %llu pages lost; reading them fails with EIO\n",
					     how, lost_slabs[i], lost_pages[i]);
		else
			farswap_donor_pr_warn(dev->donors[i], " %s %u slabs; other replicas hold their pages\n",
					      how, lost_slabs[i]);
	}
}

/**
 * farswap_slab_revoked - a donor took one of its slabs back (SLAB_REVOKE)
 * @donor: the donor, whose current session sent it
 * @remote_id: the donor's slab id
 * @grace_ms: until the donor deregisters it
 *
 * Nothing goes there any more; the loss work drops the chunks' copies
 * there (pages of which it held the last copy are lost) and frees the
 * record.  The rest of the session goes on.  Any context.
 */
void farswap_slab_revoked(struct farswap_donor *donor, u32 remote_id,
			  u32 grace_ms)
{
	struct farswap_dev *dev = donor->dev;
	u32 gen = READ_ONCE(donor->gen);
	struct farswap_rslab *rs;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(rs, &dev->rslabs, node) {
		if (rs->donor != donor || rs->gen != gen ||
		    rs->remote_id != remote_id)
			continue;
		WRITE_ONCE(rs->state, FARSWAP_RSLAB_REVOKED);
		if (dev->cur_rslab == rs)
			dev->cur_rslab = NULL;
		found = true;
		break;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	if (!found) {
		farswap_donor_pr_info(donor, " revoked its slab %u, which this device no longer holds\n",
				      remote_id);
		return;
	}
	atomic64_inc(&donor->stats.revoked);
	farswap_donor_pr_warn(donor, " revoked its slab %u (asked back, and its chunks could not move): their copies there are dropped within its %u ms\n",
			      remote_id, grace_ms);
	queue_work(dev->wq, &dev->loss_work);
}

/*
 * The chunk's replicas as replica.c judges them (which serve, which are
 * damaged): one snapshot under the chunk lock.
 */
void farswap_chunk_replicas_locked(const struct farswap_chunk *chunk,
				   struct farswap_replica_set *set)
{
	unsigned int r;

	lockdep_assert_held(&chunk->lock);
	set->nr = chunk->nr_places;
	set->uptodate = chunk->uptodate;
	set->live = 0;
	set->damaged = 0;
	for (r = 0; r < chunk->nr_places; r++) {
		if (farswap_place_live(&chunk->place[r]))
			set->live |= BIT(r);
		if (chunk->place[r].damage.nr)
			set->damaged |= BIT(r);
	}
}

/* A BOUND chunk, all of whose copies are live, with damaged pages noted. */
bool farswap_chunk_damaged_locked(const struct farswap_chunk *chunk)
{
	struct farswap_replica_set set;

	lockdep_assert_held(&chunk->lock);
	if (chunk->state != FARSWAP_CHUNK_BOUND)
		return false;
	farswap_chunk_replicas_locked(chunk, &set);
	return farswap_replica_damaged(&set);
}
