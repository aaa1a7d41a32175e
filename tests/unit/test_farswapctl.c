// SPDX-License-Identifier: GPL-2.0
/*
 * farswapctl's command line: its main() runs in a child process, as if
 * from a shell, with what it prints and its exit status kept.  Every
 * command of the table is listed by --help and has its own --help (exit
 * 0, on stdout); the global -j/--json makes status print JSON and is
 * refused by the commands that print no status; every usage error exits
 * 2 and says so on stderr.  status's text and JSON and the metrics of a
 * fake host (fake_sysfs.c) are pinned, byte for byte, by the files in
 * golden/.  Nothing here reaches the module: the usage errors are caught
 * before farswapctl looks for it, and status and metrics read the fake
 * tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_sysfs.h"
#include "json_check.h"
#include "prom_check.h"

/* farswapctl.c whole, its statics in reach; its main() renamed. */
#define FARSWAP_VERSION "unit-test"
#define main farswapctl_main
#include "farswapctl.c"
#undef main

struct run {
	int status;		/* the exit status */
	char *out, *err;	/* what went to stdout and stderr */
};

static char *slurp(FILE *f)
{
	char *text;
	long len;

	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	text = calloc(1, len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, len, f), (size_t)len);
	fclose(f);
	return text;
}

/* farswapctl ARGS..., in a child: a usage error exit()s. */
static struct run run_ctl(const char *arg, ...)
{
	char *argv[16] = { "farswapctl" };
	FILE *out = tmpfile(), *err = tmpfile();
	struct run r = { 0 };
	int argc = 1, status;
	va_list ap;
	pid_t pid;

	assert_non_null(out);
	assert_non_null(err);
	va_start(ap, arg);
	for (; arg; arg = va_arg(ap, const char *)) {
		assert_true(argc < 15);
		argv[argc++] = (char *)arg;
	}
	va_end(ap);

	fflush(NULL);	/* or the child prints the parent's buffered lines */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fileno(out), STDOUT_FILENO);
		dup2(fileno(err), STDERR_FILENO);
		exit(farswapctl_main(argc, argv));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r.status = WEXITSTATUS(status);
	r.out = slurp(out);
	r.err = slurp(err);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* @r exited 0 and printed @want on stdout, nothing on stderr. */
static void assert_prints(struct run r, const char *want)
{
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, want);
	run_free(&r);
}

