// SPDX-License-Identifier: GPL-2.0
/*
 * Memory behind slabs.  Each slab is its own mapping of the pool's memfd,
 * so a reclaimed slab goes back to the OS with one munmap and a punched
 * hole, and comes back with one mmap; and a restart keeps every slab's
 * content in the memfd (slabmem.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "slabmem.h"

#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << MFD_HUGE_SHIFT)
#endif
#ifndef MFD_HUGE_1GB
#define MFD_HUGE_1GB (30u << MFD_HUGE_SHIFT)
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
		return "shmem (THP)";
	default:
		return "none";
	}
}

static unsigned int memfd_flags(int kind)
{
	switch (kind) {
	case FSD_MEM_HUGE_1G:
		return MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_1GB;
	case FSD_MEM_HUGE_2M:
		return MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB;
	default:
		return MFD_CLOEXEC;
	}
}

/*
 * The hosts' pages: never in a core dump of the daemon, never inherited
 * by a child.  hugetlb and shmem slabs alike.
 */
static void keep_private(void *p, uint64_t size, int kind)
{
	if (kind == FSD_MEM_ANON)
		madvise(p, size, MADV_HUGEPAGE);
	madvise(p, size, MADV_DONTDUMP);
	madvise(p, size, MADV_DONTFORK);
}

static int set_size(int fd, uint32_t nr_slabs, uint64_t slab_size)
{
	if (ftruncate(fd, (off_t)(nr_slabs * slab_size)))
		return -errno;
	return 0;
}

/*
 * Map and pin slab @id.  What a slab holds is the memfd's: zeros when it
 * is new or was punched, its host's pages when it was kept.
 */
int fsd_slabmem_map(const struct fsd_slabmem *sm, uint32_t id, void **mem)
{
	uint64_t size = sm->slab_size;
	void *p;

	if (sm->fd < 0 || id >= sm->nr_slabs)
		return -EINVAL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, sm->fd,
		 (off_t)(id * size));
	if (p == MAP_FAILED)
		return -errno;
	keep_private(p, size, sm->kind);
	/* hugetlb pages the kernel does not have show here, as ENOMEM. */
	if (mlock(p, size)) {
		int e = errno;

		munmap(p, size);
		return -e;
	}
	*mem = p;
	return 0;
}

/* The process lets go of a slab; its content stays in the memfd. */
void fsd_slabmem_unmap(void *mem, uint64_t size)
{
	if (mem)
		munmap(mem, size);
}

/*
 * Give slab @id's memory back to the kernel: it reads as zeros after
 * (a punched hole), so a slab populated again needs no clearing.
 */
int fsd_slabmem_punch(const struct fsd_slabmem *sm, uint32_t id)
{
	if (sm->fd < 0 || id >= sm->nr_slabs)
		return -EINVAL;
	if (fallocate(sm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)(id * sm->slab_size), (off_t)sm->slab_size))
		return -errno;
	return 0;
}

/*
 * Reserve every hugetlb page the pool needs, now: a shared mapping of the
 * whole file takes the reservation, which stays with the file after the
 * munmap, so no slab mapped later finds the pool short.  Without this, a
 * pool that has pages for some slabs only would fail part way through.
 */
static int reserve_huge(const struct fsd_slabmem *sm)
{
	uint64_t len = sm->nr_slabs * sm->slab_size;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sm->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

/*
 * A memfd of @kind for the whole pool (its hugetlb pages reserved) whose
 * first slab maps and pins: what the kind needs is there.
 */
static int try_kind(struct fsd_slabmem *sm, int kind)
{
	void *p;
	int ret;

	sm->fd = memfd_create("farswapd-pool", memfd_flags(kind));
	if (sm->fd < 0)
		return -errno;
	sm->kind = kind;
	ret = set_size(sm->fd, sm->nr_slabs, sm->slab_size);
	if (!ret && kind != FSD_MEM_ANON)
		ret = reserve_huge(sm);
	if (!ret)
		ret = fsd_slabmem_map(sm, 0, &p);
	if (ret) {
		close(sm->fd);
		sm->fd = -1;
		sm->kind = FSD_MEM_NONE;
		return ret;
	}
	/* Its pages stay in the memfd for when slab 0 is mapped again. */
	fsd_slabmem_unmap(p, sm->slab_size);
	return 0;
}

/*
 * The pool's memfd, @nr_slabs of @slab_size: hugetlb 1G, then 2M, when
 * @mode allows and the size fits, else shmem; 'always' refuses shmem.
 */
int fsd_slabmem_create(struct fsd_slabmem *sm, uint32_t nr_slabs,
		       uint64_t slab_size, enum fsd_hugepages mode)
{
	int ret = -ENOMEM;

	sm->fd = -1;
	sm->kind = FSD_MEM_NONE;
	sm->nr_slabs = nr_slabs;
	sm->slab_size = slab_size;
	if (mode != FSD_HUGE_NEVER) {
		if (!(slab_size % SZ_1G) && !try_kind(sm, FSD_MEM_HUGE_1G))
			return 0;
		if (!(slab_size % SZ_2M) && !try_kind(sm, FSD_MEM_HUGE_2M))
			return 0;
		if (mode == FSD_HUGE_ALWAYS)
			return -ENOMEM;
	}
	ret = try_kind(sm, FSD_MEM_ANON);
	return ret;
}

/*
 * The pool's memfd of the farswapd before this one (@fd, of @kind), now
 * @nr_slabs long: a smaller pool cuts the slabs beyond it off.
 */
int fsd_slabmem_adopt(struct fsd_slabmem *sm, int fd, int kind,
		      uint32_t nr_slabs, uint64_t slab_size)
{
	int ret = set_size(fd, nr_slabs, slab_size);

	if (ret)
		return ret;
	sm->fd = fd;
	sm->kind = kind;
	sm->nr_slabs = nr_slabs;
	sm->slab_size = slab_size;
	return 0;
}

void fsd_slabmem_close(struct fsd_slabmem *sm)
{
	if (sm->fd >= 0)
		close(sm->fd);
	sm->fd = -1;
}

/* Bytes a memfd holds in memory (what MemAvailable no longer counts). */
uint64_t fsd_memfd_resident(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	return (uint64_t)st.st_blocks * 512;
}

size_t fsd_memfd_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_size < 0)
		return 0;
	return (size_t)st.st_size;
}

int fsd_state_map(int fd, size_t len, void **map)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	*map = p;
	return 0;
}

/* A new pool-state memfd of @len bytes (zeros), mapped. */
int fsd_state_create(size_t len, int *fd, void **map)
{
	int ret;

	*fd = memfd_create("farswapd-pool-state", MFD_CLOEXEC);
	if (*fd < 0)
		return -errno;
	ret = ftruncate(*fd, (off_t)len) ? -errno : 0;
	if (!ret)
		ret = fsd_state_map(*fd, len, map);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
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
