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
 *
 * devstat.c reads those files and render.c renders them: as text for
 * status, as a JSON document (docs/json.md) for status --json and as
 * Prometheus metrics (docs/metrics.md) for metrics.
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
#include <strings.h>
#include <linux/keyctl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sysexits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devstat.h"
#include "keyfile.h"

/* dkms.conf's PACKAGE_VERSION, passed by the Makefile. */
#ifndef FARSWAP_VERSION
#error "FARSWAP_VERSION is not defined: build with tools/Makefile"
#endif

#define CTL_DEV		"/dev/farswap-ctl"
#define CTL_DIR		"/sys/kernel/farswap"
/* This host's identity, made once at install (debian/, make install). */
#define HOSTID_FILE	"/etc/farswap/hostid"
/* A UUID's text, 8-4-4-4-12 hexadecimal digits. */
#define UUID_LEN	36
#define MAX_CMD		4096
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

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
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

/*
 * Where attach reads this host's identity when neither --host-id nor
 * --hostid-file says: HOSTID_FILE but for the unit tests.
 */
static const char *hostid_path = HOSTID_FILE;

/* A UUID as the module's host_id= takes one: its 36 characters, not nil. */
static bool uuid_valid(const char *s)
{
	static const char form[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	bool nonzero = false;
	size_t i;

	if (strlen(s) != UUID_LEN)
		return false;
	for (i = 0; form[i]; i++) {
		if (form[i] == '-') {
			if (s[i] != '-')
				return false;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]))
			return false;
		nonzero |= s[i] != '0';
	}
	return nonzero;
}

/* @s, a valid UUID, into @id in lower case, as the module shows it. */
static void uuid_lower(char *id, const char *s)
{
	size_t i;

	for (i = 0; i < UUID_LEN; i++)
		id[i] = tolower((unsigned char)s[i]);
	id[UUID_LEN] = '\0';
}

/*
 * The host id file @path: one line holding a UUID, blanks around it
 * allowed (as /proc/sys/kernel/random/uuid gives one).  Returns 0 with
 * the UUID in @id (UUID_LEN + 1 bytes), or a negative errno with @err
 * naming the file and what is wrong with it: -ENOENT if there is none.
 */
static int read_hostid_file(const char *path, char *id, char *err,
			    size_t errlen)
{
	char buf[256], *text;
	FILE *f = fopen(path, "r");
	size_t n, len;
	bool bad;

	if (!f) {
		int ret = -errno;

		snprintf(err, errlen, "cannot read the host id file %s: %s",
			 path, strerror(errno));
		return ret;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "cannot read the host id file %s", path);
		return -EIO;
	}
	buf[n] = '\0';
	text = buf + strspn(buf, " \t\n");
	if (!*text) {
		snprintf(err, errlen,
			 "the host id file %s is empty (it should hold this host's UUID, e.g. from /proc/sys/kernel/random/uuid)",
			 path);
		return -EINVAL;
	}
	len = strcspn(text, " \t\n");
	/* Nothing but blanks after the one word; a full buffer is too long. */
	bad = text[len + strspn(text + len, " \t\n")] || n == sizeof(buf) - 1;
	text[len] = '\0';
	if (bad || !uuid_valid(text)) {
		snprintf(err, errlen,
			 "the host id file %s does not hold one UUID (want one line such as 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0, not the nil UUID)",
			 path);
		return -EINVAL;
	}
	uuid_lower(id, text);
	return 0;
}

/*
 * The host_id= attach sends: --host-id's @given, or the UUID in @file
 * (--hostid-file), or else hostid_path's.  Returns @id, or NULL when
 * there is no hostid_path: the device then has the module's identity.
 * Dies (exit 1) on a file that cannot be read or holds no UUID, and on a
 * missing @file; a bad @given is a usage error.
 */
static const char *attach_host_id(const char *given, const char *file,
				  char *id)
{
	char err[512];
	int ret;

	if (given && file)
		usage_error("attach: --host-id and --hostid-file are one or the other");
	if (given) {
		if (!uuid_valid(given))
			usage_error("attach: --host-id '%s' is not a UUID (as 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0, not the nil one)",
				    given);
		uuid_lower(id, given);
		return id;
	}
	ret = read_hostid_file(file ?: hostid_path, id, err, sizeof(err));
	if (ret == -ENOENT && !file)
		return NULL;
	if (ret)
		die("%s", err);
	return id;
}

/*
 * The secret of the key file @path as a logon key @desc (no process can
 * read it back) in @keyring: what the module's request_key() finds.
 * Returns the key's serial; dies with the reason on a bad file.
 */
static long key_file_add(const char *path, const char *desc, long keyring,
			 const char *keyring_name)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	struct passwd *pw;
	char err[512];
	long id;
	int ret;

	ret = fs_keyfile_read(path, secret, err, sizeof(err));
	if (ret == -EACCES) {
		pw = getpwuid(geteuid());
		die("%s (farswapctl runs as %s%s: run it as root, or as the file's owner)",
		    err, pw ? "user " : "uid ",
		    pw ? pw->pw_name : "?");
	}
	if (ret)
		die("%s", err);
	id = syscall(SYS_add_key, "logon", desc, secret, sizeof(secret),
		     keyring);
	explicit_bzero(secret, sizeof(secret));
	if (id < 0)
		die("cannot put the secret of %s in %s as logon key '%s': %s",
		    path, keyring_name, desc, strerror(errno));
	return id;
}

/*
 * attach --key-file: the file's secret becomes a logon key in this
 * process's own keyring, where the module's request_key() finds it: the
 * attach is this process's write to the control device.  Not the user
 * or session keyring: a boot unit's session keyring is its own and
 * short-lived, root's user keyring is shared by every root process, and
 * the secret has no reason to outlive the attach (the device keeps its
 * own copy).  Returns the key's serial.
 */
