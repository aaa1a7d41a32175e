/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stats socket: a unix stream socket; every client that connects
 * gets the current stats text (fsd_donor_stats()) and EOF.  A second
 * socket beside it, the same path with ".json" appended, serves the
 * same stats as JSON (report.h), so that neither kind of client has to
 * say what it wants and old ones keep working.
 *
 * The text socket also takes commands (farswapd --drain, --undrain):
 * from a client whose socket is bound (to an autobound abstract name),
 * which the daemon sees as it accepts the connection, before reading
 * anything, so a stats client is never kept waiting.  Such a client
 * writes one line, a command word, and reads the reply: "ok ..." or
 * "error WHY", then "key value" lines (fsd_drain_report()).  Only root
 * and the daemon's own user may give commands (SO_PEERCRED); reading
 * the stats stays open to whoever may connect (the socket's group).
 */
#ifndef FSD_STATSOCK_H
#define FSD_STATSOCK_H

#include <stddef.h>
#include <sys/types.h>

enum fsd_ctl_cmd {
	FSD_CTL_BAD,
	FSD_CTL_DRAIN,		/* "drain" */
	FSD_CTL_UNDRAIN,	/* "undrain" */
	FSD_CTL_STATUS,		/* "drain-status" */
	FSD_CTL_RESTART,	/* "restart": SIGUSR2's, farswapd --restart */
};

#define FSD_CTL_MAX 64			/* a command line, at most */
#define FSD_CTL_READ_MS 500		/* waited for it, at most */
#define FSD_CTL_REPLY_MAX (64 * 1024)

struct fsd_ctl_req {
	int cmd;			/* enum fsd_ctl_cmd */
	uid_t uid;			/* who asks */
	pid_t pid;
};

/* Act on @req; the reply into @reply: its length. */
typedef int (*fsd_ctl_fn)(void *ctx, const struct fsd_ctl_req *req,
			  char *reply, size_t len);

int fsd_stats_listen(const char *path);
void fsd_stats_close(int fd, const char *path);
void fsd_stats_serve(int fd, const char *text, size_t len);
int fsd_stats_query(const char *path, char *err, size_t errlen);
int fsd_stats_fetch(const char *path, char *buf, size_t len, char *err,
		    size_t errlen);
int fsd_stats_json_path(const char *path, char *out, size_t len);

void fsd_stats_serve_ctl(int fd, const char *text, size_t len, fsd_ctl_fn fn,
			 void *ctx);
int fsd_ctl_parse(const char *buf, size_t len);
int fsd_ctl_reply_field(const char *reply, const char *key, char *out,
			size_t outlen);
int fsd_ctl_query(const char *path, const char *cmd, char *out, size_t outlen,
		  char *err, size_t errlen);

#endif /* FSD_STATSOCK_H */
