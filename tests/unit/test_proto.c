// SPDX-License-Identifier: GPL-2.0
/*
 * Wire protocol checks (include/farswap_proto.h): every message type, every
 * wrong length, magic, version and type, every reserved byte, and the
 * connection private data checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "farswap_proto.h"

#define V FARSWAP_VERSION_MAX

struct resv {
	size_t off, len;
};

struct msg_case {
	unsigned int type;
	size_t size;
	struct resv resv[3];
};

#define R(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f) }

static const struct msg_case cases[] = {
	{ FARSWAP_MSG_SLAB_ALLOC_REQ, 48, { R(farswap_slab_alloc_req, reserved) } },
	{ FARSWAP_MSG_SLAB_ALLOC_REP, 56,
	  { R(farswap_slab_alloc_rep, reserved0) } },
	{ FARSWAP_MSG_SLAB_FREE_REQ, 32,
	  { R(farswap_slab_free_req, reserved1) } },
	{ FARSWAP_MSG_SLAB_FREE_REP, 32,
	  { R(farswap_slab_free_rep, reserved0),
	    R(farswap_slab_free_rep, reserved1) } },
	{ FARSWAP_MSG_RECLAIM_REQ, 32, { R(farswap_reclaim_req, reserved) } },
	{ FARSWAP_MSG_RECLAIM_REP, 32,
	  { R(farswap_reclaim_rep, reserved0),
	    R(farswap_reclaim_rep, reserved1) } },
	{ FARSWAP_MSG_STATS_REQ, 16, { { 0, 0 } } },
	{ FARSWAP_MSG_STATS_REP, 56,
	  { R(farswap_stats_rep, reserved0),
	    R(farswap_stats_rep, reserved1) } },
	{ FARSWAP_MSG_AUTH_REQ, 32, { { 0, 0 } } },
	{ FARSWAP_MSG_AUTH_CHAL, 64, { { 0, 0 } } },
	{ FARSWAP_MSG_AUTH_PROOF, 48, { { 0, 0 } } },
	{ FARSWAP_MSG_AUTH_REP, 32,
	  { R(farswap_auth_rep, reserved0), R(farswap_auth_rep, reserved1),
	    R(farswap_auth_rep, reserved2) } },
	{ FARSWAP_MSG_INFO_REQ, 32, { R(farswap_info_req, reserved) } },
	{ FARSWAP_MSG_INFO_REP, 64, { R(farswap_info_rep, reserved) } },
	{ FARSWAP_MSG_SLAB_REVOKE, 32, { R(farswap_slab_revoke, reserved) } },
	{ FARSWAP_MSG_SLAB_RESUME_REQ, 40,
	  { R(farswap_slab_resume_req, reserved0) } },
	{ FARSWAP_MSG_SLAB_RESUME_REP, 56,
	  { R(farswap_slab_resume_rep, reserved0) } },
	{ FARSWAP_MSG_AUTH_KX_REQ, 64, { { 0, 0 } } },
	{ FARSWAP_MSG_AUTH_KX_CHAL, 96, { { 0, 0 } } },
};

/* A valid message of @type, the way a correct sender fills it. */
static void build(union farswap_msg *m, unsigned int type)
{
	farswap_msg_init(m, type, V, 0x1122334455667788ull);
	switch (type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		m->alloc_req.slab_size = cpu_to_le64(4 << 20);
		m->alloc_req.host_slab = cpu_to_le64(7);
		break;
	case FARSWAP_MSG_SLAB_ALLOC_REP:
		m->alloc_rep.slab_id = cpu_to_le32(3);
		m->alloc_rep.addr = cpu_to_le64(0x7f0000000000ull);
		m->alloc_rep.length = cpu_to_le64(4 << 20);
		m->alloc_rep.rkey = cpu_to_le32(0x1234);
		m->alloc_rep.slabs_free = cpu_to_le32(9);
		break;
	case FARSWAP_MSG_SLAB_FREE_REQ:
		m->free_req.slab_id = cpu_to_le32(3);
		break;
	case FARSWAP_MSG_SLAB_FREE_REP:
		m->free_rep.slab_id = cpu_to_le32(3);
		break;
	case FARSWAP_MSG_RECLAIM_REQ:
		m->reclaim_req.slab_id = cpu_to_le32(3);
		m->reclaim_req.deadline_ms = cpu_to_le32(1000);
		break;
	case FARSWAP_MSG_RECLAIM_REP:
		m->reclaim_rep.slab_id = cpu_to_le32(3);
		break;
	case FARSWAP_MSG_STATS_REP:
		m->stats_rep.slab_size = cpu_to_le64(4 << 20);
		m->stats_rep.slabs_total = cpu_to_le32(16);
		m->stats_rep.slabs_free = cpu_to_le32(5);
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
	case FARSWAP_MSG_INFO_REP:
		memcpy(m->info_rep.domain, "rackA", 5);
		break;
	case FARSWAP_MSG_SLAB_REVOKE:
		m->slab_revoke.slab_id = cpu_to_le32(3);
		m->slab_revoke.grace_ms = cpu_to_le32(2000);
		break;
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		m->resume_req.slab_id = cpu_to_le32(3);
		m->resume_req.resume = cpu_to_le64(0x0123456789abcdefull);
		m->resume_req.slab_size = cpu_to_le64(4 << 20);
		break;
	case FARSWAP_MSG_SLAB_RESUME_REP:
		m->resume_rep.slab_id = cpu_to_le32(3);
		m->resume_rep.addr = cpu_to_le64(0x7f0000000000ull);
		m->resume_rep.length = cpu_to_le64(4 << 20);
		m->resume_rep.rkey = cpu_to_le32(0x4321);
		m->resume_rep.resume = cpu_to_le64(0xfedcba9876543210ull);
		break;
	case FARSWAP_MSG_AUTH_KX_REQ:
		memset(m->kx_req.host_nonce, 0xa5, FARSWAP_AUTH_NONCE_LEN);
		memset(m->kx_req.host_pub, 0x09, FARSWAP_KX_PUB_LEN);
		break;
	case FARSWAP_MSG_AUTH_KX_CHAL:
		memset(m->kx_chal.donor_nonce, 0x5a, FARSWAP_AUTH_NONCE_LEN);
		memset(m->kx_chal.donor_pub, 0x09, FARSWAP_KX_PUB_LEN);
		memset(m->kx_chal.donor_mac, 0x11, FARSWAP_AUTH_MAC_LEN);
		break;
	}
}

