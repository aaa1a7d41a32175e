// SPDX-License-Identifier: GPL-2.0
/*
 * The restart's plumbing (restart.c): the pool's fds taken back by the
 * sd_listen_fds protocol, SIGUSR2's exec that passes them as fds 3 and 4,
 * and the answer of --unless-restarting outside systemd.  Each case that
 * moves fds 3 and 4 runs in a child, so the test runner's own are safe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "restart.h"

/* Run @fn in a child; its exit status. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* As systemd (or the last farswapd) passes them: fds 3 and 4, named. */
static void pass_fds(const char *names, int n)
{
	char pid[32], count[8];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(count, sizeof(count), "%d", n);
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", count, 1);
	setenv("LISTEN_FDNAMES", names, 1);
}

static int take_both(void)
{
	struct fsd_handed h;

	if (dup2(memfd_create("test-pool", 0), 3) != 3 ||
	    dup2(memfd_create("test-state", 0), 4) != 4)
		return 10;
	pass_fds("pool:pool-state", 2);
	unsetenv("NOTIFY_SOCKET");
	setenv("FARSWAPD_FDSTORE", "1", 1);
	fsd_restart_take_fds(&h);
	if (h.pool != 3 || h.state != 4)
		return 11;
	if (!h.in_store)
		return 12;
	/* Taken once: the environment no longer offers them. */
	if (getenv("LISTEN_FDS") || getenv("FARSWAPD_FDSTORE"))
		return 13;
	fsd_restart_take_fds(&h);
	return h.pool == -1 && h.state == -1 ? 0 : 14;
}

static void test_take_fds(void **state)
{
	(void)state;
	assert_int_equal(in_child(take_both), 0);
}

/* Without systemd and without an exec's word, not in any store. */
static int take_not_stored(void)
{
	struct fsd_handed h;

	if (dup2(memfd_create("test-pool", 0), 3) != 3 ||
	    dup2(memfd_create("test-state", 0), 4) != 4)
		return 10;
	pass_fds("pool-state:pool", 2);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("FARSWAPD_FDSTORE");
	fsd_restart_take_fds(&h);
	if (h.pool != 4 || h.state != 3)
		return 11;
	return h.in_store ? 12 : 0;
}

static void test_take_fds_not_stored(void **state)
{
	(void)state;
	assert_int_equal(in_child(take_not_stored), 0);
}

/* One of the two alone is no pool: both closed, a fresh start. */
static int take_half(void)
{
	struct fsd_handed h;

	if (dup2(memfd_create("test-pool", 0), 3) != 3)
		return 10;
	pass_fds("pool", 1);
	fsd_restart_take_fds(&h);
	if (h.pool != -1 || h.state != -1)
		return 11;
	return fcntl(3, F_GETFD) == -1 ? 0 : 12;	/* closed */
}

static void test_take_half_refused(void **state)
{
	(void)state;
	assert_int_equal(in_child(take_half), 0);
}

/*
 * SIGUSR2's exec: the pool at 3 and the table at 4 whatever fds they
 * had (here each the other's target), the protocol's environment, and
 * no other fd of ours (CLOEXEC) in the new program.
 */
static int exec_self(void)
{
	static const char script[] =
		"[ \"$LISTEN_FDS\" = 2 ] || exit 20; "
		"[ \"$LISTEN_FDNAMES\" = pool:pool-state ] || exit 21; "
		"[ \"$LISTEN_PID\" = $$ ] || exit 22; "
		"[ \"$FARSWAPD_FDSTORE\" = 0 ] || exit 23; "
		"case $(readlink /proc/self/fd/3) in *test-pool*) ;; *) exit 24;; esac; "
		"case $(readlink /proc/self/fd/4) in *test-state*) ;; *) exit 25;; esac; "
		"[ -e /proc/self/fd/$1 ] && exit 26; exit 0";
	char other[16];
	char *argv[] = { "sh", "-c", (char *)script, "sh", other, NULL };
	int spare;

	if (dup2(memfd_create("test-pool", MFD_CLOEXEC), 4) != 4 ||
	    dup2(memfd_create("test-state", MFD_CLOEXEC), 3) != 3)
		return 10;
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(4, F_SETFD, FD_CLOEXEC);
	spare = memfd_create("test-spare", MFD_CLOEXEC);
	if (spare < 0)
		return 10;
	snprintf(other, sizeof(other), "%d", spare);
	fsd_restart_exec("/bin/sh", argv, 4, 3, false);
	return 11;	/* exec failed */
}

static void test_exec_passes_fds(void **state)
{
	(void)state;
	assert_int_equal(in_child(exec_self), 0);
}

/* An upgrade that removed the binary: the exec fails, and says why. */
static int exec_missing(void)
{
	char *argv[] = { "farswapd", NULL };
	int a = memfd_create("test-pool", MFD_CLOEXEC);
	int b = memfd_create("test-state", MFD_CLOEXEC);

	return fsd_restart_exec("/nonexistent/farswapd", argv, a, b,
				true) == -ENOENT ? 0 : 1;
}

static void test_exec_missing_binary(void **state)
{
	(void)state;
	assert_int_equal(in_child(exec_missing), 0);
}

static void test_self_exe(void **state)
{
	char buf[4096], tiny[4];

	(void)state;
	assert_int_equal(fsd_restart_self_exe(buf, sizeof(buf)), 0);
	assert_true(buf[0] == '/');
	assert_null(strstr(buf, "(deleted)"));
	assert_int_equal(fsd_restart_self_exe(tiny, sizeof(tiny)),
			 -ENAMETOOLONG);
}

/* Outside systemd (no MAINPID) nothing is restarting: drain as before. */
static void test_not_restarting_outside_systemd(void **state)
{
	char why[256];

	(void)state;
	unsetenv("MAINPID");
	assert_int_equal(fsd_systemd_restarting(why, sizeof(why)), 0);
	setenv("MAINPID", "12x", 1);
	assert_int_equal(fsd_systemd_restarting(why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "MAINPID=12x"));
	unsetenv("MAINPID");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_fds),
		cmocka_unit_test(test_take_fds_not_stored),
		cmocka_unit_test(test_take_half_refused),
		cmocka_unit_test(test_exec_passes_fds),
		cmocka_unit_test(test_exec_missing_binary),
		cmocka_unit_test(test_self_exe),
		cmocka_unit_test(test_not_restarting_outside_systemd),
	};

	fsd_log_init(FSD_LOG_ERR - 1, false);	/* quiet */
	return cmocka_run_group_tests_name("restart", tests, NULL, NULL);
}
