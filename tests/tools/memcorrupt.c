// SPDX-License-Identifier: GPL-2.0
/*
 * memcorrupt: a donor's memory gone bad, on purpose.  Alters the pages a
 * running farswapd lends (through /proc/PID/mem, as root) the ways bad
 * memory, a bug or a hostile donor would:
 *
 *   memcorrupt --pid PID --min-region BYTES --mode MODE [--pages N]
 *              [--file PATH] [--seed S]
 *
 *   flip      flip one random bit in each of N pages
 *   zero      zero N pages
 *   swap      swap the contents of N pairs of pages
 *   snapshot  save N pages (address and bytes) to --file
 *   restore   write the pages saved by snapshot back: old copies
 *   find      change nothing: count the pages that hold --pattern (what a
 *             donor can read of the pages it holds)
 *
 * Only pages of writable mappings (private, or farswapd's shared memfd)
 * of at least --min-region bytes (farswapd's slabs) that are not all
 * zeros (a host wrote them) are touched.  Prints "memcorrupt: MODE pages=N" with how many it changed;
 * exits 1 if it changed none.  find prints how many pages hold the
 * pattern and exits 0 whatever it found.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE	4096

struct region {
	uint64_t start, end;
};

static int mem_fd;
static uint64_t *cand;		/* addresses of pages that hold data */
static size_t nr_cand;

