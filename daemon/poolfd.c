// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's memfds (poolfd.h): a fresh pool, or the last farswapd's
 * adopted, its held slabs kept for their hosts (resume.c); every slab not
 * kept mapped and pinned; and at exit the slabs unmapped, their content
 * left in the memfd when the pool is kept for the next farswapd.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "poolfd.h"

void fsd_poolfd_init(struct fsd_poolfd *pf)
{
	memset(pf, 0, sizeof(*pf));
	pf->mem.fd = -1;
	pf->state_fd = -1;
}

static void unmap_state(struct fsd_poolfd *pf)
{
	if (pf->state_map)
		munmap(pf->state_map, pf->state_len);
	pf->state_map = NULL;
	pf->state_len = 0;
}

static void close_fds(struct fsd_poolfd *pf)
{
	unmap_state(pf);
	fsd_slabmem_close(&pf->mem);
	if (pf->state_fd >= 0)
		close(pf->state_fd);
	pf->state_fd = -1;
	pf->nr_old = 0;
}

/* Why a handed table is no use, or NULL; @err has room for the words. */
static const char *table_problem(const struct fsd_poolfd *pf, int pool,
				 uint64_t slab_size, int *nr, char *err,
				 size_t errlen)
{
	const struct fsd_keep_hdr *hdr = pf->state_map;

	*nr = fsd_keep_validate(pf->state_map, pf->state_len, slab_size, err,
				errlen);
	if (*nr < 0)
		return err;
	if (hdr->mem_kind < FSD_MEM_HUGE_1G || hdr->mem_kind > FSD_MEM_ANON) {
		snprintf(err, errlen, "unknown memory kind %u", hdr->mem_kind);
		return err;
	}
	if (fsd_memfd_size(pool) < (uint64_t)*nr * slab_size) {
		snprintf(err, errlen, "the pool memfd is shorter than its %d slabs",
			 *nr);
		return err;
	}
	return NULL;
}

/*
 * The fds the last farswapd left (@pool, @state): ours from now on.  A
 * table this farswapd can trust (keep.h) is kept for fsd_poolfd_setup();
 * one it cannot is logged and both fds closed, for a fresh start.
 * Returns the last pool's size in slabs, or -errno.
 */
int fsd_poolfd_check(struct fsd_poolfd *pf, int pool, int state,
		     uint64_t slab_size)
{
	char err[256];
	int nr = -EINVAL;

	pf->mem.fd = pool;
	pf->state_fd = state;
	pf->state_len = fsd_memfd_size(state);
	if (pf->state_len < sizeof(struct fsd_keep_hdr) ||
	    fsd_state_map(state, pf->state_len, &pf->state_map)) {
		snprintf(err, sizeof(err), "unreadable (%zu bytes)",
			 pf->state_len);
		pf->state_map = NULL;
	} else if (!table_problem(pf, pool, slab_size, &nr, err,
				  sizeof(err))) {
		pf->mem.kind = (int)((const struct fsd_keep_hdr *)
					     pf->state_map)->mem_kind;
		pf->nr_old = nr;
		return nr;
	}
	pr_warn("kept pool not adopted: pool-state %s; starting with a fresh pool (the hosts' pages in it are lost)",
		err);
	close_fds(pf);
	return nr < 0 ? nr : -EINVAL;
}

/*
 * The handed pool's memory, in bytes, which MemAvailable does not count
 * while it is in the memfd: shmem is swap-backed (and pinned), never
 * "available".  A hugetlb pool's pages are not in MemAvailable whether a
 * pool holds them or not, so they change nothing to give back.
 */
uint64_t fsd_poolfd_resident(const struct fsd_poolfd *pf)
{
	if (!pf->nr_old || pf->mem.kind != FSD_MEM_ANON)
		return 0;
	return fsd_memfd_resident(pf->mem.fd);
}

/*
 * The pool-state table, laid out for @p in the memfd pf->state_fd, and
 * the pool's to write from now on.
 */
static int lay_out_state(struct fsd_poolfd *pf, struct fsd_pool *p)
{
	size_t len = fsd_keep_size(p->nr_slabs);
	int ret;

	unmap_state(pf);
	if (ftruncate(pf->state_fd, (off_t)len))
		return -errno;
	ret = fsd_state_map(pf->state_fd, len, &pf->state_map);
	if (ret)
		return ret;
	pf->state_len = len;
	fsd_keep_format(pf->state_map, p->nr_slabs, p->slab_size,
			pf->mem.kind);
	fsd_keep_attach(&pf->keep, pf->state_map);
	p->keep = &pf->keep;
	return 0;
}

static int fresh(struct fsd_poolfd *pf, struct fsd_pool *p,
		 enum fsd_hugepages mode)
{
	void *map;
	int ret;

