// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd configuration: one table of keys, fsd_keys[], and one setter,
 * fsd_config_set(), serve the config file and the command line alike, so
 * a key means the same thing in both.  Flags override the file: the file
 * is read first, the flags are applied on top.  The values themselves
 * (sizes, durations, ...) are read and printed by parse.c, the command
 * line by cmdline.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"

static int set_err(char *err, size_t errlen, const char *fmt, const char *a,
		   const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
	return -EINVAL;
}

/*
 * The per-host slab cap in slabs, for a pool of @nr_slabs: max-slabs-per-
 * host as a count, its size in whole slabs, or its share of the pool
 * (both rounded down, so a host never holds more than asked, but at
 * least one slab, so a share never shuts a host out); 0: no cap.
 */
uint32_t fsd_slab_cap(const struct fsd_config *c, uint64_t slab_size,
		      uint32_t nr_slabs)
{
	uint64_t n = c->max_slabs_per_host;

	if (c->max_bytes_per_host)
		n = slab_size ? c->max_bytes_per_host / slab_size : 0;
	if (c->max_slabs_pct) {
		n = (uint64_t)nr_slabs * c->max_slabs_pct / 100;
		if (!n)
			n = 1;
	}
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/*
 * alloc-rate auto: grants worth FSD_ALLOC_AUTO_BYTES a second, at least
 * FSD_ALLOC_AUTO_MIN, and FSD_ALLOC_AUTO_SECS seconds of them saved up.
 * In slabs, a fixed rate would mean a thousand times more memory a second
 * with 1G slabs than with 1M ones; in bytes it is the same bound on the
 * grant worker's zeroing for every slab size.  A host swapping out faster
 * than 4 GiB/s, sustained, is beyond what the fabric carries anyway, and
 * a refused grant (BUSY) fails the host's writes to that chunk.
 */
#define FSD_ALLOC_AUTO_BYTES (4ull << 30)
#define FSD_ALLOC_AUTO_MIN 4
#define FSD_ALLOC_AUTO_SECS 4

/* The alloc-rate a donor of @slab_size slabs runs with; rate 0: off. */
void fsd_alloc_rate(const struct fsd_config *c, uint64_t slab_size,
		    uint32_t *rate, uint32_t *burst)
{
	uint64_t r;

	if (!c->alloc_rate_auto) {
		*rate = c->alloc_rate;
		*burst = c->alloc_burst;
		return;
	}
	r = slab_size ? FSD_ALLOC_AUTO_BYTES / slab_size : 0;
	if (r < FSD_ALLOC_AUTO_MIN)
		r = FSD_ALLOC_AUTO_MIN;
	/* 2M slabs, the smallest: 2048 a second. */
	*rate = (uint32_t)r;
	*burst = (uint32_t)r * FSD_ALLOC_AUTO_SECS;
}

void fsd_config_defaults(struct fsd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen_addr, sizeof(c->listen_addr), "0.0.0.0");
	c->port = FARSWAP_DEFAULT_PORT;
	c->donate.pct = 50;
	c->slab_size = FARSWAP_SLAB_SIZE_DEFAULT;
	c->headroom.pct = 10;
	c->hysteresis.pct = 5;
	c->pressure_interval_ms = 1000;
	c->reclaim_deadline_ms = 10000;
	c->keepalive_ms = 15000;
	c->psi_threshold = 0;
	c->log_level = FSD_LOG_INFO;
	snprintf(c->stats_socket, sizeof(c->stats_socket), "%s",
		 FSD_STATS_SOCKET);
	c->hugepages = FSD_HUGE_AUTO;
	c->max_hosts = 256;
	/* One host cannot take what others ask for; alone, it takes all. */
	c->max_slabs_fair = true;
	c->max_unauthenticated = 16;
	c->max_unauth_per_address = 2;
	c->connect_rate = 10;
	c->connect_burst = 20;
	/*
	 * No per-host cap by default: farswap.ko asks its other donors when
	 * one refuses a slab (NO_SPACE), but a host whose only donor this is
	 * would meet the cap with room to spare and fail the writes of the
	 * chunks it can place nowhere else.  A pool shared by several hosts
	 * sets one (a share: max-slabs-per-host = 50%).
	 */
	c->max_sessions_per_address = 4;
	c->max_queue_depth = 1024;
	c->handshake_timeout_ms = 5000;
	c->auth_timeout_ms = 2000;
	c->resume_grace_ms = 60000;
	c->alloc_rate_auto = true;
	c->revoke_after = 3;
}

/*
 * The config keys.  Each key is one row of fsd_keys[] below: its name,
 * the typed helper that parses it, the one that prints it, the fields it
 * owns, its limits, what SIGHUP does with it and its --help text.  The
 * setter (config file and flags alike), the flags themselves,
 * --check-config's printer, --help and the reload all walk that table,
 * so a key is added, limited or documented in one place.
 */

