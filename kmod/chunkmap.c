// SPDX-License-Identifier: GPL-2.0
/*
 * Chunk map logic, free of RDMA and block-layer calls (see chunkmap.h).
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/minmax.h>

#include "farswap_proto.h"
#include "chunkmap.h"

/**
 * farswap_geometry_init - check and record a device's size and slab size
 * @g: geometry to fill
 * @size: device size in bytes
 * @slab_size: slab size in bytes
 *
 * Return: 0, or -EINVAL when the slab size is not a power of two in the
 * protocol's range, or the size is zero or not a whole number of slabs;
 * -E2BIG when the device would have more than FARSWAP_MAX_SLABS slabs.
 */
int farswap_geometry_init(struct farswap_geometry *g, u64 size, u64 slab_size)
{
	u64 nr;

	if (!farswap_slab_size_valid(slab_size))
		return -EINVAL;
	if (!size || size & (slab_size - 1))
		return -EINVAL;
	nr = size >> ilog2(slab_size);
	if (nr > FARSWAP_MAX_SLABS || size >> FARSWAP_CHUNK_SHIFT > FARSWAP_MAX_CHUNKS)
		return -E2BIG;

	g->size = size;
	g->slab_shift = ilog2(slab_size);
	g->nr_slabs = nr;
	g->slab_pages = slab_size >> FARSWAP_PAGE_SHIFT;
	/* FARSWAP_SLAB_SIZE_MIN is one chunk: both divide evenly. */
	g->nr_chunks = size >> FARSWAP_CHUNK_SHIFT;
	g->chunks_per_slab = slab_size >> FARSWAP_CHUNK_SHIFT;
	return 0;
}

/**
 * farswap_split - cut a byte range at chunk boundaries
 * @g: device geometry
 * @pos: first byte, page aligned
 * @len: bytes, page aligned
 * @ext: filled with one extent per chunk touched, in order
 * @max_ext: room in @ext
 *
 * Return: the number of extents (0 for an empty range), -EINVAL for an
 * unaligned range or one that does not lie within the device, -E2BIG when
 * the range touches more than @max_ext chunks.
 */
int farswap_split(const struct farswap_geometry *g, u64 pos, u64 len,
		  struct farswap_extent *ext, unsigned int max_ext)
{
	u64 unit = FARSWAP_CHUNK_BYTES;
	u64 done = 0;
	unsigned int n = 0;

	if ((pos | len) & (FARSWAP_PAGE_BYTES - 1))
		return -EINVAL;
	if (pos > g->size || len > g->size - pos)
		return -EINVAL;

	while (done < len) {
		u64 at = pos + done;
		u64 off = at & (unit - 1);
		u64 piece = min(len - done, unit - off);

		if (n == max_ext)
			return -E2BIG;
		ext[n].chunk = at >> FARSWAP_CHUNK_SHIFT;
		ext[n].chunk_off = off;
		ext[n].len = piece;
		ext[n].range_off = done;
		ext[n].first_page = off >> FARSWAP_PAGE_SHIFT;
		ext[n].nr_pages = piece >> FARSWAP_PAGE_SHIFT;
		n++;
		done += piece;
	}
	return n;
}

/* Pages [first, first + n) must lie within the chunk: callers split first. */
static bool farswap_pages_range_ok(const struct farswap_pages *p, u32 first,
				   u32 n)
{
	return first <= p->nr_pages && n <= p->nr_pages - first;
}

/**
 * farswap_pages_mark_written - note that pages may now hold data
 * @p: the chunk's pages
 * @first: first page
 * @n: number of pages
 *
 * A write also supersedes any loss: the page holds new data again.
 */
void farswap_pages_mark_written(struct farswap_pages *p, u32 first, u32 n)
{
	u32 i;

	if (!farswap_pages_range_ok(p, first, n))
		return;
	for (i = first; i < first + n; i++) {
		if (!__test_and_set_bit(i, p->written))
			p->used++;
		if (p->lost && __test_and_clear_bit(i, p->lost))
			p->nr_lost--;
	}
}

/**
 * farswap_pages_discard - forget pages the swap layer freed
 * @p: the chunk's pages
 * @first: first page
 * @n: number of pages
 *
 * Discarded pages hold nothing, not even lost data.
 *
 * Return: the pages still in use in the chunk afterwards.
 */
u32 farswap_pages_discard(struct farswap_pages *p, u32 first, u32 n)
{
	u32 end = first + n;
	u32 i;

	if (!farswap_pages_range_ok(p, first, n))
		return p->used;
	for (i = find_next_bit(p->written, end, first); i < end;
	     i = find_next_bit(p->written, end, i + 1)) {
		__clear_bit(i, p->written);
		p->used--;
	}
	if (p->lost && p->nr_lost) {
		for (i = find_next_bit(p->lost, end, first); i < end;
		     i = find_next_bit(p->lost, end, i + 1)) {
			__clear_bit(i, p->lost);
			p->nr_lost--;
		}
	}
	return p->used;
}

bool farswap_pages_any_written(const struct farswap_pages *p, u32 first,
			       u32 n)
{
	if (!farswap_pages_range_ok(p, first, n) || !p->used)
		return false;
	return find_next_bit(p->written, first + n, first) < first + n;
}

bool farswap_pages_any_lost(const struct farswap_pages *p, u32 first, u32 n)
{
	if (!farswap_pages_range_ok(p, first, n) || !p->lost || !p->nr_lost)
		return false;
	return find_next_bit(p->lost, first + n, first) < first + n;
}

