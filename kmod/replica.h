/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which copies of a chunk serve.  A chunk is bound to up to
 * FARSWAP_MAX_REPLICAS placements on distinct donors; a placement is
 * up to date when it holds every page written to the chunk.  Writes go to
 * every live up-to-date placement; a read goes to one (by the device's
 * read policy, below), and on failure to the next.  A chunk with
 * fewer live up-to-date placements than the device wants is degraded: the
 * repair work copies it to a new placement when it can (the two tests are
 * farswap_replica_degraded() and farswap_replica_wants_copy(), below).
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_REPLICA_H
#define FARSWAP_REPLICA_H

#include <linux/types.h>

#define FARSWAP_MAX_REPLICAS	3

/*
 * Which serving replica a read goes to.  FASTEST favours the donor that
 * answered fastest lately; ROUND_ROBIN spreads reads over every serving
 * replica whatever its speed, so that each copy is read (and checked)
 * and the load is even on donors of unequal speed.
 */
enum farswap_read_policy {
	FARSWAP_READ_FASTEST,
	FARSWAP_READ_ROUND_ROBIN,
};

/* What the I/O path knows of one placement of a chunk. */
struct farswap_replica_view {
	bool live;		/* its donor's session is the one it was granted in */
	bool uptodate;		/* it holds every written page */
	bool tried;		/* this read already failed on it */
	u64 lat_ns;		/* its donor's recent read latency */
};

/*
 * A chunk's replicas as its lock holder sees them at one moment: a bit per
 * placement index below @nr.  A replica serves when it is live and up to
 * date.  One snapshot answers every question asked of it alike, though a
 * donor may die while the lock is held.
 */
struct farswap_replica_set {
	unsigned int nr;	/* placements */
	u8 live;		/* farswap_place_live() */
	u8 uptodate;		/* chunk->uptodate */
	u8 damaged;		/* damaged pages noted on it */
};

int farswap_read_policy_parse(const char *s, enum farswap_read_policy *p);
const char *farswap_read_policy_name(enum farswap_read_policy p);
int farswap_replica_pick_read(const struct farswap_replica_view *v,
			      unsigned int n, unsigned int spread,
			      enum farswap_read_policy policy);
unsigned int farswap_replica_write_set(const struct farswap_replica_view *v,
				       unsigned int n);
unsigned int farswap_replica_serving(const struct farswap_replica_view *v,
				     unsigned int n);
u64 farswap_replica_lat_update(u64 ewma_ns, u64 sample_ns);

unsigned int farswap_replica_nr_serving(const struct farswap_replica_set *s);
bool farswap_replica_serves(const struct farswap_replica_set *s,
			    unsigned int r);
bool farswap_replica_others_serve(const struct farswap_replica_set *s,
				  unsigned int r);
int farswap_replica_source(const struct farswap_replica_set *s);
bool farswap_replica_all_live(const struct farswap_replica_set *s);
bool farswap_replica_all_serve(const struct farswap_replica_set *s);
bool farswap_replica_damaged(const struct farswap_replica_set *s);
bool farswap_replica_wants_copy(const struct farswap_replica_set *s,
				unsigned int possible);
bool farswap_replica_degraded(const struct farswap_replica_set *s,
			      unsigned int want);

#endif /* FARSWAP_REPLICA_H */