#define KEY_FILE_DESC "farswap:key-file"
/* --donor-key-file's: "farswap:donor-key-file-N", N from 0. */
#define DONOR_KEY_FILE_DESC "farswap:donor-key-file-"
/* As the module's FARSWAP_DONOR_KEYS_MAX. */
#define DONOR_KEYS_MAX 8

static long key_file_load(const char *path, const char *desc)
{
	return key_file_add(path, desc, KEY_SPEC_PROCESS_KEYRING,
			    "this process's keyring");
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

/* /dev/farswap-ctl, the one way to attach and detach. */
static int open_ctl_dev(void)
{
	int fd = open(CTL_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		die("no %s: the module is loaded, but without devtmpfs or udev nothing made its node",
		    CTL_DEV);
	if (fd < 0)
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

/*
 * A command of farswapctl: its name, what runs it, a line for the list of
 * commands, and its usage and help for "farswapctl NAME --help".
 */
struct ctl_command {
	const char *name;
	int (*run)(const struct ctl_command *cmd, int argc, char **argv);
	const char *summary;
	/* What follows "farswapctl NAME"; '\n' starts an indented line. */
	const char *usage;
	/* More about it, after the usage; NULL: nothing more. */
	const char *help;
	/* It prints status, as JSON with the global -j/--json. */
	bool has_json;
};

/* -j/--json before the command: the status commands print JSON. */
static bool json_output;

/*
 * The root below which devstat.c reads /sys, /proc and debugfs: "/" but
 * for the unit tests, which point it at a fake tree.
 */
static const char *sys_root = "/";

/*
 * "usage: farswapctl NAME ARGS", each further line of ARGS indented to
 * stand under the first.
 */
static void print_command_usage(FILE *out, const struct ctl_command *cmd)
{
	int indent = fprintf(out, "usage: %s %s", prog, cmd->name);
	const char *line = cmd->usage;

	if (!*line) {
		fputc('\n', out);
		return;
	}
	indent += fprintf(out, " ");
	for (;;) {
		size_t len = strcspn(line, "\n");

		fprintf(out, "%.*s\n", (int)len, line);
		if (!line[len])
			break;
		line += len + 1;
		fprintf(out, "%*s", indent, "");
	}
}

/* "farswapctl NAME --help": the usage, what more there is to say. */
static void print_command_help(const struct ctl_command *cmd)
{
	print_command_usage(stdout, cmd);
	printf("\n%s.\n", cmd->summary);
	if (cmd->help)
		printf("\n%s", cmd->help);
	printf("\n  -h, --help  show this help\n");
}

/*
 * getopt_long() for a command whose options @opts, @shortopts must hold
 * "h" and {"help"}: prints the command's help and exits 0 on --help, and
 * exits 2 on an option it does not know or that lacks its argument
 * (getopt_long() has said which, prefixed with argv[0]: "farswapctl
 * NAME", set by main()).  Returns the next option, or -1.
 */
static int command_getopt(const struct ctl_command *cmd, int argc,
			  char **argv, const char *shortopts,
			  const struct option *opts)
{
	int c = getopt_long(argc, argv, shortopts, opts, NULL);

	if (c == 'h') {
		print_command_help(cmd);
		exit(0);
	}
	if (c == '?' || c == ':') {
		fprintf(stderr, "Try '%s %s --help'.\n", prog, cmd->name);
		exit(EXIT_USAGE);
	}
	return c;
}

/*
 * The operands after a command's options: at least @min, at most @max;
 * else a usage error.  Returns how many.
 */
static int command_operands(const struct ctl_command *cmd, int argc,
			    char **argv, int min, int max)
{
	int n = argc - optind;

	if (n > max)
		usage_error("%s: unexpected argument '%s' (see '%s %s --help')",
			    cmd->name, argv[optind + max], prog, cmd->name);
	if (n < min)
		usage_error("%s: too few arguments (see '%s %s --help')",
			    cmd->name, prog, cmd->name);
	return n;
}

/* The options of a command with no option but --help. */
static const char help_shortopts[] = "h";
static const struct option help_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * attach's options and the control command's keys they become
 * (docs/control.md): KEY=the option's argument, or KEY=@fixed for a flag.
 * --name is not here: the command names its device last, once.
 */
static const struct attach_key {
	const char *option;
	int val;
	const char *key;
	const char *fixed;
} attach_keys[] = {
	{ "donor", 'd', "donor", NULL },
	{ "size", 's', "size", NULL },
	{ "slab-size", 'S', "slab_size", NULL },
	{ "queues", 'q', "queues", NULL },
	{ "queue-depth", 'D', "queue_depth", NULL },
	{ "io-timeout", 't', "io_timeout_ms", NULL },
	{ "sync-io", 'y', "sync_io", "1" },
	{ "integrity", 'i', "integrity", NULL },
	{ "encrypt", 'e', "encrypt", "1" },
	{ "replicas", 'r', "replicas", NULL },
	{ "read-policy", 'p', "read_policy", NULL },
	{ "stage-kb", 'T', "stage_kb", NULL },
	/* The key's name only: the kernel reads the secret. */
	{ "key", 'k', "key", NULL },
	/* A donor key to pin (its name too); given once for each. */
	{ "donor-key", 'P', "donor_key", NULL },
	/* No key, on purpose: the module refuses a keyless attach without. */
	{ "insecure-no-auth", 'U', "insecure_no_auth", "1" },
};

#define NR_ATTACH_KEYS (sizeof(attach_keys) / sizeof(attach_keys[0]))

static const struct attach_key *attach_key_of(int val)
{
	size_t i;

	for (i = 0; i < NR_ATTACH_KEYS; i++)
		if (attach_keys[i].val == val)
			return &attach_keys[i];
	return NULL;
}

/*
 * /sys/block/@name/donors/<i>/@file of the donor whose address is
 * @addr as the module wrote it ("10.0.0.3:7471"), or of index @addr when
 * it is a number, into @out; false if there is none.
 */
static bool donor_file(const char *name, const char *addr, const char *file,
		       char *out, size_t len)
{
	char path[512], text[256];
	unsigned int i;
	FILE *f;

	for (i = 0; i < 16; i++) {
		bool match;

		snprintf(path, sizeof(path), "%s/sys/block/%s/donors/%u/address",
			 sys_root, name, i);
		f = fopen(path, "r");
		if (!f)
			continue;
		match = fgets(text, sizeof(text), f) != NULL;
		fclose(f);
		text[strcspn(text, "\n")] = '\0';
		match = match && (!strcmp(text, addr) ||
				  (addr[strspn(addr, "0123456789")] == '\0' &&
				   (unsigned int)atoi(addr) == i));
		if (!match)
			continue;
		if (!strcmp(file, "address")) {
			snprintf(out, len, "%s", text);
			return true;
		}
		snprintf(path, sizeof(path), "%s/sys/block/%s/donors/%u/%s",
			 sys_root, name, i, file);
		f = fopen(path, "r");
		if (!f)
			return false;
		if (!fgets(out, (int)len, f))
			out[0] = '\0';
		fclose(f);
		out[strcspn(out, "\n")] = '\0';
		return true;
	}
	return false;
}

/*
 * After an attach that went on without some donors: say which, and why,
 * on stderr (stdout stays the device's path alone).
 */
static void report_left_behind(const char *name)
{
	char index[16], addr[256], state[64], why[256];
	unsigned int i;

	for (i = 0; i < 16; i++) {
		snprintf(index, sizeof(index), "%u", i);
		if (!donor_file(name, index, "address", addr, sizeof(addr)) ||
		    !donor_file(name, index, "state", state, sizeof(state)) ||
		    !strcmp(state, "live"))
			continue;
		if (!donor_file(name, index, "last_error", why, sizeof(why)))
			why[0] = '\0';
		fprintf(stderr, "%s: %s: donor %s is %s%s%s; it joins when it answers\n",
			prog, name, addr, state, why[0] ? ": " : "", why);
	}
}

/*
 * Did the attach fail only because no donor answered, for a reason that
 * may pass (the errors farswap_connect_error_passes() in
 * kmod/donor_state.c lets a degraded attach go on without)?  Then attach
 * exits EX_TEMPFAIL, and farswap-swap tries again later.
 */
static bool attach_may_pass(int err)
{
	switch (err) {
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EADDRNOTAVAIL:
	case ENODEV:
	case ECONNREFUSED:
	case ECONNRESET:
	case ENOSPC:
	case EBUSY:
		return true;
	default:
		return false;
	}
}

static int cmd_attach(const struct ctl_command *cmd, int argc,
		      char **argv)
{
	/*
	 * The table's options, then --name, the host id's two, --key-file,
	 * --donor-key-file and --help.
	 */
	struct option opts[NR_ATTACH_KEYS + 7] = { };
	char shortopts[3 * NR_ATTACH_KEYS + 16] = "";
	static char base[MAX_CMD];
	const char *name = NULL, *given_id = NULL, *id_file = NULL;
	const char *key_file = NULL;
	const char *donor_key_file[DONOR_KEYS_MAX];
	long donor_key_id[DONOR_KEYS_MAX];
	unsigned int nr_donor_key_files = 0, nr_donor_keys = 0;
	bool have_key = false, no_auth = false;
	long key_id = -1;
	const char *host_id;
	bool have_donor = false, have_size = false;
	char line[MAX_CMD + 128], made[64], reason[MAX_RESULT];
	char id[UUID_LEN + 1];
	const struct attach_key *k;
	size_t i, n = 0;
	int c, fd, err;

	for (i = 0; i < NR_ATTACH_KEYS; i++) {
		k = &attach_keys[i];
		opts[i] = (struct option){ k->option,
			k->fixed ? no_argument : required_argument, NULL, k->val };
		shortopts[n++] = k->val;
		if (!k->fixed)
			shortopts[n++] = ':';
	}
	opts[i++] = (struct option){ "name", required_argument, NULL, 'n' };
	opts[i++] = (struct option){ "host-id", required_argument, NULL, 'I' };
	opts[i++] = (struct option){ "hostid-file", required_argument, NULL,
				     'F' };
	opts[i++] = (struct option){ "key-file", required_argument, NULL,
				     'K' };
	opts[i++] = (struct option){ "donor-key-file", required_argument,
				     NULL, 'Q' };
	opts[i] = (struct option){ "help", no_argument, NULL, 'h' };
	memcpy(shortopts + n, "n:I:F:K:Q:h", 12);

	while ((c = command_getopt(cmd, argc, argv, shortopts, opts)) != -1) {
		if (c == 'n') {
			name = device_name(optarg);
			continue;
		}
		if (c == 'I') {
			given_id = optarg;
			continue;
		}
		if (c == 'F') {
			id_file = optarg;
			continue;
		}
		if (c == 'K') {
			key_file = optarg;
			continue;
		}
		if (c == 'Q') {
			if (nr_donor_key_files + nr_donor_keys >= DONOR_KEYS_MAX)
				usage_error("attach: at most %u donor keys (--donor-key-file, --donor-key)",
					    DONOR_KEYS_MAX);
			donor_key_file[nr_donor_key_files++] = optarg;
			continue;
		}
		if (c == 'P' &&
		    nr_donor_key_files + nr_donor_keys++ >= DONOR_KEYS_MAX)
			usage_error("attach: at most %u donor keys (--donor-key-file, --donor-key)",
				    DONOR_KEYS_MAX);
		k = attach_key_of(c);
		if (!k)
			continue;
		append(base, " %s=%s", k->key, k->fixed ?: optarg);
		have_donor |= c == 'd';
		have_size |= c == 's';
		have_key |= c == 'k';
		no_auth |= c == 'U';
	}
	command_operands(cmd, argc, argv, 0, 0);
	if (!have_donor || !have_size)
		usage_error("attach needs --donor and --size (see --help)");
	if (have_key && key_file)
		usage_error("attach: --key and --key-file are one or the other");
	if (no_auth && (have_key || key_file))
		usage_error("attach: --insecure-no-auth is for an attach without --key or --key-file");
	if ((nr_donor_key_files || nr_donor_keys) && !have_key && !key_file)
		usage_error("attach: a donor key is proven with this host's key: give --key-file or --key too");
	/* Before the module: a bad host id or key file is said whether it loads or not. */
	host_id = attach_host_id(given_id, id_file, id);
	if (key_file) {
		key_id = key_file_load(key_file, KEY_FILE_DESC);
		append(base, " key=%s", KEY_FILE_DESC);
	}
	for (i = 0; i < nr_donor_key_files; i++) {
		char desc[64];

		snprintf(desc, sizeof(desc), DONOR_KEY_FILE_DESC "%zu", i);
		donor_key_id[i] = key_file_load(donor_key_file[i], desc);
		append(base, " donor_key=%s", desc);
	}
	ensure_module();
	fd = open_ctl_dev();

	snprintf(line, sizeof(line), "attach%s%s%s%s%s", base,
		 host_id ? " host_id=" : "", host_id ?: "",
		 name ? " name=" : "", name ?: "");
	err = ctl_dev_run(fd, line, made, sizeof(made), reason, sizeof(reason));
	close(fd);
	/* The device copied the secret at attach: the key is done with. */
	if (key_id >= 0)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, key_id);
	for (i = 0; i < nr_donor_key_files; i++)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, donor_key_id[i]);
	if (err && attach_may_pass(err)) {
		fprintf(stderr, "%s: attach failed: %s (%s); try again later\n",
			prog, reason, strerror(err));
		exit(EX_TEMPFAIL);
	}
	if (err == EACCES && key_file)
		die("attach failed: %s (%s); the secret was --key-file %s's: the donors must hold the same (their key-file, or this host's file in their host-keys)",
		    reason, strerror(err), key_file);
	if (err)
		die("attach failed: %s (%s)", reason, strerror(err));
	printf("/dev/%s\n", made);
	report_left_behind(made);
	return 0;
}

static int cmd_detach(const struct ctl_command *cmd, int argc,
		      char **argv)
{
	char line[128], done[64], reason[MAX_RESULT];
	const char *name;
	int fd, err;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	command_operands(cmd, argc, argv, 1, 1);
	name = device_name(argv[optind]);
	ensure_module();
	fd = open_ctl_dev();
	snprintf(line, sizeof(line), "detach name=%s", name);
	err = ctl_dev_run(fd, line, done, sizeof(done), reason, sizeof(reason));
	close(fd);
	if (err)
		die("detach %s failed: %s (%s)", name, reason, strerror(err));
	return 0;
}

/*
 * donor add farswapN ADDR | donor remove farswapN ADDR|INDEX: change a
 * live device's donors.
 */
static int cmd_donor(const struct ctl_command *cmd, int argc, char **argv)
{
	char line[512], done[64], reason[MAX_RESULT], addr[256];
	char state[64] = "", why[256] = "";
	const char *verb, *name, *which;
	bool add;
	int fd, err;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	command_operands(cmd, argc, argv, 3, 3);
	verb = argv[optind];
	if (strcmp(verb, "add") && strcmp(verb, "remove"))
		usage_error("donor: '%s' is neither add nor remove (see '%s donor --help')",
			    verb, prog);
	add = !strcmp(verb, "add");
	name = device_name(argv[optind + 1]);
	which = argv[optind + 2];
	snprintf(addr, sizeof(addr), "%s", which);
	/* remove takes the index status shows, or the address. */
	if (!add && which[strspn(which, "0123456789")] == '\0' &&
	    !donor_file(name, which, "address", addr, sizeof(addr)))
		die("%s has no donor %s", name, which);
	ensure_module();
	fd = open_ctl_dev();
	snprintf(line, sizeof(line), "donor_%s name=%s donor=%s", verb, name,
		 addr);
	err = ctl_dev_run(fd, line, done, sizeof(done), reason, sizeof(reason));
	close(fd);
	if (err)
		die("donor %s %s %s failed: %s (%s)", verb, name, which, reason,
		    strerror(err));
	if (!add) {
		printf("%s: donor %s removed\n", name, addr);
		return 0;
	}
	/* The module writes the address with its port: find it by that. */
	if (!strchr(addr, ']') && !strchr(addr, ':'))
		strncat(addr, ":7471", sizeof(addr) - strlen(addr) - 1);
	donor_file(name, addr, "state", state, sizeof(state));
	donor_file(name, addr, "last_error", why, sizeof(why));
	printf("%s: donor %s added, %s%s%s%s\n", name, addr,
	       state[0] ? state : "?", strcmp(state, "live") && why[0] ?
	       " (last error: " : "", strcmp(state, "live") ? why : "",
	       strcmp(state, "live") && why[0] ? ")" : "");
	return 0;
}

/*
 * srv NAME: the donors a DNS SRV name lists, so that a fleet adds donors
 * by adding records (farswap-swap's donors-srv).  glibc's resolver: the
 * nameservers of /etc/resolv.conf, RES_OPTIONS and all.
 */
#define SRV_ANSWER_MAX	65536
/* Exit status when the resolver could not answer: try again later. */
#define EXIT_TEMPFAIL	EX_TEMPFAIL

/*
 * NULL but for the unit tests, which point the resolver (_res, which
 * getaddrinfo() uses too once changed) at their own nameserver.
 */
static void (*resolver_override)(void);

struct srv_record {
	unsigned int priority, weight, port;
	char target[NS_MAXDNAME];
};

/*
 * RFC 2782 order, made deterministic: priority ascending, then weight
 * descending, then the target's name.  Every record becomes a donor, so
 * the weighted random pick among equals would only make the list change
 * from one lookup to the next (and refresh see changes that are none).
 */
static int srv_compare(const void *a, const void *b)
{
	const struct srv_record *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return strcasecmp(x->target, y->target);
}

/*
 * res_query()'s failure as farswapctl says it: exits 1 when the name has
 * no records, 75 when the resolver could not answer.
 */
static void srv_query_failed(const char *name)
{
	switch (h_errno) {
	case HOST_NOT_FOUND:
		die("srv: %s does not exist (NXDOMAIN): check the name (e.g. _farswap._tcp.example.net) and its zone",
		    name);
	case NO_DATA:
		die("srv: %s has no SRV records: add one per donor (_farswap._tcp.NAME. SRV PRIORITY WEIGHT PORT TARGET.)",
		    name);
	case TRY_AGAIN:
		fprintf(stderr, "%s: srv: no nameserver answered for %s (%s): try again later\n",
			prog, name, errno ? strerror(errno) : "server failure");
		exit(EXIT_TEMPFAIL);
	default:
		die("srv: the nameserver refused the query for %s (REFUSED, FORMERR or NOTIMP): check /etc/resolv.conf",
		    name);
	}
}

/*
 * The SRV records of @answer (@len bytes) into @recs (at most @max);
 * returns how many.  Other records of the answer (a CNAME on the way)
 * are skipped; one that cannot be parsed is a malformed answer.
 */
static size_t srv_parse(const char *name, const unsigned char *answer,
			int len, struct srv_record *recs, size_t max)
{
	size_t n = 0;
	ns_msg msg;
	ns_rr rr;
	int i;

	if (ns_initparse(answer, len, &msg))
		die("srv: the answer for %s is malformed (%s)", name,
		    strerror(errno));
	for (i = 0; i < ns_msg_count(msg, ns_s_an) && n < max; i++) {
		const unsigned char *rd;
		struct srv_record *r = &recs[n];

		if (ns_parserr(&msg, ns_s_an, i, &rr))
			die("srv: the answer for %s is malformed: record %d cannot be parsed",
			    name, i);
		if (ns_rr_type(rr) != ns_t_srv || ns_rr_class(rr) != ns_c_in)
			continue;
		rd = ns_rr_rdata(rr);
		if (ns_rr_rdlen(rr) < 7 ||
		    dn_expand(ns_msg_base(msg), ns_msg_end(msg), rd + 6,
			      r->target, sizeof(r->target)) < 0)
			die("srv: the answer for %s is malformed: an SRV record too short",
			    name);
		r->priority = ns_get16(rd);
		r->weight = ns_get16(rd + 2);
		r->port = ns_get16(rd + 4);
		n++;
	}
	return n;
}

/*
 * @target's address as attach takes it, with @port: "ADDR:PORT", or
 * "[ADDR]:PORT" for IPv6.  One address per target, getaddrinfo()'s first
 * (RFC 6724: the one this host would connect to): a target is one
 * farswapd, and listing it twice would put two replicas on one machine.
 * Returns 0, or getaddrinfo()'s error.
 */
static int srv_target_address(const char *target, unsigned int port,
			      char *out, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	char host[NS_MAXDNAME + 1], text[INET6_ADDRSTRLEN];
	struct addrinfo *res;
	const void *addr;
	int ret;

	/* SRV targets are absolute: no search domain. */
	snprintf(host, sizeof(host), "%s.", target);
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret)
		return ret;
	if (res->ai_family == AF_INET6)
		addr = &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	else
		addr = &((struct sockaddr_in *)res->ai_addr)->sin_addr;
	inet_ntop(res->ai_family, addr, text, sizeof(text));
	snprintf(out, len, res->ai_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 text, port);
	freeaddrinfo(res);
	return 0;
}

