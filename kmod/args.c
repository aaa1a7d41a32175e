// SPDX-License-Identifier: GPL-2.0
/*
 * Attach command parsing (see args.h).  The caller fills @args with the
 * defaults (module parameters) first; options override them.
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "farswap_proto.h"
#include "args.h"

static int farswap_parse_port(const char *s, __be16 *port)
{
	u16 p;

	if (kstrtou16(s, 10, &p) || !p)
		return -EINVAL;
	*port = htons(p);
	return 0;
}

/**
 * farswap_parse_addr - parse a donor address
 * @s: "a.b.c.d", "a.b.c.d:port", "v6addr" or "[v6addr]:port"
 * @ss: filled with the address; the port defaults to FARSWAP_DEFAULT_PORT
 *
 * Return: 0 or -EINVAL.
 */
int farswap_parse_addr(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	__be16 port = htons(FARSWAP_DEFAULT_PORT);
	const char *end;
	size_t len = strlen(s);

	memset(ss, 0, sizeof(*ss));
	if (!len)
		return -EINVAL;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close == s + 1)
			return -EINVAL;
		if (close[1] == ':') {
			if (farswap_parse_port(close + 2, &port))
				return -EINVAL;
		} else if (close[1]) {
			return -EINVAL;
		}
		if (!in6_pton(s + 1, close - s - 1, sin6->sin6_addr.s6_addr,
			      -1, &end) || end != close)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		return 0;
	}

	/* Two or more colons: a bare IPv6 address, no port. */
	if (strchr(s, ':') != strrchr(s, ':')) {
		if (!in6_pton(s, len, sin6->sin6_addr.s6_addr, -1, &end) ||
		    end != s + len)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		return 0;
	}

	if (!in4_pton(s, len, (u8 *)&sin->sin_addr.s_addr, ':', &end))
		return -EINVAL;
	if (*end == ':') {
		if (farswap_parse_port(end + 1, &port))
			return -EINVAL;
	} else if (*end) {
		return -EINVAL;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = port;
	return 0;
}

/**
 * farswap_parse_size - parse a byte count with an optional K/M/G/T/P suffix
 * @s: "4G", "4GiB", "4GB", "4096", ...; decimal, binary multiples throughout
 * @out: the size in bytes, set only on success
 *
 * Not memparse(): it reads "010G" as octal and "0x10G" as hex, and lets
 * the number and the suffix shift wrap past 2^64 ("16777217T" is 1T).
 *
 * Return: 0, or -EINVAL for anything else (including zero, and sizes of
 * 2^60 bytes or more).
 */
