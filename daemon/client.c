// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd as a client of the running daemon (--drain, --undrain) and as
 * a checker (--check-config): nothing here pins memory, binds the port or
 * touches another process's slabs, so all of it works beside a running
 * farswapd.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "auth.h"
#include "client.h"
#include "pressure.h"
#include "slabmem.h"
#include "statsock.h"

#define MEMINFO "/proc/meminfo"
#define PSI_MEMORY "/proc/pressure/memory"
/* --drain --wait asks for the drain's state this often. */
#define DRAIN_POLL_MS 1000

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A reply's lines after the first ("ok ..."), to @out. */
static void print_body(FILE *out, const char *reply)
{
	const char *p = strchr(reply, '\n');

	if (p)
		fputs(p + 1, out);
	fflush(out);
}

/* The "waiting host ..." lines of a reply (why the drain waits). */
static void print_waiting(FILE *out, const char *reply)
{
	const char *p = reply;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		if (!strncmp(p, "waiting ", 8))
			fprintf(out, "  %.*s\n", (int)(n - 8), p + 8);
		p = eol ? eol + 1 : NULL;
	}
	fflush(out);
}

/*
 * farswapd --drain [--wait [--timeout DUR]]: 0 once asked (with --wait:
 * once no host holds a slab here, "safe to stop"), 1 with the reason
 * otherwise: the daemon cannot be reached, the drain was undone, or
 * @timeout_ms passed first (then the hosts still holding slabs, and why).
 */
int fsd_client_drain(const char *path, bool wait, uint32_t timeout_ms)
{
	char err[512], state[32], left[32], moved[32], refusals[32];
	char last[160] = "";
	uint64_t start = now_ms(), waited;
	char *reply;
	int ret = 1;

	reply = malloc(FSD_CTL_REPLY_MAX);
	if (!reply) {
		fprintf(stderr, "farswapd: out of memory\n");
		return 1;
	}
	if (fsd_ctl_query(path, "drain", reply, FSD_CTL_REPLY_MAX, err,
			  sizeof(err))) {
		fprintf(stderr, "farswapd: drain: %s\n", err);
		goto out_free;
	}
	printf("%.*s\n", (int)strcspn(reply + 3, "\n"), reply + 3);
	if (!wait) {
		print_body(stdout, reply);
		ret = 0;
		goto out_free;
	}
	for (;;) {
		char line[sizeof(last) + 3 * sizeof(left)];

		if (fsd_ctl_reply_field(reply, "state", state, sizeof(state)) ||
		    fsd_ctl_reply_field(reply, "slabs_left", left,
					sizeof(left)) ||
		    fsd_ctl_reply_field(reply, "bytes_moved", moved,
					sizeof(moved)) ||
		    fsd_ctl_reply_field(reply, "refusals", refusals,
					sizeof(refusals))) {
			fprintf(stderr, "farswapd: drain: the daemon's reply has no drain state\n");
			break;
		}
		if (!strcmp(state, "drained")) {
			printf("drained: no host holds a slab here; safe to stop (%s bytes moved)\n",
			       moved);
			ret = 0;
			break;
		}
		if (strcmp(state, "draining")) {
			fprintf(stderr, "farswapd: the drain was undone (farswapd --undrain)\n");
			break;
		}
		waited = now_ms() - start;
		snprintf(line, sizeof(line), "%s slabs left, %s bytes moved, %s refusals",
			 left, moved, refusals);
		if (strncmp(line, last, sizeof(last) - 1)) {
			printf("draining: %s\n", line);
			print_waiting(stdout, reply);
			snprintf(last, sizeof(last), "%.*s",
				 (int)sizeof(last) - 1, line);
		}
		if (timeout_ms && waited >= timeout_ms) {
			fprintf(stderr, "farswapd: not drained after %" PRIu64 ".%01" PRIu64 " s: %s slabs still held here; stopping now loses the pages that have no other copy\n",
				waited / 1000, waited % 1000 / 100, left);
			print_waiting(stderr, reply);
			break;
		}
		if (timeout_ms && timeout_ms - waited < DRAIN_POLL_MS)
			sleep_ms(timeout_ms - waited);
		else
			sleep_ms(DRAIN_POLL_MS);
		if (fsd_ctl_query(path, "drain-status", reply,
				  FSD_CTL_REPLY_MAX, err, sizeof(err))) {
			fprintf(stderr, "farswapd: drain: %s\n", err);
			break;
		}
	}
out_free:
	free(reply);
	return ret;
}

/*
 * A one-word command on the control socket whose reply is one line:
 * printed, 0; or the error, 1.
 */
static int client_command(const char *path, const char *cmd)
{
	char err[512];
	char *reply = malloc(FSD_CTL_REPLY_MAX);
	int ret = 1;

	if (!reply) {
		fprintf(stderr, "farswapd: out of memory\n");
		return 1;
	}
	if (fsd_ctl_query(path, cmd, reply, FSD_CTL_REPLY_MAX, err,
			  sizeof(err))) {
		fprintf(stderr, "farswapd: %s: %s\n", cmd, err);
	} else {
		printf("%.*s\n", (int)strcspn(reply + 3, "\n"), reply + 3);
		ret = 0;
	}
	free(reply);
	return ret;
}

