// SPDX-License-Identifier: GPL-2.0
/*
 * The data path: a blk-mq request becomes RDMA WRITEs (swap-out) or RDMA
 * READs (swap-in) straight from and into the request's pages, on the I/O
 * queue pair of the request's hardware queue.
 *
 * Queue limits keep every read and write request inside one 2 MiB chunk
 * (chunk_sectors), so a request has one extent and one chunk.  A write
 * goes to every live current replica of the chunk at once and succeeds
 * if one took it; a read goes to one replica and, if that fails (the
 * transport, or a page's integrity check), to the next, before anything
 * reaches the block layer.  Everything a request needs is in its
 * preallocated struct farswap_cmd: nothing here allocates memory.
 */
#include <linux/highmem.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "farswap.h"
#include "log.h"
#include "trace.h"

static void farswap_io_done(struct ib_cq *cq, struct ib_wc *wc);

/* Delay before blk-mq retries a request that found no DMA mapping. */
#define FARSWAP_REQUEUE_DELAY_MS	3

/* The arrays of one leg: its scatterlist, SGEs and work requests. */
#define FARSWAP_COPY_ARRAYS	(FARSWAP_MAX_SEGS * (sizeof(struct scatterlist) + \
						     sizeof(struct ib_sge) + \
						     sizeof(struct ib_rdma_wr)))

size_t farswap_cmd_size(unsigned int replicas)
{
	return sizeof(struct farswap_cmd) + replicas * FARSWAP_COPY_ARRAYS +
	       FARSWAP_PAGE_BYTES;
}

void farswap_cmd_exit(struct farswap_cmd *cmd)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmd->bounce); i++) {
		if (cmd->bounce[i])
			__free_page(cmd->bounce[i]);
		cmd->bounce[i] = NULL;
	}
}

/**
 * farswap_cmd_init - set up a request's context when blk-mq makes it, or
 * a staging slot's when staging is made
 * @cmd: the context
 * @dev: its device
 * @rq: its request, or NULL for a staging slot
 * @bounce: give it bounce pages for a write's copy (a sealing device's
 *	write queues, a staging slot)
 * @numa_node: where its memory should be
 *
 * Return: 0, or -ENOMEM when the bounce pages cannot be had (then
 * nothing is left allocated).
 */
int farswap_cmd_init(struct farswap_cmd *cmd, struct farswap_dev *dev,
		     struct request *rq, bool bounce, int numa_node)
{
	void *at = cmd + 1;
	unsigned int r, i;

	cmd->dev = dev;
	cmd->rq = rq;
	farswap_nomap_reset(&cmd->nomap);
	for (r = 0; r < dev->params.replicas; r++) {
		struct farswap_leg *c = &cmd->leg[r];

		c->cmd = cmd;
		c->cqe.done = farswap_io_done;
		c->sg = at;
		c->sge = (struct ib_sge *)(c->sg + FARSWAP_MAX_SEGS);
		c->wr = (struct ib_rdma_wr *)(c->sge + FARSWAP_MAX_SEGS);
		at = c->wr + FARSWAP_MAX_SEGS;
	}
	cmd->page_buf = at;
	INIT_LIST_HEAD(&cmd->held_node);
	INIT_LIST_HEAD(&cmd->staged.node);
	if (!bounce)
		return 0;
	for (i = 0; i < ARRAY_SIZE(cmd->bounce); i++) {
		cmd->bounce[i] = alloc_pages_node(numa_node, GFP_KERNEL, 0);
		if (!cmd->bounce[i]) {
			farswap_cmd_exit(cmd);
			return -ENOMEM;
		}
	}
	return 0;
}

static void farswap_cmd_complete(struct farswap_cmd *cmd, blk_status_t status)
{
	struct request *rq = cmd->rq;

	if (!rq) {
		farswap_stage_end(cmd, status);
		return;
	}
	if (status != BLK_STS_OK)
		atomic64_inc(&cmd->dev->stats.errors);
	/* The next request in this context starts with a clean record. */
	farswap_nomap_reset(&cmd->nomap);
	cmd->status = status;
	blk_mq_complete_request(rq);
}

void farswap_cmd_fail(struct farswap_cmd *cmd, blk_status_t status)
{
	farswap_cmd_complete(cmd, status);
}

static void farswap_inflight_put(atomic_t *count)
{
	if (atomic_dec_and_test(count))
		wake_up_var(count);
}

static void farswap_account(struct farswap_cmd *cmd, bool write, u32 bytes)
{
	struct farswap_dev_stats *ds = &cmd->dev->stats;
	u64 ns = ktime_get_ns() - cmd->start_ns;
	unsigned int r;

	for (r = 0; r < cmd->nr_legs; r++) {
		struct farswap_donor *donor = cmd->leg[r].place.donor;
		struct farswap_donor_stats *ps = &donor->stats;

		if (cmd->leg[r].failed)
			continue;
		if (write) {
			atomic64_inc(&ps->writes);
			atomic64_add(bytes, &ps->write_bytes);
			farswap_lat_record(&ps->write_lat, ns);
		} else {
			atomic64_inc(&ps->reads);
			atomic64_add(bytes, &ps->read_bytes);
			farswap_lat_record(&ps->read_lat, ns);
			WRITE_ONCE(donor->read_ewma_ns,
				   farswap_replica_lat_update(READ_ONCE(donor->read_ewma_ns),
							      ns));
		}
	}
	/* A staged write's request was done when it was copied (stage.c). */
	if (cmd->rq)
		farswap_lat_record(write ? &ds->write_lat : &ds->read_lat, ns);
}

