// SPDX-License-Identifier: GPL-2.0
/*
 * A recursive-descent JSON validator for the tests (json_check.h).
 */
#include <string.h>

#include "json_check.h"

struct cur {
	const unsigned char *p;
	const unsigned char *end;
	int depth;
};

static bool value(struct cur *c);

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool lit(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n))
		return false;
	c->p += n;
	return true;
}

static bool hex4(struct cur *c)
{
	int i;

	for (i = 0; i < 4; i++, c->p++)
		if (c->p >= c->end || !strchr("0123456789abcdefABCDEF", *c->p) ||
		    !*c->p)
			return false;
	return true;
}

/* One UTF-8 sequence of a string (no overlongs, surrogates, > U+10FFFF). */
static bool utf8(struct cur *c)
{
	unsigned int cp, len, i;
	unsigned char b = *c->p;

	if (b >= 0xc2 && b <= 0xdf) {
		len = 2;
		cp = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		len = 3;
		cp = b & 0x0f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		len = 4;
		cp = b & 0x07;
	} else {
		return false;
	}
	if ((size_t)(c->end - c->p) < len)
		return false;
	for (i = 1; i < len; i++) {
		if ((c->p[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (c->p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return false;
	c->p += len;
	return true;
}

static bool string(struct cur *c)
{
	if (c->p >= c->end || *c->p != '"')
		return false;
	c->p++;
	while (c->p < c->end) {
		unsigned char b = *c->p;

		if (b == '"') {
			c->p++;
			return true;
		}
		if (b < 0x20)
			return false;
		if (b == '\\') {
			c->p++;
			if (c->p >= c->end)
				return false;
			if (*c->p == 'u') {
				c->p++;
				if (!hex4(c))
					return false;
				continue;
			}
			if (!strchr("\"\\/bfnrt", *c->p) || !*c->p)
				return false;
			c->p++;
			continue;
		}
		if (b < 0x80) {
			c->p++;
			continue;
		}
		if (!utf8(c))
			return false;
	}
	return false;
}

static bool digits(struct cur *c)
{
	const unsigned char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > start;
}

static bool number(struct cur *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return false;
	}
	return true;
}

static bool members(struct cur *c, bool object)
{
	char close = object ? '}' : ']';

	c->p++;
	if (++c->depth > 64)
		return false;
	ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		c->depth--;
		return true;
	}
	for (;;) {
		if (object) {
			ws(c);
			if (!string(c))
				return false;
			ws(c);
			if (c->p >= c->end || *c->p != ':')
				return false;
			c->p++;
		}
		if (!value(c))
			return false;
		if (c->p >= c->end)
			return false;
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		if (*c->p != close)
			return false;
		c->p++;
		c->depth--;
		return true;
	}
}

static bool value(struct cur *c)
{
	bool ok;

	ws(c);
	if (c->p >= c->end)
		return false;
	switch (*c->p) {
	case '{':
		ok = members(c, true);
		break;
	case '[':
		ok = members(c, false);
		break;
	case '"':
		ok = string(c);
		break;
	case 't':
		ok = lit(c, "true");
		break;
	case 'f':
		ok = lit(c, "false");
		break;
	case 'n':
		ok = lit(c, "null");
		break;
	default:
		ok = number(c);
		break;
	}
	ws(c);
	return ok;
}

bool json_valid(const char *s, size_t n)
{
	struct cur c = { (const unsigned char *)s,
			 (const unsigned char *)s + n, 0 };

	if (!value(&c))
		return false;
	return c.p == c.end;
}
