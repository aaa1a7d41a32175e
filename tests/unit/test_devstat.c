// SPDX-License-Identifier: GPL-2.0
/*
 * farswap devices from sysfs to JSON and Prometheus metrics, read from a
 * fake sysfs, debugfs and /proc tree made in a temporary directory:
 * values land under their documented names, requests and bytes come from
 * the block layer's stat file, donors come in index order, missing or
 * garbled values become null (never a made-up number), a latency file
 * debugfs does not give is no error, hostile text is escaped, and the
 * metrics are well-formed text format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "devstat.h"
#include "fake_sysfs.h"
#include "json_check.h"
#include "prom_check.h"

/* The JSON document of the tree, validated; caller frees. */
static char *status_json(const char *only, int *ret)
{
	struct fsh_host h;
	const char *text;
	char err[256], *copy;
	struct fsj j;
	size_t len;

	*ret = fsh_read(&h, fake_root, only, err, sizeof(err));
	if (*ret) {
		fsh_free(&h);
		return NULL;
	}
	fsj_init(&j);
	fsh_json(&h, "9.9", &j);
	text = fsj_finish(&j, &len);
	assert_non_null(text);
	assert_true(json_valid(text, len));
	copy = strdup(text);
	fsj_free(&j);
	fsh_free(&h);
	return copy;
}

static char *metrics_text(void)
{
	struct fsh_host h;
	const char *text;
	char err[256], *copy;
	struct fsm m;

	assert_int_equal(fsh_read(&h, fake_root, NULL, err, sizeof(err)), 0);
	fsm_init(&m);
	fsh_metrics(&h, "9.9", &m);
	text = fsm_finish(&m, NULL);
	assert_non_null(text);
	if (!prom_valid(text, err, sizeof(err)))
		fail_msg("metrics: %s", err);
	copy = strdup(text);
	fsm_free(&m);
	fsh_free(&h);
	return copy;
}

#define assert_has(text, s)						\
	do {								\
		if (!strstr((text), (s)))				\
			fail_msg("missing: %s\nin:\n%s", (s), (text));	\
	} while (0)

static void test_kv(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_true(fsh_kv_u64("a=1 bb=22 c=3\n", "bb", &v));
	assert_int_equal(v, 22);
	assert_true(fsh_kv_u64("a=1 bb=22 c=3\n", "a", &v));
	assert_int_equal(v, 1);
	assert_false(fsh_kv_u64("a=1 bb=22\n", "b", &v));
	assert_false(fsh_kv_u64("a=1 read_count=5\n", "count", &v));
	assert_false(fsh_kv_u64("a=-1\n", "a", &v));
	assert_false(fsh_kv_u64("a=12x\n", "a", &v));
	assert_false(fsh_kv_u64("a=\n", "a", &v));
	assert_false(fsh_kv_u64("a=99999999999999999999\n", "a", &v));
	/* Only the first line counts. */
	assert_false(fsh_kv_u64("a=1\nb=2\n", "b", &v));
}

/* A word value, where it stands and where it does not. */
static void test_kv_word(void **state)
{
	char w[8];

	(void)state;
	assert_string_equal(fsh_kv_word("alg=crc32c checked=5\n", "alg", w,
					sizeof(w)), "crc32c");
	assert_string_equal(fsh_kv_word("checked=5 alg=off\n", "alg", w,
					sizeof(w)), "off");
	/* Cut to fit. */
	assert_string_equal(fsh_kv_word("auth=hmac-sha256\n", "auth", w,
					sizeof(w)), "hmac-sh");
	assert_null(fsh_kv_word("xalg=1 alg_x=2\n", "alg", w, sizeof(w)));
	assert_null(fsh_kv_word("alg= checked=5\n", "alg", w, sizeof(w)));
	assert_null(fsh_kv_word("checked=5\nalg=off\n", "alg", w, sizeof(w)));
	assert_null(fsh_kv_word(NULL, "alg", w, sizeof(w)));
}