static void farswap_cmd_unmap(struct farswap_cmd *cmd, bool write)
{
	unsigned int r;

	for (r = 0; r < cmd->nr_legs; r++) {
		struct farswap_leg *c = &cmd->leg[r];

		if (!c->mapped_dev)
			continue;
		ib_dma_unmap_sg(c->mapped_dev, c->sg, c->nents,
				write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
		c->mapped_dev = NULL;
	}
}

static void farswap_cmd_requeue(struct farswap_cmd *cmd);

/*
 * A write failed on every replica because their sessions died: do they
 * all wait to be resumed?  Then the write waits too, instead of failing.
 */
static bool farswap_write_awaits_resume(struct farswap_cmd *cmd,
					struct farswap_chunk *chunk)
{
	bool wait = cmd->nr_legs > 0;
	unsigned long flags;
	unsigned int r;
	int b;

	spin_lock_irqsave(&chunk->lock, flags);
	for (r = 0; r < cmd->nr_legs && wait; r++) {
		b = farswap_chunk_place_locked(chunk, &cmd->leg[r].place);
		wait = b >= 0 && farswap_place_suspended(&chunk->place[b]);
	}
	spin_unlock_irqrestore(&chunk->lock, flags);
	return wait;
}

/*
 * A write is done: it stands if one replica took it.  One no replica
 * took waits for its donors to resume the chunk, and a staged write,
 * whose request was done long ago, goes out again to wherever the chunk
 * is placed now (stage.c).
 */
static void farswap_write_done(struct farswap_cmd *cmd,
			       struct farswap_chunk *chunk)
{
	struct farswap_dev *dev = cmd->dev;
	bool ok = false, stale = false;
	unsigned long flags;
	unsigned int r;

	for (r = 0; r < cmd->nr_legs; r++) {
		ok |= !cmd->leg[r].failed;
		stale |= cmd->leg[r].failed;
	}
	if (stale && ok) {
		/* The replicas that missed it no longer hold the chunk. */
		spin_lock_irqsave(&chunk->lock, flags);
		for (r = 0; r < cmd->nr_legs; r++)
			if (cmd->leg[r].failed)
				farswap_chunk_stale_locked(dev, chunk,
							   &cmd->leg[r].place);
		spin_unlock_irqrestore(&chunk->lock, flags);
		queue_work(dev->wq, &dev->repair_work);
	}
	if (ok)
		farswap_account(cmd, true, farswap_cmd_bytes(cmd));
	farswap_inflight_put(&chunk->inflight_writes);
	if (!ok && (farswap_write_awaits_resume(cmd, chunk) ||
		    farswap_stage_again(cmd))) {
		/* Written again once the donor is back (or lost as before). */
		cmd->nr_legs = 0;
		if (farswap_submit(cmd) != BLK_STS_OK)
			farswap_cmd_requeue(cmd);
		return;
	}
	farswap_cmd_complete(cmd, ok ? BLK_STS_OK : BLK_STS_IOERR);
}

/*
 * A replica returned a damaged page.  If another one holds that page
 * intact, the page is noted damaged in this one: reads of it go to the
 * other, and the repair work rewrites it from there.  A replica with too
 * many damaged pages is stale as a whole (the repair copies the chunk
 * again).  The last replica holding the page is kept as it is.
 */
static void farswap_heal(struct farswap_cmd *cmd, struct farswap_chunk *chunk)
{
	const struct farswap_placement *bad = &cmd->leg[0].place;
	struct farswap_dev *dev = cmd->dev;
	struct farswap_replica_set set;
	u32 page = cmd->bad_page;
	bool healed = false;
	unsigned long flags;
	int b;
	unsigned int r;

	spin_lock_irqsave(&chunk->lock, flags);
	b = farswap_chunk_place_locked(chunk, bad);
	farswap_chunk_replicas_locked(chunk, &set);
	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_placement *p = &chunk->place[r];

		if ((int)r != b && farswap_replica_serves(&set, r) &&
		    !farswap_damage_any(&p->damage, page, 1))
			healed = true;
	}
	if (healed && b >= 0 &&
	    !farswap_damage_add(&chunk->place[b].damage, page))
		farswap_chunk_stale_locked(dev, chunk, bad);
	healed &= b >= 0;
	spin_unlock_irqrestore(&chunk->lock, flags);
	if (healed) {
		atomic64_inc(&dev->stats.heals);
		queue_work(dev->wq, &dev->repair_work);
	}
}

