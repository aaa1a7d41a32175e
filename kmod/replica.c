// SPDX-License-Identifier: GPL-2.0
/*
 * Which copies of a chunk serve (see replica.h).
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "replica.h"

static const char * const farswap_read_policy_names[] = {
	[FARSWAP_READ_FASTEST]		= "fastest",
	[FARSWAP_READ_ROUND_ROBIN]	= "round-robin",
};

/* Return: 0, or -EINVAL for a name that is not a policy. */
int farswap_read_policy_parse(const char *s, enum farswap_read_policy *p)
{
	int i = sysfs_match_string(farswap_read_policy_names, s);

	if (i < 0)
		return -EINVAL;
	*p = i;
	return 0;
}

const char *farswap_read_policy_name(enum farswap_read_policy p)
{
	return p < ARRAY_SIZE(farswap_read_policy_names) ?
	       farswap_read_policy_names[p] : "?";
}

/**
 * farswap_replica_pick_read - the placement a read goes to
 * @v: one view per placement
 * @n: placements
 * @spread: any number that differs between reads (the chunk, the page):
 *	among the candidates it picks one, so that reads spread
 * @policy: FASTEST: the candidates are those of the lowest recent latency,
 *	latencies within an eighth of each other counting as equal;
 *	ROUND_ROBIN: every placement that can serve is a candidate
 *
 * Live, current and not tried yet, always.
 *
 * Return: the placement's index, or -1 when none can serve.
 */
int farswap_replica_pick_read(const struct farswap_replica_view *v,
			      unsigned int n, unsigned int spread,
			      enum farswap_read_policy policy)
{
	int cand[FARSWAP_MAX_REPLICAS];
	unsigned int i, nc = 0;
	u64 best = U64_MAX;

	for (i = 0; i < n && i < FARSWAP_MAX_REPLICAS; i++)
		if (v[i].live && v[i].uptodate && !v[i].tried)
			best = min(best, v[i].lat_ns);
	if (best == U64_MAX)
		return -1;
	for (i = 0; i < n && i < FARSWAP_MAX_REPLICAS; i++)
		if (v[i].live && v[i].uptodate && !v[i].tried &&
		    (policy == FARSWAP_READ_ROUND_ROBIN ||
		     v[i].lat_ns <= best + best / 8))
			cand[nc++] = i;
	return cand[spread % nc];
}

/* The placements a write goes to: every live current one (a bit each). */
unsigned int farswap_replica_write_set(const struct farswap_replica_view *v,
				       unsigned int n)
{
	unsigned int i, set = 0;

	for (i = 0; i < n && i < FARSWAP_MAX_REPLICAS; i++)
		if (v[i].live && v[i].uptodate)
			set |= BIT(i);
	return set;
}

/* How many placements can serve: live and current. */
unsigned int farswap_replica_serving(const struct farswap_replica_view *v,
				     unsigned int n)
{
	return hweight32(farswap_replica_write_set(v, n));
}

/* A donor's recent read latency: an average that weighs new samples 1/8. */
u64 farswap_replica_lat_update(u64 ewma_ns, u64 sample_ns)
{
	if (!ewma_ns)
		return sample_ns;
	return ewma_ns - (ewma_ns >> 3) + (sample_ns >> 3);
}
