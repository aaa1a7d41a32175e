// SPDX-License-Identifier: GPL-2.0
/*
 * Slabs across a restart of farswapd, with fake ops: the resume token a
 * grant carries, the pool-state records, the last farswapd's held slabs
 * adopted as KEPT, SLAB_RESUME_REQ and the end of the resume grace; and
 * across the end of a host's session (FARSWAP_FEAT_KEEP): kept when it
 * ends without the host, given back by the host's goodbye.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_ops.h"
#include "log.h"
#include "report.h"

#define MiB (1ull << 20)
#define SLAB (4 * MiB)
#define NR 8
#define V FARSWAP_VERSION_MAX
#define GRACE 60000
#define T0 1000		/* ms: the adoption */
#define TOKEN_A 0x1111222233334444ull
#define TOKEN_B 0x5555666677778888ull

struct ctx {
	struct fsd_donor d;
	struct fake f;
	struct fsd_keep keep;
	uint8_t table[4096];
	struct fsd_session *a, *b;
	struct fsd_adopted adopted;
};

static struct ctx C;

static void id_of(uint8_t *id, const char *name)
{
	memset(id, 0, FARSWAP_ID_LEN);
	strncpy((char *)id, name, FARSWAP_ID_LEN);
}

/* A record of the last farswapd's table: slab held by @host with @token. */
static void held(struct fsd_keep_rec *rec, const char *host, uint64_t token)
{
	memset(rec, 0, sizeof(*rec));
	rec->held = 1;
	rec->token = token;
	id_of(rec->host_id, host);
}

/* Every slab still released gets (fake) memory, as populate_all() does. */
static void populate_rest(struct ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->d.pool.nr_slabs; i++) {
		struct fsd_slab *slab = &c->d.pool.slabs[i];

		if (slab->state != FSD_SLAB_RELEASED)
			continue;
		assert_int_equal(fake_ops.slab_populate(&c->d, slab), 0);
		assert_int_equal(fsd_pool_populated(&c->d.pool, slab), 0);
	}
}

/*
 * A donor of @nr slabs, with its pool-state table, that adopted @rec
 * (@nr_rec records of the last farswapd) at T0; host-a and host-b
 * connected, both offering FARSWAP_FEAT_RESUME.
 */
static void start(struct ctx *c, uint32_t nr, const struct fsd_keep_rec *rec,
		  uint32_t nr_rec)
{
	memset(c, 0, sizeof(*c));
	c->f.rand_state = 42;
	assert_int_equal(fsd_donor_init(&c->d, nr, SLAB, &fake_ops, &c->f), 0);
	memcpy(c->d.donor_id, "donor-1", 7);
	c->d.headroom = 1ull << 30;
	c->d.hysteresis = 512ull << 20;
	assert_true(fsd_keep_size(nr) <= sizeof(c->table));
	fsd_keep_format(c->table, nr, SLAB, 3);
	fsd_keep_attach(&c->keep, c->table);
	c->d.pool.keep = &c->keep;
	fsd_donor_adopt(&c->d, rec, nr_rec, T0, GRACE, &c->adopted);
	populate_rest(c);
	c->f.populates = 0;
	c->a = fake_session(&c->d, "host-a", 2);
	c->b = fake_session(&c->d, "host-b", 2);
	assert_non_null(c->a);
	assert_non_null(c->b);
	assert_true(c->a->features & FARSWAP_FEAT_RESUME);
}

/* The usual restart: slabs 1 and 2 were host-a's, 5 host-b's. */
static int setup(void **state)
{
	struct fsd_keep_rec rec[NR];

	memset(rec, 0, sizeof(rec));
	held(&rec[1], "host-a", TOKEN_A);
	held(&rec[2], "host-a", TOKEN_A + 1);
	held(&rec[5], "host-b", TOKEN_B);
	start(&C, NR, rec, NR);
	*state = &C;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	assert_true(fsd_pool_consistent(&c->d.pool));
	fake_donor_exit(&c->d);
	return 0;
}

static int send_at(struct ctx *c, struct fsd_session *s,
		   const union farswap_msg *m, uint64_t now)
{
	return fsd_handle_msg(&c->d, s, m, le16_to_cpu(m->hdr.length), now);
}

