// SPDX-License-Identifier: GPL-2.0
/*
 * The block device: blk-mq queues, the gendisk, attach and detach.  Its
 * sysfs attributes are sysfs.c's.
 */
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "farswap.h"
#include "log.h"
#include "trace.h"

/*
 * blk-mq
 */

/**
 * farswap_reason_set - say why a control command failed
 * @why: the caller's reason
 * @fmt: printf format of a one-line reason
 *
 * A newline would end the "error=" line early: it becomes a space.
 */
void farswap_reason_set(struct farswap_reason *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	strreplace(why->msg, '\n', ' ');
}

static blk_status_t farswap_queue_rq(struct blk_mq_hw_ctx *hctx,
				     const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct farswap_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct farswap_dev *dev = cmd->dev;
	blk_status_t ret;

	cmd->hctx_idx = hctx->queue_num;
	cmd->status = BLK_STS_OK;
	cmd->write_budget = 0;
	cmd->start_ns = ktime_get_ns();
	cmd->start_jiffies = jiffies;
	cmd->nr_legs = 0;
	cmd->tried = 0;
	atomic_set(&cmd->pending, 0);

	switch (req_op(rq)) {
	case REQ_OP_READ:
		trace_farswap_queue_rq(cmd);
		blk_mq_start_request(rq);
		ret = farswap_submit(cmd);
		if (ret != BLK_STS_OK)
			return ret;
		break;
	case REQ_OP_WRITE:
		/* Done once copied, if there is room (stage.c). */
		if (farswap_stage_take(cmd, rq))
			break;
		if (!farswap_write_budget_get(dev, cmd->hctx_idx,
					      blk_rq_bytes(rq)))
			return BLK_STS_RESOURCE;
		cmd->write_budget = blk_rq_bytes(rq);
		trace_farswap_queue_rq(cmd);
		blk_mq_start_request(rq);
		ret = farswap_submit(cmd);
		if (ret != BLK_STS_OK) {
			/* blk-mq retries it, and queue_rq takes budget again. */
			cmd->write_budget = 0;
			farswap_write_budget_put(dev, cmd->hctx_idx,
						 blk_rq_bytes(rq));
			return ret;
		}
		break;
	case REQ_OP_DISCARD:
		trace_farswap_queue_rq(cmd);
		blk_mq_start_request(rq);
		farswap_discard(cmd, rq);
		break;
	case REQ_OP_FLUSH:
		/* No volatile cache: a completed RDMA WRITE is placed. */
		trace_farswap_queue_rq(cmd);
		blk_mq_start_request(rq);
		trace_farswap_end(cmd, BLK_STS_OK);
		blk_mq_end_request(rq, BLK_STS_OK);
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	return BLK_STS_OK;
}

static void farswap_complete_rq(struct request *rq)
{
	struct farswap_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u32 budget = cmd->write_budget;

	trace_farswap_end(cmd, cmd->status);
	blk_mq_end_request(rq, cmd->status);
	if (budget)
		farswap_write_budget_put(cmd->dev, cmd->hctx_idx, budget);
}

/* Reads on hardware queues of their own (HCTX_TYPE_READ), after writes. */
static void farswap_map_queues(struct blk_mq_tag_set *set)
{
	struct farswap_dev *dev = set->driver_data;
	unsigned int n = dev->params.nr_queues;

	set->map[HCTX_TYPE_DEFAULT].nr_queues = n;
	set->map[HCTX_TYPE_DEFAULT].queue_offset = 0;
	set->map[HCTX_TYPE_READ].nr_queues = n;
	set->map[HCTX_TYPE_READ].queue_offset = n;
	blk_mq_map_queues(&set->map[HCTX_TYPE_DEFAULT]);
	blk_mq_map_queues(&set->map[HCTX_TYPE_READ]);
}

/* The stall check of farswap_cmd_stall_check(), on blk-mq's timer. */
static enum blk_eh_timer_return farswap_timeout(struct request *rq)
{
	farswap_cmd_stall_check(blk_mq_rq_to_pdu(rq));
	return BLK_EH_RESET_TIMER;
}

static int farswap_init_request(struct blk_mq_tag_set *set,
				struct request *rq, unsigned int hctx_idx,
				farswap_numa_node_t numa_node)
{
	struct farswap_dev *dev = set->driver_data;

	/* Writes go to the first nr_queues hardware queues (map_queues). */
	return farswap_cmd_init(blk_mq_rq_to_pdu(rq), dev, rq,
				dev->params.encrypt &&
				hctx_idx < dev->params.nr_queues, numa_node);
}

static void farswap_exit_request(struct blk_mq_tag_set *set,
				 struct request *rq, unsigned int hctx_idx)
{
	farswap_cmd_exit(blk_mq_rq_to_pdu(rq));
}

static const struct blk_mq_ops farswap_mq_ops = {
	.queue_rq	= farswap_queue_rq,
	.complete	= farswap_complete_rq,
	.timeout	= farswap_timeout,
	.init_request	= farswap_init_request,
	.exit_request	= farswap_exit_request,
	.map_queues	= farswap_map_queues,
};

/*
 * Block device operations
 */

static int farswap_open(FARSWAP_OPEN_ARGS)
{
	struct farswap_dev *dev = FARSWAP_OPEN_DISK->private_data;
	int ret = 0;

	spin_lock(&dev->open_lock);
	if (dev->detaching)
		ret = -ENXIO;
	else
		dev->open_count++;
	spin_unlock(&dev->open_lock);
	/* swapon: have room ready for the first swap-outs. */
	if (!ret)
		farswap_chunks_want_room(dev);
	return ret;
}

static void farswap_release(FARSWAP_RELEASE_ARGS)
{
	struct farswap_dev *dev = disk->private_data;

	bool closed;

	spin_lock(&dev->open_lock);
	closed = !--dev->open_count;
	spin_unlock(&dev->open_lock);
	/* Nobody uses the device: the spare slabs go back too. */
	if (closed)
		queue_work(dev->wq, &dev->release_work);
}

/*
 * A disk outlives its put_disk: its release is a kobject's, which may
 * run later (CONFIG_DEBUG_KOBJECT_RELEASE delays it by seconds), and it
 * reads disk->fops, which live in this module.  Module exit waits until
 * every added disk has been released.
 */
static atomic_t farswap_disks_added = ATOMIC_INIT(0);

static void farswap_free_disk(struct gendisk *disk)
{
	/* disk->private_data is freed by now: only the count is ours. */
	if (atomic_dec_and_test(&farswap_disks_added))
		wake_up_var(&farswap_disks_added);
}

static const struct block_device_operations farswap_fops = {
	.owner		= THIS_MODULE,
	.open		= farswap_open,
	.release	= farswap_release,
	.free_disk	= farswap_free_disk,
};

#ifdef FARSWAP_SYNC_VIA_RW_PAGE
/* Declines every page: its presence alone marks the swap synchronous. */
static int farswap_rw_page(struct block_device *bdev, sector_t sector,
			   struct page *page, enum req_op op)
{
	return -EOPNOTSUPP;
}

static const struct block_device_operations farswap_sync_fops = {
	.owner		= THIS_MODULE,
	.open		= farswap_open,
	.release	= farswap_release,
	.free_disk	= farswap_free_disk,
	.rw_page	= farswap_rw_page,
};
#endif

static const struct block_device_operations *
farswap_fops_for(const struct farswap_dev *dev)
{
#ifdef FARSWAP_SYNC_VIA_RW_PAGE
	if (dev->params.sync_io)
		return &farswap_sync_fops;
#endif
	return &farswap_fops;
}

/*
 * The largest segment every donor's RDMA device can DMA-map in one piece
 * (swiotlb bounces at most dma_max_mapping_size(): confidential VMs,
 * iommu=soft).  Software RDMA devices map nothing.  Whole pages, and at
 * most one request.
 */
static unsigned int farswap_max_segment(struct farswap_dev *dev)
{
	size_t max = FARSWAP_MAX_IO_BYTES;
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++) {
		struct ib_device *ibdev = dev->donors[i]->ibdev;

		if (ibdev && !ib_uses_virt_dma(ibdev))
			max = min(max, dma_max_mapping_size(ibdev->dma_device));
	}
	return max_t(size_t, round_down(max, FARSWAP_PAGE_BYTES),
		     FARSWAP_PAGE_BYTES);
}

