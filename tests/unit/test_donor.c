// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's decisions, with fake ops: connect requests, every control
 * message, the reclaim flow and session teardown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "donor_internal.h"
#include "fake_ops.h"
#include "log.h"
#include "report.h"

#define MiB (1ull << 20)
#define SLAB (4 * MiB)
#define NR 8
#define V FARSWAP_VERSION_MAX

struct ctx {
	struct fsd_donor d;
	struct fake f;
	struct fsd_session *a, *b;
};

static int setup(void **state)
{
	static struct ctx c;

	memset(&c, 0, sizeof(c));
	if (fake_donor_init(&c.d, &c.f, NR, SLAB))
		return -1;
	c.a = fake_session(&c.d, "host-a", 2);
	c.b = fake_session(&c.d, "host-b", 2);
	if (!c.a || !c.b)
		return -1;
	*state = &c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	assert_true(fsd_pool_consistent(&c->d.pool));
	fake_donor_exit(&c->d);
	return 0;
}

static int send_msg(struct ctx *c, struct fsd_session *s,
		    const union farswap_msg *m)
{
	return fsd_handle_msg(&c->d, s, m, le16_to_cpu(m->hdr.length), 1000);
}

/* Ask for a slab; returns the reply. */
static const struct farswap_slab_alloc_rep *alloc(struct ctx *c,
						  struct fsd_session *s,
						  uint64_t size)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 0xabc);
	m.alloc_req.slab_size = cpu_to_le64(size);
	m.alloc_req.host_slab = cpu_to_le64(5);
	assert_int_equal(send_msg(c, s, &m), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_SLAB_ALLOC_REP);
	assert_ptr_equal(c->f.sent_to[(c->f.nr_sent - 1) % FAKE_SENT_MAX], s);
	return &fake_last(&c->f)->alloc_rep;
}

static const struct farswap_slab_free_rep *free_slab(struct ctx *c,
						     struct fsd_session *s,
						     uint32_t id)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 0xdef);
	m.free_req.slab_id = cpu_to_le32(id);
	assert_int_equal(send_msg(c, s, &m), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_SLAB_FREE_REP);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0xdef);
	return &fake_last(&c->f)->free_rep;
}

static void test_alloc_grant(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r = alloc(c, c->a, SLAB);
	struct fsd_slab *slab;

	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(le64_to_cpu(r->hdr.cookie), 0xabc);
	assert_int_equal(le64_to_cpu(r->length), SLAB);
	slab = fsd_pool_get(&c->d.pool, le32_to_cpu(r->slab_id));
	assert_non_null(slab);
	assert_ptr_equal(slab->owner, c->a);
	/* Zero-based: the host learns nothing of where the slab lies. */
	assert_int_equal(le64_to_cpu(r->addr), 0);
	assert_int_equal(le32_to_cpu(r->rkey), slab->rkey);
	assert_int_equal(slab->host_slab, 5);
	assert_int_equal(le32_to_cpu(r->slabs_free), NR - 1);
	assert_int_equal(c->a->nr_slabs, 1);
	assert_int_equal(c->f.grants, 1);
}

static void test_alloc_wrong_size(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r = alloc(c, c->a, SLAB * 2);

	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_SLAB_SIZE);
	assert_int_equal(r->rkey, 0);
	assert_int_equal(r->addr, 0);
	assert_int_equal(c->d.pool.nr_free, NR);
	assert_int_equal(c->f.grants, 0);
}

static void test_alloc_exhaustion(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;
	uint32_t seen = 0;
	int i;

	for (i = 0; i < NR; i++) {
		r = alloc(c, i & 1 ? c->b : c->a, SLAB);
		assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
		assert_false(seen & (1u << le32_to_cpu(r->slab_id)));
		seen |= 1u << le32_to_cpu(r->slab_id);
		assert_int_equal(le32_to_cpu(r->slabs_free), NR - 1 - i);
	}
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_SPACE);
	assert_int_equal(r->slab_id, 0);
	assert_false(c->a->closing);
}

static void test_alloc_busy_under_pressure(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;

	c->d.under_pressure = true;
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_BUSY);
	assert_int_equal(le32_to_cpu(r->slabs_free), 0);
	c->d.under_pressure = false;
	c->d.shutting_down = true;
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_BUSY);
	assert_int_equal(c->d.pool.nr_free, NR);
}

static void test_alloc_register_fails(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;

	c->f.fail_grant = 1;
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_INTERNAL);
	assert_int_equal(c->d.pool.nr_free, NR);	/* nothing leaked */
	assert_int_equal(c->a->nr_slabs, 0);
	assert_false(c->a->closing);
}

static void test_slab_free(void **state)
{
	struct ctx *c = *state;
	uint32_t id = le32_to_cpu(alloc(c, c->a, SLAB)->slab_id);
	const struct farswap_slab_free_rep *r;

	r = free_slab(c, c->a, id);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(le32_to_cpu(r->slab_id), id);
	assert_int_equal(le32_to_cpu(r->slabs_free), NR);
	assert_int_equal(c->f.revokes, 1);	/* rkey dead */
	assert_int_equal(c->a->nr_slabs, 0);
	assert_true(fsd_pool_get(&c->d.pool, id)->dirty);
	/* Double free. */
	r = free_slab(c, c->a, id);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	assert_int_equal(c->f.revokes, 1);
	/* No such slab at all. */
	r = free_slab(c, c->a, NR);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	r = free_slab(c, c->a, 0xffffffff);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	assert_false(c->a->closing);
}

static void test_free_other_hosts_slab(void **state)
{
	struct ctx *c = *state;
	uint32_t id = le32_to_cpu(alloc(c, c->a, SLAB)->slab_id);
	const struct farswap_slab_free_rep *r;

	r = free_slab(c, c->b, id);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_DENIED);
	assert_ptr_equal(fsd_pool_get(&c->d.pool, id)->owner, c->a);
	assert_int_equal(c->f.revokes, 0);
	assert_int_equal(c->a->nr_slabs, 1);
}

static void test_dirty_slab_zeroed_on_regrant(void **state)
{
	struct ctx *c = *state;
	uint32_t i;

	/* Take all, free all: every slab has had a host's bytes in it. */
	for (i = 0; i < NR; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < NR; i++)
		free_slab(c, c->a, i);
	for (i = 0; i < NR; i++)
		assert_true(c->d.pool.slabs[i].dirty);
	/* The fake grant clears dirty, as the real one zeroes: check it ran. */
	i = le32_to_cpu(alloc(c, c->b, SLAB)->slab_id);
	assert_false(c->d.pool.slabs[i].dirty);
}

static void test_stats(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	const struct farswap_stats_rep *r;

	alloc(c, c->a, SLAB);
	alloc(c, c->a, SLAB);
	alloc(c, c->b, SLAB);
	c->d.mem.mem_available = 12345 * MiB;
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 77);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	r = &fake_last(&c->f)->stats_rep;
	assert_int_equal(r->hdr.type, FARSWAP_MSG_STATS_REP);
	assert_int_equal(le64_to_cpu(r->hdr.cookie), 77);
	assert_int_equal(le64_to_cpu(r->slab_size), SLAB);
	assert_int_equal(le32_to_cpu(r->slabs_total), NR);
	assert_int_equal(le32_to_cpu(r->slabs_free), NR - 3);
	assert_int_equal(le32_to_cpu(r->slabs_host), 2);
	assert_int_equal(le64_to_cpu(r->mem_available), 12345 * MiB);
}

/* INFO_REQ: the donor's failure domain, its id when none is set. */
static void test_info(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m, r;

	fsd_donor_set_domain(&c->d, "rackA");
	farswap_msg_init(&m, FARSWAP_MSG_INFO_REQ, V, 31);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	r = *fake_last(&c->f);
	assert_int_equal(r.hdr.type, FARSWAP_MSG_INFO_REP);
	assert_int_equal(le64_to_cpu(r.hdr.cookie), 31);
	assert_int_equal(le16_to_cpu(r.hdr.length), 64);
	assert_int_equal(farswap_msg_check(&r, 64, V), FARSWAP_ST_OK);
	assert_memory_equal(r.info_rep.domain, "rackA\0\0\0", 8);
	assert_true(farswap_is_zero(r.info_rep.domain + 5, 27));
	assert_true(farswap_is_zero(r.info_rep.reserved,
				    sizeof(r.info_rep.reserved)));

	/* Default: the donor id as farswapd shows it (text, or hex). */
	memset(c->d.donor_id, 0, sizeof(c->d.donor_id));
	memcpy(c->d.donor_id, "node-7", 6);
	fsd_donor_set_domain(&c->d, NULL);
	assert_string_equal(c->d.domain, "node-7");
	fsd_info_rep_build(&c->d, c->a, 5, &r);
	assert_int_equal(farswap_msg_check(&r, 64, V), FARSWAP_ST_OK);
	assert_memory_equal(r.info_rep.domain, "node-7\0", 7);
	memset(c->d.donor_id, 0xab, sizeof(c->d.donor_id));
	fsd_donor_set_domain(&c->d, "");
	assert_int_equal(strlen(c->d.domain), 32);
	fsd_info_rep_build(&c->d, c->a, 6, &r);
	assert_int_equal(farswap_msg_check(&r, 64, V), FARSWAP_ST_OK);
	assert_memory_equal(r.info_rep.domain, "abababab", 8);

	/* A host may not send the reply; a bad request closes the session. */
	farswap_msg_init(&m, FARSWAP_MSG_INFO_REP, V, 1);
	memcpy(m.info_rep.domain, "x", 1);
	assert_int_equal(fsd_handle_msg(&c->d, c->b, &m, 64, 0), -EPROTO);
	farswap_msg_init(&m, FARSWAP_MSG_INFO_REQ, V, 1);
	m.info_req.reserved[3] = 1;
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 32, 0), -EPROTO);
}

static void test_bad_message_closes_only_that_session(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	uint32_t id = le32_to_cpu(alloc(c, c->b, SLAB)->slab_id);

	alloc(c, c->a, SLAB);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 1);
	m.hdr.magic = 0;
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 16, 0), -EPROTO);
	assert_true(c->a->closing);
	assert_int_equal(c->f.closes, 1);
	assert_false(c->b->closing);
	/* Closed sessions ignore whatever else arrives, without logging. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 1);
	assert_int_equal(send_msg(c, c->a, &m), -ESHUTDOWN);
	assert_int_equal(c->f.closes, 1);
	/* Teardown frees A's slab; B keeps its own. */
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(c->d.pool.nr_held, 1);
	assert_ptr_equal(fsd_pool_get(&c->d.pool, id)->owner, c->b);
	assert_int_equal(c->d.cnt.bad_msgs, 1);
}

static void test_every_malformed_kind_closes(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	int kind;

	for (kind = 0; kind < 7; kind++) {
		struct fsd_session *s = fake_session(&c->d, "host-x", 1);
		size_t len;

		farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 1);
		len = 32;
		switch (kind) {
		case 0:
			len = 31;	/* short */
			break;
		case 1:
			m.hdr.length = cpu_to_le16(33);
			break;
		case 2:
			m.hdr.version = V + 1;
			break;
		case 3:
			m.hdr.type = 0;
			break;
		case 4:
			m.free_req.reserved1[7] = 1;
			break;
		case 5:
			len = 100;	/* longer than any message */
			break;
		case 6:
			len = 0;
			break;
		}
		assert_int_equal(fsd_handle_msg(&c->d, s, &m, len, 0),
				 -EPROTO);
		assert_true(s->closing);
		fsd_session_free(&c->d, s);
	}
	assert_false(c->a->closing);
	assert_int_equal(c->d.cnt.bad_msgs, 7);
}

static void test_donor_only_types_close(void **state)
{
	struct ctx *c = *state;
	static const unsigned int types[] = {
		FARSWAP_MSG_SLAB_ALLOC_REP, FARSWAP_MSG_SLAB_FREE_REP,
		FARSWAP_MSG_RECLAIM_REQ, FARSWAP_MSG_STATS_REP,
	};
	union farswap_msg m;
	size_t i;

	for (i = 0; i < 4; i++) {
		struct fsd_session *s = fake_session(&c->d, "host-x", 1);

		farswap_msg_init(&m, types[i], V, 1);
		if (types[i] == FARSWAP_MSG_STATS_REP)
			m.stats_rep.slab_size = cpu_to_le64(SLAB);
		if (types[i] == FARSWAP_MSG_SLAB_ALLOC_REP) {
			m.alloc_rep.length = cpu_to_le64(SLAB);
			m.alloc_rep.addr = cpu_to_le64(4096);
		}
		assert_int_equal(farswap_msg_check(&m, farswap_msg_size(types[i]),
						   V), FARSWAP_ST_OK);
		assert_int_equal(send_msg(c, s, &m), -EPROTO);
		assert_true(s->closing);
		fsd_session_free(&c->d, s);
	}
}

static void test_send_failure_closes(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;

	c->f.fail_send = 1;
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 1);
	assert_int_not_equal(send_msg(c, c->a, &m), 0);
	assert_true(c->a->closing);
}

static void test_msg_problem_names_reason(void **state)
{
	union farswap_msg m;
	char why[128];

	(void)state;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 1);
	assert_non_null(strstr(fsd_msg_problem(&m, 8, V, why, sizeof(why)),
			       "length 8"));
	m.hdr.magic = cpu_to_le32(0xdeadbeef);
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "magic 0xdeadbeef"));
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, 9, 1);
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "version 9"));
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 1);
	m.hdr.type = 99;
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "type 99"));
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 1);
	m.free_req.flags = cpu_to_le32(2);
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "reserved"));
	/* FARSWAP_FREE_SESSION names no slab. */
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 1);
	m.free_req.flags = cpu_to_le32(FARSWAP_FREE_SESSION);
	m.free_req.slab_id = cpu_to_le32(3);
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "reserved"));
	m.free_req.slab_id = 0;
	assert_non_null(strstr(fsd_msg_problem(&m, 32, V, why, sizeof(why)),
			       "valid SLAB_FREE_REQ"));
}

/* Connect requests. */

static int decide(struct ctx *c, unsigned int qtype, unsigned int qid,
		  uint16_t nr, uint64_t token, const char *host,
		  struct fsd_conn_decision *dec)
{
	struct farswap_conn_req r;