/* The fields of struct fsd_config that key owns, first to last. */
#define FIELDS(first, last)						\
	.off = offsetof(struct fsd_config, first),			\
	.size = offsetof(struct fsd_config, last) +			\
		sizeof(((struct fsd_config *)0)->last) -		\
		offsetof(struct fsd_config, first)

static void *field(const struct fsd_set *s)
{
	return (char *)s->c + s->k->off;
}

static const void *shown(const struct fsd_show *s)
{
	return (const char *)s->c + s->k->off;
}

/*
 * The parse helpers store only on success, so a refused value leaves the
 * key as it was.  They return 0, -ENOMEM, or another error for a bad
 * value; fsd_config_set() words the message from the key's row, unless
 * the helper wrote its own into s->why.  Strings are stored zero-filled
 * to the end of their buffer, so that two configs hold the same value
 * exactly when their bytes are equal: the reload compares keys with
 * memcmp().
 */

/* A decimal count from min to max, in a 32-bit field. */
static int parse_u32(const struct fsd_set *s)
{
	const char *end;
	uint64_t v;

	if (fsd_parse_u64(s->val, &v, &end) || *end || v < s->k->min ||
	    v > s->k->max)
		return -EINVAL;
	*(uint32_t *)field(s) = (uint32_t)v;
	return 0;
}

/* With its unit: durations print in ms, whatever unit they came in. */
static void print_u32(const struct fsd_show *s)
{
	snprintf(s->buf, s->len, "%u%s", *(const uint32_t *)shown(s),
		 s->k->unit ? s->k->unit : "");
}

/* A size or a percentage; a size below min (bytes) is refused. */
static int parse_amount(const struct fsd_set *s)
{
	struct fsd_amount a;

	memset(&a, 0, sizeof(a));	/* the padding too: see above */
	if (fsd_parse_amount(s->val, &a) || (!a.pct && a.bytes < s->k->min))
		return -EINVAL;
	memcpy(field(s), &a, sizeof(a));
	return 0;
}

static void print_amount(const struct fsd_show *s)
{
	const struct fsd_amount *a = shown(s);

	if (a->pct)
		snprintf(s->buf, s->len, "%u%%", a->pct);
	else
		fsd_format_size(a->bytes, s->buf, s->len);
}

/* A slab size: what the protocol allows, a power of two, 2M to 1T. */
static int parse_slab_size(const struct fsd_set *s)
{
	uint64_t v;

	if (fsd_parse_size(s->val, &v) || !farswap_slab_size_valid(v))
		return -EINVAL;
	*(uint64_t *)field(s) = v;
	return 0;
}

static void print_size(const struct fsd_show *s)
{
	fsd_format_size(*(const uint64_t *)shown(s), s->buf, s->len);
}

/* A duration of at least min milliseconds (at most a day: the parser). */
static int parse_duration(const struct fsd_set *s)
{
	uint32_t ms;

	if (fsd_parse_duration_ms(s->val, &ms) || ms < s->k->min)
		return -EINVAL;
	*(uint32_t *)field(s) = ms;
	return 0;
}

/* A percentage in hundredths: "12.5" is 1250. */
static int parse_pct100(const struct fsd_set *s)
{
	unsigned int p;

	if (fsd_parse_percent100(s->val, &p) || p > s->k->max)
		return -EINVAL;
	*(unsigned int *)field(s) = p;
	return 0;
}

static void print_pct100(const struct fsd_show *s)
{
	unsigned int p = *(const unsigned int *)shown(s);

	snprintf(s->buf, s->len, "%u.%02u", p / 100, p % 100);
}

/* One of k->names, any case; the first name of a value prints it. */
static int parse_enum(const struct fsd_set *s)
{
	const struct fsd_key_name *n;

	for (n = s->k->names; n->name; n++) {
		if (!strcasecmp(s->val, n->name)) {
			*(int *)field(s) = n->value;
			return 0;
		}
	}
	return -EINVAL;
}

static void print_enum(const struct fsd_show *s)
{
	const struct fsd_key_name *n;
	int v = *(const int *)shown(s);

	for (n = s->k->names; n->name && n->value != v; n++)
		;
	if (n->name)
		snprintf(s->buf, s->len, "%s", n->name);
	else
		snprintf(s->buf, s->len, "%d", v);
}

/*
 * yes, true, 1 or no, false, 0.  On the command line a yes/no key is a
 * flag without a value, meaning yes (fsd_parse_args()).
 */
static int parse_bool(const struct fsd_set *s)
{
	if (!strcasecmp(s->val, "yes") || !strcasecmp(s->val, "true") ||
	    !strcmp(s->val, "1"))
		*(bool *)field(s) = true;
	else if (!strcasecmp(s->val, "no") || !strcasecmp(s->val, "false") ||
		 !strcmp(s->val, "0"))
		*(bool *)field(s) = false;
	else
		return -EINVAL;
	return 0;
}

static void print_bool(const struct fsd_show *s)
{
	snprintf(s->buf, s->len, "%s", *(const bool *)shown(s) ? "yes" : "no");
}

