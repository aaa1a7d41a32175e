// SPDX-License-Identifier: GPL-2.0
/*
 * The stats socket, both ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "statsock.h"

static int fill_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

/* Create the socket's directory (one level) and listen; -errno on failure. */
int fsd_stats_listen(const char *path)
{
	struct sockaddr_un sun;
	char dir[sizeof(sun.sun_path)];
	char *slash;
	int fd, ret;

	ret = fill_addr(&sun, path);
	if (ret)
		return ret;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket left by a daemon that died: replace it unless live. */
	if (!connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, 0660) || listen(fd, 16)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

void fsd_stats_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(path);
}

/* Answer every pending client; never blocks (drops a slow reader). */
void fsd_stats_serve(int fd, const char *text, size_t len)
{
	int c;

	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
	       0) {
		ssize_t n = send(c, text, len, MSG_NOSIGNAL);

		if (n != (ssize_t)len)
			pr_debug("stats client took %zd of %zu bytes", n, len);
		close(c);
	}
}

/* farswapd --stats: print what the running daemon says. */
int fsd_stats_query(const char *path, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = 5 };
	struct sockaddr_un sun;
	char buf[4096];
	ssize_t n;
	int fd;

	if (!path || !*path) {
		snprintf(err, errlen, "the stats socket is disabled (stats-socket none)");
		return -EINVAL;
	}
	if (fill_addr(&sun, path)) {
		snprintf(err, errlen, "stats socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		snprintf(err, errlen,
			 "cannot reach farswapd at %s: %s (is it running?)",
			 path, strerror(errno));
		close(fd);
		return -ECONNREFUSED;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "reading %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The JSON socket's path: @path with ".json" appended. */
int fsd_stats_json_path(const char *path, char *out, size_t len)
{
	struct sockaddr_un sun;
	int n;

	if (!path || !*path)
		return -EINVAL;
	n = snprintf(out, len, "%s.json", path);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	return 0;
}
