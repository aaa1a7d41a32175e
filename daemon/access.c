// SPDX-License-Identifier: GPL-2.0
/*
 * The allowed-hosts list, peer addresses, and the small limiters: log
 * lines, token buckets and the connects of each address.
 *
 * Addresses are kept in one form, 16 bytes of IPv6 with IPv4 as
 * IPv4-mapped (::ffff:a.b.c.d), and IPv4 prefixes as 96 + bits.  So an
 * IPv4 rule matches a peer that rdma_cm reports as IPv4-mapped IPv6 (a
 * listener on :: sees IPv4 hosts that way), and one comparison serves
 * every family.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "access.h"

static const uint8_t v4_mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

static void addr_set_v4(struct fsd_addr *a, const void *v4)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	memcpy(a->bytes, v4_mapped_prefix, sizeof(v4_mapped_prefix));
	memcpy(a->bytes + 12, v4, 4);
}

static void addr_set_v6(struct fsd_addr *a, const void *v6)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->bytes, v6, 16);
	a->family = memcmp(a->bytes, v4_mapped_prefix,
			   sizeof(v4_mapped_prefix)) ? AF_INET6 : AF_INET;
}

/* The address of a struct sockaddr_in or _in6; -EAFNOSUPPORT for others. */
int fsd_addr_from_sockaddr(const void *sa, struct fsd_addr *out)
{
	const struct sockaddr *s = sa;

	memset(out, 0, sizeof(*out));
	if (!s)
		return -EINVAL;
	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *in = sa;

		addr_set_v4(out, &in->sin_addr);
		return 0;
	}
	if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;

		addr_set_v6(out, &in6->sin6_addr);
		return 0;
	}
	return -EAFNOSUPPORT;
}

bool fsd_addr_equal(const struct fsd_addr *a, const struct fsd_addr *b)
{
	return a->family && a->family == b->family &&
	       !memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}

void fsd_addr_format(const struct fsd_addr *a, char *buf, size_t len)
{
	char text[INET6_ADDRSTRLEN];

	if (a->family == AF_INET &&
	    inet_ntop(AF_INET, a->bytes + 12, text, sizeof(text)))
		snprintf(buf, len, "%s", text);
	else if (a->family == AF_INET6 &&
		 inet_ntop(AF_INET6, a->bytes, text, sizeof(text)))
		snprintf(buf, len, "%s", text);
	else
		snprintf(buf, len, "?");
}

/* The first @bits bits of @a and @b agree. */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, whole))
		return false;
	if (!rest)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return !((a[whole] ^ b[whole]) & mask);
}

static void clear_host_bits(uint8_t *bytes, unsigned int bits)
{
	unsigned int i;

	for (i = bits; i < 128; i++)
		bytes[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

static int access_err(char *err, size_t errlen, const char *token,
		      const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "allowed-hosts: '%s': %s", token, why);
	return -EINVAL;
}

/* "id:" followed by 32 hex digits; '-' may separate them (a UUID). */
static int parse_id_hex(const char *hex, uint8_t *id)
{
	unsigned int n = 0;
	const char *p;

	memset(id, 0, FARSWAP_ID_LEN);
	for (p = hex; *p; p++) {
		int v;

		if (*p == '-')
			continue;
		if (!isxdigit((unsigned char)*p) || n >= 2 * FARSWAP_ID_LEN)
			return -EINVAL;
		v = isdigit((unsigned char)*p) ? *p - '0' :
						 tolower((unsigned char)*p) - 'a' + 10;
		id[n / 2] |= (uint8_t)(n % 2 ? v : v << 4);
		n++;
	}
	return n == 2 * FARSWAP_ID_LEN ? 0 : -EINVAL;
}

/* "name:" followed by the host_id as farswapd prints a printable one. */
static int parse_id_name(const char *name, uint8_t *id)
{
	size_t n = strlen(name), i;

	if (!n || n > FARSWAP_ID_LEN)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return -EINVAL;
	memset(id, 0, FARSWAP_ID_LEN);
	memcpy(id, name, n);
	return 0;
}

/* "ADDR", "ADDR/BITS", "[V6]" or "[V6]/BITS". */
static int parse_net(char *token, struct fsd_access_rule *r)
{
	char *slash, *addr = token;
	unsigned long bits;
	uint8_t buf[16];
	unsigned int max;
	char *end;

	slash = strchr(token, '/');
	if (slash)
		*slash = '\0';
	if (*addr == '[') {
		size_t n = strlen(addr);

		if (n < 3 || addr[n - 1] != ']')
			return -EINVAL;
		addr[n - 1] = '\0';
		addr++;
	}
	if (inet_pton(AF_INET, addr, buf) == 1 && *token != '[') {
		addr_set_v4(&r->net, buf);
		max = 32;
	} else if (inet_pton(AF_INET6, addr, buf) == 1) {
		addr_set_v6(&r->net, buf);
		max = 128;
	} else {
		return -EINVAL;
	}
	bits = max;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]))
			return -EINVAL;
		errno = 0;
		bits = strtoul(slash + 1, &end, 10);
		if (errno || *end || bits > max)
			return -ERANGE;
	}
	/* IPv4 bits count from the mapped prefix's end. */
	r->prefix = (uint8_t)(max == 32 ? 96 + bits : bits);
	/* An IPv4-mapped block that covers no more than IPv4 is IPv4. */
	if (max == 128 && r->net.family == AF_INET && bits < 96)
		r->net.family = AF_INET6;
	clear_host_bits(r->net.bytes, r->prefix);
	r->kind = FSD_RULE_NET;
	return 0;
}

