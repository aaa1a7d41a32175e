/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake sysfs, debugfs and /proc tree below fake_root, a temporary
 * directory: what devstat.c and farswapctl read on a real host, for
 * test_devstat.c and test_farswapctl.c.
 */
#ifndef FAKE_SYSFS_H
#define FAKE_SYSFS_H

#include <stddef.h>

/* The tree's root; fake_root_make() makes it, fake_root_remove() removes it. */
extern char fake_root[];

/* cmocka group setup and teardown; fake_root_clean() empties the tree. */
int fake_root_make(void **state);
int fake_root_remove(void **state);
int fake_root_clean(void **state);

/* Write @text to @rel below the root, making its directories. */
void put_file(const char *rel, const char *text);
/* Make the directory @rel below the root, and its parents. */
void put_dir(const char *rel);
void remove_file(const char *rel);

/* A donor's directory, donors/<i>/: a NULL member has no file. */
struct fake_donor {
	const char *address;
	const char *state;
	const char *domain;
	const char *slabs;
	const char *free_slabs;
	const char *total_slabs;
	const char *stat;
	const char *last_error;
};

void put_donor(const char *dev, unsigned int index,
	       const struct fake_donor *d);
/* debugfs: /sys/kernel/debug/farswap/NAME/latency. */
void put_latency(const char *name, const char *text);
/*
 * The device's sysfs files, every one filled in, and its donors/
 * directory with @donors.
 */
void put_device(const char *name, const struct fake_donor *donors,
		size_t nr_donors);

/* The block layer's /sys/block/NAME/stat put_device() writes. */
extern const char blk_stat[];
/* Two donors, one live in rackA, one reconnecting with no domain yet. */
extern const struct fake_donor donors2[2];
/* Latency lines: of a device alone, and of one with donors2. */
extern const char latency_device[];
extern const char latency2[];

/*
 * The module loaded; farswap10 without donors, farswap2 with donors2 and
 * swapped on, each with its latency file; sda, which is not ours.
 */
void make_host(void);

#endif /* FAKE_SYSFS_H */
