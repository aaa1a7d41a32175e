// SPDX-License-Identifier: GPL-2.0
/*
 * A restart, end to end but for RDMA: a donor whose slabs are real
 * memory in the pool's memfd (slabmem.c) grants a slab, its host writes
 * to it, and the donor stops keeping the pool (the fds outlive it, as in
 * systemd's fd store); the next donor checks and adopts the pool
 * (poolfd.c), and the host resumes the slab with its content.  A slab
 * freed before the restart comes back zero-filled, never with its last
 * host's pages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "poolfd.h"

#define MiB (1ull << 20)
#define SLAB (2 * MiB)
#define NR 3
#define V FARSWAP_VERSION_MAX
#define GRACE 60000

/* One donor process: its pool, its logic, what it last sent. */
struct proc {
	struct fsd_poolfd pf;
	struct fsd_donor d;
	union farswap_msg last;
	uint64_t rand;
	uint32_t rkey;
};

static struct proc *P(struct fsd_donor *d)
{
	return d->priv;
}

/* The ops of farswapd's verbs layer for memory; the fabric faked. */
static int mem_populate(struct fsd_donor *d, struct fsd_slab *slab)
{
	return fsd_slabmem_map(&P(d)->pf.mem, slab->id, &slab->mem);
}

static int mem_release(struct fsd_donor *d, struct fsd_slab *slab)
{
	fsd_slabmem_unmap(slab->mem, d->pool.slab_size);
	slab->mem = NULL;
	return fsd_slabmem_punch(&P(d)->pf.mem, slab->id);
}

static void mem_zero(struct fsd_donor *d, struct fsd_slab *slab, uint64_t off,
		     uint64_t len)
{
	(void)d;
	memset((uint8_t *)slab->mem + off, 0, len);
}

static int mem_grant(struct fsd_donor *d, struct fsd_session *s,
		     struct fsd_slab *slab)
{
	(void)s;
	if (slab->dirty)
		memset((uint8_t *)slab->mem + slab->clean_upto, 0,
		       d->pool.slab_size - slab->clean_upto);
	slab->dirty = false;
	slab->clean_upto = 0;
	slab->mr = slab;
	slab->rkey = ++P(d)->rkey;
	return 0;
}

static int mem_revoke(struct fsd_donor *d, struct fsd_slab *slab)
{
	(void)d;
	slab->mr = NULL;
	slab->rkey = 0;
	return 0;
}

static int mem_send(struct fsd_donor *d, struct fsd_session *s,
		    const union farswap_msg *m, size_t len,
		    unsigned int flags)
{
	(void)s;
	(void)len;
	(void)flags;
	P(d)->last = *m;
	return 0;
}

static int mem_random(struct fsd_donor *d, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		P(d)->rand = P(d)->rand * 6364136223846793005ull + 1;
		b[i] = (uint8_t)(P(d)->rand >> 56);
	}
	return 0;
}

static const struct fsd_ops mem_ops = {
	.slab_grant = mem_grant,
	.slab_zero = mem_zero,
	.slab_revoke = mem_revoke,
	.slab_release = mem_release,
	.slab_populate = mem_populate,
	.send = mem_send,
	.random = mem_random,
};

/*
 * A donor of @nr slabs starting as farswapd does: the handed fds (-1:
 * none) checked, the pool adopted or made, every other slab mapped.
 */
static bool start(struct proc *p, uint32_t nr, int pool, int state,
		  uint64_t seed)
{
	bool adopted = false;

	memset(p, 0, sizeof(*p));
	p->rand = seed;
	fsd_poolfd_init(&p->pf);
	assert_int_equal(fsd_donor_init(&p->d, nr, SLAB, &mem_ops, p), 0);
	if (pool >= 0)
		fsd_poolfd_check(&p->pf, pool, state, SLAB);
	assert_int_equal(fsd_poolfd_setup(&p->pf, &p->d, FSD_HUGE_NEVER, GRACE,
					  1000, "test", &adopted), 0);
	assert_int_equal(fsd_poolfd_populate(&p->d), 0);
	assert_true(fsd_pool_consistent(&p->d.pool));
	return adopted;
}

/*
 * The process ends keeping its pool (SIGTERM with the fd store): the
 * sessions close, their slabs are deregistered, the records stay, the
 * memory is unmapped.  Returns the fds the store would hold.
 */
static void stop_keeping(struct proc *p, int *pool, int *state)
{
	*pool = dup(p->pf.mem.fd);
	*state = dup(p->pf.state_fd);
	assert_true(*pool >= 0 && *state >= 0);
	p->pf.keep.frozen = true;
	while (p->d.sessions) {
		fsd_session_close(&p->d, p->d.sessions, FSD_LOG_DEBUG, "exit");
		fsd_session_free(&p->d, p->d.sessions);
	}
	fsd_poolfd_release(&p->pf, &p->d, true);
	fsd_donor_exit(&p->d);
}

