/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory behind slabs: one memfd for the whole pool (hugetlb pages when
 * the kernel has them, else shmem with MADV_HUGEPAGE), slab i at offset
 * i * slab_size, each slab its own shared mapping, pinned with mlock.
 * A memfd, not anonymous memory, so that the pool outlives the process:
 * systemd's fd store (or an exec of the next farswapd) holds the fd, and
 * the hosts' pages with it.  Beside it, a small memfd for the pool-state
 * table (keep.h).
 */
#ifndef FSD_SLABMEM_H
#define FSD_SLABMEM_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

enum fsd_mem_kind {
	FSD_MEM_NONE,
	FSD_MEM_HUGE_1G,
	FSD_MEM_HUGE_2M,
	FSD_MEM_ANON,		/* shmem, THP where the kernel allows */
};

struct fsd_slabmem {
	int fd;			/* the pool's memfd; -1: none */
	int kind;		/* enum fsd_mem_kind of every slab in it */
	uint64_t slab_size;
	uint32_t nr_slabs;
};

int fsd_slabmem_create(struct fsd_slabmem *sm, uint32_t nr_slabs,
		       uint64_t slab_size, enum fsd_hugepages mode);
int fsd_slabmem_adopt(struct fsd_slabmem *sm, int fd, int kind,
		      uint32_t nr_slabs, uint64_t slab_size);
int fsd_slabmem_map(const struct fsd_slabmem *sm, uint32_t id, void **mem);
void fsd_slabmem_unmap(void *mem, uint64_t size);
int fsd_slabmem_punch(const struct fsd_slabmem *sm, uint32_t id);
void fsd_slabmem_close(struct fsd_slabmem *sm);
uint64_t fsd_memfd_resident(int fd);

/* The pool-state memfd: @len bytes, mapped shared at *map. */
int fsd_state_create(size_t len, int *fd, void **map);
int fsd_state_map(int fd, size_t len, void **map);
size_t fsd_memfd_size(int fd);

const char *fsd_mem_kind_str(int kind);
int fsd_memlock_check(uint64_t need, char *err, size_t errlen);

#endif /* FSD_SLABMEM_H */
