// SPDX-License-Identifier: GPL-2.0
/*
 * The data path: a blk-mq request becomes RDMA WRITEs (swap-out) or RDMA
 * READs (swap-in) straight from and into the request's pages, on the I/O
 * queue pair of the request's hardware queue.
 *
 * Queue limits keep every read and write request inside one 2 MiB chunk
 * (chunk_sectors), so a request has one extent, one chunk and one
 * placement.  Everything a request needs is in its preallocated
 * struct farswap_cmd: nothing here allocates memory.
 */
#include <linux/highmem.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/wait_bit.h>

#include "farswap.h"

static void farswap_io_done(struct ib_cq *cq, struct ib_wc *wc);

size_t farswap_cmd_size(void)
{
	return sizeof(struct farswap_cmd) +
	       FARSWAP_MAX_SEGS * (sizeof(struct scatterlist) +
				   sizeof(struct ib_sge) +
				   sizeof(struct ib_rdma_wr));
}

void farswap_cmd_init(struct farswap_cmd *cmd, struct farswap_dev *dev)
{
	cmd->dev = dev;
	cmd->sg = (struct scatterlist *)(cmd + 1);
	cmd->sge = (struct ib_sge *)(cmd->sg + FARSWAP_MAX_SEGS);
	cmd->wr = (struct ib_rdma_wr *)(cmd->sge + FARSWAP_MAX_SEGS);
	cmd->cqe.done = farswap_io_done;
	INIT_LIST_HEAD(&cmd->held_node);
}

static void farswap_cmd_complete(struct farswap_cmd *cmd, blk_status_t status)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	if (status != BLK_STS_OK)
		atomic64_inc(&cmd->dev->stats.errors);
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
	struct farswap_donor_stats *ps = &cmd->place.donor->stats;
	u64 ns = ktime_get_ns() - cmd->start_ns;

	if (write) {
		atomic64_inc(&ps->writes);
		atomic64_add(bytes, &ps->write_bytes);
		farswap_lat_record(&ps->write_lat, ns);
		farswap_lat_record(&ds->write_lat, ns);
	} else {
		atomic64_inc(&ps->reads);
		atomic64_add(bytes, &ps->read_bytes);
		farswap_lat_record(&ps->read_lat, ns);
		farswap_lat_record(&ds->read_lat, ns);
	}
}

/* The last work request of a command completed. */
static void farswap_cmd_finish(struct farswap_cmd *cmd)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct farswap_chunk *chunk = farswap_chunk_of(cmd->dev, cmd->ext.slab);
	bool write = op_is_write(req_op(rq));

	if (cmd->mapped_dev) {
		ib_dma_unmap_sg(cmd->mapped_dev, cmd->sg, cmd->nents,
				write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
		cmd->mapped_dev = NULL;
	}
	if (cmd->status == BLK_STS_OK)
		farswap_account(cmd, write, blk_rq_bytes(rq));
	farswap_inflight_put(write ? &chunk->inflight_writes :
				     &chunk->inflight_reads);
	farswap_cmd_complete(cmd, cmd->status);
}

static void farswap_io_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_cmd *cmd =
		container_of(wc->wr_cqe, struct farswap_cmd, cqe);
	struct farswap_queue *q = cq->cq_context;

	WRITE_ONCE(q->last_progress, jiffies);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		WRITE_ONCE(cmd->status, BLK_STS_IOERR);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			atomic64_inc(&cmd->place.donor->stats.errors);
		/*
		 * A flush is usually the echo of an error already handled
		 * (then this does nothing); a flush on a live donor means a
		 * queue pair died unseen, and the donor must be failed too.
		 */
		farswap_donor_error(cmd->place.donor,
				    ib_wc_status_msg(wc->status));
	}
	if (atomic_dec_and_test(&cmd->pending))
		farswap_cmd_finish(cmd);
}

/*
 * Build the scatterlist of the request's data, merging physically
 * contiguous pieces (a THP swap-out is one entry).
 */
