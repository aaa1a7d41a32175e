// SPDX-License-Identifier: GPL-2.0
/*
 * Where chunks live: the donor slabs a device holds (remote slabs) and the
 * chunk slots in them; binding a chunk on its first write, giving empty
 * slabs back, unbinding the chunks of a donor that died, and moving a
 * slab's chunks to other donors when its donor reclaims it.
 *
 * A first write takes a free slot in a held slab right in the I/O path.
 * Only when no held slab has room does the bind work ask donors for a new
 * slab, by the power of two choices.  The work items run on the device's
 * WQ_MEM_RECLAIM workqueue (they sit in the swap-out path) under
 * dev->map_mutex, with memalloc_noio so nothing they allocate recurses
 * into swap.
 */
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "farswap.h"

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
		INIT_LIST_HEAD(&chunk->bind_node);
		chunk->pages.nr_pages = FARSWAP_CHUNK_PAGES;
		chunk->pages.written = chunk->written;
		chunk->pages.lost = chunk->lost;
	}
	return 0;
}

static void farswap_rslab_free(struct farswap_dev *dev,
			       struct farswap_rslab *rs)
{
	atomic_dec(&rs->donor->stats.slabs);
	kfree(rs);
}

/* Only at detach: the sessions' end frees every slab on the donors. */
void farswap_chunks_free(struct farswap_dev *dev)
{
	struct farswap_rslab *rs, *next;

	list_for_each_entry_safe(rs, next, &dev->rslabs, node) {
		list_del(&rs->node);
		farswap_rslab_free(dev, rs);
	}
	kvfree(dev->chunks);
	dev->chunks = NULL;
}

static u32 farswap_chunk_index(struct farswap_dev *dev,
			       struct farswap_chunk *chunk)
{
	return chunk - dev->chunks;
}

/* Can new chunks go into @rs? */
static bool farswap_rslab_open(struct farswap_dev *dev,
			       struct farswap_rslab *rs,
			       struct farswap_donor *exclude)
{
	return rs->state == FARSWAP_RSLAB_LIVE && rs->donor != exclude &&
	       rs->nr_used < dev->geo.chunks_per_slab &&
	       farswap_donor_live(rs->donor, rs->gen);
}

static void farswap_rslab_fill(struct farswap_dev *dev,
			       struct farswap_rslab *rs, u32 slot,
			       struct farswap_placement *place)
{
	__set_bit(slot, rs->used);
	rs->nr_used++;
	place->donor = rs->donor;
	place->gen = rs->gen;
	place->rslab = rs;
	place->slot = slot;
	place->addr = rs->addr + ((u64)slot << FARSWAP_CHUNK_SHIFT);
	place->rkey = rs->rkey;
}

/*
 * While a device is in use, this many free slots are kept ready in held
 * slabs, so that a first write to a chunk finds one at once instead of
 * waiting for a donor to grant a slab: under a hard memory limit the
 * kernel OOM-kills rather than wait for a swap-out that takes a round
 * trip and the donor pinning a slab.
 */
static u32 farswap_spare_slots(const struct farswap_dev *dev)
{
	return max(1U, dev->geo.chunks_per_slab / 2);
}

/*
 * In use: open (swapon keeps it open) and written since attach.  An idle
 * device, or one a probe opens for a moment, holds no spare slab.
 */
static bool farswap_in_use(struct farswap_dev *dev)
{
	return READ_ONCE(dev->open_count) && atomic64_read(&dev->stats.binds);
}

/* Free slots in the slabs new chunks can go to now. */
static u32 farswap_room(struct farswap_dev *dev)
{
	struct farswap_rslab *rs;
	u32 room = 0;

	lockdep_assert_held(&dev->rslab_lock);
	list_for_each_entry(rs, &dev->rslabs, node)
		if (farswap_rslab_open(dev, rs, NULL))
			room += dev->geo.chunks_per_slab - rs->nr_used;
	return room;
}

/**
 * farswap_take_slot - a free chunk slot in a slab the device holds
 * @dev: the device
 * @exclude: a donor not to use (the one reclaiming), or NULL
 * @place: filled with the slot's placement
 *
 * Fills the current slab first, so slabs fill one after another and
 * empty ones can go back.  Never sleeps: the I/O path calls it.
 *
 * Return: false when no held slab has room; the caller then asks donors.
 */