/* A device is a block device with the module's farswap/ directory. */
static void test_device_exists(void **state)
{
	(void)state;
	put_device("farswap3", NULL, 0);
	put_dir("sys/block/farswapx2");
	put_dir("sys/block/sda/farswap");
	assert_true(fsh_device_exists(fake_root, "farswap3"));
	assert_false(fsh_device_exists(fake_root, "farswap4"));
	assert_false(fsh_device_exists(fake_root, "farswapx2"));
	assert_false(fsh_device_exists(fake_root, "sda"));
}

static void test_json_document(void **state)
{
	char *doc;
	int ret;

	(void)state;
	make_host();
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"schema_version\": 1,");
	assert_has(doc, "\"farswapctl_version\": \"9.9\",");
	assert_has(doc, "\"loaded\": true,");
	assert_has(doc, "\"version\": \"0.1\",");
	assert_has(doc, "\"protocol_min\": 1,");
	assert_has(doc, "\"protocol_max\": 2,");
	assert_has(doc, "\"host_id\": \"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"");
	/* Sorted by number, not by name; sda is not ours. */
	assert_true(strstr(doc, "\"farswap2\"") < strstr(doc, "\"farswap10\""));
	assert_null(strstr(doc, "sda"));
	assert_has(doc, "\"size_bytes\": 536870912,");
	assert_has(doc, "\"slab_size\": 4194304,");
	assert_has(doc, "\"sync_io\": false,");
	assert_has(doc, "\"io_timeout_ms\": 10000,");
	assert_has(doc, "\"read_policy\": \"round-robin\",");
	assert_has(doc, "\"active\": true,\n        \"used_bytes\": 1048576,\n        \"priority\": 10");
	assert_has(doc, "\"active\": false,\n        \"used_bytes\": 0,\n        \"priority\": null");
	assert_has(doc, "\"held\": 2,\n        \"slots\": 4,\n        \"used\": 3,\n        \"reclaiming\": 1");
	assert_has(doc, "\"total\": 256,\n        \"unbound\": 250,\n        \"binding\": 1,\n        \"bound\": 3,\n        \"migrating\": 2");
	/* Requests and bytes from the block layer's stat, in their old place. */
	assert_has(doc, "\"stat\": {\n        \"reads\": 100,\n        \"writes\": 200,\n        \"discards\": 3,\n        \"read_bytes\": 409600,\n        \"write_bytes\": 819200,\n        \"zero_reads\": 5,\n        \"errors\": 0,");
	assert_has(doc, "\"write_throttled\": 7,");
	assert_has(doc, "\"write_inflight_bytes\": 8192,\n        \"staged\": 40,\n        \"stage_reads\": 6,\n        \"stage_full\": 3,\n        \"stage_retries\": 1,\n        \"stage_lost\": 0\n");
	assert_has(doc, "\"stage\": {\n        \"slots\": 64,\n        \"slot_bytes\": 65536,\n        \"bytes\": 10757120,\n        \"used\": 2\n      },");
	assert_has(doc, "\"read\": {\n          \"count\": 10,\n          \"p50_us\": 600,\n          \"p90_us\": 1500,\n          \"p99_us\": 2000,\n          \"p999_us\": 3000");
	assert_has(doc, "\"address\": \"10.0.0.2:7471\",\n          \"state\": \"live\",");
	assert_has(doc, "\"address\": \"[fe80::1]:7471\",\n          \"state\": \"reconnecting\",");
	assert_has(doc, "\"write\": {\n          \"count\": 20,\n          \"p50_us\": 700,\n          \"p90_us\": 1600,\n          \"p99_us\": 2100,\n          \"p999_us\": 3100\n");
	/* In index order: donors/0 first. */
	assert_true(strstr(doc, "\"10.0.0.2:7471\"") < strstr(doc, "\"[fe80::1]:7471\""));
	assert_has(doc, "\"slabs\": 1,\n          \"free_slabs\": 14,\n          \"total_slabs\": 16,\n          \"reads\": 4,");
	assert_has(doc, "\"reconnects\": 3,");
	assert_has(doc, "\"migrated_out\": 0,\n          \"revoked\": 2,\n          \"resumed\": 3,\n          \"resume_refused\": 0,\n          \"latency\": {");
	/* Each donor's lines of the latency file, with all four percentiles. */
	assert_has(doc, "\"read\": {\n              \"count\": 4,\n              \"p50_us\": 500,\n              \"p90_us\": 800,\n              \"p99_us\": 900,\n              \"p999_us\": 950\n");
	assert_has(doc, "\"write\": {\n              \"count\": 12,\n              \"p50_us\": 650,\n              \"p90_us\": 950,\n              \"p99_us\": 1050,\n              \"p999_us\": 1200\n");
	/* farswap10 has no donors: an empty list, not null. */
	assert_has(doc, "\"donors\": []");
	/* Failure domains: the replicas file, each donor's domain. */
	assert_has(doc, "\"replicas\": {\n        \"replicas\": 2,\n        \"degraded\": 1,");
	assert_has(doc, "\"colocated\": 3,\n        \"domains\": 2,\n        \"spread\": 7,\n        \"healed_pages\": 9\n");
	assert_has(doc, "\"state\": \"live\",\n          \"domain\": \"rackA\",");
	/* An empty domain file: not told yet. */
	assert_has(doc, "\"state\": \"reconnecting\",\n          \"domain\": null,");
	/* The check and the cipher, each an object of its file. */
	assert_has(doc, "\"integrity\": {\n        \"alg\": \"chacha20poly1305\",\n        \"checked\": 300,\n        \"mismatches\": 2,\n        \"bytes_per_page\": 20,\n        \"table_bytes\": 2621440\n      },");
	assert_has(doc, "\"encrypt\": {\n        \"alg\": \"chacha20poly1305\",\n        \"bounce_bytes\": 8388608\n      },");
	free(doc);
}