	farswap_conn_req_init(&r, qtype, qid, nr, token, 64);
	strncpy((char *)r.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), dec, 0);
	return dec->status;
}

static void test_conn_ctrl(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct farswap_conn_rep rep;
	struct fsd_session *s;

	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 3, 0, "host-c", &dec),
			 FARSWAP_ST_OK);
	assert_int_equal(dec.version, 1);
	s = fsd_session_new(&c->d, &dec, "10.0.0.9:1", 0);
	assert_non_null(s);
	assert_int_not_equal(s->token, 0);
	assert_int_not_equal(s->token, c->a->token);
	assert_string_equal(s->name, "host-c");
	assert_int_equal(s->nr_io_queues, 3);
	fsd_conn_rep_build(&c->d, s, &rep);
	assert_int_equal(farswap_conn_rep_check(&rep, sizeof(rep)),
			 FARSWAP_ST_OK);
	assert_int_equal(le64_to_cpu(rep.session), s->token);
	assert_int_equal(le64_to_cpu(rep.slab_size), SLAB);
	assert_int_equal(le32_to_cpu(rep.slabs_total), NR);
	assert_int_equal(le32_to_cpu(rep.slabs_free), NR);
	/*
	 * No key: the donor does not offer authentication; nor keeping,
	 * which this host did not ask for.
	 */
	assert_int_equal(le32_to_cpu(rep.features),
			 FSD_FEATURES & ~(FARSWAP_FEAT_AUTH | FARSWAP_FEAT_PINNED |
					  FARSWAP_FEAT_KX | FARSWAP_FEAT_KEEP));
	assert_memory_equal(rep.donor_id, "donor-1", 7);
}

static void test_conn_io(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	assert_int_equal(decide(c, FARSWAP_QT_IO, 1, 2, c->a->token, "host-a",
				&dec), FARSWAP_ST_OK);
	assert_ptr_equal(dec.session, c->a);
	assert_int_equal(dec.qid, 1);
	assert_int_equal(fsd_session_attach_io(c->a, 1, 0), 0);
	/* Duplicate qid. */
	assert_int_equal(decide(c, FARSWAP_QT_IO, 1, 2, c->a->token, "host-a",
				&dec), FARSWAP_ST_INVALID);
	assert_non_null(strstr(dec.why, "already"));
	assert_int_equal(fsd_session_attach_io(c->a, 1, 0), -EEXIST);
	/* The other qid is fine. */
	assert_int_equal(decide(c, FARSWAP_QT_IO, 2, 2, c->a->token, "host-a",
				&dec), FARSWAP_ST_OK);
	/* Wrong token. */
	assert_int_equal(decide(c, FARSWAP_QT_IO, 2, 2, c->a->token ^ 1,
				"host-a", &dec), FARSWAP_ST_NO_ENTRY);
	/* Someone else's token. */
	assert_int_equal(decide(c, FARSWAP_QT_IO, 2, 2, c->a->token, "host-b",
				&dec), FARSWAP_ST_DENIED);
	/* nr_io_queues differs from the session's. */
	assert_int_equal(decide(c, FARSWAP_QT_IO, 3, 3, c->a->token, "host-a",
				&dec), FARSWAP_ST_INVALID);
	/* A closing session takes no new queues. */
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "test");
	assert_int_equal(decide(c, FARSWAP_QT_IO, 2, 2, c->a->token, "host-a",
				&dec), FARSWAP_ST_NO_ENTRY);
}

static void test_conn_version(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct farswap_conn_req r;

	farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 1, 0, 64);
	r.ver_min = FARSWAP_VERSION_MAX + 1;
	r.ver_max = FARSWAP_VERSION_MAX + 3;
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_VERSION);
	r.ver_min = 0;
	r.ver_max = 0;
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_VERSION);
	/* A range that includes ours. */
	r.ver_max = 7;
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);
	assert_int_equal(dec.version, FARSWAP_VERSION_MAX);
	/* Garbage. */
	memset(&r, 0xff, sizeof(r));
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_INVALID);
	fsd_conn_decide(&c->d, fake_peer(), NULL, 0, &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_INVALID);
}

static void test_conn_limits(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	c->d.max_hosts = 2;
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 1, 0, "h", &dec),
			 FARSWAP_ST_BUSY);
	c->d.max_hosts = 3;
	c->d.shutting_down = true;
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 1, 0, "h", &dec),
			 FARSWAP_ST_BUSY);
	c->d.shutting_down = false;
	c->f.fail_random = 1;
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 1, 0, "h", &dec),
			 FARSWAP_ST_OK);
	assert_null(fsd_session_new(&c->d, &dec, "x", 0));
}

/* Memory pressure and reclaim. */

static struct fsd_meminfo mem(uint64_t avail)
{
	struct fsd_meminfo mi = { .mem_total = 8192 * MiB,
				  .mem_available = avail };

	return mi;
}

static unsigned int count_sent(struct ctx *c, unsigned int from,
			       unsigned int type, struct fsd_session *to)
{
	unsigned int i, n = 0;

	for (i = from; i < c->f.nr_sent; i++)
		if (c->f.sent[i].hdr.type == type &&
		    (!to || c->f.sent_to[i] == to))
			n++;
	return n;
}

static struct fsd_meminfo calm(struct ctx *c)
{
	return mem(c->d.headroom + c->d.hysteresis + 64 * MiB);
}

/* Answer every RECLAIM_REQ sent since @from with @st, at @now. */
static unsigned int answer_reclaims(struct ctx *c, unsigned int from,
				    unsigned int st, uint64_t now)
{
	unsigned int i, end = c->f.nr_sent, n = 0;

	assert_true(end - from <= FAKE_SENT_MAX);
	for (i = from; i < end; i++) {
		const union farswap_msg *req = &c->f.sent[i % FAKE_SENT_MAX];
		union farswap_msg rep;

		if (req->hdr.type != FARSWAP_MSG_RECLAIM_REQ)
			continue;
		farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
				 le64_to_cpu(req->hdr.cookie));
		rep.reclaim_rep.slab_id = req->reclaim_req.slab_id;
		rep.reclaim_rep.status = cpu_to_le16((uint16_t)st);
		assert_int_equal(fsd_handle_msg(&c->d,
						c->f.sent_to[i % FAKE_SENT_MAX],
						&rep,
						sizeof(rep.reclaim_rep), now),
				 0);
		n++;
	}
	return n;
}

static void test_pressure_releases_free_first(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 2 * SLAB);
	unsigned int before = c->f.nr_sent;

	alloc(c, c->a, SLAB);
	fsd_donor_tick(&c->d, &mi, 2000);
	assert_true(c->d.under_pressure);
	assert_int_equal(c->f.releases, 2);
	assert_int_equal(c->d.pool.nr_released, 2);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL),
			 0);
	/* Under pressure: BUSY. */
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status),
			 FARSWAP_ST_BUSY);
}

static void test_reclaim_flow(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi;
	const union farswap_msg *req;
	union farswap_msg rep;
	struct fsd_slab *slab;
	unsigned int before, i;
	uint32_t id;

	/* A holds 5, B holds 3: the pool is empty. */
	for (i = 0; i < 5; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < 3; i++)
		alloc(c, c->b, SLAB);
	before = c->f.nr_sent;
	mi = mem(c->d.headroom - SLAB / 2);	/* one slab short */
	fsd_donor_tick(&c->d, &mi, 2000);
	assert_true(c->d.under_pressure);
	/* One request, to the host holding the most. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->b), 0);
	req = fake_last(&c->f);
	id = le32_to_cpu(req->reclaim_req.slab_id);
	assert_int_equal(le32_to_cpu(req->reclaim_req.deadline_ms),
			 c->d.reclaim_deadline_ms);
	slab = fsd_pool_get(&c->d.pool, id);
	assert_ptr_equal(slab->owner, c->a);
	assert_true(slab->reclaiming);
	assert_int_equal(c->a->unsolicited, 1);

	/* Next tick, same shortage: the request in flight counts. */
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 3000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL),
			 0);
	/* Nothing is freed before the host says so. */
	assert_int_equal(c->f.releases, 0);
	assert_ptr_equal(slab->owner, c->a);

	/* A reply with the wrong cookie is ignored. */
	farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
			 le64_to_cpu(req->hdr.cookie) + 1);
	rep.reclaim_rep.slab_id = cpu_to_le32(id);
	assert_int_equal(send_msg(c, c->a, &rep), 0);
	assert_true(slab->reclaiming);
	assert_false(c->a->closing);
	/* From the wrong host, too. */
	farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
			 le64_to_cpu(req->hdr.cookie));
	rep.reclaim_rep.slab_id = cpu_to_le32(id);
	assert_int_equal(send_msg(c, c->b, &rep), 0);
	assert_true(slab->reclaiming);

	/* The ack: deregistered and given back to the OS. */
	assert_int_equal(send_msg(c, c->a, &rep), 0);
	assert_int_equal(slab->state, FSD_SLAB_RELEASED);
	assert_int_equal(c->f.releases, 1);
	assert_int_equal(c->a->nr_slabs, 4);
	assert_int_equal(c->a->unsolicited, 0);
	assert_int_equal(c->d.cnt.reclaim_ok, 1);
}

static void test_reclaim_refused_keeps_slab(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 1);
	const union farswap_msg *req;
	union farswap_msg rep;
	struct fsd_slab *slab;
	unsigned int i, st, before;
	static const unsigned int refusals[] = { FARSWAP_ST_NO_SPACE,
						 FARSWAP_ST_NO_ENTRY };

	c->d.lim.revoke_after = 0;	/* test_forced_revoke_* without */

	for (i = 0; i < NR; i++)
		alloc(c, c->a, SLAB);
	for (st = 0; st < 2; st++) {
		before = c->f.nr_sent;
		fsd_donor_tick(&c->d, &mi, 10000 + st * 100000);
		assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ,
					    c->a), 1);
		req = fake_last(&c->f);
		slab = fsd_pool_get(&c->d.pool,
				    le32_to_cpu(req->reclaim_req.slab_id));
		farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
				 le64_to_cpu(req->hdr.cookie));
		rep.reclaim_rep.slab_id = req->reclaim_req.slab_id;
		rep.reclaim_rep.status = cpu_to_le16(refusals[st]);
		assert_int_equal(send_msg(c, c->a, &rep), 0);
		/* Kept, registered, still the host's. */
		assert_int_equal(slab->state, FSD_SLAB_HELD);
		assert_ptr_equal(slab->owner, c->a);
		assert_non_null(slab->mr);
		assert_false(slab->reclaiming);
		assert_int_equal(c->f.releases, 0);
	}
	assert_int_equal(c->d.cnt.reclaim_refused, 2);
}

static void test_deadline_logs_never_drops(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 1);

	alloc(c, c->a, SLAB);
	c->d.reclaim_deadline_ms = 500;
	c->d.lim.revoke_after = 0;	/* never: as before forced revoke */
	/* Free slabs go first: use them all up. */
	while (c->d.pool.nr_free)
		alloc(c, c->b, SLAB);
	fsd_donor_tick(&c->d, &mi, 1000);
	assert_int_equal(c->d.pool.nr_reclaiming, 1);
	fsd_donor_tick(&c->d, &mi, 1400);
	assert_int_equal(c->d.cnt.reclaim_late, 0);
	fsd_donor_tick(&c->d, &mi, 1600);
	assert_int_equal(c->d.cnt.reclaim_late, 1);
	fsd_donor_tick(&c->d, &mi, 99999);
	assert_int_equal(c->d.cnt.reclaim_late, 1);	/* once */
	assert_int_equal(c->d.pool.nr_held, NR);	/* nothing dropped */
	assert_int_equal(c->f.releases, 0);
	assert_int_equal(c->f.revokes, 0);
}

/* @s takes every free slab of @d. */
static void hold_all(struct fsd_donor *d, struct fsd_session *s)
{
	while (d->pool.nr_free) {
		union farswap_msg m;

		farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 1);
		m.alloc_req.slab_size = cpu_to_le64(SLAB);
		assert_int_equal(fsd_handle_msg(d, s, &m, 48, 0), 0);
	}
}

static void test_outstanding_limit(void **state)
{
	struct fsd_meminfo mi;
	struct fsd_session *s;
	struct fake f;
	struct fsd_donor big;
	unsigned int before;

	(void)state;
	/* 40 slabs held by one host, 40 slabs short. */
	assert_int_equal(fake_donor_init(&big, &f, 40, SLAB), 0);
	s = fake_session(&big, "host-z", 1);
	big.lim.revoke_after = 0;	/* slabs kept however long it takes */
	hold_all(&big, s);
	mi = mem(big.headroom - 40 * SLAB);
	before = f.nr_sent;
	fsd_donor_tick(&big, &mi, 1000);
	/* One short of the budget: a stats notice must always fit. */
	assert_int_equal(f.nr_sent - before, FSD_RECLAIMS_MAX);
	assert_int_equal(s->unsolicited, FSD_UNSOLICITED_MAX - 1);
	before = f.nr_sent;
	fsd_donor_tick(&big, &mi, 2000);
	assert_int_equal(f.nr_sent, before);
	/* The host goes quiet: the keepalive probe takes the last place. */
	big.keepalive_ms = 15000;
	fsd_donor_keepalive(&big, 1000 + 15000);
	assert_int_equal(f.nr_sent - before, 1);
	assert_int_equal(fake_last(&f)->hdr.type, FARSWAP_MSG_STATS_REP);
	assert_int_equal(s->unsolicited, FSD_UNSOLICITED_MAX);
	/* Nothing more, neither reclaims nor probes, until answers come. */
	fsd_donor_tick(&big, &mi, 40000);
	fsd_donor_keepalive(&big, 90000);
	assert_int_equal(f.nr_sent - before, 1);
	fsd_notice_sent(&big, s, 90001);
	fsd_donor_tick(&big, &mi, 90002);
	assert_int_equal(f.nr_sent - before, 1);	/* reclaims stay at 15 */
	assert_int_equal(s->nr_reclaiming, FSD_RECLAIMS_MAX);
	fake_donor_exit(&big);
}

/*
 * A revoke of 40 slabs at once: the notices go out within the
 * unsolicited budget, the rest wait for the host's transport to take
 * the first ones, and the session (every other slab of it) lives.
 */
