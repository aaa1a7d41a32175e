// SPDX-License-Identifier: GPL-2.0
/*
 * The check of every page: as a write goes out its pages are tagged
 * (tag.c) or sealed (seal.c) on this host, and as a read lands each page
 * must prove it is the one last written there, or the request fails and
 * no process sees it; a read's pages never written read as zeros.  io.c
 * calls these around the RDMA transfers.
 */
#include <linux/highmem.h>
#include <linux/scatterlist.h>

#include "compat.h"
#include "farswap.h"
#include "log.h"

/*
 * A piece of a request's data that lies in one device page: a whole page
 * (always, for swap) or a part of one (direct I/O aligns to sectors).
 */
struct farswap_piece {
	struct page *page;
	u32 offset;		/* in @page */
	u32 len;
	u32 at;			/* the request's bytes before it */
};

/* The request's page the piece lies in, and where in that page. */
static u32 farswap_piece_index(const struct farswap_piece *p)
{
	return p->at >> FARSWAP_PAGE_SHIFT;
}

static u32 farswap_piece_in_page(const struct farswap_piece *p)
{
	return p->at & (FARSWAP_PAGE_BYTES - 1);
}

/* The piece ends its page: the page is whole. */
static bool farswap_piece_ends_page(const struct farswap_piece *p)
{
	return farswap_piece_in_page(p) + p->len == FARSWAP_PAGE_BYTES;
}

typedef bool (*farswap_piece_fn)(struct farswap_cmd *cmd,
				 const struct farswap_piece *p, void *arg);

/*
 * Call @fn on each piece of the request's data, in order (segments never
 * cross a page, rq_for_each_segment's, but a page may come in several).
 * Stops at the first call that returns false.
 */
static bool farswap_for_each_piece(struct farswap_cmd *cmd,
				   struct request *rq, farswap_piece_fn fn,
				   void *arg)
{
	struct req_iterator iter;
	struct bio_vec bv;
	u32 at = 0;

	rq_for_each_segment(bv, rq, iter) {
		u32 done = 0;

		while (done < bv.bv_len) {
			struct farswap_piece p = {
				.page = bv.bv_page,
				.offset = bv.bv_offset + done,
				.at = at + done,
			};

			p.len = min(bv.bv_len - done, FARSWAP_PAGE_BYTES -
				    farswap_piece_in_page(&p));
			if (!fn(cmd, &p, arg))
				return false;
			done += p.len;
		}
		at += bv.bv_len;
	}
	return true;
}

static bool farswap_zero_piece(struct farswap_cmd *cmd,
			       const struct farswap_piece *p, void *arg)
{
	if (test_bit(farswap_piece_index(p), cmd->unwritten))
		memzero_page(p->page, p->offset, p->len);
	return true;
}

/*
 * Zero the pages of a read that were never written: the slot they lie in
 * may have held another chunk's pages, and only written pages are ours.
 */
void farswap_zero_unwritten(struct farswap_cmd *cmd, struct request *rq)
{
	farswap_for_each_piece(cmd, rq, farswap_zero_piece, NULL);
}

typedef bool (*farswap_page_fn)(struct farswap_cmd *cmd, u32 i,
				const void *data);

/*
 * A piece to its page's bytes in one piece: in place when the piece is
 * the whole page, else gathered into cmd->page_buf; @arg's function is
 * called once the page is whole.
 */
static bool farswap_gather_piece(struct farswap_cmd *cmd,
				 const struct farswap_piece *p, void *arg)
{
	farswap_page_fn fn = arg;
	void *va = kmap_local_page(p->page);
	const void *data = va + p->offset;
	bool go = true;

	if (p->len < FARSWAP_PAGE_BYTES) {
		memcpy(cmd->page_buf + farswap_piece_in_page(p), data, p->len);
		data = cmd->page_buf;
	}
	if (farswap_piece_ends_page(p))
		go = fn(cmd, farswap_piece_index(p), data);
	kunmap_local(va);
	return go;
}

/*
 * Call @fn on each device page of the request, i its index in the
 * request, with its bytes in one piece.  Stops at the first call that
 * returns false.
 */