static void test_every_type_valid(void **state)
{
	union farswap_msg m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		build(&m, cases[i].type);
		assert_int_equal(farswap_msg_size(cases[i].type), cases[i].size);
		assert_int_equal(le16_to_cpu(m.hdr.length), cases[i].size);
		assert_int_equal(farswap_msg_check(&m, cases[i].size, V),
				 FARSWAP_ST_OK);
	}
}

static void test_every_bad_length(void **state)
{
	uint8_t buf[FARSWAP_MSG_MAX * 2];
	union farswap_msg m;
	size_t i, len;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		build(&m, cases[i].type);
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &m, sizeof(m));
		for (len = 0; len <= sizeof(buf); len++) {
			int want = FARSWAP_ST_INVALID;

			if (len == cases[i].size)
				want = FARSWAP_ST_OK;

			assert_int_equal(farswap_msg_check(buf, len, V), want);
		}
	}
}

static void test_bad_length_field(void **state)
{
	union farswap_msg m;
	size_t i;
	unsigned int l;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l <= 0xffff; l += (l < 128 ? 1 : 251)) {
			if (l == cases[i].size)
				continue;
			build(&m, cases[i].type);
			m.hdr.length = cpu_to_le16((uint16_t)l);
			assert_int_equal(farswap_msg_check(&m, cases[i].size, V),
					 FARSWAP_ST_INVALID);
		}
	}
}

static void test_bad_magic(void **state)
{
	union farswap_msg m;
	unsigned int bit;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (bit = 0; bit < 32; bit++) {
			build(&m, cases[i].type);
			m.hdr.magic ^= cpu_to_le32(1u << bit);
			assert_int_equal(farswap_msg_check(&m, cases[i].size, V),
					 FARSWAP_ST_INVALID);
		}
	}
}

