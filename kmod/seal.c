// SPDX-License-Identifier: GPL-2.0
/*
 * Sealed pages (see seal.h).
 */
#include <linux/random.h>

#include "chunkmap.h"
#include "seal.h"

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
