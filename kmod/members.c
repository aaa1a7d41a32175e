// SPDX-License-Identifier: GPL-2.0
/*
 * A live device's donors: adding one and removing one without a detach
 * (the control device's donor_add and donor_remove, farswapctl donor).
 *
 * The donors array only grows: an added donor is connected first, then
 * stored in the next slot before the count grows (farswap_nr_donors()),
 * so that placement, repair and sysfs walk whole entries.  A removed
 * donor keeps its slot, stopped, until detach frees it; it must hold no
 * slab of the device when it goes (a drain moved its chunks away, or it
 * died and they were unbound), so removal never loses a page.
 */
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "farswap.h"
#include "log.h"

/*
 * The device @name, marked changing so that a detach (and another change)
 * waits: or NULL with @why said.  Called with farswap_devs_mutex held.
 */
static struct farswap_dev *farswap_members_begin(const char *name,
						 struct farswap_reason *why,
						 int *err)
{
	struct farswap_dev *dev;
	const char *busy = NULL;

	lockdep_assert_held(&farswap_devs_mutex);
	dev = farswap_dev_find(name);
	if (!dev) {
		farswap_reason_set(why, "no device %s", name);
		*err = -ENODEV;
		return NULL;
	}
	spin_lock(&dev->open_lock);
	if (dev->detaching)
		busy = "is being attached or detached";
	else if (dev->changing)
		busy = "is changing its donors already";
	else
		dev->changing = true;
	spin_unlock(&dev->open_lock);
	if (busy) {
		farswap_reason_set(why, "%s %s", name, busy);
		*err = -EBUSY;
		return NULL;
	}
	return dev;
}

static void farswap_members_end(struct farswap_dev *dev)
{
	mutex_lock(&farswap_devs_mutex);
	spin_lock(&dev->open_lock);
	dev->changing = false;
	spin_unlock(&dev->open_lock);
	mutex_unlock(&farswap_devs_mutex);
}

/* A donor at @addr of any device (not one removed), or NULL. */
static struct farswap_donor *farswap_donor_at(const struct sockaddr_storage *addr,
					      struct farswap_dev **owner)
{
	struct farswap_dev *dev;
	unsigned int i;

	lockdep_assert_held(&farswap_devs_mutex);
	list_for_each_entry(dev, &farswap_devs, node) {
		for (i = 0; i < farswap_nr_donors(dev); i++) {
			struct farswap_donor *d = dev->donors[i];

			if (!READ_ONCE(d->removing) &&
			    farswap_addr_equal(addr, &d->addr)) {
				*owner = dev;
				return d;
			}
		}
	}
	return NULL;
}

/* Stop a donor no device uses, and free it. */
static void farswap_donor_discard(struct farswap_donor *donor)
{
	farswap_donor_stop(donor);
	farswap_donor_cancel_work(donor);
	farswap_donor_destroy(donor);
}

/**
 * farswap_dev_donor_add - add a donor to a live device
 * @name: the device
 * @addr: the donor's address
 * @why: receives the reason of a failure
 *
 * Connects the donor first: one that refuses for good (a wrong key,
 * another protocol or slab size) is not added.  One that does not answer
 * is added all the same and reconnected in the background, as a degraded
 * attach leaves it.  Once live it takes new slabs, and the chunks short of
 * a replica get theirs on it.
 *
 * Return: 0 or a negative error code.
 */
int farswap_dev_donor_add(const char *name,
			  const struct sockaddr_storage *addr,
			  struct farswap_reason *why)
{
	struct farswap_donor *donor, *other;
	struct farswap_dev *dev, *owner;
	char domain[FARSWAP_DOMAIN_LEN + 1], err[FARSWAP_ERR_LEN];
	unsigned long flags;
	unsigned int index;
	int ret = 0;

	mutex_lock(&farswap_devs_mutex);
	dev = farswap_members_begin(name, why, &ret);
	if (!dev) {
		mutex_unlock(&farswap_devs_mutex);
		return ret;
	}
	other = farswap_donor_at(addr, &owner);
	index = dev->nr_donors;
	if (other)
		farswap_reason_set(why, "donor %s already serves %s",
				   other->name, owner->name);
	else if (index == FARSWAP_MAX_DONORS)
		farswap_reason_set(why, "%s has had %d donors, the most a device can (removed ones count until detach)",
				   name, FARSWAP_MAX_DONORS);
	mutex_unlock(&farswap_devs_mutex);
	if (other || index == FARSWAP_MAX_DONORS) {
		ret = other ? -EEXIST : -ENOSPC;
		goto out_end;
	}

