// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_proto: the message checks of include/farswap_proto.h
 * that the module (kmod/ctrl.c, kmod/conn.c) runs on everything a donor
 * sends before reading a field of it: control messages, connect replies
 * and rejects, and the donor's own check of connect requests.
 *
 * Each valid message below sets every field it may to a non-zero value,
 * so a check that wrongly demands zero fails here; then each test breaks
 * one thing (length, magic, version, type, one reserved byte, one field)
 * and expects the check to notice.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/sizes.h>
#include <linux/stddef.h>
#include <linux/unaligned.h>

#include "farswap_proto.h"

#define VERSION		FARSWAP_VERSION_MAX
#define COOKIE		0x1122334455667788ull

/* A message with room after it: checks are handed lengths past its end. */
struct msg_buf {
	union farswap_msg m;
	u8 tail[FARSWAP_MSG_MAX];
};

/* A valid message of @type, every free field non-zero. */
static void build_valid(union farswap_msg *m, unsigned int type)
{
	farswap_msg_init(m, type, VERSION, COOKIE);
	switch (type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		m->alloc_req.slab_size = cpu_to_le64(SZ_1G);
		m->alloc_req.host_slab = cpu_to_le64(7);
		break;
	case FARSWAP_MSG_SLAB_ALLOC_REP:
		m->alloc_rep.status = cpu_to_le16(FARSWAP_ST_OK);
		m->alloc_rep.slab_id = cpu_to_le32(3);
		m->alloc_rep.addr = cpu_to_le64(0x7f0000000000ull);
		m->alloc_rep.length = cpu_to_le64(SZ_1G);
		m->alloc_rep.rkey = cpu_to_le32(0x1234);
		m->alloc_rep.slabs_free = cpu_to_le32(9);
		break;
	case FARSWAP_MSG_SLAB_FREE_REQ:
		m->free_req.slab_id = cpu_to_le32(3);
		break;
	case FARSWAP_MSG_SLAB_FREE_REP:
		m->free_rep.status = cpu_to_le16(FARSWAP_ST_NO_ENTRY);
		m->free_rep.slab_id = cpu_to_le32(3);
		m->free_rep.slabs_free = cpu_to_le32(10);
		break;
	case FARSWAP_MSG_RECLAIM_REQ:
		m->reclaim_req.slab_id = cpu_to_le32(3);
		m->reclaim_req.deadline_ms = cpu_to_le32(5000);
		break;
	case FARSWAP_MSG_RECLAIM_REP:
		m->reclaim_rep.status = cpu_to_le16(FARSWAP_ST_NO_SPACE);
		m->reclaim_rep.slab_id = cpu_to_le32(3);
		break;
	case FARSWAP_MSG_STATS_REQ:
		break;
	case FARSWAP_MSG_STATS_REP:
		m->stats_rep.slab_size = cpu_to_le64(SZ_1G);
		m->stats_rep.slabs_total = cpu_to_le32(64);
		m->stats_rep.slabs_free = cpu_to_le32(10);
		m->stats_rep.slabs_host = cpu_to_le32(5);
		m->stats_rep.mem_available = cpu_to_le64(SZ_8G);
		break;
	case FARSWAP_MSG_AUTH_REQ:
		memset(m->auth_req.host_nonce, 0xa5, FARSWAP_AUTH_NONCE_LEN);
		break;
	case FARSWAP_MSG_AUTH_CHAL:
		memset(m->auth_chal.donor_nonce, 0x5a, FARSWAP_AUTH_NONCE_LEN);
		memset(m->auth_chal.donor_mac, 0x11, FARSWAP_AUTH_MAC_LEN);
		break;
	case FARSWAP_MSG_AUTH_PROOF:
		memset(m->auth_proof.host_mac, 0x22, FARSWAP_AUTH_MAC_LEN);
		break;
	case FARSWAP_MSG_AUTH_REP:
		m->auth_rep.status = cpu_to_le16(FARSWAP_ST_DENIED);
		break;
	case FARSWAP_MSG_INFO_REQ:
		break;
	case FARSWAP_MSG_INFO_REP:
		memcpy(m->info_rep.domain, "rack-7/pdu:B", 12);
		break;
	case FARSWAP_MSG_SLAB_REVOKE:
		m->slab_revoke.slab_id = cpu_to_le32(5);
		m->slab_revoke.grace_ms = cpu_to_le32(3000);
		break;
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		m->resume_req.slab_id = cpu_to_le32(5);
		m->resume_req.resume = cpu_to_le64(0x5eed5eed5eed5eedull);
		m->resume_req.slab_size = cpu_to_le64(SZ_1G);
		break;
	case FARSWAP_MSG_SLAB_RESUME_REP:
		m->resume_rep.slab_id = cpu_to_le32(5);
		m->resume_rep.addr = cpu_to_le64(0x10000000ull);
		m->resume_rep.length = cpu_to_le64(SZ_1G);
		m->resume_rep.rkey = cpu_to_le32(0x77);
		m->resume_rep.resume = cpu_to_le64(0xc0ffee);
		break;
	}
}

/* Set a little-endian field of @size bytes at @off. */
static void put_le(void *base, size_t off, size_t size, u64 value)
{
	u8 *p = (u8 *)base + off;

	switch (size) {
	case 1:
		*p = value;
		break;
	case 2:
		put_unaligned_le16(value, p);
		break;
	case 4:
		put_unaligned_le32(value, p);
		break;
	default:
		put_unaligned_le64(value, p);
		break;
	}
}