static const struct farswap_slab_resume_rep *
resume_at(struct ctx *c, struct fsd_session *s, uint32_t id, uint64_t token,
	  uint64_t size, uint64_t now)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_RESUME_REQ, V, 0x77);
	m.resume_req.slab_id = cpu_to_le32(id);
	m.resume_req.resume = cpu_to_le64(token);
	m.resume_req.slab_size = cpu_to_le64(size);
	assert_int_equal(send_at(c, s, &m, now), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type,
			 FARSWAP_MSG_SLAB_RESUME_REP);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x77);
	return &fake_last(&c->f)->resume_rep;
}

static const struct farswap_slab_resume_rep *
resume(struct ctx *c, struct fsd_session *s, uint32_t id, uint64_t token)
{
	return resume_at(c, s, id, token, SLAB, T0 + 10);
}

static const struct farswap_slab_alloc_rep *alloc(struct ctx *c,
						  struct fsd_session *s)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 0xabc);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(send_at(c, s, &m, T0 + 10), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_SLAB_ALLOC_REP);
	return &fake_last(&c->f)->alloc_rep;
}

static struct fsd_slab *slab_of(struct ctx *c, uint32_t id)
{
	return fsd_pool_get(&c->d.pool, id);
}

static void test_adopted_slabs_are_kept(void **state)
{
	struct ctx *c = *state;
	const struct fsd_keep_rec *r;
	uint8_t a[FARSWAP_ID_LEN];

	assert_int_equal(c->adopted.slabs, 3);
	assert_int_equal(c->adopted.hosts, 2);
	assert_int_equal(c->adopted.dropped, 0);
	assert_int_equal(c->d.pool.nr_kept, 3);
	assert_int_equal(c->d.pool.nr_free, NR - 3);
	assert_int_equal(slab_of(c, 1)->kept_until, T0 + GRACE);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	assert_int_equal(slab_of(c, 5)->state, FSD_SLAB_KEPT);
	assert_non_null(slab_of(c, 1)->mem);	/* mapped: content and all */
	assert_false(slab_of(c, 1)->dirty);
	/* The new table holds them again, for the next restart. */
	id_of(a, "host-a");
	r = fsd_keep_get(&c->keep, 2);
	assert_int_equal(r->held, 1);
	assert_int_equal(r->token, TOKEN_A + 1);
	assert_memory_equal(r->host_id, a, FARSWAP_ID_LEN);
	assert_int_equal(fsd_keep_get(&c->keep, 3)->held, 0);
	assert_true(fsd_pool_consistent(&c->d.pool));
}

/* Nobody else gets a kept slab: only the free ones are granted. */
static void test_kept_never_granted(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;
	uint32_t i, id;

	for (i = 0; i < NR - 3; i++) {
		r = alloc(c, c->b);
		assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
		id = le32_to_cpu(r->slab_id);
		assert_true(id != 1 && id != 2 && id != 5);
	}
	r = alloc(c, c->a);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.pool.nr_kept, 3);
}

static void test_alloc_token_only_with_resume(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_alloc_rep *r;
	struct fsd_slab *slab;
	uint64_t t1;

	r = alloc(c, c->a);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	t1 = le64_to_cpu(r->resume);
	assert_true(t1 != 0);
	slab = slab_of(c, le32_to_cpu(r->slab_id));
	assert_int_equal(slab->resume, t1);
	/* Written before the reply went out. */
	assert_int_equal(fsd_keep_get(&c->keep, slab->id)->held, 1);
	assert_int_equal(fsd_keep_get(&c->keep, slab->id)->token, t1);
	r = alloc(c, c->a);
	assert_true(le64_to_cpu(r->resume) != 0);
	assert_true(le64_to_cpu(r->resume) != t1);

	/* A host that does not offer FARSWAP_FEAT_RESUME gets no token. */
	c->b->features &= ~FARSWAP_FEAT_RESUME;
	r = alloc(c, c->b);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(r->resume, 0);
	assert_int_equal(fsd_keep_get(&c->keep, le32_to_cpu(r->slab_id))->held,
			 0);
}