static int farswap_add_disk(struct farswap_dev *dev)
{
	u64 slab_sectors = farswap_slab_bytes(&dev->geo) >> SECTOR_SHIFT;
	struct farswap_limits lim = {
		.block_size		= FARSWAP_PAGE_BYTES,
		/* A sealed or staged write needs bounce pages for all of it. */
		.max_hw_sectors		= (dev->params.encrypt || dev->stage ?
					   FARSWAP_SEAL_IO_BYTES :
					   FARSWAP_MAX_IO_BYTES) >> SECTOR_SHIFT,
		.max_segments		= FARSWAP_MAX_SEGS,
		.max_segment_size	= farswap_max_segment(dev),
		/* No read or write request crosses a chunk. */
		.chunk_sectors		= FARSWAP_CHUNK_BYTES >> SECTOR_SHIFT,
		.max_discard_sectors	= slab_sectors,
		.synchronous		= dev->params.sync_io,
	};
	struct blk_mq_tag_set *set = &dev->tag_set;
	struct gendisk *disk;
	int ret;

	set->ops = &farswap_mq_ops;
	set->nr_maps = 2;
	set->nr_hw_queues = 2 * dev->params.nr_queues;
	set->queue_depth = dev->params.queue_depth;
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = farswap_cmd_size(dev->params.replicas);
	set->flags = FARSWAP_TAG_SET_FLAGS;
	set->driver_data = dev;
	set->timeout = msecs_to_jiffies(dev->params.io_timeout_ms);
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;

	disk = farswap_alloc_disk(set, &lim, dev);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_free_tag_set;
	}
	/* No major of our own: the dynamic extended range. */
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = farswap_fops_for(dev);
	disk->private_data = dev;
	strscpy(disk->disk_name, dev->name, DISK_NAME_LEN);
	set_capacity(disk, dev->geo.size >> SECTOR_SHIFT);

	ret = device_add_disk(NULL, disk, farswap_disk_groups);
	if (ret)
		goto out_put_disk;
	/* Only an added disk calls free_disk when it is released. */
	atomic_inc(&farswap_disks_added);
	dev->disk = disk;
	return 0;

