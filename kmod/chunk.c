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
#include <linux/delay.h>
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

/*
 * Let go of a placement's slot.  A retired slab's record goes with its
 * last slot; the caller decides what to do with a live slab left empty.
 */
static enum farswap_slots_after
farswap_slot_drop(struct farswap_dev *dev,
		  const struct farswap_placement *place)
{
	struct farswap_rslab *rs = place->rslab;
	enum farswap_slots_after after;
	unsigned long flags;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	after = farswap_slots_put(&rs->slots, place->slot);
	spin_unlock_irqrestore(&dev->rslab_lock, flags);

	switch (after) {
	case FARSWAP_SLOTS_FREE:
		farswap_rslab_free(dev, rs);
		break;
	case FARSWAP_SLOTS_BAD:
		pr_err("%s: slot %u of donor %s's slab %u was not in use; left alone\n",
		       dev->name, place->slot, rs->donor->name, rs->remote_id);
		break;
	default:
		break;
	}
	return after;
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

static u32 farswap_chunk_index(struct farswap_dev *dev,
			       struct farswap_chunk *chunk)
{
	return chunk - dev->chunks;
}

/* Can new chunks go into @rs (a donor outside @exclude, a domain outside @avoid)? */
static bool farswap_rslab_open(struct farswap_dev *dev,
			       struct farswap_rslab *rs,
			       unsigned long exclude, unsigned long avoid)
{
	return rs->state == FARSWAP_RSLAB_LIVE &&
	       !(exclude & BIT(rs->donor->index)) &&
	       !(avoid & BIT(farswap_donor_dom(rs->donor))) &&
	       farswap_slots_free(&rs->slots) &&
	       farswap_donor_live(rs->donor, rs->gen);
}

/* Take a free slot of an open slab for @place. */
static void farswap_rslab_fill(struct farswap_rslab *rs,
			       struct farswap_placement *place)
{
	int slot = farswap_slots_take(&rs->slots);

	/* farswap_rslab_open() said it has room, under the same lock. */
	if (WARN_ON_ONCE(slot < 0))
		return;
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
		if (farswap_rslab_open(dev, rs, 0, 0))
			room += farswap_slots_free(&rs->slots);
	return room;
}

/* Free slots of the open slabs on donors of failure domain @dom. */
static u32 farswap_room_dom(struct farswap_dev *dev, unsigned int dom)
{
	struct farswap_rslab *rs;
	u32 room = 0;

	lockdep_assert_held(&dev->rslab_lock);
	list_for_each_entry(rs, &dev->rslabs, node)
		if (farswap_donor_dom(rs->donor) == dom &&
		    farswap_rslab_open(dev, rs, 0, 0))
			room += farswap_slots_free(&rs->slots);
	return room;
}

/*
 * With replicas, a chunk wants a slot in each of several failure
 * domains: the domains of live donors whose held slabs have fewer free
 * slots than the spare, and where a donor has free slabs (as last heard)
 * to give, a bit per domain (0 with one replica or one live domain,
 * where the room of all slabs is what counts).
 */
static unsigned long farswap_domains_short(struct farswap_dev *dev)
{
	unsigned long doms = 0, giving = 0, shortm = 0;
	unsigned int i, d;

	lockdep_assert_held(&dev->rslab_lock);
	if (dev->params.replicas < 2)
		return 0;
	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *dn = dev->donors[i];

		if (farswap_donor_state(dn) != FARSWAP_DONOR_LIVE)
			continue;
		doms |= BIT(farswap_donor_dom(dn));
		if (READ_ONCE(dn->slabs_free))
			giving |= BIT(farswap_donor_dom(dn));
	}
	if (hweight_long(doms) < 2)
		return 0;
	for_each_set_bit(d, &giving, FARSWAP_MAX_DONORS)
		if (farswap_room_dom(dev, d) < farswap_spare_slots(dev))
			shortm |= BIT(d);
	return shortm;
}

/**
 * farswap_take_slot - a free chunk slot in a slab the device holds
 * @dev: the device
 * @exclude: donors not to use, a bit per donor index (those holding the
 *	chunk's other replicas, the one reclaiming)
 * @avoid: failure domains not to use, a bit per domain number (those of
 *	the chunk's other replicas); 0 for any
 * @place: filled with the slot's placement
 *
 * Fills the current slab first, so slabs fill one after another and
 * empty ones can go back.  Never sleeps: the I/O path calls it.
 *
 * Return: false when no held slab has room; the caller then asks donors.
 */