static int farswap_build_sg(struct farswap_cmd *cmd, struct request *rq)
{
	unsigned int max = blk_rq_nr_phys_segments(rq);
	struct scatterlist *sg = NULL;
	struct req_iterator iter;
	phys_addr_t end = 0;
	struct bio_vec bv;
	int n = 0;

	/* Merging as the block layer does never needs more entries. */
	if (!max || max > FARSWAP_MAX_SEGS)
		return -EINVAL;
	sg_init_table(cmd->sg, max);

	rq_for_each_bvec(bv, rq, iter) {
		struct page *page = nth_page(bv.bv_page,
					     bv.bv_offset >> PAGE_SHIFT);
		unsigned int off = offset_in_page(bv.bv_offset);
		phys_addr_t start = page_to_phys(page) + off;

		if (sg && start == end) {
			sg->length += bv.bv_len;
		} else {
			if (n == max)
				return -EINVAL;
			sg = &cmd->sg[n++];
			sg_set_page(sg, page, bv.bv_len, off);
		}
		end = start + bv.bv_len;
	}
	if (!n)
		return -EINVAL;
	sg_mark_end(sg);
	return n;
}

/* Chain the RDMA work requests: at most max_sge entries each. */
static unsigned int farswap_build_wrs(struct farswap_cmd *cmd, bool write,
				      int nents, u32 max_sge, u32 lkey)
{
	u64 raddr = cmd->place.addr + cmd->ext.slab_off;
	struct ib_rdma_wr *wr = NULL;
	struct scatterlist *sg;
	unsigned int nwr = 0;
	int i;

	for_each_sg(cmd->sg, sg, nents, i) {
		struct ib_sge *sge = &cmd->sge[i];

		if (!wr || wr->wr.num_sge == max_sge) {
			if (wr)
				wr->wr.next = &cmd->wr[nwr].wr;
			wr = &cmd->wr[nwr++];
			memset(wr, 0, sizeof(*wr));
			wr->wr.wr_cqe = &cmd->cqe;
			wr->wr.opcode = write ? IB_WR_RDMA_WRITE :
						IB_WR_RDMA_READ;
			wr->wr.send_flags = IB_SEND_SIGNALED;
			wr->wr.sg_list = sge;
			wr->remote_addr = raddr;
			wr->rkey = cmd->place.rkey;
		}
		sge->addr = sg_dma_address(sg);
		sge->length = sg_dma_len(sg);
		sge->lkey = lkey;
		wr->wr.num_sge++;
		raddr += sge->length;
	}
	return nwr;
}

/*
 * Post the command to its placement.  Returns false, having touched
 * nothing, when the placement's session is no longer live.
 */
static bool farswap_post(struct farswap_cmd *cmd, struct request *rq,
			 bool write)
{
	struct farswap_donor *donor = cmd->place.donor;
	enum dma_data_direction dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	const struct ib_send_wr *bad = NULL;
	struct ib_device *ibdev;
	unsigned int nwr, posted;
	struct ib_qp *qp;
	int nents, mapped, ret;

	nents = farswap_build_sg(cmd, rq);
	if (nents < 0) {
		pr_err_ratelimited("%s: request of %u segments exceeds the device limits\n",
				   cmd->dev->name, blk_rq_nr_phys_segments(rq));
		cmd->status = BLK_STS_IOERR;
		farswap_cmd_finish(cmd);
		return true;
	}

	rcu_read_lock();
	if (!farswap_donor_live(donor, cmd->place.gen)) {
		rcu_read_unlock();
		return false;
	}
	ibdev = donor->ibdev;
	qp = donor->ioq[cmd->hctx_idx].qp;
	mapped = ib_dma_map_sg(ibdev, cmd->sg, nents, dir);
	if (!mapped) {
		rcu_read_unlock();
		cmd->status = BLK_STS_RESOURCE;
		farswap_cmd_finish(cmd);
		return true;
	}
	cmd->mapped_dev = ibdev;
	cmd->nents = nents;
	nwr = farswap_build_wrs(cmd, write, mapped, donor->max_sge,
				donor->pd->local_dma_lkey);
	/* One count per work request, plus ours until posting is done. */
	atomic_set(&cmd->pending, nwr + 1);
	ret = ib_post_send(qp, &cmd->wr[0].wr, &bad);
	rcu_read_unlock();

	if (unlikely(ret)) {
		/* Those before @bad were posted and will complete. */
		for (posted = 0; posted < nwr && &cmd->wr[posted].wr != bad;
		     posted++)
			;
		pr_err_ratelimited("%s: donor %s: posting %u work requests failed (%d)\n",
				   cmd->dev->name, donor->name, nwr, ret);
		WRITE_ONCE(cmd->status, BLK_STS_IOERR);
		farswap_donor_error(donor, "posting a work request failed");
		/* Our own count keeps this above zero. */
		atomic_sub(nwr - posted, &cmd->pending);
	}
	if (atomic_dec_and_test(&cmd->pending))
		farswap_cmd_finish(cmd);
	return true;
}