static void stop(struct proc *p)
{
	while (p->d.sessions) {
		fsd_session_close(&p->d, p->d.sessions, FSD_LOG_DEBUG, "exit");
		fsd_session_free(&p->d, p->d.sessions);
	}
	fsd_poolfd_release(&p->pf, &p->d, true);
	fsd_donor_exit(&p->d);
}

static struct fsd_session *host(struct proc *p, const char *name)
{
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 1, 0, 64);
	strncpy((char *)req.host_id, name, FARSWAP_ID_LEN);
	fsd_conn_decide(&p->d, NULL, &req, sizeof(req), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);
	s = fsd_session_new(&p->d, &dec, "test", 0);
	assert_non_null(s);
	fsd_session_established(&p->d, s, 0);
	return s;
}

static const struct farswap_slab_alloc_rep *alloc(struct proc *p,
						  struct fsd_session *s)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, V, 1);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(fsd_handle_msg(&p->d, s, &m, sizeof(m.alloc_req),
					1000), 0);
	assert_int_equal(le16_to_cpu(p->last.alloc_rep.status), FARSWAP_ST_OK);
	return &p->last.alloc_rep;
}

static void free_slab(struct proc *p, struct fsd_session *s, uint32_t id)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, V, 2);
	m.free_req.slab_id = cpu_to_le32(id);
	assert_int_equal(fsd_handle_msg(&p->d, s, &m, sizeof(m.free_req),
					1000), 0);
}

static const struct farswap_slab_resume_rep *
resume(struct proc *p, struct fsd_session *s, uint32_t id, uint64_t token)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_RESUME_REQ, V, 3);
	m.resume_req.slab_id = cpu_to_le32(id);
	m.resume_req.resume = cpu_to_le64(token);
	m.resume_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(fsd_handle_msg(&p->d, s, &m, sizeof(m.resume_req),
					2000), 0);
	return &p->last.resume_rep;
}

static bool all_bytes(const void *mem, uint8_t c)
{
	const uint8_t *b = mem;
	uint64_t i;

	for (i = 0; i < SLAB; i++)
		if (b[i] != c)
			return false;
	return true;
}

static void test_restart_keeps_content(void **state)
{
	static struct proc a, b;
	uint32_t kept_id, freed_id;
	struct fsd_session *s;
	uint64_t token;
	int pool, st;

	(void)state;
	assert_false(start(&a, NR, -1, -1, 1));
	s = host(&a, "host-a");
	kept_id = le32_to_cpu(alloc(&a, s)->slab_id);
	token = le64_to_cpu(a.last.alloc_rep.resume);
	assert_true(token != 0);
	memset(fsd_pool_get(&a.d.pool, kept_id)->mem, 0xa5, SLAB);
	/* A slab the host wrote, then freed: its pages are not for anyone. */
	freed_id = le32_to_cpu(alloc(&a, s)->slab_id);
	memset(fsd_pool_get(&a.d.pool, freed_id)->mem, 0x33, SLAB);
	free_slab(&a, s, freed_id);
	stop_keeping(&a, &pool, &st);

	/* The next farswapd: the slab is kept, the freed one punched. */
	assert_true(start(&b, NR, pool, st, 2));
	assert_int_equal(b.d.pool.nr_kept, 1);
	assert_int_equal(fsd_pool_get(&b.d.pool, kept_id)->state,
			 FSD_SLAB_KEPT);
	assert_true(all_bytes(fsd_pool_get(&b.d.pool, freed_id)->mem, 0));
	s = host(&b, "host-a");
	resume(&b, s, kept_id, token);
	assert_int_equal(le16_to_cpu(b.last.resume_rep.status), FARSWAP_ST_OK);
	/* Zero-based: the same address as granted, nothing of the layout. */
	assert_int_equal(le64_to_cpu(b.last.resume_rep.addr), FSD_SLAB_IOVA);
	assert_true(all_bytes(fsd_pool_get(&b.d.pool, kept_id)->mem, 0xa5));
	assert_int_not_equal(le64_to_cpu(b.last.resume_rep.resume), token);
	assert_int_equal(fsd_keep_get(&b.pf.keep, kept_id)->token,
			 le64_to_cpu(b.last.resume_rep.resume));
	stop(&b);
}