out_put_disk:
	put_disk(disk);
out_free_tag_set:
	blk_mq_free_tag_set(set);
	return ret;
}

/*
 * Attach and detach
 */

/*
 * The N of each listed farswapN: taken as a device joins farswap_devs and
 * given back as it leaves, both under farswap_devs_mutex, so that a name
 * is free exactly when no listed device has it.
 */
static DEFINE_IDA(farswap_dev_ida);

struct farswap_dev *farswap_dev_find(const char *name)
{
	struct farswap_dev *dev;

	lockdep_assert_held(&farswap_devs_mutex);
	list_for_each_entry(dev, &farswap_devs, node)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

/* Claim a name and the donors for a new device, or say why not. */
static int farswap_reserve(struct farswap_dev *dev,
			   const struct farswap_attach_args *a,
			   struct farswap_reason *why)
{
	struct farswap_dev *other;
	unsigned int i, j;
	int id;

	lockdep_assert_held(&farswap_devs_mutex);
	list_for_each_entry(other, &farswap_devs, node) {
		for (i = 0; i < a->nr_donors; i++) {
			for (j = 0; j < other->nr_donors; j++) {
				if (READ_ONCE(other->donors[j]->removing) ||
				    !farswap_addr_equal(&a->donor[i],
							&other->donors[j]->addr))
					continue;
				farswap_reason_set(why, "donor %s already serves %s",
						   other->donors[j]->name,
						   other->name);
				return -EEXIST;
			}
		}
	}

	if (a->name[0]) {
		if (farswap_dev_find(a->name)) {
			farswap_reason_set(why, "%s exists", a->name);
			return -EEXIST;
		}
		id = farswap_name_index(a->name);
		id = ida_alloc_range(&farswap_dev_ida, id, id, GFP_KERNEL);
	} else {
		id = ida_alloc(&farswap_dev_ida, GFP_KERNEL);
	}
	if (id < 0) {
		farswap_reason_set(why, "no device index (%d)", id);
		return id;
	}
	dev->id = id;
	snprintf(dev->name, sizeof(dev->name), "farswap%d", id);
	dev->detaching = true;	/* not openable until attached */
	list_add_tail(&dev->node, &farswap_devs);
	return 0;
}

/* The pair keys go with their transforms, which hold the keys' pads. */
static void farswap_dev_clear_pair_keys(struct farswap_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_pair_keys; i++)
		farswap_auth_key_clear(&dev->pair_keys[i]);
	kfree(dev->pair_keys);
	dev->pair_keys = NULL;
	dev->nr_pair_keys = 0;
}

