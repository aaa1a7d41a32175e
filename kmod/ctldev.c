// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/farswap-ctl: the control device.
 *
 * A caller opens it, write()s one command (the option language of args.h)
 * and read()s the result from the same open file:
 *
 *   name=farswapN\n        the command succeeded (the device it made or removed)
 *   error=<reason>\n       it failed; the write returned the error code
 *
 * The result belongs to the open file, so callers that attach and detach
 * at the same time never see each other's.  The command's write returns
 * only when the command is done, and a write starts a fresh result.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "farswap.h"

/*
 * Longest command accepted: 16 donors in brackets with ports and scopes
 * and every option take under 1.5 KiB; farswapctl builds at most 4 KiB.
 */
#define FARSWAP_CTL_CMD_MAX	4096

struct farswap_ctl_file {
	struct mutex lock;	/* one command at a time per open file */
	char result[sizeof("error=\n") + sizeof_field(struct farswap_reason, msg)];
	size_t len;
	loff_t pos;		/* how much of @result has been read */
};

/* Defaults of a new device: the module parameters. */
static void farswap_default_args(struct farswap_attach_args *a)
{
	memset(a, 0, sizeof(*a));
	a->nr_queues = farswap_defaults.nr_queues ?:
		       min_t(unsigned int, num_online_cpus(), 4);
	a->queue_depth = farswap_defaults.queue_depth;
	a->io_timeout_ms = farswap_defaults.io_timeout_ms;
	a->sync_io = farswap_defaults.sync_io;
	a->integrity = farswap_defaults.integrity;
	a->encrypt = farswap_defaults.encrypt;
	a->insecure_no_auth = farswap_defaults.insecure_no_auth;
	a->read_policy = farswap_defaults.read_policy;
	a->replicas = farswap_defaults.replicas;
	a->stage_kb = farswap_defaults.stage_kb;
	memcpy(a->host_id, farswap_host_id, FARSWAP_ID_LEN);
	a->host_id_source = farswap_host_id_source;
}

/**
 * farswap_ctl_attach - parse an attach command's options and attach
 * @opts: the options, modified in place
 * @name_out: receives the new device's name (FARSWAP_NAME_LEN bytes)
 * @why: receives the reason of a failure
 *
 * Return: 0 or a negative error code.
 */
int farswap_ctl_attach(char *opts, char *name_out, struct farswap_reason *why)
{
	struct farswap_attach_args *a;
	int ret;

	a = kmalloc(sizeof(*a), GFP_KERNEL);
	if (!a) {
		farswap_reason_set(why, "out of memory");
		return -ENOMEM;
	}
	farswap_default_args(a);
	ret = farswap_parse_attach(opts, a, why->msg, sizeof(why->msg));
	if (ret)
		pr_err("attach: %s\n", why->msg);
	else
		ret = farswap_dev_attach(a, name_out, why);
	kfree(a);
	return ret;
}

static int farswap_ctl_detach(char *opts, char *name_out,
			      struct farswap_reason *why)
{
	int ret;

	ret = farswap_parse_detach(opts, name_out, why->msg, sizeof(why->msg));
	if (!ret)
		ret = farswap_dev_detach(name_out, why);
	if (ret)
		pr_err("detach: %s\n", why->msg);
	return ret;
}

/* donor_add and donor_remove: name=farswapN donor=ADDR. */
static int farswap_ctl_donor(enum farswap_cmd_op op, char *opts,
			     char *name_out, struct farswap_reason *why)
{
	const char *verb = op == FARSWAP_CMD_DONOR_ADD ? "donor_add" :
							 "donor_remove";
	struct sockaddr_storage addr;
	int ret;

	ret = farswap_parse_donor_cmd(opts, name_out, &addr, why->msg,
				      sizeof(why->msg));
	if (!ret && op == FARSWAP_CMD_DONOR_ADD)
		ret = farswap_dev_donor_add(name_out, &addr, why);
	else if (!ret)
		ret = farswap_dev_donor_remove(name_out, &addr, why);
	if (ret)
		pr_err("%s: %s\n", verb, why->msg);
	return ret;
}

