/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FARSWAP_SIM_LINUX_BITMAP_H
#define FARSWAP_SIM_LINUX_BITMAP_H
#include <string.h>
#include "bitops.h"

static inline void bitmap_zero(unsigned long *map, unsigned long nbits)
{
	memset(map, 0, BITS_TO_LONGS(nbits) * sizeof(long));
}
#endif
