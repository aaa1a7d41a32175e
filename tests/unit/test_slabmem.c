// SPDX-License-Identifier: GPL-2.0
/*
 * Slab memory: mapped, 2 MiB aligned, zero-filled, pinned, and given back
 * to the kernel when freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>

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

static void test_anon_slab(void **state)
{
	long locked0 = kb("/proc/self/status", "VmLck"), locked1;
	void *mem = NULL;
	int kind = 0;
	size_t i;

	(void)state;
	assert_int_equal(fsd_slab_mem_alloc(4 * MiB, FSD_HUGE_NEVER, &mem,
					    &kind), 0);
	assert_non_null(mem);
	assert_int_equal(kind, FSD_MEM_ANON);
	assert_int_equal((uintptr_t)mem % (2 * MiB), 0);
	locked1 = kb("/proc/self/status", "VmLck");
#ifndef __SANITIZE_ADDRESS__	/* ASan turns mlock into a no-op */
	assert_true(locked1 - locked0 >= 4096);	/* pinned */
#endif
	for (i = 0; i < 4 * MiB; i += 4096)
		assert_int_equal(((volatile uint8_t *)mem)[i], 0);
	assert_true(vm_flag(mem, "dd"));
	assert_true(vm_flag(mem, "dc"));
	memset(mem, 0xab, 4 * MiB);
	fsd_slab_mem_free(mem, 4 * MiB);
	assert_true(kb("/proc/self/status", "VmLck") <= locked0);
	(void)locked1;
	fsd_slab_mem_free(NULL, 4 * MiB);	/* harmless */
}

static void test_hugetlb_always(void **state)
{
	long free_huge = kb("/proc/meminfo", "HugePages_Free");
	long huge_kb = kb("/proc/meminfo", "Hugepagesize");
	void *mem = NULL;
	int kind = 0, ret;

	(void)state;
	ret = fsd_slab_mem_alloc(4 * MiB, FSD_HUGE_ALWAYS, &mem, &kind);
	if (free_huge * huge_kb >= 4096 && huge_kb == 2048) {
		assert_int_equal(ret, 0);
		assert_int_equal(kind, FSD_MEM_HUGE_2M);
		/* hugetlb slabs stay out of core dumps too. */
		assert_true(vm_flag(mem, "dd"));
		assert_true(vm_flag(mem, "dc"));
		fsd_slab_mem_free(mem, 4 * MiB);
	} else if (free_huge == 0 &&
		   kb("/proc/sys/vm/nr_overcommit_hugepages", "x") <= 0) {
		/* No hugetlb pages: 'always' refuses, 'auto' falls back. */
		assert_int_equal(ret, -ENOMEM);
		assert_int_equal(fsd_slab_mem_alloc(4 * MiB, FSD_HUGE_AUTO,
						    &mem, &kind), 0);
		assert_int_equal(kind, FSD_MEM_ANON);
		fsd_slab_mem_free(mem, 4 * MiB);
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
		cmocka_unit_test(test_anon_slab),
		cmocka_unit_test(test_hugetlb_always),
		cmocka_unit_test(test_memlock_check),
	};

	return cmocka_run_group_tests_name("slabmem", tests, NULL, NULL);
}
