/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FARSWAP_SIM_LINUX_BITS_H
#define FARSWAP_SIM_LINUX_BITS_H
#include <limits.h>

#define BITS_PER_LONG		(sizeof(long) * CHAR_BIT)
#define BIT(nr)			(1UL << (nr))
#define BITS_TO_LONGS(nr)	(((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#endif