struct span {
	u16 off;
	u16 len;
};

#define FIELD(st, f)	{ offsetof(struct st, f), sizeof_field(struct st, f) }

/*
 * Control messages: every type
 */

struct type_case {
	unsigned int type;
	struct span reserved[2];	/* zero-length: none */
};

static const struct type_case type_cases[] = {
	{ FARSWAP_MSG_SLAB_ALLOC_REQ,
	  { FIELD(farswap_slab_alloc_req, reserved) } },
	{ FARSWAP_MSG_SLAB_ALLOC_REP,
	  { FIELD(farswap_slab_alloc_rep, reserved0) } },
	{ FARSWAP_MSG_SLAB_FREE_REQ,
	  { FIELD(farswap_slab_free_req, reserved1) } },
	{ FARSWAP_MSG_SLAB_FREE_REP,
	  { FIELD(farswap_slab_free_rep, reserved0),
	    FIELD(farswap_slab_free_rep, reserved1) } },
	{ FARSWAP_MSG_RECLAIM_REQ,
	  { FIELD(farswap_reclaim_req, reserved) } },
	{ FARSWAP_MSG_RECLAIM_REP,
	  { FIELD(farswap_reclaim_rep, reserved0),
	    FIELD(farswap_reclaim_rep, reserved1) } },
	{ FARSWAP_MSG_STATS_REQ, {} },
	{ FARSWAP_MSG_STATS_REP,
	  { FIELD(farswap_stats_rep, reserved0),
	    FIELD(farswap_stats_rep, reserved1) } },
	{ FARSWAP_MSG_AUTH_REQ, {} },
	{ FARSWAP_MSG_AUTH_CHAL, {} },
	{ FARSWAP_MSG_AUTH_PROOF, {} },
	/* reserved0, reserved1 and reserved2 follow each other: one span. */
	{ FARSWAP_MSG_AUTH_REP,
	  { { offsetof(struct farswap_auth_rep, reserved0), 14 } } },
	{ FARSWAP_MSG_INFO_REQ,
	  { FIELD(farswap_info_req, reserved) } },
	{ FARSWAP_MSG_INFO_REP,
	  { FIELD(farswap_info_rep, reserved) } },
	{ FARSWAP_MSG_SLAB_REVOKE,
	  { FIELD(farswap_slab_revoke, reserved) } },
	{ FARSWAP_MSG_SLAB_RESUME_REQ,
	  { FIELD(farswap_slab_resume_req, reserved0) } },
	{ FARSWAP_MSG_SLAB_RESUME_REP,
	  { FIELD(farswap_slab_resume_rep, reserved0) } },
};

static void type_desc(const struct type_case *c, char *desc)
{
	strscpy(desc, farswap_msg_type_str(c->type), KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(msg_type, type_cases, type_desc);

static int check(const struct msg_buf *b, size_t len)
{
	return farswap_msg_check(b, len, VERSION);
}

static void msg_valid_test(struct kunit *test)
{
	const struct type_case *c = test->param_value;
	u32 size = farswap_msg_size(c->type);
	struct msg_buf b = {};

	KUNIT_ASSERT_GE(test, size, sizeof(struct farswap_msg_hdr));
	KUNIT_ASSERT_LE(test, size, FARSWAP_MSG_MAX);
	build_valid(&b.m, c->type);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(b.m.hdr.length), size);
	KUNIT_EXPECT_EQ(test, check(&b, size), FARSWAP_ST_OK);
	/* The cookie is the sender's own business. */
	b.m.hdr.cookie = 0;
	KUNIT_EXPECT_EQ(test, check(&b, size), FARSWAP_ST_OK);
	b.m.hdr.cookie = cpu_to_le64(U64_MAX);
	KUNIT_EXPECT_EQ(test, check(&b, size), FARSWAP_ST_OK);
}

/* Every received length but the exact one, and every header length. */
static void msg_length_test(struct kunit *test)
{
	const struct type_case *c = test->param_value;
	u32 size = farswap_msg_size(c->type);
	struct msg_buf b = {};
	size_t len;
	u32 hdr_len;

	build_valid(&b.m, c->type);
	for (len = 0; len <= sizeof(b); len++) {
		if (len == size)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, check(&b, len), FARSWAP_ST_INVALID,
				    "received %zu bytes", len);
	}
	KUNIT_EXPECT_EQ(test, check(&b, SIZE_MAX), FARSWAP_ST_INVALID);

	for (hdr_len = 0; hdr_len <= U16_MAX; hdr_len++) {
		if (hdr_len == size)
			continue;
		b.m.hdr.length = cpu_to_le16(hdr_len);
		KUNIT_EXPECT_EQ_MSG(test, check(&b, size), FARSWAP_ST_INVALID,
				    "header says %u bytes", hdr_len);
	}
}

