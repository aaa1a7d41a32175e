// SPDX-License-Identifier: GPL-2.0
/*
 * The stats socket, both ends, and the commands it takes (drain).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
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

/*
 * The stats text of the running daemon into @buf (NUL-terminated, cut at
 * @len): 0, or -errno with @err saying why.
 */
int fsd_stats_fetch(const char *path, char *buf, size_t len, char *err,
		    size_t errlen)
{
	struct timeval tv = { .tv_sec = 5 };
	struct sockaddr_un sun;
	size_t off = 0;
	ssize_t n;
	int fd, ret = 0;

	if (!len || !path || !*path || fill_addr(&sun, path)) {
		snprintf(err, errlen, "no stats socket");
		return -EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		ret = -errno;
		snprintf(err, errlen, "cannot reach farswapd at %s: %s", path,
			 strerror(errno));
		goto out_close;
	}
	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
out_close:
	buf[off] = '\0';
	close(fd);
	return ret;
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

/*
 * Commands (statsock.h).  A client that bound its socket (an autobound
 * abstract name: farswapd --drain does) sends one; any other gets the
 * stats, as every client always has.  The peer is told apart when it is
 * accepted, before anything is read: no stats client ever waits.
 */
int fsd_ctl_parse(const char *buf, size_t len)
{
	static const struct {
		const char *word;
		int cmd;
	} words[] = {
		{ "drain", FSD_CTL_DRAIN },
		{ "undrain", FSD_CTL_UNDRAIN },
		{ "drain-status", FSD_CTL_STATUS },
		{ "restart", FSD_CTL_RESTART },
	};
	size_t i;

	if (len && buf[len - 1] == '\n')
		len--;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == len &&
		    !memcmp(words[i].word, buf, len))
			return words[i].cmd;
	return FSD_CTL_BAD;
}

/*
 * The value of line "@key VALUE" of a command's reply into @out (at most
 * @outlen with its NUL): 0, or -ENOENT.
 */