static void test_json_one_device(void **state)
{
	char *doc;
	int ret;

	(void)state;
	make_host();
	doc = status_json("farswap10", &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"name\": \"farswap10\"");
	assert_null(strstr(doc, "\"farswap2\""));
	free(doc);
	assert_null(status_json("farswap3", &ret));
	assert_int_equal(ret, -ENOENT);
	assert_null(status_json("sda", &ret));
	assert_int_equal(ret, -ENOENT);
}

/* A file gone, a value garbled, a key missing: null, never a number. */
static void test_json_missing_values(void **state)
{
	static const struct fake_donor donor = {
		.address = "10.0.0.2:7471\n", .state = "live\n",
		.slabs = "x\n", .stat = "reads=1 writes=-2\n",
	};
	char *doc;
	int ret;

	(void)state;
	put_file("sys/kernel/farswap/version", "garbage\n");
	put_device("farswap0", &donor, 1);
	put_file("sys/block/farswap0/farswap/stat", "zero_reads=-1 errors=5\n");
	put_file("sys/block/farswap0/farswap/sync_io", "yes\n");
	put_file("sys/block/farswap0/farswap/read_policy", "two words\n");
	put_file("sys/block/farswap0/farswap/integrity", "checked=x mismatches=1\n");
	/* No line of the donor's, a value missing, a line with no values. */
	put_latency("farswap0", "device read count=3 p50_us=\ndevice write\n");
	remove_file("sys/block/farswap0/farswap/encrypt");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"encrypt\": null,");
	assert_has(doc, "\"version\": null,");
	assert_has(doc, "\"protocol_min\": null,");
	assert_has(doc, "\"host_id\": null");
	assert_has(doc, "\"zero_reads\": null,\n        \"errors\": 5,");
	assert_has(doc, "\"lost_pages\": null,");
	assert_has(doc, "\"sync_io\": null,");
	assert_has(doc, "\"read_policy\": null,");
	assert_has(doc, "\"integrity\": {\n        \"alg\": null,\n        \"checked\": null,\n        \"mismatches\": 1,");
	assert_has(doc, "\"read\": {\n          \"count\": 3,\n          \"p50_us\": null,");
	assert_has(doc, "\"write\": {\n          \"count\": null,");
	/* No domain or free_slabs file, a garbled number: null. */
	assert_has(doc, "\"domain\": null,\n          \"last_error\": null,\n          \"slabs\": null,\n          \"free_slabs\": null,\n          \"total_slabs\": null,\n          \"reads\": 1,\n          \"writes\": null,");
	assert_has(doc, "\"read\": {\n              \"count\": null,");
	/* No /proc/swaps: not active. */
	assert_has(doc, "\"active\": false,");
	free(doc);
}

