// SPDX-License-Identifier: GPL-2.0
/*
 * The staging area's bookkeeping: the order of a chunk's staged writes,
 * and a write queue's free staging slots (stagemap.h).
 */
#include <linux/errno.h>

#include "stagemap.h"

static bool farswap_stage_overlaps(const struct farswap_staged *s, u32 first,
				   u32 nr)
{
	return s->first_page < first + nr && first < s->first_page + s->nr_pages;
}

static bool farswap_stage_covers(const struct farswap_staged *s, u32 first,
				 u32 nr)
{
	return s->first_page <= first &&
	       first + nr <= s->first_page + s->nr_pages;
}

/**
 * farswap_stage_read - what a read of pages [@first, @first + @nr) of a
 * chunk does about the chunk's staged writes
 * @staged: the chunk's list of staged writes, oldest first
 * @first: the read's first page in the chunk
 * @nr: its pages
 * @from: receives the staged write to serve it from (FARSWAP_STAGE_SERVE)
 *
 * Only the newest staged write over a page holds its newest version: the
 * read is served from it if it holds the whole read, and waits otherwise
 * (the pages it lacks may be in an older one, or on the donor).
 */
enum farswap_stage_verdict
farswap_stage_read(const struct list_head *staged, u32 first, u32 nr,
		   const struct farswap_staged **from)
{
	const struct farswap_staged *s;

	list_for_each_entry_reverse(s, staged, node) {
		if (!farswap_stage_overlaps(s, first, nr))
			continue;
		if (!farswap_stage_covers(s, first, nr))
			return FARSWAP_STAGE_WAIT;
		*from = s;
		return FARSWAP_STAGE_SERVE;
	}
	return FARSWAP_STAGE_NONE;
}

/**
 * farswap_stage_write - may a write of pages [@first, @first + @nr) of a
 * chunk go out now?
 * @staged: the chunk's list of staged writes, oldest first
 * @self: the write's own entry on it, or NULL for a write not staged
 * @first: its first page in the chunk
 * @nr: its pages
 *
 * A staged write waits for the older staged writes it overlaps; a write
 * not staged for every one it overlaps (they all completed, to the block
 * layer, before it was issued).
 *
 * Return: FARSWAP_STAGE_NONE or FARSWAP_STAGE_WAIT.
 */
enum farswap_stage_verdict
farswap_stage_write(const struct list_head *staged,
		    const struct farswap_staged *self, u32 first, u32 nr)
{
	const struct farswap_staged *s;

	list_for_each_entry(s, staged, node) {
		if (s == self)
			break;
		if (farswap_stage_overlaps(s, first, nr))
			return FARSWAP_STAGE_WAIT;
	}
	return FARSWAP_STAGE_NONE;
}

void farswap_stage_slots_init(struct farswap_stage_slots *s, u16 *free,
			      u16 nr)
{
	u16 i;

	s->free = free;
	s->nr = nr;
	s->nr_free = nr;
	/* Slot 0 on top of the stack. */
	for (i = 0; i < nr; i++)
		free[i] = nr - 1 - i;
}

/* A free slot's index, or -ENOSPC when every slot holds a staged write. */
int farswap_stage_slots_get(struct farswap_stage_slots *s)
{
	if (!s->nr_free)
		return -ENOSPC;
	return s->free[--s->nr_free];
}

/* Give @slot back; false (and nothing changed) if it cannot be in use. */
bool farswap_stage_slots_put(struct farswap_stage_slots *s, u16 slot)
{
	if (slot >= s->nr || s->nr_free >= s->nr)
		return false;
	s->free[s->nr_free++] = slot;
	return true;
}