int fsd_ctl_reply_field(const char *reply, const char *key, char *out,
			size_t outlen)
{
	size_t klen = strlen(key);
	const char *p = reply;

	if (!outlen)
		return -EINVAL;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		if (n > klen && !strncmp(p, key, klen) && p[klen] == ' ') {
			n -= klen + 1;
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, p + klen + 1, n);
			out[n] = '\0';
			return 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

/* Read one command line from @c, for at most FSD_CTL_READ_MS. */
static ssize_t read_command(int c, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	size_t off = 0;
	int waited;

	for (waited = 0; off < len && waited < FSD_CTL_READ_MS; waited += 50) {
		ssize_t n;

		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			return -errno;
		n = recv(c, buf + off, len - off, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
		if (memchr(buf, '\n', off))
			break;
	}
	return (ssize_t)off;
}

static void serve_command(int c, fsd_ctl_fn fn, void *ctx)
{
	struct fsd_ctl_req req = { .cmd = FSD_CTL_BAD };
	socklen_t clen = sizeof(struct ucred);
	char buf[FSD_CTL_MAX], *reply;
	struct ucred cred;
	ssize_t n;
	int len;

	reply = malloc(FSD_CTL_REPLY_MAX);
	if (!reply)
		return;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		len = snprintf(reply, FSD_CTL_REPLY_MAX,
			       "error cannot tell who asks: %s\n",
			       strerror(errno));
		goto out_send;
	}
	req.uid = cred.uid;
	req.pid = cred.pid;
	/* Reading the stats is for the socket's group; acting, not. */
	if (cred.uid != 0 && cred.uid != geteuid()) {
		len = snprintf(reply, FSD_CTL_REPLY_MAX,
			       "error permission denied: uid %u may read the stats; only root or farswapd's own user (uid %u) may give commands\n",
			       (unsigned int)cred.uid,
			       (unsigned int)geteuid());
		goto out_send;
	}
	n = read_command(c, buf, sizeof(buf));
	if (n > 0)
		req.cmd = fsd_ctl_parse(buf, (size_t)n);
	if (req.cmd == FSD_CTL_BAD) {
		len = snprintf(reply, FSD_CTL_REPLY_MAX,
			       "error unknown command (drain, undrain, drain-status, restart)\n");
		goto out_send;
	}
	len = fn(ctx, &req, reply, FSD_CTL_REPLY_MAX);
out_send:
	if (len > 0 && send(c, reply, (size_t)len, MSG_NOSIGNAL) != len)
		pr_debug("command client took less than the %d bytes of its reply",
			 len);
	free(reply);
}

/*
 * The text socket: the stats to every client, a command's reply to a
 * client that bound its socket (@fn NULL: none is taken).
 */
void fsd_stats_serve_ctl(int fd, const char *text, size_t len, fsd_ctl_fn fn,
			 void *ctx)
{
	struct sockaddr_un peer;
	socklen_t plen = sizeof(peer);
	int c;

	while ((c = accept4(fd, (struct sockaddr *)&peer, &plen,
			    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (fn && plen > offsetof(struct sockaddr_un, sun_path)) {
			serve_command(c, fn, ctx);
		} else {
			ssize_t n = send(c, text, len, MSG_NOSIGNAL);

			if (n != (ssize_t)len)
				pr_debug("stats client took %zd of %zu bytes", n,
					 len);
		}
		close(c);
		plen = sizeof(peer);
	}
}

/*
 * farswapd --drain, --undrain: send @cmd to the running daemon, its reply
 * into @out.  0 when it answered "ok", -EPROTO with @err its reason when
 * it answered "error", or another -errno with @err saying why.
 */
int fsd_ctl_query(const char *path, const char *cmd, char *out, size_t outlen,
		  char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = 10 };
	struct sockaddr_un sun, me = { .sun_family = AF_UNIX };
	size_t off = 0;
	ssize_t n;
	int fd, ret;

	if (!path || !*path) {
		snprintf(err, errlen, "the stats socket is disabled (stats-socket none): farswapd takes no commands");
		return -EINVAL;
	}
	if (fill_addr(&sun, path)) {
		snprintf(err, errlen, "stats socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	/* Bound (autobind: an abstract name): what marks a command client. */
	if (bind(fd, (struct sockaddr *)&me, sizeof(sa_family_t))) {
		ret = -errno;
		snprintf(err, errlen, "bind: %s", strerror(errno));
		goto out_close;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		ret = -errno;
		snprintf(err, errlen, "cannot reach farswapd at %s: %s%s", path,
			 strerror(errno),
			 errno == EACCES ? " (root or farswapd's user only)" :
					   " (is it running?)");
		goto out_close;
	}
	/*
	 * A daemon older than the commands answers every client with its
	 * stats and closes, maybe before the command is sent: no SIGPIPE
	 * then, and what it answered is read and judged below.
	 */
	if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
		if (errno != EPIPE && errno != ECONNRESET) {
			ret = -errno;
			snprintf(err, errlen, "writing to %s: %s", path,
				 strerror(errno));
			goto out_close;
		}
	}
	shutdown(fd, SHUT_WR);
	while (off + 1 < outlen &&
	       (n = read(fd, out + off, outlen - 1 - off)) > 0)
		off += (size_t)n;
	out[off] = '\0';
	ret = 0;
	if (!strncmp(out, "error ", 6)) {
		snprintf(err, errlen, "%.*s", (int)strcspn(out + 6, "\n"),
			 out + 6);
		ret = -EPROTO;
	} else if (strncmp(out, "ok", 2) || (out[2] != '\n' && out[2] != ' ')) {
		snprintf(err, errlen, off ? "the farswapd at %s answered with its stats: it is older than --drain (restart it to drain)" :
					    "no answer from farswapd at %s",
			 path);
		ret = -EPROTO;
	}
out_close:
	close(fd);
	return ret;
}
