// SPDX-License-Identifier: GPL-2.0
/*
 * farswap's sysfs, in the order of docs/ABI/testing: sysfs-kernel-farswap
 * (/sys/kernel/farswap/, the module's identity and versions, a group
 * main.c adds at load), then sysfs-block-farswap (/sys/block/farswapN/
 * farswap/, a group of the disk added with it, and a directory per donor,
 * /sys/block/farswapN/donors/<index>/).
 */
#include <linux/blkdev.h>
#include <linux/sysfs.h>

#include "compat.h"
#include "farswap.h"

/*
 * sysfs: /sys/kernel/farswap/
 */

static ssize_t host_id_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%pUb\n", farswap_host_id);
}
static struct kobj_attribute host_id_attr = FARSWAP_KOBJ_ATTR_RO(host_id);

static ssize_t version_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			    char *buf)
{
	return sysfs_emit(buf, "module=%s protocol=%u-%u\n",
			  FARSWAP_MODULE_VERSION, FARSWAP_VERSION_MIN,
			  FARSWAP_VERSION_MAX);
}
static struct kobj_attribute version_attr = FARSWAP_KOBJ_ATTR_RO(version);

static struct attribute *farswap_kernel_attrs[] = {
	&host_id_attr.attr,
	&version_attr.attr,
	NULL,
};

const struct attribute_group farswap_kernel_group = {
	.attrs = farswap_kernel_attrs,
};

/*
 * sysfs: /sys/block/farswapN/farswap/
 */

static struct farswap_dev *farswap_dev_of(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

static ssize_t slab_size_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  farswap_slab_bytes(&farswap_dev_of(d)->geo));
}
static DEVICE_ATTR_RO(slab_size);

/* The donor slabs the device holds and the chunk slots in them. */
static ssize_t dev_slabs_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			      char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	u32 held = 0, used = 0, reclaiming = 0;
	struct farswap_rslab *rs;
	unsigned long flags;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(rs, &dev->rslabs, node) {
		held++;
		used += rs->slots.used;
		reclaiming += rs->state == FARSWAP_RSLAB_RECLAIMING;
	}
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	return sysfs_emit(buf, "held=%u slots=%u used=%u reclaiming=%u\n", held,
			  held * dev->geo.chunks_per_slab, used, reclaiming);
}
/* dev_: a donor's slabs is slabs_show, below. */
static DEVICE_ATTR(slabs, 0444, dev_slabs_show, NULL);

static ssize_t chunks_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			   char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	u32 count[FARSWAP_CHUNK_NR_STATES] = {};
	u32 i;

	for (i = 0; i < dev->geo.nr_chunks; i++)
		count[READ_ONCE(dev->chunks[i].state)]++;
	return sysfs_emit(buf,
			  "total=%u unbound=%u binding=%u bound=%u migrating=%u\n",
			  dev->geo.nr_chunks, count[FARSWAP_CHUNK_UNBOUND],
			  count[FARSWAP_CHUNK_BINDING],
			  count[FARSWAP_CHUNK_BOUND],
			  count[FARSWAP_CHUNK_MIGRATING] +
			  count[FARSWAP_CHUNK_SWITCHING]);
}
static DEVICE_ATTR_RO(chunks);

static ssize_t sync_io_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", farswap_dev_of(d)->params.sync_io);
}
static DEVICE_ATTR_RO(sync_io);

static ssize_t io_timeout_ms_show(struct device *d,
				  FARSWAP_DEV_ATTR *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", farswap_dev_of(d)->params.io_timeout_ms);
}

static ssize_t io_timeout_ms_store(struct device *d,
				   FARSWAP_DEV_ATTR *attr,
				   const char *buf, size_t count)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	unsigned int ms;

	if (kstrtouint(buf, 10, &ms) || ms < FARSWAP_IO_TIMEOUT_MIN_MS ||
	    ms > FARSWAP_IO_TIMEOUT_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(dev->params.io_timeout_ms, ms);
	blk_queue_rq_timeout(dev->disk->queue, msecs_to_jiffies(ms));
	return count;
}
static DEVICE_ATTR_RW(io_timeout_ms);