/* Twice in a row, with the resumed slab's new token. */
static void test_two_restarts(void **state)
{
	static struct proc a, b, c;
	struct fsd_session *s;
	uint64_t token;
	uint32_t id;
	int pool, st;

	(void)state;
	start(&a, NR, -1, -1, 3);
	s = host(&a, "host-a");
	id = le32_to_cpu(alloc(&a, s)->slab_id);
	token = le64_to_cpu(a.last.alloc_rep.resume);
	memset(fsd_pool_get(&a.d.pool, id)->mem, 0x42, SLAB);
	stop_keeping(&a, &pool, &st);

	start(&b, NR, pool, st, 4);
	s = host(&b, "host-a");
	resume(&b, s, id, token);
	token = le64_to_cpu(b.last.resume_rep.resume);
	memset(fsd_pool_get(&b.d.pool, id)->mem, 0x43, SLAB);
	stop_keeping(&b, &pool, &st);

	start(&c, NR, pool, st, 5);
	s = host(&c, "host-a");
	resume(&c, s, id, token);
	assert_int_equal(le16_to_cpu(c.last.resume_rep.status), FARSWAP_ST_OK);
	assert_true(all_bytes(fsd_pool_get(&c.d.pool, id)->mem, 0x43));
	stop(&c);
}

/* Not kept (a plain SIGTERM without a store): closing the fds frees all. */
static void test_stop_without_store_frees(void **state)
{
	static struct proc a, b;
	struct fsd_session *s;
	int pool, st;

	(void)state;
	start(&a, NR, -1, -1, 6);
	s = host(&a, "host-a");
	alloc(&a, s);
	pool = dup(a.pf.mem.fd);
	st = dup(a.pf.state_fd);
	stop(&a);	/* the records go with the sessions */
	start(&b, NR, pool, st, 7);
	assert_int_equal(b.d.pool.nr_kept, 0);
	stop(&b);
}

/* A table this farswapd cannot trust: a fresh pool, the fds closed. */
static void test_untrusted_table_fresh_start(void **state)
{
	static struct proc a, b;
	struct fsd_keep_hdr *hdr;
	struct fsd_session *s;
	int pool, st;

	(void)state;
	start(&a, NR, -1, -1, 8);
	s = host(&a, "host-a");
	alloc(&a, s);
	hdr = a.pf.state_map;
	hdr->version = FSD_KEEP_VERSION + 1;
	stop_keeping(&a, &pool, &st);
	assert_false(start(&b, NR, pool, st, 9));
	assert_int_equal(b.d.pool.nr_kept, 0);
	assert_int_equal(fcntl(pool, F_GETFD), -1);	/* closed */
	assert_int_equal(fcntl(st, F_GETFD), -1);
	assert_true(b.pf.mem.fd >= 0);
	stop(&b);

	/* Another slab size: slab ids and lengths would mean other things. */
	start(&a, NR, -1, -1, 10);
	s = host(&a, "host-a");
	alloc(&a, s);
	stop_keeping(&a, &pool, &st);
	fsd_poolfd_init(&b.pf);
	assert_int_equal(fsd_poolfd_check(&b.pf, pool, st, SLAB * 2), -ERANGE);
	assert_int_equal(b.pf.nr_old, 0);
	assert_int_equal(b.pf.mem.fd, -1);
}

/* A smaller pool keeps what fits; a larger one grows the memfd. */
static void test_pool_resized(void **state)
{
	static struct proc a, b, c;
	struct fsd_session *s;
	uint64_t t[NR];
	uint32_t i;
	int pool, st;

	(void)state;
	start(&a, NR, -1, -1, 11);
	s = host(&a, "host-a");
	for (i = 0; i < NR; i++) {
		uint32_t id = le32_to_cpu(alloc(&a, s)->slab_id);

		t[id] = le64_to_cpu(a.last.alloc_rep.resume);
		memset(fsd_pool_get(&a.d.pool, id)->mem, 0x10 + id, SLAB);
	}
	stop_keeping(&a, &pool, &st);
	start(&b, NR - 1, pool, st, 12);
	assert_int_equal(b.d.pool.nr_kept, NR - 1);
	assert_int_equal(fsd_memfd_size(b.pf.mem.fd), (NR - 1) * SLAB);
	stop_keeping(&b, &pool, &st);
	start(&c, NR + 1, pool, st, 13);
	assert_int_equal(c.d.pool.nr_kept, NR - 1);
	assert_int_equal(c.d.pool.nr_free, 2);
	s = host(&c, "host-a");
	resume(&c, s, 1, t[1]);
	assert_int_equal(le16_to_cpu(c.last.resume_rep.status), FARSWAP_ST_OK);
	assert_true(all_bytes(fsd_pool_get(&c.d.pool, 1)->mem, 0x11));
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_keeps_content),
		cmocka_unit_test(test_two_restarts),
		cmocka_unit_test(test_stop_without_store_frees),
		cmocka_unit_test(test_untrusted_table_fresh_start),
		cmocka_unit_test(test_pool_resized),
	};

	fsd_log_init(FSD_LOG_ERR - 1, false);	/* quiet */
	return cmocka_run_group_tests_name("poolfd", tests, NULL, NULL);
}
