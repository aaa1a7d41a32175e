// SPDX-License-Identifier: GPL-2.0
/*
 * farswap: swap to other machines' memory over RDMA.
 *
 * Module parameters (the defaults of new devices), /sys/kernel/farswap/
 * (identity and versions; attach and detach are /dev/farswap-ctl's,
 * ctldev.c), the ib_client that hears of RDMA devices going away, and an
 * optional device created at load time for boot-time swap.
 */
#include <linux/ctype.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uuid.h>

#include "compat.h"
#include "farswap.h"

DEFINE_MUTEX(farswap_devs_mutex);
DECLARE_RWSEM(farswap_teardown_rwsem);
LIST_HEAD(farswap_devs);

struct farswap_params farswap_defaults = {
	.nr_queues		= 0,	/* 0: one per CPU, at most 4 */
	.write_inflight_kb	= 512,
	.queue_depth		= 64,
	.io_timeout_ms		= 10000,
	.connect_timeout_ms	= 5000,
	.ctrl_timeout_ms	= 10000,
	.reconnect_delay_ms	= 2000,
	.keepalive_ms		= 10000,
	.ack_timeout		= 17,	/* 4.096 us << 17 = 0.54 s per try */
	.sync_io		= false,
	.integrity		= FARSWAP_TAG_SIPHASH,
	.replicas		= 0,	/* 2 with two donors or more, else 1 */
	.repair_kbps		= 32768,
	.resume_grace_ms	= 30000,
	.stage_kb		= 4096,
};

u8 farswap_host_id[FARSWAP_ID_LEN];
enum farswap_host_id_source farswap_host_id_source;

module_param_named(nr_queues, farswap_defaults.nr_queues, uint, 0444);
MODULE_PARM_DESC(nr_queues, "I/O queues per direction (blk-mq hardware queues for reads and for writes, each with an RC queue pair per donor); 0 = one per CPU, at most 4");
module_param_named(write_inflight_kb, farswap_defaults.write_inflight_kb, uint, 0444);
MODULE_PARM_DESC(write_inflight_kb, "Swap-out bytes in flight per write queue before more wait, so swap-ins are not stuck behind them; 0 = no cap (default 512)");
module_param_named(queue_depth, farswap_defaults.queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "Requests in flight per queue (default 64)");
module_param_named(io_timeout_ms, farswap_defaults.io_timeout_ms, uint, 0444);
MODULE_PARM_DESC(io_timeout_ms, "A donor whose queue completes nothing in this time while requests wait is failed (default 10000)");
module_param_named(connect_timeout_ms, farswap_defaults.connect_timeout_ms, uint, 0444);
MODULE_PARM_DESC(connect_timeout_ms, "Time allowed for each connection step to a donor (default 5000)");
module_param_named(ctrl_timeout_ms, farswap_defaults.ctrl_timeout_ms, uint, 0444);
MODULE_PARM_DESC(ctrl_timeout_ms, "Time a donor has to answer a control message (default 10000)");
module_param_named(keepalive_ms, farswap_defaults.keepalive_ms, uint, 0444);
MODULE_PARM_DESC(keepalive_ms, "Ask each live donor for its stats this often, so that one whose daemon stopped answering is failed within keepalive_ms + ctrl_timeout_ms; 0 = never (default 10000)");
module_param_named(reconnect_delay_ms, farswap_defaults.reconnect_delay_ms, uint, 0444);
MODULE_PARM_DESC(reconnect_delay_ms, "First delay before reconnecting to a failed donor; doubles up to 30 s (default 2000)");
module_param_named(ack_timeout, farswap_defaults.ack_timeout, uint, 0444);
MODULE_PARM_DESC(ack_timeout, "RDMA transport ack timeout exponent: 4.096 us << N per retry, 7 retries (default 17)");
module_param_named(sync_io, farswap_defaults.sync_io, bool, 0444);
MODULE_PARM_DESC(sync_io, "Mark new devices synchronous (SWP_SYNCHRONOUS_IO fast swap-in) (default 0)");
module_param_named(insecure_no_auth, farswap_defaults.insecure_no_auth, bool, 0444);
MODULE_PARM_DESC(insecure_no_auth, "Let devices attach without key= (their donors not authenticated: anyone answering at their addresses gets the pages); logged at warning level (default 0)");
module_param_named(encrypt, farswap_defaults.encrypt, bool, 0444);
MODULE_PARM_DESC(encrypt, "Encrypt and authenticate every page of new devices on the host (ChaCha20-Poly1305, a key made at attach that never leaves the host); the integrity check is then the cipher's tag (default 0)");