/* status's text of the tree; caller frees. */
static char *status_text(void)
{
	struct fsh_host h;
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(fsh_read(&h, fake_root, NULL, err, sizeof(err)), 0);
	fsh_text(&h, out);
	fsh_free(&h);
	assert_int_equal(fclose(out), 0);
	return text;
}

/*
 * Each device's host id and where it came from, in JSON, text and
 * metrics; a random one is called out.  A module without the files:
 * null, no text line, no sample.
 */
static void test_host_id(void **state)
{
	char *doc;
	int ret;

	(void)state;
	make_host();
	put_file("sys/block/farswap2/farswap/host_id",
		 "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	put_file("sys/block/farswap2/farswap/host_id_source", "attach\n");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"name\": \"farswap2\",");
	assert_has(doc, "\"read_policy\": \"round-robin\",\n      \"host_id\": \"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\",\n      \"host_id_source\": \"attach\",");
	assert_has(doc, "\"host_id\": \"6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83\",\n      \"host_id_source\": \"random\",");
	free(doc);
	doc = status_text();
	assert_has(doc, "  host id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 (given at attach)\n");
	assert_has(doc, "  host id: 6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83 (random, made at module load)\n  warning: the host id changes at the module's next load");
	/* Only the random one warns. */
	assert_null(strstr(strstr(doc, "warning: the host id") + 1,
			   "warning: the host id"));
	free(doc);
	doc = metrics_text();
	assert_has(doc, "# TYPE farswap_host_host_id_random gauge\n");
	assert_has(doc, "farswap_host_host_id_random{device=\"farswap2\"} 0\n");
	assert_has(doc, "farswap_host_host_id_random{device=\"farswap10\"} 1\n");
	free(doc);

	put_file("sys/block/farswap2/farswap/host_id_source", "module\n");
	doc = status_text();
	assert_has(doc, "  host id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 (the module's host_id parameter)\n");
	free(doc);

	remove_file("sys/block/farswap2/farswap/host_id");
	remove_file("sys/block/farswap2/farswap/host_id_source");
	doc = status_json("farswap2", &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"host_id\": null,\n      \"host_id_source\": null,");
	free(doc);
	doc = metrics_text();
	assert_null(strstr(doc, "farswap_host_host_id_random{device=\"farswap2\"}"));
	free(doc);
}

static void test_json_module_not_loaded(void **state)
{
	char *doc;
	int ret;

	(void)state;
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"loaded\": false,");
	assert_has(doc, "\"devices\": []");
	free(doc);
}

/* Text from the kernel is not trusted to be JSON- or label-safe. */
static void test_hostile_text(void **state)
{
	static const struct fake_donor evil = {
		.address = "evil\"\\\x02\xc3\n", .state = "li\"ve\n",
		.domain = "rack\"A\n", .slabs = "1\n",
	};
	char *doc;
	int ret;

	(void)state;
	put_file("sys/kernel/farswap/version", "module=0.1 protocol=1-1\n");
	put_file("sys/kernel/farswap/host_id", "a\"b\\c\x01\xff\n");
	put_device("farswap0", &evil, 1);
	put_latency("farswap0", "evil\"\\\x02\xc3 read count=1 p50_us=5\n");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"host_id\": \"a\\\"b\\\\c\\u0001\\ufffd\"");
	assert_has(doc, "\"address\": \"evil\\\"\\\\\\u0002\\ufffd\"");
	assert_has(doc, "\"state\": \"li\\\"ve\"");
	assert_has(doc, "\"domain\": \"rack\\\"A\"");
	free(doc);
	doc = metrics_text();
	assert_has(doc, "farswap_host_donor_slabs{device=\"farswap0\",donor=\"evil\\\"\\\\\x02\xc3\"} 1\n");
	assert_has(doc, "farswap_host_donor_latency_samples_total{device=\"farswap0\",donor=\"evil\\\"\\\\\x02\xc3\",op=\"read\"} 1\n");
	free(doc);
}

