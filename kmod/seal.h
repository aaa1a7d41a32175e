/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sealed pages (encrypt=1): every 4 KiB page is encrypted and
 * authenticated on the host with ChaCha20-Poly1305 before its RDMA WRITE,
 * and opened (checked, then decrypted) after its RDMA READ.  The key is
 * made at attach and never leaves the host; a donor, or anyone on the
 * fabric, holds ciphertext only and cannot make a page that opens.
 *
 * The 64-bit nonce is the page's index on the device (at most 2^30 pages)
 * in the high half and its write version in the low half: no nonce is
 * used twice under one key as long as a page's version never wraps, so a
 * page whose version reached FARSWAP_SEAL_VERSION_MAX is not written
 * again under this key.  A page read back must have been sealed at its
 * own index with its latest version: an old copy, another page's copy or
 * altered bytes do not open.  The Poly1305 tag (16 bytes per page) stays
 * in host memory, next to the version.
 *
 * ChaCha20-Poly1305 from the kernel's crypto library (the one WireGuard
 * uses): synchronous and usable in any context, so a read is opened in its
 * completion and a write sealed in queue_rq, as the integrity tags are.
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_SEAL_H
#define FARSWAP_SEAL_H

#include <crypto/chacha20poly1305.h>
#include <linux/limits.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

#define FARSWAP_SEAL_ALG		"chacha20poly1305"
#define FARSWAP_SEAL_TAG_BYTES		CHACHA20POLY1305_AUTHTAG_SIZE
#define FARSWAP_SEAL_VERSION_MAX	U32_MAX

/*
 * The largest request of a sealing device: a write is sealed into bounce
 * pages of its own (the request's pages stay plaintext for the process),
 * preallocated for every write request the device can have in flight.
 */
#define FARSWAP_SEAL_IO_BYTES		(64u << 10)

/* The secret of one device: made at attach, never shown anywhere. */
struct farswap_seal_key {
	u8 bytes[CHACHA20POLY1305_KEY_SIZE];
};

struct farswap_seal_tag {
	u8 bytes[FARSWAP_SEAL_TAG_BYTES];
};

void farswap_seal_key_init(struct farswap_seal_key *k);
void farswap_seal_page(const struct farswap_seal_key *k, u64 index,
		       u32 version, struct scatterlist *sg);
bool farswap_open_page(const struct farswap_seal_key *k, u64 index,
		       u32 version, struct scatterlist *sg);

struct farswap_page_locks;

bool farswap_seal_next(const struct farswap_seal_key *k,
		       struct farswap_page_locks *l, u32 *versions,
		       struct farswap_seal_tag *tags, u64 index,
		       struct scatterlist *sg, const struct farswap_seal_tag *made,
		       u32 *version);
bool farswap_open_latest(const struct farswap_seal_key *k,
			 struct farswap_page_locks *l, const u32 *versions,
			 const struct farswap_seal_tag *tags, u64 index,
			 struct scatterlist *sg, struct farswap_seal_tag *tag);

#endif /* FARSWAP_SEAL_H */
