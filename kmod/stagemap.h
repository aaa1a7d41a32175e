/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The staging area's bookkeeping (stage.c): which staged writes of a
 * chunk a read or a newer write must see, and a write queue's free
 * staging slots.
 *
 * A staged write is a swap-out whose request completed once its pages
 * were copied into a staging slot; its RDMA WRITEs go out from there.
 * Until they are done the slot's copy is the newest version of its
 * pages, so:
 *  - a read whose whole range one staged write holds is served from it
 *    (the newest such write); a read that overlaps staged writes only in
 *    part waits for them;
 *  - a write waits for every older staged write it overlaps, so that an
 *    older version never lands over a newer one.
 * Each chunk keeps its staged writes on a list, oldest first.
 *
 * Free of RDMA calls, so KUnit runs it under UML.  The caller holds the
 * chunk's lock around the lookups, and its queue's lock around the slots.
 */
#ifndef FARSWAP_STAGEMAP_H
#define FARSWAP_STAGEMAP_H

#include <linux/list.h>
#include <linux/types.h>

/* One staged write's pages within its chunk, on the chunk's list. */
struct farswap_staged {
	struct list_head node;
	u32 first_page;
	u32 nr_pages;
};

/* What a request does about the staged writes of its chunk. */
enum farswap_stage_verdict {
	FARSWAP_STAGE_NONE,	/* no staged write overlaps: go on */
	FARSWAP_STAGE_SERVE,	/* read: one staged write holds all of it */
	FARSWAP_STAGE_WAIT,	/* wait until an overlapping one is written */
};

enum farswap_stage_verdict
farswap_stage_read(const struct list_head *staged, u32 first, u32 nr,
		   const struct farswap_staged **from);
enum farswap_stage_verdict
farswap_stage_write(const struct list_head *staged,
		    const struct farswap_staged *self, u32 first, u32 nr);

/*
 * A write queue's staging slots: a stack of the free ones' indices, so
 * that the slot freed last, warm in the cache, is taken next.
 */
struct farswap_stage_slots {
	u16 *free;		/* indices of the free slots */
	u16 nr;			/* slots in all */
	u16 nr_free;
};

void farswap_stage_slots_init(struct farswap_stage_slots *s, u16 *free,
			      u16 nr);
int farswap_stage_slots_get(struct farswap_stage_slots *s);
bool farswap_stage_slots_put(struct farswap_stage_slots *s, u16 slot);

static inline u16 farswap_stage_slots_used(const struct farswap_stage_slots *s)
{
	return s->nr - s->nr_free;
}

#endif /* FARSWAP_STAGEMAP_H */
