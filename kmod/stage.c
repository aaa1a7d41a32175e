// SPDX-License-Identifier: GPL-2.0
/*
 * The staging area: a swap-out completes as soon as its pages are copied
 * into a staging slot of its write queue (sealed there with encrypt=1,
 * tagged with integrity on), and is written to the donors from there.
 * Reclaim then waits for a memcpy instead of the network, while the
 * staged writes keep the wire busy behind it.
 *
 * A swap device's content need not outlive the host, so a write done in
 * host memory is safe as long as it is not lost while the host lives:
 *  - a staged write no replica took goes out again, to wherever its chunk
 *    is placed by then (its donor's resume, a fresh slot after the loss
 *    work); only after FARSWAP_STAGE_TRIES attempts, or when no donor
 *    has room, are its pages lost, and reading them fails as for a dead
 *    donor's pages, never returns an older version;
 *  - until it is written, reads of its pages see its copy, and newer
 *    writes of them wait (stagemap.h);
 *  - its chunk keeps its slots meanwhile (a discard of the chunk's last
 *    pages does not give them back before);
 *  - detach waits for it.
 * Only a write to a bound chunk is staged: a chunk's first write waits
 * for its bind as without staging, so that "no donor has room" still
 * fails a request the swap layer sees.  With every slot of its queue in
 * use a write goes to the donors directly: staging never grows.
 *
 * A staged write takes its queue's write budget (write_inflight_kb) when
 * it is posted; staged writes wait for it in order on the queue's ready
 * list.  A staged write has no request, so no blk-mq timer: a scan does
 * the timer's stall check while any is in use.
 */
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "compat.h"
#include "farswap.h"
#include "log.h"
#include "trace.h"

/* Attempts of a staged write before its pages are counted lost. */
#define FARSWAP_STAGE_TRIES	8
/* Retry delay of a staged write that found no DMA mapping. */
#define FARSWAP_STAGE_RETRY_MS	3

static void farswap_stage_scan(struct work_struct *work);
static void farswap_stage_retry(struct work_struct *work);

/* Give a slot back; its waiters for a free slot (detach) are told. */
static void farswap_stage_put_slot(struct farswap_stage_queue *sq, u16 slot)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&sq->lock, flags);
	ok = farswap_stage_slots_put(&sq->slots, slot);
	spin_unlock_irqrestore(&sq->lock, flags);
	if (!ok)
		farswap_dev_pr_err_ratelimited(sq->dev, "staging slot %u of queue %u given back twice\n",
					       slot, sq->hctx);
	wake_up(&sq->dev->stage_idle);
}

/* Staging slots holding a write not yet written, over every queue. */
unsigned int farswap_stage_used(struct farswap_dev *dev)
{
	unsigned int q, used = 0;
	unsigned long flags;

	for (q = 0; dev->stage && q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];

		spin_lock_irqsave(&sq->lock, flags);
		used += farswap_stage_slots_used(&sq->slots);
		spin_unlock_irqrestore(&sq->lock, flags);
	}
	return used;
}

/* Host memory staging takes: each slot's pages and its command. */
u64 farswap_stage_bytes(const struct farswap_dev *dev)
{
	if (!dev->stage)
		return 0;
	return (u64)dev->params.nr_queues * dev->stage[0].slots.nr *
	       (FARSWAP_STAGE_SLOT_BYTES +
		farswap_cmd_size(dev->params.replicas));
}

/**
 * farswap_stage_alloc - preallocate a device's staging, at attach
 * @dev: the device, its parameters set
 *
 * stage_kb per write queue, in slots of FARSWAP_STAGE_SLOT_BYTES: each a
 * command of its own with its bounce pages.  Nothing is allocated later.
 *
 * Return: 0, or -ENOMEM (nothing left allocated).
 */