bool farswap_take_slot(struct farswap_dev *dev, struct farswap_donor *exclude,
		       struct farswap_placement *place)
{
	struct farswap_rslab *rs = NULL, *it;
	unsigned long flags;
	bool low = false;
	u32 slot;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	if (dev->cur_rslab && farswap_rslab_open(dev, dev->cur_rslab, exclude)) {
		rs = dev->cur_rslab;
	} else {
		list_for_each_entry(it, &dev->rslabs, node) {
			if (farswap_rslab_open(dev, it, exclude)) {
				rs = it;
				break;
			}
		}
		if (rs && !exclude)
			dev->cur_rslab = rs;
	}
	if (rs) {
		slot = find_first_zero_bit(rs->used, dev->geo.chunks_per_slab);
		farswap_rslab_fill(dev, rs, slot, place);
		low = dev->geo.chunks_per_slab - rs->nr_used <
		      farswap_spare_slots(dev);
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	/* The grow work decides whether the other slabs have room. */
	if (low && !exclude)
		queue_work(dev->wq, &dev->grow_work);
	return rs;
}

/* Give a chunk's slot back; an emptied slab goes back to its donor. */
void farswap_put_slot(struct farswap_dev *dev,
		      const struct farswap_placement *place)
{
	struct farswap_rslab *rs = place->rslab;
	unsigned long flags;
	bool empty;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	__clear_bit(place->slot, rs->used);
	empty = !--rs->nr_used && rs->state == FARSWAP_RSLAB_LIVE;
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	if (empty)
		queue_work(dev->wq, &dev->release_work);
}

/* Ask donors for a slab (power of two choices) and hold it. */
static int farswap_acquire_rslab(struct farswap_dev *dev,
				 struct farswap_donor *exclude, u32 hint,
				 bool make_current)
{
	struct farswap_place_view view[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS];
	u32 slots = dev->geo.chunks_per_slab;
	struct farswap_rslab *rs;
	unsigned long flags;
	unsigned int i;
	int nc, n, ret = -ENOTCONN;

	rs = kzalloc(struct_size(rs, used, BITS_TO_LONGS(slots)), GFP_NOIO);
	if (!rs)
		return -ENOMEM;

	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *d = dev->donors[i];

		view[i].usable = d != exclude &&
				 farswap_donor_state(d) == FARSWAP_DONOR_LIVE;
		view[i].free = READ_ONCE(d->slabs_free);
	}
	nc = farswap_place_pick_two(view, dev->nr_donors, get_random_u32(),
				    get_random_u32(), cand);
	for (i = 0; i < nc; i++) {
		struct farswap_donor *d = dev->donors[cand[i]];

		/* Only two are asked: the point of the two choices. */
		if (nc > 1 && farswap_donor_query_stats(d))
			view[cand[i]].usable = false;
		view[cand[i]].free = READ_ONCE(d->slabs_free);
	}
	n = farswap_place_order(view, dev->nr_donors, cand, nc, order);
	for (i = 0; i < n; i++) {
		ret = farswap_donor_alloc_slab(dev->donors[order[i]], hint,
					       farswap_slab_bytes(&dev->geo), rs);
		if (ret)
			continue;
		rs->state = FARSWAP_RSLAB_LIVE;
		spin_lock_irqsave(&dev->rslab_lock, flags);
		list_add_tail(&rs->node, &dev->rslabs);
		dev->nr_rslabs++;
		if (make_current)
			dev->cur_rslab = rs;
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		atomic_inc(&rs->donor->stats.slabs);
		atomic64_inc(&dev->stats.slab_allocs);
		return 0;
	}
	kfree(rs);
	return ret;
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

static void farswap_bind_chunk(struct farswap_dev *dev,
			       struct farswap_chunk *chunk)
{
	u32 index = farswap_chunk_index(dev, chunk);
	struct farswap_placement place;
	unsigned long flags;
	bool bound = false;
	LIST_HEAD(held);
	int ret = 0;

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->state != FARSWAP_SLAB_BINDING) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&chunk->lock, flags);

	/* Another chunk's bind may have brought a slab with room. */
	while (!farswap_take_slot(dev, NULL, &place)) {
		ret = farswap_acquire_rslab(dev, NULL, index >>
					    ilog2(dev->geo.chunks_per_slab),
					    true);
		if (ret)
			break;
	}

	spin_lock_irqsave(&chunk->lock, flags);
	if (!ret) {
		chunk->place[0] = place;
		chunk->nr_places = 1;
		chunk->state = FARSWAP_SLAB_BOUND;
		bound = true;
	} else {
		chunk->state = FARSWAP_SLAB_UNBOUND;
	}
	list_splice_init(&chunk->held, &held);
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (bound) {
		atomic64_inc(&dev->stats.binds);
		farswap_resubmit_held(&held);
		return;
	}
	atomic64_inc(&dev->stats.bind_failures);
	pr_err_ratelimited("%s: no donor could take chunk %u (%d): failing its writes\n",
			   dev->name, index, ret);
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