	donor = farswap_donor_create(dev, index, addr);
	if (!donor) {
		farswap_reason_set(why, "out of memory");
		ret = -ENOMEM;
		goto out_end;
	}
	ret = farswap_donor_connect_first(donor);
	if (ret && !farswap_connect_error_passes(ret)) {
		farswap_reason_set(why, "cannot add donor %s: %s", donor->name,
				   farswap_donor_error_text(donor, err,
							    sizeof(err)));
		farswap_donor_discard(donor);
		goto out_end;
	}

	mutex_lock(&farswap_devs_mutex);
	other = farswap_donor_at(addr, &owner);
	if (!other) {
		dev->donors[index] = donor;
		/* Stored before counted: see farswap_nr_donors(). */
		smp_store_release(&dev->nr_donors, index + 1);
	}
	mutex_unlock(&farswap_devs_mutex);
	if (other) {
		/* Another device's attach took it while this one connected. */
		farswap_reason_set(why, "donor %s already serves %s",
				   other->name, owner->name);
		farswap_donor_discard(donor);
		ret = -EEXIST;
		goto out_end;
	}

	/* Its domain, told while connecting, now numbered with the others'. */
	spin_lock_irqsave(&dev->dom_lock, flags);
	strscpy(domain, donor->domain, sizeof(domain));
	spin_unlock_irqrestore(&dev->dom_lock, flags);
	farswap_dev_set_domain(donor, domain);
	if (farswap_donor_dir_add(dev, donor))
		farswap_donor_pr_warn(donor, ": no sysfs directory (out of memory); it serves all the same\n");

	if (farswap_donor_state(donor) == FARSWAP_DONOR_LIVE) {
		farswap_donor_pr_info(donor, " added to %s\n", dev->name);
		farswap_chunks_want_room(dev);
		/* Chunks short of a replica take one here. */
		queue_work(dev->wq, &dev->repair_work);
	} else {
		farswap_donor_pr_warn(donor, " added to %s, but did not answer: %s; reconnecting in the background\n",
				      dev->name,
				      farswap_donor_error_text(donor, err,
							       sizeof(err)));
		farswap_donor_connect_later(donor);
	}
	ret = 0;
out_end:
	farswap_members_end(dev);
	return ret;
}

/* Slabs of @donor the device holds. */
static unsigned int farswap_donor_held(struct farswap_dev *dev,
				       struct farswap_donor *donor)
{
	struct farswap_rslab *rs;
	unsigned int held = 0;
	unsigned long flags;

	spin_lock_irqsave(&dev->rslab_lock, flags);
	list_for_each_entry(rs, &dev->rslabs, node)
		held += rs->donor == donor;
	spin_unlock_irqrestore(&dev->rslab_lock, flags);
	return held;
}

/**
 * farswap_dev_donor_remove - remove a donor from a live device
 * @name: the device
 * @addr: the donor's address
 * @why: receives the reason of a failure
 *
 * Refused while the device holds a slab of the donor: its pages may be
 * the only copy.  A drain (farswapd --drain on the donor) moves them to
 * the other donors first; a donor that died holds none once its chunks
 * were unbound.
 *
 * Return: 0 or a negative error code.
 */
int farswap_dev_donor_remove(const char *name,
			     const struct sockaddr_storage *addr,
			     struct farswap_reason *why)
{
	struct farswap_donor *donor = NULL;
	struct farswap_dev *dev, *owner;
	unsigned int held;
	int ret = 0;

	mutex_lock(&farswap_devs_mutex);
	dev = farswap_members_begin(name, why, &ret);
	if (dev) {
		donor = farswap_donor_at(addr, &owner);
		if (donor && owner != dev)
			donor = NULL;
	}
	mutex_unlock(&farswap_devs_mutex);
	if (!dev)
		return ret;
	if (!donor) {
		farswap_reason_set(why, "%s has no such donor", name);
		ret = -ENOENT;
		goto out_end;
	}

	/* Slabs are taken under map_mutex: none can appear past this check. */
	mutex_lock(&dev->map_mutex);
	held = farswap_donor_held(dev, donor);
	if (!held)
		WRITE_ONCE(donor->removing, true);
	mutex_unlock(&dev->map_mutex);
	if (held) {
		farswap_reason_set(why, "donor %s holds %u slabs of %s: drain it first (farswapd --drain there moves them to the other donors)",
				   donor->name, held, name);
		ret = -EBUSY;
		goto out_end;
	}

	farswap_donor_dir_remove(donor);
	farswap_donor_stop(donor);
	farswap_donor_cancel_work(donor);
	/* Its domain no longer counts among the device's. */
	farswap_dev_set_domain(donor, "");
	farswap_donor_pr_info(donor, " removed from %s\n", name);
out_end:
	farswap_members_end(dev);
	return ret;
}