static void test_revoke_within_budget(void **state)
{
	struct fsd_meminfo mi;
	struct fsd_session *s;
	struct fake f;
	struct fsd_donor big;
	unsigned int before, told = 0, i, round, sent, waiting;
	uint64_t t;

	(void)state;
	assert_int_equal(fake_donor_init(&big, &f, 40, SLAB), 0);
	s = fake_session(&big, "host-z", 1);
	big.lim.revoke_after = 1;
	big.reclaim_deadline_ms = 10000;
	hold_all(&big, s);
	mi = mem(big.headroom - 40 * SLAB);
	fsd_donor_tick(&big, &mi, 1000);
	assert_int_equal(s->nr_reclaiming, FSD_RECLAIMS_MAX);
	/*
	 * Ignored: every tick revokes what is overdue and asks for more,
	 * never past the budget, until the transport takes what was sent.
	 */
	for (t = 11000, round = 0; told < 40 && round < 20; round++) {
		before = f.nr_sent;
		fsd_donor_tick(&big, &mi, t);
		assert_false(s->closing);
		assert_true(s->unsolicited <= FSD_UNSOLICITED_MAX - 1);
		assert_true(fsd_session_asking(s) <= FSD_RECLAIMS_MAX);
		for (i = before, sent = 0; i < f.nr_sent; i++) {
			if (f.sent[i % FAKE_SENT_MAX].hdr.type !=
			    FARSWAP_MSG_SLAB_REVOKE)
				continue;
			assert_int_equal(f.sent_flags[i % FAKE_SENT_MAX],
					 FSD_SEND_REVOKE);
			sent++;
		}
		/*
		 * In the host's receive queue now: this tick's notices and
		 * the requests it has not answered (it answers none).
		 */
		for (i = 0, waiting = sent; i < big.pool.nr_slabs; i++)
			waiting += big.pool.slabs[i].reclaiming;
		assert_true(waiting <= FSD_RECLAIMS_MAX);
		told += sent;
		/* A tick later, the host's transport has taken them. */
		while (s->revokes_in_flight)
			fsd_revoke_sent(&big, s);
		t += 10000;
	}
	assert_int_equal(told, 40);
	assert_int_equal(big.cnt.revoke_notices, 40);
	assert_false(s->closing);
	fake_donor_exit(&big);
}

static void test_recovery_repopulates_and_offers(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 3 * SLAB);
	unsigned int before, i;

	c->a->features &= ~FARSWAP_FEAT_STATS_PUSH;	/* A does not want them */
	fsd_donor_tick(&c->d, &mi, 1000);
	assert_int_equal(c->d.pool.nr_released, 3);
	/* In the band: still under, nothing taken back. */
	mi = mem(c->d.headroom + c->d.hysteresis / 2);
	fsd_donor_tick(&c->d, &mi, 2000);
	assert_true(c->d.under_pressure);
	assert_int_equal(c->d.pool.nr_released, 3);
	/* Plenty: over, two slabs' worth above the band. */
	before = c->f.nr_sent;
	mi = mem(c->d.headroom + c->d.hysteresis + 2 * SLAB + 1);
	fsd_donor_tick(&c->d, &mi, 3000);
	assert_false(c->d.under_pressure);
	assert_int_equal(c->f.populates, 2);
	assert_int_equal(c->d.pool.nr_released, 1);
	/* An unsolicited STATS_REP, cookie 0, to B only. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 0);
	for (i = before; i < c->f.nr_sent; i++) {
		assert_int_equal(c->f.sent[i].hdr.cookie, 0);
		assert_int_equal(c->f.sent_flags[i], FSD_SEND_NOTICE);
		assert_int_equal(le32_to_cpu(c->f.sent[i].stats_rep.slabs_free),
				 NR - 1);
	}
	assert_true(c->b->notice_in_flight);
	assert_int_equal(c->b->unsolicited, 1);
	fsd_notice_sent(&c->d, c->b, 3500);
	assert_int_equal(c->b->unsolicited, 0);
	/* Taking back can fail: retried later, nothing breaks. */
	c->f.fail_populate = 1;
	mi = mem(c->d.headroom + c->d.hysteresis + 9 * SLAB);
	fsd_donor_tick(&c->d, &mi, 4000);
	assert_int_equal(c->d.pool.nr_released, 1);
	c->f.fail_populate = 0;
	fsd_donor_tick(&c->d, &mi, 5000);
	assert_int_equal(c->d.pool.nr_released, 0);
}

static void test_host_without_reclaim_feature(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 1);
	unsigned int before, i;

	c->a->features &= ~FARSWAP_FEAT_RECLAIM;
	for (i = 0; i < 6; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < 2; i++)
		alloc(c, c->b, SLAB);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 0);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->b), 1);
}

static void test_teardown_frees_everything(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 1);
	unsigned int i;

	for (i = 0; i < 5; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < 3; i++)
		alloc(c, c->b, SLAB);
	fsd_donor_tick(&c->d, &mi, 1000);	/* a reclaim in flight to A */
	assert_int_equal(c->d.pool.nr_reclaiming, 1);
	assert_int_equal(c->a->nr_reclaiming, 1);
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "gone");
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(c->d.pool.nr_held, 3);
	assert_int_equal(c->d.pool.nr_free, 5);
	assert_int_equal(c->d.pool.nr_reclaiming, 0);
	assert_int_equal(c->f.revokes, 5);
	assert_int_equal(c->d.nr_sessions, 1);
}

static void test_freed_slabs_zeroed_in_background(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(8000 * MiB);
	uint32_t i;

	for (i = 0; i < 3; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < 3; i++)
		free_slab(c, c->a, i);
	assert_true(c->d.pool.slabs[0].dirty);
	fsd_donor_tick(&c->d, &mi, 1000);
	/* 3 slabs of 4 MiB fit one check's budget. */
	assert_int_equal(c->f.zeroed, 3 * SLAB);
	for (i = 0; i < NR; i++)
		assert_false(c->d.pool.slabs[i].dirty);
	fsd_donor_tick(&c->d, &mi, 2000);
	assert_int_equal(c->f.zeroed, 3 * SLAB);	/* nothing twice */
}

static void test_same_host_probes_old_session(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	unsigned int before = c->f.nr_sent;

	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-a", &dec),
			 FARSWAP_ST_OK);
	fsd_probe_host(&c->d, dec.req.host_id, NULL, 1000);
	/* One notice, to the old session of host-a only; nothing closed. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
	assert_int_equal(c->f.nr_sent - before, 1);
	assert_int_equal(c->f.sent_flags[before], FSD_SEND_NOTICE);
	assert_false(c->a->closing);
	assert_true(c->a->notice_in_flight);
	/* Not twice while the first is in flight. */
	fsd_probe_host(&c->d, dec.req.host_id, NULL, 1000);
	assert_int_equal(c->f.nr_sent - before, 1);
	/* Another host's id probes nobody. */
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-z", &dec),
			 FARSWAP_ST_OK);
	fsd_probe_host(&c->d, dec.req.host_id, NULL, 1000);
	assert_int_equal(c->f.nr_sent - before, 1);
}

/* Log lines at warning and above, captured by the keepalive tests. */
static char logged[8][512];
static unsigned int nr_logged;

static void capture(int level, const char *line)
{
	(void)level;
	if (nr_logged < 8)
		snprintf(logged[nr_logged], sizeof(logged[0]), "%s", line);
	nr_logged++;
}

static unsigned int count_logged(const char *what)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr_logged && i < 8; i++)
		if (strstr(logged[i], what))
			n++;
	return n;
}

static void test_keepalive_probes_idle_sessions(void **state)
{
	struct ctx *c = *state;
	unsigned int before = c->f.nr_sent, i;
	union farswap_msg m;

	c->d.keepalive_ms = 15000;
	/* Both sessions came up at 0; A talks at 10 s, B stays quiet. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 7);
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 16, 10000), 0);
	before = c->f.nr_sent;
	fsd_donor_keepalive(&c->d, 14999);
	assert_int_equal(c->f.nr_sent, before);
	fsd_donor_keepalive(&c->d, 15000);
	/* B only: an unsolicited STATS_REP, cookie 0, reporting completion. */
	assert_int_equal(c->f.nr_sent - before, 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	i = before % FAKE_SENT_MAX;
	assert_int_equal(c->f.sent[i].hdr.cookie, 0);
	assert_int_equal(c->f.sent_flags[i], FSD_SEND_NOTICE);
	assert_true(c->b->notice_in_flight);
	assert_int_equal(c->b->notice_kind, FSD_NOTICE_KEEPALIVE);
	assert_int_equal(c->b->unsolicited, 1);
	assert_int_equal(c->d.cnt.keepalives, 1);
	assert_int_equal(c->d.cnt.notices, 0);
	/* A slow ACK: no second probe, however long it takes. */
	fsd_donor_keepalive(&c->d, 24000);
	fsd_donor_keepalive(&c->d, 200000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	assert_false(c->b->closing);
	/* A, quiet since 10 s, was probed by the call at 200 s. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
	/* B's transport acks: alive, idle again from now. */
	fsd_notice_sent(&c->d, c->b, 200100);
	assert_false(c->b->notice_in_flight);
	assert_int_equal(c->b->unsolicited, 0);
	before = c->f.nr_sent;
	fsd_donor_keepalive(&c->d, 215099);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 0);
	fsd_donor_keepalive(&c->d, 215100);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	assert_false(c->a->closing);
	assert_false(c->b->closing);
}

static void test_keepalive_activity_counts(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 1);
	unsigned int before, i;

	c->d.keepalive_ms = 15000;
	c->b->features &= ~FARSWAP_FEAT_STATS_PUSH;	/* B takes none */
	/* A takes every slab at 1 s: traffic, not idle. */
	for (i = 0; i < NR; i++)
		alloc(c, c->a, SLAB);
	before = c->f.nr_sent;
	fsd_donor_keepalive(&c->d, 15999);
	assert_int_equal(c->f.nr_sent, before);
	/* A reclaim request sent at 12 s is traffic too. */
	fsd_donor_tick(&c->d, &mi, 12000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a),
			 1);
	fsd_donor_keepalive(&c->d, 26999);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 0);
	fsd_donor_keepalive(&c->d, 27000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
	assert_int_equal(c->a->unsolicited, 2);	/* the reclaim + the probe */
	/* B never: no unsolicited STATS_REP without FARSWAP_FEAT_STATS_PUSH. */
	fsd_donor_keepalive(&c->d, 10000000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 0);
	assert_int_equal(c->d.cnt.keepalives, 1);
}

static void test_offer_waits_for_probe(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 2 * SLAB);
	unsigned int before;

	c->d.keepalive_ms = 15000;
	fsd_donor_tick(&c->d, &mi, 1000);	/* pressure: 2 free released */
	assert_true(c->d.under_pressure);
	fsd_donor_keepalive(&c->d, 16000);	/* probes (0 slabs free) */
	assert_true(c->a->notice_in_flight);
	assert_int_equal(le32_to_cpu(fake_last(&c->f)->stats_rep.slabs_free),
			 0);
	/* Pressure ends while A's probe is in flight (B's completed). */
	fsd_notice_sent(&c->d, c->b, 16500);
	before = c->f.nr_sent;
	mi = mem(c->d.headroom + c->d.hysteresis + 3 * SLAB);
	fsd_donor_tick(&c->d, &mi, 17000);
	assert_false(c->d.under_pressure);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 0);
	/* A's offer follows as soon as the probe completes. */
	fsd_notice_sent(&c->d, c->a, 17100);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
	assert_int_equal(c->a->notice_kind, FSD_NOTICE_OFFER);
	assert_int_equal(le32_to_cpu(fake_last(&c->f)->stats_rep.slabs_free),
			 NR);
	assert_int_equal(c->d.cnt.notices, 2);
	fsd_notice_sent(&c->d, c->a, 17200);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
}

static void test_keepalive_off_and_not_up(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;
	unsigned int before = c->f.nr_sent;

	c->d.keepalive_ms = 0;
	fsd_donor_keepalive(&c->d, 10000000);
	assert_int_equal(c->f.nr_sent, before);
	/* A session whose control QP is not established yet, or closing. */
	c->d.keepalive_ms = 1000;
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-c", &dec),
			 FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.3:7000", 0);
	assert_non_null(s);
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "going");
	fsd_notice_sent(&c->d, c->b, 10000000);	/* (nothing in flight) */
	c->b->last_active = 10000000;
	fsd_donor_keepalive(&c->d, 10000000);
	assert_int_equal(c->f.nr_sent, before);
}

static void test_keepalive_dead_host_freed(void **state)
{
	struct ctx *c = *state;
	unsigned int i;

	c->d.keepalive_ms = 15000;
	for (i = 0; i < 3; i++)
		alloc(c, c->a, SLAB);
	alloc(c, c->b, SLAB);
	fsd_donor_keepalive(&c->d, 20000);
	assert_true(c->a->notice_in_flight);
	/* 15 s of retries later the probe's send fails. */
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_WARN);
	fsd_log_set_hook(capture);
	fsd_send_failed(&c->d, c->a, true, "transport retry counter exceeded",
			35100);
	/* The flushed sends behind it change nothing, say nothing. */
	fsd_send_failed(&c->d, c->a, false, "Work Request Flushed Error",
			35100);
	fsd_send_failed(&c->d, c->a, true, "Work Request Flushed Error",
			35100);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_true(c->a->closing);
	assert_int_equal(c->f.closes, 1);
	assert_int_equal(c->d.cnt.keepalive_dead, 1);
	/* Logged once, with the host's id and address and what it costs. */
	assert_int_equal(nr_logged, 1);
	assert_int_equal(count_logged("host 1 (host-a, 10.0.0.1:5000): closing session: keepalive: no answer to the probe sent after 19.0 s idle, 15.1 s ago (transport retry counter exceeded); host presumed gone, freeing its 3 slabs"),
			 1);
	/* The event loop reaps it: its slabs go back to the pool. */
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(c->d.pool.nr_free, NR - 1);
	assert_int_equal(c->d.pool.nr_held, 1);
	assert_int_equal(c->f.revokes, 3);
	assert_false(c->b->closing);
}

