// SPDX-License-Identifier: GPL-2.0
/*
 * Which copies of a chunk serve (see replica.h).
 */
#include <linux/bitops.h>
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

/*
 * The questions asked of a chunk's replica set (struct farswap_replica_set),
 * by the chunk table, the I/O path, the copy engine and sysfs alike.
 */

/* Bits of the set's placements: stray bits above @nr never count. */
static u8 farswap_replica_mask(const struct farswap_replica_set *s)
{
	unsigned int nr = min_t(unsigned int, s->nr, FARSWAP_MAX_REPLICAS);

	return BIT(nr) - 1;
}

static u8 farswap_replica_serving_mask(const struct farswap_replica_set *s)
{
	return s->live & s->uptodate & farswap_replica_mask(s);
}

/* How many replicas serve: live and up to date. */
unsigned int farswap_replica_nr_serving(const struct farswap_replica_set *s)
{
	return hweight8(farswap_replica_serving_mask(s));
}

/* Does replica @r serve? */
bool farswap_replica_serves(const struct farswap_replica_set *s,
			    unsigned int r)
{
	return r < FARSWAP_MAX_REPLICAS &&
	       (farswap_replica_serving_mask(s) & BIT(r));
}

/* Does a replica other than @r serve (so that @r may go)? */
bool farswap_replica_others_serve(const struct farswap_replica_set *s,
				  unsigned int r)
{
	u8 others = farswap_replica_serving_mask(s);

	if (r < FARSWAP_MAX_REPLICAS)
		others &= ~BIT(r);
	return others;
}

/*
 * The replica to copy the chunk from: the serving one of the highest
 * index (the newest placement), or -1 when none serves.
 */
int farswap_replica_source(const struct farswap_replica_set *s)
{
	return fls(farswap_replica_serving_mask(s)) - 1;
}

/* Is every replica live?  Dead ones are the loss work's to drop. */
bool farswap_replica_all_live(const struct farswap_replica_set *s)
{
	u8 mask = farswap_replica_mask(s);

	return (s->live & mask) == mask;
}

/* Does every replica serve: live, and none stale? */
bool farswap_replica_all_serve(const struct farswap_replica_set *s)
{
	return farswap_replica_serving_mask(s) == farswap_replica_mask(s);
}

/*
 * Damaged pages to rewrite from another copy: an up-to-date replica has
 * some, and every replica is live (the loss work drops dead ones first).
 */
bool farswap_replica_damaged(const struct farswap_replica_set *s)
{
	return farswap_replica_all_live(s) &&
	       (s->damaged & s->uptodate & farswap_replica_mask(s));
}

/*
 * Does the repair copy the chunk to a new replica now?  Fewer serve than
 * @possible (the replicas the live donors allow), one serves to copy
 * from, and every replica is live (the loss work drops dead ones first).
 * Not farswap_replica_degraded(): that one counts against the replicas
 * asked for, and includes chunks the repair cannot mend yet.
 */
bool farswap_replica_wants_copy(const struct farswap_replica_set *s,
				unsigned int possible)
{
	unsigned int serving = farswap_replica_nr_serving(s);

	return farswap_replica_all_live(s) && serving && serving < possible;
}

/*
 * Is the chunk not whole, as sysfs counts it: damaged pages to rewrite, or
 * fewer serving replicas than the @want the device asks for, whether or
 * not the repair can copy it now (see farswap_replica_wants_copy()).
 * Where the damage test passes over a replica that does not serve (dead
 * or stale), the chunk is short anyway: a bound chunk has no more
 * replicas than the device wants.
 */
bool farswap_replica_degraded(const struct farswap_replica_set *s,
			      unsigned int want)
{
	return farswap_replica_damaged(s) ||
	       farswap_replica_nr_serving(s) < want;
}