static int parse_rule(char *token, struct fsd_access_rule *r, char *err,
		      size_t errlen)
{
	char copy[128];
	int ret;

	memset(r, 0, sizeof(*r));
	snprintf(copy, sizeof(copy), "%s", token);
	if (!strncasecmp(token, "id:", 3)) {
		r->kind = FSD_RULE_ID;
		if (parse_id_hex(token + 3, r->id))
			return access_err(err, errlen, copy,
					  "want id: and 32 hex digits (a UUID as in /sys/kernel/farswap/host_id)");
		return 0;
	}
	if (!strncasecmp(token, "name:", 5)) {
		r->kind = FSD_RULE_ID;
		if (parse_id_name(token + 5, r->id))
			return access_err(err, errlen, copy,
					  "want name: and 1 to 16 printable characters");
		return 0;
	}
	ret = parse_net(token, r);
	if (ret == -ERANGE)
		return access_err(err, errlen, copy,
				  "prefix length out of range (0-32 for IPv4, 0-128 for IPv6)");
	if (ret)
		return access_err(err, errlen, copy,
				  "not an address, ADDR/BITS, id:HEX or name:TEXT");
	return 0;
}

/*
 * Parse a comma or space separated list.  An empty list (or "any")
 * allows every host.  On error @out is left empty.
 */
int fsd_access_parse(const char *text, struct fsd_access *out, char *err,
		     size_t errlen)
{
	const char *p = text;
	char token[128];

	memset(out, 0, sizeof(*out));
	if (!text)
		return 0;
	while (*p) {
		size_t n;
		int ret;

		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if (!n)
			break;
		if (n >= sizeof(token)) {
			memset(out, 0, sizeof(*out));
			return access_err(err, errlen, "...", "entry too long");
		}
		memcpy(token, p, n);
		token[n] = '\0';
		p += n;
		if (!strcasecmp(token, "any") && !out->nr && !p[strspn(p, ", \t")])
			return 0;
		if (out->nr >= FSD_ACCESS_MAX) {
			memset(out, 0, sizeof(*out));
			return access_err(err, errlen, token,
					  "too many entries (at most 128)");
		}
		ret = parse_rule(token, &out->rules[out->nr], err, errlen);
		if (ret) {
			memset(out, 0, sizeof(*out));
			return ret;
		}
		if (out->rules[out->nr].kind == FSD_RULE_NET)
			out->nr_net++;
		else
			out->nr_id++;
		out->nr++;
	}
	return 0;
}

static bool net_match(const struct fsd_access *acl, const struct fsd_addr *a)
{
	unsigned int i;

	if (!a || !a->family)
		return false;
	for (i = 0; i < acl->nr; i++) {
		const struct fsd_access_rule *r = &acl->rules[i];

		if (r->kind == FSD_RULE_NET &&
		    prefix_match(r->net.bytes, a->bytes, r->prefix))
			return true;
	}
	return false;
}

static bool id_match(const struct fsd_access *acl, const uint8_t *id)
{
	unsigned int i;

	for (i = 0; i < acl->nr; i++) {
		const struct fsd_access_rule *r = &acl->rules[i];

		if (r->kind == FSD_RULE_ID &&
		    !memcmp(r->id, id, FARSWAP_ID_LEN))
			return true;
	}
	return false;
}

/*
 * May the host at @addr calling itself @host_id connect?  Each kind of
 * rule the list has must be matched by one rule of that kind.
 */
enum fsd_access_verdict fsd_access_check(const struct fsd_access *acl,
					 const struct fsd_addr *addr,
					 const uint8_t *host_id)
{
	if (acl->nr_net && !net_match(acl, addr))
		return FSD_ACCESS_BAD_ADDRESS;
	if (acl->nr_id && !id_match(acl, host_id))
		return FSD_ACCESS_BAD_ID;
	return FSD_ACCESS_OK;
}

const char *fsd_access_verdict_str(enum fsd_access_verdict v)
{
	switch (v) {
	case FSD_ACCESS_OK:
		return "allowed";
	case FSD_ACCESS_BAD_ADDRESS:
		return "address not in allowed-hosts";
	case FSD_ACCESS_BAD_ID:
		return "host_id not in allowed-hosts";
	}
	return "?";
}

