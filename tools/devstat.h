/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host's farswap devices as the module shows them in sysfs (and its
 * latency histograms in debugfs), read once (devstat.c) and shown as
 * text (farswapctl status) or turned into JSON (farswapctl status
 * --json, docs/json.md) or Prometheus metrics (farswapctl metrics,
 * docs/metrics.md) (render.c).
 *
 * Every path is taken relative to a root directory ("/" on a real
 * system), so that the unit tests can point it at a fake tree.
 */
#ifndef FSH_DEVSTAT_H
#define FSH_DEVSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "metrics.h"

#define FSH_NAME_LEN 32

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The files of /sys/block/farswapN/farswap/ read, in this order. */
enum fsh_file {
	FSH_SLAB_SIZE,
	FSH_SLABS,
	FSH_CHUNKS,
	FSH_STAT,
	FSH_SYNC_IO,
	FSH_IO_TIMEOUT_MS,
	FSH_REPLICAS,
	FSH_AUTH,
	FSH_READ_POLICY,
	FSH_INTEGRITY,
	FSH_ENCRYPT,
	FSH_HOST_ID,			/* the UUID the device shows donors */
	FSH_HOST_ID_SOURCE,		/* "attach", "module" or "random" */
	FSH_STAGE,			/* staging: slots, memory, in use */
	FSH_NR_FILES,
};

/*
 * The files of a donor's directory, /sys/block/farswapN/donors/<i>/, in
 * this order.
 */
enum fsh_donor_file {
	FSH_DONOR_ADDRESS,		/* "ADDR:PORT" */
	FSH_DONOR_STATE,
	FSH_DONOR_DOMAIN,		/* empty until the donor told it */
	FSH_DONOR_SLABS,
	FSH_DONOR_FREE_SLABS,
	FSH_DONOR_TOTAL_SLABS,
	FSH_DONOR_STAT,			/* "reads=N writes=N ..." */
	FSH_DONOR_LAST_ERROR,		/* why it failed last; empty if never */
	FSH_DONOR_NR_FILES,
};

struct fsh_donor {
	unsigned long index;		/* its directory: donors/<index> */
	/* NULL: could not be read; else without the trailing newline. */
	char *file[FSH_DONOR_NR_FILES];
};

struct fsh_device {
	char name[FSH_NAME_LEN];
	char *size;			/* /sys/block/NAME/size, in sectors */
	/*
	 * /sys/block/NAME/stat, the block layer's counters: the device's
	 * requests and bytes, which the module's stat file does not repeat.
	 * NULL: could not be read.
	 */
	char *blk_stat;
	char *file[FSH_NR_FILES];	/* NULL: could not be read */
	/*
	 * /sys/kernel/debug/farswap/NAME/latency; NULL when it cannot be
	 * read (debugfs not mounted, not root), which is no error.
	 */
	char *latency;
	bool donors_listed;		/* /sys/block/NAME/donors was read */
	size_t nr_donors;
	struct fsh_donor *donors;	/* by index */
	bool swap_active;		/* listed in /proc/swaps */
	uint64_t swap_used_bytes;
	int swap_priority;
};

struct fsh_host {
	bool module_loaded;		/* /sys/kernel/farswap exists */
	char *version;			/* "module=0.1 protocol=1-1" */
	char *host_id;
	size_t nr_devices;
	struct fsh_device *devices;
};

/*
 * Read every farswap device under @root, or only @only (a device name)
 * if not NULL.  Returns 0, -ENOENT if @only is not a farswap device, or
 * another -errno; @err says why.
 */
int fsh_read(struct fsh_host *h, const char *root, const char *only,
	     char *err, size_t errlen);
void fsh_free(struct fsh_host *h);

/*
 * Whether /sys/block/@name under @root is a farswap device (has the
 * module's farswap/ directory).
 */
bool fsh_device_exists(const char *root, const char *name);

/*
 * farswapctl status's text of every device in @h to @out ("no farswap
 * devices" when there is none).  Returns 0, or 1 if a device lacked the
 * files that make it one (said on stderr).
 */
int fsh_text(const struct fsh_host *h, FILE *out);
/*
 * farswapctl status --check: a line per device saying whether it is
 * healthy, degraded or failing, and why.  Returns the worst: 0 healthy
 * (or no device), 1 degraded (a donor not live, chunks short of a
 * replica: nothing lost, less to lose it with), 2 failing (no donor
 * live, pages lost, the module not loaded, a device without its files).
 */
enum fsh_health {
	FSH_HEALTHY,
	FSH_DEGRADED,
	FSH_FAILING,
};

enum fsh_health fsh_check(const struct fsh_host *h, FILE *out);
/* The status document of docs/json.md. */
void fsh_json(const struct fsh_host *h, const char *ctl_version,
	      struct fsj *j);
/* The farswap_host_* families of docs/metrics.md. */
void fsh_metrics(const struct fsh_host *h, const char *ctl_version,
		 struct fsm *m);

/* A file holding one number ("4194304\n"). */
bool fsh_file_u64(const char *text, uint64_t *v);

/* "key=value" of a line of space-separated pairs, as a number. */
bool fsh_kv_u64(const char *line, const char *key, uint64_t *v);

/*
 * "key=value" of the first line of space-separated pairs, as a word (cut
 * to fit @len) in @out: @out, or NULL if @line is NULL, has no such key
 * or an empty value.
 */
const char *fsh_kv_word(const char *line, const char *key, char *out,
			size_t len);

/*
 * The "count=N p50_us=N ..." of @dev's latency line for @scope ("device",
 * or a donor's address) and @dir ("read" or "write"); NULL if there is
 * none, or no latency file.
 */
const char *fsh_latency(const struct fsh_device *dev, const char *scope,
			const char *dir);

/*
 * A number of the device's "stat" object by its name in the JSON document:
 * "reads", "writes", "discards", "read_bytes" and "write_bytes" from the
 * block layer's /sys/block/NAME/stat, the others ("zero_reads", ...) from
 * the module's farswap/stat.
 */
bool fsh_stat_u64(const struct fsh_device *dev, const char *key, uint64_t *v);

/*
 * A donor's number by its name in the JSON document: "slabs", "free",
 * "total" (files of their own) or a key of its stat file ("reads", ...).
 */
bool fsh_donor_u64(const struct fsh_donor *d, const char *key, uint64_t *v);

/* A donor's one-line file as a string: NULL if unread or empty. */
const char *fsh_donor_text(const struct fsh_donor *d,
			   enum fsh_donor_file f);

#endif /* FSH_DEVSTAT_H */