static void test_metrics(void **state)
{
	char *text;

	(void)state;
	make_host();
	text = metrics_text();
	assert_has(text, "# HELP farswap_host_reads_total ");
	assert_has(text, "# TYPE farswap_host_reads_total counter\n");
	assert_has(text, "# TYPE farswap_host_write_inflight_bytes gauge\n");
	assert_has(text, "farswap_host_module_loaded 1\n");
	assert_has(text, "farswap_host_module_info{version=\"0.1\",protocol_min=\"1\",protocol_max=\"2\"} 1\n");
	assert_has(text, "farswap_host_farswapctl_info{version=\"9.9\"} 1\n");
	assert_has(text, "farswap_host_devices 2\n");
	assert_has(text, "farswap_host_device_size_bytes{device=\"farswap2\"} 536870912\n");
	assert_has(text, "farswap_host_io_timeout_seconds{device=\"farswap2\"} 10\n");
	assert_has(text, "farswap_host_swap_active{device=\"farswap2\"} 1\n");
	assert_has(text, "farswap_host_swap_active{device=\"farswap10\"} 0\n");
	assert_has(text, "farswap_host_swap_used_bytes{device=\"farswap2\"} 1048576\n");
	assert_has(text, "farswap_host_reads_total{device=\"farswap2\"} 100\n");
	assert_has(text, "farswap_host_reads_total{device=\"farswap10\"} 100\n");
	assert_has(text, "farswap_host_writes_total{device=\"farswap2\"} 200\n");
	assert_has(text, "farswap_host_discards_total{device=\"farswap2\"} 3\n");
	assert_has(text, "farswap_host_read_bytes_total{device=\"farswap2\"} 409600\n");
	assert_has(text, "farswap_host_write_bytes_total{device=\"farswap2\"} 819200\n");
	assert_has(text, "farswap_host_zero_reads_total{device=\"farswap2\"} 5\n");
	assert_has(text, "farswap_host_write_inflight_bytes{device=\"farswap2\"} 8192\n");
	assert_has(text, "farswap_host_chunks{device=\"farswap2\",state=\"bound\"} 3\n");
	assert_has(text, "farswap_host_device_chunks{device=\"farswap2\"} 256\n");
	assert_has(text, "farswap_host_latency_samples_total{device=\"farswap2\",op=\"write\"} 20\n");
	assert_has(text, "farswap_host_latency_seconds{device=\"farswap2\",op=\"read\",quantile=\"0.99\"} 0.002\n");
	assert_has(text, "farswap_host_donor_state{device=\"farswap2\",donor=\"[fe80::1]:7471\",state=\"reconnecting\"} 1\n");
	assert_has(text, "farswap_host_donor_reconnects_total{device=\"farswap2\",donor=\"[fe80::1]:7471\"} 3\n");
	assert_has(text, "farswap_host_donor_latency_samples_total{device=\"farswap2\",donor=\"10.0.0.2:7471\",op=\"read\"} 4\n");
	assert_has(text, "farswap_host_donor_latency_seconds{device=\"farswap2\",donor=\"10.0.0.2:7471\",op=\"write\",quantile=\"0.5\"} 0.0006\n");
	assert_has(text, "farswap_host_donor_latency_seconds{device=\"farswap2\",donor=\"[fe80::1]:7471\",op=\"read\",quantile=\"0.999\"} 0.00099\n");
	assert_has(text, "farswap_host_donor_free_slabs{device=\"farswap2\",donor=\"10.0.0.2:7471\"} 14\n");
	assert_has(text, "farswap_host_donor_total_slabs{device=\"farswap2\",donor=\"10.0.0.2:7471\"} 16\n");
	assert_has(text, "farswap_host_donor_revoked_slabs_total{device=\"farswap2\",donor=\"10.0.0.2:7471\"} 2\n");
	free(text);
}

