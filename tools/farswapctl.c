// SPDX-License-Identifier: GPL-2.0
/*
 * farswapctl: attach, detach and inspect farswap devices on a host.
 *
 * A thin front end to the module's interfaces, which work without it too:
 *   /dev/farswap-ctl                write "[attach] donor=A[:P] ... size=S
 *                                   [...]" or "detach name=farswapN", then
 *                                   read "name=farswapN" or "error=REASON"
 *                                   from the same open file (docs/control.md)
 *   /sys/block/farswapN/farswap/    per-device state and statistics
 *   /sys/block/farswapN/stat        the block layer's counters: the
 *                                   device's requests and bytes
 *   /sys/block/farswapN/donors/<i>/ each donor's state and counters
 *   /sys/kernel/debug/farswap/farswapN/latency
 *                                   latency percentiles (debugfs: root only)
 * and, with a module older than /dev/farswap-ctl, the deprecated
 *   /sys/kernel/farswap/attach      write "donor=A[:P] ... size=S [...]"
 *   /sys/kernel/farswap/detach      write "farswapN"
 *   /sys/kernel/farswap/last_error  why the last attach/detach failed
 *
 * devstat.c reads those files for status, and turns them into a JSON
 * document (docs/json.md) and Prometheus metrics (docs/metrics.md) for
 * status --json and metrics.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devstat.h"

/* dkms.conf's PACKAGE_VERSION, passed by the Makefile. */
#ifndef FARSWAP_VERSION
#error "FARSWAP_VERSION is not defined: build with tools/Makefile"
#endif

#define CTL_DEV		"/dev/farswap-ctl"
#define CTL_DIR		"/sys/kernel/farswap"
#define MAX_CMD		4096
#define MAX_NAME_TRIES	16
#define MAX_RESULT	512

static const char *prog = "farswapctl";

/* Exit statuses, as farswapctl(8) documents them. */
#define EXIT_FAILED	1	/* the operation failed */
#define EXIT_USAGE	2	/* the command line is wrong */

static void vexit_with(int status, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0), noreturn));
static void vexit_with(int status, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit_with(EXIT_FAILED, fmt, ap);
}

