/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chunk slots of one donor slab the device holds, and the lifetime of its
 * record.  A chunk's placement points at the record, so the record lives
 * as long as any chunk does: a slab whose donor died is retired (no slot
 * can be taken from it again) but freed only by the put of its last used
 * slot, whoever makes it (the loss work, a discard, a migration).
 *
 * Free of RDMA calls, so KUnit runs it under UML.  The caller holds the
 * device's rslab_lock around every call.
 */
#ifndef FARSWAP_SLOTS_H
#define FARSWAP_SLOTS_H

#include <linux/types.h>

struct farswap_slots {
	u32 nr;			/* slots in the slab */
	u32 used;		/* slots holding a chunk */
	bool retired;		/* off the device's list; the last put frees */
	unsigned long *map;	/* one bit per slot */
};

/* What the caller must do after farswap_slots_put(). */
enum farswap_slots_after {
	FARSWAP_SLOTS_KEEP,	/* the slab still holds chunks */
	FARSWAP_SLOTS_EMPTY,	/* live and empty: it may go back */
	FARSWAP_SLOTS_FREE,	/* retired and empty: free the record now */
	FARSWAP_SLOTS_BAD,	/* the slot was not in use: nothing changed */
};

void farswap_slots_init(struct farswap_slots *s, u32 nr, unsigned long *map);
int farswap_slots_take(struct farswap_slots *s);
enum farswap_slots_after farswap_slots_put(struct farswap_slots *s, u32 slot);
bool farswap_slots_retire(struct farswap_slots *s);

static inline u32 farswap_slots_free(const struct farswap_slots *s)
{
	return s->retired ? 0 : s->nr - s->used;
}

#endif /* FARSWAP_SLOTS_H */
