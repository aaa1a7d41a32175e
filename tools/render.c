// SPDX-License-Identifier: GPL-2.0
/*
 * What farswapctl shows of the devices devstat.c read (devstat.h): the
 * text of status, the JSON document of status --json (docs/json.md) and
 * the Prometheus metrics of metrics (docs/metrics.md).  The three are
 * rendered here together, apart from the reading: they share the field
 * tables.
 *
 * The keys of the module's key=value files are listed once, in the
 * tables below, with the metric each one becomes and the words status's
 * text shows it with: the text, the JSON document and the metrics cannot
 * drift apart.  A key the module stops printing shows up as null (JSON)
 * or a missing sample (metrics), never as a made-up zero; the text, for
 * people, shows 0.  The device's requests and bytes keep their keys and
 * metrics, but come from the block layer's stat file (blk_columns,
 * devstat.c).
 */
#include <stdio.h>
#include <string.h>

#include "devstat.h"

#define FSH_SCHEMA_VERSION 1

/*
 * How farswapctl status's text shows a number: "N words", or for
 * TEXT_BYTES "(1.5 MiB)", after the count it goes with; NULL: not at all.
 * Where in which line is the text's own layout (the text_items below).
 */
#define TEXT_BYTES "(bytes)"

struct fsh_field {
	const char *key;	/* in sysfs and in the JSON document */
	const char *metric;	/* consecutive fields may share a family */
	const char *state;	/* the family's "state" label, if it has one */
	enum fsm_type type;
	const char *help;
	const char *text;	/* as above */
};

/* The integrity and encrypt files' numbers, in JSON only. */
static const char *const integrity_keys[] = {
	"checked", "mismatches", "bytes_per_page", "table_bytes",
};

static const char *const encrypt_keys[] = {
	"bounce_bytes",
};

/* The replicas file's numbers, in JSON (metrics: replicas_fields). */
static const char *const replicas_keys[] = {
	"replicas", "degraded", "repaired", "repair_bytes", "repair_failures",
	"failovers", "heals", "lost_pages", "colocated", "domains", "spread",
	"healed_pages",
};

/* lost_pages is stat's metric already. */
static const struct fsh_field replicas_fields[] = {
	{ "replicas", "farswap_host_replicas", NULL, FSM_GAUGE,
	  "Copies of each chunk the device keeps, on distinct donors.", NULL },
	{ "degraded", "farswap_host_chunks_degraded", NULL, FSM_GAUGE,
	  "Bound chunks with fewer serving replicas than wanted, or damaged pages to rewrite.",
	  NULL },
	{ "repaired", "farswap_host_chunk_repairs_total", NULL, FSM_COUNTER,
	  "Replicas copied to a new donor after one was lost.", NULL },
	{ "repair_bytes", "farswap_host_repair_bytes_total", NULL, FSM_COUNTER,
	  "Bytes copied by repairs.", NULL },
	{ "repair_failures", "farswap_host_repair_failures_total", NULL,
	  FSM_COUNTER, "Repairs that failed (tried again later).", NULL },
	{ "failovers", "farswap_host_read_failovers_total", NULL, FSM_COUNTER,
	  "Reads served by another replica after one failed.", NULL },
	{ "heals", "farswap_host_heals_total", NULL, FSM_COUNTER,
	  "Damaged replicas rewritten from an intact one.", NULL },
	{ "healed_pages", "farswap_host_healed_pages_total", NULL, FSM_COUNTER,
	  "Pages rewritten by heals.", NULL },
	{ "colocated", "farswap_host_chunks_colocated", NULL, FSM_GAUGE,
	  "Bound chunks two of whose replicas share a failure domain.", NULL },
	{ "domains", "farswap_host_failure_domains", NULL, FSM_GAUGE,
	  "Failure domains the device's donors told of.", NULL },
	{ "spread", "farswap_host_chunk_spreads_total", NULL, FSM_COUNTER,
	  "Replicas moved out of a shared failure domain.", NULL },
};

static const struct fsh_field integrity_fields[] = {
	{ "checked", "farswap_host_integrity_checked_pages_total", NULL,
	  FSM_COUNTER, "Pages read back whose check was verified.", NULL },
	{ "mismatches", "farswap_host_integrity_mismatches_total", NULL,
	  FSM_COUNTER, "Pages read back that failed their check.", NULL },
};

/* Staging (the stage file): its size, memory and use now. */
static const struct fsh_field stage_fields[] = {
	{ "slots", "farswap_host_stage_slots", NULL, FSM_GAUGE,
	  "Staging slots per write queue (0: staging off).", NULL },
	{ "slot_bytes", "farswap_host_stage_slot_bytes", NULL, FSM_GAUGE,
	  "Bytes of data one staging slot holds.", NULL },
	{ "bytes", "farswap_host_stage_bytes", NULL, FSM_GAUGE,
	  "Host memory the staging slots take, their pages and contexts.", NULL },
	{ "used", "farswap_host_stage_slots_used", NULL, FSM_GAUGE,
	  "Staging slots holding a write not yet written to a donor.", NULL },
};

static const struct fsh_field slabs_fields[] = {
	{ "held", "farswap_host_slabs_held", NULL, FSM_GAUGE,
	  "Donor slabs the device holds.", NULL },
	{ "slots", "farswap_host_slab_slots", NULL, FSM_GAUGE,
	  "2 MiB chunk slots in the donor slabs held.", NULL },
	{ "used", "farswap_host_slab_slots_used", NULL, FSM_GAUGE,
	  "Chunk slots in use in the donor slabs held.", NULL },
	{ "reclaiming", "farswap_host_slabs_reclaiming", NULL, FSM_GAUGE,
	  "Donor slabs the donors asked back, being moved.", NULL },
};

static const struct fsh_field chunks_fields[] = {
	{ "total", "farswap_host_device_chunks", NULL, FSM_GAUGE,
	  "2 MiB chunks of the device.", NULL },
	{ "unbound", "farswap_host_chunks", "unbound", FSM_GAUGE,
	  "The device's 2 MiB chunks by state.", NULL },
	{ "binding", "farswap_host_chunks", "binding", FSM_GAUGE, NULL, NULL },
	{ "bound", "farswap_host_chunks", "bound", FSM_GAUGE, NULL, NULL },
	{ "migrating", "farswap_host_chunks", "migrating", FSM_GAUGE, NULL, NULL },
};

/*
 * reads ... write_bytes are the block layer's numbers (blk_columns in
 * devstat.c), the others those of farswap/stat.
 */
