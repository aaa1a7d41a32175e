// SPDX-License-Identifier: GPL-2.0
/*
 * Control command parsing (see args.h).  The caller fills attach @args
 * with the defaults (module parameters) first; options override them.
 *
 * Options are matched with the kernel's option parser (match_token(), as
 * filesystems and NVMe over Fabrics do) and addresses converted with
 * inet_pton_with_scope().  Where those accept more than the option
 * language does (a C base prefix on numbers, a scope on an address that
 * takes none), the difference is checked here first.
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/if.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/parser.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>
#include <net/net_namespace.h>

#include "farswap_proto.h"
#include "args.h"

#define FARSWAP_OPT_SEPARATORS	" \t\n,"

/* Bits, so that one mask records which options a command gave. */
enum {
	FARSWAP_OPT_ERR		= 0,
	FARSWAP_OPT_DONOR	= 1 << 0,
	FARSWAP_OPT_SIZE	= 1 << 1,
	FARSWAP_OPT_SLAB_SIZE	= 1 << 2,
	FARSWAP_OPT_NAME	= 1 << 3,
	FARSWAP_OPT_QUEUES	= 1 << 4,
	FARSWAP_OPT_QUEUE_DEPTH	= 1 << 5,
	FARSWAP_OPT_IO_TIMEOUT	= 1 << 6,
	FARSWAP_OPT_SYNC_IO	= 1 << 7,
	FARSWAP_OPT_INTEGRITY	= 1 << 8,
	FARSWAP_OPT_REPLICAS	= 1 << 9,
	FARSWAP_OPT_KEY		= 1 << 10,
	FARSWAP_OPT_READ_POLICY	= 1 << 11,
	FARSWAP_OPT_ENCRYPT	= 1 << 12,
	FARSWAP_OPT_HOST_ID	= 1 << 13,
	FARSWAP_OPT_NO_AUTH	= 1 << 14,
	FARSWAP_OPT_DONOR_KEY	= 1 << 15,
	FARSWAP_OPT_STAGE	= 1 << 16,
};

/* Options given once for each donor, or each donor key a device pins. */
#define FARSWAP_OPT_REPEATABLE	(FARSWAP_OPT_DONOR | FARSWAP_OPT_DONOR_KEY)

static const match_table_t farswap_attach_tokens = {
	{ FARSWAP_OPT_DONOR,		"donor=%s" },
	{ FARSWAP_OPT_SIZE,		"size=%s" },
	{ FARSWAP_OPT_SLAB_SIZE,	"slab_size=%s" },
	{ FARSWAP_OPT_NAME,		"name=%s" },
	{ FARSWAP_OPT_QUEUES,		"queues=%s" },
	{ FARSWAP_OPT_QUEUE_DEPTH,	"queue_depth=%s" },
	{ FARSWAP_OPT_IO_TIMEOUT,	"io_timeout_ms=%s" },
	{ FARSWAP_OPT_SYNC_IO,		"sync_io=%s" },
	{ FARSWAP_OPT_INTEGRITY,	"integrity=%s" },
	{ FARSWAP_OPT_REPLICAS,		"replicas=%s" },
	{ FARSWAP_OPT_KEY,		"key=%s" },
	{ FARSWAP_OPT_READ_POLICY,	"read_policy=%s" },
	{ FARSWAP_OPT_ENCRYPT,		"encrypt=%s" },
	{ FARSWAP_OPT_HOST_ID,		"host_id=%s" },
	{ FARSWAP_OPT_NO_AUTH,		"insecure_no_auth=%s" },
	{ FARSWAP_OPT_DONOR_KEY,	"donor_key=%s" },
	{ FARSWAP_OPT_STAGE,		"stage_kb=%s" },
	{ FARSWAP_OPT_ERR,		NULL },
};

static const match_table_t farswap_detach_tokens = {
	{ FARSWAP_OPT_NAME,		"name=%s" },
	{ FARSWAP_OPT_ERR,		NULL },
};

static const match_table_t farswap_donor_cmd_tokens = {
	{ FARSWAP_OPT_NAME,		"name=%s" },
	{ FARSWAP_OPT_DONOR,		"donor=%s" },
	{ FARSWAP_OPT_ERR,		NULL },
};

