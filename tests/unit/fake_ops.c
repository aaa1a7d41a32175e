// SPDX-License-Identifier: GPL-2.0
/*
 * Fake struct fsd_ops for the unit tests and the fuzzer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_ops.h"

/* Slab "memory" is a distinct address per slab, never dereferenced. */
#define FAKE_BASE 0x7f0000000000ull

static struct fake *F(struct fsd_donor *d)
{
	return d->priv;
}

static int fake_grant(struct fsd_donor *d, struct fsd_session *s,
		      struct fsd_slab *slab)
{
	struct fake *f = F(d);

	(void)s;
	if (f->fail_grant)
		return -ENOMEM;
	if (!slab->mem || slab->mr || !slab->granting)
		abort();	/* the logic must never do this */
	if (f->async_grant) {
		if (f->nr_pending >= FAKE_PENDING_MAX)
			return -EAGAIN;
		f->pending[f->nr_pending++] = slab;
		return -EINPROGRESS;
	}
	slab->dirty = false;
	slab->clean_upto = 0;
	slab->mr = slab;
	slab->rkey = ++f->next_rkey;
	f->grants++;
	return 0;
}

static void fake_zero(struct fsd_donor *d, struct fsd_slab *slab,
		      uint64_t off, uint64_t len)
{
	if (slab->state != FSD_SLAB_FREE || !slab->dirty || !slab->mem ||
	    off != slab->clean_upto || off + len > d->pool.slab_size || !len)
		abort();	/* zeroing what is not a free dirty slab's rest */
	F(d)->zeroed += len;
}

/* The worker finished the oldest grant in flight (FIFO, as the real one). */
int fake_grant_finish(struct fsd_donor *d, int ret)
{
	struct fake *f = F(d);
	struct fsd_slab *slab;

	if (!f->nr_pending)
		return -ENOENT;
	slab = f->pending[0];
	memmove(f->pending, f->pending + 1,
		--f->nr_pending * sizeof(f->pending[0]));
	if (!slab->granting || slab->mr)
		abort();
	if (!ret) {
		slab->dirty = false;
		slab->clean_upto = 0;
		slab->mr = slab;
		slab->rkey = ++f->next_rkey;
		f->grants++;
	}
	return fsd_grant_done(d, slab, ret);
}

static void fake_grant_cancel(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (!slab->granting)
		abort();
	F(d)->cancels++;
}

static int fake_revoke(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (!slab->mr || slab->granting)
		abort();	/* revoking what was never granted */
	if (F(d)->fail_revoke)
		return -EIO;
	slab->mr = NULL;
	slab->rkey = 0;
	F(d)->revokes++;
	return 0;
}

static int fake_release(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (slab->mr || !slab->mem)
		abort();	/* releasing registered or absent memory */
	slab->mem = NULL;
	F(d)->releases++;
	return 0;
}

static int fake_populate(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (F(d)->fail_populate)
		return -ENOMEM;
	if (slab->mem)
		abort();
	slab->mem = (void *)(uintptr_t)(FAKE_BASE +
					(uint64_t)slab->id * d->pool.slab_size);
	F(d)->populates++;
	return 0;
}

static int fake_send(struct fsd_donor *d, struct fsd_session *s,
		     const union farswap_msg *m, size_t len, unsigned int flags)
{
	struct fake *f = F(d);
	unsigned int i;

	if (f->fail_send)
		return -ENOBUFS;
	/* Whatever the donor sends must pass the host's own check. */
	if ((len == le16_to_cpu(m->hdr.length) ?
	     farswap_msg_check(m, len, s->version) :
	     farswap_msg_check_tagged(m, len, s->version)) != FARSWAP_ST_OK)
		abort();
	f->sent_len[f->nr_sent % FAKE_SENT_MAX] = len;
	i = f->nr_sent % FAKE_SENT_MAX;
	f->sent[i] = *m;
	f->sent_to[i] = s;
	f->sent_flags[i] = flags;
	f->nr_sent++;
	return 0;
}

static void fake_close(struct fsd_donor *d, struct fsd_session *s)
{
	(void)s;
	F(d)->closes++;
}

static int fake_random(struct fsd_donor *d, void *buf, size_t len)
{
	struct fake *f = F(d);
	uint8_t *b = buf;
	size_t i;

	if (f->fail_random)
		return -EIO;
	for (i = 0; i < len; i++) {
		f->rand_state = f->rand_state * 6364136223846793005ull +
				1442695040888963407ull;
		b[i] = (uint8_t)(f->rand_state >> 56);
	}
	return 0;
}

const struct fsd_ops fake_ops = {
	.slab_grant = fake_grant,
	.slab_grant_cancel = fake_grant_cancel,
	.slab_zero = fake_zero,
	.slab_revoke = fake_revoke,
	.slab_release = fake_release,
	.slab_populate = fake_populate,
	.send = fake_send,
	.close = fake_close,
	.random = fake_random,
};

int fake_donor_init(struct fsd_donor *d, struct fake *f, uint32_t nr,
		    uint64_t slab_size)
{
	uint32_t i;
	int ret;

	memset(f, 0, sizeof(*f));
	f->rand_state = 42;
	ret = fsd_donor_init(d, nr, slab_size, &fake_ops, f);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		fake_populate(d, &d->pool.slabs[i]);
		fsd_pool_populated(&d->pool, &d->pool.slabs[i]);
	}
	f->populates = 0;
	memcpy(d->donor_id, "donor-1", 7);
	d->headroom = 1ull << 30;
	d->hysteresis = 512ull << 20;
	return 0;
}

void fake_donor_exit(struct fsd_donor *d)
{
	struct fsd_session *s;

	/* As the daemon's shutdown: close, let the worker finish, reap. */
	for (s = d->sessions; s; s = s->next)
		fsd_session_close(d, s, FSD_LOG_DEBUG, "exit");
	while (F(d)->nr_pending)
		fake_grant_finish(d, -ECANCELED);
	while (d->sessions)
		fsd_session_free(d, d->sessions);
	fsd_donor_exit(d);
}

const struct fsd_addr *fake_peer(void)
{
	static struct fsd_addr a;

	if (!a.family) {
		a.family = 2;	/* AF_INET, IPv4-mapped */
		a.bytes[10] = a.bytes[11] = 0xff;
		a.bytes[12] = 10;
		a.bytes[15] = 1;
	}
	return &a;
}

struct fsd_session *fake_session(struct fsd_donor *d, const char *host,
				 uint16_t nr_io)
{
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, nr_io, 0, 128);
	strncpy((char *)req.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(d, fake_peer(), &req, sizeof(req), &dec, 0);
	if (dec.status != FARSWAP_ST_OK)
		return NULL;
	s = fsd_session_new(d, &dec, "10.0.0.1:5000", 0);
	if (s)
		fsd_session_established(d, s, 0);
	return s;
}

const union farswap_msg *fake_last(const struct fake *f)
{
	if (!f->nr_sent)
		return NULL;
	return &f->sent[(f->nr_sent - 1) % FAKE_SENT_MAX];
}