static void msg_header_test(struct kunit *test)
{
	const struct type_case *c = test->param_value;
	u32 size = farswap_msg_size(c->type);
	static const unsigned int bad_version[] = { 0, VERSION + 1, 255 };
	struct msg_buf b;
	unsigned int i;

	for (i = 0; i < sizeof(b.m.hdr.magic); i++) {
		build_valid(&b.m, c->type);
		((u8 *)&b.m.hdr.magic)[i] ^= 0xff;
		KUNIT_EXPECT_EQ_MSG(test, check(&b, size), FARSWAP_ST_INVALID,
				    "magic byte %u", i);
	}
	build_valid(&b.m, c->type);
	b.m.hdr.magic = (__force __le32)cpu_to_be32(FARSWAP_MAGIC);
	KUNIT_EXPECT_EQ_MSG(test, check(&b, size), FARSWAP_ST_INVALID,
			    "big-endian magic");

	for (i = 0; i < ARRAY_SIZE(bad_version); i++) {
		build_valid(&b.m, c->type);
		b.m.hdr.version = bad_version[i];
		KUNIT_EXPECT_EQ_MSG(test, check(&b, size), FARSWAP_ST_VERSION,
				    "version %u", bad_version[i]);
		/* A bad magic is reported first: it is not ours at all. */
		b.m.hdr.magic = 0;
		KUNIT_EXPECT_EQ(test, check(&b, size), FARSWAP_ST_INVALID);
	}
	/* The session negotiated another version than the message has. */
	build_valid(&b.m, c->type);
	KUNIT_EXPECT_EQ(test, farswap_msg_check(&b, size, VERSION + 1),
			FARSWAP_ST_VERSION);

	/* Another type's number on this body: only if sizes differ, invalid. */
	for (i = 0; i <= 255; i++) {
		build_valid(&b.m, c->type);
		b.m.hdr.type = i;
		if (i == c->type || farswap_msg_size(i) == size)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, check(&b, size), FARSWAP_ST_INVALID,
				    "type %u", i);
	}
}

/* Reserved bytes are sent as zero: any other value is refused. */
static void msg_reserved_test(struct kunit *test)
{
	const struct type_case *c = test->param_value;
	u32 size = farswap_msg_size(c->type);
	struct msg_buf b;
	unsigned int r, i;

	for (r = 0; r < ARRAY_SIZE(c->reserved); r++) {
		const struct span *s = &c->reserved[r];

		for (i = 0; i < s->len; i++) {
			build_valid(&b.m, c->type);
			b.m.raw[s->off + i] = 0x01;
			KUNIT_EXPECT_EQ_MSG(test, check(&b, size),
					    FARSWAP_ST_INVALID,
					    "reserved byte at %u = 0x01",
					    s->off + i);
			b.m.raw[s->off + i] = 0x80;
			KUNIT_EXPECT_EQ_MSG(test, check(&b, size),
					    FARSWAP_ST_INVALID,
					    "reserved byte at %u = 0x80",
					    s->off + i);
		}
	}
}

/* Type numbers nobody defined are refused at every length. */
static void msg_unknown_type_test(struct kunit *test)
{
	static const u8 unknown[] = { 0, FARSWAP_MSG_TYPE_MAX + 1, 0x80, 255 };
	struct msg_buf b = {};
	unsigned int i;
	size_t len;

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		KUNIT_EXPECT_EQ(test, farswap_msg_size(unknown[i]), 0);
		for (len = sizeof(struct farswap_msg_hdr);
		     len <= FARSWAP_MSG_MAX; len++) {
			memset(&b, 0, sizeof(b));
			b.m.hdr.magic = cpu_to_le32(FARSWAP_MAGIC);
			b.m.hdr.version = VERSION;
			b.m.hdr.type = unknown[i];
			b.m.hdr.length = cpu_to_le16(len);
			KUNIT_EXPECT_EQ_MSG(test, check(&b, len),
					    FARSWAP_ST_INVALID,
					    "type %u, %zu bytes", unknown[i],
					    len);
		}
	}
}

/*
 * Control messages: fields out of range
 */

struct field_set {
	u16 off;
	u8 size;
	u64 value;
};

#define SET(st, f, v) \
	{ offsetof(struct st, f), sizeof_field(struct st, f), v }

enum { BASE_VALID, BASE_REFUSAL };

struct field_case {
	const char *desc;
	unsigned int type;
	int base;
	struct field_set set[3];
	int expect;
};

#define AREQ(v)	SET(farswap_slab_alloc_req, slab_size, v)
#define AREP(f, v)	SET(farswap_slab_alloc_rep, f, v)
#define SREP(f, v)	SET(farswap_stats_rep, f, v)
/* Byte @i of INFO_REP's domain (built as "rack-7/pdu:B", 12 characters). */
#define DOM(i, v) \
	{ offsetof(struct farswap_info_rep, domain) + (i), 1, v }
#define DOMN(i, n, v) \
	{ offsetof(struct farswap_info_rep, domain) + (i), n, v }
#define INFO_REP	FARSWAP_MSG_INFO_REP

#define ALLOC_REQ	FARSWAP_MSG_SLAB_ALLOC_REQ
#define ALLOC_REP	FARSWAP_MSG_SLAB_ALLOC_REP
#define STATS_REP	FARSWAP_MSG_STATS_REP
#define OK		FARSWAP_ST_OK
#define INVALID		FARSWAP_ST_INVALID