/*
 * A path, or none.  The path keys came one at a time and differ in
 * small ways the table keeps (k->flags): stats-socket takes a relative
 * path, and "none" is lowercase only for stats-socket and metrics-file.
 */
static int parse_path(const struct fsd_set *s)
{
	unsigned int flags = s->k->flags;
	size_t n = strlen(s->val);
	char *p = field(s);

	if (!strcmp(s->val, "none") ||
	    ((flags & FSD_KEY_NONE_ANYCASE) && !strcasecmp(s->val, "none")) ||
	    ((flags & FSD_KEY_EMPTY_NONE) && !n)) {
		memset(p, 0, s->k->size);
		return 0;
	}
	if (((flags & FSD_KEY_ABSOLUTE) && s->val[0] != '/') ||
	    n >= s->k->size)
		return -EINVAL;
	memset(p, 0, s->k->size);
	memcpy(p, s->val, n);
	return 0;
}

static void print_path(const struct fsd_show *s)
{
	const char *p = shown(s);

	snprintf(s->buf, s->len, "%s", *p ? p : "none");
}

/* ADDR[:PORT], [V6]:PORT or :PORT: what is left out keeps its value. */
static int parse_listen(const struct fsd_set *s)
{
	char addr[FSD_ADDR_LEN] = "";	/* all zero: see above */
	uint16_t port = s->c->port;

	if (fsd_parse_listen(s->val, addr, sizeof(addr), &port))
		return -EINVAL;
	if (addr[0])
		memcpy(s->c->listen_addr, addr, sizeof(addr));
	s->c->port = port;
	return 0;
}

static void print_listen(const struct fsd_show *s)
{
	snprintf(s->buf, s->len, "%s:%u", s->c->listen_addr, s->c->port);
}

static int parse_log_level(const struct fsd_set *s)
{
	int l = fsd_log_parse_level(s->val);

	if (l < 0)
		return -EINVAL;
	s->c->log_level = l;
	return 0;
}

static void print_log_level(const struct fsd_show *s)
{
	snprintf(s->buf, s->len, "%s", fsd_log_level_name(s->c->log_level));
}

/* 1 to FARSWAP_ID_LEN bytes, zero-padded: the id hosts are sent. */
static int parse_donor_id(const struct fsd_set *s)
{
	size_t n = strlen(s->val);

	if (!n || n > s->k->max)
		return -EINVAL;
	memset(s->c->donor_id, 0, sizeof(s->c->donor_id));
	memcpy(s->c->donor_id, s->val, n);
	s->c->donor_id_set = true;
	return 0;
}

static int parse_domain(const struct fsd_set *s)
{
	char d[sizeof(s->c->failure_domain)] = "";	/* all zero: see above */

	if (fsd_parse_domain(s->val, d, sizeof(d)))
		return -EINVAL;
	memcpy(s->c->failure_domain, d, sizeof(d));
	return 0;
}

/* Unset, the donor's id stands in: say so rather than print nothing. */
static void print_domain(const struct fsd_show *s)
{
	snprintf(s->buf, s->len, "%s",
		 s->c->failure_domain[0] ? s->c->failure_domain :
					   "(the donor id)");
}

/* The access list says itself what is wrong with an entry. */
static int parse_acl(const struct fsd_set *s)
{
	/* Parsed into a copy: a bad list leaves the old one. */
	struct fsd_access *acl = malloc(sizeof(*acl));
	int ret;

	if (!acl)
		return -ENOMEM;
	ret = fsd_access_parse(s->val, acl, s->why, s->whylen);
	if (!ret)
		s->c->allowed_hosts = *acl;
	free(acl);
	return ret ? -EINVAL : 0;
}

static void print_acl(const struct fsd_show *s)
{
	char *acl = malloc(FSD_ACCESS_MAX * 64);

	if (acl)
		fsd_access_format(&s->c->allowed_hosts, acl,
				  FSD_ACCESS_MAX * 64);
	snprintf(s->buf, s->len, "%s", acl ? acl : "?");
	free(acl);
}

/*
 * A count of slabs, a size or a share of the pool (1% to 100%), turned
 * into slabs once the slab and the pool are known (fsd_slab_cap()).
 */
static int parse_slab_cap(const struct fsd_set *s)
{
	uint64_t slabs = 0, bytes = 0;
	unsigned int pct = 0;
	bool number, fair = false;
	const char *end;
	uint64_t v;

	/* fair, a count, a share ("50%"), or else a size ("4G"). */
	number = !fsd_parse_u64(fsd_skip_space(s->val), &v, &end);
	if (!strcmp(fsd_skip_space(s->val), "fair")) {
		fair = true;
	} else if (number && !*fsd_skip_space(end)) {
		slabs = v;
	} else if (number && *end == '%' && !*fsd_skip_space(end + 1)) {
		if (!v || v > 100)
			return -EINVAL;
		pct = (unsigned int)v;
	} else if (!fsd_parse_size(s->val, &v) && v) {
		bytes = v;
	} else {
		return -EINVAL;
	}
	s->c->max_slabs_per_host = slabs;
	s->c->max_bytes_per_host = bytes;
	s->c->max_slabs_pct = pct;
	s->c->max_slabs_fair = fair;
	return 0;
}