/* Stop everything and free the device; works on a half-made one too. */
static void farswap_dev_destroy(struct farswap_dev *dev)
{
	unsigned int i;

	/* Readers of the donors' files leave before the donors go. */
	farswap_debugfs_remove(dev);
	farswap_donor_dirs_remove(dev);
	/* Staged writes go on: a request may wait for one a test held back. */
	farswap_stage_detach(dev);
	if (dev->disk) {
		del_gendisk(dev->disk);	/* waits for every request */
		farswap_disk_run_queue_release(dev->disk);
	}
	/* The staged writes go out while their donors are still there. */
	farswap_stage_drain(dev);

	/*
	 * Every session ends first: work stalled on a donor's network is
	 * flushed, so waiting for the work below cannot hang.
	 */
	for (i = 0; i < dev->nr_donors; i++)
		farswap_donor_stop(dev->donors[i]);
	for (i = 0; i < dev->nr_donors; i++)
		farswap_donor_cancel_work(dev->donors[i]);
	if (dev->wq) {
		cancel_work_sync(&dev->bind_work);
		cancel_work_sync(&dev->release_work);
		cancel_work_sync(&dev->grow_work);
		cancel_work_sync(&dev->loss_work);
		cancel_work_sync(&dev->repair_work);
	}
	if (dev->connect_wq)
		destroy_workqueue(dev->connect_wq);
	if (dev->reset_wq)
		destroy_workqueue(dev->reset_wq);
	/*
	 * A work cancelled above may have queued another as it ended (a
	 * failed repair gives its slot back and queues the release work):
	 * destroying the queue drains those, while the donors they touch
	 * are still there.
	 */
	if (dev->wq)
		destroy_workqueue(dev->wq);
	/* What the donors' end left of the staged writes is dropped. */
	farswap_stage_abort(dev);

	if (dev->disk) {
		put_disk(dev->disk);
		blk_mq_free_tag_set(&dev->tag_set);
	}
	/* The slabs' records count themselves on their donors: donors last. */
	if (dev->chunks)
		farswap_chunks_free(dev);
	for (i = 0; i < dev->nr_donors; i++)
		farswap_donor_destroy(dev->donors[i]);
	farswap_stage_free(dev);
	kfree(dev->write_inflight);
	kvfree(dev->tags);
	kvfree(dev->versions);
	kvfree(dev->seal_tags);
	memzero_explicit(&dev->tag_key, sizeof(dev->tag_key));
	memzero_explicit(&dev->seal_key, sizeof(dev->seal_key));
	farswap_auth_key_clear(&dev->auth_key);
	farswap_dev_clear_pair_keys(dev);
	kfree(dev->bounce);
	kfree(dev);
}

/*
 * Off the device list, into teardown.  From here the device is invisible
 * to an RDMA device's removal (farswap_donors_remove_device()), which
 * waits for farswap_dev_destroy_unlisted() instead.
 */
static void farswap_dev_unlist(struct farswap_dev *dev)
{
	lockdep_assert_held(&farswap_devs_mutex);
	spin_lock(&dev->open_lock);
	dev->detaching = true;
	spin_unlock(&dev->open_lock);
	list_del(&dev->node);
	ida_free(&farswap_dev_ida, dev->id);
	down_read(&farswap_teardown_rwsem);
}

static void farswap_dev_destroy_unlisted(struct farswap_dev *dev)
{
	farswap_dev_destroy(dev);
	up_read(&farswap_teardown_rwsem);
}

/*
 * The donors must agree on a slab size, and with slab_size= if given.
 * Those that did not answer say theirs when they connect, and are
 * refused then if it differs.
 */
static int farswap_pick_slab_size(struct farswap_dev *dev,
				  const struct farswap_attach_args *a,
				  u64 *slab_size, struct farswap_reason *why)
{
	u64 want = a->slab_size;
	unsigned int i;

	for (i = 0; i < dev->nr_donors && !want; i++)
		if (farswap_donor_state(dev->donors[i]) == FARSWAP_DONOR_LIVE)
			want = dev->donors[i]->slab_size;
	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *d = dev->donors[i];

		if (d->slab_size == want ||
		    farswap_donor_state(d) != FARSWAP_DONOR_LIVE)
			continue;
		farswap_reason_set(why, "donor %s serves %llu MiB slabs, %s %llu MiB",
				   d->name, d->slab_size >> 20,
				   a->slab_size ? "slab_size asks for" :
						  "another donor serves",
				   want >> 20);
		return -EINVAL;
	}
	*slab_size = want;
	return 0;
}

/*
 * The integrity table: a tag and a version per device page, made now so
 * that no swap-out ever allocates (farswap_check_bytes_per_page() each).
 */