/* A host_id name:TEXT would give: printable, then zeros to the end. */
static bool id_is_name(const uint8_t *id)
{
	unsigned int i, n = 0;

	while (n < FARSWAP_ID_LEN && id[n] >= 0x21 && id[n] <= 0x7e)
		n++;
	for (i = n; i < FARSWAP_ID_LEN; i++)
		if (id[i])
			return false;
	return n > 0;
}

static void format_rule(const struct fsd_access_rule *r, char *buf,
			size_t len)
{
	char addr[FSD_ADDR_STR];
	unsigned int i;

	/* As it was most likely written: name:host-a, not its hex. */
	if (r->kind == FSD_RULE_ID && id_is_name(r->id) &&
	    !memchr(r->id, ',', FARSWAP_ID_LEN)) {
		snprintf(buf, len, "name:%.*s", FARSWAP_ID_LEN,
			 (const char *)r->id);
		return;
	}
	if (r->kind == FSD_RULE_ID) {
		snprintf(buf, len, "id:");
		for (i = 0; i < FARSWAP_ID_LEN && 3 + 2 * i + 2 < len; i++)
			snprintf(buf + 3 + 2 * i, 3, "%02x", r->id[i]);
		return;
	}
	fsd_addr_format(&r->net, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr,
		 r->net.family == AF_INET ? r->prefix - 96u : r->prefix);
}

/* The list as --check-config prints it: "any", or one entry after another. */
void fsd_access_format(const struct fsd_access *acl, char *buf, size_t len)
{
	char one[64];
	size_t off = 0;
	unsigned int i;

	if (!len)
		return;
	buf[0] = '\0';
	if (!acl->nr) {
		snprintf(buf, len, "any");
		return;
	}
	for (i = 0; i < acl->nr && off < len; i++) {
		int n;

		format_rule(&acl->rules[i], one, sizeof(one));
		n = snprintf(buf + off, len - off, "%s%s", i ? "," : "", one);
		if (n < 0)
			return;
		off += (size_t)n;
	}
}

bool fsd_ratelimit_pass(struct fsd_ratelimit *rl, uint64_t now,
			uint32_t interval, uint32_t burst, uint32_t *missed)
{
	if (now < rl->start || now - rl->start >= interval) {
		rl->start = now;
		rl->passed = 0;
	}
	if (rl->passed >= burst) {
		rl->suppressed++;
		return false;
	}
	rl->passed++;
	*missed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

uint32_t fsd_ratelimit_flush(struct fsd_ratelimit *rl, uint64_t now,
			     uint32_t interval)
{
	uint32_t missed = rl->suppressed;

	if (!missed || (now >= rl->start && now - rl->start < interval))
		return 0;
	rl->start = now;
	rl->passed = 0;
	rl->suppressed = 0;
	return missed;
}

bool fsd_bucket_take(struct fsd_bucket *b, uint64_t now, uint32_t rate,
		     uint32_t burst)
{
	uint64_t full = (uint64_t)(burst ? burst : 1) * 1000, elapsed;

	if (!b->primed) {
		b->primed = true;
		b->milli = full;
		b->last = now;
	}
	elapsed = now > b->last ? now - b->last : 0;
	b->last = now > b->last ? now : b->last;
	/* rate tokens a second is rate thousandths a millisecond. */
	if (rate && elapsed >= full / rate + 1)
		b->milli = full;
	else
		b->milli += elapsed * rate;
	if (b->milli > full)
		b->milli = full;
	if (b->milli < 1000)
		return false;
	b->milli -= 1000;
	return true;
}

/* @addr's slot: its own, else a free one, else the one seen longest ago. */
static struct fsd_connect_slot *connect_slot(struct fsd_connect_table *t,
					     const struct fsd_addr *addr)
{
	struct fsd_connect_slot *slot, *oldest = &t->slot[0];
	unsigned int i;

	for (i = 0; i < FSD_CONNECT_ADDRS; i++) {
		slot = &t->slot[i];
		if (fsd_addr_equal(&slot->addr, addr))
			return slot;
		if (!slot->addr.family)
			oldest = slot;
		else if (oldest->addr.family && slot->seen < oldest->seen)
			oldest = slot;
	}
	memset(oldest, 0, sizeof(*oldest));
	oldest->addr = *addr;
	return oldest;
}

bool fsd_connect_take(struct fsd_connect_table *t,
		      const struct fsd_addr *addr, uint64_t now,
		      uint32_t rate, uint32_t burst)
{
	struct fsd_connect_slot *slot;

	if (!rate || !addr || !addr->family)
		return true;
	slot = connect_slot(t, addr);
	slot->seen = now;
	return fsd_bucket_take(&slot->tokens, now, rate, burst);
}