static void test_bad_version(void **state)
{
	union farswap_msg m;
	unsigned int v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (v = 0; v < 256; v++) {
			if (v == V)
				continue;
			build(&m, cases[i].type);
			m.hdr.version = (uint8_t)v;
			assert_int_equal(farswap_msg_check(&m, cases[i].size, V),
					 FARSWAP_ST_VERSION);
		}
	}
}

static void test_bad_type(void **state)
{
	union farswap_msg m;
	unsigned int t;

	(void)state;
	for (t = 0; t < 256; t++) {
		size_t len;

		if (farswap_msg_type_known(t))
			continue;
		build(&m, FARSWAP_MSG_STATS_REQ);
		m.hdr.type = (uint8_t)t;
		assert_int_equal(farswap_msg_size(t), 0);
		for (len = 16; len <= FARSWAP_MSG_MAX; len += 8) {
			m.hdr.length = cpu_to_le16((uint16_t)len);
			assert_int_equal(farswap_msg_check(&m, len, V),
					 FARSWAP_ST_INVALID);
		}
	}
}

static void test_reserved_bytes(void **state)
{
	union farswap_msg m;
	size_t i, r, b;
	unsigned int checked = 0;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (r = 0; r < 3 && cases[i].resv[r].len; r++) {
			for (b = 0; b < cases[i].resv[r].len; b++) {
				build(&m, cases[i].type);
				m.raw[cases[i].resv[r].off + b] = 0x80;
				assert_int_equal(farswap_msg_check(&m, cases[i].size,
								   V),
						 FARSWAP_ST_INVALID);
				checked++;
			}
		}
	}
	/*
	 * Every reserved byte of every type: 16+2+8+2+4+8+2+8+4+8, AUTH_REP
	 * 2+4+8, INFO 16+16, SLAB_REVOKE 8, RESUME 4+2 (SLAB_FREE_REQ's flags
	 * are checked in test_donor.c).
	 */
	assert_int_equal(checked, 122);
}

