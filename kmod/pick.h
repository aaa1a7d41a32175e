/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which donor a new slab comes from: the power of two choices.  To bind a
 * slab, pick two donors at random, ask both how much room they have, and
 * take the one with more; fall back to the other, then to every other
 * live donor.
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_PICK_H
#define FARSWAP_PICK_H

#include <linux/types.h>

#define FARSWAP_MAX_DONORS	16

struct farswap_pick_view {
	bool usable;		/* connected, and not the donor being left */
	u32 free;		/* free slabs, as last heard */
	u8 domain;		/* failure domain, from farswap_pick_domain_ids() */
};

int farswap_pick_two(const struct farswap_pick_view *v,
			   unsigned int nr, u32 rnd1, u32 rnd2, int cand[2]);
int farswap_pick_order(const struct farswap_pick_view *v, unsigned int nr,
			const int *cand, int nr_cand, int *order);

/*
 * Failure domains.  Each donor's domain is a small number (below
 * FARSWAP_MAX_DONORS), so a set of domains is a bitmask.  A chunk's next
 * replica goes to a donor outside the domains its other replicas are in
 * (@avoid) when one of those has room; only then to another domain's.
 */
void farswap_pick_domain_ids(const char *const *names, unsigned int nr,
			      u8 *ids);
unsigned int farswap_pick_nr_domains(const char *const *names,
				      unsigned int nr);
int farswap_pick_two_dom(const struct farswap_pick_view *v,
			       unsigned int nr, unsigned long avoid, u32 rnd1,
			       u32 rnd2, int cand[2]);
int farswap_pick_order_dom(const struct farswap_pick_view *v,
			    unsigned int nr, unsigned long avoid,
			    const int *cand, int nr_cand, int *order);
bool farswap_pick_room_outside(const struct farswap_pick_view *v,
				unsigned int nr, unsigned long avoid);
bool farswap_pick_colocated(const u8 *domains, unsigned int n);

#endif /* FARSWAP_PICK_H */