/* Freed for any reason: the record goes, the next farswapd keeps nothing. */
static void test_record_dropped_when_freed(void **state)
{
	struct ctx *c = *state;
	union farswap_msg m;
	uint32_t id, id2;

	id = le32_to_cpu(alloc(c, c->a)->slab_id);
	id2 = le32_to_cpu(alloc(c, c->a)->slab_id);
	assert_int_equal(fsd_keep_get(&c->keep, id)->held, 1);
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 0xdef);
	m.free_req.slab_id = cpu_to_le32(id);
	assert_int_equal(send_at(c, c->a, &m, T0 + 20), 0);
	assert_int_equal(fsd_keep_get(&c->keep, id)->held, 0);
	assert_int_equal(slab_of(c, id)->resume, 0);
	/* The session ends: its slabs' records go too. */
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "test");
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(fsd_keep_get(&c->keep, id2)->held, 0);
	/* The kept slabs are not the session's: they stay kept. */
	assert_int_equal(fsd_keep_get(&c->keep, 1)->held, 1);
}

static void test_resume_ok(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	struct fsd_slab *slab = slab_of(c, 2);
	uint64_t token;

	r = resume(c, c->a, 2, TOKEN_A + 1);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(le32_to_cpu(r->slab_id), 2);
	assert_int_equal(le64_to_cpu(r->addr), FSD_SLAB_IOVA);	/* zero-based */
	assert_int_equal(le64_to_cpu(r->length), SLAB);
	assert_true(le32_to_cpu(r->rkey) != 0);
	assert_int_equal(le32_to_cpu(r->rkey), slab->rkey);
	token = le64_to_cpu(r->resume);
	assert_true(token != 0 && token != TOKEN_A + 1);
	assert_int_equal(slab->state, FSD_SLAB_HELD);
	assert_ptr_equal(slab->owner, c->a);
	assert_int_equal(c->a->nr_slabs, 1);
	assert_int_equal(c->d.pool.nr_kept, 2);
	assert_int_equal(c->d.cnt.resumed, 1);
	assert_int_equal(c->d.cnt.grants, 0);	/* not a grant */
	assert_int_equal(c->f.grants, 1);	/* registered once */
	assert_int_equal(c->f.zeroed, 0);	/* its content kept */
	assert_int_equal(fsd_keep_get(&c->keep, 2)->token, token);
	/* Not charged to its share: it had the slab before. */
	assert_int_equal(le32_to_cpu(r->slabs_free), NR - 3);
}

/* The same request again answers the same, without registering twice. */
static void test_resume_retry(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	uint64_t token;
	uint32_t rkey;

	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	token = le64_to_cpu(r->resume);
	rkey = le32_to_cpu(r->rkey);
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(le64_to_cpu(r->resume), token);
	assert_int_equal(le32_to_cpu(r->rkey), rkey);
	assert_int_equal(c->f.grants, 1);
	assert_int_equal(c->a->nr_slabs, 1);
	assert_int_equal(c->d.cnt.resumed, 1);
	/* The new token is for the next restart, not for this one. */
	r = resume(c, c->a, 1, token);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	/* Nor does another host get it with the old one. */
	r = resume(c, c->b, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
}

static void test_resume_wrong_token(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	r = resume(c, c->a, 1, TOKEN_A ^ 1);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	/* A refusal names the slab, and nothing else. */
	assert_int_equal(le32_to_cpu(r->slab_id), 1);
	assert_int_equal(r->addr, 0);
	assert_int_equal(r->rkey, 0);
	assert_int_equal(r->resume, 0);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	/* No such slab, or one not kept. */
	r = resume(c, c->a, NR + 5, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	r = resume(c, c->a, 3, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	assert_int_equal(c->d.cnt.resume_refused, 3);
	assert_int_equal(c->f.grants, 0);
	/* The right one still works after wrong ones. */
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
}

static void test_resume_other_host(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	r = resume(c, c->b, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_DENIED);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	assert_int_equal(c->d.cnt.resume_refused, 1);
	r = resume(c, c->b, 5, TOKEN_B);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
}

/* A slab kept for a proven id goes only to a session that proved it. */
static void test_resume_proven_id(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	slab_of(c, 1)->kept_proof = FSD_PROOF_HOST_KEY;
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_DENIED);
	c->a->proof = FSD_PROOF_HOST_KEY;
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(fsd_keep_get(&c->keep, 1)->proof, FSD_PROOF_HOST_KEY);
}

static void test_resume_wrong_size(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	r = resume_at(c, c->a, 1, TOKEN_A, SLAB * 2, T0 + 10);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_SLAB_SIZE);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
}

static void test_resume_needs_feature(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	c->a->features &= ~FARSWAP_FEAT_RESUME;
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_INVALID);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
}