static int farswap_alloc_tags(struct farswap_dev *dev)
{
	u64 pages = dev->geo.size >> FARSWAP_PAGE_SHIFT;

	if (dev->params.encrypt) {
		/* The cipher's tag is the check: no second one. */
		dev->params.integrity = FARSWAP_TAG_OFF;
		farswap_seal_key_init(&dev->seal_key);
		dev->seal_tags = kvcalloc(pages, sizeof(*dev->seal_tags),
					  GFP_KERNEL);
		if (!dev->seal_tags)
			return -ENOMEM;
	}
	farswap_tag_key_init(&dev->tag_key, dev->params.integrity);
	if (dev->params.integrity != FARSWAP_TAG_OFF) {
		dev->tags = kvcalloc(pages, sizeof(*dev->tags), GFP_KERNEL);
		if (!dev->tags)
			return -ENOMEM;
	}
	if (farswap_check_bytes_per_page(dev)) {
		dev->versions = kvcalloc(pages, sizeof(*dev->versions),
					 GFP_KERNEL);
		if (!dev->versions)
			return -ENOMEM;
	}
	return 0;
}

static int farswap_alloc_bounce(struct farswap_dev *dev)
{
	size_t len = min_t(u64, SZ_1M, farswap_slab_bytes(&dev->geo));

	/* Any size works; bigger copies a reclaimed slab in fewer round trips. */
	for (; len >= FARSWAP_PAGE_BYTES; len >>= 2) {
		dev->bounce = kmalloc(len, GFP_KERNEL | __GFP_NOWARN);
		if (dev->bounce) {
			dev->bounce_len = len;
			return 0;
		}
	}
	return -ENOMEM;
}

static void farswap_dev_init(struct farswap_dev *dev,
			     const struct farswap_attach_args *a)
{
	unsigned int i;

	dev->params = farswap_defaults;
	dev->params.nr_queues = a->nr_queues;
	dev->params.queue_depth = a->queue_depth;
	dev->params.io_timeout_ms = a->io_timeout_ms;
	dev->params.sync_io = a->sync_io;
	/* Unless asked: two copies when two donors can hold them. */
	dev->params.replicas = a->replicas ?: min(a->nr_donors, 2U);
	dev->params.integrity = a->integrity;
	dev->params.encrypt = a->encrypt;
	dev->params.read_policy = a->read_policy;
	dev->params.stage_kb = a->stage_kb;
	memcpy(dev->host_id, a->host_id, FARSWAP_ID_LEN);
	dev->host_id_source = a->host_id_source;
	mutex_init(&dev->map_mutex);
	spin_lock_init(&dev->work_lock);
	spin_lock_init(&dev->rslab_lock);
	spin_lock_init(&dev->dom_lock);
	spin_lock_init(&dev->open_lock);
	farswap_page_locks_init(&dev->page_locks);
	/* Until a donor tells its domain, it is a domain of its own. */
	for (i = 0; i < FARSWAP_MAX_DONORS; i++)
		dev->dom_id[i] = i;
	INIT_LIST_HEAD(&dev->bind_list);
	INIT_LIST_HEAD(&dev->rslabs);
	INIT_WORK(&dev->bind_work, farswap_bind_work);
	INIT_WORK(&dev->release_work, farswap_release_work);
	INIT_WORK(&dev->grow_work, farswap_grow_work);
	INIT_WORK(&dev->loss_work, farswap_loss_work);
	INIT_WORK(&dev->repair_work, farswap_repair_work);
	init_waitqueue_head(&dev->stage_idle);
}

/* See struct farswap_dev for why three. */
static int farswap_alloc_workqueues(struct farswap_dev *dev)
{
	dev->wq = alloc_workqueue("%s_map", WQ_MEM_RECLAIM | WQ_UNBOUND, 0,
				  dev->name);
	dev->reset_wq = alloc_workqueue("%s_reset",
					WQ_MEM_RECLAIM | WQ_UNBOUND, 0,
					dev->name);
	dev->connect_wq = alloc_workqueue("%s_connect",
					  WQ_MEM_RECLAIM | WQ_UNBOUND, 0,
					  dev->name);
	if (!dev->wq || !dev->reset_wq || !dev->connect_wq)
		return -ENOMEM;
	return 0;
}

static int farswap_create_donors(struct farswap_dev *dev,
				 const struct farswap_attach_args *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_donors; i++) {
		struct farswap_donor *donor;

		donor = farswap_donor_create(dev, i, &a->donor[i]);
		if (!donor)
			return -ENOMEM;
		mutex_lock(&farswap_devs_mutex);
		dev->donors[dev->nr_donors++] = donor;
		mutex_unlock(&farswap_devs_mutex);
	}
	return 0;
}