/* Which replica serves a read; see enum farswap_read_policy. */
static ssize_t read_policy_show(struct device *d,
				FARSWAP_DEV_ATTR *attr, char *buf)
{
	enum farswap_read_policy p =
		READ_ONCE(farswap_dev_of(d)->params.read_policy);

	return sysfs_emit(buf, "%s\n", farswap_read_policy_name(p));
}

static ssize_t read_policy_store(struct device *d,
				 FARSWAP_DEV_ATTR *attr,
				 const char *buf, size_t count)
{
	enum farswap_read_policy p;

	if (farswap_read_policy_parse(buf, &p))
		return -EINVAL;
	WRITE_ONCE(farswap_dev_of(d)->params.read_policy, p);
	return count;
}
static DEVICE_ATTR_RW(read_policy);

/* The re-replication rate, KiB/s; 0: no limit.  Takes effect per chunk. */
static ssize_t repair_kbps_show(struct device *d,
				FARSWAP_DEV_ATTR *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(farswap_dev_of(d)->params.repair_kbps));
}

static ssize_t repair_kbps_store(struct device *d,
				 FARSWAP_DEV_ATTR *attr,
				 const char *buf, size_t count)
{
	unsigned int kbps;

	if (kstrtouint(buf, 10, &kbps))
		return -EINVAL;
	WRITE_ONCE(farswap_dev_of(d)->params.repair_kbps, kbps);
	return count;
}
static DEVICE_ATTR_RW(repair_kbps);

/*
 * The swap-out bytes in flight per write queue, KiB; 0: no cap.  A lower
 * cap lets the writes above it finish; a higher one lets waiting writes
 * go at once.
 */
static ssize_t write_inflight_kb_show(struct device *d,
				      FARSWAP_DEV_ATTR *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(farswap_dev_of(d)->params.write_inflight_kb));
}

static ssize_t write_inflight_kb_store(struct device *d,
				       FARSWAP_DEV_ATTR *attr,
				       const char *buf, size_t count)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	unsigned int kb;

	if (kstrtouint(buf, 10, &kb) || kb > FARSWAP_WRITE_INFLIGHT_MAX_KB)
		return -EINVAL;
	WRITE_ONCE(dev->params.write_inflight_kb, kb);
	/*
	 * Writes refused under the old cap would otherwise wait for a
	 * completion on their queue, which may be long behind a slow donor.
	 */
	if (READ_ONCE(dev->write_throttled))
		blk_mq_run_hw_queues(dev->disk->queue, true);
	return count;
}
static DEVICE_ATTR_RW(write_inflight_kb);

/*
 * Chunks with damaged pages to rewrite, or fewer serving replicas than
 * the device wants: not whole until the repair did (a bound chunk
 * farswap_replica_degraded() judges so).
 */
static u32 farswap_degraded_chunks(struct farswap_dev *dev)
{
	unsigned int want = dev->params.replicas;
	u32 i, degraded = 0;

	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		struct farswap_replica_set set;
		unsigned long flags;

		spin_lock_irqsave(&chunk->lock, flags);
		if (chunk->state == FARSWAP_CHUNK_BOUND) {
			farswap_chunk_replicas_locked(chunk, &set);
			degraded += farswap_replica_degraded(&set, want);
		}
		spin_unlock_irqrestore(&chunk->lock, flags);
	}
	return degraded;
}

/* Bound chunks two of whose replicas share a failure domain. */
static u32 farswap_colocated_chunks(struct farswap_dev *dev)
{
	u32 i, colocated = 0;

	for (i = 0; i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];
		unsigned long flags;

		spin_lock_irqsave(&chunk->lock, flags);
		colocated += farswap_chunk_colocated_locked(chunk);
		spin_unlock_irqrestore(&chunk->lock, flags);
	}
	return colocated;
}

/* Redundancy: what a donor's death costs. */
static ssize_t replicas_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			     char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	struct farswap_dev_stats *s = &dev->stats;

	return sysfs_emit(buf, "replicas=%u degraded=%u repaired=%lld repair_bytes=%lld repair_failures=%lld failovers=%lld heals=%lld lost_pages=%lld colocated=%u domains=%u spread=%lld healed_pages=%lld\n",
			  dev->params.replicas, farswap_degraded_chunks(dev),
			  atomic64_read(&s->repaired),
			  atomic64_read(&s->repair_bytes),
			  atomic64_read(&s->repair_failures),
			  atomic64_read(&s->failovers),
			  atomic64_read(&s->heals),
			  atomic64_read(&s->lost_pages),
			  farswap_colocated_chunks(dev),
			  farswap_dev_nr_domains(dev),
			  atomic64_read(&s->spread),
			  atomic64_read(&s->healed_pages));
}
static DEVICE_ATTR_RO(replicas);

