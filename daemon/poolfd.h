/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool as farswapd holds it: the slabs' memfd and the pool-state
 * memfd (keep.h) beside it, made fresh or adopted from the farswapd
 * before this one (restart.c hands the fds over), slabs mapped from it,
 * and let go of at exit, with or without their content.  Apart from
 * farswapd.c so that a restart can be tested without RDMA.
 */
#ifndef FSD_POOLFD_H
#define FSD_POOLFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "donor.h"
#include "keep.h"
#include "slabmem.h"

struct fsd_poolfd {
	struct fsd_slabmem mem;		/* the slabs' memfd */
	int state_fd;			/* pool-state memfd; -1: none */
	void *state_map;
	size_t state_len;
	struct fsd_keep keep;		/* the table, over state_map */
	int nr_old;			/* a handed table's slabs; 0: none */
};

void fsd_poolfd_init(struct fsd_poolfd *pf);
int fsd_poolfd_check(struct fsd_poolfd *pf, int pool, int state,
		     uint64_t slab_size);
uint64_t fsd_poolfd_resident(const struct fsd_poolfd *pf);
int fsd_poolfd_setup(struct fsd_poolfd *pf, struct fsd_donor *d,
		     enum fsd_hugepages mode, uint32_t grace_ms,
		     uint64_t now_ms, const char *from, bool *adopted);
int fsd_poolfd_populate(struct fsd_donor *d);
void fsd_poolfd_release(struct fsd_poolfd *pf, struct fsd_donor *d,
			bool let_go);

#endif /* FSD_POOLFD_H */
