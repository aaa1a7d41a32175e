/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Donor placement: the power of two choices.  To bind a slab, pick two
 * donors at random, ask both how much room they have, and take the one
 * with more; fall back to the other, then to every other live donor.
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_PLACE_H
#define FARSWAP_PLACE_H

#include <linux/types.h>

#define FARSWAP_MAX_DONORS	16

struct farswap_place_view {
	bool usable;		/* connected, and not the donor being left */
	u32 free;		/* free slabs, as last heard */
};

int farswap_place_pick_two(const struct farswap_place_view *v,
			   unsigned int nr, u32 rnd1, u32 rnd2, int cand[2]);
int farswap_place_order(const struct farswap_place_view *v, unsigned int nr,
			const int *cand, int nr_cand, int *order);

#endif /* FARSWAP_PLACE_H */