/*
 * Connects every donor.  The attach needs one of them live; the others
 * may be down for a while (rebooting, farswapd restarting, a link not up
 * yet at boot) and are reconnected in the background once the device
 * exists (farswap_connect_later()), the repair work then giving them the
 * replicas the chunks lack.  A donor that refuses for good (wrong key,
 * protocol, slab size) fails the attach, as does a lone donor that does
 * not answer: both are for the operator to see now.
 */
static int farswap_connect_donors(struct farswap_dev *dev,
				  struct farswap_reason *why)
{
	char err[FARSWAP_ERR_LEN];
	unsigned int i, live = 0;
	int first = 0;

	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *donor = dev->donors[i];
		int ret = farswap_donor_connect_first(donor);
		const char *msg;

		if (!ret) {
			live++;
			continue;
		}
		msg = farswap_donor_error_text(donor, err, sizeof(err));
		if (dev->nr_donors == 1 || !farswap_connect_error_passes(ret)) {
			farswap_reason_set(why, "cannot attach donor %s: %s",
					   donor->name, msg);
			return ret;
		}
		/* Said only if no donor at all answers. */
		if (!first)
			farswap_reason_set(why, "no donor answered; the first, %s: %s",
					   donor->name, msg);
		first = first ?: ret;
		farswap_donor_pr_warn(donor, " did not answer: %s; attaching without it, reconnecting in the background\n",
				      msg);
	}
	return live ? 0 : first;
}

/* The donors the attach left behind: reconnect them from now on. */
static void farswap_connect_later(struct farswap_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++)
		if (farswap_donor_state(dev->donors[i]) ==
		    FARSWAP_DONOR_CONNECTING)
			farswap_donor_connect_later(dev->donors[i]);
}

/* How many donors are live, for the attach's line. */
static unsigned int farswap_donors_live(struct farswap_dev *dev)
{
	unsigned int i, n = 0;

	for (i = 0; i < dev->nr_donors; i++)
		n += farswap_donor_state(dev->donors[i]) == FARSWAP_DONOR_LIVE;
	return n;
}

/*
 * A device may be larger than its donors can hold today (more donors or
 * memory may come), but writes past what they hold fail: say so.
 */
static void farswap_warn_overcommit(struct farswap_dev *dev)
{
	u64 offered = 0;
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++)
		offered += (u64)READ_ONCE(dev->donors[i]->slabs_free);
	if (offered >= dev->geo.nr_slabs)
		return;
	farswap_dev_pr_warn(dev, "its %u slabs exceed the %llu the donors have free now: writes to slabs beyond those will fail until donors offer more\n",
			    dev->geo.nr_slabs, offered);
}

/*
 * debugfs attach_pause_ms, for tests: the donors are live and the map's
 * geometry is known, but its chunks do not exist yet; a donor failing
 * now must not reach the map.
 */
static void farswap_attach_pause(struct farswap_dev *dev)
{
	u32 ms = READ_ONCE(farswap_attach_pause_ms);

	if (!ms)
		return;
	farswap_dev_pr_info(dev, "donors connected; attach pauses %u ms (debugfs attach_pause_ms)\n",
			    ms);
	msleep(ms);
}

/*
 * The pair key of this host's key and the donor key @desc names (auth.h),
 * into @pair, prepared.  The donor key itself is not kept.
 */
static int farswap_dev_pair_key(struct farswap_dev *dev, const char *desc,
				struct farswap_auth_key *pair,
				struct farswap_reason *why)
{
	struct farswap_auth_key donor_key;
	int ret;

	ret = farswap_auth_key_lookup(desc, &donor_key, why->msg,
				      sizeof(why->msg));
	if (ret)
		return ret;
	ret = farswap_auth_pair_key(&donor_key, &dev->auth_key, pair);
	farswap_auth_key_clear(&donor_key);
	if (!ret)
		ret = farswap_auth_key_prepare(pair);
	if (ret) {
		farswap_auth_key_clear(pair);
		farswap_reason_set(why, "cannot derive the pair key of donor_key '%s' (%d)",
				   desc, ret);
	}
	return ret;
}

/*
 * key= and donor_key=: the host's secret and, for each donor key, the
 * pair key a pinned donor must prove.  Their HMAC transforms are made
 * here, once: handshakes run under memalloc_noio.
 */
static int farswap_dev_load_keys(struct farswap_dev *dev,
				 const struct farswap_attach_args *a,
				 struct farswap_reason *why)
{
	unsigned int i;
	int ret;

