/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stats socket: a unix stream socket; every client that connects
 * gets the current stats text (fsd_donor_stats()) and EOF.  A second
 * socket beside it, the same path with ".json" appended, serves the
 * same stats as JSON (report.h), so that neither kind of client has to
 * say what it wants and old ones keep working.
 */
#ifndef FSD_STATSOCK_H
#define FSD_STATSOCK_H

#include <stddef.h>

int fsd_stats_listen(const char *path);
void fsd_stats_close(int fd, const char *path);
void fsd_stats_serve(int fd, const char *text, size_t len);
int fsd_stats_query(const char *path, char *err, size_t errlen);
int fsd_stats_json_path(const char *path, char *out, size_t len);

#endif /* FSD_STATSOCK_H */
