// SPDX-License-Identifier: GPL-2.0
/*
 * Which donor a new slab comes from (see pick.h).  Randomness comes from
 * the caller so the choice is testable.
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/string.h>

#include "pick.h"

/* Index of the @k-th usable donor, or -1. */
static int farswap_nth_usable(const struct farswap_pick_view *v,
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
 * farswap_pick_two - choose two distinct usable donors at random
 * @v: one view per donor
 * @nr: number of donors
 * @rnd1: a random number
 * @rnd2: another random number
 * @cand: filled with the chosen donors' indices
 *
 * Return: how many were chosen: 0 when no donor is usable, 1 when only one
 * is, else 2.
 */
int farswap_pick_two(const struct farswap_pick_view *v,
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
static void farswap_insert_by_free(const struct farswap_pick_view *v,
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
 * farswap_pick_order - the order in which to ask donors for a slab
 * @v: one view per donor, free counts refreshed for the candidates
 * @nr: number of donors
 * @cand: the candidates from farswap_pick_two()
 * @nr_cand: how many candidates
 * @order: filled with donor indices, at most @nr
 *
 * The candidates come first, the one with more room ahead (the first on a
 * tie); then every other usable donor by room, most first.
 *
 * Return: the number of donors in @order.
 */
int farswap_pick_order(const struct farswap_pick_view *v, unsigned int nr,
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

/**
 * farswap_pick_domain_ids - number the donors' failure domains
 * @names: each donor's domain name; "" or NULL while unknown
 * @nr: number of donors, at most FARSWAP_MAX_DONORS
 * @ids: filled with each donor's domain number: the index of the first
 *	donor of the same name, so equal names get equal numbers; a donor
 *	of unknown domain is a domain of its own
 */
void farswap_pick_domain_ids(const char *const *names, unsigned int nr,
			      u8 *ids)
{
	unsigned int i, j;

	for (i = 0; i < nr; i++) {
		ids[i] = i;
		if (!names[i] || !names[i][0])
			continue;
		for (j = 0; j < i; j++) {
			if (names[j] && !strcmp(names[i], names[j])) {
				ids[i] = ids[j];
				break;
			}
		}
	}
}

/* How many distinct domains the known names make (unknown ones not counted). */
unsigned int farswap_pick_nr_domains(const char *const *names,
				      unsigned int nr)
{
	u8 ids[FARSWAP_MAX_DONORS];
	unsigned int i, n = 0;

	if (nr > FARSWAP_MAX_DONORS)
		nr = FARSWAP_MAX_DONORS;
	farswap_pick_domain_ids(names, nr, ids);
	for (i = 0; i < nr; i++)
		n += names[i] && names[i][0] && ids[i] == i;
	return n;
}

/* @v with only the usable donors outside @avoid usable; how many are. */
static unsigned int farswap_pick_preferred(const struct farswap_pick_view *v,
					    unsigned int nr,
					    unsigned long avoid,
					    struct farswap_pick_view *pref)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr; i++) {
		pref[i] = v[i];
		pref[i].usable = v[i].usable && !(avoid & BIT(v[i].domain));
		n += pref[i].usable;
	}
	return n;
}

/**
 * farswap_pick_two_dom - farswap_pick_two() among the donors
 * outside the domains @avoid, or among all usable ones when none is
 * @v: one view per donor
 * @nr: number of donors, at most FARSWAP_MAX_DONORS
 * @avoid: domains the chunk already has a replica in
 * @rnd1: a random number
 * @rnd2: another random number
 * @cand: filled with the chosen donors' indices
 *
 * Return: how many were chosen (0, 1 or 2).
 */
int farswap_pick_two_dom(const struct farswap_pick_view *v,
			       unsigned int nr, unsigned long avoid, u32 rnd1,
			       u32 rnd2, int cand[2])
{
	struct farswap_pick_view pref[FARSWAP_MAX_DONORS];

	if (nr > FARSWAP_MAX_DONORS)
		nr = FARSWAP_MAX_DONORS;
	if (!farswap_pick_preferred(v, nr, avoid, pref))
		return farswap_pick_two(v, nr, rnd1, rnd2, cand);
	return farswap_pick_two(pref, nr, rnd1, rnd2, cand);
}

/**
 * farswap_pick_order_dom - the order in which to ask donors for a slab
 * for a replica of a chunk whose other replicas are in the domains @avoid
 * @v: one view per donor, free counts refreshed for the candidates
 * @nr: number of donors, at most FARSWAP_MAX_DONORS
 * @avoid: domains the chunk already has a replica in
 * @cand: the candidates from farswap_pick_two_dom()
 * @nr_cand: how many candidates
 * @order: filled with donor indices, at most @nr
 *
 * As farswap_pick_order() among the donors outside @avoid; behind them,
 * the usable donors inside @avoid by room, most first: a replica shares a
 * domain only when no donor of another domain has room.
 *
 * Return: the number of donors in @order.
 */
int farswap_pick_order_dom(const struct farswap_pick_view *v,
			    unsigned int nr, unsigned long avoid,
			    const int *cand, int nr_cand, int *order)
{
	struct farswap_pick_view pref[FARSWAP_MAX_DONORS];
	int n, head, i;

	if (nr > FARSWAP_MAX_DONORS)
		nr = FARSWAP_MAX_DONORS;
	if (!farswap_pick_preferred(v, nr, avoid, pref))
		return farswap_pick_order(v, nr, cand, nr_cand, order);
	n = farswap_pick_order(pref, nr, cand, nr_cand, order);
	head = n;
	for (i = 0; i < (int)nr; i++) {
		if (!v[i].usable || pref[i].usable)
			continue;
		farswap_insert_by_free(v, order, head, n, i);
		n++;
	}
	return n;
}

/*
 * Has a usable donor outside the domains @avoid room (free slabs as last
 * heard)?  If not, a replica may share a domain at once.
 */
bool farswap_pick_room_outside(const struct farswap_pick_view *v,
				unsigned int nr, unsigned long avoid)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (v[i].usable && v[i].free && !(avoid & BIT(v[i].domain)))
			return true;
	return false;
}

/* Do two of a chunk's @n replicas (their donors' @domains) share a domain? */
bool farswap_pick_colocated(const u8 *domains, unsigned int n)
{
	unsigned long seen = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (seen & BIT(domains[i]))
			return true;
		seen |= BIT(domains[i]);
	}
	return false;
}
