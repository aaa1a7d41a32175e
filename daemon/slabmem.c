// SPDX-License-Identifier: GPL-2.0
/*
 * Memory behind slabs.  Each slab is its own mapping, so a reclaimed slab
 * goes back to the OS with one munmap and comes back with one mmap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "slabmem.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB (30 << MAP_HUGE_SHIFT)
#endif

#define SZ_2M (2ull << 20)
#define SZ_1G (1ull << 30)

const char *fsd_mem_kind_str(int kind)
{
	switch (kind) {
	case FSD_MEM_HUGE_1G:
		return "hugetlb 1G";
	case FSD_MEM_HUGE_2M:
		return "hugetlb 2M";
	case FSD_MEM_ANON:
		return "anonymous (THP)";
	default:
		return "none";
	}
}

static void *map_huge(uint64_t size, int flag)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | flag, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The hosts' pages: never in a core dump of the daemon, never inherited
 * by a child.  hugetlb and anonymous slabs alike.
 */
static void keep_private(void *p, uint64_t size)
{
	madvise(p, size, MADV_DONTDUMP);
	madvise(p, size, MADV_DONTFORK);
}

/* Anonymous memory aligned to 2 MiB, so THP can back all of it. */
static void *map_anon(uint64_t size)
{
	uint64_t len = size + SZ_2M;
	uintptr_t start, aligned;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = (uintptr_t)p;
	aligned = (start + SZ_2M - 1) & ~(uintptr_t)(SZ_2M - 1);
	if (aligned > start)
		munmap(p, aligned - start);
	if (aligned + size < start + len)
		munmap((void *)(aligned + size), start + len - aligned - size);
	p = (void *)aligned;
	madvise(p, size, MADV_HUGEPAGE);
	keep_private(p, size);
	return p;
}

/*
 * Map and pin one slab.  Fresh anonymous and hugetlb memory reads as
 * zeros, so a new slab needs no clearing.
 */
int fsd_slab_mem_alloc(uint64_t size, enum fsd_hugepages mode, void **mem,
		       int *kind)
{
	void *p = NULL;
	int k = FSD_MEM_NONE;

	if (mode != FSD_HUGE_NEVER) {
		if (!(size % SZ_1G)) {
			p = map_huge(size, MAP_HUGE_1GB);
			k = FSD_MEM_HUGE_1G;
		}
		if (!p && !(size % SZ_2M)) {
			p = map_huge(size, MAP_HUGE_2MB);
			k = FSD_MEM_HUGE_2M;
		}
		if (p && mlock(p, size)) {
			munmap(p, size);
			p = NULL;
		}
		if (p)
			keep_private(p, size);
	}
	if (!p) {
		if (mode == FSD_HUGE_ALWAYS)
			return -ENOMEM;
		p = map_anon(size);
		k = FSD_MEM_ANON;
		if (!p)
			return -errno;
		if (mlock(p, size)) {
			int e = errno;

			munmap(p, size);
			return -e;
		}
	}
	*mem = p;
	*kind = k;
	return 0;
}

void fsd_slab_mem_free(void *mem, uint64_t size)
{
	if (mem)
		munmap(mem, size);
}

static bool has_cap_ipc_lock(void)
{
	char line[256];
	bool ret = false;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ret = caps & (1ull << 14);	/* CAP_IPC_LOCK */
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * Make sure @need bytes can be locked (mlock) and pinned (MRs): raise the
 * soft limit if the hard one allows, else explain how to raise it.
 */
int fsd_memlock_check(uint64_t need, char *err, size_t errlen)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		snprintf(err, errlen, "getrlimit(RLIMIT_MEMLOCK): %s",
			 strerror(errno));
		return -errno;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need ||
	    has_cap_ipc_lock())
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (!setrlimit(RLIMIT_MEMLOCK, &rl))
			return 0;
	}
	snprintf(err, errlen,
		 "RLIMIT_MEMLOCK is %" PRIu64 " KiB but the donation needs %" PRIu64
		 " KiB locked: raise it (ulimit -l unlimited as root, LimitMEMLOCK=infinity in the systemd unit, or a memlock line in /etc/security/limits.conf)",
		 (uint64_t)rl.rlim_cur >> 10, need >> 10);
	return -EPERM;
}
