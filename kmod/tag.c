// SPDX-License-Identifier: GPL-2.0
/*
 * Per-page integrity tags (see tag.h).
 */
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/random.h>
#include <linux/string.h>

#include "chunkmap.h"
#include "tag.h"

static const char * const farswap_tag_names[FARSWAP_TAG_NR_ALGS] = {
	[FARSWAP_TAG_OFF]	= "off",
	[FARSWAP_TAG_SIPHASH]	= "siphash",
	[FARSWAP_TAG_CRC32C]	= "crc32c",
};

const char *farswap_tag_alg_name(enum farswap_tag_alg alg)
{
	return alg < FARSWAP_TAG_NR_ALGS ? farswap_tag_names[alg] : "invalid";
}

/* Return: 0, or -EINVAL for a name that is not an algorithm. */
int farswap_tag_alg_parse(const char *s, enum farswap_tag_alg *alg)
{
	int i = sysfs_match_string(farswap_tag_names, s);

	if (i < 0)
		return -EINVAL;
	*alg = i;
	return 0;
}

/* Fresh secrets for a device being attached. */
void farswap_tag_key_init(struct farswap_tag_key *k, enum farswap_tag_alg alg)
{
	k->alg = alg;
	k->nonce = get_random_u64();
	get_random_bytes(&k->page_key, sizeof(k->page_key));
	get_random_bytes(&k->bind_key, sizeof(k->bind_key));
}

/**
 * farswap_tag_page - the tag of one page as written
 * @k: the device's keys and algorithm
 * @index: the page's index on the device
 * @version: the page's write version
 * @page: its FARSWAP_PAGE_BYTES bytes
 *
 * Return: the tag; 0 when integrity is off.
 */
u64 farswap_tag_page(const struct farswap_tag_key *k, u64 index, u32 version,
		     const void *page)
{
	u64 where[3] = { k->nonce, index, version };
	u32 crc;

	switch (k->alg) {
	case FARSWAP_TAG_SIPHASH:
		return siphash_4u64(k->nonce, index, version,
				    siphash(page, FARSWAP_PAGE_BYTES,
					    &k->page_key),
				    &k->bind_key);
	case FARSWAP_TAG_CRC32C:
		crc = crc32c(~0u, where, sizeof(where));
		return crc32c(crc, page, FARSWAP_PAGE_BYTES);
	default:
		return 0;
	}
}

void farswap_page_locks_init(struct farswap_page_locks *l)
{
	unsigned int i;

	for (i = 0; i < FARSWAP_PAGE_LOCKS; i++)
		spin_lock_init(&l->lock[i]);
}

/**
 * farswap_tag_next - tag a page being written, as its next version
 * @k: the device's keys and algorithm
 * @l: the device's page locks
 * @versions: the device's per-page write versions
 * @tags: the device's per-page tags
 * @index: the page's index on the device
 * @page: its FARSWAP_PAGE_BYTES bytes
 *
 * Return: the version the page was tagged with.
 */
u32 farswap_tag_next(const struct farswap_tag_key *k,
		     struct farswap_page_locks *l, u32 *versions, u64 *tags,
		     u64 index, const void *page)
{
	spinlock_t *lock = farswap_page_lock(l, index);
	u32 version;

	spin_lock_bh(lock);
	version = versions[index] + 1;
	tags[index] = farswap_tag_page(k, index, version, page);
	versions[index] = version;
	spin_unlock_bh(lock);
	return version;
}

/**
 * farswap_tag_matches - is a page read back the one last written there?
 * @k: the device's keys and algorithm
 * @l: the device's page locks
 * @versions: the device's per-page write versions
 * @tags: the device's per-page tags
 * @index: the page's index on the device
 * @page: its FARSWAP_PAGE_BYTES bytes
 *
 * Return: true if @page has the tag of the latest version of @index.
 */
bool farswap_tag_matches(const struct farswap_tag_key *k,
			 struct farswap_page_locks *l, const u32 *versions,
			 const u64 *tags, u64 index, const void *page)
{
	spinlock_t *lock = farswap_page_lock(l, index);
	u32 version;
	u64 tag;

	spin_lock_bh(lock);
	version = versions[index];
	tag = tags[index];
	spin_unlock_bh(lock);
	return farswap_tag_page(k, index, version, page) == tag;
}