static const struct field_case field_cases[] = {
	{ "alloc_req slab_size 2M (smallest)", ALLOC_REQ, BASE_VALID,
	  { AREQ(SZ_2M) }, OK },
	{ "alloc_req slab_size 1T (largest)", ALLOC_REQ, BASE_VALID,
	  { AREQ(SZ_1T) }, OK },
	{ "alloc_req slab_size 0", ALLOC_REQ, BASE_VALID, { AREQ(0) },
	  INVALID },
	{ "alloc_req slab_size 1M", ALLOC_REQ, BASE_VALID, { AREQ(SZ_1M) },
	  INVALID },
	{ "alloc_req slab_size 3M", ALLOC_REQ, BASE_VALID,
	  { AREQ(3 * SZ_1M) }, INVALID },
	{ "alloc_req slab_size 2T", ALLOC_REQ, BASE_VALID,
	  { AREQ(2 * SZ_1T) }, INVALID },
	{ "alloc_req slab_size 2^63", ALLOC_REQ, BASE_VALID,
	  { AREQ(1ull << 63) }, INVALID },
	{ "alloc_req any host_slab", ALLOC_REQ, BASE_VALID,
	  { SET(farswap_slab_alloc_req, host_slab, U64_MAX) }, OK },

	{ "alloc_rep status past the last", ALLOC_REP, BASE_VALID,
	  { AREP(status, FARSWAP_ST_COUNT) }, INVALID },
	{ "alloc_rep status 0xffff", ALLOC_REP, BASE_VALID,
	  { AREP(status, 0xffff) }, INVALID },
	{ "alloc_rep granted, length 0", ALLOC_REP, BASE_VALID,
	  { AREP(length, 0) }, INVALID },
	{ "alloc_rep granted, length 3M", ALLOC_REP, BASE_VALID,
	  { AREP(length, 3 * SZ_1M) }, INVALID },
	{ "alloc_rep granted, length 2T", ALLOC_REP, BASE_VALID,
	  { AREP(length, 2 * SZ_1T) }, INVALID },
	{ "alloc_rep granted, slab wraps past 2^64", ALLOC_REP, BASE_VALID,
	  { AREP(addr, 0 - (u64)SZ_1G), AREP(length, SZ_1G) }, INVALID },
	{ "alloc_rep granted, slab ends a page short of 2^64", ALLOC_REP,
	  BASE_VALID, { AREP(addr, 0 - (u64)SZ_1G - SZ_4K),
			AREP(length, SZ_1G) }, OK },
	{ "alloc_rep granted at address 0", ALLOC_REP, BASE_VALID,
	  { AREP(addr, 0) }, OK },
	{ "alloc_rep refused, all zero", ALLOC_REP, BASE_REFUSAL, {}, OK },
	{ "alloc_rep refused, with free slabs", ALLOC_REP, BASE_REFUSAL,
	  { AREP(slabs_free, 5) }, OK },
	{ "alloc_rep refused as busy", ALLOC_REP, BASE_REFUSAL,
	  { AREP(status, FARSWAP_ST_BUSY) }, OK },
	{ "alloc_rep refused, with a slab_id", ALLOC_REP, BASE_REFUSAL,
	  { AREP(slab_id, 1) }, INVALID },
	{ "alloc_rep refused, with an addr", ALLOC_REP, BASE_REFUSAL,
	  { AREP(addr, 4096) }, INVALID },
	{ "alloc_rep refused, with a length", ALLOC_REP, BASE_REFUSAL,
	  { AREP(length, SZ_1G) }, INVALID },
	{ "alloc_rep refused, with an rkey", ALLOC_REP, BASE_REFUSAL,
	  { AREP(rkey, 1) }, INVALID },

	{ "free_req any slab_id", FARSWAP_MSG_SLAB_FREE_REQ, BASE_VALID,
	  { SET(farswap_slab_free_req, slab_id, U32_MAX) }, OK },
	{ "free_rep status past the last", FARSWAP_MSG_SLAB_FREE_REP,
	  BASE_VALID, { SET(farswap_slab_free_rep, status, FARSWAP_ST_COUNT) },
	  INVALID },
	{ "free_rep status OK", FARSWAP_MSG_SLAB_FREE_REP, BASE_VALID,
	  { SET(farswap_slab_free_rep, status, FARSWAP_ST_OK) }, OK },
	{ "reclaim_req deadline 0", FARSWAP_MSG_RECLAIM_REQ, BASE_VALID,
	  { SET(farswap_reclaim_req, deadline_ms, 0) }, OK },
	{ "reclaim_rep status past the last", FARSWAP_MSG_RECLAIM_REP,
	  BASE_VALID, { SET(farswap_reclaim_rep, status, FARSWAP_ST_COUNT) },
	  INVALID },
	{ "reclaim_rep status OK", FARSWAP_MSG_RECLAIM_REP, BASE_VALID,
	  { SET(farswap_reclaim_rep, status, FARSWAP_ST_OK) }, OK },

	{ "stats_rep slab_size 0", STATS_REP, BASE_VALID,
	  { SREP(slab_size, 0) }, INVALID },
	{ "stats_rep slab_size 3M", STATS_REP, BASE_VALID,
	  { SREP(slab_size, 3 * SZ_1M) }, INVALID },
	{ "stats_rep more free than total", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, 10), SREP(slabs_free, 11) }, INVALID },
	{ "stats_rep all free", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, 10), SREP(slabs_free, 10) }, OK },
	{ "stats_rep holding more than total", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, 10), SREP(slabs_free, 0), SREP(slabs_host, 11) },
	  INVALID },
	{ "stats_rep holding all", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, 10), SREP(slabs_free, 0), SREP(slabs_host, 10) },
	  OK },
	{ "stats_rep donating nothing", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, 0), SREP(slabs_free, 0), SREP(slabs_host, 0) },
	  OK },
	{ "stats_rep free U32_MAX of U32_MAX", STATS_REP, BASE_VALID,
	  { SREP(slabs_total, U32_MAX), SREP(slabs_free, U32_MAX),
	    SREP(slabs_host, U32_MAX) }, OK },

	{ "info_rep empty domain", INFO_REP, BASE_VALID, { DOM(0, 0) },
	  INVALID },
	{ "info_rep domain with a space", INFO_REP, BASE_VALID,
	  { DOM(4, ' ') }, INVALID },
	{ "info_rep domain with a control byte", INFO_REP, BASE_VALID,
	  { DOM(4, 0x1f) }, INVALID },
	{ "info_rep domain with DEL", INFO_REP, BASE_VALID,
	  { DOM(4, 0x7f) }, INVALID },
	{ "info_rep domain with a byte above ASCII", INFO_REP, BASE_VALID,
	  { DOM(4, 0xc3) }, INVALID },
	{ "info_rep bytes after the NUL", INFO_REP, BASE_VALID,
	  { DOM(20, 'x') }, INVALID },
	{ "info_rep last byte after the NUL", INFO_REP, BASE_VALID,
	  { DOM(31, '~') }, INVALID },
	{ "info_rep one character", INFO_REP, BASE_VALID,
	  { DOMN(1, 8, 0), DOMN(9, 4, 0) }, OK },
	{ "info_rep NUL in the middle", INFO_REP, BASE_VALID,
	  { DOM(1, 0) }, INVALID },
	{ "info_rep domain ending in '~'", INFO_REP, BASE_VALID,
	  { DOM(12, '~') }, OK },
};