static const struct fsh_field stat_fields[] = {
	{ "reads", "farswap_host_reads_total", NULL, FSM_COUNTER,
	  "Read requests.", "reads" },
	{ "writes", "farswap_host_writes_total", NULL, FSM_COUNTER,
	  "Write requests.", "writes" },
	{ "discards", "farswap_host_discards_total", NULL, FSM_COUNTER,
	  "Discard requests.", "discards" },
	{ "read_bytes", "farswap_host_read_bytes_total", NULL, FSM_COUNTER,
	  "Bytes read (swapped in).", TEXT_BYTES },
	{ "write_bytes", "farswap_host_write_bytes_total", NULL, FSM_COUNTER,
	  "Bytes written (swapped out).", TEXT_BYTES },
	{ "zero_reads", "farswap_host_zero_reads_total", NULL, FSM_COUNTER,
	  "Reads of never-written pages, zero-filled without the network.",
	  "zero-fill reads" },
	{ "errors", "farswap_host_errors_total", NULL, FSM_COUNTER,
	  "Requests failed with an I/O error.", "errors" },
	{ "binds", "farswap_host_chunk_binds_total", NULL, FSM_COUNTER,
	  "Chunks bound to a slot in a donor slab.", "chunks bound" },
	{ "bind_failures", "farswap_host_chunk_bind_failures_total", NULL,
	  FSM_COUNTER, "Chunk binds that failed.", "bind failures" },
	{ "slab_allocs", "farswap_host_slab_allocs_total", NULL, FSM_COUNTER,
	  "Donor slabs taken.", "donor slabs taken" },
	{ "releases", "farswap_host_slab_releases_total", NULL, FSM_COUNTER,
	  "Donor slabs given back.", "given back" },
	{ "migrations", "farswap_host_chunk_migrations_total", NULL,
	  FSM_COUNTER, "Chunks moved to another donor on reclaim.",
	  "moved on reclaim" },
	{ "lost_pages", "farswap_host_lost_pages_total", NULL, FSM_COUNTER,
	  "Pages lost with a failed donor.", "pages lost" },
	{ "write_throttled", "farswap_host_write_throttled_total", NULL,
	  FSM_COUNTER, "Writes that waited for the in-flight cap (write_inflight_kb).",
	  NULL },
	{ "held", "farswap_host_held_requests_total", NULL, FSM_COUNTER,
	  "Requests that waited for a chunk bind or move.", NULL },
	{ "write_inflight_bytes", "farswap_host_write_inflight_bytes", NULL,
	  FSM_GAUGE, "Swap-out bytes posted and not yet completed.", NULL },
	{ "staged", "farswap_host_staged_writes_total", NULL, FSM_COUNTER,
	  "Write requests completed once copied into staging.", NULL },
	{ "stage_reads", "farswap_host_stage_reads_total", NULL, FSM_COUNTER,
	  "Reads served from a staged copy.", NULL },
	{ "stage_full", "farswap_host_stage_full_total", NULL, FSM_COUNTER,
	  "Writes that found their queue's staging full and went to the donors directly.",
	  NULL },
	{ "stage_retries", "farswap_host_stage_retries_total", NULL,
	  FSM_COUNTER, "Staged writes sent again after no replica took them.",
	  NULL },
	{ "stage_lost", "farswap_host_stage_lost_total", NULL, FSM_COUNTER,
	  "Staged writes no donor took: their pages lost.", NULL },
};

/* A donor's numbers: the JSON key is the file's name, or stat's key. */
struct fsh_donor_field {
	const char *key;		/* in JSON; in stat, for FSH_DONOR_STAT */
	enum fsh_donor_file file;	/* else the file holds the number */
	const char *metric;
	enum fsm_type type;
	const char *help;
	const char *text;		/* as struct fsh_field's */
};

static const struct fsh_donor_field donor_fields[] = {
	{ "slabs", FSH_DONOR_SLABS, "farswap_host_donor_slabs", FSM_GAUGE,
	  "Slabs of this donor the device holds.", NULL },
	{ "free_slabs", FSH_DONOR_FREE_SLABS, "farswap_host_donor_free_slabs",
	  FSM_GAUGE, "Free slabs the donor last reported.", NULL },
	{ "total_slabs", FSH_DONOR_TOTAL_SLABS, "farswap_host_donor_total_slabs",
	  FSM_GAUGE, "Slabs the donor last reported in all.", NULL },
	{ "reads", FSH_DONOR_STAT, "farswap_host_donor_reads_total",
	  FSM_COUNTER, "Reads from this donor.", "reads" },
	{ "writes", FSH_DONOR_STAT, "farswap_host_donor_writes_total",
	  FSM_COUNTER, "Writes to this donor.", "writes" },
	{ "read_bytes", FSH_DONOR_STAT, "farswap_host_donor_read_bytes_total",
	  FSM_COUNTER, "Bytes read from this donor.", TEXT_BYTES },
	{ "write_bytes", FSH_DONOR_STAT,
	  "farswap_host_donor_write_bytes_total", FSM_COUNTER,
	  "Bytes written to this donor.", TEXT_BYTES },
	{ "errors", FSH_DONOR_STAT, "farswap_host_donor_errors_total",
	  FSM_COUNTER, "Failed work requests on this donor's queues.",
	  "errors" },
	{ "reconnects", FSH_DONOR_STAT, "farswap_host_donor_reconnects_total",
	  FSM_COUNTER, "Reconnections to this donor.", "reconnects" },
	{ "migrated_out", FSH_DONOR_STAT,
	  "farswap_host_donor_migrated_out_total", FSM_COUNTER,
	  "Chunks moved off this donor.", NULL },
	{ "revoked", FSH_DONOR_STAT, "farswap_host_donor_revoked_slabs_total",
	  FSM_COUNTER, "Slabs this donor took back by force (SLAB_REVOKE).", NULL },
	{ "resumed", FSH_DONOR_STAT, "farswap_host_donor_resumed_slabs_total",
	  FSM_COUNTER, "Slabs taken back with their content after this donor restarted.",
	  "slabs resumed" },
	{ "resume_refused", FSH_DONOR_STAT,
	  "farswap_host_donor_resume_refused_slabs_total", FSM_COUNTER,
	  "Slabs this donor did not keep across its restart.", NULL },
};

/*
 * Percentile keys of the latency lines and their Prometheus quantile, in
 * the latency file's order.  The device and each donor have all four.
 */
static const struct {
	const char *key;
	const char *quantile;
} percentiles[] = {
	{ "p50_us", "0.5" },
	{ "p90_us", "0.9" },
	{ "p99_us", "0.99" },
	{ "p999_us", "0.999" },
};

/* The scope of the device's own lines in the latency file. */
#define LATENCY_DEVICE "device"

static const char *const directions[] = { "read", "write" };

/*
 * The value of @key in @dev's key=value file @file (FSH_STAT: by
 * fsh_stat_u64(), devstat.c).
 */
static bool field_u64(const struct fsh_device *dev, enum fsh_file file,
		      const char *key, uint64_t *v)
{
	if (file == FSH_STAT)
		return fsh_stat_u64(dev, key, v);
	return dev->file[file] && fsh_kv_u64(dev->file[file], key, v);
}

static bool donor_field_u64(const struct fsh_donor *d,
			    const struct fsh_donor_field *f, uint64_t *v)
{
	const char *text = d->file[f->file];

	if (f->file == FSH_DONOR_STAT)
		return text && fsh_kv_u64(text, f->key, v);
	return fsh_file_u64(text, v);
}