#define farswap_bad(fmt, ...) \
	({ snprintf(err, errlen, fmt, ##__VA_ARGS__); -EINVAL; })
#define farswap_no_memory() \
	({ snprintf(err, errlen, "out of memory"); -ENOMEM; })

static bool farswap_all_digits(const char *s, size_t len)
{
	return len && strspn(s, "0123456789") >= len;
}

/* A port: decimal digits (kstrtou16() would also take a '+'), not 0. */
static int farswap_parse_port(const char *s, u16 *port)
{
	if (!farswap_all_digits(s, strlen(s)) || kstrtou16(s, 10, port) ||
	    !*port)
		return -EINVAL;
	return 0;
}

/*
 * inet_pton_with_scope() ignores a scope after an address that is not
 * link-local, and reads a port with a C base prefix ("010" is eight): so
 * the port is checked here and given back to it in plain decimal, and an
 * address with a '%' must come back with a scope.
 */
static int farswap_pton(const char *host, size_t hostlen, const char *port,
			sa_family_t family, struct sockaddr_storage *ss)
{
	char addr[INET6_ADDRSTRLEN + 1 + IFNAMSIZ];
	char decimal[sizeof("65535")];
	u16 p = FARSWAP_DEFAULT_PORT;
	int ret;

	if (!hostlen || hostlen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, host, hostlen);
	addr[hostlen] = '\0';
	if (port && farswap_parse_port(port, &p))
		return -EINVAL;
	snprintf(decimal, sizeof(decimal), "%u", p);

	ret = inet_pton_with_scope(&init_net, family, addr, decimal, ss);
	if (ret)
		return ret;
	if (family == AF_INET6 && strchr(addr, '%') &&
	    !((struct sockaddr_in6 *)ss)->sin6_scope_id)
		return -EINVAL;
	return 0;
}

/**
 * farswap_parse_addr - parse a donor address
 * @s: "a.b.c.d", "a.b.c.d:port", "v6addr" or "[v6addr]:port"; a link-local
 *     IPv6 address may end in "%ifname" or "%ifindex"
 * @ss: filled with the address; the port defaults to FARSWAP_DEFAULT_PORT
 *
 * Return: 0 or -EINVAL.
 */
int farswap_parse_addr(const char *s, struct sockaddr_storage *ss)
{
	const char *colon = strchr(s, ':');
	const char *close;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		return farswap_pton(s + 1, close - s - 1,
				    close[1] ? close + 2 : NULL, AF_INET6, ss);
	}
	/* Two or more colons: a bare IPv6 address, whose last group is no port. */
	if (colon && colon != strrchr(s, ':'))
		return farswap_pton(s, strlen(s), NULL, AF_INET6, ss);
	if (colon)
		return farswap_pton(s, colon - s, colon + 1, AF_INET, ss);
	return farswap_pton(s, strlen(s), NULL, AF_INET, ss);
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

/*
 * A decimal number in [min, max].  match_u64() takes a C base prefix
 * ("0x10", and "010" is eight): only digits get through, and leading
 * zeros are skipped so that "010" is ten, as in sizes.
 */
static int farswap_match_uint(substring_t *arg, unsigned int min,
			      unsigned int max, unsigned int *out)
{
	substring_t digits = *arg;
	u64 v;
	int ret;

	if (!farswap_all_digits(digits.from, digits.to - digits.from))
		return -EINVAL;
	while (digits.to - digits.from > 1 && digits.from[0] == '0')
		digits.from++;
	ret = match_u64(&digits, &v);
	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	if (v < min || v > max)
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
		       a6->sin6_port == b6->sin6_port &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
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

/* The words sysfs host_id_source shows. */
const char *farswap_host_id_source_name(enum farswap_host_id_source src)
{
	switch (src) {
	case FARSWAP_HOST_ID_ATTACH:
		return "attach";
	case FARSWAP_HOST_ID_MODULE:
		return "module";
	case FARSWAP_HOST_ID_RANDOM:
		break;
	}
	return "random";
}

/*
 * host_id=: a UUID in its 36-character form.  uuid_parse() reads the
 * first 36 characters only, so the length is checked here; the nil UUID
 * names no host (a hostid file left empty by a template, say).
 */
static int farswap_parse_host_id(const char *s, u8 *id)
{
	uuid_t u;

	if (strlen(s) != UUID_STRING_LEN || uuid_parse(s, &u) ||
	    uuid_is_null(&u))
		return -EINVAL;
	memcpy(id, &u, FARSWAP_ID_LEN);
	return 0;
}

/* The next non-empty option of @buf, or NULL at its end. */
static char *farswap_next_option(char **buf)
{
	char *opt;

	do {
		opt = strsep(buf, FARSWAP_OPT_SEPARATORS);
	} while (opt && !*opt);
	return opt;
}

/* key=value with neither empty: match_token() cannot say so itself. */
static bool farswap_option_has_value(const char *opt)
{
	const char *eq = strchr(opt, '=');

	return eq && eq != opt && eq[1];
}

/* The option's key, for reasons: "size" of "size=4G". */
static const char *farswap_option_key(char *opt)
{
	char *eq = strchr(opt, '=');

	if (eq)
		*eq = '\0';
	return opt;
}

/**
 * farswap_cmd_op - which command a control write holds
 * @buf: the command; advanced past a leading "attach" or "detach"
 *
 * Return: FARSWAP_CMD_DETACH for "detach ...", FARSWAP_CMD_DONOR_ADD and
 * _REMOVE for "donor_add ..." and "donor_remove ...", else
 * FARSWAP_CMD_ATTACH: an attach's options need no leading word, as in the
 * sysfs attach file.
 */
enum farswap_cmd_op farswap_cmd_op(char **buf)
{
	static const struct {
		const char *word;
		enum farswap_cmd_op op;
	} words[] = {
		{ "attach", FARSWAP_CMD_ATTACH },
		{ "detach", FARSWAP_CMD_DETACH },
		{ "donor_add", FARSWAP_CMD_DONOR_ADD },
		{ "donor_remove", FARSWAP_CMD_DONOR_REMOVE },
	};
	char *s = *buf + strspn(*buf, FARSWAP_OPT_SEPARATORS);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		size_t len = strlen(words[i].word);

		if (strncmp(s, words[i].word, len) ||
		    (s[len] && !strchr(FARSWAP_OPT_SEPARATORS, s[len])))
			continue;
		*buf = s + len;
		return words[i].op;
	}
	return FARSWAP_CMD_ATTACH;
}

static int farswap_add_donor(const char *val, struct farswap_attach_args *a,
			     char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned int i;

	if (a->nr_donors == FARSWAP_MAX_DONORS)
		return farswap_bad("too many donors (at most %d)",
				   FARSWAP_MAX_DONORS);
	if (farswap_parse_addr(val, &ss))
		return farswap_bad("bad donor address '%s' (want IPv4[:port] or [IPv6]:port)",
				   val);
	for (i = 0; i < a->nr_donors; i++)
		if (farswap_addr_equal(&a->donor[i], &ss))
			return farswap_bad("donor '%s' is listed twice", val);
	a->donor[a->nr_donors++] = ss;
	return 0;
}

/*
 * An option whose value is a string: donor=, size=, slab_size=, name=,
 * integrity=, read_policy=, key=, host_id=.
 */
static int farswap_apply_string(int token, substring_t *arg,
				struct farswap_attach_args *a, char *err,
				size_t errlen)
{
	char *val = match_strdup(arg);
	int ret = 0;

	if (!val)
		return farswap_no_memory();
	switch (token) {
	case FARSWAP_OPT_DONOR:
		ret = farswap_add_donor(val, a, err, errlen);
		break;
	case FARSWAP_OPT_SIZE:
		if (farswap_parse_size(val, &a->size))
			ret = farswap_bad("bad size '%s' (want e.g. 4G)", val);
		break;
	case FARSWAP_OPT_SLAB_SIZE:
		if (farswap_parse_size(val, &a->slab_size) ||
		    !farswap_slab_size_valid(a->slab_size))
			ret = farswap_bad("bad slab_size '%s' (want a power of two from 2M to 1T)",
					  val);
		break;
	case FARSWAP_OPT_NAME:
		if (strlen(val) >= FARSWAP_NAME_LEN ||
		    farswap_name_index(val) < 0)
			ret = farswap_bad("bad name '%s' (want farswapN)", val);
		else
			strscpy(a->name, val, sizeof(a->name));
		break;
	case FARSWAP_OPT_INTEGRITY:
		if (farswap_tag_alg_parse(val, &a->integrity))
			ret = farswap_bad("bad integrity '%s' (siphash, crc32c or off)",
					  val);
		break;
	case FARSWAP_OPT_READ_POLICY:
		if (farswap_read_policy_parse(val, &a->read_policy))
			ret = farswap_bad("bad read_policy '%s' (fastest or round-robin)",
					  val);
		break;
	case FARSWAP_OPT_KEY:
		/* Only the key's name: the secret stays in the keyring. */
		if (!farswap_key_desc_valid(val))
			ret = farswap_bad("bad key '%s' (want the description of a logon key, PREFIX:NAME)",
					  val);
		else
			strscpy(a->key_desc, val, sizeof(a->key_desc));
		break;
	case FARSWAP_OPT_DONOR_KEY:
		if (!farswap_key_desc_valid(val))
			ret = farswap_bad("bad donor_key '%s' (want the description of a logon key, PREFIX:NAME)",
					  val);
		else if (a->nr_donor_keys >= FARSWAP_DONOR_KEYS_MAX)
			ret = farswap_bad("more than %u donor_key= given",
					  FARSWAP_DONOR_KEYS_MAX);
		else
			strscpy(a->donor_key_desc[a->nr_donor_keys++], val,
				sizeof(a->donor_key_desc[0]));
		break;
	case FARSWAP_OPT_HOST_ID:
		if (farswap_parse_host_id(val, a->host_id))
			ret = farswap_bad("bad host_id '%s' (want a UUID other than the nil one, as in /etc/farswap/hostid)",
					  val);
		else
			a->host_id_source = FARSWAP_HOST_ID_ATTACH;
		break;
	}
	kfree(val);
	return ret;
}

/* An option whose value is a number or a boolean. */
static int farswap_apply_number(int token, substring_t *arg,
				struct farswap_attach_args *a, char *err,
				size_t errlen)
{
	const char *val = arg->from;	/* the whole rest of the option */
	int ret = 0;

	switch (token) {
	case FARSWAP_OPT_QUEUES:
		/* Per direction: reads and writes each get this many. */
		ret = farswap_match_uint(arg, 1, FARSWAP_MAX_IO_QUEUES / 2,
					 &a->nr_queues);
		if (ret == -EINVAL)
			return farswap_bad("bad queues '%s' (1 to %d)", val,
					   FARSWAP_MAX_IO_QUEUES / 2);
		break;
	case FARSWAP_OPT_QUEUE_DEPTH:
		ret = farswap_match_uint(arg, 1, FARSWAP_QUEUE_DEPTH_MAX,
					 &a->queue_depth);
		if (ret == -EINVAL)
			return farswap_bad("bad queue_depth '%s' (1 to %d)",
					   val, FARSWAP_QUEUE_DEPTH_MAX);
		break;
	case FARSWAP_OPT_IO_TIMEOUT:
		ret = farswap_match_uint(arg, FARSWAP_IO_TIMEOUT_MIN_MS,
					 FARSWAP_IO_TIMEOUT_MAX_MS,
					 &a->io_timeout_ms);
		if (ret == -EINVAL)
			return farswap_bad("bad io_timeout_ms '%s' (%d to %d)",
					   val, FARSWAP_IO_TIMEOUT_MIN_MS,
					   FARSWAP_IO_TIMEOUT_MAX_MS);
		break;
	case FARSWAP_OPT_STAGE:
		ret = farswap_match_uint(arg, 0, FARSWAP_STAGE_MAX_KB,
					 &a->stage_kb);
		if (ret == -EINVAL)
			return farswap_bad("bad stage_kb '%s' (0 to %u)", val,
					   FARSWAP_STAGE_MAX_KB);
		break;
	case FARSWAP_OPT_SYNC_IO:
		if (kstrtobool(val, &a->sync_io))
			return farswap_bad("bad sync_io '%s' (0 or 1)", val);
		break;
	case FARSWAP_OPT_ENCRYPT:
		if (kstrtobool(val, &a->encrypt))
			return farswap_bad("bad encrypt '%s' (0 or 1)", val);
		break;
	case FARSWAP_OPT_NO_AUTH:
		if (kstrtobool(val, &a->insecure_no_auth))
			return farswap_bad("bad insecure_no_auth '%s' (0 or 1)",
					   val);
		break;
	case FARSWAP_OPT_REPLICAS:
		ret = farswap_match_uint(arg, 1, FARSWAP_MAX_REPLICAS,
					 &a->replicas);
		if (ret == -EINVAL)
			return farswap_bad("bad replicas '%s' (1 to %d)", val,
					   FARSWAP_MAX_REPLICAS);
		break;
	}
	return ret ? farswap_no_memory() : 0;
}

static int farswap_apply_option(char *opt, unsigned int *seen,
				struct farswap_attach_args *a, char *err,
				size_t errlen)
{
	substring_t args[MAX_OPT_ARGS];
	int token;

	if (!farswap_option_has_value(opt))
		return farswap_bad("bad option '%s' (want key=value)", opt);
	token = match_token(opt, farswap_attach_tokens, args);
	if (token == FARSWAP_OPT_ERR)
		return farswap_bad("unknown option '%s'",
				   farswap_option_key(opt));
	if ((*seen & token) && !(token & FARSWAP_OPT_REPEATABLE))
		return farswap_bad("option '%s' given twice",
				   farswap_option_key(opt));
	*seen |= token;

	switch (token) {
	case FARSWAP_OPT_DONOR:
	case FARSWAP_OPT_SIZE:
	case FARSWAP_OPT_SLAB_SIZE:
	case FARSWAP_OPT_NAME:
	case FARSWAP_OPT_INTEGRITY:
	case FARSWAP_OPT_READ_POLICY:
	case FARSWAP_OPT_KEY:
	case FARSWAP_OPT_DONOR_KEY:
	case FARSWAP_OPT_HOST_ID:
		return farswap_apply_string(token, &args[0], a, err, errlen);
	default:
		return farswap_apply_number(token, &args[0], a, err, errlen);
	}
}

/**
 * farswap_parse_attach - parse an attach command's options
 * @buf: the options, modified in place
 * @args: holds the defaults on entry, the result on success
 * @err: filled with a one-line reason on failure
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL (-ENOMEM) with @err set.
 */
int farswap_parse_attach(char *buf, struct farswap_attach_args *args,
			 char *err, size_t errlen)
{
	unsigned int seen = 0;
	char *opt;
	int ret;

	args->nr_donors = 0;
	args->nr_donor_keys = 0;
	while ((opt = farswap_next_option(&buf)) != NULL) {
		ret = farswap_apply_option(opt, &seen, args, err, errlen);
		if (ret)
			return ret;
	}
	if (!args->nr_donors)
		return farswap_bad("no donor given (donor=ADDR[:PORT])");
	if (!args->size)
		return farswap_bad("no size given (size=SIZE)");
	if (args->replicas > args->nr_donors)
		return farswap_bad("replicas=%u needs as many donors, %u given",
				   args->replicas, args->nr_donors);
	if (args->slab_size && args->size % args->slab_size)
		return farswap_bad("size %llu is not a multiple of slab_size %llu",
				   args->size, args->slab_size);
	/* A donor key is proven only together with this host's key. */
	if (args->nr_donor_keys && !args->key_desc[0])
		return farswap_bad("donor_key= without key=: a pinned donor proves the pair key of both (farswapctl --key-file with --donor-key-file)");
	/* A sealed page carries its own check: another one asked is a mistake. */
	if (args->encrypt && (seen & FARSWAP_OPT_INTEGRITY))
		return farswap_bad("integrity= with encrypt=1: an encrypted page is checked by its cipher's own tag (%s)",
				   FARSWAP_SEAL_ALG);
	return 0;
}

/* name=farswapN of detach and the donor commands, given once, into @name. */
static int farswap_take_name(const substring_t *arg, char *name, char *err,
			     size_t errlen)
{
	if (name[0])
		return farswap_bad("option 'name' given twice");
	if (match_strlcpy(name, arg, FARSWAP_NAME_LEN) >= FARSWAP_NAME_LEN ||
	    farswap_name_index(name) < 0)
		return farswap_bad("bad name '%s' (want farswapN)", arg->from);
	return 0;
}

/**
 * farswap_parse_detach - parse a detach command's options: name=farswapN
 * @buf: the options (after the word "detach"), modified in place
 * @name: receives the device's name; FARSWAP_NAME_LEN bytes
 * @err: filled with a one-line reason on failure
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL with @err set.
 */
int farswap_parse_detach(char *buf, char *name, char *err, size_t errlen)
{
	substring_t args[MAX_OPT_ARGS];
	char *opt;
	int ret;

	name[0] = '\0';
	while ((opt = farswap_next_option(&buf)) != NULL) {
		if (!farswap_option_has_value(opt))
			return farswap_bad("bad option '%s' (want key=value)",
					   opt);
		if (match_token(opt, farswap_detach_tokens, args) !=
		    FARSWAP_OPT_NAME)
			return farswap_bad("unknown detach option '%s' (want name=farswapN)",
					   farswap_option_key(opt));
		ret = farswap_take_name(&args[0], name, err, errlen);
		if (ret)
			return ret;
	}
	if (!name[0])
		return farswap_bad("no device given (name=farswapN)");
	return 0;
}

/**
 * farswap_parse_donor_cmd - parse donor_add's and donor_remove's options:
 * name=farswapN donor=ADDR, each once
 * @buf: the options (after the command's word), modified in place
 * @name: receives the device's name; FARSWAP_NAME_LEN bytes
 * @addr: receives the donor's address
 * @err: filled with a one-line reason on failure
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL with @err set.
 */
int farswap_parse_donor_cmd(char *buf, char *name,
			    struct sockaddr_storage *addr, char *err,
			    size_t errlen)
{
	substring_t args[MAX_OPT_ARGS];
	bool have_addr = false;
	char *opt, *val;
	int ret;

	name[0] = '\0';
	while ((opt = farswap_next_option(&buf)) != NULL) {
		if (!farswap_option_has_value(opt))
			return farswap_bad("bad option '%s' (want key=value)",
					   opt);
		switch (match_token(opt, farswap_donor_cmd_tokens, args)) {
		case FARSWAP_OPT_NAME:
			ret = farswap_take_name(&args[0], name, err, errlen);
			if (ret)
				return ret;
			break;
		case FARSWAP_OPT_DONOR:
			if (have_addr)
				return farswap_bad("option 'donor' given twice");
			val = args[0].from;
			if (farswap_parse_addr(val, addr))
				return farswap_bad("bad donor address '%s' (want IPv4[:port] or [IPv6]:port)",
						   val);
			have_addr = true;
			break;
		default:
			return farswap_bad("unknown option '%s' (want name=farswapN donor=ADDR)",
					   farswap_option_key(opt));
		}
	}
	if (!name[0])
		return farswap_bad("no device given (name=farswapN)");
	if (!have_addr)
		return farswap_bad("no donor given (donor=ADDR)");
	return 0;
}

/**
 * farswap_attach_auth_check - may this attach go without authentication?
 * @args: parsed attach arguments
 * @err: filled with a one-line reason on failure
 * @errlen: size of @err
 *
 * Without key= the host cannot tell its donors from anyone answering at
 * their addresses, who would then get its pages: that takes an explicit
 * insecure_no_auth=1, as farswapd's insecure-no-auth, never a default.
 *
 * Return: 0, or -ENOKEY with @err set.
 */
int farswap_attach_auth_check(const struct farswap_attach_args *args,
			      char *err, size_t errlen)
{
	if (args->key_desc[0] || args->insecure_no_auth)
		return 0;
	/* Under FARSWAP_ERR_LEN: the reason buffers are that long. */
	snprintf(err, errlen,
		 "no key: donors would go unauthenticated (anyone at their address would get the pages); give key= (farswapctl --key-file) or insecure_no_auth=1");
	return -ENOKEY;
}