/*
 * Print each record's donor, one a line, in @recs' order, each once.
 * A target without an address is skipped, with a warning.  Returns how
 * many were printed; *@temporary is set when a target could not be
 * resolved for now (the list is then incomplete).
 */
static size_t srv_print_donors(const struct srv_record *recs, size_t n,
			       bool *temporary)
{
	char (*printed)[INET6_ADDRSTRLEN + 8];
	size_t i, j, found = 0;
	int ret;

	printed = calloc(n, sizeof(*printed));
	if (!printed)
		die("srv: out of memory");
	for (i = 0; i < n; i++) {
		if (!recs[i].target[0])
			continue;	/* ".": no service there */
		ret = srv_target_address(recs[i].target, recs[i].port,
					 printed[found], sizeof(printed[0]));
		if (ret) {
			fprintf(stderr, "%s: srv: warning: skipping %s (port %u): %s\n",
				prog, recs[i].target, recs[i].port,
				ret == EAI_NONAME || ret == EAI_NODATA ?
				"it has no address (no A nor AAAA record)" :
				gai_strerror(ret));
			*temporary |= ret == EAI_AGAIN;
			continue;
		}
		for (j = 0; j < found; j++)
			if (!strcmp(printed[j], printed[found]))
				break;
		if (j < found)
			continue;	/* two records, one donor */
		printf("%s\n", printed[found++]);
	}
	free(printed);
	return found;
}