/**
 * farswap_pages_lose - the chunk's donor died: its written pages are lost
 * @p: the chunk's pages, with @p->lost allocated
 *
 * Return: the number of pages newly lost.
 */
u32 farswap_pages_lose(struct farswap_pages *p)
{
	u32 newly = p->used;

	if (!p->lost)
		return 0;
	bitmap_or(p->lost, p->lost, p->written, p->nr_pages);
	bitmap_zero(p->written, p->nr_pages);
	p->nr_lost = bitmap_weight(p->lost, p->nr_pages);
	p->used = 0;
	return newly;
}

/**
 * farswap_pages_lose_one - one page's every copy is gone
 * @p: the chunk's pages, with @p->lost allocated
 * @page: its index in the chunk
 *
 * Return: true if the page held data and is now lost.
 */
bool farswap_pages_lose_one(struct farswap_pages *p, u32 page)
{
	if (!p->lost || page >= p->nr_pages ||
	    !__test_and_clear_bit(page, p->written))
		return false;
	p->used--;
	if (!__test_and_set_bit(page, p->lost))
		p->nr_lost++;
	return true;
}

/**
 * farswap_damage_add - note a damaged page of a copy
 * @d: the copy's damaged pages
 * @page: its index in the chunk
 *
 * Return: false when the list is full (the page is not noted).
 */
bool farswap_damage_add(struct farswap_damage *d, u32 page)
{
	unsigned int i;

	if (page >= FARSWAP_CHUNK_PAGES)
		return false;
	for (i = 0; i < d->nr; i++)
		if (d->page[i] == page)
			return true;
	if (d->nr >= FARSWAP_DAMAGE_MAX)
		return false;
	d->page[d->nr++] = page;
	return true;
}

/* Is a page of [@first, @first + @n) damaged in this copy? */
bool farswap_damage_any(const struct farswap_damage *d, u32 first, u32 n)
{
	unsigned int i;

	for (i = 0; i < d->nr; i++)
		if (d->page[i] >= first && d->page[i] - first < n)
			return true;
	return false;
}

/* Pages [@first, @first + @n) were written again, or rewritten: intact. */
void farswap_damage_clear(struct farswap_damage *d, u32 first, u32 n)
{
	unsigned int i = 0;

	while (i < d->nr) {
		if (d->page[i] >= first && d->page[i] - first < n)
			d->page[i] = d->page[--d->nr];
		else
			i++;
	}
}

const char *farswap_chunk_state_name(unsigned int state)
{
	static const char * const names[FARSWAP_CHUNK_NR_STATES] = {
		[FARSWAP_CHUNK_UNBOUND]	 = "unbound",
		[FARSWAP_CHUNK_BINDING]	 = "binding",
		[FARSWAP_CHUNK_BOUND]	 = "bound",
		[FARSWAP_CHUNK_MIGRATING] = "migrating",
		[FARSWAP_CHUNK_SWITCHING] = "switching",
		[FARSWAP_CHUNK_RELEASING] = "releasing",
	};

	return state < FARSWAP_CHUNK_NR_STATES ? names[state] : "invalid";
}

static enum farswap_io_action farswap_read_decide(const struct farswap_io_view *v)
{
	if (v->any_lost)
		return FARSWAP_IO_FAIL;
	if (!v->any_written)
		return FARSWAP_IO_ZERO;

	switch (v->state) {
	case FARSWAP_CHUNK_BOUND:
	case FARSWAP_CHUNK_MIGRATING:
		/* The old placement stays valid until the switch. */
		if (v->place_live)
			return FARSWAP_IO_RDMA;
		/* Its donor restarts: wait for the slab to be resumed. */
		return v->place_suspended ? FARSWAP_IO_HOLD : FARSWAP_IO_FAIL;
	case FARSWAP_CHUNK_SWITCHING:
		return FARSWAP_IO_HOLD;
	default:
		/* Written pages only exist in a chunk with a placement. */
		return FARSWAP_IO_FAIL;
	}
}

static enum farswap_io_action farswap_write_decide(const struct farswap_io_view *v)
{
	switch (v->state) {
	case FARSWAP_CHUNK_UNBOUND:
		return FARSWAP_IO_BIND;
	case FARSWAP_CHUNK_BOUND:
		/*
		 * A dead placement is about to be unbound by the loss work;
		 * the write waits and then lands on a fresh slot.
		 */
		return v->place_live ? FARSWAP_IO_RDMA : FARSWAP_IO_HOLD;
	case FARSWAP_CHUNK_BINDING:
	case FARSWAP_CHUNK_MIGRATING:
	case FARSWAP_CHUNK_SWITCHING:
	case FARSWAP_CHUNK_RELEASING:
		return FARSWAP_IO_HOLD;
	default:
		return FARSWAP_IO_FAIL;
	}
}

/**
 * farswap_io_decide - what to do with a read or write on one chunk
 * @v: the chunk's state and the request's view of its pages
 *
 * Reads never wait for a binding: a page that was never written reads as
 * zeros, and a page that died with its donor fails rather than reading as
 * anything else.  Writes go to RDMA only on a bound, live chunk and wait
 * otherwise.
 */
enum farswap_io_action farswap_io_decide(const struct farswap_io_view *v)
{
	if (v->state >= FARSWAP_CHUNK_NR_STATES)
		return FARSWAP_IO_FAIL;
	return v->write ? farswap_write_decide(v) : farswap_read_decide(v);
}