int farswap_stage_alloc(struct farswap_dev *dev)
{
	unsigned int nr = DIV_ROUND_UP(dev->params.stage_kb,
				       FARSWAP_STAGE_SLOT_BYTES >> 10);
	unsigned int q, i;

	if (!nr)
		return 0;
	dev->stage = kcalloc(dev->params.nr_queues, sizeof(*dev->stage),
			     GFP_KERNEL);
	if (!dev->stage)
		return -ENOMEM;
	INIT_DELAYED_WORK(&dev->stage_scan_work, farswap_stage_scan);
	/* Every queue's lock first: a failure frees through them all. */
	for (q = 0; q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];

		sq->dev = dev;
		sq->hctx = q;
		spin_lock_init(&sq->lock);
		INIT_LIST_HEAD(&sq->ready);
		INIT_LIST_HEAD(&sq->retry);
		INIT_DELAYED_WORK(&sq->retry_work, farswap_stage_retry);
	}
	for (q = 0; q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];
		u16 *free;

		free = kcalloc(nr, sizeof(*free), GFP_KERNEL);
		sq->cmd = kcalloc(nr, sizeof(*sq->cmd), GFP_KERNEL);
		if (!free || !sq->cmd) {
			kfree(free);
			goto fail;
		}
		farswap_stage_slots_init(&sq->slots, free, nr);
		for (i = 0; i < nr; i++) {
			struct farswap_cmd *s;

			s = kzalloc(farswap_cmd_size(dev->params.replicas),
				    GFP_KERNEL);
			if (!s)
				goto fail;
			sq->cmd[i] = s;
			if (farswap_cmd_init(s, dev, NULL, true, NUMA_NO_NODE))
				goto fail;
			s->stage = sq;
			s->stage_slot = i;
			s->hctx_idx = q;
		}
	}
	return 0;
fail:
	farswap_stage_free(dev);
	return -ENOMEM;
}

void farswap_stage_free(struct farswap_dev *dev)
{
	unsigned int q, i, used = farswap_stage_used(dev);

	if (!dev->stage)
		return;
	if (used) {
		/* A slot still posted may yet complete: never free it. */
		farswap_dev_pr_err(dev, "%u staged writes outlived their donors: their staging is not freed\n",
				   used);
		return;
	}
	for (q = 0; q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];

		for (i = 0; sq->cmd && i < sq->slots.nr; i++) {
			if (!sq->cmd[i])
				continue;
			farswap_cmd_exit(sq->cmd[i]);
			kfree(sq->cmd[i]);
		}
		kfree(sq->cmd);
		kfree(sq->slots.free);
	}
	kfree(dev->stage);
	dev->stage = NULL;
}

/*
 * Copy between a request's pages and staging slot @s's, starting @off
 * bytes into the slot: into the slot to stage a write, out of it to
 * serve a read.
 */
static void farswap_stage_copy(struct farswap_cmd *s, u32 off,
			       struct request *rq, bool to_rq)
{
	struct req_iterator iter;
	struct bio_vec bv;

	/* bv itself is the iterator's step: the pieces are copies. */
	rq_for_each_segment(bv, rq, iter) {
		u32 done = 0;

		while (done < bv.bv_len) {
			u32 in = off & (FARSWAP_PAGE_BYTES - 1);
			struct bio_vec piece = bv;
			void *slot;

			if (WARN_ON_ONCE(off >= FARSWAP_STAGE_SLOT_BYTES))
				return;
			piece.bv_offset += done;
			piece.bv_len = min(bv.bv_len - done,
					   FARSWAP_PAGE_BYTES - in);
			slot = page_address(s->bounce[off >> FARSWAP_PAGE_SHIFT]) +
			       in;
			if (to_rq)
				memcpy_to_bvec(&piece, slot);
			else
				memcpy_from_bvec(slot, &piece);
			done += piece.bv_len;
			off += piece.bv_len;
		}
	}
}

static void farswap_stage_scan_arm(struct farswap_dev *dev)
{
	unsigned int ms = max(dev->params.io_timeout_ms / 4, 100U);

	queue_delayed_work(dev->wq, &dev->stage_scan_work,
			   msecs_to_jiffies(ms));
}