/* The integrity check: never its keys. */
static ssize_t integrity_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			      char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	u64 pages = dev->geo.size >> FARSWAP_PAGE_SHIFT;

	return sysfs_emit(buf, "alg=%s checked=%lld mismatches=%lld bytes_per_page=%zu table_bytes=%llu\n",
			  farswap_check_name(dev),
			  atomic64_read(&dev->stats.checked),
			  atomic64_read(&dev->stats.mismatches),
			  farswap_check_bytes_per_page(dev),
			  pages * farswap_check_bytes_per_page(dev));
}
static DEVICE_ATTR_RO(integrity);

/*
 * Encryption: the cipher and the host memory its write bounce pages take
 * (one request's worth per write request), never its key.
 */
static ssize_t encrypt_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			    char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	u64 bounce = (u64)dev->params.nr_queues * dev->params.queue_depth *
		     FARSWAP_SEAL_IO_BYTES;

	return sysfs_emit(buf, "alg=%s bounce_bytes=%llu\n",
			  dev->params.encrypt ? FARSWAP_SEAL_ALG : "off",
			  dev->params.encrypt ? bounce : 0);
}
static DEVICE_ATTR_RO(encrypt);

/*
 * How donors are authenticated: the algorithm and how many donor keys
 * are pinned, never a key or its name.
 */
static ssize_t auth_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			 char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);

	if (!dev->auth_key.len)
		return sysfs_emit(buf, "auth=none\n");
	return sysfs_emit(buf, "auth=hmac-sha256 pinned=%u\n",
			  dev->nr_pair_keys);
}
static DEVICE_ATTR_RO(auth);

/* The identity the device's sessions show donors, fixed at attach. */
static ssize_t dev_host_id_show(struct device *d, FARSWAP_DEV_ATTR *attr,
				char *buf)
{
	return sysfs_emit(buf, "%pUb\n", farswap_dev_of(d)->host_id);
}
/* dev_: the module's host_id is host_id_show, above. */
static DEVICE_ATTR(host_id, 0444, dev_host_id_show, NULL);

/* attach, module or random: farswap_host_id_source_name(). */
static ssize_t host_id_source_show(struct device *d, FARSWAP_DEV_ATTR *attr,
				   char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);

	return sysfs_emit(buf, "%s\n",
			  farswap_host_id_source_name(dev->host_id_source));
}
static DEVICE_ATTR_RO(host_id_source);

/*
 * Staging (stage.c): its slots per write queue, the host memory they
 * take (pages and commands), and how many hold a write not yet written
 * now.
 */
static ssize_t stage_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			  char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);

	return sysfs_emit(buf, "slots=%u slot_bytes=%u bytes=%llu used=%u\n",
			  dev->stage ? dev->stage[0].slots.nr : 0,
			  FARSWAP_STAGE_SLOT_BYTES, farswap_stage_bytes(dev),
			  farswap_stage_used(dev));
}
static DEVICE_ATTR_RO(stage);

static ssize_t dev_stat_show(struct device *d, FARSWAP_DEV_ATTR *attr,
			     char *buf)
{
	struct farswap_dev *dev = farswap_dev_of(d);
	struct farswap_dev_stats *s = &dev->stats;
	unsigned int i;
	s64 inflight = 0;

	for (i = 0; dev->write_inflight && i < dev->params.nr_queues; i++)
		inflight += atomic64_read(&dev->write_inflight[i]);

	/* Requests and bytes are the block layer's, in /sys/block/farswapN/stat. */
	return sysfs_emit(buf,
			  "zero_reads=%lld errors=%lld binds=%lld bind_failures=%lld slab_allocs=%lld releases=%lld migrations=%lld lost_pages=%lld write_throttled=%lld held=%lld write_inflight_bytes=%lld staged=%lld stage_reads=%lld stage_full=%lld stage_retries=%lld stage_lost=%lld\n",
			  atomic64_read(&s->zero_reads),
			  atomic64_read(&s->errors), atomic64_read(&s->binds),
			  atomic64_read(&s->bind_failures),
			  atomic64_read(&s->slab_allocs),
			  atomic64_read(&s->releases),
			  atomic64_read(&s->migrations),
			  atomic64_read(&s->lost_pages),
			  atomic64_read(&s->write_throttled),
			  atomic64_read(&s->held), inflight,
			  atomic64_read(&s->staged),
			  atomic64_read(&s->stage_reads),
			  atomic64_read(&s->stage_full),
			  atomic64_read(&s->stage_retries),
			  atomic64_read(&s->stage_lost));
}
static DEVICE_ATTR(stat, 0444, dev_stat_show, NULL);

