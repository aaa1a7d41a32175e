// SPDX-License-Identifier: GPL-2.0
/*
 * farswap: latency percentiles in debugfs, /sys/kernel/debug/farswap/
 * farswapN/latency, one line per scope (the device, then each donor by
 * address) and direction:
 *
 *   device read count=N p50_us=N p90_us=N p99_us=N p999_us=N
 *   10.0.0.2:7471 write count=N ...
 *
 * For people and the bench, not an ABI: the histograms may change shape.
 * Per-request timing is in the tracepoints (trace.h).
 *
 * Two knobs for tests widen windows that are too narrow to aim at:
 * farswap/attach_pause_ms (attach waits that long between its donors
 * going live and the device's map existing) and farswap/farswapN/
 * copy_pause_ms (a pause before each piece a migration or repair
 * copies, and before a migration's switch).  Both are 0 unless a test
 * sets them.  A third makes a fault only the host sees:
 * farswap/farswapN/fail_donor, written a donor's address as the latency
 * lines name it, fails that donor's session as a transport error would.
 */
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/seq_file.h>

#include "farswap.h"

static struct dentry *farswap_debugfs_root;
u32 farswap_attach_pause_ms;

static void farswap_lat_line(struct seq_file *m, u64 *counts,
			     const char *scope, const char *dir,
			     const struct farswap_lat_hist *h)
{
	static const u32 ppm[] = { 500000, 900000, 990000, 999000 };
	static const char * const name[] = { "p50", "p90", "p99", "p999" };
	unsigned int i;

	farswap_lat_snapshot(h, counts);
	seq_printf(m, "%s %s count=%lld", scope, dir, atomic64_read(&h->count));
	for (i = 0; i < ARRAY_SIZE(ppm); i++)
		seq_printf(m, " %s_us=%llu", name[i],
			   div_u64(farswap_lat_percentile(counts, ppm[i]),
				   NSEC_PER_USEC));
	seq_putc(m, '\n');
}

static int farswap_latency_show(struct seq_file *m, void *unused)
{
	struct farswap_dev *dev = m->private;
	unsigned int i;
	u64 *counts;

	counts = kmalloc_array(FARSWAP_LAT_BUCKETS, sizeof(*counts),
			       GFP_KERNEL);
	if (!counts)
		return -ENOMEM;
	farswap_lat_line(m, counts, "device", "read", &dev->stats.read_lat);
	farswap_lat_line(m, counts, "device", "write", &dev->stats.write_lat);
	for (i = 0; i < farswap_nr_donors(dev); i++) {
		struct farswap_donor *dn = dev->donors[i];

		if (READ_ONCE(dn->removing))
			continue;
		farswap_lat_line(m, counts, dn->name, "read",
				 &dn->stats.read_lat);
		farswap_lat_line(m, counts, dn->name, "write",
				 &dn->stats.write_lat);
	}
	kfree(counts);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(farswap_latency);

static ssize_t farswap_fail_donor_write(struct file *file,
					const char __user *ubuf, size_t len,
					loff_t *ppos)
{
	struct farswap_dev *dev = file->private_data;
	char buf[sizeof_field(struct farswap_donor, name) + 2];
	unsigned int i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	for (i = 0; i < farswap_nr_donors(dev); i++) {
		struct farswap_donor *dn = dev->donors[i];

		if (READ_ONCE(dn->removing) || strcmp(dn->name, buf))
			continue;
		farswap_donor_error(dn, "failed through debugfs (fail_donor)");
		return len;
	}
	return -ENOENT;
}

static const struct file_operations farswap_fail_donor_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = farswap_fail_donor_write,
	.llseek = noop_llseek,
};

static int farswap_stage_pause_get(void *data, u64 *val)
{
	struct farswap_dev *dev = data;

	*val = READ_ONCE(dev->stage_paused);
	return 0;
}

static int farswap_stage_pause_set(void *data, u64 val)
{
	farswap_stage_pause(data, val != 0);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(farswap_stage_pause_fops, farswap_stage_pause_get,
			 farswap_stage_pause_set, "%llu\n");

/*
 * debugfs failures are not ours to handle: the calls take an error
 * pointer as parent and do nothing, and the device works without it.
 */
void farswap_debugfs_init(void)
{
	farswap_debugfs_root = debugfs_create_dir("farswap", NULL);
	debugfs_create_u32("attach_pause_ms", 0600, farswap_debugfs_root,
			   &farswap_attach_pause_ms);
}

void farswap_debugfs_exit(void)
{
	debugfs_remove_recursive(farswap_debugfs_root);
}

/* Once the device's donors exist; they stay until the directory goes. */
void farswap_debugfs_add(struct farswap_dev *dev)
{
	dev->debugfs = debugfs_create_dir(dev->name, farswap_debugfs_root);
	debugfs_create_file("latency", 0400, dev->debugfs, dev,
			    &farswap_latency_fops);
	debugfs_create_u32("copy_pause_ms", 0600, dev->debugfs,
			   &dev->copy_pause_ms);
	debugfs_create_file("fail_donor", 0200, dev->debugfs, dev,
			    &farswap_fail_donor_fops);
	debugfs_create_file_unsafe("stage_pause", 0600, dev->debugfs, dev,
				   &farswap_stage_pause_fops);
}

/* Waits for readers of the device's files to leave. */
void farswap_debugfs_remove(struct farswap_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}