/* Forget a chunk's placement; held writes then bind it afresh. */
static bool farswap_chunk_unbind_locked(struct farswap_chunk *chunk)
{
	lockdep_assert_held(&chunk->lock);
	memset(chunk->place, 0, sizeof(chunk->place));
	chunk->nr_places = 0;
	if (list_empty(&chunk->held)) {
		chunk->state = FARSWAP_SLAB_UNBOUND;
		return false;
	}
	chunk->state = FARSWAP_SLAB_BINDING;
	return true;
}

/**
 * farswap_chunk_release_locked - let go of a chunk with nothing in it
 * @dev: the device
 * @chunk: a chunk whose pages were all discarded, its lock held
 * @place: receives the placement to give back with farswap_put_slot()
 *
 * Return: true if the chunk was unbound (call farswap_put_slot() once the
 * chunk lock is dropped); false if it is busy or still holds something.
 */
bool farswap_chunk_release_locked(struct farswap_dev *dev,
				  struct farswap_chunk *chunk,
				  struct farswap_placement *place)
{
	lockdep_assert_held(&chunk->lock);
	if (chunk->state != FARSWAP_SLAB_BOUND || chunk->pages.used ||
	    chunk->pages.nr_lost || atomic_read(&chunk->inflight_reads) ||
	    atomic_read(&chunk->inflight_writes) || !list_empty(&chunk->held))
		return false;
	*place = chunk->place[0];
	farswap_chunk_unbind_locked(chunk);
	return true;
}

/*
 * Give back every held slab that is empty, but for the spare room a
 * device in use keeps (all of them once it is closed).
 */
void farswap_release_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       release_work);
	unsigned int noio = memalloc_noio_save();
	u32 slots = dev->geo.chunks_per_slab;
	struct farswap_rslab *rs;
	unsigned long flags;

	mutex_lock(&dev->map_mutex);
	for (;;) {
		bool in_use = farswap_in_use(dev);
		bool found = false;
		u32 room;
		int ret;

		spin_lock_irqsave(&dev->rslab_lock, flags);
		room = farswap_room(dev);
		list_for_each_entry(rs, &dev->rslabs, node) {
			if (rs->state == FARSWAP_RSLAB_LIVE && !rs->nr_used &&
			    (!in_use ||
			     room >= slots + farswap_spare_slots(dev))) {
				rs->state = FARSWAP_RSLAB_FREEING;
				list_del(&rs->node);
				dev->nr_rslabs--;
				if (dev->cur_rslab == rs)
					dev->cur_rslab = NULL;
				found = true;
				break;
			}
		}
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		if (!found)
			break;

		/* A dead session took the slab with it: nothing to free. */
		if (farswap_donor_live(rs->donor, rs->gen)) {
			ret = farswap_donor_free_slab(rs->donor, rs->remote_id);
			/* NO_ENTRY: it was reclaimed as we gave it back. */
			if (ret && ret != -ENOTCONN && ret != -ENOENT)
				pr_warn("%s: donor %s: freeing slab %u failed (%d)\n",
					dev->name, rs->donor->name,
					rs->remote_id, ret);
		}
		atomic64_inc(&dev->stats.releases);
		farswap_rslab_free(dev, rs);
	}
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);
}

/*
 * Take a slab before a write needs one: while the device is in use and
 * its held slabs have fewer free slots than the spare, and it holds fewer
 * slots than it has chunks.  A failure only means binds ask later.
 */
void farswap_grow_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       grow_work);
	unsigned int noio = memalloc_noio_save();
	unsigned long flags;
	u32 room, held;

	mutex_lock(&dev->map_mutex);
	for (;;) {
		spin_lock_irqsave(&dev->rslab_lock, flags);
		room = farswap_room(dev);
		held = dev->nr_rslabs;
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		if (!farswap_in_use(dev) || room >= farswap_spare_slots(dev) ||
		    (u64)held * dev->geo.chunks_per_slab >= dev->geo.nr_chunks)
			break;
		if (farswap_acquire_rslab(dev, NULL, held, false))
			break;
	}
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);
}

