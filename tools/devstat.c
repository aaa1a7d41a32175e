// SPDX-License-Identifier: GPL-2.0
/*
 * farswap devices from sysfs (and debugfs, for latency) into struct
 * fsh_host (devstat.h): each device's files, its donors' and its line of
 * /proc/swaps, read once below a root directory, and the numbers looked
 * up in them by key.  The one reader of the module's statistics; what
 * farswapctl shows of them, status's text, JSON and Prometheus metrics,
 * is rendered from struct fsh_host in render.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "devstat.h"

#define FSH_FILE_MAX (256 * 1024)
#define FSH_PATH_LEN 4096

static const char *const file_names[FSH_NR_FILES] = {
	[FSH_SLAB_SIZE] = "slab_size",
	[FSH_SLABS] = "slabs",
	[FSH_CHUNKS] = "chunks",
	[FSH_STAT] = "stat",
	[FSH_SYNC_IO] = "sync_io",
	[FSH_IO_TIMEOUT_MS] = "io_timeout_ms",
	[FSH_REPLICAS] = "replicas",
	[FSH_AUTH] = "auth",
	[FSH_READ_POLICY] = "read_policy",
	[FSH_INTEGRITY] = "integrity",
	[FSH_ENCRYPT] = "encrypt",
	[FSH_HOST_ID] = "host_id",
	[FSH_HOST_ID_SOURCE] = "host_id_source",
	[FSH_STAGE] = "stage",
};

static const char *const donor_file_names[FSH_DONOR_NR_FILES] = {
	[FSH_DONOR_ADDRESS] = "address",
	[FSH_DONOR_STATE] = "state",
	[FSH_DONOR_DOMAIN] = "domain",
	[FSH_DONOR_SLABS] = "slabs",
	[FSH_DONOR_FREE_SLABS] = "free_slabs",
	[FSH_DONOR_TOTAL_SLABS] = "total_slabs",
	[FSH_DONOR_STAT] = "stat",
	[FSH_DONOR_LAST_ERROR] = "last_error",
};

/*
 * The stat keys whose numbers the block layer counts, and the columns of
 * its /sys/block/NAME/stat they are in (Documentation/block/stat.rst,
 * 0-based), times @unit.  The module's stat file printed them too until
 * it stopped repeating what the block layer already counts; the keys
 * and metrics stayed.  Sectors are 512 bytes whatever the device's
 * block size.  Discards came with Linux 4.18: an older kernel's file
 * stops before, and "discards" is null.
 */
static const struct {
	const char *key;		/* of stat_fields (render.c) */
	unsigned int column;
	uint64_t unit;
} blk_columns[] = {
	{ "reads", 0, 1 },		/* read I/Os completed */
	{ "writes", 4, 1 },		/* write I/Os completed */
	{ "discards", 11, 1 },		/* discard I/Os completed */
	{ "read_bytes", 2, 512 },	/* sectors read */
	{ "write_bytes", 6, 512 },	/* sectors written */
};

bool fsh_kv_u64(const char *line, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p = line;

	while (p && *p && *p != '\n') {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			char *end;

			p += klen + 1;
			/* Digits only: strtoull would take "-1" as 2^64-1. */
			if (!isdigit((unsigned char)*p))
				return false;
			errno = 0;
			*v = strtoull(p, &end, 10);
			return !errno && (!*end || *end == ' ' || *end == '\n');
		}
		p += strcspn(p, " \n");
	}
	return false;
}

bool fsh_file_u64(const char *text, uint64_t *v)
{
	char *end;

	if (!text || !isdigit((unsigned char)*text))
		return false;
	errno = 0;
	*v = strtoull(text, &end, 10);
	return !errno && (!*end || *end == '\n');
}

/*
 * Column @column of the block layer's stat file (decimal numbers on one
 * line, between spaces), times @unit: false if the line is shorter, that
 * column is not a number, or the product does not fit.
 */
static bool blk_column_u64(const char *text, unsigned int column,
			   uint64_t unit, uint64_t *v)
{
	const char *p = text;
	unsigned int i;
	uint64_t n;
	char *end;

	if (!p)
		return false;
	/* A short line leaves p at its end, which is no digit. */
	for (i = 0; i < column; i++) {
		p += strspn(p, " \t");
		p += strcspn(p, " \t\n");
	}
	p += strspn(p, " \t");
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (errno || (*end && !isspace((unsigned char)*end)) ||
	    n > UINT64_MAX / unit)
		return false;
	*v = n * unit;
	return true;
}

static char *read_text(const char *path)
{
	char *buf, *shrunk;
	size_t len;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	buf = malloc(FSH_FILE_MAX);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	len = fread(buf, 1, FSH_FILE_MAX - 1, f);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	/*
	 * Most files are one short line, and a device has a few dozen of
	 * them with its donors': keep what was read, not the whole buffer.
	 */
	shrunk = realloc(buf, len + 1);
	return shrunk ?: buf;
}