void fsd_slab_cap_text(bool fair, uint32_t slabs, char *buf, size_t len)
{
	if (fair)
		snprintf(buf, len, "fair");
	else
		snprintf(buf, len, "%" PRIu32, slabs);
}

static void print_slab_cap(const struct fsd_show *s)
{
	if (s->c->max_slabs_fair)
		snprintf(s->buf, s->len, "fair");
	else if (s->c->max_slabs_pct)
		snprintf(s->buf, s->len, "%u%%", s->c->max_slabs_pct);
	else if (s->c->max_bytes_per_host)
		fsd_format_size(s->c->max_bytes_per_host, s->buf, s->len);
	else
		snprintf(s->buf, s->len, "%" PRIu64, s->c->max_slabs_per_host);
}

static void format_rate(char *buf, size_t len, uint32_t rate, uint32_t burst)
{
	if (rate)
		snprintf(buf, len, "%u/%u", rate, burst);
	else
		snprintf(buf, len, "0");
}

/* RATE[/BURST], 0 or off, or auto: the default, from the slab size. */
static int parse_alloc_rate(const struct fsd_set *s)
{
	if (!strcasecmp(fsd_skip_space(s->val), "auto")) {
		s->c->alloc_rate = 0;
		s->c->alloc_burst = 0;
		s->c->alloc_rate_auto = true;
		return 0;
	}
	if (fsd_parse_rate(s->val, &s->c->alloc_rate, &s->c->alloc_burst))
		return -EINVAL;
	s->c->alloc_rate_auto = false;
	return 0;
}

static void print_alloc_rate(const struct fsd_show *s)
{
	if (s->c->alloc_rate_auto)
		snprintf(s->buf, s->len, "auto");
	else
		format_rate(s->buf, s->len, s->c->alloc_rate,
			    s->c->alloc_burst);
}

static int parse_connect_rate(const struct fsd_set *s)
{
	return fsd_parse_rate(s->val, &s->c->connect_rate,
			      &s->c->connect_burst);
}

static void print_connect_rate(const struct fsd_show *s)
{
	format_rate(s->buf, s->len, s->c->connect_rate, s->c->connect_burst);
}

/* The helpers read and write these as uint32_t and int. */
_Static_assert(sizeof(unsigned int) == sizeof(uint32_t), "unsigned int");
_Static_assert(sizeof(enum fsd_hugepages) == sizeof(int), "enum");

static const struct fsd_key_name hugepages_names[] = {
	{ "auto", FSD_HUGE_AUTO },
	{ "never", FSD_HUGE_NEVER },
	{ "always", FSD_HUGE_ALWAYS },
	{ "no", FSD_HUGE_NEVER },
	{ "yes", FSD_HUGE_ALWAYS },
	{ NULL, 0 },
};

#define U32(f, lo, hi) FIELDS(f, f), .parse = parse_u32,		\
	.print = print_u32, .min = (lo), .max = (hi)
#define DURATION(f, lo) FIELDS(f, f), .parse = parse_duration,		\
	.print = print_u32, .unit = "ms", .min = (lo)
#define AMOUNT(f, lo) FIELDS(f, f), .parse = parse_amount,		\
	.print = print_amount, .min = (lo)
#define PATH(f, fl) FIELDS(f, f), .parse = parse_path,			\
	.print = print_path, .flags = (fl)
/* key-file and host-keys: where the secrets are, settled at start. */
#define SECRET_PATH(f) PATH(f, FSD_KEY_ABSOLUTE | FSD_KEY_NONE_ANYCASE |	\
			   FSD_KEY_EMPTY_NONE),				\
	.reload = FSD_KEY_RESTART, .want = "want an absolute path or none"

/*
 * In the order --check-config prints them and --help lists them.
 * .want words the error for a value the key refuses, after
 * "KEY 'VALUE': "; without one the error is "KEY: bad value 'VALUE'".
 */
