// SPDX-License-Identifier: GPL-2.0
/*
 * farswap: a directory per donor, /sys/block/farswapN/donors/<index>/,
 * index in attach order.  One value per file, but for the counters in
 * stat, which read together as a line of KEY=VALUE fields.  Latency
 * histograms are in debugfs (debugfs.c): their shape is not an ABI.
 */
#include "compat.h"
#include "farswap.h"

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
			  "reads=%lld writes=%lld read_bytes=%lld write_bytes=%lld errors=%lld reconnects=%lld migrated_out=%lld revoked=%lld\n",
			  atomic64_read(&s->reads), atomic64_read(&s->writes),
			  atomic64_read(&s->read_bytes),
			  atomic64_read(&s->write_bytes),
			  atomic64_read(&s->errors),
			  atomic64_read(&s->reconnects),
			  atomic64_read(&s->migrated_out),
			  atomic64_read(&s->revoked));
}
static struct kobj_attribute stat_attr = FARSWAP_KOBJ_ATTR_RO(stat);

static struct attribute *farswap_donor_attrs[] = {
	&address_attr.attr,
	&state_attr.attr,
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

static int farswap_donor_dir_add(struct farswap_dev *dev,
				 struct farswap_donor *dn)
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

/* Before the donors go: no show function runs once this returns. */
void farswap_donor_dirs_remove(struct farswap_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_donors; i++) {
		struct farswap_donor *dn = dev->donors[i];

		if (!dn || !dn->dir)
			continue;
		kobject_del(dn->dir);
		kobject_put(dn->dir);
		dn->dir = NULL;
	}
	kobject_put(dev->donors_kobj);	/* NULL is fine */
	dev->donors_kobj = NULL;
}
