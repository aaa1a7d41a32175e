// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON emitter (json.h).  Output is indented by two spaces per level,
 * one member per line, so that a diff of two documents reads well and
 * line-based tools still get something useful out of it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define FSJ_INDENT 2

void fsj_init(struct fsj *j)
{
	memset(j, 0, sizeof(*j));
}

void fsj_free(struct fsj *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

/* Room for @n more bytes and a terminating NUL. */
static bool reserve(struct fsj *j, size_t n)
{
	size_t cap = j->cap ? j->cap : 256;
	char *nbuf;

	if (j->failed)
		return false;
	if (j->len + n + 1 <= j->cap)
		return true;
	while (cap < j->len + n + 1) {
		if (cap > SIZE_MAX / 2) {
			j->failed = true;
			return false;
		}
		cap *= 2;
	}
	nbuf = realloc(j->buf, cap);
	if (!nbuf) {
		j->failed = true;
		return false;
	}
	j->buf = nbuf;
	j->cap = cap;
	return true;
}

static void put(struct fsj *j, const char *s, size_t n)
{
	if (!reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(struct fsj *j, const char *s)
{
	put(j, s, strlen(s));
}

static void putf(struct fsj *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct fsj *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		j->failed = true;
		return;
	}
	put(j, tmp, (size_t)n);
}

static void newline_indent(struct fsj *j)
{
	int i;

	put(j, "\n", 1);
	for (i = 0; i < j->depth * FSJ_INDENT; i++)
		put(j, " ", 1);
}

/*
 * Length of the well-formed UTF-8 sequence at @s (at most @n bytes), or 0
 * if it is not one: overlong forms, surrogates and code points above
 * U+10FFFF are not well-formed either (RFC 3629).
 */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * A JSON string literal.  Quotes, backslashes and control characters are
 * escaped; bytes that are not UTF-8 become U+FFFD, since a host id or a
 * file's contents may be anything and the document must still parse.
 */
static void put_string(struct fsj *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, seq;

	put(j, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];

		switch (c) {
		case '"':
			puts_(j, "\\\"");
			break;
		case '\\':
			puts_(j, "\\\\");
			break;
		case '\n':
			puts_(j, "\\n");
			break;
		case '\r':
			puts_(j, "\\r");
			break;
		case '\t':
			puts_(j, "\\t");
			break;
		case '\b':
			puts_(j, "\\b");
			break;
		case '\f':
			puts_(j, "\\f");
			break;
		default:
			if (c < 0x20) {
				putf(j, "\\u%04x", c);
				break;
			}
			seq = utf8_seq_len(s + i, n - i);
			if (!seq) {
				puts_(j, "\\ufffd");
				break;
			}
			put(j, str + i, seq);
			i += seq;
			continue;
		}
		i++;
	}
	put(j, "\"", 1);
}

/* The comma, line break and key before a value. */
static void begin_value(struct fsj *j, const char *key)
{
	if (!j->depth) {
		if (key || j->done)
			j->failed = true;
		return;
	}
	if (j->is_object[j->depth - 1] != (key != NULL)) {
		j->failed = true;
		return;
	}
	if (j->has_items[j->depth - 1])
		put(j, ",", 1);
	j->has_items[j->depth - 1] = true;
	newline_indent(j);
	if (key) {
		put_string(j, key, strlen(key));
		put(j, ": ", 2);
	}
}

static void end_value(struct fsj *j)
{
	if (!j->depth)
		j->done = true;
}

static void open_container(struct fsj *j, const char *key, bool object)
{
	begin_value(j, key);
	if (j->depth >= FSJ_MAX_DEPTH) {
		j->failed = true;
		return;
	}
	put(j, object ? "{" : "[", 1);
	j->is_object[j->depth] = object;
	j->has_items[j->depth] = false;
	j->depth++;
}

static void close_container(struct fsj *j, bool object)
{
	bool had_items;

	if (!j->depth || j->is_object[j->depth - 1] != object) {
		j->failed = true;
		return;
	}
	had_items = j->has_items[j->depth - 1];
	j->depth--;
	if (had_items)
		newline_indent(j);
	put(j, object ? "}" : "]", 1);
	end_value(j);
}

void fsj_object_begin(struct fsj *j, const char *key)
{
	open_container(j, key, true);
}

void fsj_object_end(struct fsj *j)
{
	close_container(j, true);
}

void fsj_array_begin(struct fsj *j, const char *key)
{
	open_container(j, key, false);
}

void fsj_array_end(struct fsj *j)
{
	close_container(j, false);
}

void fsj_string_len(struct fsj *j, const char *key, const char *s, size_t n)
{
	begin_value(j, key);
	put_string(j, s, n);
	end_value(j);
}

void fsj_string(struct fsj *j, const char *key, const char *s)
{
	if (!s) {
		fsj_null(j, key);
		return;
	}
	fsj_string_len(j, key, s, strlen(s));
}

void fsj_u64(struct fsj *j, const char *key, uint64_t v)
{
	begin_value(j, key);
	putf(j, "%" PRIu64, v);
	end_value(j);
}

void fsj_i64(struct fsj *j, const char *key, int64_t v)
{
	begin_value(j, key);
	putf(j, "%" PRId64, v);
	end_value(j);
}

/* JSON has no NaN or infinity: those are written as null. */
void fsj_double(struct fsj *j, const char *key, double v)
{
	begin_value(j, key);
	if (isfinite(v))
		putf(j, "%.15g", v);
	else
		puts_(j, "null");
	end_value(j);
}

void fsj_bool(struct fsj *j, const char *key, bool v)
{
	begin_value(j, key);
	puts_(j, v ? "true" : "false");
	end_value(j);
}

void fsj_null(struct fsj *j, const char *key)
{
	begin_value(j, key);
	puts_(j, "null");
	end_value(j);
}

const char *fsj_finish(struct fsj *j, size_t *len)
{
	if (j->depth || !j->done)
		j->failed = true;
	put(j, "\n", 1);
	if (j->failed)
		return NULL;
	if (len)
		*len = j->len;
	return j->buf;
}
