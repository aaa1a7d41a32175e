// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd configuration: one setter, fsd_config_set(), serves the
 * config file and the command line alike, so a key means the same thing
 * in both.  Flags override the file: the file is read first, the flags
 * are applied on top.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"

const char fsd_usage[] =
	"Usage: farswapd [OPTIONS]\n"
	"       farswapd --stats [--json] [--stats-socket PATH]\n"
	"\n"
	"Donate this machine's idle DRAM to farswap hosts over RDMA.\n"
	"\n"
	"  -l, --listen ADDR[:PORT]     address to listen on (default 0.0.0.0:7471)\n"
	"  -d, --donate SIZE|PCT%       memory to donate, e.g. 8G, 256M, or 50% of\n"
	"                               MemAvailable at start (default 50%)\n"
	"  -s, --slab-size SIZE         slab size, a power of two >= 2M (default 1G)\n"
	"      --headroom SIZE|PCT%     keep at least this much MemAvailable; below\n"
	"                               it, reclaim slabs (default 10% of MemTotal)\n"
	"      --hysteresis SIZE|PCT%   memory above the headroom needed before slabs\n"
	"                               are offered again (default 5% of MemTotal)\n"
	"      --pressure-interval DUR  how often to check memory (default 1s)\n"
	"      --reclaim-deadline DUR   deadline given to hosts in RECLAIM_REQ\n"
	"                               (default 10s)\n"
	"      --keepalive DUR          probe a host session idle this long; one that\n"
	"                               does not answer is closed and its slabs freed\n"
	"                               (default 15s, at least 100ms)\n"
	"      --psi-threshold PCT      also treat 'some avg10' memory pressure at or\n"
	"                               above PCT as pressure while MemAvailable is\n"
	"                               within the hysteresis band (default 0: off)\n"
	"      --hugepages auto|never|always\n"
	"                               back slabs with hugetlb pages (default auto)\n"
	"      --max-hosts N            concurrent host sessions, authenticated ones\n"
	"                               with key-file (default 256)\n"
	"      --max-unauthenticated N  with key-file: sessions that have not proved\n"
	"                               the key yet (default 16)\n"
	"      --allowed-hosts LIST     addresses, ADDR/BITS blocks, id:HEX or name:TEXT\n"
	"                               host identities that may connect (default: any)\n"
	"      --max-slabs-per-host N|SIZE\n"
	"                               slabs one host may hold (default 0: no cap)\n"
	"      --max-sessions-per-address N\n"
	"                               control sessions from one address (default 4)\n"
	"      --max-queue-depth N      size cap of a host's I/O queue pairs (default 1024)\n"
	"      --handshake-timeout DUR  time a connection has to be established\n"
	"                               (default 5s)\n"
	"      --alloc-rate RATE[/BURST]\n"
	"                               slab grants per second per session (default 0: off)\n"
	"      --revoke-after N         missed reclaim deadlines under pressure before\n"
	"                               a slab is taken back by force (default 3, 0: never)\n"
	"      --key-file PATH          secret shared with hosts (16 to 64 bytes, mode\n"
	"                               0600); hosts must authenticate with it\n"
	"      --host-keys DIR          a secret per host: DIR/HOST-ID (as the log\n"
	"                               names hosts, or the host's UUID), read at\n"
	"                               each handshake; key-file serves the others\n"
	"      --insecure-no-auth       run without key-file: any host on the fabric\n"
	"                               can take this donor's memory\n"
	"      --donor-id ID            identity sent to hosts (default: machine-id)\n"
	"      --failure-domain NAME    what this donor fails with (rack, power feed),\n"
	"                               1 to 31 printable characters, no spaces;\n"
	"                               hosts put a chunk's replicas in distinct\n"
	"                               domains (default: the donor id)\n"
	"      --stats-socket PATH      stats socket, \"none\" to disable\n"
	"                               (default " FSD_STATS_SOCKET ")\n"
	"  -c, --config PATH            config file (default " FSD_CONFIG_PATH ")\n"
	"  -v, --verbose                more log output (repeatable)\n"
	"      --log-level LEVEL        error|warning|notice|info|debug (default info)\n"
	"      --metrics-file PATH      rewrite PATH with Prometheus metrics every\n"
	"                               pressure interval (default: none)\n"
	"      --stats                  print a running daemon's stats and exit\n"
	"      --json                   with --stats: as JSON\n"
	"      --check-config           print the effective configuration and exit\n"
	"      --version                print the protocol versions and exit\n"
	"  -h, --help                   this text\n"
	"\n"
	"SIZE takes K, M, G, T suffixes (powers of 1024).  DUR takes ms, s, m\n"
	"suffixes; a bare number is seconds.  Every long option is also a config\n"
	"file key (KEY=VALUE or 'KEY VALUE' lines, # comments).  SIGUSR1 logs the\n"
	"stats, SIGHUP re-reads the config file, SIGTERM frees everything and exits.\n";

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

