// SPDX-License-Identifier: GPL-2.0
/*
 * Slab pool accounting.  Every state change goes through one of these
 * functions, which refuse transitions that make no sense (a double free,
 * freeing a released slab), so the counters always add up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

/*
 * @slab is nobody's any more: its resume token dies with its record, so
 * the next farswapd will not keep it for anyone.
 */
static void forget_owner(struct fsd_pool *p, struct fsd_slab *slab)
{
	slab->resume = 0;
	slab->resumed_from = 0;
	slab->resuming = false;
	memset(slab->kept_id, 0, sizeof(slab->kept_id));
	slab->kept_proof = 0;
	fsd_keep_drop(p->keep, slab->id);
}

int fsd_pool_init(struct fsd_pool *p, uint32_t nr_slabs, uint64_t slab_size)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	if (!nr_slabs || !slab_size)
		return -EINVAL;
	p->slabs = calloc(nr_slabs, sizeof(*p->slabs));
	if (!p->slabs)
		return -ENOMEM;
	p->slab_size = slab_size;
	p->nr_slabs = nr_slabs;
	p->nr_released = nr_slabs;
	for (i = 0; i < nr_slabs; i++) {
		p->slabs[i].id = i;
		p->slabs[i].state = FSD_SLAB_RELEASED;
	}
	return 0;
}

void fsd_pool_exit(struct fsd_pool *p)
{
	free(p->slabs);
	memset(p, 0, sizeof(*p));
}

struct fsd_slab *fsd_pool_get(struct fsd_pool *p, uint64_t id)
{
	if (id >= p->nr_slabs)
		return NULL;
	return &p->slabs[id];
}

/* A free slab for @owner, clean ones (no zeroing needed) first. */
struct fsd_slab *fsd_pool_take(struct fsd_pool *p, struct fsd_session *owner)
{
	struct fsd_slab *pick = NULL;
	uint32_t i;

	if (!p->nr_free || !owner)
		return NULL;
	for (i = 0; i < p->nr_slabs; i++) {
		struct fsd_slab *s = &p->slabs[i];

		if (s->state != FSD_SLAB_FREE)
			continue;
		if (!s->dirty) {
			pick = s;
			break;
		}
		if (!pick)
			pick = s;
	}
	if (!pick)
		return NULL;
	pick->state = FSD_SLAB_HELD;
	pick->owner = owner;
	p->nr_free--;
	p->nr_held++;
	return pick;
}

/* A held slab back to the free list; its contents are the last owner's. */
int fsd_pool_put(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (slab->state != FSD_SLAB_HELD || slab->granting)
		return -EINVAL;
	fsd_pool_reclaim_end(p, slab);
	slab->state = FSD_SLAB_FREE;
	slab->owner = NULL;
	slab->host_slab = 0;
	slab->mr = NULL;
	slab->rkey = 0;
	slab->dirty = true;
	slab->clean_upto = 0;
	slab->reclaim_retry_after = 0;
	slab->reclaim_first = 0;
	slab->drain_round = 0;
	slab->refused_st = 0;
	forget_owner(p, slab);
	p->nr_held--;
	p->nr_free++;
	return 0;
}

/* Memory is behind a released slab again (fresh, so zero-filled). */
int fsd_pool_populated(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (slab->state != FSD_SLAB_RELEASED || !slab->mem)
		return -EINVAL;
	slab->state = FSD_SLAB_FREE;
	slab->dirty = false;
	p->nr_released--;
	p->nr_free++;
	return 0;
}

/* A free or held slab's memory went back to the OS. */
int fsd_pool_released(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (slab->mem)
		return -EBUSY;
	switch (slab->state) {
	case FSD_SLAB_FREE:
		p->nr_free--;
		break;
	case FSD_SLAB_HELD:
		if (slab->granting)
			return -EINVAL;
		fsd_pool_reclaim_end(p, slab);
		p->nr_held--;
		break;
	case FSD_SLAB_KEPT:
		p->nr_kept--;
		break;
	default:
		return -EINVAL;
	}
	slab->state = FSD_SLAB_RELEASED;
	slab->owner = NULL;
	slab->host_slab = 0;
	slab->mr = NULL;
	slab->rkey = 0;
	slab->dirty = false;
	slab->reclaim_retry_after = 0;
	slab->reclaim_first = 0;
	slab->drain_round = 0;
	slab->refused_st = 0;
	forget_owner(p, slab);
	p->nr_released++;
	return 0;
}

/*
 * A held slab whose memory region could not be deregistered: its rkey may
 * still reach the memory, so it is never handed out, zeroed or unmapped
 * again.  Its mr is kept, for the record.
 */
int fsd_pool_quarantine(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (slab->state != FSD_SLAB_HELD || slab->granting)
		return -EINVAL;
	fsd_pool_reclaim_end(p, slab);
	slab->state = FSD_SLAB_QUARANTINED;
	slab->owner = NULL;
	slab->reclaim_first = 0;
	forget_owner(p, slab);
	p->nr_held--;
	p->nr_quarantined++;
	return 0;
}