KUNIT_ARRAY_PARAM_DESC(msg_field, field_cases, desc);

static void msg_field_test(struct kunit *test)
{
	const struct field_case *c = test->param_value;
	u32 size = farswap_msg_size(c->type);
	struct msg_buf b = {};
	unsigned int i;

	build_valid(&b.m, c->type);
	if (c->base == BASE_REFUSAL) {
		/* A refused allocation: a reason, and nothing else. */
		b.m.alloc_rep.status = cpu_to_le16(FARSWAP_ST_NO_SPACE);
		b.m.alloc_rep.slab_id = 0;
		b.m.alloc_rep.addr = 0;
		b.m.alloc_rep.length = 0;
		b.m.alloc_rep.rkey = 0;
		b.m.alloc_rep.slabs_free = 0;
	}
	for (i = 0; i < ARRAY_SIZE(c->set); i++)
		if (c->set[i].size)
			put_le(&b.m, c->set[i].off, c->set[i].size,
			       c->set[i].value);
	KUNIT_EXPECT_EQ(test, check(&b, size), c->expect);
}

/* msg_init leaves nothing of what the buffer held before. */
static void msg_init_test(struct kunit *test)
{
	union farswap_msg m;
	unsigned int type, i;

	for (type = 1; type <= FARSWAP_MSG_TYPE_MAX; type++) {
		if (!farswap_msg_type_known(type))
			continue;
		memset(&m, 0xff, sizeof(m));
		farswap_msg_init(&m, type, VERSION, COOKIE);
		KUNIT_EXPECT_MEMEQ(test, &m.hdr.magic, "FSWP", 4);
		KUNIT_EXPECT_EQ(test, m.hdr.version, VERSION);
		KUNIT_EXPECT_EQ(test, m.hdr.type, type);
		KUNIT_EXPECT_EQ(test, le16_to_cpu(m.hdr.length),
				farswap_msg_size(type));
		KUNIT_EXPECT_EQ(test, le64_to_cpu(m.hdr.cookie), COOKIE);
		for (i = sizeof(m.hdr); i < sizeof(m); i++)
			KUNIT_EXPECT_EQ_MSG(test, m.raw[i], 0,
					    "%s byte %u not zeroed",
					    farswap_msg_type_str(type), i);
	}
	/* Bodies with no required field are valid straight from init. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, VERSION, 0);
	KUNIT_EXPECT_EQ(test, farswap_msg_check(&m, sizeof(m.stats_req),
						VERSION), FARSWAP_ST_OK);
	farswap_msg_init(&m, FARSWAP_MSG_RECLAIM_REP, VERSION, 1);
	KUNIT_EXPECT_EQ(test, farswap_msg_check(&m, sizeof(m.reclaim_rep),
						VERSION), FARSWAP_ST_OK);
}

/*
 * SLAB_FREE_REQ's flags: FARSWAP_FREE_SESSION alone, and it names no
 * slab (slab_id 0); any other bit is reserved.
 */
static void msg_free_flags_test(struct kunit *test)
{
	static const struct { u32 flags, slab_id; unsigned int st; } c[] = {
		{ 0, 7, FARSWAP_ST_OK },
		{ FARSWAP_FREE_SESSION, 0, FARSWAP_ST_OK },
		{ FARSWAP_FREE_SESSION, 7, FARSWAP_ST_INVALID },
		{ 2, 0, FARSWAP_ST_INVALID },
		{ FARSWAP_FREE_SESSION | BIT(31), 0, FARSWAP_ST_INVALID },
	};
	union farswap_msg m;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, VERSION, COOKIE);
		m.free_req.flags = cpu_to_le32(c[i].flags);
		m.free_req.slab_id = cpu_to_le32(c[i].slab_id);
		KUNIT_EXPECT_EQ_MSG(test, farswap_msg_check(&m, sizeof(m.free_req),
							    VERSION), c[i].st,
				    "flags 0x%x slab %u", c[i].flags,
				    c[i].slab_id);
	}
}