static void test_body_ranges(void **state)
{
	union farswap_msg m;
	uint64_t sizes[] = { 0, 1, 4096, (2 << 20) - 1, (3 << 20),
			     1ull << 41, UINT64_MAX };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		build(&m, FARSWAP_MSG_SLAB_ALLOC_REQ);
		m.alloc_req.slab_size = cpu_to_le64(sizes[i]);
		assert_int_equal(farswap_msg_check(&m, 48, V),
				 FARSWAP_ST_INVALID);
	}
	build(&m, FARSWAP_MSG_SLAB_ALLOC_REQ);
	m.alloc_req.slab_size = cpu_to_le64(2 << 20);
	assert_int_equal(farswap_msg_check(&m, 48, V), FARSWAP_ST_OK);

	/* A refusal carries no slab. */
	build(&m, FARSWAP_MSG_SLAB_ALLOC_REP);
	m.alloc_rep.status = cpu_to_le16(FARSWAP_ST_NO_SPACE);
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
	m.alloc_rep.slab_id = 0;
	m.alloc_rep.addr = 0;
	m.alloc_rep.length = 0;
	m.alloc_rep.rkey = 0;
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_OK);
	m.alloc_rep.resume = cpu_to_le64(1);
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
	/* A resume needs its token; a granted resume a new one. */
	build(&m, FARSWAP_MSG_SLAB_RESUME_REQ);
	m.resume_req.resume = 0;
	assert_int_equal(farswap_msg_check(&m, 40, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_SLAB_RESUME_REQ);
	m.resume_req.slab_size = cpu_to_le64(3 << 20);
	assert_int_equal(farswap_msg_check(&m, 40, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_SLAB_RESUME_REP);
	m.resume_rep.resume = 0;
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
	/* A refused resume names its slab and nothing else. */
	build(&m, FARSWAP_MSG_SLAB_RESUME_REP);
	m.resume_rep.status = cpu_to_le16(FARSWAP_ST_NO_ENTRY);
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
	m.resume_rep.addr = 0;
	m.resume_rep.length = 0;
	m.resume_rep.rkey = 0;
	m.resume_rep.resume = 0;
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_OK);
	/* A grant must not wrap the address space. */
	build(&m, FARSWAP_MSG_SLAB_ALLOC_REP);
	m.alloc_rep.addr = cpu_to_le64(UINT64_MAX - 4096);
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
	/* Statuses beyond the enum. */
	build(&m, FARSWAP_MSG_RECLAIM_REP);
	m.reclaim_rep.status = cpu_to_le16(FARSWAP_ST_COUNT);
	assert_int_equal(farswap_msg_check(&m, 32, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_SLAB_FREE_REP);
	m.free_rep.status = cpu_to_le16(0xffff);
	assert_int_equal(farswap_msg_check(&m, 32, V), FARSWAP_ST_INVALID);
	/* More free than total. */
	build(&m, FARSWAP_MSG_STATS_REP);
	m.stats_rep.slabs_free = cpu_to_le32(17);
	assert_int_equal(farswap_msg_check(&m, 56, V), FARSWAP_ST_INVALID);
}

static void test_status_strings(void **state)
{
	unsigned int st;

	(void)state;
	for (st = 0; st < FARSWAP_ST_COUNT; st++)
		assert_string_not_equal(farswap_status_str(st),
					"unknown status");
	assert_string_equal(farswap_status_str(FARSWAP_ST_COUNT),
			    "unknown status");
	for (st = 1; st <= FARSWAP_MSG_TYPE_MAX; st++) {
		assert_true(farswap_msg_type_known(st));
		assert_string_not_equal(farswap_msg_type_str(st), "unknown");
	}
	assert_int_equal(FARSWAP_MSG_INFO_REQ, 13);
	assert_int_equal(FARSWAP_MSG_INFO_REP, 14);
	assert_int_equal(FARSWAP_MSG_SLAB_REVOKE, 15);
	assert_int_equal(FARSWAP_MSG_SLAB_RESUME_REQ, 16);
	assert_int_equal(FARSWAP_MSG_SLAB_RESUME_REP, 17);
	assert_int_equal(FARSWAP_MSG_AUTH_KX_CHAL, 19);
	assert_int_equal(FARSWAP_MSG_TYPE_MAX, 19);
	assert_string_equal(farswap_msg_type_str(FARSWAP_MSG_INFO_REP),
			    "INFO_REP");
}

/* INFO_REP's domain: 1 to 32 printable characters, no space, NUL-padded. */
static void test_info_domain(void **state)
{
	union farswap_msg m;
	unsigned int c;

	(void)state;
	build(&m, FARSWAP_MSG_INFO_REP);
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_OK);
	/* Empty. */
	memset(m.info_rep.domain, 0, sizeof(m.info_rep.domain));
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_INVALID);
	/* Exactly 32 characters: no NUL needed. */
	memset(m.info_rep.domain, 'x', sizeof(m.info_rep.domain));
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_OK);
	/* Something after the NUL. */
	build(&m, FARSWAP_MSG_INFO_REP);
	m.info_rep.domain[10] = 'y';
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_INVALID);
	/* Every byte that is not printable, or a space. */
	for (c = 1; c < 256; c++) {
		build(&m, FARSWAP_MSG_INFO_REP);
		m.info_rep.domain[2] = (uint8_t)c;
		assert_int_equal(farswap_msg_check(&m, 64, V),
				 c >= 0x21 && c <= 0x7e ? FARSWAP_ST_OK :
							  FARSWAP_ST_INVALID);
	}
	/* The setter refuses what the check would. */
	assert_int_equal(farswap_info_rep_set_domain(&m.info_rep, "rack B"), -1);
	assert_true(farswap_is_zero(m.info_rep.domain,
				    sizeof(m.info_rep.domain)));
	assert_int_equal(farswap_info_rep_set_domain(&m.info_rep, ""), -1);
	assert_int_equal(farswap_info_rep_set_domain(
				 &m.info_rep,
				 "123456789012345678901234567890123"), -1);
	assert_int_equal(farswap_info_rep_set_domain(&m.info_rep, "rack-B"), 0);
	assert_memory_equal(m.info_rep.domain, "rack-B\0\0", 8);
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_OK);
}

