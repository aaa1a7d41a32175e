// SPDX-License-Identifier: GPL-2.0
/*
 * Slab lifecycle work: binding a slab to a donor on its first write,
 * giving an emptied slab back, unbinding the slabs of a donor that died,
 * and moving a slab to another donor when its donor reclaims it.
 *
 * All four run on the device's WQ_MEM_RECLAIM workqueue (they sit in the
 * swap-out path) under dev->map_mutex, with memalloc_noio so that nothing
 * they allocate recurses into swap.
 */
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "farswap.h"

int farswap_slabs_alloc(struct farswap_dev *dev)
{
	u32 i, pages = dev->geo.slab_pages;
	size_t longs = BITS_TO_LONGS(pages);

	dev->slabs = kvcalloc(dev->geo.nr_slabs, sizeof(*dev->slabs),
			      GFP_KERNEL);
	if (!dev->slabs)
		return -ENOMEM;
	for (i = 0; i < dev->geo.nr_slabs; i++) {
		struct farswap_slab *slab = &dev->slabs[i];

		spin_lock_init(&slab->lock);
		INIT_LIST_HEAD(&slab->held);
		INIT_LIST_HEAD(&slab->bind_node);
		INIT_LIST_HEAD(&slab->release_node);
		slab->pages.nr_pages = pages;
		/*
		 * Both bitmaps up front (two bits per page): the swap-out
		 * path must not depend on allocating them under pressure.
		 */
		slab->pages.written = kvcalloc(longs, sizeof(long), GFP_KERNEL);
		slab->pages.lost = kvcalloc(longs, sizeof(long), GFP_KERNEL);
		if (!slab->pages.written || !slab->pages.lost) {
			farswap_slabs_free(dev);
			return -ENOMEM;
		}
	}
	return 0;
}

void farswap_slabs_free(struct farswap_dev *dev)
{
	u32 i;

	if (!dev->slabs)
		return;
	for (i = 0; i < dev->geo.nr_slabs; i++) {
		kvfree(dev->slabs[i].pages.written);
		kvfree(dev->slabs[i].pages.lost);
	}
	kvfree(dev->slabs);
	dev->slabs = NULL;
}

static u32 farswap_slab_index(struct farswap_dev *dev,
			      struct farswap_slab *slab)
{
	return slab - dev->slabs;
}

void farswap_slab_queue_bind(struct farswap_dev *dev, struct farswap_slab *slab)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->work_lock, flags);
	if (list_empty(&slab->bind_node))
		list_add_tail(&slab->bind_node, &dev->bind_list);
	spin_unlock_irqrestore(&dev->work_lock, flags);
	queue_work(dev->wq, &dev->bind_work);
}

void farswap_slab_queue_release(struct farswap_dev *dev,
				struct farswap_slab *slab)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->work_lock, flags);
	if (list_empty(&slab->release_node))
		list_add_tail(&slab->release_node, &dev->release_list);
	spin_unlock_irqrestore(&dev->work_lock, flags);
	queue_work(dev->wq, &dev->release_work);
}

static struct farswap_slab *farswap_pop(struct farswap_dev *dev,
					struct list_head *list, bool bind)
{
	struct farswap_slab *slab = NULL;

	spin_lock_irq(&dev->work_lock);
	if (!list_empty(list)) {
		if (bind) {
			slab = list_first_entry(list, struct farswap_slab,
						bind_node);
			list_del_init(&slab->bind_node);
		} else {
			slab = list_first_entry(list, struct farswap_slab,
						release_node);
			list_del_init(&slab->release_node);
		}
	}
	spin_unlock_irq(&dev->work_lock);
	return slab;
}

/**
 * farswap_place_slab - get a slab from a donor, by the power of two choices
 * @dev: the device
 * @index: the device's slab to place
 * @exclude: a donor not to use (the one reclaiming), or NULL
 * @place: the placement, on success
 *
 * Picks two live donors at random, refreshes both one's free counts, asks
 * the roomier first, then the other, then every other live donor.
 *
 * Return: 0, -ENOTCONN when no donor is live, or the last donor's refusal.
 */
