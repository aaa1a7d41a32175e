/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slab pool accounting: which slab is free, held by which host, or
 * released to the OS.  No memory or RDMA calls here: slabmem.c backs
 * slabs with memory, verbs.c registers them.
 *
 *   RELEASED --populate--> FREE --take--> HELD --put--> FREE (dirty)
 *   FREE --release--> RELEASED           HELD --release (reclaimed)--> RELEASED
 *   HELD --quarantine (its MR would not go)--> QUARANTINED, for good
 *   RELEASED --kept (adopted from the last farswapd)--> KEPT
 *   HELD --keep_held (its host's session ended, not by the host)--> KEPT
 *   KEPT --resume--> HELD (content intact)   KEPT --release (grace over)--> RELEASED
 *
 * When the pool has a pool-state table (keep.h), every change of a slab's
 * owner is written to it, so a restarted farswapd knows what to keep.
 */
#ifndef FSD_POOL_H
#define FSD_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "keep.h"

struct fsd_session;

enum fsd_slab_state {
	FSD_SLAB_RELEASED,	/* no memory behind it */
	FSD_SLAB_FREE,		/* populated, pinned, nobody's */
	FSD_SLAB_HELD,		/* registered for its owner */
	FSD_SLAB_QUARANTINED,	/* deregistration failed: never used again */
	/*
	 * Held by a host of the farswapd before this one (its restart), or
	 * by a session that ended without the host giving it back (a
	 * transport error): its content waits for that host's
	 * SLAB_RESUME_REQ until kept_until; nobody else's, never granted.
	 */
	FSD_SLAB_KEPT,
};

struct fsd_slab {
	uint32_t id;
	enum fsd_slab_state state;
	bool dirty;		/* handed out before: zero before the next grant */
	uint64_t clean_upto;	/* dirty: bytes [0, clean_upto) zeroed since */
	void *mem;
	int mem_kind;		/* enum fsd_mem_kind, slabmem.c */
	struct fsd_session *owner;
	bool granting;		/* held, zeroed and registered off the loop */
	uint64_t grant_cookie;	/* the SLAB_ALLOC_REQ being answered */
	void *grant_ctx;	/* fsd_ops' state of the grant in flight */
	uint64_t host_slab;	/* the host's request number: logs only */
	void *mr;		/* struct ibv_mr * while held */
	uint32_t rkey;
	/* Reclaim in flight (owner asked to give the slab back). */
	bool reclaiming;
	bool deadline_logged;
	uint64_t reclaim_cookie;
	uint64_t reclaim_deadline;	/* monotonic ms */
	uint64_t reclaim_retry_after;	/* monotonic ms, after a refusal */
	uint64_t reclaim_first;		/* ms: first asked this pressure spell */
	/* Revoked, its host told (SLAB_REVOKE): deregistered at this ms. */
	uint64_t revoke_at;
	/* Drain (drain.c): the round it was last asked in, and why it stayed. */
	uint32_t drain_round;
	uint16_t refused_st;	/* the host's last refusal; 0: none */
	/*
	 * Resume (FARSWAP_FEAT_RESUME): the token its host takes it back
	 * with after a restart (0: none), and the one it replaced when it
	 * was last resumed, so that a repeated SLAB_RESUME_REQ is answered
	 * again.  A KEPT slab's host is kept_id, proven as kept_proof says.
	 */
	uint64_t resume;
	uint64_t resumed_from;
	uint64_t grant_token;	/* its next token, while granting */
	bool resuming;		/* the grant in flight is a resume */
	uint8_t kept_id[FARSWAP_ID_LEN];
	uint8_t kept_proof;	/* enum fsd_proof, donor.h */
	/* KEPT: freed at this monotonic ms; 0: stamped at the next tick. */
	uint64_t kept_until;
};

struct fsd_pool {
	uint64_t slab_size;
	uint32_t nr_slabs;
	uint32_t nr_free;
	uint32_t nr_held;
	uint32_t nr_released;
	uint32_t nr_reclaiming;
	uint32_t nr_quarantined;
	uint32_t nr_kept;
	struct fsd_slab *slabs;
	struct fsd_keep *keep;	/* the pool-state table; NULL: none */
};

int fsd_pool_init(struct fsd_pool *p, uint32_t nr_slabs, uint64_t slab_size);
void fsd_pool_exit(struct fsd_pool *p);
struct fsd_slab *fsd_pool_get(struct fsd_pool *p, uint64_t id);
struct fsd_slab *fsd_pool_take(struct fsd_pool *p, struct fsd_session *owner);
int fsd_pool_put(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_populated(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_released(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_reclaim_start(struct fsd_pool *p, struct fsd_slab *slab,
			   uint64_t cookie, uint64_t deadline);
void fsd_pool_reclaim_end(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_quarantine(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_kept(struct fsd_pool *p, struct fsd_slab *slab,
		  const uint8_t *host_id, unsigned int proof, uint64_t token);
int fsd_pool_resume(struct fsd_pool *p, struct fsd_slab *slab,
		    struct fsd_session *owner);
int fsd_pool_keep_again(struct fsd_pool *p, struct fsd_slab *slab);
int fsd_pool_keep_held(struct fsd_pool *p, struct fsd_slab *slab,
		       const uint8_t *host_id, unsigned int proof);
bool fsd_pool_consistent(const struct fsd_pool *p);

#endif /* FSD_POOL_H */