int fsd_client_undrain(const char *path)
{
	return client_command(path, "undrain");
}

/*
 * farswapd --restart: the running daemon restarts in place, keeping the
 * pool (SIGUSR2's, farswapd(8) RESTART).  0 once it said it will.
 */
int fsd_client_restart(const char *path)
{
	return client_command(path, "restart");
}

int fsd_rdma_devices(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	return n;
}

/* "owner USER:GROUP, mode 0600" of @path, for the check's report. */
static void describe_file(const char *what, const char *path)
{
	struct passwd *pw;
	struct group *gr;
	struct stat st;

	if (stat(path, &st)) {
		printf("%s %s: %s\n", what, path, strerror(errno));
		return;
	}
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	printf("%s %s: owner %s:%s, mode %04o\n", what, path,
	       pw ? pw->pw_name : "?", gr ? gr->gr_name : "?",
	       (unsigned int)(st.st_mode & 07777));
}

int fsd_key_fix(char *buf, size_t len, const char *path, const char *user,
		int ret)
{
	if (ret != -EACCES && ret != -EPERM)
		return snprintf(buf, len, "%s", "");
	return snprintf(buf, len,
			"fix: let user %s read it, keeping root its owner: chown root:%s %s && chmod 640 %s;\n"
			"     or hand it to the unit: LoadCredential=key:%s and --key-file %%d/key on ExecStart=",
			user, user, path, path, path);
}

/* The fix for a key file @user cannot use, after its error line. */
static void key_fix(const char *path, const char *user, int ret)
{
	char fix[1024];

	if (fsd_key_fix(fix, sizeof(fix), path, user, ret) > 0)
		printf("  %s\n", fix);
}

/*
 * The checks of the key files as this process's user: key-file, and each
 * file of host-keys (as a handshake would read it).  Problems found.
 */
static int check_keys(const struct fsd_config *cfg, const char *user)
{
	struct fsd_auth_key key = { .len = 0 };
	char err[512];
	int problems = 0, ret;
	struct dirent *de;
	DIR *dir;

	if (cfg->key_file[0]) {
		ret = fsd_auth_load_key(cfg->key_file, &key, err, sizeof(err));
		fsd_auth_key_clear(&key);
		if (ret) {
			printf("error: as %s: %s\n", user, err);
			key_fix(cfg->key_file, user, ret);
			problems++;
		} else {
			printf("ok: as %s: key-file %s can be read and is a usable secret\n",
			       user, cfg->key_file);
		}
	}
	if (cfg->donor_key_file[0]) {
		ret = fsd_auth_load_key(cfg->donor_key_file, &key, err,
					sizeof(err));
		fsd_auth_key_clear(&key);
		if (ret) {
			printf("error: as %s: %s\n", user, err);
			key_fix(cfg->donor_key_file, user, ret);
			problems++;
		} else {
			printf("ok: as %s: donor-key-file %s can be read and is a usable secret\n",
			       user, cfg->donor_key_file);
		}
	}
	if (!cfg->host_keys[0])
		return problems;
	/* A name no file has: the directory's own checks alone. */
	ret = fsd_auth_load_host_key(cfg->host_keys, "check-config", &key, err,
				     sizeof(err));
	fsd_auth_key_clear(&key);
	if (ret && ret != -ENOENT) {
		printf("error: as %s: %s\n", user, err);
		return problems + 1;
	}
	dir = opendir(cfg->host_keys);
	if (!dir) {
		printf("error: as %s: host-keys %s: cannot list it: %s (hosts' files are opened by name, but this check cannot see them)\n",
		       user, cfg->host_keys, strerror(errno));
		return problems + 1;
	}
	while ((de = readdir(dir))) {
		if (!fsd_auth_host_key_name_ok(de->d_name))
			continue;
		ret = fsd_auth_load_host_key(cfg->host_keys, de->d_name, &key,
					     err, sizeof(err));
		fsd_auth_key_clear(&key);
		if (ret) {
			char path[sizeof(cfg->host_keys) + 258];

			printf("error: as %s: %s\n", user, err);
			snprintf(path, sizeof(path), "%s/%s", cfg->host_keys,
				 de->d_name);
			key_fix(path, user, ret);
			problems++;
		}
	}
	closedir(dir);
	if (!problems)
		printf("ok: as %s: host-keys %s and its files can be read\n",
		       user, cfg->host_keys);
	return problems;
}

