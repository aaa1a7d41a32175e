// SPDX-License-Identifier: GPL-2.0
/*
 * The pool-state table (keep.h): laid out, checked before it is trusted,
 * and written a record at a time as slabs are granted and freed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "keep.h"

size_t fsd_keep_size(uint32_t nr_slabs)
{
	return sizeof(struct fsd_keep_hdr) +
	       (size_t)nr_slabs * sizeof(struct fsd_keep_rec);
}

/* A table for @nr_slabs slabs of @slab_size, none held. */
void fsd_keep_format(void *buf, uint32_t nr_slabs, uint64_t slab_size,
		     int mem_kind)
{
	struct fsd_keep_hdr *h = buf;

	memset(buf, 0, fsd_keep_size(nr_slabs));
	h->magic = FSD_KEEP_MAGIC;
	h->version = FSD_KEEP_VERSION;
	h->slab_size = slab_size;
	h->nr_slabs = nr_slabs;
	h->mem_kind = (uint32_t)mem_kind;
	h->rec_size = sizeof(struct fsd_keep_rec);
}

/*
 * May a table of @len bytes be trusted by a farswapd whose slabs are
 * @slab_size?  Returns its nr_slabs, or -errno with why in @err.  A
 * different slab size is a refusal: the hosts' slab ids and lengths would
 * not mean what they meant.
 */
int fsd_keep_validate(const void *buf, size_t len, uint64_t slab_size,
		      char *err, size_t errlen)
{
	const struct fsd_keep_hdr *h = buf;
	const struct fsd_keep_rec *rec;
	uint32_t i;

	if (len < sizeof(*h)) {
		snprintf(err, errlen, "%zu bytes, shorter than its header", len);
		return -EINVAL;
	}
	if (h->magic != FSD_KEEP_MAGIC) {
		snprintf(err, errlen, "bad magic 0x%08x", h->magic);
		return -EINVAL;
	}
	if (h->version != FSD_KEEP_VERSION ||
	    h->rec_size != sizeof(struct fsd_keep_rec)) {
		snprintf(err, errlen,
			 "version %u (records of %u bytes), this farswapd reads version %u",
			 h->version, h->rec_size, FSD_KEEP_VERSION);
		return -EPROTO;
	}
	if (h->slab_size != slab_size) {
		snprintf(err, errlen,
			 "slabs of %" PRIu64 " bytes, the configuration says %" PRIu64,
			 h->slab_size, slab_size);
		return -ERANGE;
	}
	if (!h->nr_slabs || h->nr_slabs > INT32_MAX ||
	    len < fsd_keep_size(h->nr_slabs)) {
		snprintf(err, errlen, "%u slabs do not fit its %zu bytes",
			 h->nr_slabs, len);
		return -EINVAL;
	}
	rec = (const struct fsd_keep_rec *)(h + 1);
	for (i = 0; i < h->nr_slabs; i++) {
		if (rec[i].held > 1 || (rec[i].held && !rec[i].token)) {
			snprintf(err, errlen, "slab %u's record is damaged", i);
			return -EINVAL;
		}
	}
	return (int)h->nr_slabs;
}

/* @buf holds a valid or freshly formatted table. */
void fsd_keep_attach(struct fsd_keep *k, void *buf)
{
	k->hdr = buf;
	k->rec = (struct fsd_keep_rec *)(k->hdr + 1);
	k->nr_slabs = k->hdr->nr_slabs;
	k->frozen = false;
}

static struct fsd_keep_rec *rec_of(const struct fsd_keep *k, uint32_t id)
{
	if (!k || !k->hdr || k->frozen || id >= k->nr_slabs)
		return NULL;
	return &k->rec[id];
}

/*
 * Slab @id is @host_id's, which may take it back with @token; a token of
 * 0 (a host without FARSWAP_FEAT_RESUME) cannot, so it is not held here.
 */
void fsd_keep_hold(struct fsd_keep *k, uint32_t id, const uint8_t *host_id,
		   unsigned int proof, uint64_t token)
{
	struct fsd_keep_rec *r = rec_of(k, id);

	if (!r)
		return;
	/* Held last: a record is never held with half its owner written. */
	r->held = 0;
	r->proof = (uint8_t)proof;
	r->token = token;
	memcpy(r->host_id, host_id, FARSWAP_ID_LEN);
	r->held = token ? 1 : 0;
}

/* Slab @id is nobody's: the next farswapd may reuse it. */
void fsd_keep_drop(struct fsd_keep *k, uint32_t id)
{
	struct fsd_keep_rec *r = rec_of(k, id);

	if (r)
		memset(r, 0, sizeof(*r));
}

const struct fsd_keep_rec *fsd_keep_get(const struct fsd_keep *k, uint32_t id)
{
	if (!k || !k->hdr || id >= k->nr_slabs)
		return NULL;
	return &k->rec[id];
}
