// SPDX-License-Identifier: GPL-2.0
/*
 * Slab memory: a memfd whose slabs map zero-filled and pinned, keep their
 * content across a restart (the fd outlives the process), and read as
 * zeros once punched out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "slabmem.h"

#define MiB (1ull << 20)

/* A field of /proc/self/status or /proc/meminfo, in kB; -1 if absent. */
static long kb(const char *file, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			sscanf(line + strlen(key) + 1, "%ld", &v);
	fclose(f);
	return v;
}

/*
 * The VmFlags of the mapping at @addr in /proc/self/smaps contain @flag
 * ("dd": no core dump, "dc": not copied on fork).
 */
static bool vm_flag(const void *addr, const char *flag)
{
	char line[512], want[32];
	bool in = false, found = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), " %s", flag);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			found = strstr(line, want) != NULL;
		if (found)
			break;
	}
	fclose(f);
	return found;
}

/* Every byte of @mem is @c. */
static bool all_bytes(const void *mem, uint64_t len, uint8_t c)
{
	const volatile uint8_t *p = mem;
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return false;
	return true;
}

static void test_memfd_slab(void **state)
{
	long locked0 = kb("/proc/self/status", "VmLck"), locked1;
	struct fsd_slabmem sm;
	void *mem = NULL;

	(void)state;
	assert_int_equal(fsd_slabmem_create(&sm, 2, 2 * MiB, FSD_HUGE_NEVER),
			 0);
	assert_true(sm.fd >= 0);
	assert_int_equal(sm.kind, FSD_MEM_ANON);
	/* The pool outlives an exec only when passed on on purpose. */
	assert_true(fcntl(sm.fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fsd_memfd_size(sm.fd), 4 * MiB);
	assert_int_equal(fsd_slabmem_map(&sm, 1, &mem), 0);
	assert_non_null(mem);
	locked1 = kb("/proc/self/status", "VmLck");
#ifndef __SANITIZE_ADDRESS__	/* ASan turns mlock into a no-op */
	assert_true(locked1 - locked0 >= 2048);	/* pinned */
#endif
	(void)locked1;
	assert_true(all_bytes(mem, 2 * MiB, 0));
	assert_true(vm_flag(mem, "dd"));
	assert_true(vm_flag(mem, "dc"));
	fsd_slabmem_unmap(mem, 2 * MiB);
	assert_true(kb("/proc/self/status", "VmLck") <= locked0);
	assert_int_equal(fsd_slabmem_map(&sm, 2, &mem), -EINVAL);
	fsd_slabmem_unmap(NULL, 2 * MiB);	/* harmless */
	fsd_slabmem_close(&sm);
	assert_int_equal(sm.fd, -1);
}

/*
 * A restart: the pool's fd outlives the process that wrote the slab (a
 * dup of it stands for systemd's fd store), and the next one maps the
 * same bytes from it; a punched slab reads as zeros.
 */
static void test_memfd_survives_restart(void **state)
{
	struct fsd_slabmem sm, next;
	uint64_t before;
	void *mem;
	int store;

	(void)state;
	assert_int_equal(fsd_slabmem_create(&sm, 2, 2 * MiB, FSD_HUGE_NEVER),
			 0);
	assert_int_equal(fsd_slabmem_map(&sm, 1, &mem), 0);
	memset(mem, 0x5a, 2 * MiB);
	fsd_slabmem_unmap(mem, 2 * MiB);
	store = dup(sm.fd);
	assert_true(store >= 0);
	fsd_slabmem_close(&sm);		/* the old process is gone */

	assert_int_equal(fsd_slabmem_adopt(&next, store, FSD_MEM_ANON, 2,
					   2 * MiB), 0);
	assert_int_equal(fsd_slabmem_map(&next, 1, &mem), 0);
	assert_true(all_bytes(mem, 2 * MiB, 0x5a));
	fsd_slabmem_unmap(mem, 2 * MiB);
	before = fsd_memfd_resident(next.fd);
	assert_true(before >= 2 * MiB);
	assert_int_equal(fsd_slabmem_punch(&next, 1), 0);
	assert_true(fsd_memfd_resident(next.fd) <= before - 2 * MiB);
	assert_int_equal(fsd_slabmem_map(&next, 1, &mem), 0);
	assert_true(all_bytes(mem, 2 * MiB, 0));
	fsd_slabmem_unmap(mem, 2 * MiB);
	/* A smaller pool cuts the slabs beyond it off. */
	assert_int_equal(fsd_slabmem_adopt(&next, next.fd, FSD_MEM_ANON, 1,
					   2 * MiB), 0);
	assert_int_equal(fsd_memfd_size(next.fd), 2 * MiB);
	assert_int_equal(fsd_slabmem_map(&next, 1, &mem), -EINVAL);
	fsd_slabmem_close(&next);
}

/* The pool-state memfd: what is written through one mapping is kept. */
static void test_state_memfd(void **state)
{
	void *map, *again;
	int fd;

	(void)state;
	assert_int_equal(fsd_state_create(4096, &fd, &map), 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(all_bytes(map, 4096, 0));
	memcpy(map, "kept", 4);
	munmap(map, 4096);
	assert_int_equal(fsd_memfd_size(fd), 4096);
	assert_int_equal(fsd_state_map(fd, 4096, &again), 0);
	assert_memory_equal(again, "kept", 4);
	munmap(again, 4096);
	close(fd);
}

static void test_hugetlb_always(void **state)
{
	long free_huge = kb("/proc/meminfo", "HugePages_Free");
	long huge_kb = kb("/proc/meminfo", "Hugepagesize");
	struct fsd_slabmem sm;
	void *mem = NULL;
	int ret;

	(void)state;
	ret = fsd_slabmem_create(&sm, 1, 4 * MiB, FSD_HUGE_ALWAYS);
	if (free_huge * huge_kb >= 4096 && huge_kb == 2048) {
		assert_int_equal(ret, 0);
		assert_int_equal(sm.kind, FSD_MEM_HUGE_2M);
		/* hugetlb slabs stay out of core dumps too. */
		assert_int_equal(fsd_slabmem_map(&sm, 0, &mem), 0);
		assert_true(vm_flag(mem, "dd"));
		assert_true(vm_flag(mem, "dc"));
		fsd_slabmem_unmap(mem, 4 * MiB);
		assert_int_equal(fsd_slabmem_punch(&sm, 0), 0);
		fsd_slabmem_close(&sm);
	} else if (free_huge == 0 &&
		   kb("/proc/sys/vm/nr_overcommit_hugepages", "x") <= 0) {
		/* No hugetlb pages: 'always' refuses, 'auto' falls back. */
		assert_int_equal(ret, -ENOMEM);
		assert_int_equal(fsd_slabmem_create(&sm, 1, 4 * MiB,
						    FSD_HUGE_AUTO), 0);
		assert_int_equal(sm.kind, FSD_MEM_ANON);
		fsd_slabmem_close(&sm);
	} else if (!ret) {
		fsd_slabmem_close(&sm);
	}
}

static void test_memlock_check(void **state)
{
	struct rlimit rl;
	char err[512];

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	assert_int_equal(fsd_memlock_check(4096, err, sizeof(err)), 0);
	/* What needs more than the hard limit either has CAP_IPC_LOCK or says how to raise it. */
	if (rl.rlim_max != RLIM_INFINITY &&
	    fsd_memlock_check((uint64_t)rl.rlim_max * 2, err, sizeof(err)))
		assert_non_null(strstr(err, "ulimit -l"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memfd_slab),
		cmocka_unit_test(test_memfd_survives_restart),
		cmocka_unit_test(test_state_memfd),
		cmocka_unit_test(test_hugetlb_always),
		cmocka_unit_test(test_memlock_check),
	};

	return cmocka_run_group_tests_name("slabmem", tests, NULL, NULL);
}