int farswap_parse_size(const char *s, u64 *out)
{
	static const char units[] = "KMGTP";
	size_t ndigits = strspn(s, "0123456789");
	const char *rest = s + ndigits;
	unsigned int shift = 0;
	char digits[21];	/* U64_MAX has 20 */
	const char *unit;
	u64 v;

	if (!ndigits || ndigits >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, ndigits);
	digits[ndigits] = '\0';
	/* Refuses, rather than wraps, a number past U64_MAX. */
	if (kstrtoull(digits, 10, &v))
		return -EINVAL;
	unit = *rest ? strchr(units, toupper(*rest)) : NULL;
	if (unit) {
		shift = 10 * (unit - units + 1);
		rest++;
	}
	/* "B" may follow the number or the unit, "iB" only the unit. */
	if (*rest && strcmp(rest, "B") && (!shift || strcmp(rest, "iB")))
		return -EINVAL;
	if (!v || v >= (1ull << 60) >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static int farswap_parse_uint(const char *s, unsigned int min,
			      unsigned int max, unsigned int *out)
{
	unsigned int v;

	if (kstrtouint(s, 10, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

bool farswap_addr_equal(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr &&
		       a4->sin_port == b4->sin_port;
	if (a->ss_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr,
				sizeof(a6->sin6_addr)) &&
		       a6->sin6_port == b6->sin6_port;
	return false;
}

/*
 * "farswapN" -> N, or -EINVAL.  N is plain decimal digits (no sign, no
 * leading zero, no trailing newline): the device is then named
 * "farswap%d" from N, and that must be the name that was asked for.
 */
int farswap_name_index(const char *name)
{
	const char *digits = name + 7;
	unsigned int n;

	if (strncmp(name, "farswap", 7) || !*digits ||
	    strspn(digits, "0123456789") != strlen(digits) ||
	    (digits[0] == '0' && digits[1]) || kstrtouint(digits, 10, &n) ||
	    n > 9999)
		return -EINVAL;
	return n;
}

#define farswap_bad(fmt, ...) \
	({ snprintf(err, errlen, fmt, ##__VA_ARGS__); -EINVAL; })

static int farswap_parse_option(const char *key, const char *val,
				struct farswap_attach_args *a, char *err,
				size_t errlen)
{
	unsigned int i;

	if (!strcmp(key, "donor")) {
		struct sockaddr_storage ss;

		if (a->nr_donors == FARSWAP_MAX_DONORS)
			return farswap_bad("too many donors (at most %d)",
					   FARSWAP_MAX_DONORS);
		if (farswap_parse_addr(val, &ss))
			return farswap_bad("bad donor address '%s' (want IPv4[:port] or [IPv6]:port)",
					   val);
		for (i = 0; i < a->nr_donors; i++)
			if (farswap_addr_equal(&a->donor[i], &ss))
				return farswap_bad("donor '%s' is listed twice",
						   val);
		a->donor[a->nr_donors++] = ss;
		return 0;
	}
	if (!strcmp(key, "size")) {
		if (farswap_parse_size(val, &a->size))
			return farswap_bad("bad size '%s' (want e.g. 4G)", val);
		return 0;
	}
	if (!strcmp(key, "slab_size")) {
		if (farswap_parse_size(val, &a->slab_size) ||
		    !farswap_slab_size_valid(a->slab_size))
			return farswap_bad("bad slab_size '%s' (want a power of two from 2M to 1T)",
					   val);
		return 0;
	}
	if (!strcmp(key, "name")) {
		if (strlen(val) >= FARSWAP_NAME_LEN ||
		    farswap_name_index(val) < 0)
			return farswap_bad("bad name '%s' (want farswapN)", val);
		strscpy(a->name, val, sizeof(a->name));
		return 0;
	}
	if (!strcmp(key, "queues")) {
		/* Per direction: reads and writes each get this many. */
		if (farswap_parse_uint(val, 1, FARSWAP_MAX_IO_QUEUES / 2,
				       &a->nr_queues))
			return farswap_bad("bad queues '%s' (1 to %d)", val,
					   FARSWAP_MAX_IO_QUEUES / 2);
		return 0;
	}
	if (!strcmp(key, "queue_depth")) {
		if (farswap_parse_uint(val, 1, FARSWAP_QUEUE_DEPTH_MAX,
				       &a->queue_depth))
			return farswap_bad("bad queue_depth '%s' (1 to %d)",
					   val, FARSWAP_QUEUE_DEPTH_MAX);
		return 0;
	}
	if (!strcmp(key, "io_timeout_ms")) {
		if (farswap_parse_uint(val, FARSWAP_IO_TIMEOUT_MIN_MS,
				       FARSWAP_IO_TIMEOUT_MAX_MS,
				       &a->io_timeout_ms))
			return farswap_bad("bad io_timeout_ms '%s' (%d to %d)",
					   val, FARSWAP_IO_TIMEOUT_MIN_MS,
					   FARSWAP_IO_TIMEOUT_MAX_MS);
		return 0;
	}
	if (!strcmp(key, "sync_io")) {
		if (kstrtobool(val, &a->sync_io))
			return farswap_bad("bad sync_io '%s' (0 or 1)", val);
		return 0;
	}
	return farswap_bad("unknown option '%s'", key);
}

/**
 * farswap_parse_attach - parse an attach command
 * @buf: the command, modified in place
 * @args: holds the defaults on entry, the result on success
 * @err: filled with a one-line reason on failure
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL with @err set.
 */
int farswap_parse_attach(char *buf, struct farswap_attach_args *args,
			 char *err, size_t errlen)
{
	char *tok;
	int ret;

	args->nr_donors = 0;
	while ((tok = strsep(&buf, " \t\n,")) != NULL) {
		char *val;

		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val || val == tok || !val[1])
			return farswap_bad("bad option '%s' (want key=value)",
					   tok);
		*val++ = '\0';
		ret = farswap_parse_option(tok, val, args, err, errlen);
		if (ret)
			return ret;
	}
	if (!args->nr_donors)
		return farswap_bad("no donor given (donor=ADDR[:PORT])");
	if (!args->size)
		return farswap_bad("no size given (size=SIZE)");
	if (args->slab_size && args->size % args->slab_size)
		return farswap_bad("size %llu is not a multiple of slab_size %llu",
				   args->size, args->slab_size);
	return 0;
}
