// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd's values from their text and back: sizes, amounts (a size or
 * a percentage), durations, percentages in hundredths, rates, listen
 * addresses and failure domains as the config file and the flags spell
 * them, and sizes as the logs and --check-config print them (config.h).
 * Text in, a number or an error out, nothing kept: apart from the key
 * table (config.c), which parses each key's value with them, and tested
 * on their own (tests/unit/test_config.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"

/*
 * A failure domain name: 1 to FSD_DOMAIN_MAX characters, each printable
 * ASCII other than space (what a host accepts on the wire).  Copied to
 * @out (@outlen > FSD_DOMAIN_MAX) on success; -EINVAL otherwise.
 */
int fsd_parse_domain(const char *s, char *out, size_t outlen)
{
	size_t i, n;

	if (!s || outlen <= FSD_DOMAIN_MAX)
		return -EINVAL;
	n = strnlen(s, FSD_DOMAIN_MAX + 1);
	if (!n || n > FSD_DOMAIN_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return -EINVAL;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

const char *fsd_skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Unsigned decimal, no sign, no overflow; *end left after the digits. */
int fsd_parse_u64(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
		s++;
	}
	*out = v;
	*end = s;
	return 0;
}

/*
 * The number a value begins with (after any space), and in *rest what
 * follows it: its unit, for the parsers below.
 */
static int fsd_parse_number(const char *s, uint64_t *v, const char **rest)
{
	if (!s)
		return -EINVAL;
	return fsd_parse_u64(fsd_skip_space(s), v, rest);
}

/* Nothing but space is left: the value ended where it should. */
static bool fsd_only_space(const char *s)
{
	return !*fsd_skip_space(s);
}

/* "4096", "256M", "8G", "2MiB", "1tb": binary units, integers only. */
int fsd_parse_size(const char *s, uint64_t *out)
{
	const char *p;
	uint64_t v;
	unsigned int shift = 0;
	int ret;

	ret = fsd_parse_number(s, &v, &p);
	if (ret)
		return ret;
	switch (toupper((unsigned char)*p)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case 'B':
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		p++;
		if (toupper((unsigned char)*p) == 'I' &&
		    toupper((unsigned char)p[1]) == 'B')
			p += 2;
		else if (toupper((unsigned char)*p) == 'B')
			p++;
	} else if (*p) {
		p++;	/* the lone 'B' */
	}
	if (!fsd_only_space(p))
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* "50%" (1..100) or a size. */
int fsd_parse_amount(const char *s, struct fsd_amount *out)
{
	const char *p;
	uint64_t v;
	int ret;

	if (s && strchr(s, '%')) {
		ret = fsd_parse_number(s, &v, &p);
		if (ret)
			return ret;
		if (*p != '%' || !fsd_only_space(p + 1))
			return -EINVAL;
		if (v < 1 || v > 100)
			return -ERANGE;
		out->pct = (unsigned int)v;
		out->bytes = 0;
		return 0;
	}
	ret = fsd_parse_size(s, &v);
	if (ret)
		return ret;
	out->bytes = v;
	out->pct = 0;
	return 0;
}

/* "1s", "500ms", "2m", "3" (seconds); at most a day. */
int fsd_parse_duration_ms(const char *s, uint32_t *out)
{
	const char *p;
	uint64_t v, mult;
	int ret;

	ret = fsd_parse_number(s, &v, &p);
	if (ret)
		return ret;
	if (!strncasecmp(p, "ms", 2)) {
		mult = 1;
		p += 2;
	} else if (*p == 's' || *p == 'S') {
		mult = 1000;
		p++;
	} else if (*p == 'm' || *p == 'M') {
		mult = 60000;
		p++;
	} else {
		mult = 1000;
	}
	if (!fsd_only_space(p))
		return -EINVAL;
	if (v > 86400000ull / mult)
		return -ERANGE;
	*out = (uint32_t)(v * mult);
	return 0;
}

/* "12.5" -> 1250: a percentage with at most two decimals, 0..100. */
int fsd_parse_percent100(const char *s, unsigned int *out)
{
	const char *p;
	uint64_t whole, frac = 0;
	int ret, digits = 0;

	ret = fsd_parse_number(s, &whole, &p);
	if (ret)
		return ret;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			if (digits < 2) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				digits++;
			}
			p++;
		}
		if (!digits)
			return -EINVAL;
		if (digits == 1)
			frac *= 10;
	}
	if (*p == '%')
		p++;
	if (!fsd_only_space(p))
		return -EINVAL;
	if (whole > 100 || (whole == 100 && frac))
		return -ERANGE;
	*out = (unsigned int)(whole * 100 + frac);
	return 0;
}

/*
 * "RATE" or "RATE/BURST": events per second and how many may come at
 * once (default: one second's worth).  "0" or "off": no limit.
 */
int fsd_parse_rate(const char *s, uint32_t *rate, uint32_t *burst)
{
	uint64_t r, b;
	const char *p;

	if (!s)
		return -EINVAL;
	if (!strcasecmp(fsd_skip_space(s), "off")) {
		*rate = 0;
		*burst = 0;
		return 0;
	}
	if (fsd_parse_number(s, &r, &p))
		return -EINVAL;
	b = r;
	if (*p == '/') {
		if (fsd_parse_u64(p + 1, &b, &p) || !b)
			return -EINVAL;
	}
	if (!fsd_only_space(p))
		return -EINVAL;
	if (r > 1000000 || b > 1000000)
		return -ERANGE;
	*rate = (uint32_t)r;
	*burst = r ? (uint32_t)(b ? b : 1) : 0;
	return 0;
}

/* "ADDR", "ADDR:PORT", ":PORT", "[V6]:PORT", "V6" (two colons or more). */
int fsd_parse_listen(const char *s, char *addr, size_t addr_len,
		     uint16_t *port)
{
	const char *colon, *host = s, *pstr = NULL;
	size_t hlen;
	uint64_t v;
	const char *end;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb)
			return -EINVAL;
		host = s + 1;
		hlen = (size_t)(rb - host);
		if (rb[1] == ':')
			pstr = rb + 2;
		else if (rb[1])
			return -EINVAL;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':')) {
			hlen = strlen(s);	/* bare IPv6 */
		} else if (colon) {
			hlen = (size_t)(colon - s);
			pstr = colon + 1;
		} else {
			hlen = strlen(s);
		}
	}
	if (pstr) {
		if (fsd_parse_u64(pstr, &v, &end) || *end || v < 1 || v > 65535)
			return -EINVAL;
		*port = (uint16_t)v;
	}
	if (hlen >= addr_len)
		return -ENAMETOOLONG;
	if (hlen) {
		memcpy(addr, host, hlen);
		addr[hlen] = '\0';
	} else if (!pstr) {
		return -EINVAL;
	}
	return 0;
}

uint64_t fsd_amount_resolve(const struct fsd_amount *a, uint64_t base)
{
	if (a->pct)
		return base / 100 * a->pct + base % 100 * a->pct / 100;
	return a->bytes;
}

/* Exact when a whole number of units, else one decimal: "64M", "23.1G". */
void fsd_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		uint64_t u = 1ull << (10 * (i + 1));

		if (bytes < u)
			continue;
		if (!(bytes % u))
			snprintf(buf, len, "%" PRIu64 "%c", bytes / u, units[i]);
		else
			snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%c",
				 bytes / u, bytes % u * 10 / u, units[i]);
		return;
	}
	snprintf(buf, len, "%" PRIu64, bytes);
}

/* For logs: whole MiB. */
void fsd_format_size_mb(uint64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
}