static void die(const char *what)
{
	fprintf(stderr, "memcorrupt: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void read_page(uint64_t addr, void *buf)
{
	if (pread(mem_fd, buf, PAGE, addr) != PAGE)
		die("reading the donor's memory");
}

static void write_page(uint64_t addr, const void *buf)
{
	if (pwrite(mem_fd, buf, PAGE, addr) != PAGE)
		die("writing the donor's memory");
}

static bool all_zero(const uint8_t *p)
{
	size_t i;

	for (i = 0; i < PAGE; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Every page with data in the big writable mappings of @pid: private
 * (anonymous, hugetlb) or shared (farswapd's pool is a memfd, mapped
 * MAP_SHARED so that it outlives a restart).
 */
static void find_pages(int pid, uint64_t min_region)
{
	char path[64], line[512], perms[8];
	uint8_t buf[PAGE];
	size_t cap = 0;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "r");
	if (!maps)
		die(path);
	while (fgets(line, sizeof(line), maps)) {
		struct region r;
		uint64_t a;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &r.start,
			   &r.end, perms) != 3 ||
		    (strcmp(perms, "rw-p") && strcmp(perms, "rw-s")) ||
		    r.end - r.start < min_region)
			continue;
		for (a = r.start; a < r.end; a += PAGE) {
			read_page(a, buf);
			if (all_zero(buf))
				continue;
			if (nr_cand == cap) {
				cap = cap ? 2 * cap : 1024;
				cand = realloc(cand, cap * sizeof(*cand));
				if (!cand)
					die("realloc");
			}
			cand[nr_cand++] = a;
		}
	}
	fclose(maps);
}

/* Pick @n distinct candidates, in random order, into the front of cand. */
static size_t pick(size_t n)
{
	size_t i;

	if (n > nr_cand)
		n = nr_cand;
	for (i = 0; i < n; i++) {
		size_t j = i + (size_t)random() % (nr_cand - i);
		uint64_t t = cand[i];

		cand[i] = cand[j];
		cand[j] = t;
	}
	return n;
}

static size_t do_flip(size_t n)
{
	uint8_t buf[PAGE];
	size_t i;

	n = pick(n);
	for (i = 0; i < n; i++) {
		unsigned int bit = (unsigned int)random() % (PAGE * 8);

		read_page(cand[i], buf);
		buf[bit / 8] ^= 1u << (bit % 8);
		write_page(cand[i], buf);
	}
	return n;
}

static size_t do_zero(size_t n)
{
	static const uint8_t zero[PAGE];
	size_t i;

	n = pick(n);
	for (i = 0; i < n; i++)
		write_page(cand[i], zero);
	return n;
}

static size_t do_swap(size_t n)
{
	uint8_t a[PAGE], b[PAGE];
	size_t i, done = 0;

	n = pick(2 * n) / 2;
	for (i = 0; i < n; i++) {
		read_page(cand[2 * i], a);
		read_page(cand[2 * i + 1], b);
		if (!memcmp(a, b, PAGE))
			continue;
		write_page(cand[2 * i], b);
		write_page(cand[2 * i + 1], a);
		done += 2;
	}
	return done;
}

static size_t do_snapshot(size_t n, const char *file)
{
	uint8_t buf[PAGE];
	FILE *f = fopen(file, "w");
	size_t i;

	if (!f)
		die(file);
	n = pick(n);
	for (i = 0; i < n; i++) {
		read_page(cand[i], buf);
		if (fwrite(&cand[i], sizeof(cand[i]), 1, f) != 1 ||
		    fwrite(buf, PAGE, 1, f) != 1)
			die("writing the snapshot");
	}
	if (fclose(f))
		die("writing the snapshot");
	return n;
}

/* Counts only the pages whose bytes changed since the snapshot. */
static size_t do_restore(const char *file)
{
	uint8_t old[PAGE], now[PAGE];
	FILE *f = fopen(file, "r");
	size_t done = 0;
	uint64_t a;

	if (!f)
		die(file);
	while (fread(&a, sizeof(a), 1, f) == 1) {
		if (fread(old, PAGE, 1, f) != 1)
			die("reading the snapshot");
		read_page(a, now);
		if (!memcmp(old, now, PAGE))
			continue;
		write_page(a, old);
		done++;
	}
	fclose(f);
	return done;
}

/* Pages with data that hold @pattern (no page is changed). */
static size_t do_find(const char *pattern)
{
	size_t i, done = 0, len = strlen(pattern);
	uint8_t buf[PAGE];

	for (i = 0; i < nr_cand; i++) {
		read_page(cand[i], buf);
		done += memmem(buf, PAGE, pattern, len) != NULL;
	}
	return done;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "min-region", required_argument, NULL, 'r' },
		{ "mode", required_argument, NULL, 'm' },
		{ "pages", required_argument, NULL, 'n' },
		{ "file", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "pattern", required_argument, NULL, 'P' },
		{}
	};
	const char *mode = NULL, *file = NULL, *pattern = NULL;
	uint64_t min_region = 2 << 20;
	size_t n = 100, done;
	char path[64];
	int pid = 0, c;

	srandom(1);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pid = atoi(optarg); break;
		case 'r': min_region = strtoull(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'f': file = optarg; break;
		case 's': srandom((unsigned int)strtoul(optarg, NULL, 0)); break;
		case 'P': pattern = optarg; break;
		default: return 2;
		}
	}
	if (pid <= 0 || !mode ||
	    (!file && (!strcmp(mode, "snapshot") || !strcmp(mode, "restore"))) ||
	    (!strcmp(mode, "find") && (!pattern || !*pattern))) {
		fprintf(stderr, "usage: memcorrupt --pid PID --min-region BYTES --mode flip|zero|swap|snapshot|restore|find [--pages N] [--file PATH] [--pattern TEXT] [--seed S]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem_fd = open(path, O_RDWR);
	if (mem_fd < 0)
		die(path);
	if (strcmp(mode, "restore"))
		find_pages(pid, min_region);

	if (!strcmp(mode, "flip"))
		done = do_flip(n);
	else if (!strcmp(mode, "zero"))
		done = do_zero(n);
	else if (!strcmp(mode, "swap"))
		done = do_swap(n);
	else if (!strcmp(mode, "snapshot"))
		done = do_snapshot(n, file);
	else if (!strcmp(mode, "restore"))
		done = do_restore(file);
	else if (!strcmp(mode, "find"))
		done = do_find(pattern);
	else {
		fprintf(stderr, "memcorrupt: unknown mode %s\n", mode);
		return 2;
	}
	printf("memcorrupt: %s pages=%zu (of %zu with data)\n", mode, done,
	       nr_cand);
	return done || !strcmp(mode, "find") ? 0 : 1;
}
