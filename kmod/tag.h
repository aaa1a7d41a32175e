/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-page integrity tags.  The host keeps, for every 4 KiB page of the
 * device, the tag of the page it last wrote and that write's version.  A
 * page read back from a donor is checked against them before the request
 * completes: a donor (or the fabric) that flips bits, returns an old copy
 * of a page, or returns another page's contents is caught.
 *
 * A tag binds the device (a random nonce made at attach), the page's
 * index, its write version and its bytes:
 *
 *   siphash:  SipHash-2-4 (k2) of (nonce, index, version, SipHash-2-4 (k1)
 *             of the page), keys made at attach that never leave the
 *             host: a donor cannot make a page that passes.
 *   crc32c:   CRC32C of the same, unkeyed: catches faults, not a
 *             hostile donor; for trusted fabrics.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_TAG_H
#define FARSWAP_TAG_H

#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>

enum farswap_tag_alg {
	FARSWAP_TAG_OFF,
	FARSWAP_TAG_SIPHASH,
	FARSWAP_TAG_CRC32C,
	FARSWAP_TAG_NR_ALGS
};

/* The secrets of one device: made at attach, never shown anywhere. */
struct farswap_tag_key {
	enum farswap_tag_alg alg;
	u64 nonce;			/* this device */
	siphash_key_t page_key;		/* k1: the page's bytes */
	siphash_key_t bind_key;		/* k2: bytes bound to where and when */
};

/* Host memory per device page: its tag and its write version. */
#define FARSWAP_TAG_BYTES_PER_PAGE	(sizeof(u64) + sizeof(u32))

const char *farswap_tag_alg_name(enum farswap_tag_alg alg);
int farswap_tag_alg_parse(const char *s, enum farswap_tag_alg *alg);
void farswap_tag_key_init(struct farswap_tag_key *k, enum farswap_tag_alg alg);
u64 farswap_tag_page(const struct farswap_tag_key *k, u64 index, u32 version,
		     const void *page);

/*
 * A page's version and its tag change together, under one of these locks
 * (hashed by page index), for tags and sealed pages alike.  The block
 * layer does not serialise writes of one page (two O_DIRECT writes of one
 * block may run at once): without the lock both would take the same
 * version, which for a sealed page is a reused nonce, and a read could
 * pair one write's version with the other's tag.  Taken with softirqs
 * off: reads check their pages in the RDMA completion.
 */
#define FARSWAP_PAGE_LOCKS	64

struct farswap_page_locks {
	spinlock_t lock[FARSWAP_PAGE_LOCKS];
};

void farswap_page_locks_init(struct farswap_page_locks *l);

static inline spinlock_t *farswap_page_lock(struct farswap_page_locks *l,
					    u64 index)
{
	return &l->lock[index % FARSWAP_PAGE_LOCKS];
}

u32 farswap_tag_next(const struct farswap_tag_key *k,
		     struct farswap_page_locks *l, u32 *versions, u64 *tags,
		     u64 index, const void *page);
bool farswap_tag_matches(const struct farswap_tag_key *k,
			 struct farswap_page_locks *l, const u32 *versions,
			 const u64 *tags, u64 index, const void *page);

#endif /* FARSWAP_TAG_H */
