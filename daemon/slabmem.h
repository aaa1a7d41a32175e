/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory behind slabs: hugetlb pages when the kernel has them, else
 * anonymous memory with MADV_HUGEPAGE; always pinned with mlock.
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
	FSD_MEM_ANON,
};

int fsd_slab_mem_alloc(uint64_t size, enum fsd_hugepages mode, void **mem,
		       int *kind);
void fsd_slab_mem_free(void *mem, uint64_t size);
const char *fsd_mem_kind_str(int kind);
int fsd_memlock_check(uint64_t need, char *err, size_t errlen);

#endif /* FSD_SLABMEM_H */