/*
 * A SLAB_ALLOC_REQ spelled out byte by byte: what farswapd, built from
 * the same header on any host, puts on the wire.
 */
static void msg_wire_bytes_test(struct kunit *test)
{
	static const u8 wire[48] = {
		'F', 'S', 'W', 'P',		/* magic */
		FARSWAP_VERSION_MAX,		/* version */
		FARSWAP_MSG_SLAB_ALLOC_REQ,	/* type */
		48, 0,				/* length */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* cookie */
		0, 0, 0, 0x40, 0, 0, 0, 0,	/* slab_size 1G */
		7, 0, 0, 0, 0, 0, 0, 0,		/* host_slab */
	};
	union farswap_msg built;
	struct msg_buf b = {};

	memcpy(&b.m, wire, sizeof(wire));
	KUNIT_ASSERT_EQ(test, check(&b, sizeof(wire)), FARSWAP_ST_OK);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(b.m.hdr.cookie), COOKIE);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(b.m.alloc_req.slab_size), SZ_1G);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(b.m.alloc_req.host_slab), 7);

	build_valid(&built, FARSWAP_MSG_SLAB_ALLOC_REQ);
	KUNIT_EXPECT_MEMEQ(test, &built, wire, sizeof(wire));
}

static void status_and_type_names_test(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < FARSWAP_ST_COUNT; i++)
		KUNIT_EXPECT_STRNEQ_MSG(test, farswap_status_str(i),
					"unknown status", "status %u", i);
	KUNIT_EXPECT_STREQ(test, farswap_status_str(FARSWAP_ST_COUNT),
			   "unknown status");
	for (i = 1; i <= FARSWAP_MSG_TYPE_MAX; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, farswap_msg_type_known(i),
				      "type %u", i);
		KUNIT_EXPECT_STRNEQ_MSG(test, farswap_msg_type_str(i),
					"unknown", "type %u", i);
	}
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_AUTH_REQ, 9);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_INFO_REQ, 13);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_INFO_REP, 14);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_SLAB_REVOKE, 15);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_SLAB_RESUME_REQ, 16);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_AUTH_KX_REQ, 18);
	KUNIT_EXPECT_EQ(test, FARSWAP_MSG_TYPE_MAX, 19);
	KUNIT_EXPECT_STREQ(test, farswap_msg_type_str(0), "unknown");
	KUNIT_EXPECT_STREQ(test,
			   farswap_msg_type_str(FARSWAP_MSG_TYPE_MAX + 1),
			   "unknown");
}

/*
 * Version negotiation, against its definition: the highest version in
 * both the host's range and ours, 0 when there is none.
 */
static void negotiate_version_test(struct kunit *test)
{
	unsigned int lo, hi, v;

	for (lo = 0; lo <= 255; lo++) {
		for (hi = 0; hi <= 255; hi++) {
			unsigned int want = 0;

			for (v = 255; v > 0; v--) {
				if (v >= lo && v <= hi &&
				    v >= FARSWAP_VERSION_MIN &&
				    v <= FARSWAP_VERSION_MAX) {
					want = v;
					break;
				}
			}
			KUNIT_ASSERT_EQ_MSG(test,
					    farswap_negotiate_version(lo, hi),
					    want, "host speaks %u-%u", lo, hi);
		}
	}
}

/*
 * Connect requests (the donor's check)
 */

struct conn_req_case {
	const char *desc;
	unsigned int qtype;
	unsigned int qid;
	unsigned int nr_io;
	u64 session;
	unsigned int depth;
	int expect;
};

#define CTRL	FARSWAP_QT_CTRL
#define IO	FARSWAP_QT_IO

static const struct conn_req_case conn_req_cases[] = {
	{ "control queue", CTRL, 0, 4, 0, 32, OK },
	{ "control queue with qid 1", CTRL, 1, 4, 0, 32, INVALID },
	{ "control queue with a session", CTRL, 0, 4, 0x5e55, 32, INVALID },
	{ "I/O queue 1", IO, 1, 4, 0x5e55, 128, OK },
	{ "I/O queue nr_io_queues (the last)", IO, 4, 4, 0x5e55, 128, OK },
	{ "I/O queue past nr_io_queues", IO, 5, 4, 0x5e55, 128, INVALID },
	{ "I/O queue 0", IO, 0, 4, 0x5e55, 128, INVALID },
	{ "I/O queue without a session", IO, 1, 4, 0, 128, INVALID },
	{ "nr_io_queues 0", CTRL, 0, 0, 0, 32, INVALID },
	{ "nr_io_queues 64 (the most)", IO, 64, 64, 1, 32, OK },
	{ "nr_io_queues 65", IO, 1, 65, 1, 32, INVALID },
	{ "queue_depth 0", IO, 1, 4, 1, 0, INVALID },
	{ "queue_depth U32_MAX", IO, 1, 4, 1, U32_MAX, OK },
	{ "qtype 0", 0, 0, 4, 0, 32, INVALID },
	{ "qtype 3", 3, 1, 4, 1, 32, INVALID },
	{ "qtype 255", 255, 1, 4, 1, 32, INVALID },
};

