/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chunk map logic: device geometry, splitting byte ranges at chunk
 * boundaries, per-chunk page accounting, and what a request may do with a
 * chunk in a given state.  A "slab" here is only ever a donor's slab: the
 * region a donor lends, carved into chunk slots.
 *
 * Nothing here touches RDMA or the block layer, so KUnit runs it under UML.
 * The callers hold the chunk's lock around every farswap_pages_* call.
 */
#ifndef FARSWAP_CHUNKMAP_H
#define FARSWAP_CHUNKMAP_H

#include <linux/types.h>

/* Bytes of one tracked page: the swap unit of a 4 KiB-page host. */
#define FARSWAP_PAGE_SHIFT	12
#define FARSWAP_PAGE_BYTES	(1u << FARSWAP_PAGE_SHIFT)

/* A device spans at most this many donor slabs. */
#define FARSWAP_MAX_SLABS	(1u << 20)

/*
 * The host binds its space to donors' memory in chunks of one swap
 * cluster (2 MiB, a THP): the swap allocator spreads its first clusters
 * over the whole device, so binding whole donor slabs on first write
 * would reserve every slab at once.  A donor slab the host holds is
 * carved into chunk slots instead.
 */
#define FARSWAP_CHUNK_SHIFT	21
#define FARSWAP_CHUNK_BYTES	(1u << FARSWAP_CHUNK_SHIFT)
#define FARSWAP_CHUNK_PAGES	(FARSWAP_CHUNK_BYTES >> FARSWAP_PAGE_SHIFT)
/* A device has at most this many chunks (4 TiB). */
#define FARSWAP_MAX_CHUNKS	(1u << 21)

struct farswap_geometry {
	u64 size;		/* device bytes, a whole number of donor slabs */
	u32 slab_shift;		/* log2 of the slab size in bytes */
	u32 nr_slabs;
	u32 slab_pages;		/* tracked pages per slab */
	u32 nr_chunks;		/* FARSWAP_CHUNK_BYTES units of the device */
	u32 chunks_per_slab;	/* chunk slots in one donor slab */
};

int farswap_geometry_init(struct farswap_geometry *g, u64 size, u64 slab_size);

static inline u64 farswap_slab_bytes(const struct farswap_geometry *g)
{
	return 1ull << g->slab_shift;
}

/* One piece of a byte range that lies within a single chunk. */
struct farswap_extent {
	u32 chunk;		/* chunk index */
	u32 first_page;		/* first page within the chunk */
	u32 nr_pages;
	u64 chunk_off;		/* byte offset within the chunk */
	u64 len;		/* bytes */
	u64 range_off;		/* byte offset within the split range */
};

int farswap_split(const struct farswap_geometry *g, u64 pos, u64 len,
		  struct farswap_extent *ext, unsigned int max_ext);

/*
 * Which pages of a chunk hold data.  "written" pages may hold data on the
 * donor; "lost" pages held data on a donor that died, and reading them
 * must fail rather than return something else.  lost is allocated only
 * once a chunk has lost pages.
 */
struct farswap_pages {
	unsigned long *written;
	unsigned long *lost;
	u32 nr_pages;
	u32 used;		/* bits set in written */
	u32 nr_lost;		/* bits set in lost */
};

void farswap_pages_mark_written(struct farswap_pages *p, u32 first, u32 n);
u32 farswap_pages_discard(struct farswap_pages *p, u32 first, u32 n);
bool farswap_pages_any_written(const struct farswap_pages *p, u32 first,
			       u32 n);
bool farswap_pages_any_lost(const struct farswap_pages *p, u32 first, u32 n);
u32 farswap_pages_lose(struct farswap_pages *p);
bool farswap_pages_lose_one(struct farswap_pages *p, u32 page);

/*
 * The pages of one copy of a chunk known to be damaged (a read from it
 * failed their integrity check) while another copy holds them intact.
 * Reads of them go to that other copy, and the repair rewrites them from
 * it: a few bad pages do not condemn the other 511.  A copy with more
 * than FARSWAP_DAMAGE_MAX is treated as stale as a whole instead.
 */
#define FARSWAP_DAMAGE_MAX	6

struct farswap_damage {
	u8 nr;
	u16 page[FARSWAP_DAMAGE_MAX];	/* page index within the chunk */
};

bool farswap_damage_add(struct farswap_damage *d, u32 page);
bool farswap_damage_any(const struct farswap_damage *d, u32 first, u32 n);
void farswap_damage_clear(struct farswap_damage *d, u32 first, u32 n);

/*
 * Chunk states.  Every chunk starts UNBOUND; the first write binds it.
 *
 *   UNBOUND --write--> BINDING --slot granted--> BOUND
 *   BINDING --no donor has room--> UNBOUND (held writes fail)
 *   BOUND --donor reclaims--> MIGRATING --copied--> SWITCHING --> BOUND
 *   BOUND --all pages discarded--> RELEASING --freed--> UNBOUND
 *   BOUND/MIGRATING/... --donor lost--> UNBOUND (written pages become lost)
 */
enum farswap_chunk_state {
	FARSWAP_CHUNK_UNBOUND,
	FARSWAP_CHUNK_BINDING,		/* finding slots for it; writes held */
	FARSWAP_CHUNK_BOUND,
	FARSWAP_CHUNK_MIGRATING,	/* copying to another donor; writes held */
	FARSWAP_CHUNK_SWITCHING,	/* copy done; all I/O held while it drains */
	FARSWAP_CHUNK_RELEASING,	/* giving the chunk's slots back; writes held */
	FARSWAP_CHUNK_NR_STATES
};

const char *farswap_chunk_state_name(unsigned int state);

/* What the I/O path does with one request on one chunk. */
enum farswap_io_action {
	FARSWAP_IO_RDMA,	/* post RDMA to the chunk's placement */
	FARSWAP_IO_ZERO,	/* never-written pages: fill with zeros locally */
	FARSWAP_IO_HOLD,	/* park on the chunk until its state settles */
	FARSWAP_IO_BIND,	/* park, and start binding the chunk */
	FARSWAP_IO_FAIL,	/* the data is gone: fail with -EIO */
};

struct farswap_io_view {
	unsigned int state;	/* enum farswap_chunk_state */
	bool write;
	bool any_written;	/* a page of the range may hold data */
	bool any_lost;		/* a page of the range died with a donor */
	bool place_live;	/* the placement's donor session is alive */
	/*
	 * No live placement holds the pages, but one that does waits for
	 * its donor to come back and resume it (resume.c).
	 */
	bool place_suspended;
};

enum farswap_io_action farswap_io_decide(const struct farswap_io_view *v);

#endif /* FARSWAP_CHUNKMAP_H */