static int set_err(char *err, size_t errlen, const char *fmt, const char *a,
		   const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
	return -EINVAL;
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Unsigned decimal, no sign, no overflow; *end left after the digits. */
static int parse_u64(const char *s, uint64_t *out, const char **end)
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

/* "4096", "256M", "8G", "2MiB", "1tb": binary units, integers only. */
int fsd_parse_size(const char *s, uint64_t *out)
{
	const char *p;
	uint64_t v;
	unsigned int shift = 0;
	int ret;

	if (!s)
		return -EINVAL;
	ret = parse_u64(skip_space(s), &v, &p);
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
	if (*skip_space(p))
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

	if (!s)
		return -EINVAL;
	if (strchr(s, '%')) {
		ret = parse_u64(skip_space(s), &v, &p);
		if (ret)
			return ret;
		if (*p != '%' || *skip_space(p + 1))
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

	if (!s)
		return -EINVAL;
	ret = parse_u64(skip_space(s), &v, &p);
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
	if (*skip_space(p))
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

	if (!s)
		return -EINVAL;
	ret = parse_u64(skip_space(s), &whole, &p);
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
	if (*skip_space(p))
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
	if (!strcasecmp(skip_space(s), "off")) {
		*rate = 0;
		*burst = 0;
		return 0;
	}
	if (parse_u64(skip_space(s), &r, &p))
		return -EINVAL;
	b = r;
	if (*p == '/') {
		if (parse_u64(p + 1, &b, &p) || !b)
			return -EINVAL;
	}
	if (*skip_space(p))
		return -EINVAL;
	if (r > 1000000 || b > 1000000)
		return -ERANGE;
	*rate = (uint32_t)r;
	*burst = r ? (uint32_t)(b ? b : 1) : 0;
	return 0;
}

/*
 * The per-host slab cap in slabs: max-slabs-per-host as a count, or its
 * size in whole slabs (rounded down, so a host never holds more than the
 * size); 0: no cap.
 */
uint32_t fsd_slab_cap(const struct fsd_config *c, uint64_t slab_size)
{
	uint64_t n = c->max_slabs_per_host;

	if (c->max_bytes_per_host)
		n = slab_size ? c->max_bytes_per_host / slab_size : 0;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
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
		if (parse_u64(pstr, &v, &end) || *end || v < 1 || v > 65535)
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
	c->max_unauthenticated = 16;
	c->max_sessions_per_address = 4;
	c->max_queue_depth = 1024;
	c->handshake_timeout_ms = 5000;
	c->revoke_after = 3;
}

/* Keys compare with '-' and '_' as the same character. */
static bool key_is(const char *key, const char *name)
{
	for (; *key && *name; key++, name++) {
		char a = *key == '_' ? '-' : (char)tolower((unsigned char)*key);

		if (a != *name)
			return false;
	}
	return !*key && !*name;
}

int fsd_config_set(struct fsd_config *c, const char *key, const char *val,
		   char *err, size_t errlen)
{
	uint64_t v;
	int ret;

	if (!val)
		return set_err(err, errlen, "%s: missing value%s", key, "");
	if (key_is(key, "listen")) {
		char addr[FSD_ADDR_LEN];
		uint16_t port = c->port;

		addr[0] = '\0';
		ret = fsd_parse_listen(val, addr, sizeof(addr), &port);
		if (ret)
			goto bad;
		if (addr[0])
			memcpy(c->listen_addr, addr, sizeof(addr));
		c->port = port;
	} else if (key_is(key, "donate")) {
		struct fsd_amount a;

		ret = fsd_parse_amount(val, &a);
		if (ret || (!a.pct && !a.bytes))
			goto bad;
		c->donate = a;
	} else if (key_is(key, "slab-size")) {
		ret = fsd_parse_size(val, &v);
		if (ret || !farswap_slab_size_valid(v))
			return set_err(err, errlen,
				       "slab-size '%s': must be a power of two from 2M to 1T%s",
				       val, "");
		c->slab_size = v;
	} else if (key_is(key, "headroom") || key_is(key, "hysteresis")) {
		struct fsd_amount a;

		ret = fsd_parse_amount(val, &a);
		if (ret)
			goto bad;
		if (key_is(key, "headroom"))
			c->headroom = a;
		else
			c->hysteresis = a;
	} else if (key_is(key, "pressure-interval")) {
		uint32_t ms;

		ret = fsd_parse_duration_ms(val, &ms);
		if (ret || ms < 10)
			return set_err(err, errlen,
				       "pressure-interval '%s': want a duration of at least 10ms%s",
				       val, "");
		c->pressure_interval_ms = ms;
	} else if (key_is(key, "reclaim-deadline")) {
		uint32_t ms;

		ret = fsd_parse_duration_ms(val, &ms);
		if (ret || !ms)
			goto bad;
		c->reclaim_deadline_ms = ms;
	} else if (key_is(key, "keepalive")) {
		uint32_t ms;

		/*
		 * No "off": a host gone without a word would keep its
		 * slabs for as long as the donor runs.
		 */
		ret = fsd_parse_duration_ms(val, &ms);
		if (ret || ms < 100)
			return set_err(err, errlen,
				       "keepalive '%s': want a duration of at least 100ms (it cannot be turned off)%s",
				       val, "");
		c->keepalive_ms = ms;
	} else if (key_is(key, "psi-threshold")) {
		unsigned int p;

		ret = fsd_parse_percent100(val, &p);
		if (ret)
			goto bad;
		c->psi_threshold = p;
	} else if (key_is(key, "log-level")) {
		int l = fsd_log_parse_level(val);

		if (l < 0)
			return set_err(err, errlen,
				       "log-level '%s': want error, warning, notice, info or debug%s",
				       val, "");
		c->log_level = l;
	} else if (key_is(key, "stats-socket")) {
		if (!strcmp(val, "none") || !*val) {
			c->stats_socket[0] = '\0';
		} else {
			if (strlen(val) >= sizeof(c->stats_socket))
				return set_err(err, errlen,
					       "stats-socket '%s': path too long%s",
					       val, "");
			snprintf(c->stats_socket, sizeof(c->stats_socket),
				 "%s", val);
		}
	} else if (key_is(key, "donor-id")) {
		size_t n = strlen(val);

		if (!n || n > FARSWAP_ID_LEN)
			return set_err(err, errlen,
				       "donor-id '%s': want 1 to 16 characters%s",
				       val, "");
		memset(c->donor_id, 0, sizeof(c->donor_id));
		memcpy(c->donor_id, val, n);
		c->donor_id_set = true;
	} else if (key_is(key, "failure-domain")) {
		if (fsd_parse_domain(val, c->failure_domain,
				     sizeof(c->failure_domain)))
			return set_err(err, errlen,
				       "failure-domain '%s': want 1 to 31 printable characters without spaces%s",
				       val, "");
	} else if (key_is(key, "hugepages")) {
		if (!strcasecmp(val, "auto"))
			c->hugepages = FSD_HUGE_AUTO;
		else if (!strcasecmp(val, "never") || !strcasecmp(val, "no"))
			c->hugepages = FSD_HUGE_NEVER;
		else if (!strcasecmp(val, "always") || !strcasecmp(val, "yes"))
			c->hugepages = FSD_HUGE_ALWAYS;
		else
			goto bad;
	} else if (key_is(key, "max-hosts")) {
		const char *end;

		if (parse_u64(val, &v, &end) || *end || !v || v > 65536)
			goto bad;
		c->max_hosts = (unsigned int)v;
	} else if (key_is(key, "max-unauthenticated")) {
		const char *end;

		/*
		 * 0 would refuse every host once a key-file is set: no
		 * session could get as far as proving the key.
		 */
		if (parse_u64(val, &v, &end) || *end || !v || v > 65536)
			return set_err(err, errlen,
				       "max-unauthenticated '%s': want 1 to 65536 (0 would let no host authenticate)%s",
				       val, "");
		c->max_unauthenticated = (unsigned int)v;
	} else if (key_is(key, "metrics-file")) {
		if (!strcmp(val, "none")) {
			c->metrics_file[0] = '\0';
		} else {
			if (val[0] != '/' ||
			    strlen(val) >= sizeof(c->metrics_file))
				return set_err(err, errlen,
					       "metrics-file '%s': want an absolute path or none%s",
					       val, "");
			snprintf(c->metrics_file, sizeof(c->metrics_file),
				 "%s", val);
		}
	} else if (key_is(key, "allowed-hosts")) {
		char why[192];

		/* Parsed into a copy: a bad list leaves the old one. */
		struct fsd_access *acl = malloc(sizeof(*acl));

		if (!acl)
			return -ENOMEM;
		ret = fsd_access_parse(val, acl, why, sizeof(why));
		if (!ret)
			c->allowed_hosts = *acl;
		free(acl);
		if (ret)
			return set_err(err, errlen, "%s%s", why, "");
	} else if (key_is(key, "max-slabs-per-host")) {
		const char *end;

		if (!parse_u64(skip_space(val), &v, &end) && !*skip_space(end)) {
			c->max_slabs_per_host = v;
			c->max_bytes_per_host = 0;
		} else if (!fsd_parse_size(val, &v) && v) {
			c->max_bytes_per_host = v;
			c->max_slabs_per_host = 0;
		} else {
			return set_err(err, errlen,
				       "max-slabs-per-host '%s': want a number of slabs or a size like 4G%s",
				       val, "");
		}
	} else if (key_is(key, "max-sessions-per-address")) {
		const char *end;

		if (parse_u64(val, &v, &end) || *end || v > 65536)
			goto bad;
		c->max_sessions_per_address = (unsigned int)v;
	} else if (key_is(key, "max-queue-depth")) {
		const char *end;

		if (parse_u64(val, &v, &end) || *end || !v || v > 65536)
			return set_err(err, errlen,
				       "max-queue-depth '%s': want 1 to 65536%s",
				       val, "");
		c->max_queue_depth = (uint32_t)v;
	} else if (key_is(key, "handshake-timeout")) {
		uint32_t ms;

		ret = fsd_parse_duration_ms(val, &ms);
		if (ret || ms < 100)
			return set_err(err, errlen,
				       "handshake-timeout '%s': want a duration of at least 100ms%s",
				       val, "");
		c->handshake_timeout_ms = ms;
	} else if (key_is(key, "alloc-rate")) {
		if (fsd_parse_rate(val, &c->alloc_rate, &c->alloc_burst))
			return set_err(err, errlen,
				       "alloc-rate '%s': want RATE or RATE/BURST (grants per second), or 0 for no limit%s",
				       val, "");
	} else if (key_is(key, "key-file")) {
		if (!strcasecmp(val, "none") || !*val) {
			c->key_file[0] = '\0';
		} else {
			if (val[0] != '/' || strlen(val) >= sizeof(c->key_file))
				return set_err(err, errlen,
					       "key-file '%s': want an absolute path or none%s",
					       val, "");
			snprintf(c->key_file, sizeof(c->key_file), "%s", val);
		}
	} else if (key_is(key, "host-keys")) {
		if (!strcasecmp(val, "none") || !*val) {
			c->host_keys[0] = '\0';
		} else {
			if (val[0] != '/' || strlen(val) >= sizeof(c->host_keys))
				return set_err(err, errlen,
					       "host-keys '%s': want an absolute path or none%s",
					       val, "");
			snprintf(c->host_keys, sizeof(c->host_keys), "%s", val);
		}
	} else if (key_is(key, "insecure-no-auth")) {
		if (!strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
		    !strcmp(val, "1"))
			c->insecure_no_auth = true;
		else if (!strcasecmp(val, "no") || !strcasecmp(val, "false") ||
			 !strcmp(val, "0"))
			c->insecure_no_auth = false;
		else
			return set_err(err, errlen,
				       "insecure-no-auth '%s': want yes or no%s",
				       val, "");
	} else if (key_is(key, "revoke-after")) {
		const char *end;

		if (parse_u64(val, &v, &end) || *end || v > 1000)
			return set_err(err, errlen,
				       "revoke-after '%s': want a number of deadlines, 0 (never) to 1000%s",
				       val, "");
		c->revoke_after = (unsigned int)v;
	} else {
		return set_err(err, errlen, "unknown key '%s'%s", key, "");
	}
	return 0;
bad:
	return set_err(err, errlen, "%s: bad value '%s'", key, val);
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

enum {
	OPT_HEADROOM = 256, OPT_HYSTERESIS, OPT_INTERVAL, OPT_DEADLINE,
	OPT_PSI, OPT_HUGE, OPT_MAX_HOSTS, OPT_MAX_UNAUTHENTICATED,
	OPT_DONOR_ID, OPT_STATS_SOCKET,
	OPT_LOG_LEVEL, OPT_STATS, OPT_CHECK, OPT_VERSION, OPT_KEEPALIVE,
	OPT_METRICS_FILE, OPT_JSON, OPT_INSECURE,
	OPT_LIMIT,	/* every limit: the key is the option's name */
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "donate", required_argument, NULL, 'd' },
	{ "slab-size", required_argument, NULL, 's' },
	{ "headroom", required_argument, NULL, OPT_HEADROOM },
	{ "hysteresis", required_argument, NULL, OPT_HYSTERESIS },
	{ "pressure-interval", required_argument, NULL, OPT_INTERVAL },
	{ "reclaim-deadline", required_argument, NULL, OPT_DEADLINE },
	{ "keepalive", required_argument, NULL, OPT_KEEPALIVE },
	{ "psi-threshold", required_argument, NULL, OPT_PSI },
	{ "hugepages", required_argument, NULL, OPT_HUGE },
	{ "max-hosts", required_argument, NULL, OPT_MAX_HOSTS },
	{ "max-unauthenticated", required_argument, NULL,
	  OPT_MAX_UNAUTHENTICATED },
	{ "allowed-hosts", required_argument, NULL, OPT_LIMIT },
	{ "max-slabs-per-host", required_argument, NULL, OPT_LIMIT },
	{ "max-sessions-per-address", required_argument, NULL, OPT_LIMIT },
	{ "max-queue-depth", required_argument, NULL, OPT_LIMIT },
	{ "handshake-timeout", required_argument, NULL, OPT_LIMIT },
	{ "alloc-rate", required_argument, NULL, OPT_LIMIT },
	{ "revoke-after", required_argument, NULL, OPT_LIMIT },
	{ "key-file", required_argument, NULL, OPT_LIMIT },
	{ "host-keys", required_argument, NULL, OPT_LIMIT },
	{ "insecure-no-auth", no_argument, NULL, OPT_INSECURE },
	{ "donor-id", required_argument, NULL, OPT_DONOR_ID },
	{ "failure-domain", required_argument, NULL, OPT_DONOR_ID },
	{ "stats-socket", required_argument, NULL, OPT_STATS_SOCKET },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "config", required_argument, NULL, 'c' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

/*
 * Collect the command line: the action, the config path and the flags
 * that override config keys (applied after the file is read).
 */
int fsd_parse_args(int argc, char **argv, struct fsd_args *a, char *err,
		   size_t errlen)
{
	int opt, idx;

	memset(a, 0, sizeof(*a));
	a->action = FSD_ACT_RUN;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":l:d:s:c:vh", long_opts,
				  &idx)) != -1) {
		const char *key = NULL;

		switch (opt) {
		case 'h':
			a->action = FSD_ACT_HELP;
			return 0;
		case 'v':
			a->verbose++;
			continue;
		case 'c':
			a->config_path = optarg;
			continue;
		case OPT_STATS:
			a->action = FSD_ACT_STATS;
			continue;
		case OPT_CHECK:
			a->action = FSD_ACT_CHECK;
			continue;
		case OPT_VERSION:
			a->action = FSD_ACT_VERSION;
			continue;
		case OPT_JSON:
			a->json = true;
			continue;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value",
				 argv[optind - 1]);
			return -EINVAL;
		case '?':
			snprintf(err, errlen, "unknown option '%s' (see --help)",
				 argv[optind - 1]);
			return -EINVAL;
		case 'l':
			key = "listen";
			break;
		case 'd':
			key = "donate";
			break;
		case 's':
			key = "slab-size";
			break;
		case OPT_INSECURE:
			key = "insecure-no-auth";
			optarg = (char *)"yes";
			break;
		default:
			key = long_opts[idx].name;
			break;
		}
		if (a->nr >= FSD_MAX_OVERRIDES) {
			snprintf(err, errlen, "too many options");
			return -E2BIG;
		}
		a->kv[a->nr].key = key;
		a->kv[a->nr].val = optarg;
		a->nr++;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)",
			 argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int fsd_config_apply_args(struct fsd_config *c, const struct fsd_args *a,
			  char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	for (i = 0; i < a->nr; i++) {
		ret = fsd_config_set(c, a->kv[i].key, a->kv[i].val, err,
				     errlen);
		if (ret)
			return ret;
	}
	if (a->verbose) {
		c->log_level += a->verbose;
		if (c->log_level > FSD_LOG_DEBUG)
			c->log_level = FSD_LOG_DEBUG;
	}
	return 0;
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
	out->max_slabs_per_host = fsd_slab_cap(c, c->slab_size);
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

void fsd_config_print(const struct fsd_config *c, char *buf, size_t len)
{
	char donate[32], slab[32], head[32], hyst[32], cap[32], rate[32];
	static const char *const huge[] = { "auto", "never", "always" };
	char *acl = malloc(FSD_ACCESS_MAX * 64);

	if (c->donate.pct)
		snprintf(donate, sizeof(donate), "%u%%", c->donate.pct);
	else
		fsd_format_size(c->donate.bytes, donate, sizeof(donate));
	fsd_format_size(c->slab_size, slab, sizeof(slab));
	if (c->headroom.pct)
		snprintf(head, sizeof(head), "%u%%", c->headroom.pct);
	else
		fsd_format_size(c->headroom.bytes, head, sizeof(head));
	if (c->hysteresis.pct)
		snprintf(hyst, sizeof(hyst), "%u%%", c->hysteresis.pct);
	else
		fsd_format_size(c->hysteresis.bytes, hyst, sizeof(hyst));
	if (c->max_bytes_per_host)
		fsd_format_size(c->max_bytes_per_host, cap, sizeof(cap));
	else
		snprintf(cap, sizeof(cap), "%" PRIu64, c->max_slabs_per_host);
	if (c->alloc_rate)
		snprintf(rate, sizeof(rate), "%u/%u", c->alloc_rate,
			 c->alloc_burst);
	else
		snprintf(rate, sizeof(rate), "0");
	if (acl)
		fsd_access_format(&c->allowed_hosts, acl, FSD_ACCESS_MAX * 64);
	snprintf(buf, len,
		 "listen %s:%u\ndonate %s\nslab-size %s\nheadroom %s\n"
		 "hysteresis %s\npressure-interval %ums\n"
		 "reclaim-deadline %ums\nkeepalive %ums\n"
		 "psi-threshold %u.%02u\n"
		 "hugepages %s\nmax-hosts %u\nmax-unauthenticated %u\n"
		 "log-level %s\n"
		 "stats-socket %s\n"
		 "allowed-hosts %s\nmax-slabs-per-host %s\n"
		 "max-sessions-per-address %u\nmax-queue-depth %u\n"
		 "handshake-timeout %ums\nalloc-rate %s\nrevoke-after %u\n",
		 c->listen_addr, c->port, donate, slab, head, hyst,
		 c->pressure_interval_ms, c->reclaim_deadline_ms,
		 c->keepalive_ms, c->psi_threshold / 100, c->psi_threshold % 100,
		 huge[c->hugepages], c->max_hosts, c->max_unauthenticated,
		 fsd_log_level_name(c->log_level),
		 c->stats_socket[0] ? c->stats_socket : "none",
		 acl ? acl : "?", cap, c->max_sessions_per_address,
		 c->max_queue_depth, c->handshake_timeout_ms, rate,
		 c->revoke_after);
	free(acl);
	if (strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "metrics-file %s\n",
			 c->metrics_file[0] ? c->metrics_file : "none");
	if (strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "failure-domain %s\n",
			 c->failure_domain[0] ? c->failure_domain :
						"(the donor id)");
	if (strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "key-file %s\nhost-keys %s\ninsecure-no-auth %s\nauth %s\n",
			 c->key_file[0] ? c->key_file : "none",
			 c->host_keys[0] ? c->host_keys : "none",
			 c->insecure_no_auth ? "yes" : "no",
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
	if (c->key_file[0] || c->host_keys[0] || c->insecure_no_auth)
		return 0;
	snprintf(err, errlen,
		 "no key-file or host-keys: hosts could not be authenticated, and any host on the fabric could take this donor's memory; give --key-file PATH or --host-keys DIR (key-file, host-keys in the config), or --insecure-no-auth (insecure-no-auth = yes) to run without");
	return -EPERM;
}