static int cmd_srv(const struct ctl_command *cmd, int argc, char **argv)
{
	static unsigned char answer[SRV_ANSWER_MAX];
	/* 256 records: far more than a device's 16 donors. */
	static struct srv_record recs[256];
	bool temporary = false;
	const char *name;
	size_t n, found;
	int len;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	command_operands(cmd, argc, argv, 1, 1);
	name = argv[optind];
	if (res_init())
		die("srv: cannot initialise the resolver (/etc/resolv.conf)");
	if (resolver_override)
		resolver_override();
	errno = 0;
	len = res_query(name, ns_c_in, ns_t_srv, answer, sizeof(answer));
	if (len < 0)
		srv_query_failed(name);
	n = srv_parse(name, answer, len, recs, sizeof(recs) / sizeof(recs[0]));
	if (!n)
		die("srv: %s has no SRV records: add one per donor (_farswap._tcp.NAME. SRV PRIORITY WEIGHT PORT TARGET.)",
		    name);
	/* RFC 2782: a lone target "." says the service is not offered. */
	if (n == 1 && !recs[0].target[0])
		die("srv: %s says there is no such service (its one SRV record's target is \".\")",
		    name);
	qsort(recs, n, sizeof(recs[0]), srv_compare);
	found = srv_print_donors(recs, n, &temporary);
	if (fflush(stdout))
		die("srv: cannot write the donors: %s", strerror(errno));
	if (temporary) {
		/* A partial list would make refresh remove live donors. */
		fprintf(stderr, "%s: srv: some targets of %s could not be resolved for now: try again later\n",
			prog, name);
		exit(EXIT_TEMPFAIL);
	}
	if (!found)
		die("srv: no target of %s has an address", name);
	return 0;
}

