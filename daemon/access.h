/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which hosts may use this donor: the allowed-hosts list (addresses,
 * CIDR blocks, host identities), peer addresses in one comparable form,
 * and the limiters (log lines, token buckets, connects per address).
 * Pure functions, unit-tested in tests/unit/test_access.c and fuzzed by
 * tests/fuzz/fuzz_access.c.
 *
 * A host's address comes from its RDMA connection; its host_id is what
 * the host says in its connect request, unauthenticated until the
 * protocol has a handshake.  So when the list names both, a host must
 * match both kinds: an address rule AND an identity rule.  Naming an
 * identity alone lets anyone who knows it in.
 */
#ifndef FSD_ACCESS_H
#define FSD_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "farswap_proto.h"

#define FSD_ACCESS_MAX 128	/* rules in allowed-hosts */
#define FSD_ADDR_STR 48		/* an IPv6 address as text, and more */

/* A peer address without its port; IPv4-mapped IPv6 is stored as IPv4. */
struct fsd_addr {
	uint8_t family;		/* AF_INET, AF_INET6, or 0: not an IP peer */
	uint8_t bytes[16];	/* network order; 4 used for AF_INET */
};

enum fsd_rule_kind {
	FSD_RULE_NET,		/* address or CIDR block */
	FSD_RULE_ID,		/* host_id, 16 bytes */
};

struct fsd_access_rule {
	uint8_t kind;		/* enum fsd_rule_kind */
	uint8_t prefix;		/* FSD_RULE_NET: bits that must match */
	struct fsd_addr net;
	uint8_t id[FARSWAP_ID_LEN];
};

struct fsd_access {
	unsigned int nr;
	unsigned int nr_net;
	unsigned int nr_id;
	struct fsd_access_rule rules[FSD_ACCESS_MAX];
};

enum fsd_access_verdict {
	FSD_ACCESS_OK,
	FSD_ACCESS_BAD_ADDRESS,	/* address rules exist, none matches */
	FSD_ACCESS_BAD_ID,	/* identity rules exist, none matches */
};

int fsd_addr_from_sockaddr(const void *sa, struct fsd_addr *out);
bool fsd_addr_equal(const struct fsd_addr *a, const struct fsd_addr *b);
void fsd_addr_format(const struct fsd_addr *a, char *buf, size_t len);

int fsd_access_parse(const char *text, struct fsd_access *out, char *err,
		     size_t errlen);
enum fsd_access_verdict fsd_access_check(const struct fsd_access *acl,
					 const struct fsd_addr *addr,
					 const uint8_t *host_id);
const char *fsd_access_verdict_str(enum fsd_access_verdict v);
void fsd_access_format(const struct fsd_access *acl, char *buf, size_t len);

/*
 * At most @burst events per @interval ms are let through; the rest are
 * counted in suppressed, which the next event let through reports.
 */
struct fsd_ratelimit {
	uint64_t start;		/* ms: beginning of the current interval */
	uint32_t passed;	/* events let through in it */
	uint32_t suppressed;	/* events held back since the last one passed */
};

bool fsd_ratelimit_pass(struct fsd_ratelimit *rl, uint64_t now,
			uint32_t interval, uint32_t burst, uint32_t *missed);
/*
 * Events held back in an interval that is over, for the one summary
 * line that says so (0: none to report); none are reported twice.  So
 * the summary comes when the interval ends, not only with the next
 * event let through, which may never come.
 */
uint32_t fsd_ratelimit_flush(struct fsd_ratelimit *rl, uint64_t now,
			     uint32_t interval);

/*
 * A token bucket: @rate tokens per second, at most @burst saved up.
 * Tokens are counted in thousandths, so rates below one per second and
 * long idle periods stay exact.
 */
struct fsd_bucket {
	uint64_t milli;		/* tokens * 1000 */
	uint64_t last;		/* ms: last refill */
	bool primed;		/* filled to the burst at first use */
};

bool fsd_bucket_take(struct fsd_bucket *b, uint64_t now, uint32_t rate,
		     uint32_t burst);

/*
 * Control connects per address (connect-rate): a token bucket for each
 * of the addresses seen last.  The table is bounded: a new address takes
 * the place of the one seen longest ago, and starts with a full bucket.
 */
#define FSD_CONNECT_ADDRS 256

struct fsd_connect_slot {
	struct fsd_addr addr;	/* family 0: a free slot */
	uint64_t seen;		/* ms: its last connect */
	struct fsd_bucket tokens;
};

struct fsd_connect_table {
	struct fsd_connect_slot slot[FSD_CONNECT_ADDRS];
};

/*
 * May @addr connect now, at @rate a second with @burst saved up?  A
 * connect that may not takes no token.  Peers without an IP address are
 * not limited: there is nothing to tell them apart by.
 */
bool fsd_connect_take(struct fsd_connect_table *t,
		      const struct fsd_addr *addr, uint64_t now,
		      uint32_t rate, uint32_t burst);

#endif /* FSD_ACCESS_H */