/* A command line farswapctl cannot make sense of: exit 2, not 1. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit_with(EXIT_USAGE, fmt, ap);
}

/* Read a whole sysfs file; NULL if it cannot be read. */
static char *read_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 1025) {
			char *nbuf;

			cap = cap ? 2 * cap : 4096;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nbuf;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		if (!n)
			break;
		len += n;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* Write @cmd to a sysfs file in one write(); returns 0 or an errno. */
static int write_file(const char *path, const char *cmd)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return errno;
	n = write(fd, cmd, strlen(cmd));
	err = n < 0 ? errno : 0;
	close(fd);
	return err;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

static const char *last_error(void)
{
	static char msg[512];
	char *s = read_file(CTL_DIR "/last_error");

	if (!s)
		return "";
	snprintf(msg, sizeof(msg), "%s", s);
	free(s);
	chomp(msg);
	return msg;
}

/* The module must be loaded; load it if it is not. */
static void ensure_module(void)
{
	struct stat st;
	int status;
	pid_t pid;

	if (!stat(CTL_DIR, &st))
		return;
	pid = fork();
	if (pid == 0) {
		execlp("modprobe", "modprobe", "farswap", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || stat(CTL_DIR, &st))
		die("the farswap module is not loaded and 'modprobe farswap' failed");
}

/* Accept "farswap0" or "/dev/farswap0". */
static const char *device_name(const char *arg)
{
	const char *name = strncmp(arg, "/dev/", 5) ? arg : arg + 5;

	if (strncmp(name, "farswap", 7) || !name[7])
		usage_error("'%s' is not a farswap device name (farswapN)", arg);
	return name;
}

static void append(char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *cmd, const char *fmt, ...)
{
	size_t len = strlen(cmd);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd + len, MAX_CMD - len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= MAX_CMD - len)
		die("command too long");
}

/*
 * /dev/farswap-ctl, or -1 when this module has none (older than it, or no
 * devtmpfs to make the node): then the sysfs files do.
 */
static int open_ctl_dev(void)
{
	int fd = open(CTL_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno != ENOENT && errno != ENXIO && errno != ENODEV)
		die("cannot open %s: %s", CTL_DEV, strerror(errno));
	return fd;
}

/*
 * One command through the control device: write it, then read its result
 * from the same open file, "name=farswapN" or "error=REASON".  Returns 0
 * with the device's name in @name, or an errno with the kernel's reason in
 * @reason.
 */
static int ctl_dev_run(int fd, const char *cmd, char *name, size_t namelen,
		       char *reason, size_t reasonlen)
{
	char result[MAX_RESULT];
	size_t len = 0;
	ssize_t n;
	int err;

	n = write(fd, cmd, strlen(cmd));
	err = n < 0 ? errno : 0;
	while (len < sizeof(result) - 1 &&
	       (n = read(fd, result + len, sizeof(result) - 1 - len)) > 0)
		len += n;
	result[len] = '\0';
	chomp(result);

	if (!err && !strncmp(result, "name=", 5) &&
	    strlen(result + 5) < namelen) {
		memcpy(name, result + 5, strlen(result + 5) + 1);
		return 0;
	}
	if (!strncmp(result, "error=", 6) && strlen(result + 6) < reasonlen)
		memcpy(reason, result + 6, strlen(result + 6) + 1);
	else
		snprintf(reason, reasonlen, "unexpected answer '%.64s'",
			 result);
	return err ?: EPROTO;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: farswapctl attach --donor ADDR[:PORT] [--donor ...] --size SIZE\n"
		"                         [--slab-size SIZE] [--name farswapN] [--queues N]\n"
		"                         [--queue-depth N] [--io-timeout MS] [--sync-io]\n"
		"                         [--integrity siphash|crc32c|off | --encrypt] [--replicas N]\n"
		"                         [--read-policy fastest|round-robin] [--key PREFIX:NAME]\n"
		"       farswapctl detach farswapN\n"
		"       farswapctl status [farswapN] [--json]\n"
		"       farswapctl list\n"
		"       farswapctl metrics [--output FILE]\n"
		"       farswapctl --version\n"
		"\n"
		"attach creates /dev/farswapN, swapping to the donors' memory (farswapd\n"
		"runs there), and prints its name; then: mkswap /dev/farswapN; swapon it.\n"
		"SIZE takes K, M, G or T.  ADDR is IPv4, or [IPv6] when a port follows.\n"
		"detach is refused while the device is in use (swapoff first).\n"
		"--encrypt seals every page on this host (ChaCha20-Poly1305, a key made at\n"
		"attach that never leaves the kernel): donors hold ciphertext only.\n"
		"--key names a logon key in your keyrings holding the secret the donors'\n"
		"key-file holds; donors are then authenticated (and this host to them):\n"
		"  keyctl add logon farswap:pool \"$(cat KEYFILE)\" @u\n"
		"status --json prints every device as JSON (docs/json.md); metrics\n"
		"prints Prometheus metrics, or replaces FILE atomically with them\n"
		"(for node_exporter's textfile collector; docs/metrics.md).\n");
}

/*
 * A module without /dev/farswap-ctl names a device only when asked to:
 * without --name take the lowest free farswapN, and if another attach
 * takes it first, try the next.  Its reason is the shared last_error.
 */
static int attach_via_sysfs(const char *name, const char *base)
{
	char cmd[MAX_CMD + 64], pick[32];
	int i, err;

	for (i = 0; i < MAX_NAME_TRIES; i++) {
		const char *try = name;
		int n;

		if (!try) {
			for (n = 0; n < 10000; n++) {
				snprintf(pick, sizeof(pick), "farswap%d", n);
				if (!fsh_device_exists("/", pick))
					break;
			}
			try = pick;
		}
		snprintf(cmd, sizeof(cmd), "name=%s%s", try, base);
		err = write_file(CTL_DIR "/attach", cmd);
		if (!err) {
			printf("/dev/%s\n", try);
			return 0;
		}
		if (err == EEXIST && !name && fsh_device_exists("/", try))
			continue;
		die("attach failed: %s (%s)", last_error(), strerror(err));
	}
	die("attach failed: no free device name");
}