/* After the grace: refused, then freed at the next tick. */
static void test_resume_after_grace(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	struct fsd_meminfo mi = { .mem_available = 64ull << 30,
				  .mem_total = 128ull << 30 };

	r = resume_at(c, c->a, 1, TOKEN_A, SLAB, T0 + GRACE);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	fsd_donor_tick(&c->d, &mi, T0 + GRACE - 1);
	assert_int_equal(c->d.pool.nr_kept, 3);
	fsd_donor_tick(&c->d, &mi, T0 + GRACE);
	assert_int_equal(c->d.pool.nr_kept, 0);
	assert_int_equal(c->d.cnt.kept_expired, 3);
	assert_int_equal(c->f.releases, 3);	/* punched out */
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_RELEASED);
	assert_int_equal(fsd_keep_get(&c->keep, 1)->held, 0);
	assert_int_equal(fsd_keep_get(&c->keep, 5)->held, 0);
	/* Later ticks take the memory back, zero-filled, for anyone. */
	fsd_donor_tick(&c->d, &mi, T0 + GRACE + 1000);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_FREE);
	assert_false(slab_of(c, 1)->dirty);
}

static void test_resume_unauthenticated(void **state)
{
	struct ctx *c = *state;
	struct fsd_auth_key k = { .len = 32 };
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;
	struct fsd_session *s;
	union farswap_msg m;

	memset(k.bytes, 0x42, k.len);
	fsd_donor_set_key(&c->d, &k, "/etc/farswap/key");
	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 64);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	strncpy((char *)req.host_id, "host-a", FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:5001", 0);
	assert_non_null(s);
	fsd_session_established(&c->d, s, 0);
	assert_false(fsd_session_authenticated(s));
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_RESUME_REQ, V, 0x77);
	m.resume_req.slab_id = cpu_to_le32(1);
	m.resume_req.resume = cpu_to_le64(TOKEN_A);
	m.resume_req.slab_size = cpu_to_le64(SLAB);
	send_at(c, s, &m, T0 + 10);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	assert_int_equal(c->d.cnt.auth_denied_msgs, 1);
	assert_int_equal(c->f.grants, 0);
}

/* While draining: given back, content and all, then asked for. */
static void test_resume_while_draining(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	unsigned int i;
	bool asked = false;

	fsd_donor_drain(&c->d, T0 + 5);
	assert_int_equal(le16_to_cpu(alloc(c, c->a)->status),
			 FARSWAP_ST_NO_SPACE);
	r = resume(c, c->a, 2, TOKEN_A + 1);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(r->slabs_free, 0);
	fsd_drain_tick(&c->d, T0 + 20);
	for (i = 0; i < c->f.nr_sent; i++)
		if (c->f.sent[i].hdr.type == FARSWAP_MSG_RECLAIM_REQ &&
		    le32_to_cpu(c->f.sent[i].reclaim_req.slab_id) == 2)
			asked = true;
	assert_true(asked);
}