static int farswap_place_slab(struct farswap_dev *dev, u32 index,
			      struct farswap_donor *exclude,
			      struct farswap_placement *place)
{
	struct farswap_place_view view[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS];
	unsigned int i;
	int nc, n, ret = -ENOTCONN;

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
		ret = farswap_donor_alloc_slab(dev->donors[order[i]], index,
					       farswap_slab_bytes(&dev->geo),
					       place);
		if (!ret)
			return 0;
	}
	return ret;
}

static void farswap_bind_slab(struct farswap_dev *dev, struct farswap_slab *slab)
{
	u32 index = farswap_slab_index(dev, slab);
	struct farswap_placement place = {};
	unsigned long flags;
	LIST_HEAD(held);
	int ret;

	spin_lock_irqsave(&slab->lock, flags);
	if (slab->state != FARSWAP_SLAB_BINDING) {
		spin_unlock_irqrestore(&slab->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&slab->lock, flags);

	ret = farswap_place_slab(dev, index, NULL, &place);

	spin_lock_irqsave(&slab->lock, flags);
	if (!ret) {
		slab->place[0] = place;
		slab->nr_places = 1;
		slab->state = FARSWAP_SLAB_BOUND;
	} else {
		slab->state = FARSWAP_SLAB_UNBOUND;
	}
	list_splice_init(&slab->held, &held);
	spin_unlock_irqrestore(&slab->lock, flags);

	if (!ret) {
		atomic_inc(&place.donor->stats.slabs);
		atomic64_inc(&dev->stats.binds);
		farswap_resubmit_held(&held);
		return;
	}
	atomic64_inc(&dev->stats.bind_failures);
	pr_err_ratelimited("%s: no donor could take slab %u (%d): failing its writes\n",
			   dev->name, index, ret);
	farswap_fail_held(&held, BLK_STS_IOERR);
}

void farswap_bind_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       bind_work);
	struct farswap_slab *slab;
	unsigned int noio = memalloc_noio_save();

	while ((slab = farswap_pop(dev, &dev->bind_list, true))) {
		mutex_lock(&dev->map_mutex);
		farswap_bind_slab(dev, slab);
		mutex_unlock(&dev->map_mutex);
	}
	memalloc_noio_restore(noio);
}

/* Forget a slab's placement; held requests then bind it afresh. */
static bool farswap_slab_unbind_locked(struct farswap_slab *slab)
{
	lockdep_assert_held(&slab->lock);
	memset(slab->place, 0, sizeof(slab->place));
	slab->nr_places = 0;
	if (list_empty(&slab->held)) {
		slab->state = FARSWAP_SLAB_UNBOUND;
		return false;
	}
	slab->state = FARSWAP_SLAB_BINDING;
	return true;
}

static void farswap_release_slab(struct farswap_dev *dev,
				 struct farswap_slab *slab)
{
	struct farswap_placement place;
	unsigned long flags;
	bool rebind;
	int ret;

	spin_lock_irqsave(&slab->lock, flags);
	if (slab->state != FARSWAP_SLAB_BOUND || slab->pages.used ||
	    slab->pages.nr_lost || atomic_read(&slab->inflight_reads) ||
	    atomic_read(&slab->inflight_writes) || !list_empty(&slab->held)) {
		spin_unlock_irqrestore(&slab->lock, flags);
		return;
	}
	place = slab->place[0];
	slab->state = FARSWAP_SLAB_RELEASING;
	spin_unlock_irqrestore(&slab->lock, flags);

	/* A dead session took the slab with it: nothing to free. */
	ret = farswap_donor_free_slab(place.donor, place.remote_id);
	if (ret && ret != -ENOTCONN)
		pr_warn("%s: donor %s: freeing slab %u failed (%d)\n",
			dev->name, place.donor->name, place.remote_id, ret);

	spin_lock_irqsave(&slab->lock, flags);
	rebind = farswap_slab_unbind_locked(slab);
	spin_unlock_irqrestore(&slab->lock, flags);

	atomic_dec(&place.donor->stats.slabs);
	atomic64_inc(&dev->stats.releases);
	if (rebind)
		farswap_slab_queue_bind(dev, slab);
}