const struct fsd_key fsd_keys[] = {
	{ .name = "listen", .short_opt = 'l', .arg = "ADDR[:PORT]",
	  FIELDS(listen_addr, port), .parse = parse_listen,
	  .print = print_listen, .reload = FSD_KEY_RESTART,
	  .help = "address to listen on (default 0.0.0.0:7471)" },
	{ .name = "donate", .short_opt = 'd', .arg = "SIZE|PCT%",
	  AMOUNT(donate, 1), .reload = FSD_KEY_RESTART,
	  .help = "memory to donate, e.g. 8G, 256M, or 50% of\n"
		  "MemAvailable at start (default 50%)" },
	{ .name = "slab-size", .short_opt = 's', .arg = "SIZE",
	  FIELDS(slab_size, slab_size), .parse = parse_slab_size,
	  .print = print_size, .reload = FSD_KEY_RESTART,
	  .want = "must be a power of two from 2M to 1T",
	  .help = "slab size, a power of two >= 2M (default 1G)" },
	{ .name = "headroom", .arg = "SIZE|PCT%", AMOUNT(headroom, 0),
	  .help = "keep at least this much MemAvailable; below\n"
		  "it, reclaim slabs (default 10% of MemTotal)" },
	{ .name = "hysteresis", .arg = "SIZE|PCT%", AMOUNT(hysteresis, 0),
	  .help = "memory above the headroom needed before slabs\n"
		  "are offered again (default 5% of MemTotal)" },
	{ .name = "pressure-interval", .arg = "DUR",
	  DURATION(pressure_interval_ms, 10),
	  .want = "want a duration of at least 10ms",
	  .help = "how often to check memory (default 1s)" },
	{ .name = "reclaim-deadline", .arg = "DUR",
	  DURATION(reclaim_deadline_ms, 1),
	  .help = "deadline given to hosts in RECLAIM_REQ\n"
		  "(default 10s)" },
	/*
	 * No "off": a host gone without a word would keep its slabs for
	 * as long as the donor runs.
	 */
	{ .name = "keepalive", .arg = "DUR", DURATION(keepalive_ms, 100),
	  .want = "want a duration of at least 100ms (it cannot be turned off)",
	  .help = "probe a host session idle this long; one that\n"
		  "does not answer is closed and its slabs freed\n"
		  "(default 15s, at least 100ms)" },
	{ .name = "psi-threshold", .arg = "PCT", FIELDS(psi_threshold,
	  psi_threshold), .parse = parse_pct100, .print = print_pct100,
	  .max = 10000,
	  .help = "also treat 'some avg10' memory pressure at or\n"
		  "above PCT as pressure while MemAvailable is\n"
		  "within the hysteresis band (default 0: off)" },
	{ .name = "hugepages", .arg = "auto|never|always",
	  FIELDS(hugepages, hugepages), .parse = parse_enum,
	  .print = print_enum, .names = hugepages_names,
	  .reload = FSD_KEY_RESTART,
	  .help = "back slabs with hugetlb pages (default auto)" },
	{ .name = "max-hosts", .arg = "N", U32(max_hosts, 1, 65536),
	  .help = "concurrent host sessions, authenticated ones\n"
		  "with key-file (default 256)" },
	/*
	 * 0 would refuse every host once a key-file is set: no session
	 * could get as far as proving the key.
	 */
	{ .name = "max-unauthenticated", .arg = "N",
	  U32(max_unauthenticated, 1, 65536),
	  .want = "want 1 to 65536 (0 would let no host authenticate)",
	  .help = "with key-file: sessions that have not proved\n"
		  "the key yet (default 16); when full, the oldest\n"
		  "of them makes way for a new connect" },
	{ .name = "max-unauthenticated-per-address", .arg = "N",
	  U32(max_unauth_per_address, 0, 65536),
	  .want = "want 0 (no limit) to 65536",
	  .help = "with key-file: of those, from one address; a\n"
		  "new connect closes that address's oldest\n"
		  "(default 2, 0: no limit)" },
	{ .name = "connect-rate", .arg = "RATE[/BURST]",
	  FIELDS(connect_rate, connect_burst), .parse = parse_connect_rate,
	  .print = print_connect_rate,
	  .want = "want RATE or RATE/BURST (connects per second), or 0 for no limit",
	  .help = "control connects per second from one address,\n"
		  "refused (BUSY) over it (default 10/20, 0: off)" },
	{ .name = "log-level", .arg = "LEVEL", FIELDS(log_level, log_level),
	  .parse = parse_log_level, .print = print_log_level,
	  .want = "want error, warning, notice, info or debug",
	  .help = "error|warning|notice|info|debug (default info)" },
	{ .name = "stats-socket", .arg = "PATH",
	  PATH(stats_socket, FSD_KEY_EMPTY_NONE),
	  .reload = FSD_KEY_RESTART, .want = "path too long",
	  .help = "stats socket, \"none\" to disable\n"
		  "(default " FSD_STATS_SOCKET ")" },
	{ .name = "allowed-hosts", .arg = "LIST",
	  FIELDS(allowed_hosts, allowed_hosts), .parse = parse_acl,
	  .print = print_acl,
	  .help = "addresses, ADDR/BITS blocks, id:HEX or name:TEXT\n"
		  "host identities that may connect (default: any)" },
	{ .name = "max-slabs-per-host", .arg = "fair|N|SIZE|PCT%",
	  FIELDS(max_slabs_per_host, max_slabs_fair),
	  .parse = parse_slab_cap, .print = print_slab_cap,
	  .want = "want fair, a number of slabs, a size like 4G, or 1% to 100% of the pool",
	  .help = "slabs one host may hold (default fair: the pool\n"
		  "shared among the hosts with a session, all of\n"
		  "it to a host alone; 0: no cap; PCT% of the pool,\n"
		  "at least one slab), by the id its host-keys file\n"
		  "proves, else the id it claims" },
	{ .name = "max-sessions-per-address", .arg = "N",
	  U32(max_sessions_per_address, 0, 65536),
	  .help = "control sessions from one address (default 4)" },
	{ .name = "max-queue-depth", .arg = "N",
	  U32(max_queue_depth, 1, 65536), .want = "want 1 to 65536",
	  .help = "size cap of a host's I/O queue pairs (default 1024)" },
	{ .name = "handshake-timeout", .arg = "DUR",
	  DURATION(handshake_timeout_ms, 100),
	  .want = "want a duration of at least 100ms",
	  .help = "time a connection has to be established\n"
		  "(default 5s)" },
	/*
	 * Counted from the control QP's establishment, not the connect:
	 * the proof is two round trips and two X25519 operations, and a
	 * keyless connect should hold its place for no longer.
	 */
	{ .name = "auth-timeout", .arg = "DUR",
	  DURATION(auth_timeout_ms, 100),
	  .want = "want a duration of at least 100ms",
	  .help = "with key-file: time a host has, once its\n"
		  "control connection is up, to prove its key\n"
		  "(default 2s; handshake-timeout bounds it too)" },
	/*
	 * Read once, at start: it is how long the slabs kept across the
	 * restart that started this farswapd, or across the end of a host's
	 * session (FARSWAP_FEAT_KEEP), wait for their hosts.
	 */
	{ .name = "resume-grace", .arg = "DUR",
	  DURATION(resume_grace_ms, 0), .reload = FSD_KEY_RESTART,
	  .want = "want a duration (0: resuming off)",
	  .help = "after a restart, or a host's session that\n"
		  "ended without it, how long the host may take\n"
		  "back the slabs it held (SLAB_RESUME_REQ) before\n"
		  "those are freed (default 60s; 0: resuming off,\n"
		  "a restart drains first)" },
	{ .name = "alloc-rate", .arg = "RATE[/BURST]|auto",
	  FIELDS(alloc_rate, alloc_rate_auto), .parse = parse_alloc_rate,
	  .print = print_alloc_rate,
	  .want = "want RATE or RATE/BURST (grants per second), auto, or 0 for no limit",
	  .help = "slab grants per second per session (default\n"
		  "auto: 4 GiB of slabs a second, burst 16 GiB,\n"
		  "at least 4/16: 4/16 with 1G slabs; 0: off)" },
	{ .name = "revoke-after", .arg = "N", U32(revoke_after, 0, 1000),
	  .want = "want a number of deadlines, 0 (never) to 1000",
	  .help = "missed reclaim deadlines under pressure before\n"
		  "a slab is taken back by force (default 3, 0: never)" },
	{ .name = "metrics-file", .arg = "PATH",
	  PATH(metrics_file, FSD_KEY_ABSOLUTE),
	  .want = "want an absolute path or none",
	  .help = "rewrite PATH with Prometheus metrics every\n"
		  "pressure interval (default: none)" },
	/*
	 * Not printed, and a reload keeps the running one without a word:
	 * as it always has.
	 */
	{ .name = "donor-id", .arg = "ID", FIELDS(donor_id, donor_id_set),
	  .parse = parse_donor_id, .max = FARSWAP_ID_LEN,
	  .reload = FSD_KEY_RESTART_QUIET,
	  .want = "want 1 to 16 characters",
	  .help = "identity sent to hosts (default: derived from\n"
		  "machine-id, never the machine id itself)" },
	{ .name = "failure-domain", .arg = "NAME",
	  FIELDS(failure_domain, failure_domain), .parse = parse_domain,
	  .print = print_domain,
	  .want = "want 1 to 31 printable characters without spaces",
	  .help = "what this donor fails with (rack, power feed),\n"
		  "1 to 31 printable characters, no spaces;\n"
		  "hosts put a chunk's replicas in distinct\n"
		  "domains (default: the donor id)" },
	{ .name = "key-file", .arg = "PATH", SECRET_PATH(key_file),
	  .help = "secret shared with hosts (a key file, as\n"
		  "--gen-key makes it, mode 0600); hosts must\n"
		  "authenticate with it" },
	{ .name = "host-keys", .arg = "DIR", SECRET_PATH(host_keys),
	  .help = "a secret per host: DIR/HOST-ID (as the log\n"
		  "names hosts, or the host's UUID), read at\n"
		  "each handshake; key-file serves the others" },
	{ .name = "donor-key-file", .arg = "PATH", SECRET_PATH(donor_key_file),
	  .help = "this donor's own secret: a host that pins it\n"
		  "(farswapctl --donor-key-file) knows it reached\n"
		  "this donor; proven with the host's key" },
	/* No .arg: on the command line it is a flag meaning yes. */
	{ .name = "require-session-keys", FIELDS(require_session_keys,
	  require_session_keys), .parse = parse_bool, .print = print_bool,
	  .want = "want yes or no",
	  .help = "refuse hosts whose farswap.ko proves its key\n"
		  "without an X25519 session key (older ones):\n"
		  "their control messages could not be tagged\n"
		  "(default no)" },
	{ .name = "insecure-no-auth", FIELDS(insecure_no_auth,
	  insecure_no_auth), .parse = parse_bool, .print = print_bool,
	  .reload = FSD_KEY_RESTART, .want = "want yes or no",
	  .help = "run without key-file: any host on the fabric\n"
		  "can take this donor's memory" },
};