static void test_send_failure_kinds(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	/* A reply that fails: the session ends, not counted as a dead probe. */
	fsd_send_failed(&c->d, c->a, false, "transport retry counter exceeded",
			5000);
	assert_true(c->a->closing);
	assert_int_equal(c->d.cnt.keepalive_dead, 0);
	/* The old session of a host that connected again does not answer. */
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-b", &dec),
			 FARSWAP_ST_OK);
	fsd_probe_host(&c->d, dec.req.host_id, NULL, 6000);
	assert_int_equal(c->b->notice_kind, FSD_NOTICE_REPROBE);
	assert_int_equal(c->d.cnt.notices, 1);
	fsd_send_failed(&c->d, c->b, true, "transport retry counter exceeded",
			21000);
	assert_true(c->b->closing);
	assert_int_equal(c->b->unsolicited, 0);
	assert_int_equal(c->d.cnt.keepalive_dead, 0);
}

static void test_stats_text(void **state)
{
	struct ctx *c = *state;
	char buf[4096];

	alloc(c, c->a, SLAB);
	alloc(c, c->a, SLAB);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "slabs_total 8\n"));
	assert_non_null(strstr(buf, "slabs_free 6\n"));
	assert_non_null(strstr(buf, "slabs_used 2\n"));
	assert_non_null(strstr(buf, "hosts 2\n"));
	assert_non_null(strstr(buf, "id host-a peer 10.0.0.1:5000 slabs 2 bytes 8388608"));
	assert_non_null(strstr(buf, "id host-b peer 10.0.0.1:5000 slabs 0 bytes 0"));
	assert_int_equal(fsd_donor_stats(&c->d, buf, 64), -ENOSPC);
}

/* Limits on who may connect and how much one host may take. */

static int decide_from(struct ctx *c, const char *addr, unsigned int qtype,
		       uint64_t token, const char *host,
		       struct fsd_conn_decision *dec)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct farswap_conn_req r;
	struct fsd_addr a;

	if (strchr(addr, ':')) {
		assert_int_equal(inet_pton(AF_INET6, addr, &in6.sin6_addr), 1);
		assert_int_equal(fsd_addr_from_sockaddr(&in6, &a), 0);
	} else {
		assert_int_equal(inet_pton(AF_INET, addr, &in.sin_addr), 1);
		assert_int_equal(fsd_addr_from_sockaddr(&in, &a), 0);
	}
	farswap_conn_req_init(&r, qtype, qtype == FARSWAP_QT_IO ? 1 : 0, 2,
			      token, 64);
	strncpy((char *)r.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, &a, &r, sizeof(r), dec, 0);
	return dec->status;
}

static void set_acl(struct ctx *c, const char *list)
{
	char err[128];

	assert_int_equal(fsd_access_parse(list, &c->d.lim.acl, err,
					  sizeof(err)), 0);
}

static void test_allowed_hosts(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	/* Empty: anyone. */
	assert_int_equal(decide_from(c, "192.0.2.7", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	set_acl(c, "10.0.0.0/24, 2001:db8::/32");
	assert_int_equal(decide_from(c, "192.0.2.7", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_DENIED);
	assert_int_equal(dec.refusal, FSD_REFUSED_NOT_ALLOWED);
	assert_string_equal(dec.detail, "address 192.0.2.7 not in allowed-hosts");
	assert_int_equal(decide_from(c, "10.0.0.200", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	/* IPv4-mapped IPv6 (a listener on ::) matches the IPv4 rule. */
	assert_int_equal(decide_from(c, "::ffff:10.0.0.3", FARSWAP_QT_CTRL, 0,
				     "h", &dec), FARSWAP_ST_OK);
	assert_int_equal(decide_from(c, "::ffff:10.0.1.3", FARSWAP_QT_CTRL, 0,
				     "h", &dec), FARSWAP_ST_DENIED);
	assert_int_equal(decide_from(c, "2001:db8::9", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	/* Refused before the request is even parsed. */
	{
		struct fsd_addr a = { 0 };

		fsd_conn_decide(&c->d, &a, NULL, 0, &dec, 0);
		assert_int_equal(dec.status, FARSWAP_ST_DENIED);
	}
	/* An I/O queue from outside is refused too, token or not. */
	assert_int_equal(decide_from(c, "192.0.2.7", FARSWAP_QT_IO,
				     c->a->token, "host-a", &dec),
			 FARSWAP_ST_DENIED);
	/* Identities: both kinds must match. */
	set_acl(c, "10.0.0.0/8 name:host-a");
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0,
				     "host-a", &dec), FARSWAP_ST_OK);
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0,
				     "host-z", &dec), FARSWAP_ST_DENIED);
	assert_string_equal(dec.detail, "host_id host-z not in allowed-hosts");
	assert_int_equal(decide_from(c, "11.0.0.1", FARSWAP_QT_CTRL, 0,
				     "host-a", &dec), FARSWAP_ST_DENIED);
}

static void test_refusals_logged_and_counted(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	char buf[4096];
	int i;

	set_acl(c, "10.0.0.0/24");
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_NOTICE);
	fsd_log_set_hook(capture);
	decide_from(c, "192.0.2.7", FARSWAP_QT_CTRL, 0, "h", &dec);
	fsd_conn_refused(&c->d, &dec, "192.0.2.7:4000", 1000);
	assert_int_equal(nr_logged, 1);
	assert_string_equal(logged[0],
			    "connect from 192.0.2.7:4000 rejected: address 192.0.2.7 not in allowed-hosts (denied: another host's, or a host the donor does not allow)");
	/* A host retrying in a loop: a burst of lines, then silence. */
	for (i = 0; i < 100; i++)
		fsd_conn_refused(&c->d, &dec, "192.0.2.7:4000", 1500);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST);
	/* Later, one line says how many went unlogged. */
	fsd_conn_refused(&c->d, &dec, "192.0.2.7:4000",
			 1000 + FSD_CONNECT_LOG_MS);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST + 2);
	assert_string_equal(logged[FSD_CONNECT_LOG_BURST],
			    "96 more refused connects suppressed");
	assert_int_equal(c->d.cnt.rejects, 102);
	assert_int_equal(c->d.cnt.refused[FSD_REFUSED_NOT_ALLOWED], 102);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, " rejects=102 "));
	assert_non_null(strstr(buf, " refused_not_allowed=102 "));
}

static void test_sessions_per_address(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	/* A and B come from 10.0.0.1 already. */
	c->d.lim.max_sessions_per_address = 3;
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:6000", 0);
	assert_non_null(s);
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_BUSY);
	assert_int_equal(dec.refusal, FSD_REFUSED_PER_ADDRESS);
	/* The same address written as IPv4-mapped IPv6 is the same. */
	assert_int_equal(decide_from(c, "::ffff:10.0.0.1", FARSWAP_QT_CTRL, 0,
				     "h", &dec), FARSWAP_ST_BUSY);
	/* Another address is not affected. */
	assert_int_equal(decide_from(c, "10.0.0.2", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	/* A closing session does not count. */
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "gone");
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
	/* 0: no limit. */
	c->d.lim.max_sessions_per_address = 0;
	c->d.lim.max_sessions_per_address = 2;
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_BUSY);
	c->d.lim.max_sessions_per_address = 0;
	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_CTRL, 0, "h",
				     &dec), FARSWAP_ST_OK);
}

static void test_features_required(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct farswap_conn_req r;
	uint32_t f;

	for (f = 0; f < 4; f++) {
		farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 1, 0, 64);
		r.features = cpu_to_le32(f);
		fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
		assert_int_equal(dec.status, f == FSD_FEATURES_REQUIRED ?
					     FARSWAP_ST_OK : FARSWAP_ST_INVALID);
		if (f != FSD_FEATURES_REQUIRED) {
			assert_int_equal(dec.refusal, FSD_REFUSED_FEATURES);
			assert_non_null(strstr(dec.detail, "keepalive"));
		}
	}
}

static void test_queue_depth_clamped(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct farswap_conn_req r;
	struct fsd_session *s;

	c->d.lim.max_queue_depth = 256;
	farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 1, 0, 100000);
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);	/* cut, not refused */
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:1", 0);
	assert_non_null(s);
	assert_int_equal(s->queue_depth, 256);
	assert_int_equal(c->d.cnt.depth_clamped, 1);
	farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 1, 0, 200);
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), &dec, 0);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:2", 0);
	assert_int_equal(s->queue_depth, 200);
	assert_int_equal(c->d.cnt.depth_clamped, 1);
}

static void test_io_from_another_address(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	assert_int_equal(decide_from(c, "10.0.0.1", FARSWAP_QT_IO, c->a->token,
				     "host-a", &dec), FARSWAP_ST_OK);
	assert_int_equal(decide_from(c, "::ffff:10.0.0.1", FARSWAP_QT_IO,
				     c->a->token, "host-a", &dec),
			 FARSWAP_ST_OK);
	assert_int_equal(decide_from(c, "10.0.0.66", FARSWAP_QT_IO,
				     c->a->token, "host-a", &dec),
			 FARSWAP_ST_DENIED);
	assert_non_null(strstr(dec.why, "another address"));
}

static void test_handshake_timeout(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	c->d.lim.handshake_timeout_ms = 5000;
	/* A control QP accepted at 1 s that never comes up. */
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-c", &dec),
			 FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:9", 1000);
	fsd_donor_handshakes(&c->d, 5999);
	assert_false(s->closing);
	fsd_donor_handshakes(&c->d, 6000);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.handshake_timeouts, 1);
	/* An I/O queue accepted at 10 s, established: fine. */
	assert_int_equal(fsd_session_attach_io(c->a, 1, 10000), 0);
	fsd_session_io_established(c->a, 1);
	/* Another accepted at 12 s that never is. */
	assert_int_equal(fsd_session_attach_io(c->a, 2, 12000), 0);
	fsd_donor_handshakes(&c->d, 16999);
	assert_false(c->a->closing);
	fsd_donor_handshakes(&c->d, 17000);
	assert_true(c->a->closing);
	assert_int_equal(c->d.cnt.handshake_timeouts, 2);
	/* Established sessions are left alone however old (B). */
	fsd_donor_handshakes(&c->d, 10000000);
	assert_false(c->b->closing);
	/* 0: no limit. */
	c->d.lim.handshake_timeout_ms = 0;
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-d", &dec),
			 FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:10", 0);
	fsd_donor_handshakes(&c->d, 10000000);
	assert_false(s->closing);
}

static void test_reload_closes_no_longer_allowed(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	assert_int_equal(decide_from(c, "10.0.9.9", FARSWAP_QT_CTRL, 0,
				     "host-c", &dec), FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.9.9:1", 0);
	fsd_session_established(&c->d, s, 0);
	set_acl(c, "10.0.0.0/24");
	fsd_donor_recheck_access(&c->d);
	assert_false(c->a->closing);
	assert_false(c->b->closing);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.closed_not_allowed, 1);
	set_acl(c, "10.0.0.0/24 name:host-a");
	fsd_donor_recheck_access(&c->d);
	assert_false(c->a->closing);
	assert_true(c->b->closing);
}

static void test_slab_cap_per_host(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;
	struct fsd_session *a2;
	union farswap_msg m;

	c->d.lim.max_slabs_per_host = 3;
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status), 0);
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status), 0);
	/* The last one of its share: nothing more is offered to it. */
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(le32_to_cpu(r->slabs_free), 0);
	r = alloc(c, c->a, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 1);
	assert_int_equal(c->a->nr_slabs, 3);
	/* Its stats say the same; another host's do not. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 5);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	assert_int_equal(le32_to_cpu(fake_last(&c->f)->stats_rep.slabs_free),
			 0);
	assert_int_equal(send_msg(c, c->b, &m), 0);
	assert_int_equal(le32_to_cpu(fake_last(&c->f)->stats_rep.slabs_free),
			 NR - 3);
	assert_int_equal(le16_to_cpu(alloc(c, c->b, SLAB)->status), 0);
	/* A second session of the same host shares the cap. */
	a2 = fake_session(&c->d, "host-a", 1);
	assert_non_null(a2);
	assert_int_equal(le16_to_cpu(alloc(c, a2, SLAB)->status),
			 FARSWAP_ST_NO_SPACE);
	/* Freeing one makes room. */
	free_slab(c, c->a, 0);
	assert_int_equal(le16_to_cpu(alloc(c, a2, SLAB)->status), 0);
}

/* A grant's status, its slab id kept in @id when granted. */
static unsigned int alloc_id(struct ctx *c, struct fsd_session *s,
			     uint32_t *id)
{
	const struct farswap_slab_alloc_rep *r = alloc(c, s, SLAB);

	*id = le32_to_cpu(r->slab_id);
	return le16_to_cpu(r->status);
}

/*
 * max-slabs-per-host fair (the default): a host alone takes the whole
 * pool; once another is present each may hold its share, rounded up, and
 * what a host held beyond it is kept, never taken; a host's second
 * session is the same host, not one more.
 */
static void test_slab_cap_fair(void **state)
{
	struct ctx *c = *state;
	uint32_t a_ids[NR], id, b_last;
	struct fsd_session *a2;
	int i;

	c->d.lim.max_slabs_fair = true;
	/* B's session is not up yet: A alone, its share is all 8. */
	c->b->established = false;
	for (i = 0; i < 6; i++)
		assert_int_equal(alloc_id(c, c->a, &a_ids[i]), FARSWAP_ST_OK);
	/* B comes up: 4 each.  A keeps its 6 and gets no more. */
	fsd_session_established(&c->d, c->b, 0);
	assert_int_equal(alloc_id(c, c->a, &id), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 1);
	assert_int_equal(c->a->nr_slabs, 6);
	/* B takes what is free; then the pool is empty (not a cap). */
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 1);
	/* A gives three back: B grows to its share, 4, and stops there. */
	for (i = 0; i < 3; i++)
		free_slab(c, c->a, a_ids[i]);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &b_last), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 2);
	assert_int_equal(c->b->nr_slabs, 4);
	/*
	 * A's second session is the same host, not a third: with A at 2,
	 * its share over both sessions is still 4 (a third host would
	 * make it 3).
	 */
	free_slab(c, c->a, a_ids[3]);
	a2 = fake_session(&c->d, "host-a", 1);
	assert_non_null(a2);
	assert_int_equal(alloc_id(c, a2, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, a2, &id), FARSWAP_ST_OK);
	free_slab(c, c->b, b_last);	/* room: a refusal now is the cap */
	assert_int_equal(alloc_id(c, a2, &id), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 3);
	/* A no longer present (a reload disallowed it): B alone again. */
	c->a->disallowed = true;
	a2->disallowed = true;
	free_slab(c, c->a, a_ids[4]);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(c->b->nr_slabs, 5);
}

