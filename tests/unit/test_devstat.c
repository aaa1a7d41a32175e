// SPDX-License-Identifier: GPL-2.0
/*
 * farswap devices from sysfs to JSON and Prometheus metrics, read from a
 * fake sysfs and /proc tree made in a temporary directory: values land
 * under their documented names, missing or garbled values become null
 * (never a made-up number), hostile text is escaped, and the metrics are
 * well-formed text format.
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
#include "json_check.h"
#include "prom_check.h"

static char root[] = "/tmp/fsh-test-XXXXXX";

/* Write @text to @rel under the root, making its directories. */
static void put_file(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_device(const char *name, const char *donors)
{
	char rel[128];

#define DEV(file, text)							\
	do {								\
		snprintf(rel, sizeof(rel), "sys/block/%s/farswap/%s",	\
			 name, file);					\
		put_file(rel, text);					\
	} while (0)
	snprintf(rel, sizeof(rel), "sys/block/%s/size", name);
	put_file(rel, "1048576\n");
	DEV("slab_size", "4194304\n");
	DEV("slabs", "held=2 slots=4 used=3 reclaiming=1\n");
	DEV("chunks", "total=256 unbound=250 binding=1 bound=3 migrating=2\n");
	DEV("stat", "reads=10 writes=20 discards=0 read_bytes=40960 write_bytes=81920 zero_reads=5 errors=0 binds=3 bind_failures=0 slab_allocs=2 releases=0 migrations=1 lost_pages=0 write_throttled=7 held=4 write_inflight_bytes=8192\n");
	DEV("latency", "read count=10 p50_us=600 p99_us=2000 p90_us=1500 p999_us=3000\nwrite count=20 p50_us=700 p99_us=2100 p90_us=1600 p999_us=3100\n");
	DEV("donors", donors);
	DEV("sync_io", "0\n");
	DEV("io_timeout_ms", "10000\n");
	DEV("read_policy", "round-robin\n");
	DEV("integrity", "alg=chacha20poly1305 checked=300 mismatches=2 bytes_per_page=20 table_bytes=2621440\n");
	DEV("encrypt", "alg=chacha20poly1305 bounce_bytes=8388608\n");
	DEV("replicas", "replicas=2 degraded=1 repaired=4 repair_bytes=8192 repair_failures=0 failovers=5 heals=0 lost_pages=0 colocated=3 domains=2 spread=7\n");
#undef DEV
}

static const char donors2[] =
	"10.0.0.2:7471 state=live slabs=1 free=14 total=16 reads=4 writes=8 read_bytes=16384 write_bytes=32768 errors=0 reconnects=1 migrated_out=0 read_count=4 read_p50_us=500 read_p99_us=900 write_count=8 write_p50_us=600 write_p99_us=1000 domain=rackA\n"
	"[fe80::1]:7471 state=reconnecting slabs=1 free=0 total=0 reads=6 writes=12 read_bytes=24576 write_bytes=49152 errors=2 reconnects=3 migrated_out=1 read_count=6 read_p50_us=550 read_p99_us=950 write_count=12 write_p50_us=650 write_p99_us=1050 domain=-\n";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* Start each test from an empty tree. */
static int clean(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys '%s'/proc", root, root);
	return system(cmd) ? -1 : 0;
}

static void make_host(void)
{
	put_file("sys/kernel/farswap/version", "module=0.1 protocol=1-2\n");
	put_file("sys/kernel/farswap/host_id",
		 "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	put_file("sys/block/sda/size", "100\n");	/* not ours */
	put_device("farswap10", "");
	put_device("farswap2", donors2);
	put_file("proc/swaps",
		 "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		 "/dev/sda2                               partition\t1000\t\t0\t\t-2\n"
		 "/dev/farswap2                           partition\t524284\t\t1024\t\t10\n");
}

/* The JSON document of the tree, validated; caller frees. */
static char *status_json(const char *only, int *ret)
{
	struct fsh_host h;
	const char *text;
	char err[256], *copy;
	struct fsj j;
	size_t len;

	*ret = fsh_read(&h, root, only, err, sizeof(err));
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

	assert_int_equal(fsh_read(&h, root, NULL, err, sizeof(err)), 0);
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
	assert_has(doc, "\"reads\": 10,");
	assert_has(doc, "\"write_throttled\": 7,");
	assert_has(doc, "\"write_inflight_bytes\": 8192\n");
	assert_has(doc, "\"read\": {\n          \"count\": 10,\n          \"p50_us\": 600,\n          \"p99_us\": 2000,\n          \"p90_us\": 1500,\n          \"p999_us\": 3000");
	assert_has(doc, "\"address\": \"10.0.0.2:7471\",\n          \"state\": \"live\",");
	assert_has(doc, "\"address\": \"[fe80::1]:7471\",\n          \"state\": \"reconnecting\",");
	assert_has(doc, "\"reconnects\": 3,");
	assert_has(doc, "\"write\": {\n              \"count\": 12,\n              \"p50_us\": 650,\n              \"p99_us\": 1050");
	/* farswap10 has no donors: an empty list, not null. */
	assert_has(doc, "\"donors\": []");
	/* Failure domains: the replicas file, each donor's domain. */
	assert_has(doc, "\"replicas\": {\n        \"replicas\": 2,\n        \"degraded\": 1,");
	assert_has(doc, "\"colocated\": 3,\n        \"domains\": 2,\n        \"spread\": 7\n");
	assert_has(doc, "\"state\": \"live\",\n          \"domain\": \"rackA\",");
	/* "-": not told yet. */
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
	char path[256], *doc;
	int ret;

	(void)state;
	put_file("sys/kernel/farswap/version", "garbage\n");
	put_device("farswap0", "10.0.0.2:7471 state=live slabs=x\n");
	put_file("sys/block/farswap0/farswap/stat", "reads=-1 writes=5\n");
	put_file("sys/block/farswap0/farswap/sync_io", "yes\n");
	put_file("sys/block/farswap0/farswap/read_policy", "two words\n");
	put_file("sys/block/farswap0/farswap/integrity", "checked=x mismatches=1\n");
	snprintf(path, sizeof(path), "%s/sys/block/farswap0/farswap/latency",
		 root);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/sys/block/farswap0/farswap/encrypt",
		 root);
	assert_int_equal(unlink(path), 0);
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"encrypt\": null,");
	assert_has(doc, "\"version\": null,");
	assert_has(doc, "\"protocol_min\": null,");
	assert_has(doc, "\"host_id\": null");
	assert_has(doc, "\"reads\": null,\n        \"writes\": 5,");
	assert_has(doc, "\"lost_pages\": null,");
	assert_has(doc, "\"sync_io\": null,");
	assert_has(doc, "\"read_policy\": null,");
	assert_has(doc, "\"integrity\": {\n        \"alg\": null,\n        \"checked\": null,\n        \"mismatches\": 1,");
	assert_has(doc, "\"read\": {\n          \"count\": null,");
	assert_has(doc, "\"slabs\": null,\n          \"free\": null,");
	/* No /proc/swaps: not active. */
	assert_has(doc, "\"active\": false,");
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
	char *doc;
	int ret;

	(void)state;
	put_file("sys/kernel/farswap/version", "module=0.1 protocol=1-1\n");
	put_file("sys/kernel/farswap/host_id", "a\"b\\c\x01\xff\n");
	put_device("farswap0",
		   "evil\"\\\x02\xc3 state=li\"ve slabs=1\n");
	doc = status_json(NULL, &ret);
	assert_int_equal(ret, 0);
	assert_has(doc, "\"host_id\": \"a\\\"b\\\\c\\u0001\\ufffd\"");
	assert_has(doc, "\"address\": \"evil\\\"\\\\\\u0002\\ufffd\"");
	assert_has(doc, "\"state\": \"li\\\"ve\"");
	free(doc);
	doc = metrics_text();
	assert_has(doc, "farswap_host_donor_slabs{device=\"farswap0\",donor=\"evil\\\"\\\\\x02\xc3\"} 1\n");
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
	assert_has(text, "farswap_host_reads_total{device=\"farswap2\"} 10\n");
	assert_has(text, "farswap_host_reads_total{device=\"farswap10\"} 10\n");
	assert_has(text, "farswap_host_chunks{device=\"farswap2\",state=\"bound\"} 3\n");
	assert_has(text, "farswap_host_device_chunks{device=\"farswap2\"} 256\n");
	assert_has(text, "farswap_host_latency_samples_total{device=\"farswap2\",op=\"write\"} 20\n");
	assert_has(text, "farswap_host_latency_seconds{device=\"farswap2\",op=\"read\",quantile=\"0.99\"} 0.002\n");
	assert_has(text, "farswap_host_donor_state{device=\"farswap2\",donor=\"[fe80::1]:7471\",state=\"reconnecting\"} 1\n");
	assert_has(text, "farswap_host_donor_reconnects_total{device=\"farswap2\",donor=\"[fe80::1]:7471\"} 3\n");
	assert_has(text, "farswap_host_donor_latency_samples_total{device=\"farswap2\",donor=\"10.0.0.2:7471\",op=\"read\"} 4\n");
	assert_has(text, "farswap_host_donor_latency_seconds{device=\"farswap2\",donor=\"10.0.0.2:7471\",op=\"write\",quantile=\"0.5\"} 0.0006\n");
	free(text);
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
		cmocka_unit_test_setup(test_json_document, clean),
		cmocka_unit_test_setup(test_json_one_device, clean),
		cmocka_unit_test_setup(test_json_missing_values, clean),
		cmocka_unit_test_setup(test_json_module_not_loaded, clean),
		cmocka_unit_test_setup(test_hostile_text, clean),
		cmocka_unit_test_setup(test_metrics, clean),
		cmocka_unit_test_setup(test_metrics_no_module, clean),
	};

	return cmocka_run_group_tests_name("devstat", tests, setup, teardown);
}
