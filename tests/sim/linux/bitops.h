/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few bitmap operations kmod/slots.c uses, for tests/sim: plain C with
 * the kernel's meaning (non-atomic __ variants; the simulation is one
 * thread).
 */
#ifndef FARSWAP_SIM_LINUX_BITOPS_H
#define FARSWAP_SIM_LINUX_BITOPS_H
#include "bits.h"
#include "types.h"

static inline void __set_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] |= BIT(nr % BITS_PER_LONG);
}

static inline bool __test_and_clear_bit(unsigned long nr, unsigned long *map)
{
	unsigned long *w = &map[nr / BITS_PER_LONG], b = BIT(nr % BITS_PER_LONG);
	bool was = *w & b;

	*w &= ~b;
	return was;
}

static inline unsigned long find_first_zero_bit(const unsigned long *map,
						unsigned long size)
{
	unsigned long i;

	for (i = 0; i < BITS_TO_LONGS(size); i++)
		if (~map[i])
			break;
	if (i == BITS_TO_LONGS(size))
		return size;
	i = i * BITS_PER_LONG + __builtin_ctzl(~map[i]);
	return i < size ? i : size;
}
#endif