/*
 * max-slabs-per-host fair: A takes the whole pool while alone; then B's
 * session comes up, and the share is 4 each.
 */
static void fill_then_newcomer(struct ctx *c)
{
	uint32_t id;
	unsigned int i;

	c->d.lim.max_slabs_fair = true;
	c->b->established = false;
	for (i = 0; i < NR; i++)
		assert_int_equal(alloc_id(c, c->a, &id), FARSWAP_ST_OK);
	fsd_session_established(&c->d, c->b, 0);
}

/*
 * max-slabs-per-host fair: a host refused for want of a free slab while
 * under its share has the hosts over theirs asked for the excess (a
 * reclaim, never a revoke); once it is given back the hosts are told,
 * and the newcomer takes its share.
 */
static void test_fair_share_asked_back(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	unsigned int before, i;
	uint32_t id;

	fill_then_newcomer(c);
	/* Nothing waits yet: nothing is asked. */
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 0);

	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1100);
	/* A holds 8 of 8, its share is 4: four asked back, of A alone. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 4);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->b), 0);
	assert_int_equal(c->d.cnt.fair_reclaims, 4);
	/* The requests in flight count: the next tick asks no more. */
	fsd_donor_tick(&c->d, &mi, 1200);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 4);

	/* A moves four chunks elsewhere and gives the slabs back. */
	assert_int_equal(answer_reclaims(c, before, FARSWAP_ST_OK, 1250), 4);
	assert_int_equal(c->a->nr_slabs, 4);
	assert_int_equal(c->d.pool.nr_free, 4);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1300);
	/* Room: the hosts are told, B of 4 free (its share), A of none. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	for (i = before; i < c->f.nr_sent; i++)
		if (c->f.sent[i].hdr.type == FARSWAP_MSG_STATS_REP)
			assert_int_equal(le32_to_cpu(c->f.sent[i].stats_rep.slabs_free),
					 c->f.sent_to[i] == c->b ? 4 : 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.revoked, 0);
	/* B at its share, refused: nothing more is asked of A. */
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1400);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 0);
}

/* A host that refuses keeps its slabs; the wait ends, and so do the asks. */
static void test_fair_share_refused_and_over(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	unsigned int before;
	uint32_t id;

	fill_then_newcomer(c);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1100);
	assert_int_equal(answer_reclaims(c, before, FARSWAP_ST_NO_SPACE, 1150), 4);
	assert_int_equal(c->a->nr_slabs, NR);
	assert_int_equal(c->d.cnt.reclaim_refused, 4);
	/* A host that refused is left alone for a reclaim deadline. */
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1200);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 0);
	/* Past the wait (B did not ask again): nothing more is asked. */
	fsd_donor_tick(&c->d, &mi, 1000 + 2ull * c->d.reclaim_deadline_ms + 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 0);
	assert_int_equal(c->d.cnt.fair_reclaims, 4);
	assert_int_equal(c->d.cnt.revoked, 0);
}

/* A fixed cap is a cap, not a share: nothing is asked back. */
static void test_fixed_cap_asks_nothing(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	unsigned int before, i;
	uint32_t id;

	c->d.lim.max_slabs_fair = false;
	c->d.lim.max_slabs_per_host = NR;
	for (i = 0; i < NR; i++)
		assert_int_equal(alloc_id(c, c->a, &id), FARSWAP_ST_OK);
	assert_int_equal(alloc_id(c, c->b, &id), FARSWAP_ST_NO_SPACE);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 1100);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 0);
	assert_int_equal(c->d.cnt.fair_reclaims, 0);
}

static void test_alloc_rate(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	int i, ok = 0, busy = 0;

	c->d.lim.alloc_rate = 2;
	c->d.lim.alloc_burst = 3;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 1);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	for (i = 0; i < 6; i++) {
		assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 48, 1000), 0);
		if (fake_last(&c->f)->alloc_rep.status == 0)
			ok++;
		else if (le16_to_cpu(fake_last(&c->f)->alloc_rep.status) ==
			 FARSWAP_ST_BUSY)
			busy++;
	}
	assert_int_equal(ok, 3);
	assert_int_equal(busy, 3);
	assert_int_equal(c->d.cnt.alloc_rate_limited, 3);
	/* Per host: B is not slowed by A. */
	assert_int_equal(fsd_handle_msg(&c->d, c->b, &m, 48, 1000), 0);
	assert_int_equal(fake_last(&c->f)->alloc_rep.status, 0);
	/* Half a second later A has one token again. */
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 48, 1500), 0);
	assert_int_equal(fake_last(&c->f)->alloc_rep.status, 0);
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 48, 1500), 0);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->alloc_rep.status),
			 FARSWAP_ST_BUSY);
	/* Refusals for other reasons cost no token. */
	c->d.under_pressure = true;
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 48, 2000), 0);
	c->d.under_pressure = false;
	assert_int_equal(fsd_handle_msg(&c->d, c->a, &m, 48, 2000), 0);
	assert_int_equal(fake_last(&c->f)->alloc_rep.status, 0);
}

/* Forced revoke. */

static void hold_everything(struct ctx *c)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		alloc(c, c->a, SLAB);
	for (i = 0; i < 3; i++)
		alloc(c, c->b, SLAB);
}

/* Hosts that do not take SLAB_REVOKE lose a revoked slab at once. */
static void no_revoke_notices(struct ctx *c)
{
	c->a->features &= ~FARSWAP_FEAT_REVOKE;
	c->b->features &= ~FARSWAP_FEAT_REVOKE;
}

static void test_forced_revoke_ignored(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - SLAB / 2);
	const union farswap_msg *req;
	union farswap_msg rep;
	struct fsd_slab *slab;
	unsigned int held;

	no_revoke_notices(c);
	hold_everything(c);
	c->d.reclaim_deadline_ms = 10000;
	fsd_donor_tick(&c->d, &mi, 1000);
	req = fake_last(&c->f);
	assert_int_equal(req->hdr.type, FARSWAP_MSG_RECLAIM_REQ);
	slab = fsd_pool_get(&c->d.pool, le32_to_cpu(req->reclaim_req.slab_id));
	held = c->a->nr_slabs;
	/* Two deadlines pass without a word: logged, kept. */
	fsd_donor_tick(&c->d, &mi, 11000);
	fsd_donor_tick(&c->d, &mi, 30999);
	assert_int_equal(slab->state, FSD_SLAB_HELD);
	assert_int_equal(c->d.cnt.reclaim_late, 1);
	/* The third: revoked, deregistered, its memory given back. */
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_WARN);
	fsd_log_set_hook(capture);
	fsd_donor_tick(&c->d, &mi, 31000);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_int_equal(slab->state, FSD_SLAB_RELEASED);
	assert_null(slab->mr);
	assert_int_equal(c->f.revokes, 1);
	assert_int_equal(c->f.releases, 1);
	assert_int_equal(c->d.cnt.revoked, 1);
	assert_int_equal(c->a->nr_slabs, held - 1);
	assert_int_equal(c->a->nr_reclaiming, 0);
	assert_int_equal(c->a->unsolicited, 0);
	assert_false(c->a->closing);	/* the session lives on */
	assert_int_equal(nr_logged, 1);
	assert_non_null(strstr(logged[0], "host 1 (host-a, 10.0.0.1:5000): slab "));
	assert_non_null(strstr(logged[0], " revoked: not given back 30.0 s (3 deadlines of 10000 ms)"));
	/* A late answer to the old request is ignored. */
	farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
			 slab->reclaim_cookie);
	rep.reclaim_rep.slab_id = cpu_to_le32(slab->id);
	assert_int_equal(send_msg(c, c->a, &rep), 0);
	assert_int_equal(c->d.cnt.reclaim_ok, 0);
	{
		char buf[4096];

		fsd_donor_stats(&c->d, buf, sizeof(buf));
		assert_non_null(strstr(buf, " revoked_slabs=1 "));
	}
}

/*
 * One pressure check at @now that must send one RECLAIM_REQ, refused at
 * once (NO_SPACE) by its host: returns the slab asked for.
 */
static struct fsd_slab *tick_and_refuse(struct ctx *c,
					const struct fsd_meminfo *mi,
					uint64_t now)
{
	unsigned int before = c->f.nr_sent;
	const union farswap_msg *req;
	union farswap_msg rep;
	struct fsd_slab *slab;

	fsd_donor_tick(&c->d, mi, now);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 1);
	req = fake_last(&c->f);
	slab = fsd_pool_get(&c->d.pool, le32_to_cpu(req->reclaim_req.slab_id));
	farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
			 le64_to_cpu(req->hdr.cookie));
	rep.reclaim_rep.slab_id = req->reclaim_req.slab_id;
	rep.reclaim_rep.status = cpu_to_le16(FARSWAP_ST_NO_SPACE);
	assert_int_equal(send_msg(c, slab->owner, &rep), 0);
	return slab;
}

static void test_forced_revoke_refused(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - SLAB / 2);
	struct fsd_slab *slab = NULL;
	uint64_t t;

	no_revoke_notices(c);
	hold_everything(c);
	c->d.reclaim_deadline_ms = 10000;
	c->d.lim.revoke_after = 2;
	/* Asked, refused at once, asked again after a deadline... */
	for (t = 1000; t <= 11000; t += 10000) {
		slab = tick_and_refuse(c, &mi, t);
		assert_int_equal(slab->state, FSD_SLAB_HELD);
	}
	/* ...until revoke-after deadlines since the first request. */
	fsd_donor_tick(&c->d, &mi, 20999);
	assert_int_equal(slab->state, FSD_SLAB_HELD);
	fsd_donor_tick(&c->d, &mi, 21000);
	assert_int_equal(slab->state, FSD_SLAB_RELEASED);
	assert_int_equal(c->d.cnt.revoked, 1);
	assert_int_equal(c->d.cnt.reclaim_refused, 2);
}

/*
 * Three slabs asked for and refused, a slab's worth short: when their
 * revokes fall due, only the longest asked goes, and none once the
 * deficit is gone (within the hysteresis band: still under pressure).
 */
static void test_forced_revoke_bounded(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo low = mem(c->d.headroom - SLAB / 2);
	struct fsd_meminfo band = mem(c->d.headroom + c->d.hysteresis / 2);
	struct fsd_slab *first = NULL;
	unsigned int i, released = 0;
	uint64_t t;

	no_revoke_notices(c);
	hold_everything(c);
	c->d.reclaim_deadline_ms = 10000;
	c->d.lim.revoke_after = 2;
	for (t = 1000; t < 1003; t++) {
		struct fsd_slab *slab = tick_and_refuse(c, &low, t);

		if (!first)
			first = slab;
	}
	assert_int_equal(c->d.cnt.reclaim_refused, 3);
	fsd_donor_tick(&c->d, &low, 21002);
	assert_int_equal(c->d.cnt.revoked, 1);
	assert_int_equal(first->state, FSD_SLAB_RELEASED);
	/* The memory is back: short of nothing, above the headroom. */
	fsd_donor_tick(&c->d, &band, 21003);
	fsd_donor_tick(&c->d, &band, 60000);
	assert_true(c->d.under_pressure);
	assert_int_equal(c->d.cnt.revoked, 1);
	for (i = 0; i < NR; i++)
		released += c->d.pool.slabs[i].state == FSD_SLAB_RELEASED;
	assert_int_equal(released, 1);
}

/*
 * Ignore reclaim until revoked, as above, by a host that takes the
 * notice: returns the slab, revoked and told but still registered.
 */
static struct fsd_slab *revoke_told(struct ctx *c,
				    const struct fsd_meminfo *mi)
{
	const union farswap_msg *req, *n;
	struct fsd_slab *slab;

	hold_everything(c);
	c->d.reclaim_deadline_ms = 10000;
	fsd_donor_tick(&c->d, mi, 1000);
	req = fake_last(&c->f);
	assert_int_equal(req->hdr.type, FARSWAP_MSG_RECLAIM_REQ);
	slab = fsd_pool_get(&c->d.pool, le32_to_cpu(req->reclaim_req.slab_id));
	fsd_donor_tick(&c->d, mi, 11000);
	fsd_donor_tick(&c->d, mi, 31000);
	n = fake_last(&c->f);
	assert_int_equal(n->hdr.type, FARSWAP_MSG_SLAB_REVOKE);
	assert_int_equal(c->f.sent_flags[(c->f.nr_sent - 1) % FAKE_SENT_MAX],
			 FSD_SEND_REVOKE);
	assert_int_equal(le32_to_cpu(n->slab_revoke.slab_id), slab->id);
	/* The notice took the unanswered request's place, until acked. */
	assert_false(slab->reclaiming);
	assert_int_equal(slab->owner->unsolicited, 1);
	assert_int_equal(slab->owner->nr_reclaiming, 0);
	fsd_revoke_sent(&c->d, slab->owner);
	assert_int_equal(slab->owner->unsolicited, 0);
	fsd_revoke_sent(&c->d, slab->owner);	/* (nothing in flight) */
	assert_int_equal(slab->owner->unsolicited, 0);
	assert_int_equal(le32_to_cpu(n->slab_revoke.grace_ms), 10000);
	assert_int_equal(farswap_msg_check(n, sizeof(n->slab_revoke), V),
			 FARSWAP_ST_OK);
	assert_int_equal(slab->state, FSD_SLAB_HELD);
	assert_non_null(slab->mr);
	assert_int_equal(c->f.revokes, 0);
	assert_int_equal(c->d.cnt.revoked, 1);
	assert_int_equal(c->d.cnt.revoke_notices, 1);
	return slab;
}