static struct attribute *farswap_disk_attrs[] = {
	&dev_attr_slab_size.attr,
	&dev_attr_slabs.attr,
	&dev_attr_chunks.attr,
	&dev_attr_sync_io.attr,
	&dev_attr_io_timeout_ms.attr,
	&dev_attr_read_policy.attr,
	&dev_attr_stat.attr,
	&dev_attr_integrity.attr,
	&dev_attr_encrypt.attr,
	&dev_attr_stage.attr,
	&dev_attr_repair_kbps.attr,
	&dev_attr_write_inflight_kb.attr,
	&dev_attr_auth.attr,
	&dev_attr_replicas.attr,
	&dev_attr_host_id.attr,
	&dev_attr_host_id_source.attr,
	NULL,
};

static const struct attribute_group farswap_disk_group = {
	.name	= "farswap",
	.attrs	= farswap_disk_attrs,
};

const struct attribute_group *farswap_disk_groups[] = {
	&farswap_disk_group,
	NULL,
};

/*
 * sysfs: /sys/block/farswapN/donors/<index>/
 *
 * A directory per donor, index in attach order.  One value per file, but
 * for the counters in stat, which read together as a line of KEY=VALUE
 * fields.  Latency histograms are in debugfs (debugfs.c): their shape is
 * not an ABI.
 */

/*
 * Separate from the donor, which detach frees: a kobject lives until its
 * last reference goes, possibly later than kobject_put() (with
 * CONFIG_DEBUG_KOBJECT_RELEASE).  The donor pointer is used only by show
 * functions, and kobject_del() waits for those to return.
 */
struct farswap_donor_dir {
	struct kobject kobj;
	struct farswap_donor *donor;
};

static struct farswap_donor *farswap_donor_of(struct kobject *kobj)
{
	return container_of(kobj, struct farswap_donor_dir, kobj)->donor;
}

static ssize_t address_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", farswap_donor_of(kobj)->name);
}
static struct kobj_attribute address_attr = FARSWAP_KOBJ_ATTR_RO(address);

static ssize_t state_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			  char *buf)
{
	struct farswap_donor *dn = farswap_donor_of(kobj);

	return sysfs_emit(buf, "%s\n",
			  farswap_donor_state_name(farswap_donor_state(dn)));
}
static struct kobj_attribute state_attr = FARSWAP_KOBJ_ATTR_RO(state);

/*
 * Why the last connect or session failed: a wrong key, a stopped
 * farswapd and a dark link each say so, through every failed attempt
 * after; cleared when a session goes live.
 */
static ssize_t last_error_show(struct kobject *kobj,
			       FARSWAP_KOBJ_ATTR *attr, char *buf)
{
	char msg[FARSWAP_ERR_LEN];

	farswap_donor_last_error(farswap_donor_of(kobj), msg, sizeof(msg));
	return sysfs_emit(buf, "%s\n", msg);
}
static struct kobj_attribute last_error_attr = FARSWAP_KOBJ_ATTR_RO(last_error);

/* Empty until the donor tells its failure domain. */
static ssize_t domain_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			   char *buf)
{
	struct farswap_donor *dn = farswap_donor_of(kobj);
	char domain[FARSWAP_DOMAIN_LEN + 1];
	unsigned long flags;

	spin_lock_irqsave(&dn->dev->dom_lock, flags);
	strscpy(domain, dn->domain, sizeof(domain));
	spin_unlock_irqrestore(&dn->dev->dom_lock, flags);
	return sysfs_emit(buf, "%s\n", domain);
}
static struct kobj_attribute domain_attr = FARSWAP_KOBJ_ATTR_RO(domain);