static char *read_at(const char *root, const char *fmt, const char *a,
		     const char *b)
{
	char path[FSH_PATH_LEN], rel[FSH_PATH_LEN];

	snprintf(rel, sizeof(rel), fmt, a, b);
	snprintf(path, sizeof(path), "%s%s", root, rel);
	return read_text(path);
}

static bool is_farswap_disk(const char *root, const char *name)
{
	char path[FSH_PATH_LEN];
	struct stat st;

	if (strncmp(name, "farswap", 7) || !name[7] ||
	    strlen(name) >= FSH_NAME_LEN)
		return false;
	snprintf(path, sizeof(path), "%s/sys/block/%s/farswap", root, name);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* farswap2 before farswap10. */
static int device_cmp(const void *a, const void *b)
{
	const struct fsh_device *x = a, *y = b;
	unsigned long nx = strtoul(x->name + 7, NULL, 10);
	unsigned long ny = strtoul(y->name + 7, NULL, 10);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add_device(struct fsh_host *h, const char *name)
{
	struct fsh_device *nd;

	nd = realloc(h->devices, (h->nr_devices + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	h->devices = nd;
	nd = &h->devices[h->nr_devices++];
	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	return 0;
}

static int list_devices(struct fsh_host *h, const char *root)
{
	char path[FSH_PATH_LEN];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/sys/block", root);
	d = opendir(path);
	if (!d)
		return 0;	/* no block devices at all: none of ours */
	while (!ret && (e = readdir(d)))
		if (is_farswap_disk(root, e->d_name))
			ret = add_device(h, e->d_name);
	closedir(d);
	if (h->nr_devices)
		qsort(h->devices, h->nr_devices, sizeof(*h->devices),
		      device_cmp);
	return ret;
}

/* /proc/swaps: "Filename Type Size Used Priority", sizes in KiB. */
static void read_swaps(struct fsh_host *h, const char *root)
{
	char *swaps = read_at(root, "/proc/swaps", NULL, NULL);
	char *line, *save = NULL;
	size_t i;

	if (!swaps)
		return;
	for (line = strtok_r(swaps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char path[256], type[32];
		unsigned long long size, used;
		int prio;

		if (sscanf(line, "%255s %31s %llu %llu %d", path, type, &size,
			   &used, &prio) != 5 || strncmp(path, "/dev/", 5))
			continue;
		for (i = 0; i < h->nr_devices; i++) {
			struct fsh_device *dev = &h->devices[i];

			if (strcmp(path + 5, dev->name))
				continue;
			dev->swap_active = true;
			dev->swap_used_bytes = used * 1024;
			dev->swap_priority = prio;
		}
	}
	free(swaps);
}

static void chomp(char *s)
{
	size_t n = s ? strlen(s) : 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/*
 * A donor's directory name is its index, in decimal: "0", "1", ...; any
 * other entry is not a donor.
 */
static bool donor_index(const char *name, unsigned long *index)
{
	size_t n = strspn(name, "0123456789");

	if (!n || name[n] || n > 9 || (n > 1 && name[0] == '0'))
		return false;
	*index = strtoul(name, NULL, 10);
	return true;
}

/* By index, numerically: donors/2 before donors/10, in attach order. */
static int donor_cmp(const void *a, const void *b)
{
	const struct fsh_donor *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return 0;
}

static void drop_donors(struct fsh_device *dev)
{
	size_t i;
	int f;

	for (i = 0; i < dev->nr_donors; i++)
		for (f = 0; f < FSH_DONOR_NR_FILES; f++)
			free(dev->donors[i].file[f]);
	free(dev->donors);
	dev->donors = NULL;
	dev->nr_donors = 0;
}

/* /sys/block/NAME/donors/<i>/: one directory per donor. */
static void read_donors(struct fsh_device *dev, const char *root)
{
	/* The name is shorter than FSH_NAME_LEN, the index 9 digits. */
	char path[FSH_PATH_LEN], dir[FSH_NAME_LEN + 32];
	struct dirent *e;
	struct stat st;
	size_t i;
	int f;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/block/%s/donors", dev->name);
	snprintf(path, sizeof(path), "%s%s", root, dir);
	d = opendir(path);
	if (!d)
		return;		/* donors stays null, not an empty list */
	dev->donors_listed = true;
	while ((e = readdir(d))) {
		struct fsh_donor *nd;
		unsigned long index;

		if (!donor_index(e->d_name, &index))
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", root, dir, e->d_name);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		nd = realloc(dev->donors, (dev->nr_donors + 1) * sizeof(*nd));
		if (!nd) {
			/* Part of the list would pass for all of it. */
			drop_donors(dev);
			dev->donors_listed = false;
			break;
		}
		dev->donors = nd;
		nd = &dev->donors[dev->nr_donors++];
		memset(nd, 0, sizeof(*nd));
		nd->index = index;
	}
	closedir(d);
	if (dev->nr_donors)
		qsort(dev->donors, dev->nr_donors, sizeof(*dev->donors),
		      donor_cmp);
	for (i = 0; i < dev->nr_donors; i++) {
		struct fsh_donor *dn = &dev->donors[i];
		char ddir[sizeof(dir) + 24];

		snprintf(ddir, sizeof(ddir), "%s/%lu", dir, dn->index);
		for (f = 0; f < FSH_DONOR_NR_FILES; f++) {
			dn->file[f] = read_at(root, "%s/%s", ddir,
					      donor_file_names[f]);
			/* One line each: the value without its newline. */
			chomp(dn->file[f]);
		}
	}
}

static void read_device(struct fsh_device *dev, const char *root)
{
	int i;

	dev->size = read_at(root, "/sys/block/%s/size", dev->name, NULL);
	dev->blk_stat = read_at(root, "/sys/block/%s/stat", dev->name, NULL);
	for (i = 0; i < FSH_NR_FILES; i++)
		dev->file[i] = read_at(root, "/sys/block/%s/farswap/%s",
				       dev->name, file_names[i]);
	/*
	 * The histograms are in debugfs, for root and only when it is
	 * mounted: without them the rest is still worth showing.
	 */
	dev->latency = read_at(root, "/sys/kernel/debug/farswap/%s/latency",
			       dev->name, NULL);
	read_donors(dev, root);
}

/* Paths are "%s/sys/...": the real root is the empty prefix. */
static const char *root_prefix(const char *root)
{
	return !root || !strcmp(root, "/") ? "" : root;
}

bool fsh_device_exists(const char *root, const char *name)
{
	return is_farswap_disk(root_prefix(root), name);
}

int fsh_read(struct fsh_host *h, const char *root, const char *only,
	     char *err, size_t errlen)
{
	char path[FSH_PATH_LEN];
	struct stat st;
	size_t i;
	int ret;

	memset(h, 0, sizeof(*h));
	root = root_prefix(root);
	snprintf(path, sizeof(path), "%s/sys/kernel/farswap", root);
	h->module_loaded = !stat(path, &st);
	h->version = read_at(root, "/sys/kernel/farswap/version", NULL, NULL);
	h->host_id = read_at(root, "/sys/kernel/farswap/host_id", NULL, NULL);
	chomp(h->version);
	chomp(h->host_id);
	if (only) {
		if (!is_farswap_disk(root, only)) {
			snprintf(err, errlen, "%s: not a farswap device", only);
			return -ENOENT;
		}
		ret = add_device(h, only);
	} else {
		ret = list_devices(h, root);
	}
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < h->nr_devices; i++)
		read_device(&h->devices[i], root);
	read_swaps(h, root);
	return 0;
}

void fsh_free(struct fsh_host *h)
{
	size_t i;
	int f;

	for (i = 0; i < h->nr_devices; i++) {
		free(h->devices[i].size);
		free(h->devices[i].blk_stat);
		for (f = 0; f < FSH_NR_FILES; f++)
			free(h->devices[i].file[f]);
		free(h->devices[i].latency);
		drop_donors(&h->devices[i]);
	}
	free(h->devices);
	free(h->version);
	free(h->host_id);
	memset(h, 0, sizeof(*h));
}

/*
 * The latency file has a line per scope and direction:
 * "SCOPE DIR count=N p50_us=N ...", SCOPE "device" or a donor's address.
 */
const char *fsh_latency(const struct fsh_device *dev, const char *scope,
			const char *dir)
{
	size_t sn = scope ? strlen(scope) : 0, dn = strlen(dir);
	const char *p = dev->latency;

	if (!sn)
		return NULL;
	while (p && *p) {
		if (!strncmp(p, scope, sn) && p[sn] == ' ') {
			const char *q = p + sn + 1;

			if (!strncmp(q, dir, dn) &&
			    (q[dn] == ' ' || q[dn] == '\n' || !q[dn]))
				return q + dn;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

bool fsh_stat_u64(const struct fsh_device *dev, const char *key, uint64_t *v)
{
	const char *stat = dev->file[FSH_STAT];
	size_t i;

	/*
	 * The block layer's, whatever the module: an older one's
	 * farswap/stat still has these keys, counted its own way.
	 */
	for (i = 0; i < ARRAY_SIZE(blk_columns); i++)
		if (!strcmp(blk_columns[i].key, key))
			return blk_column_u64(dev->blk_stat,
					      blk_columns[i].column,
					      blk_columns[i].unit, v);
	return stat && fsh_kv_u64(stat, key, v);
}