/* The host is told, then the slab goes after one more deadline. */
static void test_forced_revoke_notice(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - SLAB / 2);
	struct fsd_slab *slab = revoke_told(c, &mi);
	struct fsd_session *owner = slab->owner;
	unsigned int held = owner->nr_slabs, sent;

	/* Not asked again, not revoked twice, during the grace. */
	sent = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 40999);
	assert_int_equal(count_sent(c, sent, FARSWAP_MSG_SLAB_REVOKE, NULL), 0);
	assert_int_equal(slab->state, FSD_SLAB_HELD);
	assert_int_equal(c->d.cnt.revoked, 1);
	fsd_donor_tick(&c->d, &mi, 41000);
	assert_int_equal(slab->state, FSD_SLAB_RELEASED);
	assert_null(slab->mr);
	assert_int_equal(c->f.revokes, 1);
	assert_int_equal(slab->revoke_at, 0);
	assert_int_equal(owner->nr_slabs, held - 1);
	assert_int_equal(owner->unsolicited, 0);
	assert_false(owner->closing);
}

/* A host that frees the slab it was told of frees it as any other. */
static void test_forced_revoke_notice_freed(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - SLAB / 2);
	struct fsd_slab *slab = revoke_told(c, &mi);
	const struct farswap_slab_free_rep *r;

	r = free_slab(c, slab->owner, slab->id);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(c->f.revokes, 1);
	assert_int_equal(slab->revoke_at, 0);
	assert_int_not_equal(slab->state, FSD_SLAB_HELD);
	/* The deadline passes with nothing left to do. */
	fsd_donor_tick(&c->d, &mi, 41000);
	assert_int_equal(c->f.revokes, 1);
	assert_int_equal(c->d.cnt.revoked, 1);
}

static void test_no_revoke_once_pressure_is_over(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo low = mem(c->d.headroom - SLAB / 2);
	struct fsd_meminfo plenty = mem(c->d.headroom + c->d.hysteresis + 1);
	unsigned int i;

	hold_everything(c);
	c->d.reclaim_deadline_ms = 10000;
	fsd_donor_tick(&c->d, &low, 1000);
	assert_int_equal(c->d.pool.nr_reclaiming, 1);
	/* Pressure passes: an ignored request is no reason to revoke. */
	fsd_donor_tick(&c->d, &plenty, 20000);
	assert_false(c->d.under_pressure);
	fsd_donor_tick(&c->d, &plenty, 100000);
	/* It comes back: deadlines count from the new spell's requests. */
	fsd_donor_tick(&c->d, &low, 110000);
	assert_true(c->d.under_pressure);
	fsd_donor_tick(&c->d, &low, 110001);
	for (i = 0; i < NR; i++)
		assert_int_not_equal(c->d.pool.slabs[i].state,
				     FSD_SLAB_RELEASED);
	assert_int_equal(c->d.cnt.revoked, 0);
}

static void test_quarantine(void **state)
{
	struct ctx *c = *state;
	uint32_t id = le32_to_cpu(alloc(c, c->a, SLAB)->slab_id);
	const struct farswap_slab_free_rep *r;
	char buf[4096];
	unsigned int i;

	c->f.fail_revoke = 1;
	r = free_slab(c, c->a, id);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(fsd_pool_get(&c->d.pool, id)->state,
			 FSD_SLAB_QUARANTINED);
	assert_int_equal(c->d.pool.nr_quarantined, 1);
	assert_int_equal(c->d.cnt.quarantined, 1);
	assert_int_equal(c->a->nr_slabs, 0);
	c->f.fail_revoke = 0;
	/* Never handed out again, zeroed or released. */
	for (i = 0; i < NR - 1; i++)
		assert_int_not_equal(le32_to_cpu(alloc(c, c->b, SLAB)->slab_id),
				     id);
	assert_int_equal(le16_to_cpu(alloc(c, c->b, SLAB)->status),
			 FARSWAP_ST_NO_SPACE);
	fsd_donor_tick(&c->d, &(struct fsd_meminfo){ .mem_available = 1 },
		       1000);
	assert_int_equal(fsd_pool_get(&c->d.pool, id)->state,
			 FSD_SLAB_QUARANTINED);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nslabs_quarantined 1\n"));
	assert_non_null(strstr(buf, " quarantined_slabs=1 "));
	/* A session teardown that fails to deregister quarantines too. */
	c->f.fail_revoke = 1;
	fsd_session_close(&c->d, c->b, FSD_LOG_DEBUG, "gone");
	fsd_session_free(&c->d, c->b);
	c->b = NULL;
	c->f.fail_revoke = 0;
	assert_int_equal(c->d.pool.nr_quarantined, NR);
	assert_true(fsd_pool_consistent(&c->d.pool));
}

/* Grants off the loop (fake ops: -EINPROGRESS, finished by the test). */

static void test_async_grants_in_order(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	unsigned int before = c->f.nr_sent;

	c->f.async_grant = 1;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 11);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	m.hdr.cookie = cpu_to_le64(12);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	/* Nothing answered yet, but the slabs are the host's. */
	assert_int_equal(c->f.nr_sent, before);
	assert_int_equal(c->a->grants_in_flight, 2);
	assert_int_equal(c->a->nr_slabs, 2);
	assert_int_equal(c->d.pool.nr_free, NR - 2);
	/* Other hosts are served meanwhile. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 99);
	assert_int_equal(send_msg(c, c->b, &m), 0);
	assert_int_equal(c->f.nr_sent, before + 1);
	/* A free of an id not granted yet is refused. */
	assert_int_equal(le16_to_cpu(free_slab(c, c->a, 0)->status),
			 FARSWAP_ST_NO_ENTRY);
	/* Answers come in request order. */
	assert_int_equal(fake_grant_finish(&c->d, 0), 0);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 11);
	assert_int_equal(fake_last(&c->f)->alloc_rep.status, 0);
	assert_int_equal(fake_grant_finish(&c->d, -ENOMEM), 0);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 12);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->alloc_rep.status),
			 FARSWAP_ST_INTERNAL);
	assert_int_equal(c->a->grants_in_flight, 0);
	assert_int_equal(c->a->nr_slabs, 1);
	assert_int_equal(c->d.pool.nr_free, NR - 1);
}

static void test_async_grant_pressure_skips_it(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = mem(c->d.headroom - 4 * SLAB);
	unsigned int i, before;

	c->f.async_grant = 1;
	for (i = 0; i < NR; i++) {
		union farswap_msg m;

		farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, i);
		m.alloc_req.slab_size = cpu_to_le64(SLAB);
		assert_int_equal(send_msg(c, c->a, &m), 0);
	}
	before = c->f.nr_sent;
	/* Grants in flight are neither released nor asked back. */
	fsd_donor_tick(&c->d, &mi, 1000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL),
			 0);
	assert_int_equal(c->f.releases, 0);
	assert_true(fsd_pool_consistent(&c->d.pool));
}

static void test_teardown_with_grant_in_flight(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	struct fsd_slab *slab;
	unsigned int before;

	alloc(c, c->a, SLAB);	/* one granted the plain way */
	c->f.async_grant = 1;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 21);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	slab = c->f.pending[0];
	assert_true(slab->granting);
	/* The host goes away while the worker works. */
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "gone");
	assert_int_equal(c->f.cancels, 2);	/* queued grants skipped */
	assert_false(fsd_session_reapable(c->a));
	/* What the loop does before freeing: drop what is granted. */
	fsd_session_drop_slabs(&c->d, c->a);
	assert_int_equal(c->f.revokes, 1);
	assert_int_equal(c->a->nr_slabs, 2);
	/* The first grant had started: it finishes and is deregistered. */
	before = c->f.nr_sent;
	assert_int_equal(fake_grant_finish(&c->d, 0), -ESHUTDOWN);
	assert_int_equal(c->f.revokes, 2);
	assert_null(slab->mr);
	assert_int_equal(slab->state, FSD_SLAB_FREE);
	assert_false(fsd_session_reapable(c->a));
	/* The second was cancelled before it started. */
	assert_int_equal(fake_grant_finish(&c->d, -ECANCELED), -ESHUTDOWN);
	assert_int_equal(c->f.revokes, 2);
	assert_int_equal(c->f.nr_sent, before);	/* nothing to a gone host */
	assert_true(fsd_session_reapable(c->a));
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(c->d.pool.nr_free, NR);
	assert_true(fsd_pool_consistent(&c->d.pool));
}

static void test_stats_text_new_fields(void **state)
{
	struct ctx *c = *state;
	char buf[4096];
	const char *counters;

	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	counters = strstr(buf, "\ncounters sessions=2 rejects=0 bad_msgs=0 ");
	assert_non_null(counters);
	/* Old fields first and unchanged, new ones appended. */
	assert_non_null(strstr(counters, " keepalive_dead=0 refused_malformed=0 refused_version=0 refused_not_allowed=0 refused_per_address=0 refused_max_hosts=0 refused_features=0 refused_shutdown=0 refused_io=0 refused_internal=0 refused_auth=0 refused_max_unauthenticated=0 refused_connect_rate=0 handshake_timeouts=0 revoked_slabs=0 quarantined_slabs=0 alloc_capped=0 alloc_rate_limited=0 depth_clamped=0 closed_not_allowed=0 auth_ok=0 auth_failed=0 auth_denied_msgs=0 auth_timeouts=0 revoke_notices=0 unauth_evicted=0 unauth_evicted_per_address=0 resumed_slabs=0 resume_refused=0 kept_expired_slabs=0 auth_kx=0 auth_legacy=0 bad_tags=0 join_refused=0 session_kept_slabs=0 fair_reclaims=0\n"));
	assert_non_null(strstr(buf, "\nslabs_quarantined 0\n"));
	assert_non_null(strstr(buf, "\nauth none\n"));
	assert_non_null(strstr(buf, "io_queues 0/2 state up granting 0 draining no refused 0\n"));
}

/* max-hosts and max-unauthenticated, on a donor that requires the key. */

#define KEY "0123456789abcdef0123456789abcdef"

/* A donor with a key-file, and no session yet. */
static int setup_key(void **state)
{
	static struct ctx c;
	struct fsd_auth_key k = { .len = sizeof(KEY) - 1 };

	memset(&c, 0, sizeof(c));
	if (fake_donor_init(&c.d, &c.f, NR, SLAB))
		return -1;
	memcpy(k.bytes, KEY, k.len);
	fsd_donor_set_key(&c.d, &k, "/etc/farswap/key");
	*state = &c;
	return 0;
}

/* A control connect of @host announcing authentication; NULL if refused. */
static struct fsd_session *connect_auth(struct ctx *c, const char *host,
					struct fsd_conn_decision *dec)
{
	struct farswap_conn_req r;
	struct fsd_session *s;

	farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 2, 0, 64);
	r.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	strncpy((char *)r.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &r, sizeof(r), dec, 0);
	if (dec->status != FARSWAP_ST_OK)
		return NULL;
	/* As farswapd does: a place made, then the session. */
	fsd_conn_make_room(&c->d, dec, 1000);
	s = fsd_session_new(&c->d, dec, "10.0.0.1:5000", 0);
	assert_non_null(s);
	fsd_session_established(&c->d, s, 0);
	return s;
}

/*
 * The host's side of the handshake, with the donor's key: AUTH_REQ, then
 * AUTH_PROOF for the challenge.  Returns what the proof's handling did;
 * the AUTH_REP it got is the last message sent.
 */
static int authenticate(struct ctx *c, struct fsd_session *s)
{
	static const uint8_t hnonce[FARSWAP_AUTH_NONCE_LEN] = { 1, 2, 3, 4 };
	uint8_t dnonce[FARSWAP_AUTH_NONCE_LEN];
	union farswap_msg m;
	int ret;

	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, s->version, 0x101);
	memcpy(m.auth_req.host_nonce, hnonce, sizeof(hnonce));
	assert_int_equal(send_msg(c, s, &m), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_CHAL);
	memcpy(dnonce, fake_last(&c->f)->auth_chal.donor_nonce, sizeof(dnonce));
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, s->version, 0x102);
	assert_int_equal(fsd_auth_mac(&c->d.key, FARSWAP_AUTH_HOST, hnonce,
				      dnonce, s->token, s->host_id,
				      c->d.donor_id, m.auth_proof.host_mac), 0);
	ret = send_msg(c, s, &m);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x102);
	return ret;
}

static unsigned int auth_rep_status(struct ctx *c)
{
	return le16_to_cpu(fake_last(&c->f)->auth_rep.status);
}

/*
 * Sessions that have not proved the key are bounded by max-unauthenticated;
 * one that proves it no longer counts there.
 */
static void test_max_unauthenticated(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *a, *b, *hc, *hd, *he;
	char buf[4096];

	c->d.max_unauthenticated = 2;
	c->d.lim.max_sessions_per_address = 0;
	c->d.lim.max_unauth_per_address = 0;
	a = connect_auth(c, "host-a", &dec);
	b = connect_auth(c, "host-b", &dec);
	assert_non_null(a);
	assert_non_null(b);
	/*
	 * Full: the connect is not refused, the oldest session not yet
	 * proven makes way (a flood of connects without the key cannot
	 * hold the places and keep hosts out).
	 */
	hc = connect_auth(c, "host-c", &dec);
	assert_non_null(hc);
	assert_true(a->closing);
	assert_false(b->closing);
	assert_int_equal(c->d.cnt.unauth_evicted, 1);
	assert_int_equal(c->d.cnt.refused[FSD_REFUSED_UNAUTHENTICATED], 0);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, " refused_max_unauthenticated=0 "));
	assert_non_null(strstr(buf, " unauth_evicted=1 unauth_evicted_per_address=0 "));
	assert_string_equal(fsd_refusal_name(FSD_REFUSED_UNAUTHENTICATED),
			    "max_unauthenticated");
	/* One that proved the key is never pushed out: hc goes, not b. */
	assert_int_equal(authenticate(c, b), 0);
	assert_int_equal(auth_rep_status(c), FARSWAP_ST_OK);
	hd = connect_auth(c, "host-d", &dec);
	assert_non_null(hd);
	assert_false(hc->closing);	/* b's place among them is free */
	he = connect_auth(c, "host-e", &dec);
	assert_non_null(he);
	assert_true(hc->closing);
	assert_false(hd->closing);
	assert_false(b->closing);
	assert_int_equal(c->d.cnt.unauth_evicted, 2);
}