const size_t fsd_nr_keys = sizeof(fsd_keys) / sizeof(fsd_keys[0]);
/* fsd_parse_args() (cmdline.c) sizes its option tables by FSD_MAX_KEYS. */
_Static_assert(sizeof(fsd_keys) / sizeof(fsd_keys[0]) <= FSD_MAX_KEYS,
	       "fsd_keys[] outgrew FSD_MAX_KEYS");

/* Keys compare with '-' and '_' as the same character, in any case. */
static bool key_is(const char *key, const char *name)
{
	for (; *key && *name; key++, name++) {
		char a = *key == '_' ? '-' : (char)tolower((unsigned char)*key);

		if (a != *name)
			return false;
	}
	return !*key && !*name;
}

const struct fsd_key *fsd_config_key(const char *key)
{
	size_t i;

	for (i = 0; i < fsd_nr_keys; i++)
		if (key_is(key, fsd_keys[i].name))
			return &fsd_keys[i];
	return NULL;
}

int fsd_config_set(struct fsd_config *c, const char *key, const char *val,
		   char *err, size_t errlen)
{
	const struct fsd_key *k;
	char why[192];
	struct fsd_set s = { .c = c, .val = val, .why = why,
			     .whylen = sizeof(why) };
	int ret;

	if (!val)
		return set_err(err, errlen, "%s: missing value%s", key, "");
	k = fsd_config_key(key);
	if (!k)
		return set_err(err, errlen, "unknown key '%s'%s", key, "");
	s.k = k;
	why[0] = '\0';
	ret = k->parse(&s);
	if (!ret)
		return 0;
	if (ret == -ENOMEM)
		return ret;
	if (why[0])
		return set_err(err, errlen, "%s%s", why, "");
	/* A row's own words name the key as the table spells it. */
	if (k->want) {
		if (err && errlen)
			snprintf(err, errlen, "%s '%s': %s", k->name, val,
				 k->want);
		return -EINVAL;
	}
	return set_err(err, errlen, "%s: bad value '%s'", key, val);
}