/* Zero the request's pages: a read of pages that were never written. */
static void farswap_zero_rq(struct request *rq)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter)
		memzero_page(bv.bv_page, bv.bv_offset, bv.bv_len);
}

/*
 * Decide, under the chunk lock, what the request does with its chunk.  A
 * first write takes a free slot in a held donor slab right here; only
 * when none has room is the chunk parked for the bind work.
 */
static enum farswap_io_action farswap_claim(struct farswap_cmd *cmd,
					    struct farswap_chunk *chunk,
					    bool write)
{
	const struct farswap_extent *e = &cmd->ext;
	struct farswap_dev *dev = cmd->dev;
	struct farswap_io_view v = { .write = write };
	enum farswap_io_action act;

	lockdep_assert_held(&chunk->lock);
again:
	v.state = chunk->state;
	v.any_written = farswap_pages_any_written(&chunk->pages, e->first_page,
						  e->nr_pages);
	v.any_lost = farswap_pages_any_lost(&chunk->pages, e->first_page,
					    e->nr_pages);
	v.place_live = chunk->nr_places &&
		       farswap_donor_live(chunk->place[0].donor,
					  chunk->place[0].gen);
	act = farswap_io_decide(&v);

	switch (act) {
	case FARSWAP_IO_RDMA:
		cmd->place = chunk->place[0];
		if (write) {
			farswap_pages_mark_written(&chunk->pages,
						   e->first_page, e->nr_pages);
			atomic_inc(&chunk->inflight_writes);
		} else {
			atomic_inc(&chunk->inflight_reads);
		}
		break;
	case FARSWAP_IO_BIND:
		if (farswap_take_slot(dev, NULL, &chunk->place[0])) {
			chunk->nr_places = 1;
			chunk->state = FARSWAP_SLAB_BOUND;
			atomic64_inc(&dev->stats.binds);
			goto again;
		}
		chunk->state = FARSWAP_SLAB_BINDING;
		fallthrough;
	case FARSWAP_IO_HOLD:
		list_add_tail(&cmd->held_node, &chunk->held);
		break;
	default:
		break;
	}
	return act;
}

/**
 * farswap_submit - start a read or write request
 * @cmd: the request's context
 *
 * Called from queue_rq, and again from work items for requests that were
 * held on a chunk while it was being bound or moved.
 */
void farswap_submit(struct farswap_cmd *cmd)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct farswap_dev *dev = cmd->dev;
	bool write = op_is_write(req_op(rq));
	u64 pos = blk_rq_pos(rq) << SECTOR_SHIFT;
	struct farswap_chunk *chunk;
	enum farswap_io_action act;
	unsigned long flags;
	int n;

	n = farswap_split_chunks(&dev->geo, pos, blk_rq_bytes(rq), &cmd->ext, 1);
	if (unlikely(n != 1)) {
		pr_err_ratelimited("%s: request at byte %llu, %u bytes, is misaligned or crosses a chunk\n",
				   dev->name, pos, blk_rq_bytes(rq));
		farswap_cmd_complete(cmd, BLK_STS_IOERR);
		return;
	}
	chunk = farswap_chunk_of(dev, cmd->ext.slab);