KUNIT_ARRAY_PARAM_DESC(conn_req, conn_req_cases, desc);

static void build_conn_req(struct farswap_conn_req *r,
			   const struct conn_req_case *c)
{
	farswap_conn_req_init(r, c->qtype, c->qid, c->nr_io, c->session,
			      c->depth);
	memset(r->host_id, 0x42, sizeof(r->host_id));
}

static void conn_req_test(struct kunit *test)
{
	const struct conn_req_case *c = test->param_value;
	struct farswap_conn_req r;

	build_conn_req(&r, c);
	KUNIT_EXPECT_EQ(test, farswap_conn_req_check(&r, sizeof(r)),
			c->expect);
}

static void conn_req_malformed_test(struct kunit *test)
{
	static const struct span reserved[] = {
		FIELD(farswap_conn_req, reserved0),
		FIELD(farswap_conn_req, join_tag),
	};
	const struct conn_req_case *c = &conn_req_cases[0];
	struct {
		struct farswap_conn_req r;
		u8 pad[8];
	} b = {};
	unsigned int i, j;
	size_t len;

	build_conn_req(&b.r, c);
	KUNIT_ASSERT_EQ(test, farswap_conn_req_check(&b.r, sizeof(b.r)), OK);
	KUNIT_EXPECT_EQ(test, farswap_conn_req_check(NULL, sizeof(b.r)),
			INVALID);
	for (len = 0; len < sizeof(b.r); len++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_conn_req_check(&b.r, len),
				    INVALID, "%zu bytes", len);
	/* rdma_cm pads private data with zeros. */
	for (len = sizeof(b.r); len <= sizeof(b); len++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_conn_req_check(&b.r, len),
				    OK, "%zu bytes", len);

	for (i = 0; i < sizeof(b.r.magic); i++) {
		build_conn_req(&b.r, c);
		((u8 *)&b.r.magic)[i] ^= 0xff;
		KUNIT_EXPECT_EQ(test, farswap_conn_req_check(&b.r, sizeof(b.r)),
				INVALID);
	}
	for (i = 0; i < ARRAY_SIZE(reserved); i++) {
		for (j = 0; j < reserved[i].len; j++) {
			build_conn_req(&b.r, c);
			((u8 *)&b.r)[reserved[i].off + j] = 1;
			KUNIT_EXPECT_EQ_MSG(test,
					    farswap_conn_req_check(&b.r,
								   sizeof(b.r)),
					    INVALID, "reserved byte %u",
					    reserved[i].off + j);
		}
	}
	/* Versions are the donor's to negotiate, not this check's. */
	build_conn_req(&b.r, c);
	b.r.ver_min = 9;
	b.r.ver_max = 3;
	KUNIT_EXPECT_EQ(test, farswap_conn_req_check(&b.r, sizeof(b.r)), OK);
}

/*
 * Connect replies and rejects (the host's checks)
 */

static void build_conn_rep(struct farswap_conn_rep *r)
{
	memset(r, 0, sizeof(*r));
	r->magic = cpu_to_le32(FARSWAP_MAGIC);
	r->version = VERSION;
	r->features = cpu_to_le32(FARSWAP_FEATURES_KNOWN);
	r->session = cpu_to_le64(0x5e55);
	r->slab_size = cpu_to_le64(SZ_1G);
	r->slabs_total = cpu_to_le32(64);
	r->slabs_free = cpu_to_le32(10);
	memset(r->donor_id, 0x24, sizeof(r->donor_id));
}

struct conn_rep_case {
	const char *desc;
	struct field_set set[2];
	int expect;
};

#define REP(f, v)	SET(farswap_conn_rep, f, v)

static const struct conn_rep_case conn_rep_cases[] = {
	{ "valid", {}, OK },
	{ "version 0", { REP(version, 0) }, FARSWAP_ST_VERSION },
	{ "version past ours", { REP(version, FARSWAP_VERSION_MAX + 1) },
	  FARSWAP_ST_VERSION },
	{ "bad magic and version", { REP(magic, 0), REP(version, 0) },
	  INVALID },
	{ "session 0", { REP(session, 0) }, INVALID },
	{ "slab_size 0", { REP(slab_size, 0) }, INVALID },
	{ "slab_size 3M", { REP(slab_size, 3 * SZ_1M) }, INVALID },
	{ "slab_size 2T", { REP(slab_size, 2 * SZ_1T) }, INVALID },
	{ "slab_size 2M", { REP(slab_size, SZ_2M) }, OK },
	{ "more free than total", { REP(slabs_free, 65) }, INVALID },
	{ "all free", { REP(slabs_free, 64) }, OK },
	{ "donating nothing", { REP(slabs_total, 0), REP(slabs_free, 0) },
	  OK },
};

KUNIT_ARRAY_PARAM_DESC(conn_rep, conn_rep_cases, desc);

static void conn_rep_test(struct kunit *test)
{
	const struct conn_rep_case *c = test->param_value;
	struct farswap_conn_rep r;
	unsigned int i;

	build_conn_rep(&r);
	for (i = 0; i < ARRAY_SIZE(c->set); i++)
		if (c->set[i].size)
			put_le(&r, c->set[i].off, c->set[i].size,
			       c->set[i].value);
	KUNIT_EXPECT_EQ(test, farswap_conn_rep_check(&r, sizeof(r)),
			c->expect);
}