/*
 * Take @bytes of the write queue's in-flight budget.  One write always
 * goes, whatever its size, so the queue never stalls; past the budget
 * the request waits in blk-mq (BLK_STS_RESOURCE) until a write of this
 * queue completes, which reruns it.
 */
bool farswap_write_budget_get(struct farswap_dev *dev, unsigned int hctx,
			      u32 bytes)
{
	u32 cap = READ_ONCE(dev->params.write_inflight_kb) << 10;
	atomic64_t *inflight = &dev->write_inflight[hctx];

	/*
	 * Counted with no cap too: every write's budget is put back when
	 * it completes, and the cap may be set while writes are in flight.
	 */
	if (farswap_write_budget_admit(atomic64_add_return(bytes, inflight),
				       bytes, cap))
		return true;
	atomic64_sub(bytes, inflight);
	atomic64_inc(&dev->stats.write_throttled);
	set_bit(hctx, &dev->write_throttled);
	/* Pairs with the barrier in farswap_write_budget_put(). */
	smp_mb__after_atomic();
	/* The writes we waited for may all have completed meanwhile. */
	if (atomic64_read(inflight) <= 0)
		return farswap_write_budget_get(dev, hctx, bytes);
	return false;
}

void farswap_write_budget_put(struct farswap_dev *dev, unsigned int hctx,
			      u32 bytes)
{
	atomic64_sub(bytes, &dev->write_inflight[hctx]);
	/* Pairs with the barrier in farswap_write_budget_get(). */
	smp_mb__after_atomic();
	/* Staged writes waiting for budget go first: they are older. */
	if (dev->stage)
		farswap_stage_kick(dev, hctx);
	if (test_bit(hctx, &dev->write_throttled) &&
	    test_and_clear_bit(hctx, &dev->write_throttled))
		blk_mq_run_hw_queues(dev->disk->queue, true);
}

/*
 * Send a request that cannot start now back to blk-mq, to retry; a
 * staged write back to its staging queue.
 */
static void farswap_cmd_requeue(struct farswap_cmd *cmd)
{
	struct request *rq = cmd->rq;
	u32 budget = cmd->write_budget;

	if (!rq) {
		farswap_stage_requeue(cmd);
		return;
	}
	cmd->write_budget = 0;
	if (budget)
		farswap_write_budget_put(cmd->dev, cmd->hctx_idx, budget);
	blk_mq_requeue_request(rq, false);
	blk_mq_delay_kick_requeue_list(rq->q, FARSWAP_REQUEUE_DELAY_MS);
}

/*
 * A read is done.  If its replica failed it (the transport, or a page's
 * integrity check), it goes to the next one before anything reaches the
 * block layer; EIO only when no replica is left.
 */
static void farswap_read_done(struct farswap_cmd *cmd, struct request *rq,
			      struct farswap_chunk *chunk)
{
	blk_status_t st = BLK_STS_OK;
	bool damaged = false;

	if (cmd->leg[0].failed) {
		st = BLK_STS_IOERR;
	} else {
		if (cmd->any_unwritten)
			farswap_zero_unwritten(cmd, rq);
		st = farswap_check_read(cmd, rq);
		damaged = st != BLK_STS_OK;
	}
	farswap_inflight_put(&chunk->inflight_reads);
	if (st == BLK_STS_OK) {
		farswap_account(cmd, false, blk_rq_bytes(rq));
		farswap_cmd_complete(cmd, BLK_STS_OK);
		return;
	}
	if (damaged) {
		cmd->failover_why = FARSWAP_FAILOVER_INTEGRITY;
		farswap_heal(cmd, chunk);
	} else {
		cmd->failover_why = READ_ONCE(cmd->leg[0].timed_out) ?
				    FARSWAP_FAILOVER_TIMEOUT :
				    FARSWAP_FAILOVER_TRANSPORT;
	}
	/*
	 * A replica whose session died under the read is not marked tried:
	 * its donor may come back with the same memory (resume.c), and the
	 * read then goes there again.  A dead one is not read from anyway.
	 */
	if (damaged || farswap_donor_live(cmd->leg[0].place.donor,
					  cmd->leg[0].place.gen))
		__set_bit(cmd->leg[0].place.donor->index, &cmd->tried);
	cmd->nr_legs = 0;
	if (farswap_submit(cmd) != BLK_STS_OK)
		farswap_cmd_requeue(cmd);
}

/* The last work request of a command completed. */
static void farswap_cmd_finish(struct farswap_cmd *cmd)
{
	struct farswap_chunk *chunk = farswap_chunk_of(cmd->dev, cmd->ext.chunk);
	bool write = farswap_cmd_write(cmd);

	farswap_cmd_unmap(cmd, write);
	if (write)
		farswap_write_done(cmd, chunk);
	else
		farswap_read_done(cmd, cmd->rq, chunk);
}

