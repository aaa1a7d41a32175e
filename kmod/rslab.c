// SPDX-License-Identifier: GPL-2.0
/*
 * Where chunks live: the donor slabs a device holds (remote slabs) and the
 * chunk slots in them; asking donors for a slab, failure domains, and
 * the room kept ahead (grow) or given back (release).
 *
 * A first write takes a free slot in a held slab right in the I/O path.
 * Only when no held slab has room does the bind work ask donors for a new
 * slab, by the power of two choices.
 */
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "farswap.h"
#include "log.h"

void farswap_rslab_free(struct farswap_dev *dev,
			struct farswap_rslab *rs)
{
	atomic_dec(&rs->donor->stats.slabs);
	kfree(rs);
}

/*
 * Let go of a placement's slot.  A retired slab's record goes with its
 * last slot; the caller decides what to do with a live slab left empty.
 */
enum farswap_slots_after
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
		farswap_dev_pr_err(dev, "slot %u of donor %s's slab %u was not in use; left alone\n",
				   place->slot, rs->donor->name, rs->remote_id);
		break;
	default:
		break;
	}
	return after;
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
	unsigned int i, d, nr = farswap_nr_donors(dev);

	lockdep_assert_held(&dev->rslab_lock);
	if (dev->params.replicas < 2)
		return 0;
	for (i = 0; i < nr; i++) {
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


/*
 * The donors as placement sees them: live and not being removed,
 * outside @exclude, their room.  Returns how many views it filled: the
 * count of this one walk, which the pick must use (a donor may be added
 * meanwhile).
 */
static unsigned int farswap_pick_views(struct farswap_dev *dev,
				       unsigned long exclude,
				       struct farswap_pick_view *view)
{
	unsigned int i, nr = farswap_nr_donors(dev);

	for (i = 0; i < nr; i++) {
		struct farswap_donor *d = dev->donors[i];

		view[i].usable = !(exclude & BIT(i)) &&
				 !READ_ONCE(d->removing) &&
				 farswap_donor_state(d) == FARSWAP_DONOR_LIVE;
		view[i].free = READ_ONCE(d->slabs_free);
		view[i].domain = farswap_donor_dom(d);
	}
	return nr;
}

/*
 * Ask donors for a slab (power of two choices) and hold it: donors
 * outside @exclude, those outside the failure domains @avoid first.
 */
int farswap_acquire_rslab(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid,
			  bool make_current)
{
	u32 serial = atomic_inc_return(&dev->rslab_serial);
	struct farswap_pick_view view[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS];
	u32 slots = dev->geo.chunks_per_slab;
	struct farswap_rslab *rs;
	unsigned long flags;
	unsigned int i, nr;
	int nc, n, ret = -ENOTCONN;

	rs = kzalloc(struct_size(rs, map, BITS_TO_LONGS(slots)), GFP_NOIO);
	if (!rs)
		return -ENOMEM;
	farswap_slots_init(&rs->slots, slots, rs->map);

	nr = farswap_pick_views(dev, exclude, view);
	nc = farswap_pick_two_dom(view, nr, avoid,
					get_random_u32(), get_random_u32(),
					cand);
	for (i = 0; i < nc; i++) {
		struct farswap_donor *d = dev->donors[cand[i]];

		/* Only two are asked: the point of the two choices. */
		if (nc > 1 && farswap_donor_query_stats(d))
			view[cand[i]].usable = false;
		view[cand[i]].free = READ_ONCE(d->slabs_free);
	}
	n = farswap_pick_order_dom(view, nr, avoid, cand, nc, order);
	for (i = 0; i < n; i++) {
		ret = farswap_donor_alloc_slab(dev->donors[order[i]], serial,
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
	nr = farswap_nr_donors(dev);
	for (i = 0; i < nr; i++)
		names[i] = dev->donors[i]->domain;
	farswap_pick_domain_ids(names, nr, ids);
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
	nr = farswap_nr_donors(dev);
	for (i = 0; i < nr; i++)
		names[i] = dev->donors[i]->domain;
	n = farswap_pick_nr_domains(names, nr);
	spin_unlock_irqrestore(&dev->dom_lock, flags);
	return n;
}

/*
 * Has a live donor outside @exclude and outside the domains @avoid free
 * slabs, as last heard?  If none has, a replica may share a domain now.
 */
bool farswap_room_outside(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid)
{
	struct farswap_pick_view view[FARSWAP_MAX_DONORS];
	unsigned int nr = farswap_pick_views(dev, exclude, view);

	return farswap_pick_room_outside(view, nr, avoid);
}

/* Live donors: the most replicas a chunk can have now. */
unsigned int farswap_replicas_possible(struct farswap_dev *dev)
{
	unsigned int i, nr = farswap_nr_donors(dev), live = 0;

	for (i = 0; i < nr; i++)
		live += farswap_donor_state(dev->donors[i]) ==
			FARSWAP_DONOR_LIVE;
	return min(live, dev->params.replicas);
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
				farswap_donor_pr_warn(rs->donor, ": freeing slab %u failed (%d)\n",
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
		if (farswap_acquire_rslab(dev, 0, avoid, false))
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
 * A free slot on a donor outside @exclude, asking donors if need be: in a
 * failure domain outside @avoid when a donor there has room, else in any.
 */
int farswap_take_slot_any(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid,
			  struct farswap_placement *to)
{
	int ret;

	if (farswap_take_slot(dev, exclude, avoid, to))
		return 0;
	if (avoid && !farswap_room_outside(dev, exclude, avoid) &&
	    farswap_take_slot(dev, exclude, 0, to))
		return 0;
	for (;;) {
		/* Outside @avoid first: see farswap_pick_order_dom(). */
		ret = farswap_acquire_rslab(dev, exclude, avoid, false);
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
int farswap_take_slot_outside(struct farswap_dev *dev,
			      unsigned long exclude,
			      unsigned long avoid,
			      struct farswap_placement *to)
{
	int ret;

	if (farswap_take_slot(dev, exclude, avoid, to))
		return 0;
	if (!farswap_room_outside(dev, exclude, avoid))
		return -ENOSPC;
	ret = farswap_acquire_rslab(dev, exclude, avoid, false);
	if (ret)
		return ret;
	return farswap_take_slot(dev, exclude, avoid, to) ? 0 : -ENOSPC;
}