/*
 * debugfs not mounted, or not root: no latency file.  The rest is all
 * there; the latency numbers are null in JSON, and the latency families
 * have no samples.
 */
static void test_no_latency_file(void **state)
{
	char *doc;
	int ret;

	(void)state;
	make_host();
	remove_file("sys/kernel/debug/farswap/farswap2/latency");
	remove_file("sys/kernel/debug/farswap/farswap10/latency");
	doc = status_json("farswap2", &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"latency\": {\n        \"read\": {\n          \"count\": null,\n          \"p50_us\": null,\n          \"p90_us\": null,\n          \"p99_us\": null,\n          \"p999_us\": null\n        },\n        \"write\": {\n          \"count\": null,");
	assert_has(doc, "\"resume_refused\": 0,\n          \"latency\": {\n            \"read\": {\n              \"count\": null,");
	assert_has(doc, "\"state\": \"live\",");
	assert_has(doc, "\"reads\": 100,");
	assert_null(strstr(doc, "\"count\": 4"));
	free(doc);
	doc = metrics_text();
	/* A family without samples is not announced either. */
	assert_null(strstr(doc, "farswap_host_latency_seconds"));
	assert_null(strstr(doc, "farswap_host_latency_samples_total"));
	assert_null(strstr(doc, "farswap_host_donor_latency_seconds"));
	assert_null(strstr(doc, "farswap_host_donor_latency_samples_total"));
	assert_has(doc, "farswap_host_donor_reads_total{device=\"farswap2\",donor=\"10.0.0.2:7471\"} 4\n");
	free(doc);
}

/*
 * Donors by index as a number (donors/10 after donors/2), whatever order
 * the directory lists them in; entries that are not a donor's directory
 * are passed over.
 */
static void test_donor_order(void **state)
{
	static const struct fake_donor a = { .address = "10.0.0.1:7471\n" };
	static const struct fake_donor b = { .address = "10.0.0.2:7471\n" };
	static const struct fake_donor c = { .address = "10.0.0.3:7471\n" };
	const char *pa, *pb, *pc;
	char *doc;
	int ret;

	(void)state;
	put_device("farswap0", NULL, 0);
	put_donor("farswap0", 10, &c);
	put_donor("farswap0", 2, &b);
	put_donor("farswap0", 0, &a);
	put_file("sys/block/farswap0/donors/3", "not a directory\n");
	put_dir("sys/block/farswap0/donors/07");
	put_dir("sys/block/farswap0/donors/power");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	pa = strstr(doc, "\"10.0.0.1:7471\"");
	pb = strstr(doc, "\"10.0.0.2:7471\"");
	pc = strstr(doc, "\"10.0.0.3:7471\"");
	assert_non_null(pa);
	assert_true(pa < pb && pb < pc);
	/* Three donors, no more: a fourth would be an "address": null. */
	assert_null(strstr(doc, "\"address\": null"));
	free(doc);
}

/* No donors directory: null, not an empty list, and no donor samples. */
static void test_no_donors_dir(void **state)
{
	char cmd[256], *doc;
	int ret;

	(void)state;
	put_device("farswap0", NULL, 0);
	snprintf(cmd, sizeof(cmd), "rmdir '%s'/sys/block/farswap0/donors",
		 fake_root);
	assert_int_equal(system(cmd), 0);
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"donors\": null");
	free(doc);
	doc = metrics_text();
	assert_null(strstr(doc, "farswap_host_donor_state{"));
	free(doc);
}