static void farswap_io_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_leg *c =
		container_of(wc->wr_cqe, struct farswap_leg, cqe);
	struct farswap_cmd *cmd = c->cmd;
	struct farswap_queue *q = cq->cq_context;

	WRITE_ONCE(q->last_progress, jiffies);
	trace_farswap_complete(c, wc);
	atomic_dec(&c->outstanding);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		WRITE_ONCE(c->failed, true);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			atomic64_inc(&c->place.donor->stats.errors);
		/*
		 * A flush is usually the echo of an error already handled
		 * (then this does nothing); a flush on a live donor means a
		 * queue pair died unseen, and the donor must be failed too.
		 */
		farswap_donor_error(c->place.donor,
				    ib_wc_status_msg(wc->status));
	}
	if (atomic_dec_and_test(&cmd->pending))
		farswap_cmd_finish(cmd);
}

/*
 * Build a leg's scatterlist of the request's data.  The block layer's
 * own mapping cuts and merges segments by the queue's max_segment_size
 * and boundary, exactly as it counted the request's segments: no entry
 * is larger than the DMA layer can map (a THP swap-out under swiotlb is
 * cut into bounceable pieces, farswap_max_segment()), and there are at
 * most max_segments of them.
 */
static int farswap_build_sg(struct farswap_leg *c, struct request *rq)
{
	int n;

	if (WARN_ON_ONCE(blk_rq_nr_phys_segments(rq) > FARSWAP_MAX_SEGS))
		return -EINVAL;
	sg_init_table(c->sg, FARSWAP_MAX_SEGS);
	n = farswap_rq_map_sg(rq, c->sg);
	return n > 0 ? n : -EINVAL;
}

/*
 * A sealed or staged write's scatterlist: its bounce pages, one entry
 * each.
 */
static int farswap_build_bounce_sg(struct farswap_leg *c)
{
	unsigned int n = farswap_cmd_bytes(c->cmd) >> FARSWAP_PAGE_SHIFT, i;

	sg_init_table(c->sg, n);
	for (i = 0; i < n; i++)
		sg_set_page(&c->sg[i], c->cmd->bounce[i], FARSWAP_PAGE_BYTES,
			    0);
	return n;
}

/* Chain a leg's RDMA work requests: at most max_sge entries each. */
static unsigned int farswap_build_wrs(struct farswap_leg *c, u64 off,
				      bool write, int nents, u32 max_sge,
				      u32 lkey)
{
	u64 raddr = c->place.addr + off;
	struct ib_rdma_wr *wr = NULL;
	struct scatterlist *sg;
	unsigned int nwr = 0;
	int i;

	for_each_sg(c->sg, sg, nents, i) {
		struct ib_sge *sge = &c->sge[i];

		if (!wr || wr->wr.num_sge == max_sge) {
			if (wr)
				wr->wr.next = &c->wr[nwr].wr;
			wr = &c->wr[nwr++];
			memset(wr, 0, sizeof(*wr));
			wr->wr.wr_cqe = &c->cqe;
			wr->wr.opcode = write ? IB_WR_RDMA_WRITE :
						IB_WR_RDMA_READ;
			wr->wr.send_flags = IB_SEND_SIGNALED;
			wr->wr.sg_list = sge;
			wr->remote_addr = raddr;
			wr->rkey = c->place.rkey;
		}
		sge->addr = sg_dma_address(sg);
		sge->length = sg_dma_len(sg);
		sge->lkey = lkey;
		wr->wr.num_sge++;
		raddr += sge->length;
	}
	return nwr;
}

enum farswap_post_result {
	FARSWAP_POSTED,		/* the completion finishes the command */
	FARSWAP_POST_STALE,	/* no placement's session is live: decide again */
	FARSWAP_POST_NOMAP,	/* no DMA mapping now: retry the request later */
};