/* check_keys() as @pw, in a child that became that user.  Problems. */
static int check_keys_as(const struct fsd_config *cfg, const struct passwd *pw)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("error: cannot check as %s: fork: %s\n", pw->pw_name,
		       strerror(errno));
		return 1;
	}
	if (!pid) {
		if (initgroups(pw->pw_name, pw->pw_gid) ||
		    setgid(pw->pw_gid) || setuid(pw->pw_uid)) {
			printf("error: cannot become %s to check as it: %s\n",
			       pw->pw_name, strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		status = check_keys(cfg, pw->pw_name);
		fflush(stdout);
		_exit(status > 100 ? 100 : status);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * The user the unit runs farswapd as: --check-as, else (as root) the
 * farswap user when it exists.  NULL: check as this process alone.
 */
static const struct passwd *check_user(const struct fsd_args *args)
{
	const struct passwd *pw;
	const char *name = args->check_as;

	if (!name) {
		if (geteuid())
			return NULL;
		name = "farswap";
		pw = getpwnam(name);
		if (pw)
			printf("note: as root: the key files are checked as user %s too (the unit's User=; --check-as USER for another)\n",
			       name);
		return pw;
	}
	pw = getpwnam(name);
	if (!pw) {
		printf("error: --check-as %s: no such user\n", name);
		return NULL;
	}
	if (pw->pw_uid == geteuid())
		return NULL;
	if (geteuid()) {
		printf("note: only root can check as %s; checked as this user (uid %u) alone\n",
		       name, (unsigned int)geteuid());
		return NULL;
	}
	return pw;
}

/*
 * A running farswapd pinned what it donates, which MemAvailable no longer
 * shows: count it back, as a start after that daemon stopped would see it.
 */
static uint64_t running_donation(const struct fsd_config *cfg)
{
	char text[4096], val[32], err[256];
	uint64_t bytes;

	if (fsd_stats_fetch(cfg->stats_socket, text, sizeof(text), err,
			    sizeof(err)))
		return 0;
	if (fsd_ctl_reply_field(text, "bytes_total", val, sizeof(val)))
		return 0;
	bytes = strtoull(val, NULL, 10);
	printf("note: a farswapd is running (stats at %s) and donates %" PRIu64 " bytes: counted as available, as a start after it stopped would see them\n",
	       cfg->stats_socket, bytes);
	return bytes;
}

/*
 * --check-config: every check a start runs that needs none of the
 * daemon's own resources (no memory pinned, no port bound), all of them
 * whatever fails, then 0 if farswapd would start, 1 if not.
 */
int fsd_client_check(struct fsd_config *cfg, const struct fsd_args *args,
		     struct fsd_limits *lim)
{
	const struct passwd *as;
	struct fsd_meminfo mi;
	char err[512], *text;
	int problems = 0;
	bool sized = false;

	text = malloc(8192);
	if (!text) {
		fprintf(stderr, "farswapd: out of memory\n");
		return 1;
	}
	if (fsd_read_meminfo(MEMINFO, PSI_MEMORY, &mi)) {
		printf("error: cannot read %s\n", MEMINFO);
		problems++;
	} else {
		mi.mem_available += running_donation(cfg);
		if (fsd_config_resolve(cfg, mi.mem_total, mi.mem_available,
				       lim, err, sizeof(err))) {
			printf("error: %s\n", err);
			problems++;
		} else {
			sized = true;
		}
	}
	fsd_config_print(cfg, text, 8192);
	fputs(text, stdout);
	free(text);
	if (sized) {
		char cap[16];

		fsd_slab_cap_text(lim->max_slabs_fair, lim->max_slabs_per_host,
				  cap, sizeof(cap));
		printf("resolved donate %" PRIu64 " bytes (%u slabs), headroom %" PRIu64
		       " bytes, hysteresis %" PRIu64 " bytes, max-slabs-per-host %s, alloc-rate %u/%u\n",
		       lim->donate, lim->nr_slabs, lim->headroom,
		       lim->hysteresis, cap, lim->alloc_rate, lim->alloc_burst);
	}
	if (fsd_config_check_auth(cfg, err, sizeof(err))) {
		printf("error: %s\n", err);
		problems++;
	}
	if (cfg->key_file[0])
		describe_file("key-file", cfg->key_file);
	if (cfg->host_keys[0])
		describe_file("host-keys", cfg->host_keys);
	if (cfg->donor_key_file[0])
		describe_file("donor-key-file", cfg->donor_key_file);
	as = check_user(args);
	if (args->check_as && !as && !getpwnam(args->check_as))
		problems++;
	/*
	 * As the unit's user alone when there is one: a key file that user
	 * owns is refused to root (neither this user's nor root's), rightly.
	 */
	if (as) {
		problems += check_keys_as(cfg, as);
	} else {
		struct passwd *me = getpwuid(geteuid());

		problems += check_keys(cfg, me ? me->pw_name : "this user");
	}
	if (sized) {
		if (fsd_memlock_check(lim->donate + (16ull << 20), err,
				      sizeof(err))) {
			printf("error: %s\n", err);
			problems++;
		} else {
			printf("ok: RLIMIT_MEMLOCK lets this process pin %" PRIu64 " bytes (the unit sets LimitMEMLOCK=infinity)\n",
			       lim->donate);
		}
	}
	if (fsd_rdma_devices() <= 0) {
		printf("error: no RDMA device: load a driver (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0)\n");
		problems++;
	} else {
		printf("ok: %d RDMA devices\n", fsd_rdma_devices());
	}
	if (problems) {
		printf("check-config: %d problem%s: farswapd would not start\n",
		       problems, problems == 1 ? "" : "s");
		return 1;
	}
	printf("check-config: ok\n");
	return 0;
}
