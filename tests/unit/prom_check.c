// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format checker of the tests (prom_check.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_check.h"

#define MAX_FAMILIES 512
#define NAME_MAX_LEN 128

struct family {
	char name[NAME_MAX_LEN];
	bool help, type, closed;
};

struct state {
	struct family fam[MAX_FAMILIES];
	int nr;
	int current;		/* family of the last sample or header */
};

static bool name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (colon && c == ':'))
		return true;
	return !first && c >= '0' && c <= '9';
}

/* Length of the metric (or label, !@colon) name at @s; 0 if none. */
static size_t name_len(const char *s, bool colon)
{
	size_t n = 0;

	while (s[n] && name_char(s[n], n == 0, colon))
		n++;
	return n;
}

static struct family *find(struct state *st, const char *name, size_t n,
			   bool add)
{
	int i;

	for (i = 0; i < st->nr; i++)
		if (strlen(st->fam[i].name) == n &&
		    !strncmp(st->fam[i].name, name, n))
			return &st->fam[i];
	if (!add || st->nr == MAX_FAMILIES || n >= NAME_MAX_LEN)
		return NULL;
	memset(&st->fam[st->nr], 0, sizeof(st->fam[0]));
	memcpy(st->fam[st->nr].name, name, n);
	return &st->fam[st->nr++];
}

/* Moving to family @f: the previous one's group ends. */
static bool enter(struct state *st, struct family *f)
{
	int idx = (int)(f - st->fam);

	if (st->current == idx)
		return true;
	if (f->closed)
		return false;
	if (st->current >= 0)
		st->fam[st->current].closed = true;
	st->current = idx;
	return true;
}

static bool header(struct state *st, const char *line, char *why,
		   size_t whylen)
{
	bool is_help = !strncmp(line, "# HELP ", 7);
	const char *name = line + 7;
	size_t n = name_len(name, true);
	struct family *f;

	if (!n || (name[n] != ' ' && name[n] != '\0')) {
		snprintf(why, whylen, "bad name in '%s'", line);
		return false;
	}
	f = find(st, name, n, true);
	if (!f || !enter(st, f)) {
		snprintf(why, whylen, "family of '%s' not in one group", line);
		return false;
	}
	if (is_help) {
		if (f->help || f->type) {
			snprintf(why, whylen, "HELP repeated or after TYPE: '%s'",
				 line);
			return false;
		}
		f->help = true;
		return true;
	}
	if (f->type || (strcmp(name + n, " counter") &&
			strcmp(name + n, " gauge"))) {
		snprintf(why, whylen, "bad or repeated TYPE: '%s'", line);
		return false;
	}
	f->type = true;
	return true;
}

/* {name="value",...}: returns the text after it, NULL if malformed. */
static const char *labels(const char *p)
{
	if (*p != '{')
		return p;
	p++;
	while (*p != '}') {
		size_t n = name_len(p, false);

		if (!n || p[n] != '=' || p[n + 1] != '"')
			return NULL;
		p += n + 2;
		while (*p != '"') {
			if (!*p || *p == '\n')
				return NULL;
			if (*p == '\\') {
				if (p[1] != '\\' && p[1] != '"' && p[1] != 'n')
					return NULL;
				p++;
			}
			p++;
		}
		p++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return NULL;
	}
	return p + 1;
}

static bool value_ok(const char *s)
{
	char *end;

	if (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf"))
		return true;
	if (!*s)
		return false;
	strtod(s, &end);
	return !*end;
}

static bool sample(struct state *st, const char *line, char *why,
		   size_t whylen)
{
	size_t n = name_len(line, true);
	struct family *f = n ? find(st, line, n, false) : NULL;
	const char *p;

	if (!f || !f->type || !f->help) {
		snprintf(why, whylen, "sample without HELP and TYPE: '%s'",
			 line);
		return false;
	}
	if (!enter(st, f)) {
		snprintf(why, whylen, "family of '%s' not in one group", line);
		return false;
	}
	p = labels(line + n);
	if (!p || *p != ' ' || !value_ok(p + 1)) {
		snprintf(why, whylen, "malformed sample '%s'", line);
		return false;
	}
	return true;
}

bool prom_valid(const char *text, char *why, size_t whylen)
{
	static struct state st;
	char line[4096];
	const char *p = text;

	memset(&st, 0, sizeof(st));
	st.current = -1;
	if (!*text || text[strlen(text) - 1] != '\n') {
		snprintf(why, whylen, "empty, or no newline at the end");
		return false;
	}
	while (*p) {
		size_t n = strcspn(p, "\n");
		bool ok;

		if (n >= sizeof(line)) {
			snprintf(why, whylen, "line too long");
			return false;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + 1;
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7))
			ok = header(&st, line, why, whylen);
		else if (line[0] == '#')
			ok = true;
		else if (!line[0])
			ok = true;
		else
			ok = sample(&st, line, why, whylen);
		if (!ok)
			return false;
	}
	return true;
}