/* Map a leg's pages for its donor's device; false if it is not live. */
static int farswap_map_leg(struct farswap_leg *c, struct request *rq,
			    bool write)
{
	struct farswap_donor *donor = c->place.donor;
	int nents, mapped;

	c->mapped_dev = NULL;
	if (!farswap_donor_live(donor, c->place.gen)) {
		c->failed = true;
		return 0;
	}
	if (write && (c->cmd->dev->seal_tags || !rq))
		nents = farswap_build_bounce_sg(c);
	else
		nents = farswap_build_sg(c, rq);
	if (nents < 0)
		return nents;
	/* IOMMU and swiotlb mappings fail exactly under memory pressure. */
	mapped = ib_dma_map_sg(donor->ibdev, c->sg, nents,
			       write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (!mapped)
		return -ENOMEM;
	c->mapped_dev = donor->ibdev;
	c->nents = nents;
	return mapped;
}

/* Post a mapped leg; returns its work requests that will complete. */
static unsigned int farswap_post_leg(struct farswap_cmd *cmd,
				      struct farswap_leg *c, bool write,
				      int mapped)
{
	struct farswap_donor *donor = c->place.donor;
	const struct ib_send_wr *bad = NULL;
	unsigned int nwr, posted;
	int ret;

	nwr = farswap_build_wrs(c, cmd->ext.chunk_off, write, mapped,
				write ? donor->max_sge : donor->max_read_sge,
				donor->pd->local_dma_lkey);
	/* Before the post: a completion may be traced as soon as it is made. */
	trace_farswap_post(cmd, c, nwr);
	/* Before the post: completions may come at once. */
	atomic_set(&c->outstanding, nwr);
	ret = ib_post_send(donor->ioq[cmd->hctx_idx].qp, &c->wr[0].wr, &bad);
	if (likely(!ret))
		return nwr;
	/* Those before @bad were posted and will complete. */
	for (posted = 0; posted < nwr && &c->wr[posted].wr != bad; posted++)
		;
	atomic_sub(nwr - posted, &c->outstanding);
	farswap_donor_pr_err_ratelimited(donor, ": posting %u work requests failed (%d)\n",
					 nwr, ret);
	c->failed = true;
	farswap_donor_error(donor, "posting a work request failed");
	return posted;
}

/*
 * Post the command to its legs' placements.  Unless it returns
 * FARSWAP_POSTED, nothing was posted and the command is still the
 * caller's.
 */
static enum farswap_post_result farswap_post(struct farswap_cmd *cmd,
					     struct request *rq, bool write)
{
	int mapped[FARSWAP_MAX_REPLICAS];
	unsigned int r, live = 0, nwr = 0;

	rcu_read_lock();
	for (r = 0; r < cmd->nr_legs; r++) {
		cmd->leg[r].failed = false;
		cmd->leg[r].timed_out = false;
		atomic_set(&cmd->leg[r].outstanding, 0);
		mapped[r] = farswap_map_leg(&cmd->leg[r], rq, write);
		if (mapped[r] < 0)
			break;
		live += mapped[r] > 0;
	}
	if (r < cmd->nr_legs || !live) {
		int err = r < cmd->nr_legs ? mapped[r] : 0;

		rcu_read_unlock();
		farswap_cmd_unmap(cmd, write);
		if (err == -EINVAL) {
			/* Only a request's own pages can be out of limits. */
			farswap_dev_pr_err_ratelimited(cmd->dev, "request of %u segments exceeds the device limits\n",
						       rq ? blk_rq_nr_phys_segments(rq) : 0);
			farswap_inflight_put(write ?
				&farswap_chunk_of(cmd->dev, cmd->ext.chunk)->inflight_writes :
				&farswap_chunk_of(cmd->dev, cmd->ext.chunk)->inflight_reads);
			farswap_cmd_complete(cmd, BLK_STS_IOERR);
			return FARSWAP_POSTED;
		}
		return err ? FARSWAP_POST_NOMAP : FARSWAP_POST_STALE;
	}
	/* Ours keeps the count above zero until every leg is posted. */
	atomic_set(&cmd->pending, 1 + FARSWAP_MAX_REPLICAS * FARSWAP_MAX_SEGS);
	for (r = 0; r < cmd->nr_legs; r++)
		if (mapped[r] > 0)
			nwr += farswap_post_leg(cmd, &cmd->leg[r], write,
						 mapped[r]);
	rcu_read_unlock();
	/* Keep one for each posted work request and ours, drop ours. */
	if (atomic_sub_and_test(FARSWAP_MAX_REPLICAS * FARSWAP_MAX_SEGS - nwr + 1,
				&cmd->pending))
		farswap_cmd_finish(cmd);
	return FARSWAP_POSTED;
}

/*
 * A read served from a staged write's copy (farswap_stage_meet_locked()
 * put it in the request's pages): checked as a read from a donor is.
 */
static void farswap_read_staged(struct farswap_cmd *cmd)
{
	struct farswap_dev *dev = cmd->dev;
	blk_status_t st = farswap_check_read(cmd, cmd->rq);

	if (st == BLK_STS_OK) {
		atomic64_inc(&dev->stats.stage_reads);
		farswap_lat_record(&dev->stats.read_lat,
				   ktime_get_ns() - cmd->start_ns);
	}
	farswap_cmd_complete(cmd, st);
}

/* Zero the request's pages: a read of pages that were never written. */
static void farswap_zero_rq(struct request *rq)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter)
		memzero_page(bv.bv_page, bv.bv_offset, bv.bv_len);
}

/* Which pages of a read's range were never written (zeroed on landing). */
static void farswap_note_unwritten(struct farswap_cmd *cmd,
				   struct farswap_chunk *chunk)
{
	const struct farswap_extent *e = &cmd->ext;
	u32 i;

	cmd->any_unwritten = false;
	for (i = 0; i < e->nr_pages; i++) {
		bool unwritten = !test_bit(e->first_page + i,
					   chunk->pages.written);

		__assign_bit(i, cmd->unwritten, unwritten);
		cmd->any_unwritten |= unwritten;
	}
}

/*
 * The replicas of a chunk as the I/O path sees them now.  A read does not
 * go to a replica with a damaged page in its range; a write goes to it
 * all the same, and makes those pages whole.
 */