static bool farswap_for_each_page(struct farswap_cmd *cmd, struct request *rq,
				  farswap_page_fn fn)
{
	return farswap_for_each_piece(cmd, rq, farswap_gather_piece, fn);
}

/* Index on the device of the request's page @i. */
static u64 farswap_page_index(const struct farswap_cmd *cmd, u32 i)
{
	return ((u64)cmd->ext.chunk << (FARSWAP_CHUNK_SHIFT -
					FARSWAP_PAGE_SHIFT)) +
	       cmd->ext.first_page + i;
}

static bool farswap_tag_one(struct farswap_cmd *cmd, u32 i, const void *data)
{
	struct farswap_dev *dev = cmd->dev;

	farswap_tag_next(&dev->tag_key, &dev->page_locks, dev->versions,
			 dev->tags, farswap_page_index(cmd, i), data);
	return true;
}

/* Before a write goes out: tag each of its pages as written now. */
void farswap_tag_write(struct farswap_cmd *cmd, struct request *rq)
{
	if (cmd->dev->tags)
		farswap_for_each_page(cmd, rq, farswap_tag_one);
}

/*
 * The read's page at device page @idx failed its check (@alg): counted,
 * kept for the heal, and the read fails.  Returns false, to stop the walk.
 */
static bool farswap_page_failed(struct farswap_cmd *cmd, u64 idx,
				const char *alg)
{
	struct farswap_dev *dev = cmd->dev;

	atomic64_inc(&dev->stats.mismatches);
	cmd->bad_page = idx & (FARSWAP_CHUNK_PAGES - 1);
	farswap_dev_pr_err_ratelimited(dev, "page at byte %llu read from donor %s failed its integrity check (%s): failing the read\n",
				       idx << FARSWAP_PAGE_SHIFT,
				       cmd->leg[0].place.donor->name, alg);
	return false;
}

static bool farswap_check_one(struct farswap_cmd *cmd, u32 i,
			      const void *data)
{
	struct farswap_dev *dev = cmd->dev;
	u64 idx = farswap_page_index(cmd, i);

	/* Zeroed locally: never written, nothing to check. */
	if (cmd->any_unwritten && test_bit(i, cmd->unwritten))
		return true;
	atomic64_inc(&dev->stats.checked);
	if (farswap_tag_matches(&dev->tag_key, &dev->page_locks, dev->versions,
				dev->tags, idx, data))
		return true;
	return farswap_page_failed(cmd, idx,
				   farswap_tag_alg_name(dev->tag_key.alg));
}

/*
 * Encryption (seal.h)
 */

typedef bool (*farswap_sg_fn)(struct farswap_cmd *cmd, u32 i,
			      unsigned int nents);

struct farswap_sg_walk {
	farswap_sg_fn fn;
	struct request *rq;
	unsigned int nents;
};

/* A piece into cmd->seal_sg; @arg's function once its page is whole. */
static bool farswap_sg_piece(struct farswap_cmd *cmd,
			     const struct farswap_piece *p, void *arg)
{
	struct farswap_sg_walk *w = arg;

	if (!farswap_piece_in_page(p)) {
		sg_init_table(cmd->seal_sg, ARRAY_SIZE(cmd->seal_sg));
		w->nents = 0;
	}
	if (w->nents == FARSWAP_PAGE_PIECES) {
		farswap_dev_pr_err_ratelimited(cmd->dev, "a page of a request at sector %llu comes in more than %u pieces\n",
					       blk_rq_pos(w->rq),
					       FARSWAP_PAGE_PIECES);
		return false;
	}
	sg_set_page(&cmd->seal_sg[w->nents++], p->page, p->len, p->offset);
	return !farswap_piece_ends_page(p) ||
	       w->fn(cmd, farswap_piece_index(p), w->nents);
}

/*
 * Call @fn on each device page of the request, i its index in the
 * request, with cmd->seal_sg's first @nents entries holding its pieces in
 * order and room after them for its tag.  A page in more pieces than
 * direct I/O can make stops it, as does a call that returns false.
 */
