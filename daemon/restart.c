// SPDX-License-Identifier: GPL-2.0
/*
 * The restart's plumbing (restart.h): fds in and out of systemd's fd
 * store, the exec of the next farswapd, and systemd's job for the unit.
 * What the fds hold (the pool, its state table) is slabmem.c's and
 * keep.c's; what farswapd does with them is farswapd.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "restart.h"

/*
 * Set by an exec'ing farswapd (fsd_restart_exec()): whether systemd's fd
 * store holds the fds it passes, which the fds cannot tell.
 */
#define FSD_ENV_IN_STORE "FARSWAPD_FDSTORE"

/*
 * The fds named pool and pool-state that systemd (from its fd store) or
 * the last farswapd (its exec) passed, by the sd_listen_fds protocol.
 * Any other fd passed is closed: farswapd has no use for it.
 */
void fsd_restart_take_fds(struct fsd_handed *h)
{
	const char *env;
	char **names = NULL;
	int n, i;

	h->pool = h->state = -1;
	h->in_store = false;
	n = sd_listen_fds_with_names(1, &names);
	if (n <= 0) {
		unsetenv(FSD_ENV_IN_STORE);
		return;
	}
	for (i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		const char *name = names && names[i] ? names[i] : "?";

		if (!strcmp(name, FSD_FDNAME_POOL) && h->pool < 0) {
			h->pool = fd;
		} else if (!strcmp(name, FSD_FDNAME_STATE) && h->state < 0) {
			h->state = fd;
		} else {
			pr_notice("fd %d named '%s' passed at start: not farswapd's, closed",
				  fd, name);
			close(fd);
		}
	}
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	if ((h->pool < 0) != (h->state < 0)) {
		pr_warn("only one of the fds '" FSD_FDNAME_POOL "' and '" FSD_FDNAME_STATE "' was passed at start: starting with a fresh pool");
		if (h->pool >= 0)
			close(h->pool);
		if (h->state >= 0)
			close(h->state);
		h->pool = h->state = -1;
	}
	env = getenv(FSD_ENV_IN_STORE);
	/* Not from an exec: from systemd, whose store they came out of. */
	h->in_store = env ? !strcmp(env, "1") : getenv("NOTIFY_SOCKET") != NULL;
	unsetenv(FSD_ENV_IN_STORE);
}

static int store_one(int fd, const char *name)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
	return sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
}

/*
 * Hand both memfds to systemd's fd store, which keeps them across a
 * restart of the unit (FileDescriptorStoreMax=) and closes them when it
 * really stops.  True when systemd took both: 0 from sd_notify means no
 * systemd to ask (no NOTIFY_SOCKET).
 */
bool fsd_restart_store_fds(int pool, int state)
{
	int a, b;

	/*
	 * A pool the store held but this farswapd could not adopt is still
	 * in it, under the same names: out with it first, or the next start
	 * would be handed both.
	 */
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" FSD_FDNAME_POOL);
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" FSD_FDNAME_STATE);
	a = store_one(pool, FSD_FDNAME_POOL);
	b = a > 0 ? store_one(state, FSD_FDNAME_STATE) : 0;

	if (a < 0 || b < 0)
		pr_warn("cannot hand the pool to systemd's fd store: %s; a restart will lose the hosts' pages",
			strerror(-(a < 0 ? a : b)));
	return a > 0 && b > 0;
}

/* @fd at @target, open across exec; -errno. */
static int place_fd(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0) ? -errno : 0;
	return dup2(fd, target) < 0 ? -errno : 0;
}

/*
 * Become a new farswapd (the binary at @exe, maybe upgraded, with the
 * same @argv) that adopts the pool: @pool and @state as fds 3 and 4, named
 * as systemd names its store's, so that both starts are one code path.
 * Every other fd is CLOEXEC.  Returns only on failure, -errno.
 */
