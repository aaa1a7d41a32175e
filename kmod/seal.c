// SPDX-License-Identifier: GPL-2.0
/*
 * Sealed pages (see seal.h).
 */
#include <linux/random.h>

#include "chunkmap.h"
#include "seal.h"
#include "tag.h"

/* Fresh secret for a device being attached. */
void farswap_seal_key_init(struct farswap_seal_key *k)
{
	get_random_bytes(k->bytes, sizeof(k->bytes));
}

/* Unique per write of a page under one key (seal.h). */
static u64 farswap_seal_nonce(u64 index, u32 version)
{
	return index << 32 | version;
}

/**
 * farswap_seal_page - encrypt a page in place and make its tag
 * @k: the device's key
 * @index: the page's index on the device
 * @version: the page's write version, never used before at @index
 * @sg: the page's FARSWAP_PAGE_BYTES bytes, then FARSWAP_SEAL_TAG_BYTES
 *	that receive the tag
 */
void farswap_seal_page(const struct farswap_seal_key *k, u64 index,
		       u32 version, struct scatterlist *sg)
{
	chacha20poly1305_encrypt_sg_inplace(sg, FARSWAP_PAGE_BYTES, NULL, 0,
					    farswap_seal_nonce(index, version),
					    k->bytes);
}

/**
 * farswap_open_page - check a sealed page and decrypt it in place
 * @k: the device's key
 * @index: the page's index on the device
 * @version: the page's latest write version
 * @sg: as for farswap_seal_page(), with the tag made then
 *
 * Return: true if the page is the one sealed at @index with @version
 * (now decrypted); false if not, and then its bytes are garbage.
 */
bool farswap_open_page(const struct farswap_seal_key *k, u64 index,
		       u32 version, struct scatterlist *sg)
{
	return chacha20poly1305_decrypt_sg_inplace(sg, FARSWAP_PAGE_BYTES +
						   FARSWAP_SEAL_TAG_BYTES,
						   NULL, 0,
						   farswap_seal_nonce(index, version),
						   k->bytes);
}

/**
 * farswap_seal_next - seal a page being written with its next version
 * @k: the device's key
 * @l: the device's page locks (tag.h)
 * @versions: the device's per-page write versions
 * @tags: the device's per-page seal tags
 * @index: the page's index on the device
 * @sg: as for farswap_seal_page()
 * @made: the tag buffer at the end of @sg, published into @tags
 * @version: receives the version sealed with
 *
 * The version is taken and the tag published under the page's lock, so
 * two writes of one page never seal with one nonce, and the version and
 * tag a reader sees are always one write's.
 *
 * Return: false, sealing nothing, when the page's version is exhausted
 * under this key (seal.h).
 */
bool farswap_seal_next(const struct farswap_seal_key *k,
		       struct farswap_page_locks *l, u32 *versions,
		       struct farswap_seal_tag *tags, u64 index,
		       struct scatterlist *sg, const struct farswap_seal_tag *made,
		       u32 *version)
{
	spinlock_t *lock = farswap_page_lock(l, index);
	u32 v;

	spin_lock_bh(lock);
	v = versions[index];
	if (v == FARSWAP_SEAL_VERSION_MAX) {
		spin_unlock_bh(lock);
		*version = v;
		return false;
	}
	v++;
	farswap_seal_page(k, index, v, sg);
	tags[index] = *made;
	versions[index] = v;
	spin_unlock_bh(lock);
	*version = v;
	return true;
}

/**
 * farswap_open_latest - open a page read back as its latest write
 * @k: the device's key
 * @l: the device's page locks (tag.h)
 * @versions: the device's per-page write versions
 * @tags: the device's per-page seal tags
 * @index: the page's index on the device
 * @sg: as for farswap_open_page(), its last entry @tag
 * @tag: receives the latest tag, which @sg's last entry must point at
 *
 * Return: as farswap_open_page().
 */
bool farswap_open_latest(const struct farswap_seal_key *k,
			 struct farswap_page_locks *l, const u32 *versions,
			 const struct farswap_seal_tag *tags, u64 index,
			 struct scatterlist *sg, struct farswap_seal_tag *tag)
{
	spinlock_t *lock = farswap_page_lock(l, index);
	u32 v;

	spin_lock_bh(lock);
	v = versions[index];
	*tag = tags[index];
	spin_unlock_bh(lock);
	return farswap_open_page(k, index, v, sg);
}