static ssize_t slabs_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&farswap_donor_of(kobj)->stats.slabs));
}
static struct kobj_attribute slabs_attr = FARSWAP_KOBJ_ATTR_RO(slabs);

static ssize_t free_slabs_show(struct kobject *kobj,
			       FARSWAP_KOBJ_ATTR *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(farswap_donor_of(kobj)->slabs_free));
}
static struct kobj_attribute free_slabs_attr = FARSWAP_KOBJ_ATTR_RO(free_slabs);

static ssize_t total_slabs_show(struct kobject *kobj,
				FARSWAP_KOBJ_ATTR *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(farswap_donor_of(kobj)->slabs_total));
}
static struct kobj_attribute total_slabs_attr = FARSWAP_KOBJ_ATTR_RO(total_slabs);

static ssize_t stat_show(struct kobject *kobj, FARSWAP_KOBJ_ATTR *attr,
			 char *buf)
{
	struct farswap_donor_stats *s = &farswap_donor_of(kobj)->stats;

	return sysfs_emit(buf,
			  "reads=%lld writes=%lld read_bytes=%lld write_bytes=%lld errors=%lld reconnects=%lld migrated_out=%lld revoked=%lld resumed=%lld resume_refused=%lld\n",
			  atomic64_read(&s->reads), atomic64_read(&s->writes),
			  atomic64_read(&s->read_bytes),
			  atomic64_read(&s->write_bytes),
			  atomic64_read(&s->errors),
			  atomic64_read(&s->reconnects),
			  atomic64_read(&s->migrated_out),
			  atomic64_read(&s->revoked),
			  atomic64_read(&s->resumed),
			  atomic64_read(&s->resume_refused));
}
static struct kobj_attribute stat_attr = FARSWAP_KOBJ_ATTR_RO(stat);

static struct attribute *farswap_donor_attrs[] = {
	&address_attr.attr,
	&state_attr.attr,
	&last_error_attr.attr,
	&domain_attr.attr,
	&slabs_attr.attr,
	&free_slabs_attr.attr,
	&total_slabs_attr.attr,
	&stat_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(farswap_donor);

static void farswap_donor_dir_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct farswap_donor_dir, kobj));
}

/* Not const: 6.1's kobject_init_and_add() takes a plain pointer. */
static struct kobj_type farswap_donor_ktype = {
	.release	= farswap_donor_dir_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= farswap_donor_groups,
};

int farswap_donor_dir_add(struct farswap_dev *dev, struct farswap_donor *dn)
{
	struct farswap_donor_dir *dir;
	int ret;

	dir = kzalloc(sizeof(*dir), GFP_KERNEL);
	if (!dir)
		return -ENOMEM;
	dir->donor = dn;
	ret = kobject_init_and_add(&dir->kobj, &farswap_donor_ktype,
				   dev->donors_kobj, "%u", dn->index);
	if (ret) {
		kobject_put(&dir->kobj);	/* frees dir */
		return ret;
	}
	dn->dir = &dir->kobj;
	kobject_uevent(dn->dir, KOBJ_ADD);
	return 0;
}

/**
 * farswap_donor_dirs_add - create /sys/block/farswapN/donors/
 * @dev: a device whose disk is added
 *
 * On failure whatever was made stays for farswap_donor_dirs_remove().
 */
int farswap_donor_dirs_add(struct farswap_dev *dev)
{
	unsigned int i;
	int ret;

	dev->donors_kobj = kobject_create_and_add("donors",
						  &disk_to_dev(dev->disk)->kobj);
	if (!dev->donors_kobj)
		return -ENOMEM;
	for (i = 0; i < dev->nr_donors; i++) {
		ret = farswap_donor_dir_add(dev, dev->donors[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Before the donor goes: no show function of it runs once this returns. */
void farswap_donor_dir_remove(struct farswap_donor *dn)
{
	if (!dn || !dn->dir)
		return;
	kobject_del(dn->dir);
	kobject_put(dn->dir);
	dn->dir = NULL;
}

/* Before the donors go: no show function runs once this returns. */
void farswap_donor_dirs_remove(struct farswap_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++)
		farswap_donor_dir_remove(dev->donors[i]);
	kobject_put(dev->donors_kobj);	/* NULL is fine */
	dev->donors_kobj = NULL;
}