bool farswap_take_slot(struct farswap_dev *dev, unsigned long exclude,
		       unsigned long avoid, struct farswap_placement *place)
{
	struct farswap_rslab *rs = NULL, *it;
	unsigned long flags;
	bool low = false;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	if (dev->cur_rslab &&
	    farswap_rslab_open(dev, dev->cur_rslab, exclude, avoid)) {
		rs = dev->cur_rslab;
	} else {
		list_for_each_entry(it, &dev->rslabs, node) {
			if (farswap_rslab_open(dev, it, exclude, avoid)) {
				rs = it;
				break;
			}
		}
		if (rs && !exclude && !avoid)
			dev->cur_rslab = rs;
	}
	if (rs) {
		farswap_rslab_fill(rs, place);
		low = farswap_slots_free(&rs->slots) < farswap_spare_slots(dev);
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	/* The grow work decides whether the other slabs have room. */
	if (low)
		queue_work(dev->wq, &dev->grow_work);
	return rs;
}

/*
 * Give a chunk's slot back; an emptied slab goes back to its donor (the
 * release work checks its state), a retired one is freed here.  Callable
 * from the I/O path: never sleeps.
 */
void farswap_put_slot(struct farswap_dev *dev,
		      const struct farswap_placement *place)
{
	if (farswap_slot_drop(dev, place) == FARSWAP_SLOTS_EMPTY)
		queue_work(dev->wq, &dev->release_work);
}


/* The donors as placement sees them: live, outside @exclude, their room. */
static void farswap_place_views(struct farswap_dev *dev, unsigned long exclude,
				struct farswap_place_view *view)
{
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *d = dev->donors[i];

		view[i].usable = !(exclude & BIT(i)) &&
				 farswap_donor_state(d) == FARSWAP_DONOR_LIVE;
		view[i].free = READ_ONCE(d->slabs_free);
		view[i].domain = farswap_donor_dom(d);
	}
}

/*
 * Ask donors for a slab (power of two choices) and hold it: donors
 * outside @exclude, those outside the failure domains @avoid first.
 */
static int farswap_acquire_rslab(struct farswap_dev *dev,
				 unsigned long exclude, unsigned long avoid,
				 u32 hint, bool make_current)
{
	struct farswap_place_view view[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS];
	u32 slots = dev->geo.chunks_per_slab;
	struct farswap_rslab *rs;
	unsigned long flags;
	unsigned int i;
	int nc, n, ret = -ENOTCONN;

	rs = kzalloc(struct_size(rs, map, BITS_TO_LONGS(slots)), GFP_NOIO);
	if (!rs)
		return -ENOMEM;
	farswap_slots_init(&rs->slots, slots, rs->map);

	farswap_place_views(dev, exclude, view);
	nc = farswap_place_pick_two_dom(view, dev->nr_donors, avoid,
					get_random_u32(), get_random_u32(),
					cand);
	for (i = 0; i < nc; i++) {
		struct farswap_donor *d = dev->donors[cand[i]];

		/* Only two are asked: the point of the two choices. */
		if (nc > 1 && farswap_donor_query_stats(d))
			view[cand[i]].usable = false;
		view[cand[i]].free = READ_ONCE(d->slabs_free);
	}
	n = farswap_place_order_dom(view, dev->nr_donors, avoid, cand, nc,
				    order);
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
	return farswap_place_colocated(dom, chunk->nr_places);
}

/*
 * A donor told its failure domain (@name, a valid one): renumber the
 * device's domains.  Chunks already placed stay where they are.
 */
void farswap_dev_set_domain(struct farswap_donor *donor, const char *name)
{
	struct farswap_dev *dev = donor->dev;
	const char *names[FARSWAP_MAX_DONORS];
	u8 ids[FARSWAP_MAX_DONORS];
	unsigned long flags;
	unsigned int i, nr;

	spin_lock_irqsave(&dev->dom_lock, flags);
	strscpy(donor->domain, name, sizeof(donor->domain));
	nr = min_t(unsigned int, dev->nr_donors, FARSWAP_MAX_DONORS);
	for (i = 0; i < nr; i++)
		names[i] = dev->donors[i]->domain;
	farswap_place_domain_ids(names, nr, ids);
	for (i = 0; i < nr; i++)
		WRITE_ONCE(dev->dom_id[i], ids[i]);
	spin_unlock_irqrestore(&dev->dom_lock, flags);
}