bool fsh_donor_u64(const struct fsh_donor *d, const char *key, uint64_t *v)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(donor_fields); i++)
		if (!strcmp(donor_fields[i].key, key))
			return donor_field_u64(d, &donor_fields[i], v);
	return false;
}

/* The module's version file: "module=0.1 protocol=1-1". */
static bool parse_version(const char *text, char *module, size_t len,
			  unsigned int *pmin, unsigned int *pmax)
{
	char fmt[48];

	if (!text || len < 2)
		return false;
	snprintf(fmt, sizeof(fmt), "module=%%%zus protocol=%%u-%%u", len - 1);
	return sscanf(text, fmt, module, pmin, pmax) == 3;
}

/* --- JSON --- */

static void json_num_or_null(struct fsj *j, const char *key, bool ok,
			     uint64_t v)
{
	if (ok)
		fsj_u64(j, key, v);
	else
		fsj_null(j, key);
}

/* Member @key: the value of @skey in @line, or null. */
static void json_kv(struct fsj *j, const char *key, const char *line,
		    const char *skey)
{
	uint64_t v = 0;
	bool ok = line && fsh_kv_u64(line, skey, &v);

	json_num_or_null(j, key, ok, v);
}

/* Member @key: the number a one-number file holds, times @mul, or null. */
static void json_file_u64(struct fsj *j, const char *key, const char *text,
			  uint64_t mul)
{
	uint64_t v = 0;
	bool ok = fsh_file_u64(text, &v);

	json_num_or_null(j, key, ok, v * mul);
}

/* Member @key: an object of @dev's numbers @f from its file @file. */
static void json_fields(struct fsj *j, const char *key,
			const struct fsh_device *dev, enum fsh_file file,
			const struct fsh_field *f, size_t n)
{
	size_t i;

	fsj_object_begin(j, key);
	for (i = 0; i < n; i++) {
		uint64_t v = 0;
		bool ok = field_u64(dev, file, f[i].key, &v);

		json_num_or_null(j, f[i].key, ok, v);
	}
	fsj_object_end(j);
}

/*
 * {"read": {"count": N, "p50_us": N, ...}, "write": {...}} of @scope's
 * latency lines.  Without the latency file (debugfs not mounted, not
 * root) the object is still there, its numbers null: the document keeps
 * its shape whoever runs farswapctl.
 */
static void json_latency(struct fsj *j, const struct fsh_device *dev,
			 const char *scope)
{
	size_t d, i;

	fsj_object_begin(j, "latency");
	for (d = 0; d < ARRAY_SIZE(directions); d++) {
		const char *line = fsh_latency(dev, scope, directions[d]);

		fsj_object_begin(j, directions[d]);
		json_kv(j, "count", line, "count");
		for (i = 0; i < ARRAY_SIZE(percentiles); i++)
			json_kv(j, percentiles[i].key, line,
				percentiles[i].key);
		fsj_object_end(j);
	}
	fsj_object_end(j);
}

