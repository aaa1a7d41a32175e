// SPDX-License-Identifier: GPL-2.0
/*
 * The bed's memory-debugging self-test (tests/vm/scenarios/selftest-memdebug):
 * a deliberate write after free that the bed must see in the kernel log.
 *
 *   mode=slab  writes into a freed object of a cache of its own and stays
 *              loaded, so the role script can validate the cache
 *              (/sys/kernel/slab/memdebug_selftest/validate): slub_debug's
 *              poison check reports it; KASAN reports the write itself.
 *   mode=page  writes into a freed page, then allocates pages until that
 *              one comes back (page_poison checks a page as it is handed
 *              out), frees them and fails with -EAGAIN: nothing stays
 *              loaded.  KASAN reports the write itself.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *mode = "slab";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "slab or page");

#define OBJ_SIZE	256
/* Pages allocated at most while looking for the freed one. */
#define PAGE_TRIES	64

static struct kmem_cache *cache;

static int write_after_free_slab(void)
{
	u32 *obj;

	/* A cache of our own: its sysfs directory has a fixed name. */
	cache = kmem_cache_create("memdebug_selftest", OBJ_SIZE, 0, 0, NULL);
	if (!cache)
		return -ENOMEM;
	obj = kmem_cache_alloc(cache, GFP_KERNEL);
	if (!obj) {
		kmem_cache_destroy(cache);
		return -ENOMEM;
	}
	kmem_cache_free(cache, obj);
	/* The middle of the object: SLUB may keep its free pointer at the start. */
	WRITE_ONCE(obj[OBJ_SIZE / sizeof(u32) / 2], 0x0abcdef0);
	pr_info("memdebug_selftest: wrote into a freed object of memdebug_selftest\n");
	return 0;
}

static int write_after_free_page(void)
{
	struct page *page, *got[PAGE_TRIES];
	int n, found = -1;
	u32 *addr;

	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	addr = page_address(page);
	__free_page(page);
	WRITE_ONCE(addr[PAGE_SIZE / sizeof(u32) / 2], 0x0abcdef0);
	/* The per-CPU free list hands the last freed page out first. */
	for (n = 0; n < PAGE_TRIES; n++) {
		got[n] = alloc_page(GFP_KERNEL);
		if (!got[n] || got[n] == page) {
			found = got[n] ? n : -1;
			n++;
			break;
		}
	}
	while (n--)
		if (got[n])
			__free_page(got[n]);
	pr_info("memdebug_selftest: wrote into a freed page, %s\n",
		found >= 0 ? "allocated it again" : "did not get it back");
	return -EAGAIN;
}

static int __init memdebug_selftest_init(void)
{
	if (!strcmp(mode, "slab"))
		return write_after_free_slab();
	if (!strcmp(mode, "page"))
		return write_after_free_page();
	return -EINVAL;
}

static void __exit memdebug_selftest_exit(void)
{
	kmem_cache_destroy(cache);
}

module_init(memdebug_selftest_init);
module_exit(memdebug_selftest_exit);
MODULE_DESCRIPTION("farswap test bed: a deliberate write after free");
MODULE_LICENSE("GPL");