static char *donors;
module_param_named(replicas, farswap_defaults.replicas, uint, 0444);
MODULE_PARM_DESC(replicas, "Copies of every chunk on distinct donors, 1 to 3; 0 = 2 when a device has two donors or more, else 1 (default 0)");
module_param_named(stage_kb, farswap_defaults.stage_kb, uint, 0444);
MODULE_PARM_DESC(stage_kb, "Staging per write queue, KiB, preallocated at attach: a swap-out completes once copied there, and is written to the donors from there; 0 = off (default 4096)");
module_param_named(resume_grace_ms, farswap_defaults.resume_grace_ms, uint, 0444);
MODULE_PARM_DESC(resume_grace_ms, "How long the chunks whose last copy is on a donor that keeps its slabs across a restart (FARSWAP_FEAT_RESUME) wait for it to come back before those pages count as lost; their I/O waits meanwhile; 0 = never wait (default 30000)");
module_param_named(repair_kbps, farswap_defaults.repair_kbps, uint, 0444);
MODULE_PARM_DESC(repair_kbps, "Rate at which chunks that lost a replica are copied to a new one, KiB/s; 0 = no limit (default 32768)");
static char *read_policy = "fastest";
module_param(read_policy, charp, 0444);
MODULE_PARM_DESC(read_policy, "Which replica serves a read on new devices: fastest (the donor that answered fastest lately) or round-robin (every serving replica in turn) (default fastest)");
static char *integrity = "siphash";
module_param(integrity, charp, 0444);
MODULE_PARM_DESC(integrity, "Per-page integrity check of new devices: siphash (keyed, stands against a hostile donor), crc32c (faults only) or off (default siphash)");
module_param(donors, charp, 0444);
MODULE_PARM_DESC(donors, "Create farswap0 at load on these donors: ADDR[:PORT][,ADDR[:PORT]...]");
static char *size;
module_param(size, charp, 0444);
MODULE_PARM_DESC(size, "Size of the device created at load (e.g. 8G)");
static char *slab_size;
module_param(slab_size, charp, 0444);
MODULE_PARM_DESC(slab_size, "Slab size of the device created at load (default: the donors')");
static char *key;
module_param(key, charp, 0444);
MODULE_PARM_DESC(key, "Description of the logon key the device created at load authenticates its donors with (the secret stays in the keyring)");
static char *host_id;
module_param(host_id, charp, 0444);
MODULE_PARM_DESC(host_id, "This host's identity shown to donors by devices attached without host_id=, a UUID (default: random at load)");

static struct kobject *farswap_kobj;

static void farswap_remove_one(struct ib_device *ibdev, void *client_data)
{
	farswap_donors_remove_device(ibdev);
}

static struct ib_client farswap_ib_client = {
	.name	= "farswap",
	.remove	= farswap_remove_one,
};

static int farswap_check_params(void)
{
	struct farswap_params *p = &farswap_defaults;

	if (p->nr_queues > FARSWAP_MAX_IO_QUEUES / 2) {
		pr_err("nr_queues=%u: at most %d\n", p->nr_queues,
		       FARSWAP_MAX_IO_QUEUES / 2);
		return -EINVAL;
	}
	if (!p->queue_depth || p->queue_depth > FARSWAP_QUEUE_DEPTH_MAX) {
		pr_err("queue_depth=%u: 1 to %d\n", p->queue_depth,
		       FARSWAP_QUEUE_DEPTH_MAX);
		return -EINVAL;
	}
	if (p->io_timeout_ms < FARSWAP_IO_TIMEOUT_MIN_MS ||
	    p->io_timeout_ms > FARSWAP_IO_TIMEOUT_MAX_MS) {
		pr_err("io_timeout_ms=%u: %d to %d\n", p->io_timeout_ms,
		       FARSWAP_IO_TIMEOUT_MIN_MS, FARSWAP_IO_TIMEOUT_MAX_MS);
		return -EINVAL;
	}
	if (p->stage_kb > FARSWAP_STAGE_MAX_KB) {
		pr_err("stage_kb=%u: 0 (off) to %u\n", p->stage_kb,
		       FARSWAP_STAGE_MAX_KB);
		return -EINVAL;
	}
	if (p->write_inflight_kb > FARSWAP_WRITE_INFLIGHT_MAX_KB) {
		pr_err("write_inflight_kb=%u: 0 (no cap) to %u\n",
		       p->write_inflight_kb, FARSWAP_WRITE_INFLIGHT_MAX_KB);
		return -EINVAL;
	}
	if (p->connect_timeout_ms < 100 || p->ctrl_timeout_ms < 100 ||
	    p->reconnect_delay_ms < 100) {
		pr_err("connect_timeout_ms, ctrl_timeout_ms and reconnect_delay_ms must be at least 100\n");
		return -EINVAL;
	}
	if (p->keepalive_ms && p->keepalive_ms < 100) {
		pr_err("keepalive_ms=%u: 0 (off) or at least 100\n",
		       p->keepalive_ms);
		return -EINVAL;
	}
	if (p->ack_timeout < 8 || p->ack_timeout > 31) {
		pr_err("ack_timeout=%u: 8 to 31\n", p->ack_timeout);
		return -EINVAL;
	}
	if (p->replicas > FARSWAP_MAX_REPLICAS) {
		pr_err("replicas=%u: 0 to %d\n", p->replicas,
		       FARSWAP_MAX_REPLICAS);
		return -EINVAL;
	}
	if (farswap_tag_alg_parse(integrity, &p->integrity)) {
		pr_err("integrity=%s: siphash, crc32c or off\n", integrity);
		return -EINVAL;
	}
	if (farswap_read_policy_parse(read_policy, &p->read_policy)) {
		pr_err("read_policy=%s: fastest or round-robin\n", read_policy);
		return -EINVAL;
	}
	if (host_id && uuid_parse(host_id, (uuid_t *)farswap_host_id)) {
		pr_err("host_id=%s is not a UUID\n", host_id);
		return -EINVAL;
	}
	return 0;
}