/* Copy @n bytes of @s to @out as a string, cut to fit. */
static void copy_word(char *out, size_t len, const char *s, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* The word after " @key=" in the first line of @line, or "". */
static void line_word(const char *line, const char *key, char *out,
		      size_t len)
{
	size_t eol = strcspn(line, "\n"), klen = strlen(key);
	const char *s = line;

	out[0] = '\0';
	while ((s = strstr(s, key)) && s < line + eol) {
		if (s > line && s[-1] == ' ' && s[klen] == '=') {
			s += klen + 1;
			copy_word(out, len, s, strcspn(s, " \n"));
			return;
		}
		s += klen;
	}
}

const char *fsh_kv_word(const char *line, const char *key, char *out,
			size_t len)
{
	size_t klen = strlen(key);

	out[0] = '\0';
	if (!line)
		return NULL;
	/* line_word() finds keys after a space: this one may come first. */
	if (!strncmp(line, key, klen) && line[klen] == '=')
		copy_word(out, len, line + klen + 1,
			  strcspn(line + klen + 1, " \n"));
	else
		line_word(line, key, out, len);
	return out[0] ? out : NULL;
}

/* Member @key: the word after "@key=" in @file, or null. */
static void json_kv_word(struct fsj *j, const char *key, const char *file)
{
	char word[40];

	if (!file) {
		fsj_null(j, key);
		return;
	}
	fsj_string(j, key, fsh_kv_word(file, key, word, sizeof(word)));
}

/*
 * Member @key: an object of @file's "alg=" word and the numbers of
 * @keys; null when the module has no such file.
 */
static void json_alg_file(struct fsj *j, const char *key, const char *file,
			  const char *const *keys, size_t n)
{
	size_t i;

	if (!file) {
		fsj_null(j, key);
		return;
	}
	fsj_object_begin(j, key);
	json_kv_word(j, "alg", file);
	for (i = 0; i < n; i++)
		json_kv(j, keys[i], file, keys[i]);
	fsj_object_end(j);
}

const char *fsh_donor_text(const struct fsh_donor *d,
			   enum fsh_donor_file f)
{
	return d->file[f] && d->file[f][0] ? d->file[f] : NULL;
}

static void json_donor(struct fsj *j, const struct fsh_device *dev,
		       const struct fsh_donor *d)
{
	const char *addr = fsh_donor_text(d, FSH_DONOR_ADDRESS);
	size_t i;

	fsj_object_begin(j, NULL);
	fsj_string(j, "address", addr);
	fsj_string(j, "state", fsh_donor_text(d, FSH_DONOR_STATE));
	/* Empty: the donor has not told its domain yet. */
	fsj_string(j, "domain", fsh_donor_text(d, FSH_DONOR_DOMAIN));
	/* Null: no connect or session of it has failed. */
	fsj_string(j, "last_error", fsh_donor_text(d, FSH_DONOR_LAST_ERROR));
	for (i = 0; i < ARRAY_SIZE(donor_fields); i++) {
		uint64_t v = 0;
		bool ok = donor_field_u64(d, &donor_fields[i], &v);

		json_num_or_null(j, donor_fields[i].key, ok, v);
	}
	json_latency(j, dev, addr);
	fsj_object_end(j);
}

static void json_donors(struct fsj *j, const struct fsh_device *dev)
{
	size_t i;

	if (!dev->donors_listed) {
		fsj_null(j, "donors");
		return;
	}
	fsj_array_begin(j, "donors");
	for (i = 0; i < dev->nr_donors; i++)
		json_donor(j, dev, &dev->donors[i]);
	fsj_array_end(j);
}

/* "auth=hmac-sha256" or "auth=none" as the bare name; NULL if unread. */
/*
 * The word @s starts with (up to a space or newline) into @out, whole:
 * NULL for an empty word or one that does not fit.
 */
static const char *whole_word(const char *s, char *out, size_t outlen)
{
	size_t n = strcspn(s, " \n");

	if (!n || n >= outlen)
		return NULL;
	copy_word(out, outlen, s, n);
	return out;
}

static const char *auth_name(const char *file, char *out, size_t outlen)
{
	if (!file || strncmp(file, "auth=", 5))
		return NULL;
	return whole_word(file + 5, out, outlen);
}

/* A one-word file ("fastest\n") into @out; NULL if it is not one. */
static const char *file_word(const char *file, char *out, size_t outlen)
{
	size_t n;

	if (!file)
		return NULL;
	n = strcspn(file, " \n");
	if (file[n + strspn(file + n, " \n")])
		return NULL;
	return whole_word(file, out, outlen);
}

static void json_device(struct fsj *j, const struct fsh_device *dev)
{
	const char *const *f = (const char *const *)dev->file;
	uint64_t v = 0;
	bool ok;

	fsj_object_begin(j, NULL);
	fsj_string(j, "name", dev->name);
	json_file_u64(j, "size_bytes", dev->size, 512);
	json_file_u64(j, "slab_size", f[FSH_SLAB_SIZE], 1);
	ok = fsh_file_u64(f[FSH_SYNC_IO], &v);
	if (ok)
		fsj_bool(j, "sync_io", v != 0);
	else
		fsj_null(j, "sync_io");
	json_file_u64(j, "io_timeout_ms", f[FSH_IO_TIMEOUT_MS], 1);
	{
		char auth[32];
		uint64_t pinned;

		fsj_string(j, "auth", auth_name(f[FSH_AUTH], auth,
						sizeof(auth)));
		if (f[FSH_AUTH] && fsh_kv_u64(f[FSH_AUTH], "pinned", &pinned))
			fsj_u64(j, "pinned_donor_keys", pinned);
		else
			fsj_null(j, "pinned_donor_keys");
	}
	{
		char policy[32];

		fsj_string(j, "read_policy",
			   file_word(f[FSH_READ_POLICY], policy,
				     sizeof(policy)));
	}
	{
		char id[48], source[16];

		fsj_string(j, "host_id", file_word(f[FSH_HOST_ID], id,
						   sizeof(id)));
		fsj_string(j, "host_id_source",
			   file_word(f[FSH_HOST_ID_SOURCE], source,
				     sizeof(source)));
	}
	fsj_object_begin(j, "swap");
	fsj_bool(j, "active", dev->swap_active);
	fsj_u64(j, "used_bytes", dev->swap_active ? dev->swap_used_bytes : 0);
	if (dev->swap_active)
		fsj_i64(j, "priority", dev->swap_priority);
	else
		fsj_null(j, "priority");
	fsj_object_end(j);
	json_fields(j, "slabs", dev, FSH_SLABS, slabs_fields,
		    ARRAY_SIZE(slabs_fields));
	json_fields(j, "chunks", dev, FSH_CHUNKS, chunks_fields,
		    ARRAY_SIZE(chunks_fields));
	json_fields(j, "stat", dev, FSH_STAT, stat_fields,
		    ARRAY_SIZE(stat_fields));
	json_latency(j, dev, LATENCY_DEVICE);
	if (f[FSH_REPLICAS]) {
		size_t i;

		fsj_object_begin(j, "replicas");
		for (i = 0; i < ARRAY_SIZE(replicas_keys); i++)
			json_kv(j, replicas_keys[i], f[FSH_REPLICAS],
				replicas_keys[i]);
		fsj_object_end(j);
	} else {
		fsj_null(j, "replicas");
	}
	json_alg_file(j, "integrity", f[FSH_INTEGRITY], integrity_keys,
		      ARRAY_SIZE(integrity_keys));
	json_alg_file(j, "encrypt", f[FSH_ENCRYPT], encrypt_keys,
		      ARRAY_SIZE(encrypt_keys));
	json_fields(j, "stage", dev, FSH_STAGE, stage_fields,
		    ARRAY_SIZE(stage_fields));
	json_donors(j, dev);
	fsj_object_end(j);
}

void fsh_json(const struct fsh_host *h, const char *ctl_version,
	      struct fsj *j)
{
	unsigned int pmin, pmax;
	char module[32];
	bool have_version;
	size_t i;

	have_version = parse_version(h->version, module, sizeof(module),
				     &pmin, &pmax);
	fsj_object_begin(j, NULL);
	fsj_u64(j, "schema_version", FSH_SCHEMA_VERSION);
	fsj_string(j, "farswapctl_version", ctl_version);
	fsj_object_begin(j, "module");
	fsj_bool(j, "loaded", h->module_loaded);
	fsj_string(j, "version", have_version ? module : NULL);
	json_num_or_null(j, "protocol_min", have_version, pmin);
	json_num_or_null(j, "protocol_max", have_version, pmax);
	fsj_string(j, "host_id", h->host_id);
	fsj_object_end(j);
	fsj_array_begin(j, "devices");
	for (i = 0; i < h->nr_devices; i++)
		json_device(j, &h->devices[i]);
	fsj_array_end(j);
	fsj_object_end(j);
}

/* --- Prometheus --- */

/*
 * One family per run of fields with the same metric name: samples of a
 * family must be one group, so devices are the inner loop.
 */
static void metrics_fields(const struct fsh_host *h, struct fsm *m,
			   enum fsh_file file, const struct fsh_field *f,
			   size_t n)
{
	size_t first, i, d;
	uint64_t v;

	for (first = 0; first < n; first = i) {
		for (i = first + 1; i < n && !strcmp(f[i].metric,
						     f[first].metric); i++)
			;
		fsm_family(m, f[first].metric, f[first].type, f[first].help);
		for (d = 0; d < h->nr_devices; d++) {
			const struct fsh_device *dev = &h->devices[d];
			size_t k;

			for (k = first; k < i; k++) {
				struct fsm_label l[] = {
					{ "device", dev->name },
					{ "state", f[k].state },
				};

				if (!field_u64(dev, file, f[k].key, &v))
					continue;
				fsm_u64(m, l, f[k].state ? 2 : 1, v);
			}
		}
	}
}

/* A one-number file per device, times @mul, divided by @div. */
static void metrics_file_value(const struct fsh_host *h, struct fsm *m,
			       enum fsh_file file, const char *name,
			       const char *help, double mul, double div)
{
	size_t d;
	uint64_t v;

	fsm_family(m, name, FSM_GAUGE, help);
	for (d = 0; d < h->nr_devices; d++) {
		struct fsm_label l = { "device", h->devices[d].name };
		const char *text = file == FSH_NR_FILES ?
			h->devices[d].size : h->devices[d].file[file];

		if (fsh_file_u64(text, &v))
			fsm_double(m, &l, 1, (double)v * mul / div);
	}
}

/*
 * 1 for a device whose host id is random at module load: donors that
 * know hosts by id will not know this one after a reboot.  No sample
 * when the module does not say where the id came from.
 */
static void metrics_host_id(const struct fsh_host *h, struct fsm *m)
{
	char source[16];
	size_t d;

	fsm_family(m, "farswap_host_host_id_random", FSM_GAUGE,
		   "1 if the device's host id is random at module load (no /etc/farswap/hostid): it changes at the next load.");
	for (d = 0; d < h->nr_devices; d++) {
		struct fsm_label l = { "device", h->devices[d].name };
		const char *s = file_word(h->devices[d].file[FSH_HOST_ID_SOURCE],
					  source, sizeof(source));

		if (s)
			fsm_u64(m, &l, 1, !strcmp(s, "random"));
	}
}

static void metrics_swap(const struct fsh_host *h, struct fsm *m)
{
	size_t d;

	fsm_family(m, "farswap_host_swap_active", FSM_GAUGE,
		   "1 if the device is an active swap area.");
	for (d = 0; d < h->nr_devices; d++) {
		struct fsm_label l = { "device", h->devices[d].name };

		fsm_u64(m, &l, 1, h->devices[d].swap_active);
	}
	fsm_family(m, "farswap_host_swap_used_bytes", FSM_GAUGE,
		   "Swap space in use on the device.");
	for (d = 0; d < h->nr_devices; d++) {
		struct fsm_label l = { "device", h->devices[d].name };

		if (h->devices[d].swap_active)
			fsm_u64(m, &l, 1, h->devices[d].swap_used_bytes);
	}
}

/* Without the latency file the families have no samples. */
static void metrics_latency(const struct fsh_host *h, struct fsm *m)
{
	size_t d, i, p;
	uint64_t v;

	fsm_family(m, "farswap_host_latency_samples_total", FSM_COUNTER,
		   "Requests measured in the device's latency histograms.");
	for (d = 0; d < h->nr_devices; d++)
		for (i = 0; i < ARRAY_SIZE(directions); i++) {
			const char *line = fsh_latency(&h->devices[d],
						       LATENCY_DEVICE,
						       directions[i]);
			struct fsm_label l[] = {
				{ "device", h->devices[d].name },
				{ "op", directions[i] },
			};

			if (line && fsh_kv_u64(line, "count", &v))
				fsm_u64(m, l, 2, v);
		}
	fsm_family(m, "farswap_host_latency_seconds", FSM_GAUGE,
		   "Request latency percentile since attach (an upper bound, within 12.5%).");
	for (d = 0; d < h->nr_devices; d++)
		for (i = 0; i < ARRAY_SIZE(directions); i++) {
			const char *line = fsh_latency(&h->devices[d],
						       LATENCY_DEVICE,
						       directions[i]);

			for (p = 0; line && p < ARRAY_SIZE(percentiles); p++) {
				struct fsm_label l[] = {
					{ "device", h->devices[d].name },
					{ "op", directions[i] },
					{ "quantile", percentiles[p].quantile },
				};

				if (fsh_kv_u64(line, percentiles[p].key, &v))
					fsm_double(m, l, 3, (double)v / 1e6);
			}
		}
}

/* What visit_donors() calls with each donor; @addr is its address. */
typedef void donor_sample_fn(struct fsm *m, const struct fsh_device *dev,
			     const struct fsh_donor *d, const char *addr,
			     const void *arg);

/*
 * Calls @fn for every donor of every device, but one whose address could
 * not be read: the address is what tells its samples apart.
 */
static void visit_donors(const struct fsh_host *h, donor_sample_fn *fn,
			 struct fsm *m, const void *arg)
{
	size_t d, i;

	for (d = 0; d < h->nr_devices; d++) {
		const struct fsh_device *dev = &h->devices[d];

		for (i = 0; i < dev->nr_donors; i++) {
			const struct fsh_donor *dn = &dev->donors[i];
			const char *addr = fsh_donor_text(dn, FSH_DONOR_ADDRESS);

			if (addr)
				fn(m, dev, dn, addr, arg);
		}
	}
}

static void donor_state_sample(struct fsm *m, const struct fsh_device *dev,
			       const struct fsh_donor *d, const char *addr,
			       const void *arg)
{
	const char *state = fsh_donor_text(d, FSH_DONOR_STATE);
	struct fsm_label l[] = {
		{ "device", dev->name }, { "donor", addr }, { "state", state },
	};

	(void)arg;
	if (state)
		fsm_u64(m, l, 3, 1);
}

/* 1 with the reason as a label, for a donor that is not live. */
static void donor_error_sample(struct fsm *m, const struct fsh_device *dev,
			       const struct fsh_donor *d, const char *addr,
			       const void *arg)
{
	const char *state = fsh_donor_text(d, FSH_DONOR_STATE);
	const char *error = fsh_donor_text(d, FSH_DONOR_LAST_ERROR);
	struct fsm_label l[] = {
		{ "device", dev->name }, { "donor", addr }, { "error", error },
	};

	(void)arg;
	if (error && (!state || strcmp(state, "live")))
		fsm_u64(m, l, 3, 1);
}

static void donor_field_sample(struct fsm *m, const struct fsh_device *dev,
			       const struct fsh_donor *d, const char *addr,
			       const void *arg)
{
	struct fsm_label l[] = { { "device", dev->name }, { "donor", addr } };
	uint64_t v;

	if (donor_field_u64(d, arg, &v))
		fsm_u64(m, l, 2, v);
}

static void donor_latency_count_sample(struct fsm *m,
				       const struct fsh_device *dev,
				       const struct fsh_donor *d,
				       const char *addr, const void *arg)
{
	uint64_t v;
	size_t i;

	(void)d;
	(void)arg;
	for (i = 0; i < ARRAY_SIZE(directions); i++) {
		const char *line = fsh_latency(dev, addr, directions[i]);
		struct fsm_label l[] = {
			{ "device", dev->name }, { "donor", addr },
			{ "op", directions[i] },
		};

		if (line && fsh_kv_u64(line, "count", &v))
			fsm_u64(m, l, 3, v);
	}
}

static void donor_latency_sample(struct fsm *m, const struct fsh_device *dev,
				 const struct fsh_donor *d, const char *addr,
				 const void *arg)
{
	uint64_t v;
	size_t i, p;

	(void)d;
	(void)arg;
	for (i = 0; i < ARRAY_SIZE(directions); i++) {
		const char *line = fsh_latency(dev, addr, directions[i]);

		for (p = 0; line && p < ARRAY_SIZE(percentiles); p++) {
			struct fsm_label l[] = {
				{ "device", dev->name }, { "donor", addr },
				{ "op", directions[i] },
				{ "quantile", percentiles[p].quantile },
			};

			if (fsh_kv_u64(line, percentiles[p].key, &v))
				fsm_double(m, l, 4, (double)v / 1e6);
		}
	}
}

static void metrics_donors(const struct fsh_host *h, struct fsm *m)
{
	size_t i;

	fsm_family(m, "farswap_host_donor_state", FSM_GAUGE,
		   "1 for the donor connection's state (new, connecting, live, failed, reconnecting, deleting).");
	visit_donors(h, donor_state_sample, m, NULL);
	fsm_family(m, "farswap_host_donor_last_error_info", FSM_GAUGE,
		   "1 for a donor that is not live, with why its last connect or session failed as a label.");
	visit_donors(h, donor_error_sample, m, NULL);
	for (i = 0; i < ARRAY_SIZE(donor_fields); i++) {
		fsm_family(m, donor_fields[i].metric, donor_fields[i].type,
			   donor_fields[i].help);
		visit_donors(h, donor_field_sample, m, &donor_fields[i]);
	}
	fsm_family(m, "farswap_host_donor_latency_samples_total", FSM_COUNTER,
		   "Requests measured in the donor's latency histograms.");
	visit_donors(h, donor_latency_count_sample, m, NULL);
	fsm_family(m, "farswap_host_donor_latency_seconds", FSM_GAUGE,
		   "Request latency percentile on this donor (an upper bound, within 12.5%).");
	visit_donors(h, donor_latency_sample, m, NULL);
}

static void metrics_module(const struct fsh_host *h, const char *ctl_version,
			   struct fsm *m)
{
	unsigned int pmin, pmax;
	char module[32], a[16], b[16];

	fsm_family(m, "farswap_host_module_loaded", FSM_GAUGE,
		   "1 if farswap.ko is loaded.");
	fsm_u64(m, NULL, 0, h->module_loaded);
	if (parse_version(h->version, module, sizeof(module), &pmin, &pmax)) {
		struct fsm_label l[] = {
			{ "version", module }, { "protocol_min", a },
			{ "protocol_max", b },
		};

		snprintf(a, sizeof(a), "%u", pmin);
		snprintf(b, sizeof(b), "%u", pmax);
		fsm_family(m, "farswap_host_module_info", FSM_GAUGE,
			   "farswap.ko's version and protocol versions, as labels.");
		fsm_u64(m, l, 3, 1);
	}
	if (ctl_version) {
		struct fsm_label l = { "version", ctl_version };

		fsm_family(m, "farswap_host_farswapctl_info", FSM_GAUGE,
			   "The version of farswapctl that wrote the metrics, as a label.");
		fsm_u64(m, &l, 1, 1);
	}
	fsm_family(m, "farswap_host_devices", FSM_GAUGE,
		   "farswap devices attached.");
	fsm_u64(m, NULL, 0, h->nr_devices);
}

void fsh_metrics(const struct fsh_host *h, const char *ctl_version,
		 struct fsm *m)
{
	metrics_module(h, ctl_version, m);
	/* FSH_NR_FILES stands for /sys/block/NAME/size. */
	metrics_file_value(h, m, FSH_NR_FILES, "farswap_host_device_size_bytes",
			   "Size of the device.", 512, 1);
	metrics_file_value(h, m, FSH_SLAB_SIZE, "farswap_host_slab_size_bytes",
			   "Bytes per donor slab.", 1, 1);
	metrics_file_value(h, m, FSH_SYNC_IO, "farswap_host_sync_io",
			   "1 if the device is marked synchronous (sync_io).", 1, 1);
	metrics_file_value(h, m, FSH_IO_TIMEOUT_MS,
			   "farswap_host_io_timeout_seconds",
			   "Time without progress after which a donor is failed.",
			   1, 1000);
	metrics_host_id(h, m);
	metrics_swap(h, m);
	metrics_fields(h, m, FSH_SLABS, slabs_fields,
		       ARRAY_SIZE(slabs_fields));
	metrics_fields(h, m, FSH_CHUNKS, chunks_fields,
		       ARRAY_SIZE(chunks_fields));
	metrics_fields(h, m, FSH_STAT, stat_fields, ARRAY_SIZE(stat_fields));
	metrics_fields(h, m, FSH_REPLICAS, replicas_fields,
		       ARRAY_SIZE(replicas_fields));
	metrics_fields(h, m, FSH_INTEGRITY, integrity_fields,
		       ARRAY_SIZE(integrity_fields));
	metrics_fields(h, m, FSH_STAGE, stage_fields,
		       ARRAY_SIZE(stage_fields));
	metrics_latency(h, m);
	metrics_donors(h, m);
}

/* --- text (farswapctl status) --- */

/*
 * "key=value" of a line of space-separated pairs, 0 if absent.  The text
 * shows what cannot be read as 0 (here, in donor_num() and in
 * stat_num()); the readers (devstat.h) say whether they could, which the
 * JSON document needs for its nulls.
 */
static unsigned long long kv_num(const char *line, const char *key)
{
	uint64_t v;

	return fsh_kv_u64(line, key, &v) ? v : 0;
}

static void human_bytes(unsigned long long b, char *out, size_t len)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void human_us(unsigned long long us, char *out, size_t len)
{
	if (us >= 10000)
		snprintf(out, len, "%.1f ms", us / 1000.0);
	else
		snprintf(out, len, "%llu us", us);
}

/* "yes, N used, priority P" if the device is an active swap area, else "no". */
static void swap_state(const struct fsh_device *dev, char *out, size_t len)
{
	char u[32];

	if (!dev->swap_active) {
		snprintf(out, len, "no");
		return;
	}
	human_bytes(dev->swap_used_bytes, u, sizeof(u));
	snprintf(out, len, "yes, %s used, priority %d", u, dev->swap_priority);
}

/* One direction of a latency line ("count=N p50_us=N ..."), or " -". */
static void text_latency(FILE *out, const char *label, const char *line)
{
	char a[32], b[32];

	if (!kv_num(line, "count")) {
		fprintf(out, " %s -", label);
		return;
	}
	human_us(kv_num(line, "p50_us"), a, sizeof(a));
	human_us(kv_num(line, "p99_us"), b, sizeof(b));
	fprintf(out, " %s p50 %s p99 %s", label, a, b);
}

/* A donor's number, 0 if absent. */
static unsigned long long donor_num(const struct fsh_donor *d,
				    const char *key)
{
	uint64_t v;

	return fsh_donor_u64(d, key, &v) ? v : 0;
}

/*
 * A number of the device's stat, 0 if absent: requests and bytes are the
 * block layer's, the rest farswap/stat's.
 */
static unsigned long long stat_num(const struct fsh_device *dev,
				   const char *key)
{
	uint64_t v;

	return fsh_stat_u64(dev, key, &v) ? v : 0;
}

/*
 * A run of numbers of a text line: each field by its key, in the order
 * shown, with what goes before it; the words come from the field.
 */
struct text_item {
	const char *sep;
	const char *key;
};

static const struct text_item io_items[] = {
	{ "", "reads" }, { " ", "read_bytes" }, { ", ", "writes" },
	{ " ", "write_bytes" }, { ", ", "zero_reads" }, { ", ", "discards" },
	{ ", ", "errors" },
};

static const struct text_item placement_items[] = {
	{ "", "binds" }, { ", ", "migrations" }, { ", ", "bind_failures" },
	{ "; ", "slab_allocs" }, { ", ", "releases" }, { "; ", "lost_pages" },
};

static const struct text_item donor_items[] = {
	{ "", "reads" }, { " ", "read_bytes" }, { ", ", "writes" },
	{ " ", "write_bytes" }, { ", ", "errors" }, { ", ", "reconnects" },
	{ ", ", "resumed" },
};

/* @sep, then "@v @text", or "(@v as bytes)" for TEXT_BYTES. */
static void text_number(FILE *out, const char *sep, const char *text,
			unsigned long long v)
{
	char bytes[32];

	fputs(sep, out);
	if (!text) {
		fputs("?", out);	/* a field the text has no words for */
	} else if (!strcmp(text, TEXT_BYTES)) {
		human_bytes(v, bytes, sizeof(bytes));
		fprintf(out, "(%s)", bytes);
	} else {
		fprintf(out, "%llu %s", v, text);
	}
}

/*
 * @items of @d's donor_fields, or of @dev's stat_fields when @d is NULL.
 * An item whose key is not in the table shows as "?", never silently.
 */
static void text_items(FILE *out, const struct fsh_device *dev,
		       const struct fsh_donor *d,
		       const struct text_item *items, size_t n)
{
	size_t i, f;

	for (i = 0; i < n; i++) {
		const char *key = items[i].key, *words = NULL;

		if (d) {
			for (f = 0; f < ARRAY_SIZE(donor_fields); f++)
				if (!strcmp(donor_fields[f].key, key))
					words = donor_fields[f].text;
		} else {
			for (f = 0; f < ARRAY_SIZE(stat_fields); f++)
				if (!strcmp(stat_fields[f].key, key))
					words = stat_fields[f].text;
		}
		text_number(out, items[i].sep, words,
			    d ? donor_num(d, key) : stat_num(dev, key));
	}
}

static void text_donor(FILE *out, const struct fsh_device *dev,
		       const struct fsh_donor *d)
{
	const char *addr = fsh_donor_text(d, FSH_DONOR_ADDRESS) ?: "?";
	const char *state = fsh_donor_text(d, FSH_DONOR_STATE);
	const char *error = fsh_donor_text(d, FSH_DONOR_LAST_ERROR);

	/* An empty domain: the donor has not told it yet. */
	fprintf(out, "  donor %s: %s, domain %s, %llu slabs here (donor has %llu of %llu free); ",
		addr, state ?: "?",
		d->file[FSH_DONOR_DOMAIN] ?
			(fsh_donor_text(d, FSH_DONOR_DOMAIN) ?: "-") : "?",
		donor_num(d, "slabs"), donor_num(d, "free_slabs"),
		donor_num(d, "total_slabs"));
	text_items(out, dev, d, donor_items, ARRAY_SIZE(donor_items));
	fputc('\n', out);
	/* Why a donor is not live: a wrong key, a stopped farswapd, a dark link. */
	if (error && (!state || strcmp(state, "live")))
		fprintf(out, "   last error: %s\n", error);
	if (!dev->latency)
		return;
	fprintf(out, "   ");
	text_latency(out, "read", fsh_latency(dev, addr, "read"));
	text_latency(out, "write", fsh_latency(dev, addr, "write"));
	fprintf(out, "\n");
}

/*
 * The identity the device shows donors and where it came from.  A random
 * one is said to be: donors that know hosts by id (host-keys,
 * allowed-hosts id:, the per-host cap) will not know this host after the
 * module's next load.  Nothing from a module without the files.
 */
static void text_host_id(FILE *out, const struct fsh_device *dev)
{
	char id[48], source[16];
	const char *i = file_word(dev->file[FSH_HOST_ID], id, sizeof(id));
	const char *s = file_word(dev->file[FSH_HOST_ID_SOURCE], source,
				  sizeof(source));

	if (!i)
		return;
	if (!s)
		fprintf(out, "  host id: %s\n", i);
	else if (!strcmp(s, "attach"))
		fprintf(out, "  host id: %s (given at attach)\n", i);
	else if (!strcmp(s, "module"))
		fprintf(out, "  host id: %s (the module's host_id parameter)\n",
			i);
	else if (!strcmp(s, "random"))
		fprintf(out, "  host id: %s (random, made at module load)\n"
			"  warning: the host id changes at the module's next load: donors that know hosts by id (host-keys, allowed-hosts id:) will not know this one after a reboot (put a UUID in /etc/farswap/hostid, or attach --host-id)\n",
			i);
	else
		fprintf(out, "  host id: %s (%s)\n", i, s);
}

/*
 * The text of one device, from what fsh_read() read: the same as the
 * JSON document's and the metrics'.  Latency is in debugfs, which only root
 * reads and which may not be mounted: without it the rest is shown, and
 * the latency lines are left out.
 */
static int text_device(FILE *out, const struct fsh_device *dev)
{
	const char *const *f = (const char *const *)dev->file;
	const char *stat = f[FSH_STAT], *slabs = f[FSH_SLABS];
	const char *chunks = f[FSH_CHUNKS], *slab_size = f[FSH_SLAB_SIZE];
	const char *sync_io = f[FSH_SYNC_IO], *integrity = f[FSH_INTEGRITY];
	const char *encrypt = f[FSH_ENCRYPT], *auth = f[FSH_AUTH];
	const char *stage = f[FSH_STAGE];
	const char *replicas = f[FSH_REPLICAS];
	char sz[32], ss[32], swap[96], policy[32];
	const char *name = dev->name;
	uint64_t sectors, slab_bytes;
	size_t i;

	if (!stat || !slabs || !chunks || !slab_size || !dev->size) {
		fprintf(stderr, "farswapctl: %s: not a farswap device\n", name);
		return 1;
	}
	if (!fsh_file_u64(dev->size, &sectors))
		sectors = 0;
	if (!fsh_file_u64(slab_size, &slab_bytes))
		slab_bytes = 0;
	human_bytes(sectors * 512, sz, sizeof(sz));
	human_bytes(slab_bytes, ss, sizeof(ss));
	swap_state(dev, swap, sizeof(swap));
	fprintf(out, "%s: %s, %llu of %llu chunks (2 MiB) bound in %llu donor slabs of %s; swap: %s; sync_io %s\n",
		name, sz, kv_num(chunks, "bound"), kv_num(chunks, "total"),
		kv_num(slabs, "held"), ss, swap,
		sync_io && sync_io[0] == '1' ? "on" : "off");
	fputs("  I/O: ", out);
	text_items(out, dev, NULL, io_items, ARRAY_SIZE(io_items));
	fputs("\n  placement: ", out);
	text_items(out, dev, NULL, placement_items,
		   ARRAY_SIZE(placement_items));
	fputc('\n', out);
	if (replicas && kv_num(replicas, "replicas") <= 1) {
		fprintf(out, "  replicas: 1: no redundancy, a donor that dies takes its pages (%llu lost so far)\n",
			kv_num(replicas, "lost_pages"));
	} else if (replicas) {
		char copied[32];

		human_bytes(kv_num(replicas, "repair_bytes"), copied,
			    sizeof(copied));
		unsigned long long doms = kv_num(replicas, "domains");

		snprintf(policy, sizeof(policy), "%.*s",
			 (int)strcspn(f[FSH_READ_POLICY] ?: "", "\n"),
			 f[FSH_READ_POLICY] ?: "");
		fprintf(out, "  replicas: %llu per chunk, %llu failure domain%s, reads %s; %llu chunks degraded; %llu repaired (%s), %llu repairs failed; %llu reads failed over, %llu damaged replicas healed; %llu pages lost\n",
			kv_num(replicas, "replicas"), doms, doms == 1 ? "" : "s",
			*policy ? policy : "?",
			kv_num(replicas, "degraded"),
			kv_num(replicas, "repaired"), copied,
			kv_num(replicas, "repair_failures"),
			kv_num(replicas, "failovers"), kv_num(replicas, "heals"),
			kv_num(replicas, "lost_pages"));
		if (kv_num(replicas, "colocated"))
			fprintf(out, "  warning: %llu chunks have replicas in one failure domain (one moves out when another domain has room; %llu moved so far)\n",
				kv_num(replicas, "colocated"),
				kv_num(replicas, "spread"));
	}
	if (integrity) {
		char alg[32], tb[32];

		human_bytes(kv_num(integrity, "table_bytes"), tb, sizeof(tb));
		fprintf(out, "  integrity: %s, %llu pages checked, %llu failed their check; %s of host memory (%llu bytes per page)\n",
			fsh_kv_word(integrity, "alg", alg, sizeof(alg)) ?: "?",
			kv_num(integrity, "checked"),
			kv_num(integrity, "mismatches"), tb,
			kv_num(integrity, "bytes_per_page"));
	}
	if (encrypt) {
		char buf[32], bb[32];
		const char *alg = fsh_kv_word(encrypt, "alg", buf,
					      sizeof(buf)) ?: "off";

		human_bytes(kv_num(encrypt, "bounce_bytes"), bb, sizeof(bb));
		if (strcmp(alg, "off"))
			fprintf(out, "  encryption: %s, pages sealed on this host, donors hold ciphertext; %s of write bounce buffers\n",
				alg, bb);
		else
			fprintf(out, "  encryption: off: donors hold what is written to the device as it is written (--encrypt, or dm-crypt over the device, keeps it from them)\n");
	}
	if (stage && kv_num(stage, "slots")) {
		char sb[32];

		human_bytes(kv_num(stage, "bytes"), sb, sizeof(sb));
		fprintf(out, "  staging: %llu slots of %llu KiB per write queue, %s of host memory, %llu in use; %llu writes staged, %llu reads served from it, %llu writes found it full, %llu sent again, %llu lost\n",
			kv_num(stage, "slots"), kv_num(stage, "slot_bytes") >> 10,
			sb, kv_num(stage, "used"), kv_num(stat, "staged"),
			kv_num(stat, "stage_reads"), kv_num(stat, "stage_full"),
			kv_num(stat, "stage_retries"),
			kv_num(stat, "stage_lost"));
	} else if (stage) {
		fprintf(out, "  staging: off: every swap-out waits for its donors (--stage-kb)\n");
	}
	if (auth) {
		char alg[32];

		const char *how = fsh_kv_word(auth, "auth", alg, sizeof(alg));

		if (how && !strcmp(how, "none"))
			fprintf(out, "  auth: none: donors are not authenticated (attached with insecure_no_auth): anyone answering at their addresses gets this host's pages\n");
		else if (kv_num(auth, "pinned") > 0)
			fprintf(out, "  auth: %s, donors pinned: each proves one of %llu donor key%s\n",
				how ?: "?", kv_num(auth, "pinned"),
				kv_num(auth, "pinned") == 1 ? "" : "s");
		else
			fprintf(out, "  auth: %s, donors not pinned: any holder of this host's key could answer as a donor (--donor-key-file pins them)\n",
				how ?: "?");
	}
	text_host_id(out, dev);
	if (dev->latency) {
		fprintf(out, "  latency:");
		text_latency(out, "read", fsh_latency(dev, "device", "read"));
		text_latency(out, "write", fsh_latency(dev, "device", "write"));
		fprintf(out, "\n");
	}
	for (i = 0; i < dev->nr_donors; i++)
		text_donor(out, dev, &dev->donors[i]);
	return 0;
}

int fsh_text(const struct fsh_host *h, FILE *out)
{
	size_t i;
	int ret = 0;

	if (!h->nr_devices)
		fprintf(out, "no farswap devices\n");
	for (i = 0; i < h->nr_devices; i++)
		ret |= text_device(out, &h->devices[i]);
	return ret;
}

/* --- health (farswapctl status --check) --- */

/* One device's health, with its reasons on one line to @out. */
static enum fsh_health check_device(const struct fsh_device *dev, FILE *out)
{
	enum fsh_health worst = FSH_HEALTHY;
	unsigned long long lost, degraded;
	size_t i, live = 0;
	const char *sep = ": ";

	fprintf(out, "%s", dev->name);
	for (i = 0; i < dev->nr_donors; i++) {
		const struct fsh_donor *d = &dev->donors[i];
		const char *state = fsh_donor_text(d, FSH_DONOR_STATE);
		const char *error = fsh_donor_text(d, FSH_DONOR_LAST_ERROR);

		if (state && !strcmp(state, "live")) {
			live++;
			continue;
		}
		fprintf(out, "%sdonor %s %s%s%s%s", sep,
			fsh_donor_text(d, FSH_DONOR_ADDRESS) ?: "?",
			state ?: "(no state)", error ? " (" : "", error ?: "",
			error ? ")" : "");
		sep = "; ";
		worst = FSH_DEGRADED;
	}
	if (!live) {
		fprintf(out, "%sno donor live", sep);
		sep = "; ";
		worst = FSH_FAILING;
	}
	degraded = kv_num(dev->file[FSH_REPLICAS], "degraded");
	if (degraded) {
		fprintf(out, "%s%llu chunks short of a replica or with damaged pages",
			sep, degraded);
		sep = "; ";
		if (worst < FSH_DEGRADED)
			worst = FSH_DEGRADED;
	}
	lost = kv_num(dev->file[FSH_STAT], "lost_pages");
	if (lost) {
		fprintf(out, "%s%llu pages lost", sep, lost);
		worst = FSH_FAILING;
	}
	fprintf(out, " -> %s\n", worst == FSH_HEALTHY ? "healthy" :
		worst == FSH_DEGRADED ? "degraded" : "failing");
	return worst;
}

enum fsh_health fsh_check(const struct fsh_host *h, FILE *out)
{
	enum fsh_health worst = FSH_HEALTHY, one;
	size_t i;

	if (!h->module_loaded) {
		fprintf(out, "the farswap module is not loaded -> failing\n");
		return FSH_FAILING;
	}
	if (!h->nr_devices)
		fprintf(out, "no farswap devices\n");
	for (i = 0; i < h->nr_devices; i++) {
		const struct fsh_device *dev = &h->devices[i];

		if (!dev->file[FSH_STAT]) {
			fprintf(out, "%s: its farswap files cannot be read -> failing\n",
				dev->name);
			worst = FSH_FAILING;
			continue;
		}
		one = check_device(dev, out);
		if (one > worst)
			worst = one;
	}
	return worst;
}
