// SPDX-License-Identifier: GPL-2.0
/*
 * The stats socket: served text arrives whole, a live socket is not
 * stolen, a stale one is replaced, the socket is removed on close, and
 * 'farswapd --stats' (fsd_stats_query) prints what the daemon serves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "statsock.h"

static char dir[] = "/tmp/fsd-stats-XXXXXX";
static char path[128];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/sub/farswapd.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	char sub[160];

	(void)state;
	unlink(path);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	rmdir(sub);
	rmdir(dir);
	return 0;
}

static int client(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sun.sun_path, path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void test_serve(void **state)
{
	static const char text[] = "slabs_total 16\nhosts 0\n";
	char buf[256];
	struct stat st;
	ssize_t n;
	int lfd, c;

	(void)state;
	lfd = fsd_stats_listen(path);	/* creates the directory too */
	assert_true(lfd >= 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	/* A second daemon must not steal a live socket. */
	assert_int_equal(fsd_stats_listen(path), -EADDRINUSE);
	c = client();
	assert_true(c >= 0);
	fsd_stats_serve(lfd, text, strlen(text));
	n = read(c, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)strlen(text));
	assert_memory_equal(buf, text, strlen(text));
	assert_int_equal(read(c, buf, sizeof(buf)), 0);	/* then EOF */
	close(c);
	/* Nobody waiting: serving returns at once. */
	fsd_stats_serve(lfd, text, strlen(text));
	fsd_stats_close(lfd, path);
	assert_int_not_equal(stat(path, &st), 0);
}

static void test_stale_socket_replaced(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, lfd;

	(void)state;
	/* A socket file nobody listens on, as a crashed daemon leaves it. */
	lfd = fsd_stats_listen(path);
	assert_true(lfd >= 0);
	close(lfd);	/* not fsd_stats_close: the file stays */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sun.sun_path, path);
	assert_int_not_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)),
			     0);
	close(fd);
	lfd = fsd_stats_listen(path);
	assert_true(lfd >= 0);
	fsd_stats_close(lfd, path);
}

static void test_query(void **state)
{
	static const char text[] = "pressure no\n";
	char out[] = "/tmp/fsd-stats-out-XXXXXX", buf[64], err[256];
	int lfd, ofd, saved;
	pid_t pid;
	FILE *f;

	(void)state;
	/* Nobody there: a clear error. */
	assert_int_not_equal(fsd_stats_query(path, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot reach farswapd"));
	assert_int_not_equal(fsd_stats_query("", err, sizeof(err)), 0);

	lfd = fsd_stats_listen(path);
	assert_true(lfd >= 0);
	pid = fork();
	if (!pid) {
		/* The daemon's side: answer one client. */
		int fd = lfd;

		for (int i = 0; i < 500; i++) {
			fsd_stats_serve(fd, text, strlen(text));
			usleep(10000);
		}
		_exit(0);
	}
	ofd = mkstemp(out);
	assert_true(ofd >= 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(ofd, STDOUT_FILENO);
	assert_int_equal(fsd_stats_query(path, err, sizeof(err)), 0);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	kill(pid, 9);
	waitpid(pid, NULL, 0);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, text);
	fclose(f);
	close(ofd);
	unlink(out);
	fsd_stats_close(lfd, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serve),
		cmocka_unit_test(test_stale_socket_replaced),
		cmocka_unit_test(test_query),
	};

	fsd_log_init(FSD_LOG_ERR, false);
	return cmocka_run_group_tests_name("stats", tests, setup, teardown);
}
