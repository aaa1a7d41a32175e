/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which copies of a chunk serve.  A chunk is bound to up to
 * FARSWAP_MAX_REPLICAS placements on distinct donors; a placement is
 * up to date when it holds every page written to the chunk.  Writes go to
 * every live up-to-date placement; a read goes to one, the one whose donor
 * answered fastest lately, and on failure to the next.  A chunk with
 * fewer live up-to-date placements than the device wants is degraded: the
 * repair work copies it to a new placement.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_REPLICA_H
#define FARSWAP_REPLICA_H

#include <linux/types.h>

#define FARSWAP_MAX_REPLICAS	3

/* What the I/O path knows of one placement of a chunk. */
struct farswap_replica_view {
	bool live;		/* its donor's session is the one it was granted in */
	bool uptodate;		/* it holds every written page */
	bool tried;		/* this read already failed on it */
	u64 lat_ns;		/* its donor's recent read latency */
};

int farswap_replica_pick_read(const struct farswap_replica_view *v,
			      unsigned int n, unsigned int spread);
unsigned int farswap_replica_write_set(const struct farswap_replica_view *v,
				       unsigned int n);
unsigned int farswap_replica_serving(const struct farswap_replica_view *v,
				     unsigned int n);
u64 farswap_replica_lat_update(u64 ewma_ns, u64 sample_ns);

#endif /* FARSWAP_REPLICA_H */