/*
 * max-sessions-per-address with a key: connects claiming a host's
 * address push out each other's unproven sessions, not the host's proven
 * one, and cannot keep the host out.
 */
static void test_per_address_makes_room(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *a, *b, *x;

	c->d.lim.max_sessions_per_address = 2;
	a = connect_auth(c, "host-a", &dec);
	assert_non_null(a);
	assert_int_equal(authenticate(c, a), 0);
	b = connect_auth(c, "spoof-1", &dec);
	assert_non_null(b);
	/* Full for 10.0.0.1: the unproven one makes way, a stays. */
	x = connect_auth(c, "spoof-2", &dec);
	assert_non_null(x);
	assert_true(b->closing);
	assert_false(a->closing);
	assert_int_equal(authenticate(c, x), 0);
	/* Both proven: now the address is full, refused as before. */
	assert_null(connect_auth(c, "host-c", &dec));
	assert_int_equal(dec.refusal, FSD_REFUSED_PER_ADDRESS);
	assert_false(a->closing);
	assert_false(x->closing);
}

/* A control connect from @addr at @now announcing authentication. */
static struct fsd_session *connect_from(struct ctx *c, const char *addr,
					const char *host, uint64_t now,
					struct fsd_conn_decision *dec)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct farswap_conn_req r;
	struct fsd_session *s;
	struct fsd_addr a;

	assert_int_equal(inet_pton(AF_INET, addr, &in.sin_addr), 1);
	assert_int_equal(fsd_addr_from_sockaddr(&in, &a), 0);
	farswap_conn_req_init(&r, FARSWAP_QT_CTRL, 0, 2, 0, 64);
	r.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	strncpy((char *)r.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, &a, &r, sizeof(r), dec, now);
	if (dec->status != FARSWAP_ST_OK) {
		assert_null(dec->evict);	/* refused: nobody makes way */
		fsd_conn_refused(&c->d, dec, addr, now);
		return NULL;
	}
	fsd_conn_make_room(&c->d, dec, now);
	s = fsd_session_new(&c->d, dec, addr, now);
	assert_non_null(s);
	fsd_session_established(&c->d, s, now);
	return s;
}

/*
 * max-unauthenticated-per-address: a new connect from an address with
 * that many sessions still to prove the key closes the oldest of that
 * address's own, not another address's, and never a proven one.
 */
static void test_unauth_per_address(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *a1, *a2, *a3, *a4, *b1;
	char buf[4096];

	c->d.lim.max_sessions_per_address = 0;
	assert_int_equal(c->d.lim.max_unauth_per_address, 2);	/* default */
	a1 = connect_from(c, "10.0.0.1", "spoof-1", 1000, &dec);
	b1 = connect_from(c, "10.0.0.2", "host-b", 1001, &dec);
	a2 = connect_from(c, "10.0.0.1", "spoof-2", 1002, &dec);
	assert_non_null(a1);
	assert_non_null(a2);
	assert_non_null(b1);
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_NOTICE);
	fsd_log_set_hook(capture);
	a3 = connect_from(c, "10.0.0.1", "spoof-3", 1003, &dec);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_non_null(a3);
	assert_true(a1->closing);
	assert_false(a2->closing);
	assert_false(b1->closing);
	assert_int_equal(c->d.cnt.unauth_evicted, 1);
	assert_int_equal(c->d.cnt.unauth_evicted_per_address, 1);
	assert_int_equal(c->d.cnt.rejects, 0);
	assert_int_equal(count_logged("(spoof-1, 10.0.0.1): closing session: not authenticated after 3 ms: its place goes to a new connect (max-unauthenticated-per-address)"), 1);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, " unauth_evicted=1 unauth_evicted_per_address=1 "));
	/* A proven session of the address neither counts nor makes way. */
	assert_int_equal(authenticate(c, a2), 0);
	a4 = connect_from(c, "10.0.0.1", "spoof-4", 1004, &dec);
	assert_non_null(a4);
	assert_false(a3->closing);
	assert_non_null(connect_from(c, "10.0.0.1", "spoof-5", 1005, &dec));
	assert_true(a3->closing);
	assert_false(a4->closing);
	assert_false(a2->closing);
	assert_int_equal(c->d.cnt.unauth_evicted_per_address, 2);
	/* 0: no limit per address (max-unauthenticated still holds). */
	c->d.lim.max_unauth_per_address = 0;
	assert_non_null(connect_from(c, "10.0.0.1", "spoof-6", 1006, &dec));
	assert_false(a4->closing);
	assert_int_equal(c->d.cnt.unauth_evicted, 2);
}

/* Without a key every session is a host's: nothing is pending, or evicted. */
static void test_unauth_per_address_needs_key(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	/* A and B, from 10.0.0.1, took no key either. */
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-c", &dec),
			 FARSWAP_ST_OK);
	assert_null(dec.evict);
	assert_non_null(fsd_session_new(&c->d, &dec, "10.0.0.1:7", 0));
	assert_int_equal(decide(c, FARSWAP_QT_CTRL, 0, 2, 0, "host-d", &dec),
			 FARSWAP_ST_OK);
	assert_null(dec.evict);
}

/*
 * connect-rate: control connects over an address's rate are refused BUSY
 * before anything is made for them (no session, no place taken, nobody
 * evicted), counted and logged; other addresses and I/O queues of
 * sessions already in are not held back.
 */
static void test_connect_rate(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	uint32_t sessions;
	char buf[4096];
	int i;

	c->d.lim.max_sessions_per_address = 0;
	c->d.lim.max_unauth_per_address = 0;
	c->d.lim.connect_rate = 2;
	c->d.lim.connect_burst = 3;
	for (i = 0; i < 3; i++)
		assert_non_null(connect_from(c, "10.0.0.7", "host-r", 1000,
					     &dec));
	sessions = c->d.nr_sessions;
	assert_null(connect_from(c, "10.0.0.7", "host-r", 1000, &dec));
	assert_int_equal(dec.status, FARSWAP_ST_BUSY);
	assert_int_equal(dec.refusal, FSD_REFUSED_RATE);
	assert_string_equal(dec.detail, "over 2 connects a second from this address, burst 3 (connect-rate)");
	assert_int_equal(c->d.nr_sessions, sessions);
	assert_int_equal(c->d.cnt.unauth_evicted, 0);
	assert_int_equal(c->d.cnt.refused[FSD_REFUSED_RATE], 1);
	assert_string_equal(fsd_refusal_name(FSD_REFUSED_RATE), "connect_rate");
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, " refused_connect_rate=1 "));
	/* Another address has its own rate. */
	assert_non_null(connect_from(c, "10.0.0.8", "host-s", 1000, &dec));
	/* Half a second gives the address one connect back. */
	assert_non_null(connect_from(c, "10.0.0.7", "host-r", 1500, &dec));
	assert_null(connect_from(c, "10.0.0.7", "host-r", 1500, &dec));
	/* An I/O queue of a session in is not a connect of the rate. */
	for (i = 0; i < 3; i++)
		assert_non_null(connect_from(c, "10.0.0.1", "host-i", 2000,
					     &dec));
	{
		struct fsd_session *s = connect_from(c, "10.0.0.1", "host-i",
						     2000, &dec);

		assert_null(s);
		s = c->d.sessions;
		while (s && strcmp(s->name, "host-i"))
			s = s->next;
		assert_non_null(s);
		assert_int_equal(authenticate(c, s), 0);
		assert_int_equal(decide(c, FARSWAP_QT_IO, 1, 2, s->token,
					"host-i", &dec), FARSWAP_ST_OK);
	}
	/* 0: off. */
	c->d.lim.connect_rate = 0;
	for (i = 0; i < 10; i++)
		assert_non_null(connect_from(c, "10.0.0.7", "host-r", 1500,
					     &dec));
}

/*
 * Refused and evicted connects share a few log lines a second; what is
 * held back is told in one line when the second is over, even if no
 * connect comes after.
 */
static void test_connect_log_summary(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	int i;

	c->d.lim.max_sessions_per_address = 0;
	c->d.max_unauthenticated = 65536;
	c->d.lim.connect_rate = 0;
	c->d.lim.auth_timeout_ms = 0;	/* the 2 kept ones stay */
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_NOTICE);
	fsd_log_set_hook(capture);
	/* 2 kept, 18 evicted (max-unauthenticated-per-address), in 1 s. */
	for (i = 0; i < 20; i++)
		assert_non_null(connect_from(c, "10.0.0.9", "flood", 5000,
					     &dec));
	assert_int_equal(c->d.cnt.unauth_evicted, 18);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST);
	fsd_donor_handshakes(&c->d, 5000 + FSD_CONNECT_LOG_MS - 1);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST);
	fsd_donor_handshakes(&c->d, 5000 + FSD_CONNECT_LOG_MS);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST + 1);
	fsd_donor_handshakes(&c->d, 5000 + 3 * FSD_CONNECT_LOG_MS);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_int_equal(nr_logged, FSD_CONNECT_LOG_BURST + 1);
	assert_string_equal(logged[FSD_CONNECT_LOG_BURST],
			    "13 more refused connects suppressed");
}

/* Sessions that have not proved the key do not count toward max-hosts. */
static void test_unauthenticated_not_max_hosts(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	c->d.max_hosts = 1;
	/* Never proves it: a connect from anyone who can reach the port. */
	assert_non_null(connect_auth(c, "intruder", &dec));
	s = connect_auth(c, "host-a", &dec);
	assert_non_null(s);
	assert_int_equal(authenticate(c, s), 0);
	assert_int_equal(auth_rep_status(c), FARSWAP_ST_OK);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	assert_false(s->closing);
	/* Now max-hosts hosts are in. */
	assert_null(connect_auth(c, "host-b", &dec));
	assert_int_equal(dec.status, FARSWAP_ST_BUSY);
	assert_int_equal(dec.refusal, FSD_REFUSED_MAX_HOSTS);
}

/*
 * A session let in before max-hosts others proved the key, that proves it
 * after them: AUTH_REP BUSY, closed, counted as refused for max-hosts.
 */
static void test_max_hosts_at_proof(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *a, *b;

	c->d.max_hosts = 1;
	a = connect_auth(c, "host-a", &dec);
	b = connect_auth(c, "host-b", &dec);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(authenticate(c, a), 0);
	assert_int_equal(auth_rep_status(c), FARSWAP_ST_OK);
	nr_logged = 0;
	fsd_log_set_level(FSD_LOG_NOTICE);
	fsd_log_set_hook(capture);
	assert_int_equal(authenticate(c, b), -EBUSY);
	assert_int_equal(auth_rep_status(c), FARSWAP_ST_BUSY);
	assert_ptr_equal(c->f.sent_to[(c->f.nr_sent - 1) % FAKE_SENT_MAX], b);
	/* Closed once the reply is out, not before: it would be flushed. */
	assert_true(b->refused);
	assert_false(b->closing);
	assert_int_equal(count_logged("too many hosts (max-hosts)"), 0);
	fsd_sends_done(&c->d, b);
	fsd_log_set_hook(NULL);
	fsd_log_set_level(FSD_LOG_ERR - 1);
	assert_true(b->closing);
	assert_false(fsd_session_authenticated(b));
	assert_int_equal(count_logged("too many hosts (max-hosts)"), 1);
	assert_int_equal(c->d.cnt.refused[FSD_REFUSED_MAX_HOSTS], 1);
	assert_int_equal(c->d.cnt.rejects, 1);
	assert_int_equal(c->d.cnt.auth_ok, 1);
	assert_int_equal(c->d.cnt.auth_failed, 0);
	assert_false(a->closing);
	/* Once A leaves, the next host that proves the key is in. */
	fsd_session_close(&c->d, a, FSD_LOG_DEBUG, "gone");
	b = connect_auth(c, "host-c", &dec);
	assert_non_null(b);
	assert_int_equal(authenticate(c, b), 0);
	assert_int_equal(auth_rep_status(c), FARSWAP_ST_OK);
}

/* The drain (drain.c): farswapd --drain, and a reload's narrowed access. */

/* RECLAIM_REQs for slab @id sent since @from. */
static unsigned int asked_for(struct ctx *c, unsigned int from, uint32_t id)
{
	unsigned int i, n = 0;

	assert_true(c->f.nr_sent - from <= FAKE_SENT_MAX);
	for (i = from; i < c->f.nr_sent; i++) {
		const union farswap_msg *m = &c->f.sent[i % FAKE_SENT_MAX];

		if (m->hdr.type == FARSWAP_MSG_RECLAIM_REQ &&
		    le32_to_cpu(m->reclaim_req.slab_id) == id)
			n++;
	}
	return n;
}

static void test_drain_grants_nothing(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;
	union farswap_msg m;

	alloc(c, c->a, SLAB);
	assert_int_equal(fsd_donor_drain(&c->d, 1000), 0);
	assert_int_equal(fsd_donor_drain(&c->d, 1000), -EALREADY);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINING);
	/* NO_SPACE, 0 free: the host goes elsewhere. */
	r = alloc(c, c->b, SLAB);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_SPACE);
	assert_int_equal(le32_to_cpu(r->slabs_free), 0);
	assert_int_equal(c->f.grants, 1);
	assert_int_equal(fsd_slabs_offered(&c->d), 0);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, V, 7);
	assert_int_equal(send_msg(c, c->a, &m), 0);
	assert_int_equal(le32_to_cpu(fake_last(&c->f)->stats_rep.slabs_free), 0);
}

/*
 * Every held slab is asked for once in a round; nothing again while
 * requests are in flight; a refused one again a deadline later, once.
 */