/* Kept slabs are pages too: a drain is not over until they are. */
static void test_drain_waits_for_kept(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = { .mem_available = 64ull << 30,
				  .mem_total = 128ull << 30 };
	char buf[2048];

	fsd_donor_drain(&c->d, T0 + 5);
	assert_int_equal(c->d.pool.nr_held, 0);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINING);
	assert_true(fsd_drain_report(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nwaiting kept: 3 slabs"));
	fsd_donor_tick(&c->d, &mi, T0 + GRACE);
	assert_int_equal(fsd_drain_state(&c->d), FSD_DRAIN_DRAINED);
}

/* Not charged: a host at its cap, or out of alloc-rate, still resumes. */
static void test_resume_not_charged(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;

	/* Its two kept slabs count: one more is its cap. */
	c->d.lim.max_slabs_per_host = 3;
	c->d.lim.alloc_rate = 1;
	c->d.lim.alloc_burst = 1;
	assert_int_equal(le16_to_cpu(alloc(c, c->a)->status), FARSWAP_ST_OK);
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	r = resume(c, c->a, 2, TOKEN_A + 1);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(c->a->nr_slabs, 3);
	assert_int_equal(le16_to_cpu(alloc(c, c->a)->status),
			 FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_rate_limited, 0);
}

/* Registration fails, or the host leaves mid-way: kept again, same token. */
static void test_resume_undone_keeps_slab(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	struct fsd_session *again;
	union farswap_msg m;

	c->f.fail_grant = 1;
	r = resume(c, c->a, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_INTERNAL);
	assert_int_equal(le32_to_cpu(r->slab_id), 1);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	assert_int_equal(c->a->nr_slabs, 0);
	c->f.fail_grant = 0;

	/* host-a reconnects; its resume goes to the worker, then it leaves. */
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "reconnecting");
	again = fake_session(&c->d, "host-a", 2);
	assert_non_null(again);
	c->f.async_grant = 1;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_RESUME_REQ, V, 0x78);
	m.resume_req.slab_id = cpu_to_le32(1);
	m.resume_req.resume = cpu_to_le64(TOKEN_A);
	m.resume_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(send_at(c, again, &m, T0 + 10), 0);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_HELD);
	assert_int_equal(c->f.nr_pending, 1);
	fsd_session_close(&c->d, again, FSD_LOG_DEBUG, "host left");
	assert_int_equal(fake_grant_finish(&c->d, 0), -ESHUTDOWN);
	assert_int_equal(slab_of(c, 1)->state, FSD_SLAB_KEPT);
	assert_null(slab_of(c, 1)->mr);
	assert_int_equal(fsd_keep_get(&c->keep, 1)->token, TOKEN_A);
	c->f.async_grant = 0;
	r = resume(c, c->b, 1, TOKEN_A);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_DENIED);
	assert_true(fsd_pool_consistent(&c->d.pool));
}

/*
 * A session's end (FARSWAP_FEAT_KEEP).  A session of @host that offers
 * FARSWAP_FEAT_KEEP, as farswap.ko does.
 */
static struct fsd_session *keep_session(struct ctx *c, const char *host)
{
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 128);
	req.features |= cpu_to_le32(FARSWAP_FEAT_KEEP);
	strncpy((char *)req.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:5002", 0);
	assert_non_null(s);
	fsd_session_established(&c->d, s, 0);
	return s;
}

/* @s is granted a slab; its id and token in @id and @token. */
static void grant_to(struct ctx *c, struct fsd_session *s, uint32_t *id,
		     uint64_t *token)
{
	const struct farswap_slab_alloc_rep *r = alloc(c, s);

	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	*id = le32_to_cpu(r->slab_id);
	*token = le64_to_cpu(r->resume);
	assert_true(*token != 0);
}

static void free_session_req(struct ctx *c, struct fsd_session *s)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 0x99);
	m.free_req.flags = cpu_to_le32(FARSWAP_FREE_SESSION);
	assert_int_equal(send_at(c, s, &m, T0 + 20), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_SLAB_FREE_REP);
}

/*
 * A session that ends without its host (a transport error) leaves its
 * slabs kept, deregistered at once; the host takes them back in its next
 * session, content and all.
 */