again:
	spin_lock_irqsave(&chunk->lock, flags);
	act = farswap_claim(cmd, chunk, write);
	spin_unlock_irqrestore(&chunk->lock, flags);

	switch (act) {
	case FARSWAP_IO_RDMA:
		if (farswap_post(cmd, rq, write))
			return;
		/* The session died between the decision and the post. */
		farswap_inflight_put(write ? &chunk->inflight_writes :
					     &chunk->inflight_reads);
		goto again;
	case FARSWAP_IO_ZERO:
		farswap_zero_rq(rq);
		atomic64_inc(&dev->stats.zero_reads);
		farswap_cmd_complete(cmd, BLK_STS_OK);
		return;
	case FARSWAP_IO_BIND:
		atomic64_inc(&dev->stats.held);
		farswap_chunk_queue_bind(dev, chunk);
		return;
	case FARSWAP_IO_HOLD:
		atomic64_inc(&dev->stats.held);
		/* Held behind a dead placement: the loss work unbinds it. */
		if (chunk->nr_places &&
		    !farswap_donor_live(chunk->place[0].donor,
					chunk->place[0].gen))
			queue_work(dev->wq, &dev->loss_work);
		return;
	case FARSWAP_IO_FAIL:
		pr_err_ratelimited("%s: read of chunk %u pages %u-%u failed: their donor is gone\n",
				   dev->name, cmd->ext.slab, cmd->ext.first_page,
				   cmd->ext.first_page + cmd->ext.nr_pages - 1);
		farswap_cmd_complete(cmd, BLK_STS_IOERR);
		return;
	}
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
		struct farswap_placement place;
		struct farswap_chunk *chunk;
		struct farswap_extent e;
		unsigned long flags;
		bool released = false;

		if (farswap_split_chunks(&dev->geo, start, len, &e, 1) != 1)
			break;
		chunk = farswap_chunk_of(dev, e.slab);
		spin_lock_irqsave(&chunk->lock, flags);
		if (!farswap_pages_discard(&chunk->pages, e.first_page,
					   e.nr_pages))
			released = farswap_chunk_release_locked(dev, chunk,
								&place);
		spin_unlock_irqrestore(&chunk->lock, flags);
		if (released)
			farswap_put_slot(dev, &place);
		start += len;
	}
	atomic64_inc(&dev->stats.discards);
	farswap_cmd_complete(cmd, BLK_STS_OK);
}

void farswap_resubmit_held(struct list_head *held)
{
	struct farswap_cmd *cmd, *next;

	list_for_each_entry_safe(cmd, next, held, held_node) {
		list_del_init(&cmd->held_node);
		farswap_submit(cmd);
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

struct farswap_sync_op {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void farswap_sync_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_sync_op *op =
		container_of(wc->wr_cqe, struct farswap_sync_op, cqe);
	struct farswap_queue *q = cq->cq_context;

	WRITE_ONCE(q->last_progress, jiffies);
	op->status = wc->status;
	complete(&op->done);
}

/**
 * farswap_rdma_sync - one RDMA READ or WRITE of a kernel buffer, waited for
 * @donor: where the remote memory is
 * @write: WRITE (else READ)
 * @buf: physically contiguous kernel buffer
 * @len: bytes
 * @remote_addr: remote address
 * @rkey: remote key
 * @gen: the session @rkey belongs to
 *
 * Used to copy slabs between donors.  Posts on the first I/O queue, whose
 * send queue keeps FARSWAP_SQ_RESERVE entries for this.
 */
int farswap_rdma_sync(struct farswap_donor *donor, bool write, void *buf,
		      size_t len, u64 remote_addr, u32 rkey, u32 gen)
{
	enum dma_data_direction dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	unsigned int tmo = donor->dev->params.io_timeout_ms;
	struct farswap_sync_op op = { .cqe.done = farswap_sync_done };
	struct farswap_queue *q;
	struct ib_rdma_wr wr = {};
	struct ib_device *ibdev;
	struct ib_sge sge;
	u64 dma;
	int ret;

	init_completion(&op.done);
	rcu_read_lock();
	if (!farswap_donor_live(donor, gen)) {
		rcu_read_unlock();
		return -ENOTCONN;
	}
	ibdev = donor->ibdev;
	dma = ib_dma_map_single(ibdev, buf, len, dir);
	if (ib_dma_mapping_error(ibdev, dma)) {
		rcu_read_unlock();
		return -ENOMEM;
	}
	sge.addr = dma;
	sge.length = len;
	sge.lkey = donor->pd->local_dma_lkey;
	wr.wr.wr_cqe = &op.cqe;
	wr.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = remote_addr;
	wr.rkey = rkey;
	q = &donor->ioq[0];
	WRITE_ONCE(q->last_progress, jiffies);
	ret = ib_post_send(q->qp, &wr.wr, NULL);
	rcu_read_unlock();
	if (ret) {
		ib_dma_unmap_single(ibdev, dma, len, dir);
		farswap_donor_error(donor, "posting a slab copy failed");
		return ret;
	}

	/* As for requests: fail the donor only if its queue stalled. */
	while (!wait_for_completion_timeout(&op.done, msecs_to_jiffies(tmo))) {
		if (time_before(jiffies, READ_ONCE(q->last_progress) +
				msecs_to_jiffies(tmo)))
			continue;
		farswap_donor_error(donor, "slab copy stalled");
		/* The teardown flushes it; the stack frame must outlive it. */
		wait_for_completion(&op.done);
		break;
	}
	ib_dma_unmap_single(ibdev, dma, len, dir);
	return op.status == IB_WC_SUCCESS ? 0 : -EIO;
}