/*
 * blk-mq's timer for staged writes: the stall check of every one posted,
 * a few times per io_timeout_ms, while any slot is in use.
 */
static void farswap_stage_scan(struct work_struct *work)
{
	struct farswap_dev *dev = container_of(to_delayed_work(work),
					       struct farswap_dev,
					       stage_scan_work);
	unsigned int q, i;

	for (q = 0; q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];

		for (i = 0; i < sq->slots.nr; i++)
			farswap_cmd_stall_check(sq->cmd[i]);
	}
	if (farswap_stage_used(dev) && !READ_ONCE(dev->stage_stopping))
		farswap_stage_scan_arm(dev);
}

/**
 * farswap_stage_kick - post a write queue's staged writes, in order, as
 * far as its write budget goes
 * @dev: the device
 * @hctx: the write queue
 *
 * Called when a write is staged and whenever write budget comes back.
 * One kick posts at a time; a kick that finds another under way leaves
 * it to go on.
 */
void farswap_stage_kick(struct farswap_dev *dev, unsigned int hctx)
{
	struct farswap_stage_queue *sq = &dev->stage[hctx];
	struct farswap_cmd *s;
	unsigned long flags;

	if (READ_ONCE(dev->stage_paused))
		return;
	spin_lock_irqsave(&sq->lock, flags);
	if (sq->kicking) {
		sq->again = true;
		spin_unlock_irqrestore(&sq->lock, flags);
		return;
	}
	sq->kicking = true;
	for (;;) {
		sq->again = false;
		s = list_first_entry_or_null(&sq->ready, struct farswap_cmd,
					     held_node);
		if (!s)
			break;
		if (!farswap_write_budget_get(dev, hctx, s->stage_bytes)) {
			/* Budget that came back meanwhile: try again. */
			if (sq->again)
				continue;
			break;
		}
		list_del_init(&s->held_node);
		s->write_budget = s->stage_bytes;
		/* The stall check and the donors' latency count from here. */
		s->start_jiffies = jiffies;
		s->start_ns = ktime_get_ns();
		spin_unlock_irqrestore(&sq->lock, flags);
		if (farswap_submit(s) != BLK_STS_OK)
			farswap_stage_requeue(s);
		spin_lock_irqsave(&sq->lock, flags);
	}
	sq->kicking = false;
	spin_unlock_irqrestore(&sq->lock, flags);
}

/**
 * farswap_stage_take - stage a write request, and complete it
 * @rcmd: the request's context
 * @rq: the write request
 *
 * Return: true if the request was staged and is done; false if it goes
 * to the donors itself (no staging, every slot in use, a chunk not yet
 * bound, or a write staging cannot take).
 */