static int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "donor", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "slab-size", required_argument, NULL, 'S' },
		{ "name", required_argument, NULL, 'n' },
		{ "queues", required_argument, NULL, 'q' },
		{ "queue-depth", required_argument, NULL, 'D' },
		{ "io-timeout", required_argument, NULL, 't' },
		{ "sync-io", no_argument, NULL, 'y' },
		{ "integrity", required_argument, NULL, 'i' },
		{ "encrypt", no_argument, NULL, 'e' },
		{ "replicas", required_argument, NULL, 'r' },
		{ "read-policy", required_argument, NULL, 'p' },
		{ "key", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char base[MAX_CMD];
	const char *name = NULL;
	bool have_donor = false, have_size = false;
	char cmd[MAX_CMD + 64], made[64], reason[MAX_RESULT];
	int c, fd, err;

	while ((c = getopt_long(argc, argv, "d:s:S:n:q:D:t:yi:er:p:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			append(base, " donor=%s", optarg);
			have_donor = true;
			break;
		case 's':
			append(base, " size=%s", optarg);
			have_size = true;
			break;
		case 'S':
			append(base, " slab_size=%s", optarg);
			break;
		case 'n':
			name = device_name(optarg);
			break;
		case 'q':
			append(base, " queues=%s", optarg);
			break;
		case 'D':
			append(base, " queue_depth=%s", optarg);
			break;
		case 't':
			append(base, " io_timeout_ms=%s", optarg);
			break;
		case 'y':
			append(base, " sync_io=1");
			break;
		case 'i':
			append(base, " integrity=%s", optarg);
			break;
		case 'e':
			append(base, " encrypt=1");
			break;
		case 'r':
			append(base, " replicas=%s", optarg);
			break;
		case 'p':
			append(base, " read_policy=%s", optarg);
			break;
		case 'k':
			/* The key's name only: the kernel reads the secret. */
			append(base, " key=%s", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		usage_error("attach: unexpected argument '%s'", argv[optind]);
	if (!have_donor || !have_size)
		usage_error("attach needs --donor and --size (see --help)");
	ensure_module();
	fd = open_ctl_dev();
	if (fd < 0)
		return attach_via_sysfs(name, base);

	snprintf(cmd, sizeof(cmd), "attach%s%s%s", base, name ? " name=" : "",
		 name ?: "");
	err = ctl_dev_run(fd, cmd, made, sizeof(made), reason, sizeof(reason));
	close(fd);
	if (err)
		die("attach failed: %s (%s)", reason, strerror(err));
	printf("/dev/%s\n", made);
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	char cmd[128], done[64], reason[MAX_RESULT];
	const char *name;
	int fd, err;

	if (argc != 2)
		usage_error("usage: farswapctl detach farswapN");
	name = device_name(argv[1]);
	ensure_module();
	fd = open_ctl_dev();
	if (fd < 0) {
		err = write_file(CTL_DIR "/detach", name);
		if (err)
			die("detach %s failed: %s (%s)", name, last_error(),
			    strerror(err));
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "detach name=%s", name);
	err = ctl_dev_run(fd, cmd, done, sizeof(done), reason, sizeof(reason));
	close(fd);
	if (err)
		die("detach %s failed: %s (%s)", name, reason, strerror(err));
	return 0;
}

/*
 * "key=value" of a line of space-separated pairs, 0 if absent.  The text
 * status shows what cannot be read as 0 (here, in donor_num() and in
 * stat_num()); devstat.c's readers say whether they could, which --json
 * needs for its nulls.
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
static void print_latency(const char *label, const char *line)
{
	char a[32], b[32];

	if (!kv_num(line, "count")) {
		printf(" %s -", label);
		return;
	}
	human_us(kv_num(line, "p50_us"), a, sizeof(a));
	human_us(kv_num(line, "p99_us"), b, sizeof(b));
	printf(" %s p50 %s p99 %s", label, a, b);
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

static void show_donor(const struct fsh_device *dev, const struct fsh_donor *d)
{
	const char *addr = fsh_donor_text(d, FSH_DONOR_ADDRESS) ?: "?";
	char rb[32], wb[32];

	human_bytes(donor_num(d, "read_bytes"), rb, sizeof(rb));
	human_bytes(donor_num(d, "write_bytes"), wb, sizeof(wb));
	/* An empty domain: the donor has not told it yet. */
	printf("  donor %s: %s, domain %s, %llu slabs here (donor has %llu of %llu free); %llu reads (%s), %llu writes (%s), %llu errors, %llu reconnects\n",
	       addr, fsh_donor_text(d, FSH_DONOR_STATE) ?: "?",
	       d->file[FSH_DONOR_DOMAIN] ?
			(fsh_donor_text(d, FSH_DONOR_DOMAIN) ?: "-") : "?",
	       donor_num(d, "slabs"), donor_num(d, "free"),
	       donor_num(d, "total"), donor_num(d, "reads"), rb,
	       donor_num(d, "writes"), wb, donor_num(d, "errors"),
	       donor_num(d, "reconnects"));
	if (!dev->latency)
		return;
	printf("   ");
	print_latency("read", fsh_latency(dev, addr, "read"));
	print_latency("write", fsh_latency(dev, addr, "write"));
	printf("\n");
}

/*
 * The text status of one device, from what devstat.c read: the same
 * reader as --json and metrics.  Latency is in debugfs, which only root
 * reads and which may not be mounted: without it the rest is shown, and
 * the latency lines are left out.
 */
static int show_device(const struct fsh_device *dev)
{
	const char *const *f = (const char *const *)dev->file;
	const char *stat = f[FSH_STAT], *slabs = f[FSH_SLABS];
	const char *chunks = f[FSH_CHUNKS], *slab_size = f[FSH_SLAB_SIZE];
	const char *sync_io = f[FSH_SYNC_IO], *integrity = f[FSH_INTEGRITY];
	const char *encrypt = f[FSH_ENCRYPT], *auth = f[FSH_AUTH];
	const char *replicas = f[FSH_REPLICAS];
	char sz[32], ss[32], rb[32], wb[32], swap[96], policy[32];
	const char *name = dev->name;
	uint64_t sectors, slab_bytes;
	size_t i;

	if (!stat || !slabs || !chunks || !slab_size || !dev->size) {
		fprintf(stderr, "%s: %s: not a farswap device\n", prog, name);
		return 1;
	}
	if (!fsh_file_u64(dev->size, &sectors))
		sectors = 0;
	if (!fsh_file_u64(slab_size, &slab_bytes))
		slab_bytes = 0;
	human_bytes(sectors * 512, sz, sizeof(sz));
	human_bytes(slab_bytes, ss, sizeof(ss));
	swap_state(dev, swap, sizeof(swap));
	printf("%s: %s, %llu of %llu chunks (2 MiB) bound in %llu donor slabs of %s; swap: %s; sync_io %s\n",
	       name, sz, kv_num(chunks, "bound"), kv_num(chunks, "total"),
	       kv_num(slabs, "held"), ss, swap,
	       sync_io && sync_io[0] == '1' ? "on" : "off");
	human_bytes(stat_num(dev, "read_bytes"), rb, sizeof(rb));
	human_bytes(stat_num(dev, "write_bytes"), wb, sizeof(wb));
	printf("  I/O: %llu reads (%s), %llu writes (%s), %llu zero-fill reads, %llu discards, %llu errors\n",
	       stat_num(dev, "reads"), rb, stat_num(dev, "writes"), wb,
	       stat_num(dev, "zero_reads"), stat_num(dev, "discards"),
	       stat_num(dev, "errors"));
	printf("  placement: %llu chunks bound, %llu moved on reclaim, %llu bind failures; %llu donor slabs taken, %llu given back; %llu pages lost\n",
	       stat_num(dev, "binds"), stat_num(dev, "migrations"),
	       stat_num(dev, "bind_failures"), stat_num(dev, "slab_allocs"),
	       stat_num(dev, "releases"), stat_num(dev, "lost_pages"));
	if (replicas && kv_num(replicas, "replicas") <= 1) {
		printf("  replicas: 1: no redundancy, a donor that dies takes its pages (%llu lost so far)\n",
		       kv_num(replicas, "lost_pages"));
	} else if (replicas) {
		char copied[32];

		human_bytes(kv_num(replicas, "repair_bytes"), copied,
			    sizeof(copied));
		unsigned long long doms = kv_num(replicas, "domains");

		snprintf(policy, sizeof(policy), "%.*s",
			 (int)strcspn(f[FSH_READ_POLICY] ?: "", "\n"),
			 f[FSH_READ_POLICY] ?: "");
		printf("  replicas: %llu per chunk, %llu failure domain%s, reads %s; %llu chunks degraded; %llu repaired (%s), %llu repairs failed; %llu reads failed over, %llu damaged replicas healed; %llu pages lost\n",
		       kv_num(replicas, "replicas"), doms, doms == 1 ? "" : "s",
		       *policy ? policy : "?",
		       kv_num(replicas, "degraded"),
		       kv_num(replicas, "repaired"), copied,
		       kv_num(replicas, "repair_failures"),
		       kv_num(replicas, "failovers"), kv_num(replicas, "heals"),
		       kv_num(replicas, "lost_pages"));
		if (kv_num(replicas, "colocated"))
			printf("  warning: %llu chunks have replicas in one failure domain (one moves out when another domain has room; %llu moved so far)\n",
			       kv_num(replicas, "colocated"),
			       kv_num(replicas, "spread"));
	}
	if (integrity) {
		char alg[32], tb[32];

		human_bytes(kv_num(integrity, "table_bytes"), tb, sizeof(tb));
		printf("  integrity: %s, %llu pages checked, %llu failed their check; %s of host memory (%llu bytes per page)\n",
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
			printf("  encryption: %s, pages sealed on this host, donors hold ciphertext; %s of write bounce buffers\n",
			       alg, bb);
		else
			printf("  encryption: off: donors hold what is written to the device as it is written (--encrypt, or dm-crypt over the device, keeps it from them)\n");
	}
	if (auth) {
		char alg[32];

		printf("  auth: %s\n",
		       fsh_kv_word(auth, "auth", alg, sizeof(alg)) ?: "?");
	}
	if (dev->latency) {
		printf("  latency:");
		print_latency("read", fsh_latency(dev, "device", "read"));
		print_latency("write", fsh_latency(dev, "device", "write"));
		printf("\n");
	}
	for (i = 0; i < dev->nr_donors; i++)
		show_donor(dev, &dev->donors[i]);
	return 0;
}

/* status without --json: every device, or just @only, as text. */
static int print_status_text(const char *only)
{
	struct fsh_host h;
	char err[256];
	size_t i;
	int ret = 0;

	if (fsh_read(&h, "/", only, err, sizeof(err))) {
		fsh_free(&h);
		die("%s", err);
	}
	if (!h.nr_devices)
		printf("no farswap devices\n");
	for (i = 0; i < h.nr_devices; i++)
		ret |= show_device(&h.devices[i]);
	fsh_free(&h);
	return ret;
}

/* status --json: one document with every device, or just @only. */
static int print_status_json(const char *only)
{
	struct fsh_host h;
	const char *text;
	struct fsj j;
	char err[256];
	size_t len;
	int ret;

	ret = fsh_read(&h, "/", only, err, sizeof(err));
	if (ret) {
		fsh_free(&h);
		die("%s", err);
	}
	fsj_init(&j);
	fsh_json(&h, FARSWAP_VERSION, &j);
	text = fsj_finish(&j, &len);
	fsh_free(&h);
	if (!text) {
		fsj_free(&j);
		die("cannot build the JSON document (out of memory)");
	}
	fwrite(text, 1, len, stdout);
	fsj_free(&j);
	return fflush(stdout) ? 1 : 0;
}

static int cmd_status(int argc, char **argv)
{
	const char *only = NULL;
	bool json = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else if (argv[i][0] == '-' || only)
			usage_error("usage: farswapctl status [farswapN] [--json]");
		else
			only = device_name(argv[i]);
	}
	if (json)
		return print_status_json(only);
	return print_status_text(only);
}

/* metrics [--output FILE]: Prometheus text, to stdout or atomically to FILE. */
static int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *text;
	struct fsh_host h;
	struct fsm m;
	char err[512];
	size_t len;
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		usage_error("metrics: unexpected argument '%s'", argv[optind]);
	if (fsh_read(&h, "/", NULL, err, sizeof(err))) {
		fsh_free(&h);
		die("%s", err);
	}
	fsm_init(&m);
	fsh_metrics(&h, FARSWAP_VERSION, &m);
	fsh_free(&h);
	text = fsm_finish(&m, &len);
	if (!text) {
		fsm_free(&m);
		die("cannot build the metrics (out of memory)");
	}
	if (output) {
		ret = fsm_write_file(output, text, len, err, sizeof(err));
		fsm_free(&m);
		if (ret)
			die("%s", err);
		return 0;
	}
	fwrite(text, 1, len, stdout);
	fsm_free(&m);
	return fflush(stdout) ? 1 : 0;
}

/* --version: ours, and the loaded module's if there is one. */
static int cmd_version(void)
{
	char *v = read_file(CTL_DIR "/version");

	printf("farswapctl %s\n", FARSWAP_VERSION);
	if (v) {
		chomp(v);
		printf("farswap.ko loaded: %s\n", v);
		free(v);
	} else {
		printf("farswap.ko not loaded\n");
	}
	return 0;
}

/* The names of every farswap device, in number order, as status lists them. */
static int cmd_list(void)
{
	struct fsh_host h;
	char err[256];
	size_t i;

	if (fsh_read(&h, "/", NULL, err, sizeof(err))) {
		fsh_free(&h);
		die("%s", err);
	}
	for (i = 0; i < h.nr_devices; i++)
		printf("%s\n", h.devices[i].name);
	fsh_free(&h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "detach"))
		return cmd_detach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return cmd_status(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cmd_list();
	if (!strcmp(argv[1], "metrics"))
		return cmd_metrics(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
		return cmd_version();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