static unsigned int farswap_replica_views(const struct farswap_cmd *cmd,
					  const struct farswap_chunk *chunk,
					  bool write,
					  struct farswap_replica_view *v)
{
	unsigned int r;

	for (r = 0; r < chunk->nr_places; r++) {
		const struct farswap_placement *p = &chunk->place[r];

		v[r].live = farswap_place_live(p);
		v[r].uptodate = (chunk->uptodate & BIT(r)) &&
				(write ||
				 !farswap_damage_any(&p->damage,
						     cmd->ext.first_page,
						     cmd->ext.nr_pages));
		v[r].tried = test_bit(p->donor->index, &cmd->tried);
		v[r].lat_ns = READ_ONCE(p->donor->read_ewma_ns);
	}
	return chunk->nr_places;
}

/*
 * A write goes to every live current replica; a current one whose donor
 * died misses it, so it is current no more (the loss work drops it).
 */
static void farswap_claim_write(struct farswap_cmd *cmd,
				struct farswap_chunk *chunk,
				const struct farswap_replica_view *v,
				unsigned int n)
{
	unsigned int set = farswap_replica_write_set(v, n), r;

	chunk->uptodate &= set;
	cmd->nr_legs = 0;
	for (r = 0; r < n; r++) {
		if (!(set & BIT(r)))
			continue;
		farswap_damage_clear(&chunk->place[r].damage,
				     cmd->ext.first_page, cmd->ext.nr_pages);
		cmd->leg[cmd->nr_legs++].place = chunk->place[r];
	}
	farswap_pages_mark_written(&chunk->pages, cmd->ext.first_page,
				   cmd->ext.nr_pages);
	atomic_inc(&chunk->inflight_writes);
}

/* A read goes to one replica; false when none untried is left. */
static bool farswap_claim_read(struct farswap_cmd *cmd,
			       struct farswap_chunk *chunk,
			       const struct farswap_replica_view *v,
			       unsigned int n)
{
	int r = farswap_replica_pick_read(v, n, cmd->ext.chunk ^
					  cmd->ext.first_page,
					  READ_ONCE(cmd->dev->params.read_policy));

	if (r < 0)
		return false;
	if (cmd->tried) {
		atomic64_inc(&cmd->dev->stats.failovers);
		/* leg[0] still names the replica that failed it */
		trace_farswap_failover(cmd, cmd->leg[0].place.donor,
				       chunk->place[r].donor);
	}
	cmd->leg[0].place = chunk->place[r];
	cmd->nr_legs = 1;
	farswap_note_unwritten(cmd, chunk);
	atomic_inc(&chunk->inflight_reads);
	return true;
}

/*
 * Does a copy that would serve the request wait for its donor to resume
 * it (and the request for it, not an error)?  A read not tried there yet,
 * or any write.
 */
static bool farswap_chunk_awaits_resume(const struct farswap_chunk *chunk,
					const struct farswap_replica_view *v,
					unsigned int n)
{
	unsigned int r;

	for (r = 0; r < n; r++)
		if (v[r].uptodate && !v[r].tried &&
		    farswap_place_suspended(&chunk->place[r]))
			return true;
	return false;
}

/*
 * Decide, under the chunk lock, what the request does with its chunk.  A
 * first write takes free slots in held donor slabs right here; only when
 * none has room is the chunk parked for the bind work.
 */
static enum farswap_io_action farswap_claim(struct farswap_cmd *cmd,
					    struct farswap_chunk *chunk,
					    bool write)
{
	struct farswap_replica_view view[FARSWAP_MAX_REPLICAS];
	const struct farswap_extent *e = &cmd->ext;
	struct farswap_dev *dev = cmd->dev;
	struct farswap_io_view v = { .write = write };
	enum farswap_io_action act;
	unsigned int n;

	lockdep_assert_held(&chunk->lock);
again:
	n = farswap_replica_views(cmd, chunk, write, view);
	v.state = chunk->state;
	v.any_written = farswap_pages_any_written(&chunk->pages, e->first_page,
						  e->nr_pages);
	v.any_lost = farswap_pages_any_lost(&chunk->pages, e->first_page,
					    e->nr_pages);
	v.place_live = farswap_replica_serving(view, n) > 0;
	v.place_suspended = !v.place_live &&
			    farswap_chunk_awaits_resume(chunk, view, n);
	act = farswap_io_decide(&v);

	switch (act) {
	case FARSWAP_IO_RDMA:
		if (write)
			farswap_claim_write(cmd, chunk, view, n);
		else if (!farswap_claim_read(cmd, chunk, view, n))
			act = FARSWAP_IO_FAIL;
		break;
	case FARSWAP_IO_BIND:
		/* Every replica from held slabs, or the bind work asks. */
		farswap_chunk_fill_locked(dev, chunk, false);
		if (chunk->nr_places &&
		    chunk->nr_places >= farswap_replicas_possible(dev)) {
			chunk->state = FARSWAP_CHUNK_BOUND;
			atomic64_inc(&dev->stats.binds);
			goto again;
		}
		chunk->state = FARSWAP_CHUNK_BINDING;
		fallthrough;
	case FARSWAP_IO_HOLD:
		list_add_tail(&cmd->held_node, &chunk->held);
		break;
	default:
		break;
	}
	return act;
}