bool farswap_stage_take(struct farswap_cmd *rcmd, struct request *rq)
{
	struct farswap_dev *dev = rcmd->dev;
	struct farswap_stage_queue *sq;
	struct farswap_chunk *chunk;
	struct farswap_cmd *s;
	unsigned long flags;
	bool bound;
	int slot;

	if (!dev->stage || blk_rq_bytes(rq) > FARSWAP_STAGE_SLOT_BYTES)
		return false;
	sq = &dev->stage[rcmd->hctx_idx];
	spin_lock_irqsave(&sq->lock, flags);
	slot = farswap_stage_slots_get(&sq->slots);
	spin_unlock_irqrestore(&sq->lock, flags);
	if (slot < 0) {
		atomic64_inc(&dev->stats.stage_full);
		return false;
	}
	s = sq->cmd[slot];
	s->stage_pos = blk_rq_pos(rq) << SECTOR_SHIFT;
	s->stage_bytes = blk_rq_bytes(rq);
	/* The direct path reports a request that is out of bounds. */
	if (farswap_split(&dev->geo, s->stage_pos, s->stage_bytes, &s->ext,
			  1) != 1)
		goto direct;
	chunk = farswap_chunk_of(dev, s->ext.chunk);
	if (READ_ONCE(chunk->state) != FARSWAP_CHUNK_BOUND)
		goto direct;
	/* Sealed or tagged once, here, from the request's pages. */
	if (dev->seal_tags) {
		if (!farswap_seal_write(s, rq))
			goto direct;
	} else {
		farswap_stage_copy(s, 0, rq, false);
		farswap_tag_write(s, rq);
	}
	s->staged.first_page = s->ext.first_page;
	s->staged.nr_pages = s->ext.nr_pages;
	spin_lock_irqsave(&chunk->lock, flags);
	bound = chunk->state == FARSWAP_CHUNK_BOUND;
	if (bound)
		list_add_tail(&s->staged.node, &chunk->staged);
	spin_unlock_irqrestore(&chunk->lock, flags);
	if (!bound)
		goto direct;

	s->status = BLK_STS_OK;
	s->write_budget = 0;
	s->nr_legs = 0;
	s->tried = 0;
	s->stage_retries = 0;
	atomic_set(&s->pending, 0);
	farswap_nomap_reset(&s->nomap);
	atomic64_inc(&dev->stats.staged);

	/* Its pages are safe in the slot, and on the chunk's list: done. */
	trace_farswap_queue_rq(rcmd);
	blk_mq_start_request(rq);
	farswap_lat_record(&dev->stats.write_lat,
			   ktime_get_ns() - rcmd->start_ns);
	rcmd->status = BLK_STS_OK;
	blk_mq_complete_request(rq);

	spin_lock_irqsave(&sq->lock, flags);
	list_add_tail(&s->held_node, &sq->ready);
	spin_unlock_irqrestore(&sq->lock, flags);
	farswap_stage_kick(dev, sq->hctx);
	farswap_stage_scan_arm(dev);
	return true;
direct:
	farswap_stage_put_slot(sq, slot);
	return false;
}

/**
 * farswap_stage_meet_locked - what a request does about its chunk's
 * staged writes
 * @cmd: a read or write request, or a staged write, its extent set
 * @chunk: its chunk, locked
 * @write: it writes
 *
 * A read the newest staged write of its pages holds whole gets that
 * copy here (its check is farswap_check_read()'s, as for a read from a
 * donor); a read or write that must wait is put on the chunk's
 * stage_wait list, and submitted again when a staged write of the chunk
 * is written.
 */
enum farswap_stage_verdict farswap_stage_meet_locked(struct farswap_cmd *cmd,
						     struct farswap_chunk *chunk,
						     bool write)
{
	const struct farswap_extent *e = &cmd->ext;
	const struct farswap_staged *from = NULL;
	enum farswap_stage_verdict v;
	struct farswap_cmd *src;

	lockdep_assert_held(&chunk->lock);
	if (list_empty(&chunk->staged))
		return FARSWAP_STAGE_NONE;
	if (write)
		v = farswap_stage_write(&chunk->staged,
					cmd->rq ? NULL : &cmd->staged,
					e->first_page, e->nr_pages);
	else
		v = farswap_stage_read(&chunk->staged, e->first_page,
				       e->nr_pages, &from);
	switch (v) {
	case FARSWAP_STAGE_SERVE:
		src = container_of(from, struct farswap_cmd, staged);
		farswap_stage_copy(src, (e->first_page - from->first_page) <<
					FARSWAP_PAGE_SHIFT, cmd->rq, true);
		cmd->any_unwritten = false;
		break;
	case FARSWAP_STAGE_WAIT:
		list_add_tail(&cmd->held_node, &chunk->stage_wait);
		atomic64_inc(&cmd->dev->stats.held);
		break;
	default:
		break;
	}
	return v;
}

/*
 * A staged write no replica took: go out again?  Not a request's (that
 * one's failure reaches the swap layer), nor once detach has drained
 * staging, nor past FARSWAP_STAGE_TRIES.
 */
bool farswap_stage_again(struct farswap_cmd *cmd)
{
	if (cmd->rq || READ_ONCE(cmd->dev->stage_stopping) ||
	    ++cmd->stage_retries > FARSWAP_STAGE_TRIES)
		return false;
	atomic64_inc(&cmd->dev->stats.stage_retries);
	return true;
}