/* @r exited @status, printed nothing on stdout and @why on stderr. */
static void assert_refused(struct run r, int status, const char *why)
{
	assert_int_equal(r.status, status);
	assert_string_equal(r.out, "");
	if (!strstr(r.err, why))
		fail_msg("stderr says '%s', not '%s'", r.err, why);
	run_free(&r);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* --help and help: every command of the table, with its summary. */
static void test_help_lists_commands(void **state)
{
	const struct ctl_command *cmd;
	struct run help = run_ctl("--help", NULL);

	(void)state;
	assert_int_equal(help.status, 0);
	assert_string_equal(help.err, "");
	assert_true(starts_with(help.out, "usage: farswapctl [-j|--json] COMMAND"));
	for (cmd = commands; cmd->name; cmd++) {
		char line[256];

		snprintf(line, sizeof(line), "  %-8s  %s\n", cmd->name,
			 cmd->summary);
		assert_non_null(strstr(help.out, line));
	}
	assert_prints(run_ctl("help", NULL), help.out);
	assert_prints(run_ctl("-h", NULL), help.out);
	run_free(&help);
}

/* No command: the list of commands, on stderr, and exit 2. */
static void test_no_command(void **state)
{
	(void)state;
	assert_refused(run_ctl(NULL), EXIT_USAGE,
		       "usage: farswapctl [-j|--json] COMMAND");
}

/* NAME --help, NAME -h and help NAME: that command's usage, exit 0. */
static void test_command_help(void **state)
{
	const struct ctl_command *cmd;

	(void)state;
	for (cmd = commands; cmd->name; cmd++) {
		struct run help = run_ctl(cmd->name, "--help", NULL);
		char usage[64];

		snprintf(usage, sizeof(usage), "usage: farswapctl %s", cmd->name);
		assert_int_equal(help.status, 0);
		assert_string_equal(help.err, "");
		assert_true(starts_with(help.out, usage));
		assert_non_null(strstr(help.out, cmd->summary));
		assert_non_null(strstr(help.out, "--help"));
		assert_prints(run_ctl(cmd->name, "-h", NULL), help.out);
		assert_prints(run_ctl("help", cmd->name, NULL), help.out);
		run_free(&help);
	}
}

/* attach's usage lines stand under its first. */
static void test_attach_usage_aligned(void **state)
{
	struct run r = run_ctl("attach", "--help", NULL);

	(void)state;
	assert_true(starts_with(r.out,
		"usage: farswapctl attach --donor ADDR[:PORT] [--donor ...] --size SIZE\n"
		"                         [--slab-size SIZE] [--name farswapN] [--queues N]\n"));
	run_free(&r);
}

/* status and metrics read the fake tree. */
static int make_root(void **state)
{
	sys_root = fake_root;
	return fake_root_make(state);
}

/* The whole file @path, which must be there; caller frees. */
static char *read_golden(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	return slurp(f);
}

/*
 * farswapctl @args prints what tests/unit/golden/@name holds, byte for
 * byte: the text, JSON and metrics of make_host()'s tree, as they were
 * when the file was written.  A change to any of them shows here first.
 * FARSWAP_GOLDEN_WRITE=1 writes the files anew from the output instead
 * (then read the diff before committing it).
 */
static void assert_golden(const char *name, const char *arg, ...)
{
	char *argv[4] = { NULL };
	char path[128], *want;
	struct run r;
	va_list ap;
	int i;

	va_start(ap, arg);
	for (i = 0; arg && i < 3; arg = va_arg(ap, const char *))
		argv[i++] = (char *)arg;
	va_end(ap);
	snprintf(path, sizeof(path), "golden/%s", name);
	want = read_golden(path);
	r = run_ctl(argv[0], argv[1], argv[2], NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	if (getenv("FARSWAP_GOLDEN_WRITE")) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		assert_int_equal(fputs(r.out, f) < 0, 0);
		assert_int_equal(fclose(f), 0);
	} else if (strcmp(r.out, want))
		fail_msg("%s differs from farswapctl's output:\n%s", path,
			 r.out);
	run_free(&r);
	free(want);
}

static void test_output_pinned(void **state)
{
	char *doc = read_golden("golden/status.json");
	char *prom = read_golden("golden/metrics.prom");
	char err[256];

	(void)state;
	/* The golden files themselves are well-formed. */
	assert_true(json_valid(doc, strlen(doc)));
	if (!prom_valid(prom, err, sizeof(err)))
		fail_msg("golden/metrics.prom: %s", err);
	free(doc);
	free(prom);

	make_host();
	assert_golden("status.txt", "status", NULL);
	assert_golden("status.json", "-j", "status", NULL);
	assert_golden("metrics.prom", "metrics", NULL);
}

/* -j before status, or --json/-j after it: the same JSON document. */
static void test_global_json(void **state)
{
	struct run global = run_ctl("-j", "status", NULL);

	(void)state;
	assert_prints(run_ctl("status", NULL), "no farswap devices\n");
	assert_int_equal(global.status, 0);
	assert_string_equal(global.err, "");
	assert_true(json_valid(global.out, strlen(global.out)));
	assert_non_null(strstr(global.out, "\"farswapctl_version\": \"unit-test\""));
	assert_non_null(strstr(global.out, "\"devices\": []"));
	assert_prints(run_ctl("--json", "status", NULL), global.out);
	assert_prints(run_ctl("status", "--json", NULL), global.out);
	assert_prints(run_ctl("status", "-j", NULL), global.out);
	run_free(&global);
}

/* A device status is asked of must be one: exit 1, not a usage error. */
static void test_status_no_such_device(void **state)
{
	(void)state;
	assert_refused(run_ctl("-j", "status", "farswap3", NULL), EXIT_FAILED,
		       "farswapctl: farswap3: not a farswap device");
}

/* Command lines farswapctl must refuse with exit 2, before doing anything. */
static void test_usage_errors(void **state)
{
	static const char *const lines[][6] = {
		{ "bogus" },
		{ "-x", "status" },
		{ "--bogus" },
		{ "-j" },
		{ "-j", "list" },
		{ "-j", "attach", "--donor", "10.0.0.2", "--size", "1G" },
		{ "-j", "metrics" },
		{ "attach", "--bogus" },
		{ "attach", "--size" },
		{ "attach", "--size", "1G" },
		{ "attach", "--donor", "10.0.0.2" },
		{ "attach", "--donor", "10.0.0.2", "--size", "1G", "extra" },
		{ "attach", "--name", "sda", "--donor", "10.0.0.2" },
		{ "detach" },
		{ "detach", "farswap0", "farswap1" },
		{ "detach", "sda" },
		{ "detach", "--force", "farswap0" },
		{ "status", "farswap0", "farswap1" },
		{ "status", "sda" },
		{ "status", "--jsn" },
		{ "list", "farswap0" },
		{ "list", "--json" },
		{ "metrics", "--output" },
		{ "metrics", "extra" },
		{ "version", "extra" },
		{ "help", "bogus" },
		{ "help", "attach", "detach" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const char *const *l = lines[i];
		struct run r = run_ctl(l[0], l[1], l[2], l[3], l[4], l[5], NULL);

		if (r.status != EXIT_USAGE)
			fail_msg("farswapctl %s %s ...: exit %d, not 2 (%s)",
				 l[0], l[1] ?: "", r.status, r.err);
		assert_refused(r, EXIT_USAGE, "farswapctl");
	}
}

/* getopt_long()'s own complaints name the command, and how to get help. */
static void test_unknown_option_names_command(void **state)
{
	(void)state;
	assert_refused(run_ctl("metrics", "--bogus", NULL), EXIT_USAGE,
		       "farswapctl metrics: unrecognized option '--bogus'\n"
		       "Try 'farswapctl metrics --help'.\n");
}

/* --version and version: the same, farswapctl's own version first. */
static void test_version(void **state)
{
	struct run opt = run_ctl("--version", NULL);

	(void)state;
	assert_int_equal(opt.status, 0);
	assert_true(starts_with(opt.out, "farswapctl unit-test\n"));
	assert_prints(run_ctl("version", NULL), opt.out);
	run_free(&opt);
}

/* The host id tests' temporary directory, made at the first use. */
static char hostid_dir[] = "/tmp/farswapctl-hostid-XXXXXX";
static bool hostid_dir_made;

/* The file hostid in that directory, holding @text (NULL: no file). */
static const char *hostid_tmp(const char *text)
{
	static char path[sizeof(hostid_dir) + 8];
	FILE *f;

	if (!hostid_dir_made) {
		if (!mkdtemp(hostid_dir))
			fail_msg("mkdtemp: %s", strerror(errno));
		hostid_dir_made = true;
	}
	snprintf(path, sizeof(path), "%s/hostid", hostid_dir);
	unlink(path);
	if (!text)
		return path;
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

static int hostid_tmp_remove(void **state)
{
	(void)state;
	if (!hostid_dir_made)
		return 0;
	unlink(hostid_tmp(NULL));
	hostid_dir_made = false;
	if (rmdir(hostid_dir))
		return -1;
	/* mkdtemp() filled the template in: the next test makes another. */
	memcpy(strrchr(hostid_dir, '-') + 1, "XXXXXX", 6);
	return 0;
}

/* read_hostid_file(): one UUID, blanks around it, lower-cased. */
static void test_hostid_file_good(void **state)
{
	static const char *const good[] = {
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
		"0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0\n",
		"  \n\t0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 \n\n",
	};
	char id[UUID_LEN + 1], err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		memset(id, 'x', sizeof(id));
		if (read_hostid_file(hostid_tmp(good[i]), id, err,
				     sizeof(err)))
			fail_msg("'%s' refused: %s", good[i], err);
		assert_string_equal(id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	}
}

/* Anything else is refused, with the file's name and what is wrong. */
static void test_hostid_file_bad(void **state)
{
	static const struct {
		const char *text;
		int ret;
		const char *why;
	} bad[] = {
		{ "", -EINVAL, "is empty" },
		{ " \n\n", -EINVAL, "is empty" },
		{ "host7\n", -EINVAL, "does not hold one UUID" },
		{ "0f1e2d3c4b5a69788796a5b4c3d2e1f0\n", -EINVAL,
		  "does not hold one UUID" },
		{ "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0x\n", -EINVAL,
		  "does not hold one UUID" },
		{ "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg\n", -EINVAL,
		  "does not hold one UUID" },
		{ "00000000-0000-0000-0000-000000000000\n", -EINVAL,
		  "not the nil UUID" },
		{ "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n"
		  "6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83\n", -EINVAL,
		  "does not hold one UUID" },
		{ "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 # mine\n", -EINVAL,
		  "does not hold one UUID" },
		{ NULL, -ENOENT, "cannot read the host id file" },
	};
	char id[UUID_LEN + 1], err[512];
	const char *path;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		path = hostid_tmp(bad[i].text);
		err[0] = '\0';
		assert_int_equal(read_hostid_file(path, id, err, sizeof(err)),
				 bad[i].ret);
		if (!strstr(err, path) || !strstr(err, bad[i].why))
			fail_msg("'%s': the reason '%s' lacks '%s' or '%s'",
				 bad[i].text ?: "(no file)", err, path,
				 bad[i].why);
	}
	/* A file that is longer than any one line could be. */
	{
		char big[600];

		memset(big, ' ', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		memcpy(big + 300, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", 36);
		assert_int_equal(read_hostid_file(hostid_tmp(big), id, err,
						  sizeof(err)), -EINVAL);
	}
}

/*
 * attach_host_id(): --host-id, else --hostid-file, else the host id file
 * if there is one (none: NULL, the module's id).
 */
static void test_attach_host_id(void **state)
{
	char id[UUID_LEN + 1];

	(void)state;
	hostid_path = hostid_tmp(NULL);
	assert_null(attach_host_id(NULL, NULL, id));
	hostid_path = hostid_tmp("6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83\n");
	assert_string_equal(attach_host_id(NULL, NULL, id),
			    "6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83");
	assert_string_equal(attach_host_id("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
					   NULL, id),
			    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	assert_string_equal(attach_host_id(NULL, hostid_path, id),
			    "6b1f3c2a-9d4e-4f60-8a7b-2c5d1e0f9a83");
	hostid_path = HOSTID_FILE;
}

/*
 * attach refuses a bad host id before it looks for the module: a bad
 * --host-id, or both options, is a usage error; a host id file that is
 * missing (named), or malformed (named or the default), exits 1 naming it.
 */
static void test_attach_host_id_refused(void **state)
{
	const char *path;

	(void)state;
	assert_refused(run_ctl("attach", "--donor", "10.0.0.2", "--size", "1G",
			       "--host-id", "host7", NULL),
		       EXIT_USAGE, "--host-id 'host7' is not a UUID");
	assert_refused(run_ctl("attach", "--donor", "10.0.0.2", "--size", "1G",
			       "--host-id",
			       "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
			       "--hostid-file", "/etc/farswap/hostid", NULL),
		       EXIT_USAGE, "one or the other");
	path = hostid_tmp(NULL);
	assert_refused(run_ctl("attach", "--donor", "10.0.0.2", "--size", "1G",
			       "--hostid-file", path, NULL),
		       EXIT_FAILED, path);
	path = hostid_tmp("not-a-uuid\n");
	assert_refused(run_ctl("attach", "--donor", "10.0.0.2", "--size", "1G",
			       "--hostid-file", path, NULL),
		       EXIT_FAILED, "does not hold one UUID");
	hostid_path = path;
	assert_refused(run_ctl("attach", "--donor", "10.0.0.2", "--size", "1G",
			       NULL),
		       EXIT_FAILED, path);
	hostid_path = HOSTID_FILE;
}

/*
 * status --check: farswap2 has a donor reconnecting and a chunk short of
 * a replica (degraded), farswap10 no donor at all (failing): exit 2,
 * each said with why.  Alone, each gives its own status; a device whose
 * donors are live and chunks whole is healthy; a lost page is failing.
 */
static void test_status_check(void **state)
{
	static const struct fake_donor live = {
		.address = "10.0.0.5:7471\n", .state = "live\n",
		.stat = "reads=1\n",
	};
	struct run r;

	(void)state;
	make_host();
	r = run_ctl("status", "--check", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "farswap2: donor [fe80::1]:7471 reconnecting ([fe80::1]:7471 did not answer within 4000 ms); 1 chunks short of a replica or with damaged pages -> degraded\n"));
	assert_non_null(strstr(r.out, "farswap10: no donor live; 1 chunks short of a replica or with damaged pages -> failing\n"));
	run_free(&r);
	r = run_ctl("status", "-c", "farswap2", NULL);
	assert_int_equal(r.status, 1);
	assert_null(strstr(r.out, "farswap10"));
	run_free(&r);
	assert_refused(run_ctl("status", "--check", "--json", NULL),
		       EXIT_USAGE, "one or the other");

	put_device("farswap3", &live, 1);
	put_file("sys/block/farswap3/farswap/replicas",
		 "replicas=1 degraded=0 lost_pages=0\n");
	r = run_ctl("status", "--check", "farswap3", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "farswap3 -> healthy\n");
	run_free(&r);
	put_file("sys/block/farswap3/farswap/stat", "lost_pages=3\n");
	r = run_ctl("status", "--check", "farswap3", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "farswap3: 3 pages lost -> failing\n");
	run_free(&r);
}

/*
 * srv against fake_dns.py, serving srv.zone on a port of its own: the
 * resolver (_res, which getaddrinfo() uses too once changed) is pointed
 * at it by srv's resolver_override, as only a test can.
 */
static struct sockaddr_in fake_ns = { .sin_family = AF_INET };

static void use_fake_ns(void)
{
	_res.nscount = 1;
	_res.nsaddr_list[0] = fake_ns;
	/* One try of one second: the server is here or not at all. */
	_res.retrans = 1;
	_res.retry = 1;
}

/* The server's stdin: it exits when this closes (or the test does). */
static FILE *fake_dns_stdin;
static pid_t fake_dns_pid;

static int fake_dns_start(void **state)
{
	int in[2], out[2];
	char port[16] = "";
	FILE *f;

	(void)state;
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	fflush(NULL);
	fake_dns_pid = fork();
	assert_true(fake_dns_pid >= 0);
	if (fake_dns_pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[1]);
		close(out[0]);
		execlp("python3", "python3", "fake_dns.py", "srv.zone",
		       (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fake_dns_stdin = fdopen(in[1], "w");
	f = fdopen(out[0], "r");
	assert_non_null(fgets(port, sizeof(port), f));
	fclose(f);
	fake_ns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fake_ns.sin_port = htons(atoi(port));
	resolver_override = use_fake_ns;
	return 0;
}

static int fake_dns_stop(void **state)
{
	(void)state;
	resolver_override = NULL;
	fclose(fake_dns_stdin);
	waitpid(fake_dns_pid, NULL, 0);
	return 0;
}

/* Priority ascending, then weight descending; IPv6 in brackets. */
static void test_srv_order(void **state)
{
	struct run r = run_ctl("srv", "_farswap._tcp.pool.test", NULL);

	(void)state;
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "[fd00::2]:7472\n10.0.0.1:7471\n10.0.0.3:7471\n");
	/* gone.pool.test has no address: skipped, and said. */
	if (!strstr(r.err, "warning: skipping gone.pool.test (port 7471): it has no address"))
		fail_msg("stderr: '%s'", r.err);
	run_free(&r);
	/* Two records of one machine: one donor. */
	assert_prints(run_ctl("srv", "_farswap._tcp.twice.test.", NULL),
		      "10.0.0.1:7471\n");
}

static void test_srv_refused(void **state)
{
	(void)state;
	assert_refused(run_ctl("srv", "_farswap._tcp.nowhere.test", NULL),
		       EXIT_FAILED, "_farswap._tcp.nowhere.test does not exist (NXDOMAIN)");
	assert_refused(run_ctl("srv", "_farswap._tcp.nodata.test", NULL),
		       EXIT_FAILED, "has no SRV records");
	assert_refused(run_ctl("srv", "_farswap._tcp.empty.test", NULL),
		       EXIT_FAILED, "no target of _farswap._tcp.empty.test has an address");
	assert_refused(run_ctl("srv", "_farswap._tcp.garbled.test", NULL),
		       EXIT_FAILED, "is malformed");
	/* SERVFAIL may pass: try again later. */
	assert_refused(run_ctl("srv", "_farswap._tcp.broken.test", NULL),
		       EX_TEMPFAIL, "try again later");
	assert_refused(run_ctl("srv", NULL), EXIT_USAGE, "too few arguments");
}

/* A nameserver that does not answer (the network down at boot): 75. */
static void test_srv_no_answer(void **state)
{
	struct sockaddr_in mute = { .sin_family = AF_INET };
	socklen_t len = sizeof(mute);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
	mute.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&mute, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&mute, &len), 0);
	fake_ns = mute;
	resolver_override = use_fake_ns;
	assert_refused(run_ctl("srv", "_farswap._tcp.pool.test", NULL),
		       EX_TEMPFAIL, "no nameserver answered for _farswap._tcp.pool.test");
	resolver_override = NULL;
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_commands),
		cmocka_unit_test(test_no_command),
		cmocka_unit_test(test_command_help),
		cmocka_unit_test(test_attach_usage_aligned),
		cmocka_unit_test_setup(test_global_json, fake_root_clean),
		cmocka_unit_test_setup(test_status_no_such_device,
				       fake_root_clean),
		cmocka_unit_test_setup(test_output_pinned, fake_root_clean),
		cmocka_unit_test_setup(test_status_check, fake_root_clean),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_unknown_option_names_command),
		cmocka_unit_test(test_version),
		cmocka_unit_test_teardown(test_hostid_file_good,
					  hostid_tmp_remove),
		cmocka_unit_test_teardown(test_hostid_file_bad,
					  hostid_tmp_remove),
		cmocka_unit_test_teardown(test_attach_host_id,
					  hostid_tmp_remove),
		cmocka_unit_test_teardown(test_attach_host_id_refused,
					  hostid_tmp_remove),
		cmocka_unit_test_setup_teardown(test_srv_order, fake_dns_start,
						fake_dns_stop),
		cmocka_unit_test_setup_teardown(test_srv_refused, fake_dns_start,
						fake_dns_stop),
		cmocka_unit_test(test_srv_no_answer),
	};

	return cmocka_run_group_tests_name("farswapctl", tests, make_root,
					   fake_root_remove);
}