static void conn_rep_malformed_test(struct kunit *test)
{
	static const struct span reserved[] = {
		FIELD(farswap_conn_rep, reserved0),
		FIELD(farswap_conn_rep, reserved1),
	};
	struct {
		struct farswap_conn_rep r;
		u8 pad[8];
	} b = {};
	unsigned int i, j;
	size_t len;

	build_conn_rep(&b.r);
	KUNIT_EXPECT_EQ(test, farswap_conn_rep_check(NULL, sizeof(b.r)),
			INVALID);
	for (len = 0; len < sizeof(b.r); len++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_conn_rep_check(&b.r, len),
				    INVALID, "%zu bytes", len);
	for (len = sizeof(b.r); len <= sizeof(b); len++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_conn_rep_check(&b.r, len),
				    OK, "%zu bytes", len);
	for (i = 0; i < sizeof(b.r.magic); i++) {
		build_conn_rep(&b.r);
		((u8 *)&b.r.magic)[i] ^= 0xff;
		KUNIT_EXPECT_EQ(test, farswap_conn_rep_check(&b.r, sizeof(b.r)),
				INVALID);
	}
	for (i = 0; i < ARRAY_SIZE(reserved); i++) {
		for (j = 0; j < reserved[i].len; j++) {
			build_conn_rep(&b.r);
			((u8 *)&b.r)[reserved[i].off + j] = 1;
			KUNIT_EXPECT_EQ_MSG(test,
					    farswap_conn_rep_check(&b.r,
								   sizeof(b.r)),
					    INVALID, "reserved byte %u",
					    reserved[i].off + j);
		}
	}
}

static void conn_rej_test(struct kunit *test)
{
	struct {
		struct farswap_conn_rej r;
		u8 pad[8];
	} b = {};
	unsigned int reason;
	size_t len;

	/* Every reason a donor can give comes through as given. */
	for (reason = 0; reason <= FARSWAP_ST_COUNT; reason++) {
		bool valid = reason != FARSWAP_ST_OK &&
			     reason < FARSWAP_ST_COUNT;

		farswap_conn_rej_init(&b.r, reason);
		KUNIT_EXPECT_EQ_MSG(test,
				    farswap_conn_rej_reason(&b.r, sizeof(b.r)),
				    valid ? (int)reason : -1, "reason %u",
				    reason);
	}
	farswap_conn_rej_init(&b.r, FARSWAP_ST_VERSION);
	KUNIT_EXPECT_EQ(test, b.r.ver_min, FARSWAP_VERSION_MIN);
	KUNIT_EXPECT_EQ(test, b.r.ver_max, FARSWAP_VERSION_MAX);
	for (len = 0; len < sizeof(b.r); len++)
		KUNIT_EXPECT_EQ_MSG(test, farswap_conn_rej_reason(&b.r, len), -1,
				    "%zu bytes", len);
	for (len = sizeof(b.r); len <= sizeof(b); len++)
		KUNIT_EXPECT_EQ(test, farswap_conn_rej_reason(&b.r, len),
				FARSWAP_ST_VERSION);
	KUNIT_EXPECT_EQ(test, farswap_conn_rej_reason(NULL, 16), -1);

	/* Not farswapd's: another magic, or a reason we do not know. */
	b.r.magic = cpu_to_le32(FARSWAP_MAGIC + 1);
	KUNIT_EXPECT_EQ(test, farswap_conn_rej_reason(&b.r, sizeof(b.r)), -1);
	farswap_conn_rej_init(&b.r, FARSWAP_ST_BUSY);
	b.r.reason = cpu_to_le16(0xffff);
	KUNIT_EXPECT_EQ(test, farswap_conn_rej_reason(&b.r, sizeof(b.r)), -1);
}

static struct kunit_case farswap_proto_cases[] = {
	KUNIT_CASE_PARAM(msg_valid_test, msg_type_gen_params),
	KUNIT_CASE_PARAM(msg_length_test, msg_type_gen_params),
	KUNIT_CASE_PARAM(msg_header_test, msg_type_gen_params),
	KUNIT_CASE_PARAM(msg_reserved_test, msg_type_gen_params),
	KUNIT_CASE(msg_unknown_type_test),
	KUNIT_CASE_PARAM(msg_field_test, msg_field_gen_params),
	KUNIT_CASE(msg_init_test),
	KUNIT_CASE(msg_free_flags_test),
	KUNIT_CASE(msg_wire_bytes_test),
	KUNIT_CASE(status_and_type_names_test),
	KUNIT_CASE(negotiate_version_test),
	KUNIT_CASE_PARAM(conn_req_test, conn_req_gen_params),
	KUNIT_CASE(conn_req_malformed_test),
	KUNIT_CASE_PARAM(conn_rep_test, conn_rep_gen_params),
	KUNIT_CASE(conn_rep_malformed_test),
	KUNIT_CASE(conn_rej_test),
	{}
};

static struct kunit_suite farswap_proto_suite = {
	.name = "farswap_proto",
	.test_cases = farswap_proto_cases,
};

kunit_test_suite(farswap_proto_suite);