/* How many failure domains the donors told of. */
unsigned int farswap_dev_nr_domains(struct farswap_dev *dev)
{
	const char *names[FARSWAP_MAX_DONORS];
	unsigned long flags;
	unsigned int i, nr, n;

	spin_lock_irqsave(&dev->dom_lock, flags);
	nr = min_t(unsigned int, dev->nr_donors, FARSWAP_MAX_DONORS);
	for (i = 0; i < nr; i++)
		names[i] = dev->donors[i]->domain;
	n = farswap_place_nr_domains(names, nr);
	spin_unlock_irqrestore(&dev->dom_lock, flags);
	return n;
}

/*
 * Has a live donor outside @exclude and outside the domains @avoid free
 * slabs, as last heard?  If none has, a replica may share a domain now.
 */
static bool farswap_room_outside(struct farswap_dev *dev,
				 unsigned long exclude, unsigned long avoid)
{
	struct farswap_place_view view[FARSWAP_MAX_DONORS];

	farswap_place_views(dev, exclude, view);
	return farswap_place_room_outside(view, dev->nr_donors, avoid);
}

/* Live donors: the most replicas a chunk can have now. */
unsigned int farswap_replicas_possible(struct farswap_dev *dev)
{
	unsigned int i, live = 0;

	for (i = 0; i < dev->nr_donors; i++)
		live += farswap_donor_state(dev->donors[i]) ==
			FARSWAP_DONOR_LIVE;
	return min(live, dev->params.replicas);
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
			     struct farswap_chunk *chunk, u32 hint)
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
		ret = farswap_acquire_rslab(dev, exclude, avoid, hint, !exclude);
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

	ret = farswap_bind_fill(dev, chunk,
				index >> ilog2(dev->geo.chunks_per_slab));

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
 * holds something.
 */
unsigned int farswap_chunk_release_locked(struct farswap_dev *dev,
					  struct farswap_chunk *chunk,
					  struct farswap_placement *place)
{
	unsigned int n = chunk->nr_places;

	lockdep_assert_held(&chunk->lock);
	if (chunk->state != FARSWAP_CHUNK_BOUND || chunk->pages.used ||
	    chunk->pages.nr_lost || atomic_read(&chunk->inflight_reads) ||
	    atomic_read(&chunk->inflight_writes) || !list_empty(&chunk->held))
		return 0;
	memcpy(place, chunk->place, n * sizeof(*place));
	farswap_chunk_unbind_locked(chunk);
	return n;
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
			if (rs->state == FARSWAP_RSLAB_LIVE &&
			    !rs->slots.used &&
			    (!in_use ||
			     (room >= slots + farswap_spare_slots(dev) &&
			      (dev->params.replicas < 2 ||
			       farswap_room_dom(dev, farswap_donor_dom(rs->donor)) >=
			       slots + farswap_spare_slots(dev))))) {
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
 * its held slabs have fewer free slots than the spare, or (with replicas)
 * those of a failure domain do, and it holds fewer slots than it has
 * chunks.  A slab for a domain short of room comes from a donor there;
 * when none there has room, the work stops.  A failure only means binds
 * ask later.
 */
void farswap_grow_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       grow_work);
	unsigned int noio = memalloc_noio_save();
	unsigned long flags, shortm, shortm2, avoid;
	u32 room, held;