/* The latency lines by scope and direction, matched whole. */
static void test_latency_lines(void **state)
{
	struct fsh_device dev;
	char text[] =
		"device read count=1\n"
		"device write count=2\n"
		"10.0.0.2:7471 read count=3\n"
		"10.0.0.2:74710 write count=4\n"
		"10.0.0.2:7471 write count=5";
	uint64_t v = 0;

	(void)state;
	memset(&dev, 0, sizeof(dev));
	assert_null(fsh_latency(&dev, "device", "read"));
	dev.latency = text;
	assert_true(fsh_kv_u64(fsh_latency(&dev, "device", "write"), "count", &v));
	assert_int_equal(v, 2);
	assert_true(fsh_kv_u64(fsh_latency(&dev, "10.0.0.2:7471", "read"), "count", &v));
	assert_int_equal(v, 3);
	/* Not the line of 10.0.0.2:74710; the last line has no newline. */
	assert_true(fsh_kv_u64(fsh_latency(&dev, "10.0.0.2:7471", "write"), "count", &v));
	assert_int_equal(v, 5);
	assert_null(fsh_latency(&dev, "10.0.0.2:747", "read"));
	assert_null(fsh_latency(&dev, "device", "rea"));
	assert_null(fsh_latency(&dev, "", "read"));
	assert_null(fsh_latency(&dev, NULL, "read"));
}

/*
 * No /sys/block/NAME/stat (or one that does not parse): requests and
 * bytes are null, their samples missing; farswap's own numbers stay.  A
 * module that still prints reads= in farswap/stat is not taken at its
 * word: the numbers are the block layer's or none.
 */
static void test_no_blk_stat(void **state)
{
	char *doc;
	int ret;

	(void)state;
	make_host();
	remove_file("sys/block/farswap2/stat");
	put_file("sys/block/farswap10/stat", "garbage\n");
	put_file("sys/block/farswap2/farswap/stat",
		 "reads=10 writes=20 discards=0 read_bytes=40960 write_bytes=81920 zero_reads=5 errors=0 binds=3\n");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"stat\": {\n        \"reads\": null,\n        \"writes\": null,\n        \"discards\": null,\n        \"read_bytes\": null,\n        \"write_bytes\": null,\n        \"zero_reads\": 5,\n        \"errors\": 0,\n        \"binds\": 3,\n        \"bind_failures\": null,");
	assert_null(strstr(doc, "\"reads\": 10,"));
	assert_null(strstr(doc, "\"reads\": 100,"));
	/* The rest of the device is all there. */
	assert_has(doc, "\"write_inflight_bytes\": 8192,\n");
	assert_has(doc, "\"size_bytes\": 536870912,");
	free(doc);
	doc = metrics_text();
	/* No device has them: the families are not announced either. */
	assert_null(strstr(doc, "farswap_host_reads_total"));
	assert_null(strstr(doc, "farswap_host_writes_total"));
	assert_null(strstr(doc, "farswap_host_discards_total"));
	assert_null(strstr(doc, "farswap_host_read_bytes_total"));
	assert_null(strstr(doc, "farswap_host_write_bytes_total"));
	assert_has(doc, "farswap_host_zero_reads_total{device=\"farswap2\"} 5\n");
	assert_has(doc, "farswap_host_zero_reads_total{device=\"farswap10\"} 5\n");
	assert_has(doc, "farswap_host_chunk_binds_total{device=\"farswap2\"} 3\n");
	assert_has(doc, "farswap_host_donor_reads_total{device=\"farswap2\",donor=\"10.0.0.2:7471\"} 4\n");
	free(doc);
}

