// SPDX-License-Identifier: GPL-2.0
/*
 * A fake sysfs, debugfs and /proc tree in a temporary directory, as
 * farswap.ko and the block layer lay them out, for the tests of the
 * readers of /sys/block/farswapN (fake_sysfs.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_sysfs.h"

char fake_root[] = "/tmp/fsh-test-XXXXXX";

/* Make the directories of @path below the root, up to its last '/'. */
static void make_parents(char *path)
{
	char *slash;

	for (slash = strchr(path + strlen(fake_root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
}

/* Write @text to @rel under the root, making its directories. */
void put_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	make_parents(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Make the directory @rel under the root, and its parents. */
void put_dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/", fake_root, rel);
	make_parents(path);
}

void remove_file(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	assert_int_equal(unlink(path), 0);
}


void put_donor(const char *dev, unsigned int index,
		      const struct fake_donor *d)
{
	char rel[160];

#define DONOR_FILE(file, member)					\
	do {								\
		snprintf(rel, sizeof(rel), "sys/block/%s/donors/%u/%s",	\
			 dev, index, file);				\
		if (d->member)						\
			put_file(rel, d->member);			\
	} while (0)
	snprintf(rel, sizeof(rel), "sys/block/%s/donors/%u", dev, index);
	put_dir(rel);
	DONOR_FILE("address", address);
	DONOR_FILE("state", state);
	DONOR_FILE("domain", domain);
	DONOR_FILE("slabs", slabs);
	DONOR_FILE("free_slabs", free_slabs);
	DONOR_FILE("total_slabs", total_slabs);
	DONOR_FILE("stat", stat);
	DONOR_FILE("last_error", last_error);
#undef DONOR_FILE
}

/* debugfs: /sys/kernel/debug/farswap/NAME/latency. */
void put_latency(const char *name, const char *text)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/kernel/debug/farswap/%s/latency",
		 name);
	put_file(rel, text);
}

/*
 * /sys/block/NAME/stat as a 6.x kernel writes it, 17 columns: 100 reads
 * of 800 sectors, 200 writes of 1600 sectors, 3 discards.
 */
const char blk_stat[] =
	"     100        0      800       50      200        0     1600       70        0       60      120        3        0       24        1        0        0\n";

/*
 * The device's sysfs files (farswap/stat without requests and bytes,
 * which are the block layer's), and its donors/ directory with @donors.
 */
void put_device(const char *name, const struct fake_donor *donors,
		       size_t nr_donors)
{
	char rel[128];
	size_t i;

#define DEV(file, text)							\
	do {								\
		snprintf(rel, sizeof(rel), "sys/block/%s/farswap/%s",	\
			 name, file);					\
		put_file(rel, text);					\
	} while (0)
	snprintf(rel, sizeof(rel), "sys/block/%s/size", name);
	put_file(rel, "1048576\n");
	snprintf(rel, sizeof(rel), "sys/block/%s/stat", name);
	put_file(rel, blk_stat);
	DEV("slab_size", "4194304\n");
	DEV("slabs", "held=2 slots=4 used=3 reclaiming=1\n");
	DEV("chunks", "total=256 unbound=250 binding=1 bound=3 migrating=2\n");
	DEV("stat", "zero_reads=5 errors=0 binds=3 bind_failures=0 slab_allocs=2 releases=0 migrations=1 lost_pages=0 write_throttled=7 held=4 write_inflight_bytes=8192 staged=40 stage_reads=6 stage_full=3 stage_retries=1 stage_lost=0\n");
	DEV("sync_io", "0\n");
	DEV("io_timeout_ms", "10000\n");
	DEV("read_policy", "round-robin\n");
	DEV("integrity", "alg=chacha20poly1305 checked=300 mismatches=2 bytes_per_page=20 table_bytes=2621440\n");
	DEV("encrypt", "alg=chacha20poly1305 bounce_bytes=8388608\n");
	DEV("stage", "slots=64 slot_bytes=65536 bytes=10757120 used=2\n");
	/* Random: status says the identity will not survive a reboot. */
	DEV("host_id", "6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83\n");
	DEV("host_id_source", "random\n");
	DEV("replicas", "replicas=2 degraded=1 repaired=4 repair_bytes=8192 repair_failures=0 failovers=5 heals=0 lost_pages=0 colocated=3 domains=2 spread=7 healed_pages=9\n");
#undef DEV
	snprintf(rel, sizeof(rel), "sys/block/%s/donors", name);
	put_dir(rel);
	for (i = 0; i < nr_donors; i++)
		put_donor(name, i, &donors[i]);
}

const struct fake_donor donors2[2] = {
	{ "10.0.0.2:7471\n", "live\n", "rackA\n", "1\n", "14\n", "16\n",
	  "reads=4 writes=8 read_bytes=16384 write_bytes=32768 errors=0 reconnects=1 migrated_out=0 revoked=2 resumed=3 resume_refused=0\n",
	  /* Live again: its last failure is not shown. */
	  "10.0.0.2:7471 failed: DISCONNECTED\n" },
	/* An empty domain: not told yet. */
	{ "[fe80::1]:7471\n", "reconnecting\n", "\n", "1\n", "0\n", "0\n",
	  "reads=6 writes=12 read_bytes=24576 write_bytes=49152 errors=2 reconnects=3 migrated_out=1 revoked=0 resumed=0 resume_refused=1\n",
	  "[fe80::1]:7471 did not answer within 4000 ms\n" },
};

const char latency_device[] =
	"device read count=10 p50_us=600 p90_us=1500 p99_us=2000 p999_us=3000\n"
	"device write count=20 p50_us=700 p90_us=1600 p99_us=2100 p999_us=3100\n";

const char latency2[] =
	"device read count=10 p50_us=600 p90_us=1500 p99_us=2000 p999_us=3000\n"
	"device write count=20 p50_us=700 p90_us=1600 p99_us=2100 p999_us=3100\n"
	"10.0.0.2:7471 read count=4 p50_us=500 p90_us=800 p99_us=900 p999_us=950\n"
	"10.0.0.2:7471 write count=8 p50_us=600 p90_us=900 p99_us=1000 p999_us=1100\n"
	"[fe80::1]:7471 read count=6 p50_us=550 p90_us=850 p99_us=950 p999_us=990\n"
	"[fe80::1]:7471 write count=12 p50_us=650 p90_us=950 p99_us=1050 p999_us=1200\n";

int fake_root_make(void **state)
{
	(void)state;
	if (!mkdtemp(fake_root))
		return -1;
	return 0;
}

int fake_root_remove(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	return system(cmd) ? -1 : 0;
}

/* Start each test from an empty tree. */
int fake_root_clean(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys '%s'/proc", fake_root, fake_root);
	return system(cmd) ? -1 : 0;
}

void make_host(void)
{
	put_file("sys/kernel/farswap/version", "module=0.1 protocol=1-2\n");
	put_file("sys/kernel/farswap/host_id",
		 "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	put_file("sys/block/sda/size", "100\n");	/* not ours */
	put_device("farswap10", NULL, 0);
	put_latency("farswap10", latency_device);
	put_device("farswap2", donors2, 2);
	put_latency("farswap2", latency2);
	put_file("proc/swaps",
		 "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		 "/dev/sda2                               partition\t1000\t\t0\t\t-2\n"
		 "/dev/farswap2                           partition\t524284\t\t1024\t\t10\n");
}