/*
 * A slab the last farswapd's host held, adopted with its memory (mem set,
 * its content intact): kept for @host_id, who may take it back with
 * @token, and for nobody else.
 */
int fsd_pool_kept(struct fsd_pool *p, struct fsd_slab *slab,
		  const uint8_t *host_id, unsigned int proof, uint64_t token)
{
	if (slab->state != FSD_SLAB_RELEASED || !slab->mem || !token)
		return -EINVAL;
	slab->state = FSD_SLAB_KEPT;
	slab->dirty = false;
	slab->resume = token;
	memcpy(slab->kept_id, host_id, FARSWAP_ID_LEN);
	slab->kept_proof = (uint8_t)proof;
	p->nr_released--;
	p->nr_kept++;
	return 0;
}

/*
 * A kept slab is its host's again (to be registered, as a grant is); its
 * content stays.  The record stays too until the grant gives it a new
 * token.
 */
int fsd_pool_resume(struct fsd_pool *p, struct fsd_slab *slab,
		    struct fsd_session *owner)
{
	if (slab->state != FSD_SLAB_KEPT || !owner)
		return -EINVAL;
	slab->state = FSD_SLAB_HELD;
	slab->owner = owner;
	slab->dirty = false;
	p->nr_kept--;
	p->nr_held++;
	return 0;
}

/*
 * A resume that did not happen (registration failed, or its host left
 * first): the slab is kept again, for the same host and token, until the
 * grace is over.
 */
int fsd_pool_keep_again(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (slab->state != FSD_SLAB_HELD || slab->granting || slab->mr)
		return -EINVAL;
	fsd_pool_reclaim_end(p, slab);
	slab->state = FSD_SLAB_KEPT;
	slab->owner = NULL;
	slab->resuming = false;
	p->nr_held--;
	p->nr_kept++;
	return 0;
}

/*
 * A held slab whose session ended without its host giving it back: kept
 * for @host_id, content and token as they are, its memory region already
 * gone (the caller deregistered it).  Its pool-state record stays held,
 * so a restart within the grace keeps it too.
 */
int fsd_pool_keep_held(struct fsd_pool *p, struct fsd_slab *slab,
		       const uint8_t *host_id, unsigned int proof)
{
	if (slab->state != FSD_SLAB_HELD || slab->granting || slab->mr ||
	    !slab->resume)
		return -EINVAL;
	fsd_pool_reclaim_end(p, slab);
	slab->state = FSD_SLAB_KEPT;
	slab->owner = NULL;
	slab->resuming = false;
	slab->revoke_at = 0;
	slab->kept_until = 0;
	memcpy(slab->kept_id, host_id, FARSWAP_ID_LEN);
	slab->kept_proof = (uint8_t)proof;
	p->nr_held--;
	p->nr_kept++;
	return 0;
}

int fsd_pool_reclaim_start(struct fsd_pool *p, struct fsd_slab *slab,
			   uint64_t cookie, uint64_t deadline)
{
	if (slab->state != FSD_SLAB_HELD || slab->reclaiming)
		return -EINVAL;
	slab->reclaiming = true;
	slab->deadline_logged = false;
	slab->reclaim_cookie = cookie;
	slab->reclaim_deadline = deadline;
	p->nr_reclaiming++;
	return 0;
}

void fsd_pool_reclaim_end(struct fsd_pool *p, struct fsd_slab *slab)
{
	if (!slab->reclaiming)
		return;
	slab->reclaiming = false;
	slab->reclaim_cookie = 0;
	slab->reclaim_deadline = 0;
	p->nr_reclaiming--;
}

/* The counters match the slabs' states (for tests and debug builds). */
bool fsd_pool_consistent(const struct fsd_pool *p)
{
	uint32_t n[5] = { 0, 0, 0, 0, 0 }, reclaiming = 0, i;

	for (i = 0; i < p->nr_slabs; i++) {
		const struct fsd_slab *s = &p->slabs[i];

		if (s->state > FSD_SLAB_KEPT)
			return false;
		if (s->granting && (s->state != FSD_SLAB_HELD || s->reclaiming))
			return false;
		n[s->state]++;
		if (s->reclaiming) {
			if (s->state != FSD_SLAB_HELD)
				return false;
			reclaiming++;
		}
		if ((s->state == FSD_SLAB_HELD) != !!s->owner)
			return false;
		if ((s->state == FSD_SLAB_RELEASED) != !s->mem)
			return false;
	}
	return n[FSD_SLAB_RELEASED] == p->nr_released &&
	       n[FSD_SLAB_FREE] == p->nr_free &&
	       n[FSD_SLAB_HELD] == p->nr_held &&
	       n[FSD_SLAB_QUARANTINED] == p->nr_quarantined &&
	       n[FSD_SLAB_KEPT] == p->nr_kept &&
	       reclaiming == p->nr_reclaiming &&
	       p->nr_free + p->nr_held + p->nr_released + p->nr_quarantined +
		       p->nr_kept == p->nr_slabs;
}