	ret = fsd_slabmem_create(&pf->mem, p->nr_slabs, p->slab_size, mode);
	if (ret) {
		pr_err("cannot make the pool's memory (%u slabs, hugepages %s): %s",
		       p->nr_slabs,
		       mode == FSD_HUGE_ALWAYS ? "always" :
		       mode == FSD_HUGE_NEVER ? "never" : "auto",
		       strerror(-ret));
		return ret;
	}
	ret = fsd_state_create(fsd_keep_size(p->nr_slabs), &pf->state_fd,
			       &map);
	if (!ret) {
		munmap(map, fsd_keep_size(p->nr_slabs));
		ret = lay_out_state(pf, p);
	}
	if (ret)
		pr_err("cannot make the pool-state memfd: %s", strerror(-ret));
	return ret;
}

/*
 * Adopt the last farswapd's pool: the memfd cut to this pool's size, the
 * slabs nobody held punched out (a free slab's old content is a host's
 * and nobody else's), the table laid out anew, and every held slab kept
 * for its host.  The records are copied out first: a crash in between
 * loses them, and with them only the chance to resume.
 */
static int adopt(struct fsd_poolfd *pf, struct fsd_donor *d,
		 uint32_t grace_ms, uint64_t now_ms, const char *from)
{
	struct fsd_pool *p = &d->pool;
	uint32_t i, nr_old = (uint32_t)pf->nr_old;
	struct fsd_keep_rec *old;
	struct fsd_adopted a;
	int ret;

	old = malloc((size_t)nr_old * sizeof(*old));
	if (!old)
		return -ENOMEM;
	memcpy(old, (struct fsd_keep_hdr *)pf->state_map + 1,
	       (size_t)nr_old * sizeof(*old));
	ret = fsd_slabmem_adopt(&pf->mem, pf->mem.fd, pf->mem.kind,
				p->nr_slabs, p->slab_size);
	if (!ret)
		ret = lay_out_state(pf, p);
	if (ret) {
		pr_warn("kept pool not adopted: %s; starting with a fresh pool",
			strerror(-ret));
		p->keep = NULL;
		free(old);
		return ret;
	}
	for (i = 0; i < p->nr_slabs && i < nr_old; i++)
		if (!old[i].held)
			fsd_slabmem_punch(&pf->mem, i);
	fsd_donor_adopt(d, old, nr_old, now_ms, grace_ms, &a);
	free(old);
	pr_notice("kept pool adopted from the %s: %u slabs of %u hosts, resumable for %u s",
		  from, a.slabs, a.hosts, grace_ms / 1000);
	if (a.dropped)
		pr_warn("kept pool: %u slabs of %u hosts could not be kept (the pool is %u slabs now, was %u): their pages are lost",
			a.dropped, a.dropped_hosts, p->nr_slabs, nr_old);
	return 0;
}

/*
 * The pool of @d: the handed one (fsd_poolfd_check(), passed on by
 * @from, for the log) adopted, *@adopted then true, or a fresh one of
 * @mode.  0 or -errno, said in the log.
 */
int fsd_poolfd_setup(struct fsd_poolfd *pf, struct fsd_donor *d,
		     enum fsd_hugepages mode, uint32_t grace_ms,
		     uint64_t now_ms, const char *from, bool *adopted)
{
	*adopted = false;
	if (pf->nr_old > 0 && !adopt(pf, d, grace_ms, now_ms, from)) {
		*adopted = true;
		return 0;
	}
	close_fds(pf);
	return fresh(pf, &d->pool, mode);
}

/*
 * Map and pin every slab that is not kept for a host, up front: the loop
 * never allocates slab memory.
 */
int fsd_poolfd_populate(struct fsd_donor *d)
{
	struct fsd_pool *p = &d->pool;
	uint32_t i;
	int ret;

	for (i = 0; i < p->nr_slabs; i++) {
		struct fsd_slab *slab = &p->slabs[i];

		if (slab->state != FSD_SLAB_RELEASED)
			continue;
		ret = d->ops->slab_populate(d, slab);
		if (ret) {
			pr_err("cannot map and pin slab %u of %u: %s", i + 1,
			       p->nr_slabs, strerror(-ret));
			return ret;
		}
		fsd_pool_populated(p, slab);
	}
	return 0;
}

/*
 * Unmap every slab of @d and the table.  The memfds' content stays as it
 * is for whoever holds them still (systemd's fd store, an exec); with
 * @let_go this process lets go of them.
 */
void fsd_poolfd_release(struct fsd_poolfd *pf, struct fsd_donor *d,
			bool let_go)
{
	struct fsd_pool *p = &d->pool;
	uint32_t i;

	for (i = 0; p->slabs && i < p->nr_slabs; i++) {
		fsd_slabmem_unmap(p->slabs[i].mem, p->slab_size);
		p->slabs[i].mem = NULL;
	}
	p->keep = NULL;
	unmap_state(pf);
	if (let_go)
		close_fds(pf);
}
