/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text built into a caller's fixed buffer a line at a time (the stats
 * and the drain's report): once a line does not fit, the rest is
 * dropped and @full says so, so the caller answers -ENOSPC rather than
 * a cut report.
 */
#ifndef FSD_OUTBUF_H
#define FSD_OUTBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "log.h"

struct fsd_outbuf {
	char *buf;
	size_t len;
	size_t off;
	bool full;
};

static inline __printf(2, 3) void fsd_emit(struct fsd_outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->full = true;
	else
		o->off += (size_t)n;
}

#endif /* FSD_OUTBUF_H */