void farswap_release_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       release_work);
	struct farswap_slab *slab;
	unsigned int noio = memalloc_noio_save();

	while ((slab = farswap_pop(dev, &dev->release_list, false))) {
		mutex_lock(&dev->map_mutex);
		farswap_release_slab(dev, slab);
		mutex_unlock(&dev->map_mutex);
	}
	memalloc_noio_restore(noio);
}

/*
 * A donor's session ended: every slab placed in a dead session loses its
 * written pages (reads of them fail from now on, never return other data)
 * and is unbound; writes held on it bind it to a live donor.
 */
void farswap_loss_work(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(work, struct farswap_dev,
					       loss_work);
	u64 lost_pages[FARSWAP_MAX_DONORS] = {};
	u32 lost_slabs[FARSWAP_MAX_DONORS] = {};
	unsigned int noio = memalloc_noio_save();
	u32 i;

	mutex_lock(&dev->map_mutex);
	for (i = 0; i < dev->geo.nr_slabs; i++) {
		struct farswap_slab *slab = &dev->slabs[i];
		struct farswap_donor *donor;
		unsigned long flags;
		bool rebind;

		spin_lock_irqsave(&slab->lock, flags);
		donor = slab->place[0].donor;
		if (slab->state != FARSWAP_SLAB_BOUND || !slab->nr_places ||
		    farswap_donor_live(donor, slab->place[0].gen)) {
			spin_unlock_irqrestore(&slab->lock, flags);
			continue;
		}
		lost_pages[donor->index] += farswap_pages_lose(&slab->pages);
		lost_slabs[donor->index]++;
		rebind = farswap_slab_unbind_locked(slab);
		spin_unlock_irqrestore(&slab->lock, flags);

		atomic_dec(&donor->stats.slabs);
		if (rebind)
			farswap_slab_queue_bind(dev, slab);
	}
	mutex_unlock(&dev->map_mutex);
	memalloc_noio_restore(noio);

	for (i = 0; i < dev->nr_donors; i++) {
		if (!lost_slabs[i])
			continue;
		atomic64_add(lost_pages[i], &dev->stats.lost_pages);
		pr_err("%s: donor %s is gone with %u slabs: %llu pages lost; reading them fails with EIO\n",
		       dev->name, dev->donors[i]->name, lost_slabs[i],
		       lost_pages[i]);
	}
}