static void test_session_end_keeps_slabs(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	struct fsd_session *s = keep_session(c, "host-k"), *again;
	uint64_t t1, t2, zeroed;
	uint32_t id1, id2;

	assert_true(s->features & FARSWAP_FEAT_KEEP);
	grant_to(c, s, &id1, &t1);
	grant_to(c, s, &id2, &t2);
	zeroed = c->f.zeroed;
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_KEPT);
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_KEPT);
	assert_null(slab_of(c, id1)->mr);	/* no old rkey reaches it */
	assert_int_equal(c->f.revokes, 2);
	assert_int_equal(c->d.cnt.kept, 2);
	assert_int_equal(c->d.pool.nr_kept, 5);
	assert_int_equal(s->nr_slabs, 0);
	/* Its pool-state records stay: a restart now keeps them too. */
	assert_int_equal(fsd_keep_get(&c->keep, id1)->held, 1);
	assert_int_equal(fsd_keep_get(&c->keep, id1)->token, t1);
	fsd_session_free(&c->d, s);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_KEPT);

	/* Nobody else has them, not even with the token. */
	r = resume_at(c, c->b, id1, t1, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_DENIED);
	again = keep_session(c, "host-k");
	r = resume_at(c, again, id1, t1, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	r = resume_at(c, again, id2, t2, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(again->nr_slabs, 2);
	assert_int_equal(c->f.zeroed, zeroed);	/* content kept */
	assert_int_equal(c->d.cnt.resumed, 2);
}

/* Kept until resume-grace after the tick that saw them, then freed. */
static void test_session_end_kept_for_grace(void **state)
{
	struct ctx *c = *state;
	struct fsd_meminfo mi = { .mem_available = 64ull << 30,
				  .mem_total = 128ull << 30 };
	const struct farswap_slab_resume_rep *r;
	struct fsd_session *s = keep_session(c, "host-k");
	uint64_t t1, at = T0 + GRACE + 5000;
	uint32_t id1;

	grant_to(c, s, &id1, &t1);
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	fsd_donor_tick(&c->d, &mi, at);
	assert_int_equal(slab_of(c, id1)->kept_until, at + GRACE);
	/* The restart's kept slabs went at T0 + GRACE; this one stays. */
	assert_int_equal(c->d.pool.nr_kept, 1);
	fsd_donor_tick(&c->d, &mi, at + GRACE - 1);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_KEPT);
	s = keep_session(c, "host-k");
	r = resume_at(c, s, id1, t1, SLAB, at + GRACE);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	fsd_donor_tick(&c->d, &mi, at + GRACE);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_RELEASED);
	assert_int_equal(c->d.cnt.kept_expired, 4);
	assert_int_equal(fsd_keep_get(&c->keep, id1)->held, 0);
}

/* The host's goodbye gives everything back: nothing kept at the end. */
static void test_goodbye_frees(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *s = keep_session(c, "host-k");
	uint64_t t1, t2;
	uint32_t id1, id2;

	grant_to(c, s, &id1, &t1);
	grant_to(c, s, &id2, &t2);
	free_session_req(c, s);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->free_rep.status),
			 FARSWAP_ST_OK);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_FREE);
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_FREE);
	assert_int_equal(s->nr_slabs, 0);
	assert_int_equal(c->d.cnt.frees, 2);
	assert_int_equal(fsd_keep_get(&c->keep, id1)->held, 0);
	/* A slab granted after it goes with the session too. */
	grant_to(c, s, &id1, &t1);
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	fsd_session_free(&c->d, s);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_FREE);
	assert_int_equal(c->d.cnt.kept, 0);
	assert_int_equal(c->d.pool.nr_kept, 3);	/* the restart's, as before */
}

/*
 * Without FARSWAP_FEAT_KEEP (an older farswap.ko, fsclient) a session's
 * slabs go when it ends, as they always did, and its goodbye is refused.
 */
static void test_no_keep_without_feature(void **state)
{
	struct ctx *c = *state;
	uint64_t t1;
	uint32_t id1;

	assert_false(c->a->features & FARSWAP_FEAT_KEEP);
	grant_to(c, c->a, &id1, &t1);
	free_session_req(c, c->a);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->free_rep.status),
			 FARSWAP_ST_INVALID);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_HELD);
	fsd_session_close(&c->d, c->a, FSD_LOG_DEBUG, "host disconnected");
	fsd_session_free(&c->d, c->a);
	c->a = NULL;
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_FREE);
	assert_int_equal(c->d.cnt.kept, 0);
}

/* Nor when the donor took the slab back, or the host is no longer allowed. */
static void test_no_keep_revoked_or_disallowed(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *s = keep_session(c, "host-k");
	uint64_t t1, t2;
	uint32_t id1, id2;

	grant_to(c, s, &id1, &t1);
	grant_to(c, s, &id2, &t2);
	slab_of(c, id2)->revoke_at = T0 + 100;
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	fsd_session_free(&c->d, s);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_KEPT);
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_FREE);
	assert_int_equal(c->d.cnt.kept, 1);

	s = keep_session(c, "host-j");
	grant_to(c, s, &id2, &t2);
	s->disallowed = true;
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_HELD);
	fsd_session_free(&c->d, s);
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_FREE);
	assert_int_equal(c->d.cnt.kept, 1);
}