int fsd_restart_exec(const char *exe, char **argv, int pool, int state,
		     bool in_store)
{
	char pid[32];
	int p, s, ret;

	/* Out of the way of 3 and 4 first: either may be the other's target. */
	p = fcntl(pool, F_DUPFD_CLOEXEC, 10);
	s = fcntl(state, F_DUPFD_CLOEXEC, 10);
	if (p < 0 || s < 0)
		return -errno;
	ret = place_fd(p, SD_LISTEN_FDS_START);
	if (!ret)
		ret = place_fd(s, SD_LISTEN_FDS_START + 1);
	if (ret)
		return ret;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (setenv("LISTEN_FDS", "2", 1) || setenv("LISTEN_PID", pid, 1) ||
	    setenv("LISTEN_FDNAMES", FSD_FDNAME_POOL ":" FSD_FDNAME_STATE, 1) ||
	    setenv(FSD_ENV_IN_STORE, in_store ? "1" : "0", 1))
		return -errno;
	execv(exe, argv);
	return -errno;
}

/*
 * The binary this farswapd runs, resolved now: an upgrade replaces the
 * file, after which /proc/self/exe names the old, deleted one.
 */
int fsd_restart_self_exe(char *buf, size_t len)
{
	char path[PATH_MAX];

	if (!realpath("/proc/self/exe", path))
		return -errno;
	if (strlen(path) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, path, strlen(path) + 1);
	return 0;
}

static bool is_restart_job(const char *type)
{
	static const char *const restarts[] = {
		"restart", "try-restart", "reload-or-restart",
		"try-reload-or-restart",
	};
	size_t i;

	for (i = 0; i < sizeof(restarts) / sizeof(restarts[0]); i++)
		if (!strcmp(type, restarts[i]))
			return true;
	return false;
}

/* The object path of the unit of @pid, into @path. */
static int unit_of_pid(sd_bus *bus, uint32_t pid, char *path, size_t len,
		       sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	const char *p;
	int r;

	r = sd_bus_call_method(bus, "org.freedesktop.systemd1",
			       "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager",
			       "GetUnitByPID", e, &reply, "u", pid);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &p);
	if (r >= 0)
		snprintf(path, len, "%s", p);
	sd_bus_message_unref(reply);
	return r;
}

/* The type of the job the unit at @unit waits on, "" when none. */
static int unit_job_type(sd_bus *bus, const char *unit, char *type,
			 size_t len, sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	const char *job_path;
	char *t = NULL;
	uint32_t job_id = 0;
	int r;

	type[0] = '\0';
	r = sd_bus_get_property(bus, "org.freedesktop.systemd1", unit,
				"org.freedesktop.systemd1.Unit", "Job", e,
				&reply, "(uo)");
	if (r >= 0)
		r = sd_bus_message_read(reply, "(uo)", &job_id, &job_path);
	if (r >= 0 && job_id)
		r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1",
					       job_path,
					       "org.freedesktop.systemd1.Job",
					       "JobType", e, &t);
	if (r >= 0 && t)
		snprintf(type, len, "%s", t);
	free(t);
	sd_bus_message_unref(reply);
	return r;
}

/*
 * Is systemd restarting the unit whose main process is $MAINPID (set for
 * ExecStop=)?  During the stop half of systemctl restart the unit's job
 * is of type "restart" (systemd 252 turns it into "start" only once the
 * stop is done); try-restart and the reload-or-restart kinds collapse to
 * it, and are taken as such if they ever show.  1: restarting, 0: not
 * (or not under systemd), -errno: could not tell, with why in @why.
 */
int fsd_systemd_restarting(char *why, size_t len)
{
	const char *mainpid = getenv("MAINPID");
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char unit[256], type[64];
	sd_bus *bus = NULL;
	unsigned long pid;
	char *end;
	int r;

	why[0] = '\0';
	if (!mainpid || !*mainpid)
		return 0;
	errno = 0;
	pid = strtoul(mainpid, &end, 10);
	if (errno || *end || !pid || pid > UINT32_MAX) {
		snprintf(why, len, "MAINPID=%s is not a pid", mainpid);
		return -EINVAL;
	}
	r = sd_bus_open_system(&bus);
	if (r >= 0)
		r = unit_of_pid(bus, (uint32_t)pid, unit, sizeof(unit), &e);
	if (r >= 0)
		r = unit_job_type(bus, unit, type, sizeof(type), &e);
	if (r < 0)
		snprintf(why, len, "asking systemd for the job of pid %lu: %s",
			 pid, e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	sd_bus_flush_close_unref(bus);
	if (r < 0)
		return r;
	snprintf(why, len, "job %s", type[0] ? type : "none");
	return is_restart_job(type) ? 1 : 0;
}