/* Nonces must not be all zero; AUTH_REP's status must be a known one. */
static void test_auth_fields(void **state)
{
	struct farswap_auth_mac_input in;
	union farswap_msg m;
	uint8_t hn[16], dn[16], hid[16], did[16];

	(void)state;
	build(&m, FARSWAP_MSG_AUTH_REQ);
	memset(m.auth_req.host_nonce, 0, sizeof(m.auth_req.host_nonce));
	assert_int_equal(farswap_msg_check(&m, 32, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_AUTH_CHAL);
	memset(m.auth_chal.donor_nonce, 0, sizeof(m.auth_chal.donor_nonce));
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_AUTH_REP);
	m.auth_rep.status = cpu_to_le16(FARSWAP_ST_DENIED);
	assert_int_equal(farswap_msg_check(&m, 32, V), FARSWAP_ST_OK);
	m.auth_rep.status = cpu_to_le16(FARSWAP_ST_COUNT);
	assert_int_equal(farswap_msg_check(&m, 32, V), FARSWAP_ST_INVALID);

	/* The MAC input: labels, then each field at its offset. */
	memset(hn, 1, 16);
	memset(dn, 2, 16);
	memset(hid, 3, 16);
	memset(did, 4, 16);
	memset(&in, 0xff, sizeof(in));
	farswap_auth_mac_input_init(&in, FARSWAP_AUTH_HOST, hn, dn,
				    0x0807060504030201ull, hid, did);
	assert_memory_equal(in.label, "farswap host v1\0", 16);
	assert_memory_equal((uint8_t *)&in + 16, hn, 16);
	assert_memory_equal((uint8_t *)&in + 32, dn, 16);
	assert_memory_equal((uint8_t *)&in + 48, "\1\2\3\4\5\6\7\10", 8);
	assert_memory_equal((uint8_t *)&in + 56, hid, 16);
	assert_memory_equal((uint8_t *)&in + 72, did, 16);
	farswap_auth_mac_input_init(&in, FARSWAP_AUTH_DONOR, hn, dn, 1, hid,
				    did);
	assert_memory_equal(in.label, "farswap donor v1", 16);
}

static void conn_req(struct farswap_conn_req *r, unsigned int qtype,
		     unsigned int qid, uint64_t session)
{
	farswap_conn_req_init(r, qtype, qid, 4, session, 128);
	memcpy(r->host_id, "host-a", 6);
}

static void test_conn_req_check(void **state)
{
	struct farswap_conn_req r;
	uint8_t pad[64];
	size_t b;

	(void)state;
	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);
	/* rdma_cm may pad: longer is fine, shorter is not. */
	memset(pad, 0, sizeof(pad));
	memcpy(pad, &r, sizeof(r));
	assert_int_equal(farswap_conn_req_check(pad, sizeof(pad)),
			 FARSWAP_ST_OK);
	for (b = 0; b < sizeof(r); b++)
		assert_int_equal(farswap_conn_req_check(&r, b),
				 FARSWAP_ST_INVALID);
	assert_int_equal(farswap_conn_req_check(NULL, 56), FARSWAP_ST_INVALID);

	conn_req(&r, FARSWAP_QT_IO, 1, 99);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);
	conn_req(&r, FARSWAP_QT_IO, 4, 99);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);

	/* Control: qid 0 and no session; I/O: qid 1..n and a session. */
	conn_req(&r, FARSWAP_QT_CTRL, 1, 0);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_CTRL, 0, 5);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_IO, 0, 99);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_IO, 5, 99);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_IO, 1, 0);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, 3, 0, 0);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, 0, 0, 0);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);

	/* nr_io_queues 1..64, queue_depth > 0. */
	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	r.nr_io_queues = 0;
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	r.nr_io_queues = cpu_to_le16(FARSWAP_MAX_IO_QUEUES + 1);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	r.nr_io_queues = cpu_to_le16(FARSWAP_MAX_IO_QUEUES);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);
	r.queue_depth = 0;
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);

	/* Magic and every reserved byte. */
	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	r.magic ^= cpu_to_le32(0x100);
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	r.reserved0 = 1;
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	/* A control QP has no session to prove: its join tag is zero. */
	for (b = 0; b < sizeof(r.join_tag); b++) {
		conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
		r.join_tag[b] = 1;
		assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
				 FARSWAP_ST_INVALID);
	}
	/* Versions are not the check's business: the donor negotiates. */
	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	r.ver_min = 9;
	r.ver_max = 9;
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);
}

