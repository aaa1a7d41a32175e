/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool-state table: which slab a host holds, for whom and with which
 * resume token, kept in a memfd beside the pool's memory so that both
 * outlive farswapd (systemd's fd store, or an exec of a new farswapd).
 * The next farswapd reads it to know which slabs it may hand back to
 * their hosts (SLAB_RESUME_REQ) and which it may reuse.
 *
 * Only this machine's next farswapd reads it, so it is in host byte
 * order.  The version changes whenever the layout does: a farswapd that
 * does not know the version starts fresh rather than guess.
 *
 * No memory or fd calls here: the table is any buffer, which keeps it
 * testable.  slabmem.c makes the memfd behind it.
 */
#ifndef FSD_KEEP_H
#define FSD_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "farswap_proto.h"

#define FSD_KEEP_MAGIC 0x6b707366u	/* "fspk" in memory */
#define FSD_KEEP_VERSION 1

struct fsd_keep_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t slab_size;
	uint32_t nr_slabs;
	uint32_t mem_kind;		/* enum fsd_mem_kind of the pool */
	uint32_t rec_size;		/* sizeof(struct fsd_keep_rec) */
	uint8_t reserved[36];
};
_Static_assert(sizeof(struct fsd_keep_hdr) == 64, "keep header size");

/* One slab: held by a host that can resume it, or not. */
struct fsd_keep_rec {
	uint8_t held;
	uint8_t proof;			/* enum fsd_proof of host_id */
	uint8_t reserved[6];
	uint64_t token;			/* resume token; not 0 if held */
	uint8_t host_id[FARSWAP_ID_LEN];
};
_Static_assert(sizeof(struct fsd_keep_rec) == 32, "keep record size");

/* A table over a buffer (the pool-state memfd's mapping). */
struct fsd_keep {
	struct fsd_keep_hdr *hdr;
	struct fsd_keep_rec *rec;
	uint32_t nr_slabs;
	/*
	 * Set at the end of a process that keeps the pool for its next
	 * one: closing sessions then frees no record.
	 */
	bool frozen;
};

size_t fsd_keep_size(uint32_t nr_slabs);
void fsd_keep_format(void *buf, uint32_t nr_slabs, uint64_t slab_size,
		     int mem_kind);
int fsd_keep_validate(const void *buf, size_t len, uint64_t slab_size,
		      char *err, size_t errlen);
void fsd_keep_attach(struct fsd_keep *k, void *buf);
void fsd_keep_hold(struct fsd_keep *k, uint32_t id, const uint8_t *host_id,
		   unsigned int proof, uint64_t token);
void fsd_keep_drop(struct fsd_keep *k, uint32_t id);
const struct fsd_keep_rec *fsd_keep_get(const struct fsd_keep *k,
					uint32_t id);

#endif /* FSD_KEEP_H */