/* The block layer's columns, by fsh_stat_u64() as farswapctl reads them. */
static void test_blk_columns(void **state)
{
	struct fsh_device dev;
	char farswap[] = "zero_reads=5 errors=1\n";
	/* Before Linux 4.18: 11 columns, no discards. */
	char old[] = "10 0 80 5 20 0 160 7 0 6 12\n";
	char garbled[] = "10 0 8x0 5 -20 0 160 7 0 6 12 1\n";
	/* 2^55 sectors are 2^64 bytes: too many to count. */
	char huge[] = "1 0 36028797018963968 0 2 0 36028797018963967 0 0 0 0 0\n";
	char tabs[] = "\t7\t0\t8\n", empty[] = "";
	char copy[256];
	uint64_t v = 0;

	(void)state;
	memset(&dev, 0, sizeof(dev));
	assert_false(fsh_stat_u64(&dev, "reads", &v));
	assert_false(fsh_stat_u64(&dev, "zero_reads", &v));
	dev.file[FSH_STAT] = farswap;
	snprintf(copy, sizeof(copy), "%s", blk_stat);
	dev.blk_stat = copy;
	assert_true(fsh_stat_u64(&dev, "reads", &v));
	assert_int_equal(v, 100);
	assert_true(fsh_stat_u64(&dev, "read_bytes", &v));
	assert_int_equal(v, 800 * 512);
	assert_true(fsh_stat_u64(&dev, "writes", &v));
	assert_int_equal(v, 200);
	assert_true(fsh_stat_u64(&dev, "write_bytes", &v));
	assert_int_equal(v, 1600 * 512);
	assert_true(fsh_stat_u64(&dev, "discards", &v));
	assert_int_equal(v, 3);
	assert_true(fsh_stat_u64(&dev, "errors", &v));
	assert_int_equal(v, 1);
	assert_false(fsh_stat_u64(&dev, "binds", &v));

	dev.blk_stat = old;
	assert_true(fsh_stat_u64(&dev, "write_bytes", &v));
	assert_int_equal(v, 160 * 512);
	assert_false(fsh_stat_u64(&dev, "discards", &v));

	/* A column that is no number is null; the others still count. */
	dev.blk_stat = garbled;
	assert_true(fsh_stat_u64(&dev, "reads", &v));
	assert_int_equal(v, 10);
	assert_false(fsh_stat_u64(&dev, "read_bytes", &v));
	assert_false(fsh_stat_u64(&dev, "writes", &v));
	assert_true(fsh_stat_u64(&dev, "discards", &v));
	assert_int_equal(v, 1);

	dev.blk_stat = huge;
	assert_false(fsh_stat_u64(&dev, "read_bytes", &v));
	assert_true(fsh_stat_u64(&dev, "write_bytes", &v));
	assert_true(v == UINT64_MAX - 511);

	dev.blk_stat = tabs;
	assert_true(fsh_stat_u64(&dev, "reads", &v));
	assert_int_equal(v, 7);
	assert_true(fsh_stat_u64(&dev, "read_bytes", &v));
	assert_int_equal(v, 8 * 512);
	assert_false(fsh_stat_u64(&dev, "writes", &v));

	dev.blk_stat = empty;
	assert_false(fsh_stat_u64(&dev, "reads", &v));
}

/* With nothing loaded the metrics still say so, well-formed. */
static void test_metrics_no_module(void **state)
{
	char *text;

	(void)state;
	text = metrics_text();
	assert_has(text, "farswap_host_module_loaded 0\n");
	assert_has(text, "farswap_host_devices 0\n");
	assert_null(strstr(text, "farswap_host_reads_total"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_kv_word),
		cmocka_unit_test_setup(test_device_exists, fake_root_clean),
		cmocka_unit_test_setup(test_json_document, fake_root_clean),
		cmocka_unit_test_setup(test_json_one_device, fake_root_clean),
		cmocka_unit_test_setup(test_json_missing_values, fake_root_clean),
		cmocka_unit_test_setup(test_json_module_not_loaded, fake_root_clean),
		cmocka_unit_test_setup(test_host_id, fake_root_clean),
		cmocka_unit_test_setup(test_hostile_text, fake_root_clean),
		cmocka_unit_test_setup(test_metrics, fake_root_clean),
		cmocka_unit_test_setup(test_metrics_no_module, fake_root_clean),
		cmocka_unit_test_setup(test_no_latency_file, fake_root_clean),
		cmocka_unit_test_setup(test_donor_order, fake_root_clean),
		cmocka_unit_test_setup(test_no_donors_dir, fake_root_clean),
		cmocka_unit_test_setup(test_no_blk_stat, fake_root_clean),
		cmocka_unit_test(test_latency_lines),
		cmocka_unit_test(test_blk_columns),
	};

	return cmocka_run_group_tests_name("devstat", tests, fake_root_make,
					 fake_root_remove);
}