/* status without --json: every device, or just @only, as text. */
static int print_status_text(const char *only)
{
	struct fsh_host h;
	char err[256];
	int ret;

	if (fsh_read(&h, sys_root, only, err, sizeof(err))) {
		fsh_free(&h);
		die("%s", err);
	}
	ret = fsh_text(&h, stdout);
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

	ret = fsh_read(&h, sys_root, only, err, sizeof(err));
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

/* status --check: the health of every device, or @only; exit 0, 1 or 2. */
static int print_status_check(const char *only)
{
	struct fsh_host h;
	char err[256];
	int ret;

	if (fsh_read(&h, sys_root, only, err, sizeof(err))) {
		fsh_free(&h);
		fprintf(stderr, "%s: %s\n", prog, err);
		return FSH_FAILING;
	}
	ret = fsh_check(&h, stdout);
	fsh_free(&h);
	return ret;
}

/* status [-j|--json | -c|--check] [farswapN]: JSON also with the global -j. */
static int cmd_status(const struct ctl_command *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	bool json = json_output, check = false;
	int c;

	while ((c = command_getopt(cmd, argc, argv, "jch", opts)) != -1) {
		json |= c == 'j';
		check |= c == 'c';
	}
	if (command_operands(cmd, argc, argv, 0, 1))
		only = device_name(argv[optind]);
	if (json && check)
		usage_error("status: --json and --check are one or the other");
	if (check)
		return print_status_check(only);
	if (json)
		return print_status_json(only);
	return print_status_text(only);
}

/* metrics [--output FILE]: Prometheus text, to stdout or atomically to FILE. */
static int cmd_metrics(const struct ctl_command *cmd, int argc,
		       char **argv)
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
	int ret;

	while (command_getopt(cmd, argc, argv, "o:h", opts) != -1)
		output = optarg;	/* -o, the only option that returns */
	command_operands(cmd, argc, argv, 0, 0);
	if (fsh_read(&h, sys_root, NULL, err, sizeof(err))) {
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

/* version, --version: ours, and the loaded module's if there is one. */
static int cmd_version(const struct ctl_command *cmd, int argc, char **argv)
{
	char *v;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	command_operands(cmd, argc, argv, 0, 0);
	v = read_file(CTL_DIR "/version");
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
static int cmd_list(const struct ctl_command *cmd, int argc, char **argv)
{
	struct fsh_host h;
	char err[256];
	size_t i;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	command_operands(cmd, argc, argv, 0, 0);
	if (fsh_read(&h, sys_root, NULL, err, sizeof(err))) {
		fsh_free(&h);
		die("%s", err);
	}
	for (i = 0; i < h.nr_devices; i++)
		printf("%s\n", h.devices[i].name);
	fsh_free(&h);
	return 0;
}

/*
 * A keyring as keyctl(1) names it: @u, @s, @p, @t, or a key's serial
 * number.  Returns the serial add_key(2) takes.
 */
static long keyring_of(const char *name)
{
	static const struct {
		const char *name;
		long serial;
	} special[] = {
		{ "@u", KEY_SPEC_USER_KEYRING },
		{ "@s", KEY_SPEC_SESSION_KEYRING },
		{ "@p", KEY_SPEC_PROCESS_KEYRING },
		{ "@t", KEY_SPEC_THREAD_KEYRING },
	};
	unsigned long serial;
	char *end;
	size_t i;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!strcmp(name, special[i].name))
			return special[i].serial;
	errno = 0;
	serial = strtoul(name, &end, 10);
	if (!isdigit((unsigned char)*name) || *end || errno || !serial ||
	    serial > 0x7fffffff)
		usage_error("add-key: --keyring '%s' is none of @u @s @p @t or a keyring's serial number",
			    name);
	return (long)serial;
}

/*
 * add-key DESC --key-file FILE: the secret of FILE as the logon key DESC,
 * for attach --key DESC (and the module parameters and scripts that name
 * a key): the decoded 32 bytes, which is what the module takes, not the
 * file's text as keyctl padd would put there.
 */
static int cmd_add_key(const struct ctl_command *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key-file", required_argument, NULL, 'K' },
		{ "keyring", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_file = NULL, *keyring_name = "@u", *desc;
	char where[64];
	long keyring, id;
	int c;

	while ((c = command_getopt(cmd, argc, argv, "K:r:h", opts)) != -1) {
		if (c == 'K')
			key_file = optarg;
		else if (c == 'r')
			keyring_name = optarg;
	}
	command_operands(cmd, argc, argv, 1, 1);
	desc = argv[optind];
	if (!key_file)
		usage_error("add-key needs --key-file FILE (see '%s add-key --help')",
			    prog);
	/* The kernel refuses a logon key without its "prefix:". */
	if (!strchr(desc, ':') || desc[0] == ':')
		usage_error("add-key: '%s' is no logon key name: PREFIX:NAME, as farswap:pool",
			    desc);
	keyring = keyring_of(keyring_name);
	snprintf(where, sizeof(where), "keyring %s", keyring_name);
	id = key_file_add(key_file, desc, keyring, where);
	printf("%ld\n", id);
	return 0;
}

/* gen-key [FILE]: a fresh key, to a new FILE (mode 0600) or to stdout. */
static int cmd_gen_key(const struct ctl_command *cmd, int argc, char **argv)
{
	char err[512];

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	if (fs_keyfile_generate(command_operands(cmd, argc, argv, 0, 1) ?
				argv[optind] : NULL, err, sizeof(err)))
		die("gen-key: %s", err);
	return 0;
}

static int cmd_help(const struct ctl_command *cmd, int argc, char **argv);

static const struct ctl_command commands[] = {
	{
		.name = "attach",
		.run = cmd_attach,
		.summary = "create a device on donors' memory and print its path",
		.usage = "--donor ADDR[:PORT] [--donor ...] --size SIZE\n"
			 "[--slab-size SIZE] [--name farswapN] [--queues N]\n"
			 "[--queue-depth N] [--io-timeout MS] [--sync-io]\n"
			 "[--integrity siphash|crc32c|off | --encrypt]\n"
			 "[--replicas N] [--read-policy fastest|round-robin]\n"
			 "[--stage-kb N]\n"
			 "[--key-file FILE | --key PREFIX:NAME | --insecure-no-auth]\n"
			 "[--donor-key-file FILE ... | --donor-key PREFIX:NAME ...]\n"
			 "[--host-id UUID | --hostid-file FILE]",
		.help = "attach creates /dev/farswapN, swapping to the donors' memory (farswapd\n"
			"runs there), and prints its name; then: mkswap /dev/farswapN; swapon it.\n"
			"SIZE takes K, M, G or T.  ADDR is IPv4, or [IPv6] when a port follows.\n"
			"--stage-kb N: host memory per write queue a swap-out completes in, written\n"
			"to the donors from there (default 4096; 0: every swap-out waits for them).\n"
			"--encrypt seals every page on this host (ChaCha20-Poly1305, a key made at\n"
			"attach that never leaves the kernel): donors hold ciphertext only.\n"
			"--key-file FILE authenticates the donors (and this host to them) with the\n"
			"secret FILE holds, the donors' key-file (or this host's file in their\n"
			"host-keys); FILE is root's (or yours), mode 0600, a key gen-key made.\n"
			"The secret goes to the kernel for this attach only.  --key instead names\n"
			"a logon key in your keyrings holding it:\n"
			"  farswapctl add-key farswap:pool --key-file KEYFILE\n"
			"Without either the module refuses the attach: anyone answering at a\n"
			"donor's address would get this host's pages.  --insecure-no-auth\n"
			"attaches without, on purpose (logged as a warning).\n"
			"--donor-key-file FILE (up to 8, with --donor-key) pins the donors: each\n"
			"must prove one of these donor keys (its farswapd donor-key-file) together\n"
			"with this host's key, so no other holder of this host's key can answer as\n"
			"a donor.  Without, the device says its donors are not pinned.\n"
			"Donors that do not answer are left behind and reconnected in the\n"
			"background (status shows them reconnecting, and why) if one answers; attach\n"
			"fails when none does (exit status 75, EX_TEMPFAIL: try again later), or\n"
			"when one refuses (a wrong key, another protocol or slab size; status 1).\n"
			"The device shows donors this host's identity, the UUID of " HOSTID_FILE "\n"
			"(made at install), or of --hostid-file FILE, or --host-id UUID; without\n"
			"the file, the module's (its host_id parameter, else random at each load:\n"
			"donors' host-keys and allowed-hosts id: rules then no longer know the\n"
			"host after a reboot).\n",
	},
	{
		.name = "detach",
		.run = cmd_detach,
		.summary = "remove a device",
		.usage = "farswapN",
		.help = "detach is refused while the device is in use (swapoff first).\n",
	},
	{
		.name = "donor",
		.run = cmd_donor,
		.summary = "add a donor to a live device, or remove one",
		.usage = "add farswapN ADDR[:PORT] | remove farswapN ADDR[:PORT]|INDEX",
		.help = "donor add connects the donor and adds it to the device, in use or not:\n"
			"it takes new slabs at once, and the chunks short of a replica get theirs\n"
			"there.  A donor that does not answer is added and reconnected in the\n"
			"background (it prints its state and last error); one that refuses (a\n"
			"wrong key, another slab size) is not added.\n"
			"donor remove takes a donor that holds no slab of the device out of it:\n"
			"drain it first (its farswapd's drain moves its chunks to the other\n"
			"donors, farswapd(8)); a donor that died holds none once its chunks\n"
			"were unbound.  INDEX is its number in status and /sys/block/farswapN/donors.\n"
			"A device has at most 16 donors over its life, removed ones included.\n",
	},
	{
		.name = "srv",
		.run = cmd_srv,
		.summary = "print the donors a DNS SRV name lists, one ADDR:PORT a line",
		.usage = "NAME",
		.help = "srv looks up the SRV records of NAME (e.g. _farswap._tcp.example.net)\n"
			"with the resolver of /etc/resolv.conf, and prints each target's address\n"
			"and the record's port, ADDR:PORT or [IPv6]:PORT, as attach's donors and\n"
			"donor add take them: by priority, lowest first, then by weight, highest\n"
			"first (every record is a donor: no random pick).  A target is one donor:\n"
			"its first address, as getaddrinfo() sorts them.  A target without an\n"
			"address is skipped with a warning.  Exit status 1 when NAME does not\n"
			"exist or has no SRV records, 75 (EX_TEMPFAIL) when no nameserver\n"
			"answered or a target could not be resolved for now: try again later.\n"
			"farswap-swap's donors-srv (farswap-swap.conf(5)) runs it.\n",
	},
	{
		.name = "gen-key",
		.run = cmd_gen_key,
		.summary = "make a key: to a new FILE (mode 0600), or print it",
		.usage = "[FILE]",
		.help = "gen-key makes a fresh key (32 random bytes) in the format every key\n"
			"file has (attach's and add-key's, farswapd's key-file and host-keys):\n"
			"  FARSWAP-1:00:<base64 of the secret and its CRC-32>:\n"
			"FILE is created, mode 0600; an existing FILE is never replaced (exit\n"
			"status 1).  Without FILE the key goes to standard output.  Give the\n"
			"host and its donors the same key (farswapd makes one too).\n",
	},
	{
		.name = "add-key",
		.run = cmd_add_key,
		.summary = "put a key file's secret in a keyring, as a logon key",
		.usage = "PREFIX:NAME --key-file FILE [--keyring KEYRING]",
		.help = "add-key reads and checks FILE as attach reads its key file, adds its\n"
			"secret (the 32 bytes the key decodes to) as the logon key PREFIX:NAME\n"
			"to KEYRING (@u, the user keyring, by default; @s, @p, @t or a\n"
			"keyring's serial number) and prints the key's serial number.  A logon\n"
			"key cannot be read back by any process; the module finds it there\n"
			"when attach names it.  A key file made before keys had a format is\n"
			"refused, as everywhere: make a new key (gen-key).\n",
	},
	{
		.name = "status",
		.run = cmd_status,
		.summary = "show every device, or one, as text or JSON",
		.usage = "[-j|--json | -c|--check] [farswapN]",
		.help = "-j, --json (here or before the command) prints every device as one\n"
			"JSON document (docs/json.md).\n"
			"-c, --check prints a line per device, healthy, degraded or failing and\n"
			"why, and exits 0 if every device is healthy (or there is none), 1 if\n"
			"one is degraded (a donor not live, chunks short of a replica: nothing\n"
			"lost yet), 2 if one is failing (no donor live, pages lost, the module\n"
			"not loaded), for monitoring scripts.\n",
		.has_json = true,
	},
	{
		.name = "list",
		.run = cmd_list,
		.summary = "print the name of every device, one a line",
		.usage = "",
	},
	{
		.name = "metrics",
		.run = cmd_metrics,
		.summary = "print the host's Prometheus metrics",
		.usage = "[--output FILE]",
		.help = "metrics prints Prometheus metrics, or with --output replaces FILE\n"
			"atomically with them (for node_exporter's textfile collector;\n"
			"docs/metrics.md).\n",
	},
	{
		.name = "version",
		.run = cmd_version,
		.summary = "print farswapctl's version and the loaded module's",
		.usage = "",
	},
	{
		.name = "help",
		.run = cmd_help,
		.summary = "list the commands, or show one's usage and options",
		.usage = "[COMMAND]",
	},
	{ NULL },
};

/* "farswapctl --help": the global options and the table of commands. */
static void print_commands(FILE *out)
{
	const struct ctl_command *cmd;

	fprintf(out,
		"usage: %s [-j|--json] COMMAND [ARGS]\n"
		"       %s --version\n"
		"       %s --help | help [COMMAND]\n"
		"\n"
		"commands:\n", prog, prog, prog);
	for (cmd = commands; cmd->name; cmd++)
		fprintf(out, "  %-8s  %s\n", cmd->name, cmd->summary);
	fprintf(out,
		"\n"
		"options (before the command):\n"
		"  -j, --json  print JSON (docs/json.md):");
	for (cmd = commands; cmd->name; cmd++)
		if (cmd->has_json)
			fprintf(out, " %s", cmd->name);
	fprintf(out,
		"\n"
		"  -h, --help  show this help\n"
		"  --version   same as the version command\n"
		"\n"
		"'%s COMMAND --help' shows a command's usage and options.\n",
		prog);
}

static const struct ctl_command *find_command(const char *name)
{
	const struct ctl_command *cmd;

	for (cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, name))
			return cmd;
	return NULL;
}

/* help [COMMAND]: the list of commands, or one command's help. */
static int cmd_help(const struct ctl_command *cmd, int argc, char **argv)
{
	const struct ctl_command *about;

	while (command_getopt(cmd, argc, argv, help_shortopts, help_opts) != -1)
		;
	if (!command_operands(cmd, argc, argv, 0, 1)) {
		print_commands(stdout);
		return 0;
	}
	about = find_command(argv[optind]);
	if (!about)
		usage_error("help: unknown command '%s' (see '%s --help')",
			    argv[optind], prog);
	print_command_help(about);
	return 0;
}

/*
 * farswapctl [-j|--json] [--help] [--version] COMMAND [ARGS]: the global
 * options up to the first operand, the command; then the command's own,
 * parsed afresh with argv[0] "farswapctl COMMAND" so that getopt_long()'s
 * complaints name it.
 */
int main(int argc, char **argv)
{
	enum { OPT_VERSION = 0x100 };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	static char cmd_argv0[64];
	const struct ctl_command *cmd;
	int c;

	argv[0] = (char *)prog;
	/* '+': stop at the command, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			print_commands(stdout);
			return 0;
		case OPT_VERSION:
			/* Just "--version", as before: a command of its own. */
			optind = 0;
			return cmd_version(find_command("version"), 1, argv);
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		print_commands(stderr);
		return EXIT_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		usage_error("unknown command '%s' (see '%s --help')",
			    argv[optind], prog);
	if (json_output && !cmd->has_json)
		usage_error("%s prints no status: -j/--json is for status",
			    cmd->name);
	snprintf(cmd_argv0, sizeof(cmd_argv0), "%s %s", prog, cmd->name);
	argv += optind;
	argc -= optind;
	argv[0] = cmd_argv0;
	optind = 0;	/* glibc: start afresh, with a new argv */
	return cmd->run(cmd, argc, argv);
}
