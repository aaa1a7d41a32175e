// SPDX-License-Identifier: GPL-2.0
/*
 * Chunk slots of a donor slab and its record's lifetime (see slots.h).
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>

#include "slots.h"

void farswap_slots_init(struct farswap_slots *s, u32 nr, unsigned long *map)
{
	s->nr = nr;
	s->used = 0;
	s->retired = false;
	s->map = map;
	bitmap_zero(map, nr);
}

/**
 * farswap_slots_take - take the lowest free slot
 * @s: the slab's slots
 *
 * Lowest first, so that a slab fills from the front and one that empties
 * can go back.  A retired slab gives no slot: its donor's session is gone.
 *
 * Return: the slot, or -1 when the slab is full or retired.
 */
int farswap_slots_take(struct farswap_slots *s)
{
	u32 slot;

	if (s->retired || s->used >= s->nr)
		return -1;
	slot = find_first_zero_bit(s->map, s->nr);
	if (slot >= s->nr)
		return -1;
	__set_bit(slot, s->map);
	s->used++;
	return slot;
}

/**
 * farswap_slots_put - a chunk lets go of its slot
 * @s: the slab's slots
 * @slot: the slot the chunk held
 *
 * Return: what the caller does next (see enum farswap_slots_after).  A
 * put of a slot that is not in use changes nothing and says so: a second
 * put must never free a slot another chunk has taken since.
 */
enum farswap_slots_after farswap_slots_put(struct farswap_slots *s, u32 slot)
{
	if (slot >= s->nr || !__test_and_clear_bit(slot, s->map))
		return FARSWAP_SLOTS_BAD;
	if (--s->used)
		return FARSWAP_SLOTS_KEEP;
	return s->retired ? FARSWAP_SLOTS_FREE : FARSWAP_SLOTS_EMPTY;
}

/**
 * farswap_slots_retire - the slab's donor session ended
 * @s: the slab's slots
 *
 * Return: true if no chunk points at the slab, so its record can be freed
 * now; false if chunks still do, and the put of the last one frees it.
 * Retiring twice returns false the second time: one owner frees.
 */
bool farswap_slots_retire(struct farswap_slots *s)
{
	if (s->retired)
		return false;
	s->retired = true;
	return !s->used;
}