/* Something changed that may call for room ahead: check soon. */
void farswap_chunks_want_room(struct farswap_dev *dev)
{
	queue_work(dev->wq, &dev->grow_work);
}

/*
 * A donor's session ended: every chunk placed in a dead session loses its
 * written pages (reads of them fail from now on, never return other data)
 * and is unbound; writes held on it bind it to a live donor.  The dead
 * slabs are dropped: the donor freed them with the session.
 */
void farswap_loss_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       loss_work);
	u64 lost_pages[FARSWAP_MAX_DONORS] = {};
	u32 lost_slabs[FARSWAP_MAX_DONORS] = {};
	unsigned int noio = memalloc_noio_save();
	struct farswap_rslab *rs, *next;
	unsigned long flags;
	LIST_HEAD(dead);
	u32 i;

	mutex_lock(&dev->map_mutex);
	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		struct farswap_placement place;
		bool rebind;

		spin_lock_irqsave(&chunk->lock, flags);
		place = chunk->place[0];
		if (chunk->state != FARSWAP_SLAB_BOUND || !chunk->nr_places ||
		    farswap_donor_live(place.donor, place.gen)) {
			spin_unlock_irqrestore(&chunk->lock, flags);
			continue;
		}
		lost_pages[place.donor->index] +=
			farswap_pages_lose(&chunk->pages);
		rebind = farswap_chunk_unbind_locked(chunk);
		spin_unlock_irqrestore(&chunk->lock, flags);

		spin_lock_irqsave(&dev->rslab_lock, flags);
		__clear_bit(place.slot, place.rslab->used);
		place.rslab->nr_used--;
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		if (rebind)
			farswap_chunk_queue_bind(dev, chunk);
	}

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry_safe(rs, next, &dev->rslabs, node) {
		if (farswap_donor_live(rs->donor, rs->gen))
			continue;
		list_move(&rs->node, &dead);
		dev->nr_rslabs--;
		if (dev->cur_rslab == rs)
			dev->cur_rslab = NULL;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	list_for_each_entry_safe(rs, next, &dead, node) {
		lost_slabs[rs->donor->index]++;
		list_del(&rs->node);
		farswap_rslab_free(dev, rs);
	}
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);

	for (i = 0; i < dev->nr_donors; i++) {
		if (!lost_slabs[i] && !lost_pages[i])
			continue;
		atomic64_add(lost_pages[i], &dev->stats.lost_pages);
		pr_err("%s: donor %s is gone with %u slabs: %llu pages lost; reading them fails with EIO\n",
		       dev->name, dev->donors[i]->name, lost_slabs[i],
		       lost_pages[i]);
	}
}