/*
 * A staged write found no DMA mapping: it keeps its budget and its place
 * and is submitted again shortly, as blk-mq would retry a request.
 */
void farswap_stage_requeue(struct farswap_cmd *s)
{
	struct farswap_stage_queue *sq = s->stage;
	struct farswap_dev *dev = s->dev;
	unsigned long flags;

	if (READ_ONCE(dev->stage_stopping)) {
		farswap_stage_end(s, BLK_STS_IOERR);
		return;
	}
	spin_lock_irqsave(&sq->lock, flags);
	list_add_tail(&s->held_node, &sq->retry);
	spin_unlock_irqrestore(&sq->lock, flags);
	queue_delayed_work(dev->wq, &sq->retry_work,
			   msecs_to_jiffies(FARSWAP_STAGE_RETRY_MS));
}

static void farswap_stage_retry(struct work_struct *work)
{
	struct farswap_stage_queue *sq = container_of(to_delayed_work(work),
						      struct farswap_stage_queue,
						      retry_work);
	unsigned long flags;
	LIST_HEAD(retry);

	spin_lock_irqsave(&sq->lock, flags);
	list_splice_init(&sq->retry, &retry);
	spin_unlock_irqrestore(&sq->lock, flags);
	farswap_resubmit_held(&retry);
}

/*
 * A staged write given up: every page of it is lost, whatever the chunk
 * held before, so that a read fails instead of returning an older
 * version.
 */
static u32 farswap_stage_lose_locked(struct farswap_chunk *chunk,
				     const struct farswap_extent *e)
{
	u32 i, lost = 0;

	farswap_pages_mark_written(&chunk->pages, e->first_page, e->nr_pages);
	for (i = 0; i < e->nr_pages; i++)
		lost += farswap_pages_lose_one(&chunk->pages,
					       e->first_page + i);
	return lost;
}

/**
 * farswap_stage_end - a staged write is written, or given up
 * @s: the staged write
 * @status: BLK_STS_OK when a replica took it
 *
 * Its pages leave the chunk's list and the requests waiting for it go
 * on; a chunk it kept from being released is released now; its slot and
 * budget come back.
 */
void farswap_stage_end(struct farswap_cmd *s, blk_status_t status)
{
	struct farswap_placement place[FARSWAP_MAX_REPLICAS];
	struct farswap_stage_queue *sq = s->stage;
	struct farswap_dev *dev = s->dev;
	struct farswap_chunk *chunk = farswap_chunk_of(dev, s->ext.chunk);
	bool stopping = READ_ONCE(dev->stage_stopping);
	unsigned int released = 0, r;
	u32 budget = s->write_budget;
	unsigned long flags;
	LIST_HEAD(waiting);
	u32 lost = 0;

	trace_farswap_end(s, status);
	spin_lock_irqsave(&chunk->lock, flags);
	list_del_init(&s->staged.node);
	list_splice_init(&chunk->stage_wait, &waiting);
	if (status != BLK_STS_OK)
		lost = farswap_stage_lose_locked(chunk, &s->ext);
	/* Its discarded chunk was kept for it (farswap_chunk_release_locked). */
	if (!stopping && !chunk->pages.used)
		released = farswap_chunk_release_locked(dev, chunk, place);
	spin_unlock_irqrestore(&chunk->lock, flags);
	for (r = 0; r < released; r++)
		farswap_put_slot(dev, &place[r]);

	if (status != BLK_STS_OK) {
		atomic64_inc(&dev->stats.stage_lost);
		atomic64_add(lost, &dev->stats.lost_pages);
		if (!stopping)
			farswap_dev_pr_err_ratelimited(dev, "staged write of %u bytes at sector %llu: no donor took it in %u tries: %u pages lost; reading them fails with EIO\n",
						       s->stage_bytes,
						       s->stage_pos >> SECTOR_SHIFT,
						       s->stage_retries, lost);
	}
	s->write_budget = 0;
	farswap_nomap_reset(&s->nomap);
	farswap_stage_put_slot(sq, s->stage_slot);
	if (budget)
		farswap_write_budget_put(dev, sq->hctx, budget);
	if (stopping)
		farswap_fail_held(&waiting, BLK_STS_IOERR);
	else
		farswap_resubmit_held(&waiting);
}