static void test_conn_rep_check(void **state)
{
	struct farswap_conn_rep r;
	size_t b;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.magic = cpu_to_le32(FARSWAP_MAGIC);
	r.version = 1;
	r.session = cpu_to_le64(77);
	r.slab_size = cpu_to_le64(1 << 30);
	r.slabs_total = cpu_to_le32(8);
	r.slabs_free = cpu_to_le32(8);
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)), FARSWAP_ST_OK);
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r) - 1),
			 FARSWAP_ST_INVALID);
	r.version = 2;
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_VERSION);
	r.version = 0;
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_VERSION);
	r.version = 1;
	r.session = 0;
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	r.session = cpu_to_le64(77);
	r.slabs_free = cpu_to_le32(9);
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	r.slabs_free = cpu_to_le32(8);
	r.slab_size = cpu_to_le64(3 << 20);
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	r.slab_size = cpu_to_le64(1 << 30);
	for (b = 0; b < sizeof(r.reserved0); b++) {
		r.reserved0[b] = 1;
		assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
				 FARSWAP_ST_INVALID);
		r.reserved0[b] = 0;
	}
	r.reserved1 = 1;
	assert_int_equal(farswap_conn_rep_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
}

static void test_conn_rej(void **state)
{
	struct farswap_conn_rej r;
	unsigned int st;

	(void)state;
	for (st = 1; st < FARSWAP_ST_COUNT; st++) {
		farswap_conn_rej_init(&r, st);
		assert_int_equal(farswap_conn_rej_reason(&r, sizeof(r)), st);
		assert_int_equal(r.ver_min, FARSWAP_VERSION_MIN);
		assert_int_equal(r.ver_max, FARSWAP_VERSION_MAX);
	}
	farswap_conn_rej_init(&r, FARSWAP_ST_OK);
	assert_int_equal(farswap_conn_rej_reason(&r, sizeof(r)), -1);
	farswap_conn_rej_init(&r, FARSWAP_ST_COUNT);
	assert_int_equal(farswap_conn_rej_reason(&r, sizeof(r)), -1);
	farswap_conn_rej_init(&r, FARSWAP_ST_VERSION);
	assert_int_equal(farswap_conn_rej_reason(&r, sizeof(r) - 1), -1);
	assert_int_equal(farswap_conn_rej_reason(NULL, 16), -1);
	r.magic = 0;
	assert_int_equal(farswap_conn_rej_reason(&r, sizeof(r)), -1);
}

/*
 * Session keys: a zero nonce or public key is refused; a tagged message
 * is its body's check plus FARSWAP_KX_TAG_LEN bytes; the transcript's
 * fields at their offsets; a control QP carries no join tag, an I/O QP
 * may.
 */