/* Do @a and @b hold the same value of @k?  (Values are canonical.) */
bool fsd_config_key_same(const struct fsd_key *k, const struct fsd_config *a,
			 const struct fsd_config *b)
{
	return !memcmp((const char *)a + k->off, (const char *)b + k->off,
		       k->size);
}

bool fsd_config_reload(struct fsd_config *cur, const struct fsd_config *next)
{
	bool restart = false;
	size_t i;

	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];

		if (k->reload == FSD_KEY_LIVE)
			memcpy((char *)cur + k->off,
			       (const char *)next + k->off, k->size);
		else if (k->reload == FSD_KEY_RESTART &&
			 !fsd_config_key_same(k, cur, next))
			restart = true;
	}
	return restart;
}

void fsd_config_restart_keys(char *buf, size_t len)
{
	size_t i, n = 0, done = 0;

	for (i = 0; i < fsd_nr_keys; i++)
		n += fsd_keys[i].reload == FSD_KEY_RESTART;
	buf[0] = '\0';
	for (i = 0; i < fsd_nr_keys; i++) {
		if (fsd_keys[i].reload != FSD_KEY_RESTART)
			continue;
		done++;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 done == 1 ? "" : done == n ? " and " : ", ",
			 fsd_keys[i].name);
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Parse config text: KEY=VALUE or "KEY VALUE" lines, # comments. */
int fsd_config_parse(struct fsd_config *c, const char *text, const char *name,
		     char *err, size_t errlen)
{
	char line[512], msg[256];
	unsigned int lineno = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *s, *key, *val, *hash;

		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "%s:%u: line too long", name,
				 lineno);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (nl ? 1 : 0);

		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		s = trim(line);
		if (!*s)
			continue;
		key = s;
		s += strcspn(s, "= \t");
		if (*s == '=') {
			*s++ = '\0';
		} else if (*s) {
			*s++ = '\0';
			s = trim(s);
			if (*s == '=')
				s++;
		}
		key = trim(key);
		val = trim(s);
		/* Optional quotes around the value. */
		if (strlen(val) >= 2 && (val[0] == '"' || val[0] == '\'') &&
		    val[strlen(val) - 1] == val[0]) {
			val[strlen(val) - 1] = '\0';
			val++;
		}
		if (!*val) {
			snprintf(err, errlen, "%s:%u: %s: missing value", name,
				 lineno, key);
			return -EINVAL;
		}
		if (fsd_config_set(c, key, val, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s:%u: %s", name, lineno, msg);
			return -EINVAL;
		}
	}
	return 0;
}