/*
 * The host's side saw its session fail and asks for its slabs in a new
 * one before the donor saw the old one end: the token ends the old
 * session, and the slab is resumed.  A wrong token, or another host, ends
 * nothing.
 */
static void test_resume_ends_stale_session(void **state)
{
	struct ctx *c = *state;
	const struct farswap_slab_resume_rep *r;
	struct fsd_session *old = keep_session(c, "host-k"), *s, *x;
	uint64_t t1, t2;
	uint32_t id1, id2;

	c->d.lim.max_sessions_per_address = 0;	/* all from 10.0.0.1 */
	grant_to(c, old, &id1, &t1);
	grant_to(c, old, &id2, &t2);
	s = keep_session(c, "host-k");
	x = keep_session(c, "host-x");
	r = resume_at(c, x, id1, t1, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	r = resume_at(c, s, id1, t1 ^ 1, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_NO_ENTRY);
	assert_false(old->closing);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_HELD);

	r = resume_at(c, s, id1, t1, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_true(old->closing);
	assert_ptr_equal(slab_of(c, id1)->owner, s);
	assert_int_equal(slab_of(c, id2)->state, FSD_SLAB_KEPT);
	r = resume_at(c, s, id2, t2, SLAB, T0 + 30);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(s->nr_slabs, 2);
	fsd_session_free(&c->d, old);
	assert_ptr_equal(slab_of(c, id2)->owner, s);
}

/* Kept slabs count toward the host's cap: reconnecting gets it no more. */
static void test_kept_count_toward_cap(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *s = keep_session(c, "host-k");
	uint64_t t1;
	uint32_t id1;

	c->d.lim.max_slabs_per_host = 2;
	grant_to(c, s, &id1, &t1);
	grant_to(c, s, &id1, &t1);
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	s = keep_session(c, "host-k");
	assert_int_equal(le16_to_cpu(alloc(c, s)->status), FARSWAP_ST_NO_SPACE);
	assert_int_equal(c->d.cnt.alloc_capped, 1);
	/* Another host is not charged for them. */
	assert_int_equal(le16_to_cpu(alloc(c, c->b)->status), FARSWAP_ST_OK);
}

/* A resume-grace of 0 keeps nothing: the feature is not granted. */
static void test_keep_needs_grace(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *s;
	uint64_t t1;
	uint32_t id1;

	c->d.resume_grace_ms = 0;
	s = keep_session(c, "host-k");
	assert_false(s->features & FARSWAP_FEAT_KEEP);
	assert_false(s->features & FARSWAP_FEAT_RESUME);
	assert_int_equal(le16_to_cpu(alloc(c, s)->status), FARSWAP_ST_OK);
	id1 = le32_to_cpu(fake_last(&c->f)->alloc_rep.slab_id);
	t1 = le64_to_cpu(fake_last(&c->f)->alloc_rep.resume);
	assert_int_equal(t1, 0);
	fsd_session_close(&c->d, s, FSD_LOG_DEBUG, "host disconnected");
	fsd_session_free(&c->d, s);
	assert_int_equal(slab_of(c, id1)->state, FSD_SLAB_FREE);
}

/* A smaller pool: what lies beyond it cannot be kept, and is said. */
static void test_adopt_shrunk_pool(void **state)
{
	struct fsd_keep_rec rec[NR];
	struct ctx *c = &C;

	(void)state;
	memset(rec, 0, sizeof(rec));
	held(&rec[1], "host-a", TOKEN_A);
	held(&rec[6], "host-a", TOKEN_A + 6);
	held(&rec[7], "host-b", TOKEN_B);
	start(c, 4, rec, NR);
	assert_int_equal(c->adopted.slabs, 1);
	assert_int_equal(c->adopted.hosts, 1);
	assert_int_equal(c->adopted.dropped, 2);
	assert_int_equal(c->adopted.dropped_hosts, 2);
	assert_int_equal(c->d.pool.nr_kept, 1);
	assert_int_equal(c->d.pool.nr_free, 3);
	assert_true(fsd_pool_consistent(&c->d.pool));
	teardown((void **)&c);
}

/* What farswapd --drain --unless-restarting asks before skipping the drain. */
static void test_lost_on_restart(void **state)
{
	struct ctx *c = *state;

	alloc(c, c->a);
	c->b->features &= ~FARSWAP_FEAT_RESUME;
	alloc(c, c->b);
	alloc(c, c->b);
	/* No fd store: every held slab dies with the process. */
	assert_int_equal(fsd_slabs_lost_on_restart(&c->d), 3);
	c->d.pool_kept = true;
	assert_int_equal(fsd_slabs_lost_on_restart(&c->d), 2);
}

/*
 * resume-grace 0 turns resuming off: not offered to hosts (nor to a
 * module that offers it without doing it), so a restart drains first.
 */
static void test_grace_zero_turns_resume_off(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *s;
	const struct farswap_slab_alloc_rep *r;
	struct farswap_conn_rep rep;

	c->d.resume_grace_ms = 0;
	c->d.pool_kept = true;
	s = fake_session(&c->d, "host-c", 1);
	assert_non_null(s);
	assert_false(s->features & FARSWAP_FEAT_RESUME);
	fsd_conn_rep_build(&c->d, s, &rep);
	assert_false(le32_to_cpu(rep.features) & FARSWAP_FEAT_RESUME);
	r = alloc(c, s);
	assert_int_equal(le16_to_cpu(r->status), FARSWAP_ST_OK);
	assert_int_equal(r->resume, 0);
	assert_int_equal(fsd_slabs_lost_on_restart(&c->d), 1);
}

static void test_stats_show_resume(void **state)
{
	struct ctx *c = *state;
	char buf[8192];

	resume(c, c->a, 1, TOKEN_A);
	resume(c, c->a, 2, TOKEN_A ^ 7);
	assert_true(fsd_donor_stats(&c->d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nslabs_kept 2\n"));
	assert_non_null(strstr(buf, " resumed_slabs=1 resume_refused=1 kept_expired_slabs=0 "));
	assert_non_null(strstr(buf, "\nslabs_lost_on_restart 1\n"));
}

/* The same numbers as JSON and as Prometheus metrics. */
static void test_json_and_metrics_show_resume(void **state)
{
	struct ctx *c = *state;
	size_t len;
	char *text;

	resume(c, c->a, 1, TOKEN_A);
	text = fsd_donor_json_text(&c->d, &len);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"slabs_kept\": 2"));
	assert_non_null(strstr(text, "\"resumed_slabs\": 1"));
	assert_non_null(strstr(text, "\"resume_refused\": 0"));
	free(text);
	text = fsd_donor_metrics_text(&c->d, &len);
	assert_non_null(text);
	assert_non_null(strstr(text, "\nfarswapd_kept_slabs 2\n"));
	assert_non_null(strstr(text, "\nfarswapd_resumed_slabs_total 1\n"));
	assert_non_null(strstr(text, "\nfarswapd_kept_expired_slabs_total 0\n"));
	free(text);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_adopted_slabs_are_kept),
		T(test_kept_never_granted),
		T(test_alloc_token_only_with_resume),
		T(test_record_dropped_when_freed),
		T(test_resume_ok),
		T(test_resume_retry),
		T(test_resume_wrong_token),
		T(test_resume_other_host),
		T(test_resume_proven_id),
		T(test_resume_wrong_size),
		T(test_resume_needs_feature),
		T(test_resume_after_grace),
		T(test_resume_unauthenticated),
		T(test_resume_while_draining),
		T(test_drain_waits_for_kept),
		T(test_resume_not_charged),
		T(test_resume_undone_keeps_slab),
		T(test_session_end_keeps_slabs),
		T(test_session_end_kept_for_grace),
		T(test_goodbye_frees),
		T(test_no_keep_without_feature),
		T(test_no_keep_revoked_or_disallowed),
		T(test_resume_ends_stale_session),
		T(test_kept_count_toward_cap),
		T(test_keep_needs_grace),
		cmocka_unit_test(test_adopt_shrunk_pool),
		T(test_lost_on_restart),
		T(test_grace_zero_turns_resume_off),
		T(test_stats_show_resume),
		T(test_json_and_metrics_show_resume),
	};

	fsd_log_init(FSD_LOG_ERR - 1, false);	/* quiet */
	return cmocka_run_group_tests_name("resume", tests, NULL, NULL);
}