/* donors= and size= at load: build the attach command they stand for. */
static void farswap_attach_at_load(void)
{
	struct farswap_reason why = { };
	char name[FARSWAP_NAME_LEN];
	char *cmd, *list, *tok, *p;
	size_t len;
	int ret;

	if (!donors && !size)
		return;
	if (!donors || !size) {
		pr_err("donors= and size= go together; no device created\n");
		return;
	}
	len = 2 * strlen(donors) + strlen(size) + 128 +
	      (slab_size ? strlen(slab_size) : 0) + (key ? strlen(key) : 0);
	cmd = kzalloc(len, GFP_KERNEL);
	list = kstrdup(donors, GFP_KERNEL);
	if (!cmd || !list)
		goto out_free;
	p = list;
	while ((tok = strsep(&p, ",")) != NULL) {
		if (*tok)
			scnprintf(cmd + strlen(cmd), len - strlen(cmd),
				  "donor=%s ", tok);
	}
	scnprintf(cmd + strlen(cmd), len - strlen(cmd), "size=%s name=farswap0",
		  size);
	if (slab_size)
		scnprintf(cmd + strlen(cmd), len - strlen(cmd),
			  " slab_size=%s", slab_size);
	if (key)
		scnprintf(cmd + strlen(cmd), len - strlen(cmd), " key=%s", key);
	ret = farswap_ctl_attach(cmd, name, &why);
	if (ret)
		pr_err("no device created at load (%d): %s\n", ret, why.msg);
out_free:
	kfree(list);
	kfree(cmd);
}

static int __init farswap_init(void)
{
	int ret;

	ret = farswap_check_params();
	if (ret)
		return ret;
	if (host_id)
		farswap_host_id_source = FARSWAP_HOST_ID_MODULE;
	else
		get_random_bytes(farswap_host_id, sizeof(farswap_host_id));

	farswap_debugfs_init();
	ret = ib_register_client(&farswap_ib_client);
	if (ret)
		goto out_debugfs;

	farswap_kobj = kobject_create_and_add("farswap", kernel_kobj);
	if (!farswap_kobj) {
		ret = -ENOMEM;
		goto out_unregister_client;
	}
	ret = sysfs_create_group(farswap_kobj, &farswap_kernel_group);
	if (ret)
		goto out_put_kobj;
	ret = farswap_ctl_register();
	if (ret)
		goto out_remove_group;

	pr_info("loaded: protocol %u-%u, host %pUb (%s)\n", FARSWAP_VERSION_MIN,
		FARSWAP_VERSION_MAX, farswap_host_id,
		farswap_host_id_source_name(farswap_host_id_source));
	farswap_attach_at_load();
	return 0;

out_remove_group:
	sysfs_remove_group(farswap_kobj, &farswap_kernel_group);
out_put_kobj:
	kobject_put(farswap_kobj);
out_unregister_client:
	ib_unregister_client(&farswap_ib_client);
out_debugfs:
	farswap_debugfs_exit();
	return ret;
}

static void __exit farswap_exit(void)
{
	/* First no new attaches, then no devices, then no RDMA client. */
	farswap_ctl_unregister();
	sysfs_remove_group(farswap_kobj, &farswap_kernel_group);
	kobject_put(farswap_kobj);
	farswap_dev_destroy_all();
	ib_unregister_client(&farswap_ib_client);
	farswap_debugfs_exit();
	pr_info("unloaded\n");
}

module_init(farswap_init);
module_exit(farswap_exit);

MODULE_AUTHOR("The farswap developers");
MODULE_DESCRIPTION("Swap to remote memory over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(FARSWAP_MODULE_VERSION);