/* Copy a slab's written pages from one placement to another. */
static int farswap_copy_slab(struct farswap_dev *dev, struct farswap_slab *slab,
			     const struct farswap_placement *from,
			     const struct farswap_placement *to)
{
	u32 chunk = dev->bounce_len >> FARSWAP_PAGE_SHIFT;
	u32 first, n;
	int ret;

	for (first = 0; first < dev->geo.slab_pages; first += chunk) {
		u64 off = (u64)first << FARSWAP_PAGE_SHIFT;
		unsigned long flags;
		bool any;

		n = min(chunk, dev->geo.slab_pages - first);
		spin_lock_irqsave(&slab->lock, flags);
		any = farswap_pages_any_written(&slab->pages, first, n);
		spin_unlock_irqrestore(&slab->lock, flags);
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

/* Put a slab back to BOUND on its old placement and release held I/O. */
static void farswap_migrate_abort(struct farswap_slab *slab)
{
	unsigned long flags;
	LIST_HEAD(held);

	spin_lock_irqsave(&slab->lock, flags);
	slab->state = FARSWAP_SLAB_BOUND;
	list_splice_init(&slab->held, &held);
	spin_unlock_irqrestore(&slab->lock, flags);
	farswap_resubmit_held(&held);
}

/**
 * farswap_migrate_slab - move a slab away from a donor that wants it back
 * @dev: the device
 * @slab: a BOUND slab
 *
 * Writes are held from the start, so the copy is consistent; reads go on
 * from the old placement until the switch, when everything is held until
 * the reads in flight on the old placement finish.
 *
 * Return: FARSWAP_ST_OK when the old placement is no longer used, or
 * FARSWAP_ST_NO_SPACE when the slab could not move (it stays put).
 */
static int farswap_migrate_slab(struct farswap_dev *dev,
				struct farswap_slab *slab)
{
	unsigned long tmo = msecs_to_jiffies(dev->params.io_timeout_ms);
	u32 index = farswap_slab_index(dev, slab);
	struct farswap_placement from, to = {};
	unsigned long flags;
	LIST_HEAD(held);
	bool empty;
	int ret;

	spin_lock_irqsave(&slab->lock, flags);
	if (slab->state != FARSWAP_SLAB_BOUND) {
		spin_unlock_irqrestore(&slab->lock, flags);
		return FARSWAP_ST_NO_SPACE;
	}
	from = slab->place[0];
	slab->state = FARSWAP_SLAB_MIGRATING;
	spin_unlock_irqrestore(&slab->lock, flags);

	/* Writes posted before MIGRATING must land before the copy. */
	if (!wait_var_event_timeout(&slab->inflight_writes,
				    !atomic_read(&slab->inflight_writes), tmo)) {
		farswap_migrate_abort(slab);
		return FARSWAP_ST_NO_SPACE;
	}

	spin_lock_irqsave(&slab->lock, flags);
	empty = !slab->pages.used;
	spin_unlock_irqrestore(&slab->lock, flags);

	if (!empty) {
		ret = farswap_place_slab(dev, index, from.donor, &to);
		if (ret) {
			pr_warn("%s: donor %s reclaims slab %u, but no other donor has room (%d): keeping it\n",
				dev->name, from.donor->name, index, ret);
			farswap_migrate_abort(slab);
			return FARSWAP_ST_NO_SPACE;
		}
		ret = farswap_copy_slab(dev, slab, &from, &to);
		if (ret) {
			pr_warn("%s: moving slab %u from %s to %s failed (%d): keeping it\n",
				dev->name, index, from.donor->name,
				to.donor->name, ret);
			farswap_donor_free_slab(to.donor, to.remote_id);
			farswap_migrate_abort(slab);
			return FARSWAP_ST_NO_SPACE;
		}
	}

	/* Switch: hold all I/O until reads of the old copy have finished. */
	spin_lock_irqsave(&slab->lock, flags);
	slab->state = FARSWAP_SLAB_SWITCHING;
	spin_unlock_irqrestore(&slab->lock, flags);
	wait_var_event(&slab->inflight_reads,
		       !atomic_read(&slab->inflight_reads));

	spin_lock_irqsave(&slab->lock, flags);
	if (empty) {
		/* Nothing to move: just let go; held writes rebind it. */
		memset(slab->place, 0, sizeof(slab->place));
		slab->nr_places = 0;
		slab->state = FARSWAP_SLAB_UNBOUND;
	} else {
		slab->place[0] = to;
		slab->state = FARSWAP_SLAB_BOUND;
	}
	list_splice_init(&slab->held, &held);
	spin_unlock_irqrestore(&slab->lock, flags);

	atomic_dec(&from.donor->stats.slabs);
	atomic64_inc(&from.donor->stats.migrated_out);
	if (!empty) {
		atomic_inc(&to.donor->stats.slabs);
		atomic64_inc(&dev->stats.migrations);
		pr_info("%s: slab %u moved from donor %s to %s\n", dev->name,
			index, from.donor->name, to.donor->name);
	}
	farswap_resubmit_held(&held);
	return FARSWAP_ST_OK;
}

static int farswap_reclaim_one(struct farswap_dev *dev,
			       struct farswap_donor *donor,
			       const struct farswap_reclaim_item *item)
{
	struct farswap_slab *slab = NULL;
	unsigned long flags;
	int st = FARSWAP_ST_NO_ENTRY;
	u32 i;

	mutex_lock(&dev->map_mutex);
	for (i = 0; i < dev->geo.nr_slabs && !slab; i++) {
		struct farswap_slab *s = &dev->slabs[i];

		spin_lock_irqsave(&s->lock, flags);
		if (s->nr_places && s->place[0].donor == donor &&
		    s->place[0].gen == item->gen &&
		    s->place[0].remote_id == item->remote_id)
			slab = s;
		spin_unlock_irqrestore(&s->lock, flags);
	}
	if (slab)
		st = farswap_migrate_slab(dev, slab);
	mutex_unlock(&dev->map_mutex);
	return st;
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