/**
 * farswap_ctl_run - carry out one control command
 * @cmd: "[attach] OPTIONS", "detach name=farswapN", or "donor_add" or
 *	"donor_remove name=farswapN donor=ADDR", modified in place
 * @name_out: receives the device's name (FARSWAP_NAME_LEN bytes)
 * @why: receives the reason of a failure
 *
 * Return: 0 or a negative error code.
 */
int farswap_ctl_run(char *cmd, char *name_out, struct farswap_reason *why)
{
	enum farswap_cmd_op op;

	name_out[0] = '\0';
	why->msg[0] = '\0';
	op = farswap_cmd_op(&cmd);
	switch (op) {
	case FARSWAP_CMD_DETACH:
		return farswap_ctl_detach(cmd, name_out, why);
	case FARSWAP_CMD_DONOR_ADD:
	case FARSWAP_CMD_DONOR_REMOVE:
		return farswap_ctl_donor(op, cmd, name_out, why);
	default:
		return farswap_ctl_attach(cmd, name_out, why);
	}
}

static void farswap_ctl_set_result(struct farswap_ctl_file *cf, int ret,
				   const char *name,
				   const struct farswap_reason *why)
{
	if (ret)
		cf->len = scnprintf(cf->result, sizeof(cf->result),
				    "error=%s\n",
				    why->msg[0] ? why->msg : "failed");
	else
		cf->len = scnprintf(cf->result, sizeof(cf->result),
				    "name=%s\n", name);
	cf->pos = 0;
}

static int farswap_ctl_open(struct inode *inode, struct file *file)
{
	struct farswap_ctl_file *cf;

	cf = kzalloc(sizeof(*cf), GFP_KERNEL);
	if (!cf)
		return -ENOMEM;
	mutex_init(&cf->lock);
	file->private_data = cf;
	/* A stream: no file position, reads follow the last write. */
	return stream_open(inode, file);
}

static int farswap_ctl_release(struct inode *inode, struct file *file)
{
	struct farswap_ctl_file *cf = file->private_data;

	mutex_destroy(&cf->lock);
	kfree(cf);
	return 0;
}

/* One write is one whole command; it returns the command's error code. */
static ssize_t farswap_ctl_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct farswap_ctl_file *cf = file->private_data;
	struct farswap_reason why = { };
	char name[FARSWAP_NAME_LEN] = "";
	char *cmd = NULL;
	int ret;

	if (mutex_lock_interruptible(&cf->lock))
		return -ERESTARTSYS;
	if (count > FARSWAP_CTL_CMD_MAX) {
		farswap_reason_set(&why, "command longer than %d bytes",
				   FARSWAP_CTL_CMD_MAX);
		ret = -EINVAL;
		goto out_set_result;
	}
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd)) {
		ret = PTR_ERR(cmd);
		cmd = NULL;
		farswap_reason_set(&why, "cannot read the command (%d)", ret);
		goto out_set_result;
	}
	ret = farswap_ctl_run(cmd, name, &why);

out_set_result:
	farswap_ctl_set_result(cf, ret, name, &why);
	mutex_unlock(&cf->lock);
	kfree(cmd);
	return ret ?: count;
}

/* The result of this file's last command; nothing before the first. */
static ssize_t farswap_ctl_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct farswap_ctl_file *cf = file->private_data;
	ssize_t n;

	if (mutex_lock_interruptible(&cf->lock))
		return -ERESTARTSYS;
	n = simple_read_from_buffer(ubuf, count, &cf->pos, cf->result,
				    cf->len);
	mutex_unlock(&cf->lock);
	return n;
}

static const struct file_operations farswap_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= farswap_ctl_open,
	.release	= farswap_ctl_release,
	.read		= farswap_ctl_read,
	.write		= farswap_ctl_write,
};

static struct miscdevice farswap_ctl_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "farswap-ctl",
	.mode	= 0600,
	.fops	= &farswap_ctl_fops,
};

int farswap_ctl_register(void)
{
	return misc_register(&farswap_ctl_misc);
}

void farswap_ctl_unregister(void)
{
	misc_deregister(&farswap_ctl_misc);
}
