// SPDX-License-Identifier: GPL-2.0
/*
 * The stats socket: served text arrives whole, a live socket is not
 * stolen, a stale one is replaced, the socket is removed on close, and
 * 'farswapd --stats' (fsd_stats_query) prints what the daemon serves.
 * Its commands (farswapd --drain): parsed strictly, answered to a bound
 * client only, while a plain client still gets the stats.
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

static void test_ctl_parse(void **state)
{
	(void)state;
	assert_int_equal(fsd_ctl_parse("drain\n", 6), FSD_CTL_DRAIN);
	assert_int_equal(fsd_ctl_parse("drain", 5), FSD_CTL_DRAIN);
	assert_int_equal(fsd_ctl_parse("undrain\n", 8), FSD_CTL_UNDRAIN);
	assert_int_equal(fsd_ctl_parse("drain-status\n", 13), FSD_CTL_STATUS);
	assert_int_equal(fsd_ctl_parse("restart\n", 8), FSD_CTL_RESTART);
	assert_int_equal(fsd_ctl_parse("", 0), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse("\n", 1), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse("drain\n\n", 7), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse("drai", 4), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse("drainx\n", 7), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse(" drain\n", 7), FSD_CTL_BAD);
	assert_int_equal(fsd_ctl_parse("drain\0\n", 7), FSD_CTL_BAD);
}

static void test_ctl_reply_field(void **state)
{
	static const char reply[] = "ok draining\nstate draining\nslabs_left 3\nslabs 9\nwaiting host 1 a: 3 slabs\n";
	char v[8];

	(void)state;
	assert_int_equal(fsd_ctl_reply_field(reply, "state", v, sizeof(v)), 0);
	assert_string_equal(v, "drainin");	/* cut to fit */
	assert_int_equal(fsd_ctl_reply_field(reply, "slabs", v, sizeof(v)), 0);
	assert_string_equal(v, "9");
	assert_int_equal(fsd_ctl_reply_field(reply, "slabs_left", v, sizeof(v)), 0);
	assert_string_equal(v, "3");
	assert_int_equal(fsd_ctl_reply_field(reply, "ok", v, sizeof(v)), 0);
	assert_int_equal(fsd_ctl_reply_field(reply, "refusals", v, sizeof(v)),
			 -ENOENT);
	assert_int_equal(fsd_ctl_reply_field("", "state", v, sizeof(v)),
			 -ENOENT);
}

static int fake_ctl(void *ctx, const struct fsd_ctl_req *req, char *reply,
		    size_t len)
{
	static const char *const names[] = { "bad", "drain", "undrain",
					     "status" };

	(void)ctx;
	return snprintf(reply, len, "ok %s\nstate draining\nuid %u\n",
			names[req->cmd], (unsigned int)req->uid);
}

/* A bound client's command is answered; a plain client gets the stats. */
static void test_ctl_query(void **state)
{
	static const char text[] = "pressure no\n";
	char reply[256], err[256], buf[64];
	int lfd, fd;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_not_equal(fsd_ctl_query(path, "drain", reply, sizeof(reply),
					   err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot reach farswapd"));
	assert_int_equal(fsd_ctl_query("", "drain", reply, sizeof(reply), err,
				       sizeof(err)), -EINVAL);
	lfd = fsd_stats_listen(path);
	assert_true(lfd >= 0);
	pid = fork();
	if (!pid) {
		for (int i = 0; i < 500; i++) {
			fsd_stats_serve_ctl(lfd, text, strlen(text), fake_ctl,
					    NULL);
			usleep(10000);
		}
		_exit(0);
	}
	assert_int_equal(fsd_ctl_query(path, "drain", reply, sizeof(reply),
				       err, sizeof(err)), 0);
	assert_non_null(strstr(reply, "ok drain\nstate draining\n"));
	assert_int_equal(fsd_ctl_query(path, "drain-status", reply,
				       sizeof(reply), err, sizeof(err)), 0);
	assert_non_null(strstr(reply, "ok status\n"));
	/* An unknown word: the daemon says so, the client returns it. */
	assert_int_equal(fsd_ctl_query(path, "reboot", reply, sizeof(reply),
				       err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "unknown command"));
	/* A plain client, as ever: the stats, at once. */
	fd = client();
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_int_equal(n, (ssize_t)strlen(text));
	buf[n] = '\0';
	assert_string_equal(buf, text);
	close(fd);
	kill(pid, 9);
	waitpid(pid, NULL, 0);
	fsd_stats_close(lfd, path);
}

/* A daemon that serves its stats to everyone (no commands): said so. */
static void test_ctl_old_daemon(void **state)
{
	static const char text[] = "failure_domain a\n";
	char reply[256], err[256];
	int lfd;
	pid_t pid;

	(void)state;
	lfd = fsd_stats_listen(path);
	assert_true(lfd >= 0);
	pid = fork();
	if (!pid) {
		for (int i = 0; i < 500; i++) {
			fsd_stats_serve(lfd, text, strlen(text));
			usleep(10000);
		}
		_exit(0);
	}
	assert_int_equal(fsd_ctl_query(path, "drain", reply, sizeof(reply),
				       err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "older than --drain"));
	kill(pid, 9);
	waitpid(pid, NULL, 0);
	fsd_stats_close(lfd, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serve),
		cmocka_unit_test(test_stale_socket_replaced),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_ctl_parse),
		cmocka_unit_test(test_ctl_reply_field),
		cmocka_unit_test(test_ctl_query),
		cmocka_unit_test(test_ctl_old_daemon),
	};

	fsd_log_init(FSD_LOG_ERR, false);
	return cmocka_run_group_tests_name("stats", tests, setup, teardown);
}
