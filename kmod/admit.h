/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the I/O path lets through, as arithmetic on counters kept
 * elsewhere: the write budget of a hardware queue (bytes of swap-out in
 * flight), and how long a request whose pages cannot be DMA-mapped keeps
 * being retried.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_ADMIT_H
#define FARSWAP_ADMIT_H

#include <linux/types.h>

bool farswap_write_budget_admit(s64 now, u32 bytes, u32 cap);

/*
 * A request whose pages cannot be DMA-mapped is retried: swiotlb and
 * IOMMU space run out under memory pressure and come back as I/O
 * completes.  A mapping that keeps failing (a segment the DMA layer will
 * never take) must not be retried for ever: past this many consecutive
 * failures, and a span of time, the request fails.
 */
#define FARSWAP_NOMAP_TRIES	16

struct farswap_nomap {
	unsigned int tries;		/* consecutive failures */
	unsigned long since;		/* jiffies of the first of them */
};

static inline void farswap_nomap_reset(struct farswap_nomap *n)
{
	n->tries = 0;
}

bool farswap_nomap_give_up(struct farswap_nomap *n, unsigned long now,
			   unsigned long span);

#endif /* FARSWAP_ADMIT_H */