	if (!a->key_desc[0])
		return 0;
	ret = farswap_auth_key_lookup(a->key_desc, &dev->auth_key, why->msg,
				      sizeof(why->msg));
	if (ret)
		return ret;
	ret = farswap_auth_key_prepare(&dev->auth_key);
	if (ret) {
		farswap_reason_set(why, "cannot set up HMAC-SHA256 (%d)", ret);
		return ret;
	}
	if (!a->nr_donor_keys)
		return 0;
	dev->pair_keys = kcalloc(a->nr_donor_keys, sizeof(*dev->pair_keys),
				 GFP_KERNEL);
	if (!dev->pair_keys) {
		farswap_reason_set(why, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < a->nr_donor_keys; i++) {
		ret = farswap_dev_pair_key(dev, a->donor_key_desc[i],
					   &dev->pair_keys[i], why);
		if (ret)
			return ret;	/* the keys made so far: at destroy */
		dev->nr_pair_keys = i + 1;
	}
	return 0;
}

/**
 * farswap_dev_attach - create /dev/farswapN on the given donors
 * @a: parsed attach arguments
 * @name_out: receives the device name
 * @why: receives the reason of a failure, for the caller alone
 *
 * Connects every donor (each within the connect timeout), agrees on the
 * slab size, and only then creates the disk: on any failure nothing is
 * left behind and @why says why.
 */
int farswap_dev_attach(struct farswap_attach_args *a, char *name_out,
		       struct farswap_reason *why)
{
	struct farswap_dev *dev;
	u64 slab_size;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		farswap_reason_set(why, "out of memory");
		return -ENOMEM;
	}
	farswap_dev_init(dev, a);

	mutex_lock(&farswap_devs_mutex);
	ret = farswap_reserve(dev, a, why);
	mutex_unlock(&farswap_devs_mutex);
	if (ret) {
		kfree(dev);
		return ret;
	}

	ret = farswap_attach_auth_check(a, why->msg, sizeof(why->msg));
	if (ret)
		goto out_destroy;
	if (!a->key_desc[0])
		farswap_dev_pr_warn(dev, "attaching without authentication (insecure_no_auth): anyone answering at a donor's address gets this host's pages\n");
	/*
	 * The secrets, from the keyrings of the process that attaches: now,
	 * not in a worker, which would see other keyrings.
	 */
	ret = farswap_dev_load_keys(dev, a, why);
	if (ret)
		goto out_destroy;
	if (a->key_desc[0] && !a->nr_donor_keys)
		farswap_dev_pr_warn(dev, "donors not pinned (no donor_key=): any holder of this host's key could answer as a donor\n");

	ret = farswap_alloc_workqueues(dev);
	if (!ret)
		ret = farswap_create_donors(dev, a);
	if (ret) {
		farswap_reason_set(why, "out of memory");
		goto out_destroy;
	}
	ret = farswap_connect_donors(dev, why);
	if (ret)
		goto out_destroy;
	ret = farswap_pick_slab_size(dev, a, &slab_size, why);
	if (ret)
		goto out_destroy;