int fsd_config_load(struct fsd_config *c, const char *path, bool must_exist,
		    char *err, size_t errlen)
{
	char *text;
	FILE *f;
	long n;
	int ret;

	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(err, errlen, "cannot open config %s: %s", path,
			 strerror(errno));
		return -errno;
	}
	n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, errlen, "cannot read config %s", path);
		return -EINVAL;
	}
	text = calloc(1, (size_t)n + 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		fclose(f);
		snprintf(err, errlen, "cannot read config %s", path);
		return -EIO;
	}
	fclose(f);
	ret = fsd_config_parse(c, text, path, err, errlen);
	free(text);
	return ret;
}

/*
 * Turn percentages into bytes and check that the sizes make sense
 * together.  The donation is rounded down to whole slabs.
 */
int fsd_config_resolve(const struct fsd_config *c, uint64_t mem_total,
		       uint64_t mem_available, struct fsd_limits *out,
		       char *err, size_t errlen)
{
	char a[32], b[32], h[32];
	uint64_t want, slabs;

	memset(out, 0, sizeof(*out));
	out->headroom = fsd_amount_resolve(&c->headroom, mem_total);
	out->hysteresis = fsd_amount_resolve(&c->hysteresis, mem_total);
	want = fsd_amount_resolve(&c->donate, mem_available);
	slabs = want / c->slab_size;
	fsd_format_size(want, a, sizeof(a));
	fsd_format_size(c->slab_size, b, sizeof(b));
	if (!slabs) {
		snprintf(err, errlen,
			 "donation of %s is less than one slab of %s: lower --slab-size or raise --donate",
			 a, b);
		return -EINVAL;
	}
	if (slabs > UINT32_MAX - 1) {
		snprintf(err, errlen, "donation of %s is too many slabs of %s",
			 a, b);
		return -ERANGE;
	}
	out->nr_slabs = (uint32_t)slabs;
	out->donate = slabs * c->slab_size;
	if (c->max_bytes_per_host && c->max_bytes_per_host < c->slab_size) {
		fsd_format_size(c->max_bytes_per_host, a, sizeof(a));
		snprintf(err, errlen,
			 "max-slabs-per-host %s is less than one slab of %s",
			 a, b);
		return -EINVAL;
	}
	out->max_slabs_per_host = fsd_slab_cap(c, c->slab_size,
					       out->nr_slabs);
	out->max_slabs_fair = c->max_slabs_fair;
	fsd_alloc_rate(c, c->slab_size, &out->alloc_rate, &out->alloc_burst);
	if (out->donate > mem_available ||
	    mem_available - out->donate < out->headroom) {
		fsd_format_size(out->donate, a, sizeof(a));
		fsd_format_size(mem_available, b, sizeof(b));
		fsd_format_size(out->headroom, h, sizeof(h));
		snprintf(err, errlen,
			 "cannot donate %s: only %s is available and %s must stay free (--headroom)",
			 a, b, h);
		return -ENOMEM;
	}
	return 0;
}

/* Append to @buf while it has room: a full buffer keeps its first bytes. */
static char *print_room(char *buf, size_t len, size_t *left)
{
	size_t n = strlen(buf);

	*left = len - n;
	return n + 1 < len ? buf + n : NULL;
}

/* "KEY VALUE" lines, one per printable key, then how hosts authenticate. */
void fsd_config_print(const struct fsd_config *c, char *buf, size_t len)
{
	size_t i, left;
	char *p;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];

		if (!k->print)
			continue;
		p = print_room(buf, len, &left);
		if (p)
			snprintf(p, left, "%s ", k->name);
		p = print_room(buf, len, &left);
		if (p) {
			struct fsd_show s = { .k = k, .c = c, .buf = p,
					      .len = left };

			k->print(&s);
		}
		p = print_room(buf, len, &left);
		if (p)
			snprintf(p, left, "\n");
	}
	p = print_room(buf, len, &left);
	if (p)
		snprintf(p, left, "auth %s\n",
			 c->key_file[0] || c->host_keys[0] ? "hmac-sha256" :
							      "none");
}

/*
 * A donor without key-file lends its memory to anyone who can reach it:
 * only when asked to in so many words.
 */
int fsd_config_check_auth(const struct fsd_config *c, char *err,
			  size_t errlen)
{
	if (c->donor_key_file[0] && !c->key_file[0] && !c->host_keys[0]) {
		snprintf(err, errlen,
			 "donor-key-file without key-file or host-keys: the donor key is proven together with a host's key, and this donor holds none");
		return -EINVAL;
	}
	if (c->key_file[0] || c->host_keys[0] || c->insecure_no_auth)
		return 0;
	snprintf(err, errlen,
		 "no key-file or host-keys: hosts could not be authenticated, and any host on the fabric could take this donor's memory; give --key-file PATH or --host-keys DIR (key-file, host-keys in the config), or --insecure-no-auth (insecure-no-auth = yes) to run without");
	return -EPERM;
}