static bool farswap_for_each_page_sg(struct farswap_cmd *cmd,
				     struct request *rq, farswap_sg_fn fn)
{
	struct farswap_sg_walk w = { .fn = fn, .rq = rq };

	return farswap_for_each_piece(cmd, rq, farswap_sg_piece, &w);
}

/* End cmd->seal_sg after a page's @nents pieces with its tag. */
static void farswap_seal_sg_tag(struct farswap_cmd *cmd, unsigned int nents)
{
	sg_set_buf(&cmd->seal_sg[nents], &cmd->seal_tag,
		   sizeof(cmd->seal_tag));
	sg_mark_end(&cmd->seal_sg[nents]);
}

/* Seal the request's page @i into its bounce page, with a new version. */
static bool farswap_seal_one(struct farswap_cmd *cmd, u32 i,
			     unsigned int nents)
{
	struct farswap_dev *dev = cmd->dev;
	u64 idx = farswap_page_index(cmd, i);
	struct page *bounce = cmd->bounce[i];
	u32 version;

	sg_copy_to_buffer(cmd->seal_sg, nents, page_address(bounce),
			  FARSWAP_PAGE_BYTES);
	sg_init_table(cmd->seal_sg, 2);
	sg_set_page(&cmd->seal_sg[0], bounce, FARSWAP_PAGE_BYTES, 0);
	farswap_seal_sg_tag(cmd, 1);
	if (farswap_seal_next(&dev->seal_key, &dev->page_locks, dev->versions,
			      dev->seal_tags, idx, cmd->seal_sg, &cmd->seal_tag,
			      &version))
		return true;
	farswap_dev_pr_err_ratelimited(dev, "page at byte %llu was written %u times under this device's key: its writes fail until the device is attached anew\n",
				       idx << FARSWAP_PAGE_SHIFT, version);
	return false;
}

/*
 * Before a sealing device's write goes out: seal each of its pages into
 * the request's bounce pages, which the RDMA WRITEs then send.
 */
bool farswap_seal_write(struct farswap_cmd *cmd, struct request *rq)
{
	if (unlikely(blk_rq_bytes(rq) > sizeof(cmd->bounce) /
					 sizeof(cmd->bounce[0]) *
					 FARSWAP_PAGE_BYTES || !cmd->bounce[0])) {
		farswap_dev_pr_err_ratelimited(cmd->dev, "write of %u bytes at sector %llu exceeds the bounce pages of encryption\n",
					       blk_rq_bytes(rq),
					       blk_rq_pos(rq));
		return false;
	}
	return farswap_for_each_page_sg(cmd, rq, farswap_seal_one);
}

/* Open the request's page @i in place: false if it was not ours. */
static bool farswap_open_one(struct farswap_cmd *cmd, u32 i,
			     unsigned int nents)
{
	struct farswap_dev *dev = cmd->dev;
	u64 idx = farswap_page_index(cmd, i);

	/* Zeroed locally: never written, nothing to open. */
	if (cmd->any_unwritten && test_bit(i, cmd->unwritten))
		return true;
	atomic64_inc(&dev->stats.checked);
	farswap_seal_sg_tag(cmd, nents);
	if (farswap_open_latest(&dev->seal_key, &dev->page_locks, dev->versions,
				dev->seal_tags, idx, cmd->seal_sg,
				&cmd->seal_tag))
		return true;
	return farswap_page_failed(cmd, idx, FARSWAP_SEAL_ALG);
}

/*
 * After a read landed: every page must be the one last written there.
 * A page that fails never reaches a process: the request fails.
 */
blk_status_t farswap_check_read(struct farswap_cmd *cmd, struct request *rq)
{
	if (cmd->dev->seal_tags)
		return farswap_for_each_page_sg(cmd, rq, farswap_open_one) ?
		       BLK_STS_OK : BLK_STS_IOERR;
	if (!cmd->dev->tags || farswap_for_each_page(cmd, rq, farswap_check_one))
		return BLK_STS_OK;
	return BLK_STS_IOERR;
}