static void test_kx_fields(void **state)
{
	struct farswap_kx_transcript t;
	struct farswap_conn_req r;
	union farswap_msg m;
	uint8_t a[16], b[16], pa[32], pb[32], hid[16], did[16];

	(void)state;
	build(&m, FARSWAP_MSG_AUTH_KX_REQ);
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_OK);
	memset(m.kx_req.host_pub, 0, sizeof(m.kx_req.host_pub));
	assert_int_equal(farswap_msg_check(&m, 64, V), FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_AUTH_KX_CHAL);
	memset(m.kx_chal.donor_nonce, 0, sizeof(m.kx_chal.donor_nonce));
	assert_int_equal(farswap_msg_check(&m, 96, V), FARSWAP_ST_INVALID);
	/* Over the 64 bytes peers without FARSWAP_FEAT_KX receive. */
	assert_true(sizeof(struct farswap_auth_kx_chal) > 64);
	assert_true(sizeof(union farswap_msg) >=
		    sizeof(struct farswap_auth_kx_chal) + FARSWAP_KX_TAG_LEN);

	build(&m, FARSWAP_MSG_STATS_REQ);
	assert_int_equal(farswap_msg_check_tagged(&m, 16 + 16, V),
			 FARSWAP_ST_OK);
	assert_int_equal(farswap_msg_check_tagged(&m, 16 + 15, V),
			 FARSWAP_ST_INVALID);
	assert_int_equal(farswap_msg_check_tagged(&m, 16, V),
			 FARSWAP_ST_INVALID);
	assert_int_equal(farswap_msg_check_tagged(&m, FARSWAP_MSG_MAX + 1, V),
			 FARSWAP_ST_INVALID);
	build(&m, FARSWAP_MSG_AUTH_KX_CHAL);
	assert_int_equal(farswap_msg_check_tagged(&m, 96 + 16, V),
			 FARSWAP_ST_OK);

	memset(a, 1, 16);
	memset(b, 2, 16);
	memset(pa, 3, 32);
	memset(pb, 4, 32);
	memset(hid, 5, 16);
	memset(did, 6, 16);
	memset(&t, 0xff, sizeof(t));
	farswap_kx_transcript_init(&t, FARSWAP_KX_LABEL_HOST, a, b, pa, pb,
				   0x0807060504030201ull, hid, did, 0x11223344,
				   0x55667788, 1);
	assert_memory_equal(t.label, "farswap host v2\0", 16);
	assert_memory_equal((uint8_t *)&t + 16, a, 16);
	assert_memory_equal((uint8_t *)&t + 32, b, 16);
	assert_memory_equal((uint8_t *)&t + 48, pa, 32);
	assert_memory_equal((uint8_t *)&t + 80, pb, 32);
	assert_memory_equal((uint8_t *)&t + 112, "\1\2\3\4\5\6\7\10", 8);
	assert_memory_equal((uint8_t *)&t + 120, hid, 16);
	assert_memory_equal((uint8_t *)&t + 136, did, 16);
	assert_memory_equal((uint8_t *)&t + 152, "\x44\x33\x22\x11", 4);
	assert_memory_equal((uint8_t *)&t + 156, "\x88\x77\x66\x55", 4);
	assert_int_equal(((uint8_t *)&t)[160], 1);
	assert_true(farswap_is_zero((uint8_t *)&t + 161, 7));

	conn_req(&r, FARSWAP_QT_CTRL, 0, 0);
	r.join_tag[11] = 1;
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)),
			 FARSWAP_ST_INVALID);
	conn_req(&r, FARSWAP_QT_IO, 1, 7);
	memset(r.join_tag, 0xee, sizeof(r.join_tag));
	assert_int_equal(farswap_conn_req_check(&r, sizeof(r)), FARSWAP_ST_OK);
}

static void test_negotiate(void **state)
{
	(void)state;
	assert_int_equal(farswap_negotiate_version(1, 1), 1);
	assert_int_equal(farswap_negotiate_version(1, 5), 1);
	assert_int_equal(farswap_negotiate_version(0, 1), 1);
	assert_int_equal(farswap_negotiate_version(2, 5), 0);
	assert_int_equal(farswap_negotiate_version(0, 0), 0);
	assert_int_equal(farswap_negotiate_version(1, 0), 0);
	assert_int_equal(farswap_negotiate_version(255, 255), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_valid),
		cmocka_unit_test(test_every_bad_length),
		cmocka_unit_test(test_bad_length_field),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_bad_type),
		cmocka_unit_test(test_reserved_bytes),
		cmocka_unit_test(test_body_ranges),
		cmocka_unit_test(test_status_strings),
		cmocka_unit_test(test_info_domain),
		cmocka_unit_test(test_conn_req_check),
		cmocka_unit_test(test_conn_rep_check),
		cmocka_unit_test(test_conn_rej),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_auth_fields),
		cmocka_unit_test(test_kx_fields),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