/* Is a placement of the chunk on a dead session? */
static bool farswap_chunk_any_dead(const struct farswap_chunk *chunk)
{
	struct farswap_replica_set set;

	farswap_chunk_replicas_locked(chunk, &set);
	return !farswap_replica_all_live(&set);
}

/**
 * farswap_submit - start a read or write request
 * @cmd: the request's context
 *
 * Called from queue_rq, from work items for requests that were held on a
 * chunk while it was being bound or moved, and from a read's completion
 * to try the next replica.
 *
 * Return: BLK_STS_OK when the request is on its way (or done), or
 * BLK_STS_RESOURCE when it could not be started now and nothing of it
 * was done: the caller has it retried.
 */
blk_status_t farswap_submit(struct farswap_cmd *cmd)
{
	struct request *rq = cmd->rq;
	struct farswap_dev *dev = cmd->dev;
	bool write = farswap_cmd_write(cmd);
	u64 pos = farswap_cmd_pos(cmd);
	enum farswap_stage_verdict staged;
	struct farswap_chunk *chunk;
	enum farswap_io_action act;
	unsigned long flags;
	bool dead;
	int n;

	n = farswap_split(&dev->geo, pos, farswap_cmd_bytes(cmd), &cmd->ext, 1);
	if (unlikely(n != 1)) {
		farswap_dev_pr_err_ratelimited(dev, "request at byte %llu, %u bytes, is misaligned or crosses a chunk\n",
					       pos, farswap_cmd_bytes(cmd));
		farswap_cmd_complete(cmd, BLK_STS_IOERR);
		return BLK_STS_OK;
	}
	chunk = farswap_chunk_of(dev, cmd->ext.chunk);
	/* A staged write was sealed or tagged when it was copied. */
	if (write && rq && dev->seal_tags && !farswap_seal_write(cmd, rq)) {
		farswap_cmd_complete(cmd, BLK_STS_IOERR);
		return BLK_STS_OK;
	}
	if (write && rq)
		farswap_tag_write(cmd, rq);

again:
	spin_lock_irqsave(&chunk->lock, flags);
	staged = farswap_stage_meet_locked(cmd, chunk, write);
	if (staged == FARSWAP_STAGE_NONE) {
		act = farswap_claim(cmd, chunk, write);
		dead = farswap_chunk_any_dead(chunk);
	}
	spin_unlock_irqrestore(&chunk->lock, flags);
	if (staged == FARSWAP_STAGE_SERVE)
		farswap_read_staged(cmd);
	/* Or it waits for a staged write of its pages to be written. */
	if (staged != FARSWAP_STAGE_NONE)
		return BLK_STS_OK;

	switch (act) {
	case FARSWAP_IO_RDMA:
		switch (farswap_post(cmd, rq, write)) {
		case FARSWAP_POSTED:
			farswap_nomap_reset(&cmd->nomap);
			return BLK_STS_OK;
		case FARSWAP_POST_NOMAP:
			farswap_inflight_put(write ? &chunk->inflight_writes :
						     &chunk->inflight_reads);
			if (farswap_nomap_give_up(&cmd->nomap, jiffies,
						  msecs_to_jiffies(dev->params.io_timeout_ms))) {
				farswap_dev_pr_err_ratelimited(dev, "%s of %u bytes at sector %llu: DMA mapping failed %u times in a row: failing it\n",
							       write ? "write" : "read",
							       farswap_cmd_bytes(cmd),
							       pos >> SECTOR_SHIFT,
							       cmd->nomap.tries);
				farswap_cmd_complete(cmd, BLK_STS_IOERR);
				return BLK_STS_OK;
			}
			return BLK_STS_RESOURCE;
		case FARSWAP_POST_STALE:
			/* The sessions died between the decision and the post. */
			farswap_inflight_put(write ? &chunk->inflight_writes :
						     &chunk->inflight_reads);
			goto again;
		}
		break;
	case FARSWAP_IO_ZERO:
		farswap_zero_rq(rq);
		atomic64_inc(&dev->stats.zero_reads);
		farswap_cmd_complete(cmd, BLK_STS_OK);
		break;
	case FARSWAP_IO_BIND:
		atomic64_inc(&dev->stats.held);
		farswap_chunk_queue_bind(dev, chunk);
		break;
	case FARSWAP_IO_HOLD:
		atomic64_inc(&dev->stats.held);
		/* Held behind dead placements: the loss work drops them. */
		if (dead)
			queue_work(dev->wq, &dev->loss_work);
		break;
	case FARSWAP_IO_FAIL:
		farswap_dev_pr_err_ratelimited(dev, "read of chunk %u pages %u-%u failed: %s\n",
					       cmd->ext.chunk,
					       cmd->ext.first_page,
					       cmd->ext.first_page + cmd->ext.nr_pages - 1,
					       cmd->tried ? "no replica could serve it" : "their donor is gone");
		farswap_cmd_complete(cmd, BLK_STS_IOERR);
		break;
	}
	if (dead && act != FARSWAP_IO_HOLD)
		queue_work(dev->wq, &dev->loss_work);
	return BLK_STS_OK;
}