	mutex_lock(&dev->map_mutex);
	for (;;) {
		spin_lock_irqsave(&dev->rslab_lock, flags);
		room = farswap_room(dev);
		shortm = farswap_domains_short(dev);
		held = dev->nr_rslabs;
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		if (!farswap_in_use(dev) ||
		    (room >= farswap_spare_slots(dev) && !shortm) ||
		    (u64)held * dev->geo.chunks_per_slab >= dev->geo.nr_chunks)
			break;
		/* Donors outside the short domains come last. */
		avoid = shortm ? ~shortm & GENMASK(FARSWAP_MAX_DONORS - 1, 0) :
				 0;
		if (farswap_acquire_rslab(dev, 0, avoid, held, false))
			break;
		if (!shortm)
			continue;
		/* Granted elsewhere: the short domains have no room to give. */
		spin_lock_irqsave(&dev->rslab_lock, flags);
		shortm2 = farswap_domains_short(dev);
		spin_unlock_irqrestore(&dev->rslab_lock, flags);
		if (shortm2 == shortm)
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
 * A donor's session ended: every chunk placed in a dead session drops
 * that placement.  A chunk left with a current replica keeps serving from
 * it and is repaired (copied to a new replica) in the background; one
 * left with none loses its written pages (reads of them fail from now
 * on, never return other data) and is unbound; writes held on it bind it
 * to live donors.  The dead slabs are retired: the donor freed them with
 * the session.
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
		if (chunk->state != FARSWAP_CHUNK_BOUND || !chunk->nr_places) {
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

	for (i = 0; i < dev->nr_donors; i++) {
		/* A live donor lost slabs only by revoking them. */
		const char *how = farswap_donor_state(dev->donors[i]) ==
				  FARSWAP_DONOR_LIVE ? "took back" : "is gone with";

		if (!lost_slabs[i] && !lost_pages[i])
			continue;
		atomic64_add(lost_pages[i], &dev->stats.lost_pages);
		if (lost_pages[i])
			pr_err("%s: donor %s %s %u slabs: %llu pages lost; reading them fails with EIO\n",
			       dev->name, dev->donors[i]->name, how,
			       lost_slabs[i], lost_pages[i]);
		else
			pr_warn("%s: donor %s %s %u slabs; other replicas hold their pages\n",
				dev->name, dev->donors[i]->name, how,
				lost_slabs[i]);
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
		pr_info("%s: donor %s revoked its slab %u, which this device no longer holds\n",
			dev->name, donor->name, remote_id);
		return;
	}
	atomic64_inc(&donor->stats.revoked);
	pr_warn("%s: donor %s revoked its slab %u (asked back, and its chunks could not move): their copies there are dropped within its %u ms\n",
		dev->name, donor->name, remote_id, grace_ms);
	queue_work(dev->wq, &dev->loss_work);
}

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
	unsigned int i;

	for (i = 0; i < chunk->nr_places; i++)
		if (i != r && (chunk->uptodate & BIT(i)) &&
		    farswap_place_live(&chunk->place[i]))
			return true;
	return false;
}

/* A live, up-to-date placement to copy the chunk from, or -1. */
static int farswap_chunk_source_locked(const struct farswap_chunk *chunk)
{
	unsigned int r;

	for (r = chunk->nr_places; r-- > 0;)
		if ((chunk->uptodate & BIT(r)) &&
		    farswap_place_live(&chunk->place[r]))
			return r;
	return -1;
}

/* Is @p still one of the chunk's live, up-to-date placements? */
static bool farswap_chunk_serves_locked(const struct farswap_chunk *chunk,
					const struct farswap_placement *p)
{
	int r = farswap_chunk_place_locked(chunk, p);

	return r >= 0 && (chunk->uptodate & BIT(r)) &&
	       farswap_place_live(&chunk->place[r]);
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
 * A free slot on a donor outside @exclude, asking donors if need be: in a
 * failure domain outside @avoid when a donor there has room, else in any.
 */
static int farswap_take_slot_any(struct farswap_dev *dev,
				 unsigned long exclude, unsigned long avoid,
				 u32 hint, struct farswap_placement *to)
{
	int ret;

	if (farswap_take_slot(dev, exclude, avoid, to))
		return 0;
	if (avoid && !farswap_room_outside(dev, exclude, avoid) &&
	    farswap_take_slot(dev, exclude, 0, to))
		return 0;
	for (;;) {
		/* Outside @avoid first: see farswap_place_order_dom(). */
		ret = farswap_acquire_rslab(dev, exclude, avoid, hint, false);
		/*
		 * No grant (a donor's free count was stale, or it is busy):
		 * a held slot in a shared domain still beats no replica.
		 */
		if (ret)
			return farswap_take_slot(dev, exclude, 0, to) ? 0 : ret;
		if (farswap_take_slot(dev, exclude, avoid, to) ||
		    farswap_take_slot(dev, exclude, 0, to))
			return 0;
	}
}

/*
 * A slot on a donor outside @exclude and outside the failure domains
 * @avoid, or -ENOSPC: a slab is asked for there if none has room.
 */
static int farswap_take_slot_outside(struct farswap_dev *dev,
				     unsigned long exclude,
				     unsigned long avoid, u32 hint,
				     struct farswap_placement *to)
{
	int ret;

	if (farswap_take_slot(dev, exclude, avoid, to))
		return 0;
	if (!farswap_room_outside(dev, exclude, avoid))
		return -ENOSPC;
	ret = farswap_acquire_rslab(dev, exclude, avoid, hint, false);
	if (ret)
		return ret;
	return farswap_take_slot(dev, exclude, avoid, to) ? 0 : -ENOSPC;
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
		ret = farswap_take_slot_outside(dev, exclude, avoid,
						rs->remote_id, &to);
	} else if (!empty) {
		ret = farswap_take_slot_any(dev, exclude, avoid, rs->remote_id,
					    &to);
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
		pr_info_ratelimited("%s: chunk %u gives its replica on donor %s back with nowhere to move it: one replica fewer until repaired\n",
				    dev->name, index, from.donor->name);
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
		pr_debug("%s: chunk %u: a replica moved from donor %s to %s, out of a failure domain it shared\n",
			 dev->name, index, from.donor->name, to.donor->name);
	} else if (!empty) {
		pr_debug("%s: chunk %u moved from donor %s to %s\n", dev->name,
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

/* The chunk's serving copies: live and up to date. */
unsigned int farswap_chunk_serving_locked(const struct farswap_chunk *chunk)
{
	unsigned int r, serving = 0;

	lockdep_assert_held(&chunk->lock);
	for (r = 0; r < chunk->nr_places; r++)
		serving += (chunk->uptodate & BIT(r)) &&
			   farswap_place_live(&chunk->place[r]);
	return serving;
}

/* Fewer serving replicas than the device wants, but one to copy from. */
static bool farswap_chunk_degraded_locked(struct farswap_dev *dev,
					  const struct farswap_chunk *chunk)
{
	unsigned int r, serving;

	if (chunk->state != FARSWAP_CHUNK_BOUND)
		return false;
	/* The loss work drops dead copies first. */
	for (r = 0; r < chunk->nr_places; r++)
		if (!farswap_place_live(&chunk->place[r]))
			return false;
	serving = farswap_chunk_serving_locked(chunk);
	return serving && serving < farswap_replicas_possible(dev);
}

/* A BOUND chunk, all of whose copies are live, with damaged pages noted. */
bool farswap_chunk_damaged_locked(const struct farswap_chunk *chunk)
{
	bool damaged = false;
	unsigned int r;

	lockdep_assert_held(&chunk->lock);
	if (chunk->state != FARSWAP_CHUNK_BOUND)
		return false;
	for (r = 0; r < chunk->nr_places; r++) {
		/* The loss work drops dead copies first. */
		if (!farswap_place_live(&chunk->place[r]))
			return false;
		damaged |= chunk->place[r].damage.nr &&
			   (chunk->uptodate & BIT(r));
	}
	return damaged;
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
	unsigned int r, i, k, n = 0;

	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_damage *d = &chunk->place[r].damage;

		if (!(chunk->uptodate & BIT(r)))
			continue;
		for (i = 0; i < d->nr && n < max; i++) {
			for (k = 0; k < chunk->nr_places; k++) {
				const struct farswap_placement *p =
					&chunk->place[k];

				if (k == r || !(chunk->uptodate & BIT(k)) ||
				    !farswap_place_live(p) ||
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
	bool degraded;
	long bytes;
	int s, ret;

	spin_lock_irqsave(&chunk->lock, flags);
	degraded = farswap_chunk_degraded_locked(dev, chunk);
	if (!degraded && !farswap_chunk_damaged_locked(chunk)) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	farswap_hold_writes_locked(chunk);
	spin_unlock_irqrestore(&chunk->lock, flags);

	if (!farswap_wait_writes(dev, chunk))
		return -ETIMEDOUT;
	/* As many copies as it can have: only damaged pages to rewrite. */
	if (!degraded)
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

	ret = farswap_take_slot_any(dev, exclude, avoid,
				    farswap_chunk_index(dev, chunk), &to);
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
	unsigned int r;
	long bytes;
	int ret;

	spin_lock_irqsave(&chunk->lock, flags);
	if (chunk->state != FARSWAP_CHUNK_BOUND || !chunk->pages.used ||
	    !farswap_chunk_colocated_locked(chunk)) {
		spin_unlock_irqrestore(&chunk->lock, flags);
		return 0;
	}
	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_placement *p = &chunk->place[r];
		unsigned long dom = BIT(farswap_donor_dom(p->donor));

		/* Dead copies are the loss work's; stale ones the repair's. */
		if (!farswap_place_live(p) ||
		    !(chunk->uptodate & BIT(r))) {
			spin_unlock_irqrestore(&chunk->lock, flags);
			return 0;
		}
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
		pr_warn("%s: donor %s revoked its slab %u while its chunks moved: %u moved, %u left there\n",
			dev->name, donor->name, item->remote_id, moved, left);
		return FARSWAP_ST_NO_SPACE;
	}
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
			pr_warn_ratelimited("%s: donor %s repeated the grant of slab %u, which this host holds: ignored\n",
					    dev->name, donor->name, slab_id);
			continue;
		}
		pr_info("%s: donor %s granted slab %u after the request timed out: giving it back\n",
			dev->name, donor->name, slab_id);
		farswap_donor_free_slab(donor, slab_id);
	}

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
