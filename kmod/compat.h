/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only place that tests kernel versions.  farswap builds against
 * Debian's 6.1 and 6.12 (Debian 12) and 7.0 to 7.3 (trixie-backports)
 * kernels; each difference between them that the module meets is wrapped
 * here under a name that says what it is for, and keyed on the feature
 * (a macro, a type) where the kernel offers one, on LINUX_VERSION_CODE
 * only where it does not.
 */
#ifndef FARSWAP_COMPAT_H
#define FARSWAP_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/raid/pq.h>
#include <linux/sysfs.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>

/* Queue limits, whichever way the kernel wants them. */
struct farswap_limits {
	unsigned int block_size;	/* logical = physical = io_min */
	unsigned int max_hw_sectors;
	unsigned short max_segments;
	unsigned int max_segment_size;
	unsigned int chunk_sectors;	/* no request crosses a slab */
	unsigned int max_discard_sectors;
	bool synchronous;		/* SWP_SYNCHRONOUS_IO fast swap-in */
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
/* 6.9: limits are passed to blk_mq_alloc_disk(); 6.11: flags -> features. */
static inline struct gendisk *
farswap_alloc_disk(struct blk_mq_tag_set *set, const struct farswap_limits *l,
		   void *queuedata)
{
	struct queue_limits lim = {
		.logical_block_size	= l->block_size,
		.physical_block_size	= l->block_size,
		.io_min			= l->block_size,
		.max_hw_sectors		= l->max_hw_sectors,
		.max_segments		= l->max_segments,
		.max_segment_size	= l->max_segment_size,
		.chunk_sectors		= l->chunk_sectors,
		.max_hw_discard_sectors	= l->max_discard_sectors,
		.discard_granularity	= l->block_size,
	};
	struct gendisk *disk;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	if (l->synchronous)
		lim.features |= BLK_FEAT_SYNCHRONOUS;
#endif
	disk = blk_mq_alloc_disk(set, &lim, queuedata);
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
	if (!IS_ERR(disk)) {
		blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
		if (l->synchronous)
			blk_queue_flag_set(QUEUE_FLAG_SYNCHRONOUS, disk->queue);
	}
#endif
	return disk;
}
#else
/* Before 6.9: allocate, then apply each limit with its setter. */
static inline struct gendisk *
farswap_alloc_disk(struct blk_mq_tag_set *set, const struct farswap_limits *l,
		   void *queuedata)
{
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, l->block_size);
	blk_queue_physical_block_size(q, l->block_size);
	blk_queue_io_min(q, l->block_size);
	blk_queue_max_hw_sectors(q, l->max_hw_sectors);
	blk_queue_max_segments(q, l->max_segments);
	blk_queue_max_segment_size(q, l->max_segment_size);
	blk_queue_chunk_sectors(q, l->chunk_sectors);
	blk_queue_max_discard_sectors(q, l->max_discard_sectors);
	q->limits.discard_granularity = l->block_size;
	/* blk-mq disks start out rotational before 6.11. */
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	if (l->synchronous)
		blk_queue_flag_set(QUEUE_FLAG_SYNCHRONOUS, q);
#endif
	return disk;
}
#endif

/*
 * 6.2 moved the kobject of a disk's queue/ directory into the gendisk
 * (disk->queue_kobj, "block: untangle request_queue refcounting from
 * sysfs"), with a release that does nothing, so the gendisk may be freed
 * before that release has run.  With CONFIG_DEBUG_KOBJECT_RELEASE the
 * release is a timer 1-4 s after del_gendisk's last put, which then
 * fires in the freed gendisk (KASAN: slab-use-after-free in
 * __run_timers, on 6.12; 7.3's blk-sysfs.c is the same).  Run it now,
 * after del_gendisk and before the disk's last reference goes.  Before
 * 6.2 the queue's kobject was the request_queue's, which it freed.
 */
static inline void farswap_disk_run_queue_release(struct gendisk *disk)
{
#if defined(CONFIG_DEBUG_KOBJECT_RELEASE) && \
	LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	/* Zero: del_gendisk's put scheduled the release (a timer). */
	if (!kref_read(&disk->queue_kobj.kref))
		flush_delayed_work(&disk->queue_kobj.release);
#endif
}