/**
 * farswap_discard - forget the pages of a discard request
 * @cmd: the request's context
 * @rq: the request
 *
 * Only whole pages are forgotten.  A chunk left with no page in use lets
 * go of its slot; a donor slab left with no chunk goes back to its donor.
 */
void farswap_discard(struct farswap_cmd *cmd, struct request *rq)
{
	struct farswap_dev *dev = cmd->dev;
	u64 pos = blk_rq_pos(rq) << SECTOR_SHIFT;
	u64 start = round_up(pos, FARSWAP_PAGE_BYTES);
	u64 end = round_down(pos + blk_rq_bytes(rq), FARSWAP_PAGE_BYTES);

	while (start < end) {
		u64 len = min_t(u64, end - start, FARSWAP_CHUNK_BYTES -
				(start & (FARSWAP_CHUNK_BYTES - 1)));
		struct farswap_placement place[FARSWAP_MAX_REPLICAS];
		unsigned int released = 0, r;
		struct farswap_chunk *chunk;
		struct farswap_extent e;
		unsigned long flags;

		if (farswap_split(&dev->geo, start, len, &e, 1) != 1)
			break;
		chunk = farswap_chunk_of(dev, e.chunk);
		spin_lock_irqsave(&chunk->lock, flags);
		if (!farswap_pages_discard(&chunk->pages, e.first_page,
					   e.nr_pages))
			released = farswap_chunk_release_locked(dev, chunk,
								place);
		spin_unlock_irqrestore(&chunk->lock, flags);
		for (r = 0; r < released; r++)
			farswap_put_slot(dev, &place[r]);
		start += len;
	}
	farswap_cmd_complete(cmd, BLK_STS_OK);
}

/*
 * Requests held on a chunk start again.  One that cannot start now goes
 * back to blk-mq, as queue_rq's BLK_STS_RESOURCE would send it: its write
 * budget is returned, as queue_rq takes it again.
 */
void farswap_resubmit_held(struct list_head *held)
{
	struct farswap_cmd *cmd, *next;

	list_for_each_entry_safe(cmd, next, held, held_node) {
		list_del_init(&cmd->held_node);
		if (farswap_submit(cmd) != BLK_STS_OK)
			farswap_cmd_requeue(cmd);
	}
}

void farswap_fail_held(struct list_head *held, blk_status_t status)
{
	struct farswap_cmd *cmd, *next;

	list_for_each_entry_safe(cmd, next, held, held_node) {
		list_del_init(&cmd->held_node);
		farswap_cmd_complete(cmd, status);
	}
}

/**
 * farswap_cmd_stall_check - judge a request or staged write long in flight
 * @cmd: its context
 *
 * Called by blk-mq's timer for a request, and by the staging scan for a
 * staged write (which has no request, nor timer).  A leg not done after
 * io_timeout_ms whose queue pair completed nothing in that time either:
 * the donor is dead or stuck, and is failed; its teardown drains the
 * queues, completing the leg with an error.  A queue that makes progress
 * is only slow (a long backlog of large writes, a loaded machine): wait
 * on.
 */
void farswap_cmd_stall_check(struct farswap_cmd *cmd)
{
	unsigned long tmo = msecs_to_jiffies(cmd->dev->params.io_timeout_ms);
	unsigned int r, n = READ_ONCE(cmd->nr_legs);
	char why[64];

	if (atomic_read(&cmd->pending) <= 0)
		return;
	snprintf(why, sizeof(why), "no I/O completed in %u ms",
		 cmd->dev->params.io_timeout_ms);
	/*
	 * Each replica's donor on its own: failing a stuck one completes
	 * its leg (flushed), and a read then goes to the next replica.
	 */
	for (r = 0; r < n && r < FARSWAP_MAX_REPLICAS; r++) {
		struct farswap_donor *donor = READ_ONCE(cmd->leg[r].place.donor);
		unsigned long last;

		/*
		 * A leg its donor has completed says nothing against it,
		 * however long the request waits for another replica (whose
		 * stall may hold every write of this queue, so that the
		 * healthy donor's queue shows no progress either).
		 */
		if (!donor || !atomic_read(&cmd->leg[r].outstanding))
			continue;
		last = max(READ_ONCE(donor->ioq[cmd->hctx_idx].last_progress),
			   READ_ONCE(cmd->start_jiffies));
		if (time_before(jiffies, last + tmo))
			continue;
		/* For the farswap_failover event: a read's reason to move. */
		WRITE_ONCE(cmd->leg[r].timed_out, true);
		farswap_donor_error(donor, why);
	}
}