	ret = farswap_geometry_init(&dev->geo, a->size, slab_size);
	if (ret) {
		if (a->size < slab_size)
			farswap_reason_set(why, "size %llu is smaller than one slab (%llu MiB)",
					   a->size, slab_size >> 20);
		else if (ret == -E2BIG)
			farswap_reason_set(why, "size %llu is too large (at most %llu GiB)",
					   a->size,
					   ((u64)FARSWAP_MAX_CHUNKS << FARSWAP_CHUNK_SHIFT) >> 30);
		else
			farswap_reason_set(why, "size %llu is not a multiple of the slab size (%llu MiB)",
					   a->size, slab_size >> 20);
		goto out_destroy;
	}
	farswap_attach_pause(dev);
	ret = farswap_chunks_alloc(dev);
	if (!ret)
		ret = farswap_alloc_tags(dev);
	if (!ret)
		ret = farswap_alloc_bounce(dev);
	if (!ret) {
		dev->write_inflight = kcalloc(dev->params.nr_queues,
					      sizeof(*dev->write_inflight),
					      GFP_KERNEL);
		if (!dev->write_inflight)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = farswap_stage_alloc(dev);
	if (ret) {
		farswap_reason_set(why, "out of memory for the map of %llu chunks and its integrity table (%llu bytes)",
				   (u64)dev->geo.nr_chunks,
				   (dev->geo.size >> FARSWAP_PAGE_SHIFT) *
				   farswap_check_bytes_per_page(dev));
		goto out_destroy;
	}
	/*
	 * The donors have been live since farswap_connect_donors(); only now
	 * may their failures and reconnects reach the map.  Nothing was
	 * placed before, so nothing of theirs was missed.
	 */
	smp_store_release(&dev->map_ready, true);
	farswap_connect_later(dev);
	ret = farswap_add_disk(dev);
	if (ret) {
		farswap_reason_set(why, "cannot create the disk (%d)", ret);
		goto out_destroy;
	}
	ret = farswap_donor_dirs_add(dev);
	if (ret) {
		farswap_reason_set(why, "cannot create the donors' sysfs directories (%d)",
				   ret);
		goto out_destroy;
	}
	farswap_debugfs_add(dev);

	mutex_lock(&farswap_devs_mutex);
	spin_lock(&dev->open_lock);
	dev->detaching = false;
	spin_unlock(&dev->open_lock);
	mutex_unlock(&farswap_devs_mutex);

	strscpy(name_out, dev->name, FARSWAP_NAME_LEN);
	farswap_warn_overcommit(dev);
	farswap_dev_pr_info(dev, "attached: %llu MiB, donors' slabs of %llu MiB, over %u donor%s (%u live), %u replica%s, %u read and %u write queues of depth %u%s, integrity %s%s, auth %s, host %pUb (%s)\n",
			    dev->geo.size >> 20, slab_size >> 20,
			    dev->nr_donors, dev->nr_donors > 1 ? "s" : "",
			    farswap_donors_live(dev), dev->params.replicas,
			    dev->params.replicas > 1 ? "s" : "",
			    dev->params.nr_queues, dev->params.nr_queues,
			    dev->params.queue_depth,
			    dev->params.sync_io ? ", synchronous swap-in" : "",
			    farswap_check_name(dev),
			    dev->params.encrypt ? ", pages encrypted" : "",
			    dev->auth_key.len ? "hmac-sha256" : "none",
			    dev->host_id,
			    farswap_host_id_source_name(dev->host_id_source));
	return 0;

out_destroy:
	farswap_dev_pr_err(dev, "attach failed: %s\n", why->msg);
	mutex_lock(&farswap_devs_mutex);
	farswap_dev_unlist(dev);
	mutex_unlock(&farswap_devs_mutex);
	farswap_dev_destroy_unlisted(dev);
	return ret;
}

/**
 * farswap_dev_detach - remove a device
 * @name: "farswapN"
 * @why: receives the reason of a failure, for the caller alone
 *
 * Refused while the device is open (a swap device, mounted, ...).  The
 * donors free the device's slabs when its sessions end.
 */
int farswap_dev_detach(const char *name, struct farswap_reason *why)
{
	struct farswap_dev *dev;
	const char *busy = NULL;

	mutex_lock(&farswap_devs_mutex);
	dev = farswap_dev_find(name);
	if (!dev) {
		mutex_unlock(&farswap_devs_mutex);
		farswap_reason_set(why, "no device %s", name);
		return -ENODEV;
	}
	/* The check and the close to opens in one step: see open_lock. */
	spin_lock(&dev->open_lock);
	if (dev->detaching)
		busy = "is being attached or detached";
	else if (dev->changing)
		busy = "is changing its donors (try again when it is done)";
	else if (dev->open_count)
		busy = "is in use (swapoff it first)";
	else
		dev->detaching = true;
	spin_unlock(&dev->open_lock);
	if (busy) {
		mutex_unlock(&farswap_devs_mutex);
		farswap_reason_set(why, "%s %s", name, busy);
		return -EBUSY;
	}
	farswap_dev_unlist(dev);
	mutex_unlock(&farswap_devs_mutex);

	farswap_dev_destroy_unlisted(dev);
	pr_info("%s: detached\n", name);
	return 0;
}

/*
 * Module exit: no device can be open (each holds a module reference).
 * Returns once every disk is released, as their release reads our fops.
 */
void farswap_dev_destroy_all(void)
{
	struct farswap_dev *dev;

	for (;;) {
		mutex_lock(&farswap_devs_mutex);
		dev = list_first_entry_or_null(&farswap_devs,
					       struct farswap_dev, node);
		if (dev)
			farswap_dev_unlist(dev);
		mutex_unlock(&farswap_devs_mutex);
		if (!dev)
			break;
		farswap_dev_pr_info(dev, "detached at module unload\n");
		farswap_dev_destroy_unlisted(dev);
	}
	wait_var_event(&farswap_disks_added,
		       !atomic_read(&farswap_disks_added));
}