/*
 * Before 6.3 the swap code marks a device SWP_SYNCHRONOUS_IO when its
 * block_device_operations has rw_page, and tries rw_page before building
 * a bio.  farswap's rw_page declines every call, so the I/O itself always
 * takes the blk-mq path; its presence only turns the fast swap-in on.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define FARSWAP_SYNC_VIA_RW_PAGE 1
#endif

/* 6.5 changed the block_device_operations open and release arguments. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define FARSWAP_OPEN_ARGS	struct gendisk *disk, blk_mode_t mode
#define FARSWAP_OPEN_DISK	(disk)
#define FARSWAP_RELEASE_ARGS	struct gendisk *disk
#else
#define FARSWAP_OPEN_ARGS	struct block_device *bdev, fmode_t mode
#define FARSWAP_OPEN_DISK	(bdev->bd_disk)
#define FARSWAP_RELEASE_ARGS	struct gendisk *disk, fmode_t mode
#endif

/*
 * A request's data as a scatterlist, cut and merged by the queue's
 * segment limits; 6.15 dropped blk_rq_map_sg()'s queue argument.
 */
static inline int farswap_rq_map_sg(struct request *rq,
				    struct scatterlist *sglist)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	return blk_rq_map_sg(rq, sglist);
#else
	return blk_rq_map_sg(rq->q, rq, sglist);
#endif
}

/* 6.14 dropped BLK_MQ_F_SHOULD_MERGE: merging became the default. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define FARSWAP_TAG_SET_FLAGS	0
#else
#define FARSWAP_TAG_SET_FLAGS	BLK_MQ_F_SHOULD_MERGE
#endif

/*
 * 7.2 made the NUMA node that blk_mq_ops.init_request is handed an int
 * (it was unsigned int), and blk_mq_hw_ctx.numa_node beside it an int in
 * the same release: the parameter takes its type from that field, so no
 * version number is needed.
 */
typedef typeof_member(struct blk_mq_hw_ctx, numa_node) farswap_numa_node_t;

/*
 * sysfs handlers may take their attribute const: 7.2 gave struct
 * device_attribute show_const/store_const members, which DEVICE_ATTR_RO()
 * and DEVICE_ATTR_RW() fill when the handler's attribute is const
 * (__DEVICE_ATTR_SHOW_STORE picks the member by the handler's type);
 * 7.3 did the same for struct kobj_attribute, filled by the new
 * __KOBJ_ATTR_*() initialisers (__ATTR_*() still fill show/store only).
 * The non-const members remain, but they are on their way out: farswap's
 * handlers take the const attribute wherever the kernel has the const
 * member, keyed on the initialiser that fills it.
 */
#ifdef __DEVICE_ATTR_SHOW_STORE
#define FARSWAP_DEV_ATTR		const struct device_attribute
#else
#define FARSWAP_DEV_ATTR		struct device_attribute
#endif

#ifdef __KOBJ_ATTR
#define FARSWAP_KOBJ_ATTR		const struct kobj_attribute
#define FARSWAP_KOBJ_ATTR_RO(name)	__KOBJ_ATTR_RO(name)
#else
#define FARSWAP_KOBJ_ATTR		struct kobj_attribute
#define FARSWAP_KOBJ_ATTR_RO(name)	__ATTR_RO(name)
#endif

/*
 * An RDMA device's limits (struct ib_device_attr: max_qp_wr,
 * max_send_sge, max_sge_rd, max_qp_init_rd_atom, ...) are u32 from 7.3
 * on; they were int before, never negative.  Read as u32 on every
 * kernel, so that comparisons, min_t() and formats mean the same on all.
 */
#define farswap_ib_limit(ibdev, field)	((u32)(ibdev)->attrs.field)

/*
 * lib/raid6's P+Q code (kmod/ec.c).  7.2 moved it to lib/raid/ and made
 * its calls plain functions, raid6_gen_syndrome() and raid6_recov_2data()
 * and _datap() (with RAID6_MIN_DISKS), where 6.x and 7.0-7.1 have the
 * raid6_call table and the raid6_2data_recov and raid6_datap_recov
 * pointers.  Both are for task context: 7.2's warn from softirq.
 */
#ifdef RAID6_MIN_DISKS
#define farswap_raid6_gen_syndrome	raid6_gen_syndrome
#define farswap_raid6_recov_2data	raid6_recov_2data
#define farswap_raid6_recov_datap	raid6_recov_datap
#else
static inline void farswap_raid6_gen_syndrome(int disks, size_t bytes,
					      void **ptrs)
{
	raid6_call.gen_syndrome(disks, bytes, ptrs);
}
#define farswap_raid6_recov_2data	raid6_2data_recov
#define farswap_raid6_recov_datap	raid6_datap_recov
#endif

#endif /* FARSWAP_COMPAT_H */