/* Copy a chunk's written pages from one placement to another. */
static int farswap_copy_chunk(struct farswap_dev *dev,
			      struct farswap_chunk *chunk,
			      const struct farswap_placement *from,
			      const struct farswap_placement *to)
{
	u32 step = min_t(u32, dev->bounce_len >> FARSWAP_PAGE_SHIFT,
			 FARSWAP_CHUNK_PAGES);
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

/* Put a chunk back to BOUND on its old placement and release held I/O. */
static void farswap_migrate_abort(struct farswap_chunk *chunk)
{
	unsigned long flags;
	LIST_HEAD(held);

	spin_lock_irqsave(&chunk->lock, flags);
	chunk->state = FARSWAP_SLAB_BOUND;
	list_splice_init(&chunk->held, &held);
	spin_unlock_irqrestore(&chunk->lock, flags);
	farswap_resubmit_held(&held);
}

/**
 * farswap_migrate_chunk - move a chunk out of a slab its donor reclaims
 * @dev: the device
 * @chunk: a BOUND chunk
 *
 * Writes are held from the start, so the copy is consistent; reads go on
 * from the old placement until the switch, when everything is held until
 * the reads in flight on the old placement finish.  A chunk with no page
 * in use is simply let go.
 *
 * Return: 0, or a negative error when the chunk stays where it is.
 */
static int farswap_migrate_chunk(struct farswap_dev *dev,
				 struct farswap_chunk *chunk)
{
	unsigned long tmo = msecs_to_jiffies(dev->params.io_timeout_ms);
	u32 index = farswap_chunk_index(dev, chunk);
	struct farswap_placement from, to = {};
	unsigned long flags;
	LIST_HEAD(held);
	bool empty;
	int ret;

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->state != FARSWAP_SLAB_BOUND) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return -EBUSY;
	}
	from = chunk->place[0];
	chunk->state = FARSWAP_SLAB_MIGRATING;
	spin_unlock_irqrestore(&chunk->lock, flags);

	/* Writes posted before MIGRATING must land before the copy. */
	if (!wait_var_event_timeout(&chunk->inflight_writes,
				    !atomic_read(&chunk->inflight_writes), tmo)) {
		farswap_migrate_abort(chunk);
		return -ETIMEDOUT;
	}

	spin_lock_irqsave(&chunk->lock, flags);
	empty = !chunk->pages.used && !chunk->pages.nr_lost;
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (!empty) {
		while (!farswap_take_slot(dev, from.donor, &to)) {
			ret = farswap_acquire_rslab(dev, from.donor,
						    from.rslab->remote_id,
						    false);
			if (ret) {
				farswap_migrate_abort(chunk);
				return ret;
			}
		}
		ret = farswap_copy_chunk(dev, chunk, &from, &to);
		if (ret) {
			farswap_put_slot(dev, &to);
			farswap_migrate_abort(chunk);
			return ret;
		}
	}

	/* Switch: hold all I/O until reads of the old copy have finished. */
	spin_lock_irqsave(&chunk->lock, flags);
	chunk->state = FARSWAP_SLAB_SWITCHING;
	spin_unlock_irqrestore(&chunk->lock, flags);
	wait_var_event(&chunk->inflight_reads,
		       !atomic_read(&chunk->inflight_reads));

	spin_lock_irqsave(&chunk->lock, flags);
	if (empty) {
		/* Nothing to move: let go; held writes rebind it. */
		memset(chunk->place, 0, sizeof(chunk->place));
		chunk->nr_places = 0;
		chunk->state = FARSWAP_SLAB_UNBOUND;
	} else {
		chunk->place[0] = to;
		chunk->state = FARSWAP_SLAB_BOUND;
	}
	list_splice_init(&chunk->held, &held);
	spin_unlock_irqrestore(&chunk->lock, flags);

	/* The reclaiming slab loses the chunk; it is not given back here. */
	spin_lock_irqsave(&dev->rslab_lock, flags);
	__clear_bit(from.slot, from.rslab->used);
	from.rslab->nr_used--;
	spin_unlock_irqrestore(&dev->rslab_lock, flags);

	if (!empty) {
		atomic64_inc(&dev->stats.migrations);
		pr_debug("%s: chunk %u moved from donor %s to %s\n", dev->name,
			 index, from.donor->name, to.donor->name);
	}
	farswap_resubmit_held(&held);
	return 0;
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

		spin_lock_irqsave(&chunk->lock, flags);
		here = chunk->nr_places && chunk->place[0].rslab == rs;
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (!here)
			continue;
		ret = farswap_migrate_chunk(dev, chunk);
		if (!ret)
			moved++;
	}

	spin_lock_irqsave(&dev->rslab_lock, flags);
	left = rs->nr_used;
	if (!left) {
		list_del(&rs->node);
		dev->nr_rslabs--;
	} else {
		rs->state = FARSWAP_RSLAB_LIVE;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	mutex_unlock(&dev->map_mutex);

	if (left) {
		pr_warn("%s: donor %s reclaims its slab %u, but %u of its chunks could not move (%d): keeping it\n",
			dev->name, donor->name, item->remote_id, left, ret);
		return FARSWAP_ST_NO_SPACE;
	}
	atomic64_inc(&donor->stats.migrated_out);
	pr_info("%s: donor %s took back its slab %u: %u chunks moved to other donors\n",
		dev->name, donor->name, item->remote_id, moved);
	/* The donor frees it on our answer: no SLAB_FREE_REQ. */
	farswap_rslab_free(dev, rs);
	return FARSWAP_ST_OK;
}

static bool farswap_reclaim_pop(struct farswap_donor *donor,
				struct farswap_reclaim_item *item)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&donor->reclaim_lock, flags);
	if (donor->reclaim_count) {
		*item = donor->reclaim[donor->reclaim_head];
		donor->reclaim_head = (donor->reclaim_head + 1) %
				      FARSWAP_RECLAIM_SLOTS;
		donor->reclaim_count--;
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

	while (farswap_reclaim_pop(donor, &item)) {
		union farswap_msg rep;
		int st;

		pr_info("%s: donor %s reclaims its slab %u (deadline %u ms)\n",
			dev->name, donor->name, item.remote_id,
			item.deadline_ms);
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