static void test_drain_asks_each_slab_once_per_round(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	unsigned int before, i;
	struct fsd_slab *kept;

	hold_everything(c);	/* A 5, B 3 */
	c->d.reclaim_deadline_ms = 10000;
	before = c->f.nr_sent;
	assert_int_equal(fsd_donor_drain(&c->d, 1000), 0);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 5);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->b), 3);
	for (i = 0; i < NR; i++)
		assert_int_equal(asked_for(c, before, i), 1);
	assert_int_equal(c->d.drain.reclaim_sent, 8);
	/* In flight: not asked twice. */
	fsd_donor_tick(&c->d, &mi, 2000);
	fsd_donor_tick(&c->d, &mi, 3000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 8);
	/* B gives its 3 back; A keeps one, gives 4. */
	kept = fsd_pool_get(&c->d.pool, 0);
	assert_ptr_equal(kept->owner, c->a);
	for (i = before; i < c->f.nr_sent; i++) {
		const union farswap_msg *req = &c->f.sent[i];
		union farswap_msg rep;
		bool refuse = le32_to_cpu(req->reclaim_req.slab_id) == kept->id;

		farswap_msg_init(&rep, FARSWAP_MSG_RECLAIM_REP, V,
				 le64_to_cpu(req->hdr.cookie));
		rep.reclaim_rep.slab_id = req->reclaim_req.slab_id;
		rep.reclaim_rep.status = cpu_to_le16(refuse ? FARSWAP_ST_NO_SPACE :
							      FARSWAP_ST_OK);
		assert_int_equal(fsd_handle_msg(&c->d, c->f.sent_to[i], &rep,
						sizeof(rep.reclaim_rep), 3000),
				 0);
	}
	assert_int_equal(c->d.pool.nr_held, 1);
	assert_int_equal(c->d.drain.slabs_returned, 7);
	assert_int_equal(c->d.drain.refusals, 1);
	assert_int_equal(kept->refused_st, FARSWAP_ST_NO_SPACE);
	/* Refused: not again before a deadline... */
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 4000);
	fsd_donor_tick(&c->d, &mi, 12999);
	assert_int_equal(asked_for(c, before, kept->id), 0);
	/* ...then once, however many checks pass. */
	fsd_donor_tick(&c->d, &mi, 13000);
	fsd_donor_tick(&c->d, &mi, 14000);
	fsd_donor_tick(&c->d, &mi, 15000);
	assert_int_equal(asked_for(c, before, kept->id), 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 1);
}

/* Not thousands at once: a batch per check, 15 in flight per host. */
static void test_drain_paced(void **state)
{
	struct fsd_meminfo mi;
	struct fsd_session *h[3];
	struct fsd_donor d;
	struct fake f;
	unsigned int i, j, before;

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_int_equal(fake_donor_init(&d, &f, 90, SLAB), 0);
	mi = mem(d.headroom + d.hysteresis + 64 * MiB);
	for (j = 0; j < 3; j++) {
		char name[16];

		snprintf(name, sizeof(name), "host-%u", j);
		h[j] = fake_session(&d, name, 1);
		assert_non_null(h[j]);
		for (i = 0; i < 30; i++) {
			union farswap_msg m;

			farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, i);
			m.alloc_req.slab_size = cpu_to_le64(SLAB);
			assert_int_equal(fsd_handle_msg(&d, h[j], &m,
							sizeof(m.alloc_req), 0),
					 0);
		}
	}
	assert_int_equal(d.pool.nr_held, 90);
	before = f.nr_sent;
	assert_int_equal(fsd_donor_drain(&d, 1000), 0);
	assert_true(f.nr_sent - before <= FSD_DRAIN_BATCH);
	for (j = 0; j < 3; j++)
		assert_true(h[j]->nr_reclaiming <= FSD_RECLAIMS_MAX);
	fsd_donor_tick(&d, &mi, 2000);
	assert_int_equal(f.nr_sent - before, 3 * FSD_RECLAIMS_MAX);
	for (j = 0; j < 3; j++) {
		assert_int_equal(h[j]->nr_reclaiming, FSD_RECLAIMS_MAX);
		assert_false(h[j]->closing);
	}
	fake_donor_exit(&d);
}

/*
 * Short of memory with revoke-after 1, a host that refuses for ever keeps
 * its slabs while the donor drains: asked again, never revoked.
 */
static void test_drain_refusal_never_revokes(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo low = mem(c->d.headroom - 4 * SLAB);
	unsigned int from;
	uint64_t t;
	char buf[1024];

	hold_everything(c);
	from = c->f.nr_sent;
	c->d.reclaim_deadline_ms = 1000;
	c->d.lim.revoke_after = 1;
	assert_int_equal(fsd_donor_drain(&c->d, 1000), 0);
	for (t = 1000; t < 60000; t += 500) {
		fsd_donor_tick(&c->d, &low, t);
		answer_reclaims(c, from, FARSWAP_ST_NO_SPACE, t);
		from = c->f.nr_sent;
	}
	assert_int_equal(c->d.cnt.revoke_notices, 0);
	assert_int_equal(c->d.cnt.revoked, 0);
	assert_int_equal(c->f.revokes, 0);
	assert_int_equal(c->d.pool.nr_held, NR);
	assert_int_equal(c->a->nr_slabs, 5);
	/*
	 * Each asked again after each deadline, no oftener (by the drain
	 * and the pressure response together).
	 */
	assert_true(c->d.cnt.reclaim_sent <= NR * 60);
	assert_true(c->d.drain.refusals >= NR * 10);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINING);
	assert_true(fsd_drain_report(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "state draining\n"));
	assert_non_null(strstr(buf, "slabs_left 8\n"));
	assert_non_null(strstr(buf, "host-a: 5 slabs, no room elsewhere (5 refused"));
	assert_non_null(strstr(buf, "host-b: 3 slabs, no room elsewhere (3 refused"));
	/* Undrained, the same host's refusals count against it again. */
	assert_int_equal(fsd_donor_undrain(&c->d, 60000), 0);
	for (t = 60000; t < 90000; t += 500) {
		fsd_donor_tick(&c->d, &low, t);
		answer_reclaims(c, from, FARSWAP_ST_NO_SPACE, t);
		from = c->f.nr_sent;
	}
	assert_true(c->d.cnt.revoked > 0);
}

/* Drained only once no slab is held, grants in flight included. */
static void test_drained_only_at_zero(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	union farswap_msg m;
	unsigned int before;
	char buf[1024], text[4096];

	alloc(c, c->a, SLAB);
	alloc(c, c->b, SLAB);
	c->f.async_grant = 1;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 11);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(send_msg(c, c->a, &m), 0);	/* on the worker */
	before = c->f.nr_sent;
	assert_int_equal(fsd_donor_drain(&c->d, 1000), 0);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, NULL), 2);
	answer_reclaims(c, before, FARSWAP_ST_OK, 1500);
	assert_int_equal(c->d.pool.nr_held, 1);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINING);
	/* The grant completes (granted: the host asked first), then goes. */
	assert_int_equal(fake_grant_finish(&c->d, 0), 0);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINING);
	before = c->f.nr_sent;
	fsd_donor_tick(&c->d, &mi, 2000);
	fsd_donor_tick(&c->d, &mi, 3000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 1);
	answer_reclaims(c, before, FARSWAP_ST_OK, 3500);
	assert_int_equal(c->d.pool.nr_held, 0);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINED);
	fsd_donor_tick(&c->d, &mi, 4000);
	assert_true(c->d.drain.drained_logged);
	assert_true(fsd_drain_report(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "state drained\nslabs_left 0\nhosts_holding 0\nslabs_returned 3\n"));
	assert_null(strstr(buf, "waiting"));
	assert_true(fsd_donor_stats(&c->d, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "drain drained\ndrain_slabs_left 0\ndrain_slabs_returned 3\n"));
	/* Sessions stay: the hosts simply hold nothing here. */
	assert_false(c->a->closing);
	assert_false(c->b->closing);
}

static void test_undrain_grants_again(void **state)
{
	struct ctx *c = *state;
	unsigned int before;

	assert_int_equal(fsd_donor_undrain(&c->d, 1000), -EALREADY);
	assert_int_equal(fsd_donor_drain(&c->d, 1000), 0);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINED);
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status),
			 FARSWAP_ST_NO_SPACE);
	before = c->f.nr_sent;
	assert_int_equal(fsd_donor_undrain(&c->d, 2000), 0);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_OFF);
	/* Hosts are told there are slabs again. */
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->a), 1);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_STATS_REP, c->b), 1);
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status),
			 FARSWAP_ST_OK);
	assert_int_equal(fsd_slabs_offered(&c->d), NR - 1);
}

/*
 * A reload that no longer allows a host holding slabs drains it, never
 * frees them: it is refused new ones and closed once it holds none.
 */
static void test_reload_narrowing_drains(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = calm(c);
	struct fsd_session *s;
	struct fsd_conn_decision dec;
	unsigned int before, i;

	assert_int_equal(decide_from(c, "10.0.9.9", FARSWAP_QT_CTRL, 0,
				     "host-c", &dec), FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.9.9:1", 0);
	fsd_session_established(&c->d, s, 0);
	for (i = 0; i < 2; i++)
		alloc(c, s, SLAB);
	alloc(c, c->a, SLAB);
	assert_int_equal(s->nr_slabs, 2);
	set_acl(c, "10.0.0.0/24");
	before = c->f.nr_sent;
	fsd_donor_recheck_access(&c->d);
	/* Not closed, not freed: draining. */
	assert_false(s->closing);
	assert_true(s->disallowed);
	assert_int_equal(s->nr_slabs, 2);
	assert_int_equal(c->f.revokes, 0);
	assert_int_equal(c->d.cnt.closed_not_allowed, 0);
	/* The others are not. */
	assert_false(c->a->disallowed);
	assert_false(c->d.drain.on);
	assert_int_equal(le16_to_cpu(alloc(c, s, SLAB)->status),
			 FARSWAP_ST_NO_SPACE);
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status),
			 FARSWAP_ST_OK);
	/* Asked for its slabs at the next check, refusals kept. */
	fsd_donor_tick(&c->d, &mi, 2000);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, s), 2);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_RECLAIM_REQ, c->a), 0);
	before = c->f.nr_sent;
	answer_reclaims(c, before - 2, FARSWAP_ST_NO_SPACE, 2000);
	fsd_donor_tick(&c->d, &mi, 100000);
	assert_false(s->closing);
	assert_int_equal(s->nr_slabs, 2);
	assert_int_equal(count_sent(c, before, FARSWAP_MSG_SLAB_REVOKE, NULL), 0);
	/* Given back: closed. */
	answer_reclaims(c, before, FARSWAP_ST_OK, 100000);
	assert_int_equal(s->nr_slabs, 0);
	fsd_donor_tick(&c->d, &mi, 101000);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.closed_not_allowed, 1);
	assert_false(c->a->closing);
}

/* Allowed again by a later reload: it keeps its slabs and may ask. */
static void test_reload_allows_again(void **state)
{
	struct ctx *c = *state;

	alloc(c, c->a, SLAB);
	set_acl(c, "10.9.0.0/24");
	fsd_donor_recheck_access(&c->d);
	assert_true(c->a->disallowed);
	assert_true(c->b->closing);	/* nothing held: closed at once */
	set_acl(c, "10.0.0.0/24");
	fsd_donor_recheck_access(&c->d);
	assert_false(c->a->disallowed);
	assert_false(c->a->closing);
	assert_int_equal(le16_to_cpu(alloc(c, c->a, SLAB)->status),
			 FARSWAP_ST_OK);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TK(f) cmocka_unit_test_setup_teardown(f, setup_key, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_alloc_grant),
		T(test_alloc_wrong_size),
		T(test_alloc_exhaustion),
		T(test_alloc_busy_under_pressure),
		T(test_alloc_register_fails),
		T(test_slab_free),
		T(test_free_other_hosts_slab),
		T(test_dirty_slab_zeroed_on_regrant),
		T(test_freed_slabs_zeroed_in_background),
		T(test_stats),
		T(test_info),
		T(test_bad_message_closes_only_that_session),
		T(test_every_malformed_kind_closes),
		T(test_donor_only_types_close),
		T(test_send_failure_closes),
		cmocka_unit_test(test_msg_problem_names_reason),
		T(test_conn_ctrl),
		T(test_conn_io),
		T(test_conn_version),
		T(test_conn_limits),
		T(test_pressure_releases_free_first),
		T(test_reclaim_flow),
		T(test_reclaim_refused_keeps_slab),
		T(test_deadline_logs_never_drops),
		cmocka_unit_test(test_outstanding_limit),
		cmocka_unit_test(test_revoke_within_budget),
		T(test_recovery_repopulates_and_offers),
		T(test_host_without_reclaim_feature),
		T(test_teardown_frees_everything),
		T(test_same_host_probes_old_session),
		T(test_keepalive_probes_idle_sessions),
		T(test_keepalive_activity_counts),
		T(test_offer_waits_for_probe),
		T(test_keepalive_off_and_not_up),
		T(test_keepalive_dead_host_freed),
		T(test_send_failure_kinds),
		T(test_stats_text),
		T(test_allowed_hosts),
		T(test_refusals_logged_and_counted),
		T(test_sessions_per_address),
		T(test_features_required),
		T(test_queue_depth_clamped),
		T(test_io_from_another_address),
		T(test_handshake_timeout),
		T(test_reload_closes_no_longer_allowed),
		T(test_slab_cap_per_host),
		T(test_slab_cap_fair),
		T(test_fair_share_asked_back),
		T(test_fair_share_refused_and_over),
		T(test_fixed_cap_asks_nothing),
		T(test_alloc_rate),
		T(test_forced_revoke_ignored),
		T(test_forced_revoke_refused),
		T(test_forced_revoke_bounded),
		T(test_forced_revoke_notice),
		T(test_forced_revoke_notice_freed),
		T(test_no_revoke_once_pressure_is_over),
		T(test_quarantine),
		T(test_async_grants_in_order),
		T(test_async_grant_pressure_skips_it),
		T(test_teardown_with_grant_in_flight),
		T(test_stats_text_new_fields),
		T(test_drain_grants_nothing),
		T(test_drain_asks_each_slab_once_per_round),
		cmocka_unit_test(test_drain_paced),
		T(test_drain_refusal_never_revokes),
		T(test_drained_only_at_zero),
		T(test_undrain_grants_again),
		T(test_reload_narrowing_drains),
		T(test_reload_allows_again),
		TK(test_max_unauthenticated),
		TK(test_per_address_makes_room),
		TK(test_unauth_per_address),
		T(test_unauth_per_address_needs_key),
		TK(test_connect_rate),
		TK(test_connect_log_summary),
		TK(test_unauthenticated_not_max_hosts),
		TK(test_max_hosts_at_proof),
	};

	fsd_log_init(FSD_LOG_ERR - 1, false);	/* quiet */
	return cmocka_run_group_tests_name("donor", tests, NULL, NULL);
}
