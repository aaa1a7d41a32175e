// SPDX-License-Identifier: GPL-2.0
/*
 * Donor placement (see place.h).  Randomness comes from the caller so the
 * choice is testable.
 */
#include <linux/errno.h>

#include "place.h"

/* Index of the @k-th usable donor, or -1. */
static int farswap_nth_usable(const struct farswap_place_view *v,
			      unsigned int nr, unsigned int k)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!v[i].usable)
			continue;
		if (!k--)
			return i;
	}
	return -1;
}

/**
 * farswap_place_pick_two - choose two distinct usable donors at random
 * @v: one view per donor
 * @nr: number of donors
 * @rnd1: a random number
 * @rnd2: another random number
 * @cand: filled with the chosen donors' indices
 *
 * Return: how many were chosen: 0 when no donor is usable, 1 when only one
 * is, else 2.
 */
int farswap_place_pick_two(const struct farswap_place_view *v,
			   unsigned int nr, u32 rnd1, u32 rnd2, int cand[2])
{
	unsigned int usable = 0, a, b, i;

	for (i = 0; i < nr; i++)
		usable += v[i].usable;
	if (!usable)
		return 0;
	if (usable == 1) {
		cand[0] = farswap_nth_usable(v, nr, 0);
		return 1;
	}
	a = rnd1 % usable;
	b = rnd2 % (usable - 1);
	if (b >= a)
		b++;
	cand[0] = farswap_nth_usable(v, nr, a);
	cand[1] = farswap_nth_usable(v, nr, b);
	return 2;
}

static bool farswap_in(const int *set, int n, int x)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == x)
			return true;
	return false;
}

/* Insert @x into @order[0..n) keeping free slabs descending, stable. */
static void farswap_insert_by_free(const struct farswap_place_view *v,
				   int *order, int start, int n, int x)
{
	int i = n;

	while (i > start && v[order[i - 1]].free < v[x].free) {
		order[i] = order[i - 1];
		i--;
	}
	order[i] = x;
}

/**
 * farswap_place_order - the order in which to ask donors for a slab
 * @v: one view per donor, free counts refreshed for the candidates
 * @nr: number of donors
 * @cand: the candidates from farswap_place_pick_two()
 * @nr_cand: how many candidates
 * @order: filled with donor indices, at most @nr
 *
 * The candidates come first, the one with more room ahead (the first on a
 * tie); then every other usable donor by room, most first.
 *
 * Return: the number of donors in @order.
 */
int farswap_place_order(const struct farswap_place_view *v, unsigned int nr,
			const int *cand, int nr_cand, int *order)
{
	int n = 0, head, i;

	for (i = 0; i < nr_cand; i++) {
		if (cand[i] < 0 || cand[i] >= (int)nr || !v[cand[i]].usable ||
		    farswap_in(order, n, cand[i]))
			continue;
		farswap_insert_by_free(v, order, 0, n, cand[i]);
		n++;
	}
	/* The rest are sorted among themselves, behind the candidates. */
	head = n;
	for (i = 0; i < (int)nr; i++) {
		if (!v[i].usable || farswap_in(order, n, i))
			continue;
		farswap_insert_by_free(v, order, head, n, i);
		n++;
	}
	return n;
}