/*
 * debugfs stage_pause: hold every staged write back (tests make reads and
 * writes meet staged pages, and faults land while pages are staged), or
 * let them go.
 */
void farswap_stage_pause(struct farswap_dev *dev, bool pause)
{
	unsigned int q;

	WRITE_ONCE(dev->stage_paused, pause);
	for (q = 0; !pause && dev->stage && q < dev->params.nr_queues; q++)
		farswap_stage_kick(dev, q);
}

/*
 * Detach begins: the staged writes not yet written are logged, and let go
 * if a test held them back (requests behind them keep del_gendisk
 * waiting).
 */
void farswap_stage_detach(struct farswap_dev *dev)
{
	unsigned int used = farswap_stage_used(dev);

	if (used)
		farswap_dev_pr_info(dev, "detaching: waiting for %u staged writes\n",
				    used);
	dev->stage_at_detach = used;
	farswap_stage_pause(dev, false);
}

/**
 * farswap_stage_drain - wait for the staged writes at detach
 * @dev: the device, its disk gone (no new write is staged)
 *
 * Long enough for a stalled donor to be failed and its chunks placed
 * anew or resumed.  Staged writes failing from here on are dropped.
 */
void farswap_stage_drain(struct farswap_dev *dev)
{
	unsigned long tmo = msecs_to_jiffies(2 * dev->params.io_timeout_ms +
					     dev->params.resume_grace_ms);
	unsigned int q, used, left;

	if (!dev->stage)
		return;
	used = farswap_stage_used(dev);
	if (used && !dev->stage_at_detach)
		farswap_dev_pr_info(dev, "detaching: waiting for %u staged writes\n",
				    used);
	used += dev->stage_at_detach;
	wait_event_timeout(dev->stage_idle, !farswap_stage_used(dev), tmo);
	left = farswap_stage_used(dev);
	if (left)
		farswap_dev_pr_err(dev, "detaching with %u staged writes not written: their pages are dropped\n",
				   left);
	else if (used)
		farswap_dev_pr_info(dev, "detaching: the staged writes are written\n");
	WRITE_ONCE(dev->stage_stopping, true);
	cancel_delayed_work_sync(&dev->stage_scan_work);
	for (q = 0; q < dev->params.nr_queues; q++)
		cancel_delayed_work_sync(&dev->stage[q].retry_work);
}

/*
 * At detach, the donors gone: the staged writes that still wait (for
 * budget, a retry, a chunk, an older staged write) are dropped.
 */
void farswap_stage_abort(struct farswap_dev *dev)
{
	struct farswap_cmd *c, *next;
	unsigned long flags;
	unsigned int q;
	LIST_HEAD(drop);
	u32 i;

	if (!dev->stage)
		return;
	for (q = 0; q < dev->params.nr_queues; q++) {
		struct farswap_stage_queue *sq = &dev->stage[q];

		spin_lock_irqsave(&sq->lock, flags);
		list_splice_init(&sq->ready, &drop);
		list_splice_init(&sq->retry, &drop);
		spin_unlock_irqrestore(&sq->lock, flags);
	}
	for (i = 0; dev->chunks && i < dev->geo.nr_chunks; i++) {
		struct farswap_chunk *chunk = &dev->chunks[i];

		spin_lock_irqsave(&chunk->lock, flags);
		list_splice_init(&chunk->stage_wait, &drop);
		list_for_each_entry_safe(c, next, &chunk->held, held_node)
			if (!c->rq)
				list_move_tail(&c->held_node, &drop);
		spin_unlock_irqrestore(&chunk->lock, flags);
	}
	farswap_fail_held(&drop, BLK_STS_IOERR);
}
