// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format writer (metrics.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

void fsm_init(struct fsm *m)
{
	memset(m, 0, sizeof(*m));
}

void fsm_free(struct fsm *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

static bool reserve(struct fsm *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 1024;
	char *nbuf;

	if (m->failed)
		return false;
	if (m->len + n + 1 <= m->cap)
		return true;
	while (cap < m->len + n + 1) {
		if (cap > SIZE_MAX / 2) {
			m->failed = true;
			return false;
		}
		cap *= 2;
	}
	nbuf = realloc(m->buf, cap);
	if (!nbuf) {
		m->failed = true;
		return false;
	}
	m->buf = nbuf;
	m->cap = cap;
	return true;
}

static void put(struct fsm *m, const char *s, size_t n)
{
	if (!reserve(m, n))
		return;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

static void puts_(struct fsm *m, const char *s)
{
	put(m, s, strlen(s));
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, the same without ':' for labels. */
static bool valid_name(const char *s, bool colon_ok)
{
	const char *p;

	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' ||
		    (colon_ok && *p == ':'))
			continue;
		return false;
	}
	return true;
}

/*
 * Escape @s for a label value (backslash, quote, newline) with @label,
 * otherwise for HELP text (backslash, newline), as the format wants.
 */
static void put_escaped(struct fsm *m, const char *s, bool label)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(m, "\\\\");
		else if (*s == '\n')
			puts_(m, "\\n");
		else if (*s == '"' && label)
			puts_(m, "\\\"");
		else
			put(m, s, 1);
	}
}

void fsm_family(struct fsm *m, const char *name, enum fsm_type type,
		const char *help)
{
	if (!valid_name(name, true))
		m->failed = true;
	m->family = name;
	m->type = type;
	m->help = help;
	m->header_done = false;
}

static void put_header(struct fsm *m)
{
	puts_(m, "# HELP ");
	puts_(m, m->family);
	put(m, " ", 1);
	put_escaped(m, m->help ? m->help : "", false);
	puts_(m, "\n# TYPE ");
	puts_(m, m->family);
	puts_(m, m->type == FSM_COUNTER ? " counter\n" : " gauge\n");
	m->header_done = true;
}

/* "name{a="x",b="y"} " up to the value. */
static void put_sample_start(struct fsm *m, const struct fsm_label *labels,
			     size_t nr)
{
	size_t i;

	if (!m->family) {
		m->failed = true;
		return;
	}
	if (!m->header_done)
		put_header(m);
	puts_(m, m->family);
	for (i = 0; i < nr; i++) {
		if (!valid_name(labels[i].name, false) || !labels[i].value) {
			m->failed = true;
			return;
		}
		put(m, i ? "," : "{", 1);
		puts_(m, labels[i].name);
		puts_(m, "=\"");
		put_escaped(m, labels[i].value, true);
		put(m, "\"", 1);
	}
	puts_(m, nr ? "} " : " ");
}

void fsm_u64(struct fsm *m, const struct fsm_label *labels, size_t nr,
	     uint64_t v)
{
	char num[24];

	put_sample_start(m, labels, nr);
	snprintf(num, sizeof(num), "%" PRIu64 "\n", v);
	puts_(m, num);
}

void fsm_double(struct fsm *m, const struct fsm_label *labels, size_t nr,
		double v)
{
	char num[40];

	put_sample_start(m, labels, nr);
	if (isnan(v))
		snprintf(num, sizeof(num), "NaN\n");
	else if (isinf(v))
		snprintf(num, sizeof(num), "%s\n", v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(num, sizeof(num), "%.15g\n", v);
	puts_(m, num);
}

const char *fsm_finish(struct fsm *m, size_t *len)
{
	if (!reserve(m, 0))
		return NULL;
	if (len)
		*len = m->len;
	return m->buf;
}

static int write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * No fsync: the file is rewritten every few seconds and only has to be
 * whole for its reader, which the rename gives; after a crash a stale or
 * empty file is replaced at the next interval.
 */
int fsm_write_file(const char *path, const char *text, size_t len,
		   char *err, size_t errlen)
{
	char tmp[4096];
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp,
			 strerror(errno));
		return ret;
	}
	ret = write_all(fd, text, len);
	/* mkostemp creates 0600; the collector may run as another user. */
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(-ret));
		unlink(tmp);
	}
	return ret;
}
