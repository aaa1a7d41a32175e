// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's logic, free of verbs calls: sessions, connect decisions,
 * control messages and the response to memory pressure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "donor.h"
#include "log.h"

int fsd_donor_init(struct fsd_donor *d, uint32_t nr_slabs, uint64_t slab_size,
		   const struct fsd_ops *ops, void *priv)
{
	memset(d, 0, sizeof(*d));
	d->ops = ops;
	d->priv = priv;
	d->max_hosts = 256;
	d->reclaim_deadline_ms = 10000;
	d->keepalive_ms = 15000;
	return fsd_pool_init(&d->pool, nr_slabs, slab_size);
}

/* Sessions must be gone (fsd_session_free) before this. */
void fsd_donor_exit(struct fsd_donor *d)
{
	fsd_pool_exit(&d->pool);
}

/* Slabs a host may get right now: none while short of memory. */
uint32_t fsd_slabs_offered(const struct fsd_donor *d)
{
	if (d->under_pressure || d->shutting_down)
		return 0;
	return d->pool.nr_free;
}

struct fsd_session *fsd_session_find(struct fsd_donor *d, uint64_t token)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next)
		if (s->token == token)
			return s;
	return NULL;
}

void fsd_conn_decide(struct fsd_donor *d, const void *pdata, size_t len,
		     struct fsd_conn_decision *dec)
{
	struct farswap_conn_req *req = &dec->req;
	struct fsd_session *s;
	unsigned int qid;

	memset(dec, 0, sizeof(*dec));
	dec->status = farswap_conn_req_check(pdata, len);
	if (dec->status != FARSWAP_ST_OK) {
		dec->why = "malformed connect request";
		return;
	}
	memcpy(req, pdata, sizeof(*req));
	dec->qtype = req->qtype;
	dec->qid = qid = le16_to_cpu(req->qid);
	dec->version = farswap_negotiate_version(req->ver_min, req->ver_max);
	if (!dec->version) {
		dec->status = FARSWAP_ST_VERSION;
		dec->why = "no protocol version in common";
		return;
	}
	if (req->qtype == FARSWAP_QT_CTRL) {
		if (d->shutting_down) {
			dec->status = FARSWAP_ST_BUSY;
			dec->why = "donor is shutting down";
		} else if (d->nr_sessions >= d->max_hosts) {
			dec->status = FARSWAP_ST_BUSY;
			dec->why = "too many hosts (max-hosts)";
		}
		return;
	}

	s = fsd_session_find(d, le64_to_cpu(req->session));
	if (!s || s->closing) {
		dec->status = FARSWAP_ST_NO_ENTRY;
		dec->why = "no session with that token";
	} else if (memcmp(s->host_id, req->host_id, FARSWAP_ID_LEN)) {
		dec->status = FARSWAP_ST_DENIED;
		dec->why = "session token belongs to another host";
	} else if (s->version < req->ver_min || s->version > req->ver_max) {
		dec->status = FARSWAP_ST_VERSION;
		dec->why = "I/O queue does not speak the session's version";
	} else if (le16_to_cpu(req->nr_io_queues) != s->nr_io_queues ||
		   qid > s->nr_io_queues) {
		dec->status = FARSWAP_ST_INVALID;
		dec->why = "I/O queue id out of the session's range";
	} else if (s->io_attached & (1ull << (qid - 1))) {
		dec->status = FARSWAP_ST_INVALID;
		dec->why = "I/O queue id already connected";
	} else {
		dec->session = s;
	}
}

static void format_name(const uint8_t *id, char *out)
{
	bool printable = id[0] != 0;
	size_t i, end = FARSWAP_ID_LEN;

	for (i = 0; i < FARSWAP_ID_LEN; i++) {
		if (!id[i]) {
			end = i;
			break;
		}
		if (id[i] < 0x21 || id[i] > 0x7e)
			printable = false;
	}
	for (i = end; i < FARSWAP_ID_LEN; i++)
		if (id[i])
			printable = false;
	if (printable) {
		memcpy(out, id, end);
		out[end] = '\0';
		return;
	}
	for (i = 0; i < FARSWAP_ID_LEN; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

struct fsd_session *fsd_session_new(struct fsd_donor *d,
				    const struct fsd_conn_decision *dec,
				    const char *peer)
{
	struct fsd_session *s;
	int tries;

	if (dec->status != FARSWAP_ST_OK || dec->qtype != FARSWAP_QT_CTRL)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (tries = 0; tries < 16; tries++) {
		if (d->ops->random(d, &s->token, sizeof(s->token))) {
			free(s);
			return NULL;
		}
		if (s->token && !fsd_session_find(d, s->token))
			break;
		s->token = 0;
	}
	if (!s->token) {
		free(s);
		return NULL;
	}
	s->nr = ++d->next_nr;
	memcpy(s->host_id, dec->req.host_id, FARSWAP_ID_LEN);
	format_name(s->host_id, s->name);
	snprintf(s->peer, sizeof(s->peer), "%s", peer ? peer : "?");
	s->version = (uint8_t)dec->version;
	s->features = le32_to_cpu(dec->req.features) & FSD_FEATURES;
	s->nr_io_queues = le16_to_cpu(dec->req.nr_io_queues);
	s->queue_depth = le32_to_cpu(dec->req.queue_depth);
	s->next = d->sessions;
	d->sessions = s;
	d->nr_sessions++;
	d->cnt.sessions++;
	return s;
}

int fsd_session_attach_io(struct fsd_session *s, unsigned int qid)
{
	uint64_t bit;

	if (!qid || qid > s->nr_io_queues || qid > 64)
		return -EINVAL;
	bit = 1ull << (qid - 1);
	if (s->io_attached & bit)
		return -EEXIST;
	s->io_attached |= bit;
	return 0;
}

void fsd_session_detach_io(struct fsd_session *s, unsigned int qid)
{
	if (qid && qid <= 64)
		s->io_attached &= ~(1ull << (qid - 1));
}

void fsd_conn_rep_build(const struct fsd_donor *d, const struct fsd_session *s,
			struct farswap_conn_rep *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->magic = cpu_to_le32(FARSWAP_MAGIC);
	rep->version = s->version;
	rep->features = cpu_to_le32(s->features);
	rep->session = cpu_to_le64(s->token);
	rep->slab_size = cpu_to_le64(d->pool.slab_size);
	rep->slabs_total = cpu_to_le32(d->pool.nr_slabs);
	rep->slabs_free = cpu_to_le32(fsd_slabs_offered(d));
	memcpy(rep->donor_id, d->donor_id, FARSWAP_ID_LEN);
}

void fsd_session_established(struct fsd_donor *d, struct fsd_session *s,
			     uint64_t now_ms)
{
	(void)d;
	if (s->established || s->closing)
		return;
	s->established = true;
	s->last_active = now_ms;
	pr_info("host %u (%s, %s): session up, version %u, %u I/O queues, depth %u",
		s->nr, s->name, s->peer, s->version, s->nr_io_queues,
		s->queue_depth);
}

/* Mark @s closing and start the teardown; logs once per session. */
void fsd_session_close(struct fsd_donor *d, struct fsd_session *s, int level,
		       const char *fmt, ...)
{
	char why[256];
	va_list ap;

	if (s->closing)
		return;
	s->closing = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fsd_log(level, "host %u (%s, %s): closing session: %s", s->nr,
		s->name, s->peer, why);
	if (d->ops->close)
		d->ops->close(d, s);
}

/* Deregister and free every slab @s holds. */
void fsd_session_drop_slabs(struct fsd_donor *d, struct fsd_session *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_HELD || slab->owner != s)
			continue;
		d->ops->slab_revoke(d, slab);
		fsd_pool_put(&d->pool, slab);
		n++;
	}
	if (n)
		pr_info("host %u (%s, %s): freed %u slabs", s->nr, s->name,
			s->peer, n);
	s->nr_slabs = 0;
	s->nr_reclaiming = 0;
	s->unsolicited = 0;
	s->notice_in_flight = false;
	s->offer_pending = false;
}

void fsd_session_free(struct fsd_donor *d, struct fsd_session *s)
{
	struct fsd_session **pp;

	fsd_session_drop_slabs(d, s);
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			d->nr_sessions--;
			break;
		}
	}
	free(s);
}

/* Why farswap_msg_check() refused @buf, in words, for the log. */
const char *fsd_msg_problem(const void *buf, size_t len, unsigned int version,
			    char *out, size_t outlen)
{
	const struct farswap_msg_hdr *h = buf;
	unsigned int want = 0;

	if (len >= sizeof(*h))
		want = farswap_msg_size(h->type);
	if (len < sizeof(*h) || len > FARSWAP_MSG_MAX) {
		snprintf(out, outlen, "length %zu outside %zu..%u", len,
			 sizeof(*h), FARSWAP_MSG_MAX);
	} else if (le32_to_cpu(h->magic) != FARSWAP_MAGIC) {
		snprintf(out, outlen, "bad magic 0x%08x",
			 le32_to_cpu(h->magic));
	} else if (h->version != version) {
		snprintf(out, outlen, "version %u, session speaks %u",
			 h->version, version);
	} else if (!want) {
		snprintf(out, outlen, "unknown message type %u", h->type);
	} else if (len != want || le16_to_cpu(h->length) != want) {
		snprintf(out, outlen,
			 "%s of %zu bytes, length field %u (wants %u)",
			 farswap_msg_type_str(h->type), len,
			 le16_to_cpu(h->length), want);
	} else if (farswap_msg_check(buf, len, version) != FARSWAP_ST_OK) {
		snprintf(out, outlen,
			 "%s with reserved bytes set or a field out of range",
			 farswap_msg_type_str(h->type));
	} else {
		snprintf(out, outlen, "valid %s",
			 farswap_msg_type_str(h->type));
	}
	return out;
}

static int send_msg(struct fsd_donor *d, struct fsd_session *s,
		    const union farswap_msg *m, unsigned int flags)
{
	int ret = d->ops->send(d, s, m, flags);

	if (ret) {
		fsd_session_close(d, s, FSD_LOG_WARN, "cannot send %s: %s",
				  farswap_msg_type_str(m->hdr.type),
				  strerror(-ret));
		return ret;
	}
	s->msgs_out++;
	return 0;
}

static int handle_alloc(struct fsd_donor *d, struct fsd_session *s,
			const union farswap_msg *m)
{
	const struct farswap_slab_alloc_req *req = &m->alloc_req;
	struct farswap_slab_alloc_rep *rep;
	struct fsd_slab *slab = NULL;
	union farswap_msg r;
	unsigned int st = FARSWAP_ST_OK;
	int ret;

	farswap_msg_init(&r, FARSWAP_MSG_SLAB_ALLOC_REP, s->version,
			 le64_to_cpu(req->hdr.cookie));
	rep = &r.alloc_rep;
	if (d->shutting_down) {
		st = FARSWAP_ST_BUSY;
	} else if (le64_to_cpu(req->slab_size) != d->pool.slab_size) {
		st = FARSWAP_ST_SLAB_SIZE;
	} else if (d->under_pressure) {
		st = FARSWAP_ST_BUSY;
	} else {
		slab = fsd_pool_take(&d->pool, s);
		if (!slab) {
			st = FARSWAP_ST_NO_SPACE;
		} else {
			slab->host_slab = le64_to_cpu(req->host_slab);
			ret = d->ops->slab_grant(d, s, slab);
			if (ret) {
				pr_warn("host %u (%s, %s): cannot register slab %u: %s",
					s->nr, s->name, s->peer, slab->id,
					strerror(-ret));
				fsd_pool_put(&d->pool, slab);
				slab = NULL;
				st = FARSWAP_ST_INTERNAL;
			}
		}
	}
	rep->status = cpu_to_le16((uint16_t)st);
	if (slab) {
		s->nr_slabs++;
		d->cnt.grants++;
		rep->slab_id = cpu_to_le32(slab->id);
		rep->addr = cpu_to_le64((uint64_t)(uintptr_t)slab->mem);
		rep->length = cpu_to_le64(d->pool.slab_size);
		rep->rkey = cpu_to_le32(slab->rkey);
		pr_info("host %u (%s): slab %u granted (host slab %" PRIu64 "), %u free",
			s->nr, s->name, slab->id, slab->host_slab,
			d->pool.nr_free);
	} else {
		pr_debug("host %u: SLAB_ALLOC_REQ refused: %s", s->nr,
			 farswap_status_str(st));
	}
	rep->slabs_free = cpu_to_le32(fsd_slabs_offered(d));
	return send_msg(d, s, &r, 0);
}

static int handle_free(struct fsd_donor *d, struct fsd_session *s,
		       const union farswap_msg *m)
{
	uint32_t id = le32_to_cpu(m->free_req.slab_id);
	struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	unsigned int st = FARSWAP_ST_OK;
	union farswap_msg r;

	if (!slab || slab->state != FSD_SLAB_HELD) {
		st = FARSWAP_ST_NO_ENTRY;
	} else if (slab->owner != s) {
		st = FARSWAP_ST_DENIED;
		d->cnt.denied++;
		pr_notice("host %u (%s, %s): SLAB_FREE_REQ for slab %u of another host denied",
			  s->nr, s->name, s->peer, id);
	} else {
		if (slab->reclaiming) {
			s->nr_reclaiming--;
			s->unsolicited--;
		}
		d->ops->slab_revoke(d, slab);
		fsd_pool_put(&d->pool, slab);
		s->nr_slabs--;
		d->cnt.frees++;
		pr_info("host %u (%s): slab %u freed, %u free", s->nr, s->name,
			id, d->pool.nr_free);
	}
	farswap_msg_init(&r, FARSWAP_MSG_SLAB_FREE_REP, s->version,
			 le64_to_cpu(m->hdr.cookie));
	r.free_rep.status = cpu_to_le16((uint16_t)st);
	r.free_rep.slab_id = cpu_to_le32(id);
	r.free_rep.slabs_free = cpu_to_le32(fsd_slabs_offered(d));
	return send_msg(d, s, &r, 0);
}

/* Give a slab nobody can reach any more back to the OS, or to the pool. */
static void release_slab(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (!d->ops->slab_release(d, slab) && !fsd_pool_released(&d->pool, slab))
		d->cnt.released++;
	else if (slab->state == FSD_SLAB_HELD)
		fsd_pool_put(&d->pool, slab);
}

static int handle_reclaim_rep(struct fsd_donor *d, struct fsd_session *s,
			      const union farswap_msg *m, uint64_t now)
{
	const struct farswap_reclaim_rep *rep = &m->reclaim_rep;
	uint32_t id = le32_to_cpu(rep->slab_id);
	uint64_t cookie = le64_to_cpu(rep->hdr.cookie);
	struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	unsigned int st = le16_to_cpu(rep->status);

	if (!slab || slab->state != FSD_SLAB_HELD || slab->owner != s ||
	    !slab->reclaiming || slab->reclaim_cookie != cookie) {
		pr_notice("host %u (%s, %s): RECLAIM_REP for slab %u (cookie %" PRIu64 ") answers no request; ignored",
			  s->nr, s->name, s->peer, id, cookie);
		return 0;
	}
	s->nr_reclaiming--;
	s->unsolicited--;
	if (st != FARSWAP_ST_OK) {
		fsd_pool_reclaim_end(&d->pool, slab);
		slab->reclaim_retry_after = now + d->reclaim_deadline_ms;
		d->cnt.reclaim_refused++;
		pr_notice("host %u (%s, %s): keeps slab %u: %s", s->nr, s->name,
			  s->peer, id, farswap_status_str(st));
		return 0;
	}
	d->ops->slab_revoke(d, slab);
	s->nr_slabs--;
	d->cnt.reclaim_ok++;
	if (d->under_pressure) {
		pr_info("host %u (%s, %s): gave back slab %u; memory returned to the OS",
			s->nr, s->name, s->peer, id);
		release_slab(d, slab);
	} else {
		pr_info("host %u (%s, %s): gave back slab %u; pressure is over, keeping it in the pool",
			s->nr, s->name, s->peer, id);
		fsd_pool_put(&d->pool, slab);
	}
	return 0;
}

static void fill_stats(const struct fsd_donor *d, const struct fsd_session *s,
		       union farswap_msg *r)
{
	struct farswap_stats_rep *rep = &r->stats_rep;

	rep->slab_size = cpu_to_le64(d->pool.slab_size);
	rep->slabs_total = cpu_to_le32(d->pool.nr_slabs);
	rep->slabs_free = cpu_to_le32(fsd_slabs_offered(d));
	rep->slabs_host = cpu_to_le32(s->nr_slabs);
	rep->mem_available = cpu_to_le64(d->mem.mem_available);
}

/*
 * One received control message.  Returns 0, or a negative errno when the
 * session was closed because of it (a malformed message, a message only
 * a donor sends, a reply that could not be posted).
 */
int fsd_handle_msg(struct fsd_donor *d, struct fsd_session *s, const void *buf,
		   size_t len, uint64_t now_ms)
{
	union farswap_msg m, r;
	char why[128];

	if (s->closing)
		return -ESHUTDOWN;
	if (farswap_msg_check(buf, len, s->version) != FARSWAP_ST_OK) {
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN, "bad message: %s",
				  fsd_msg_problem(buf, len, s->version, why,
						  sizeof(why)));
		return -EPROTO;
	}
	memset(&m, 0, sizeof(m));
	memcpy(&m, buf, len);
	s->msgs_in++;
	s->last_active = now_ms;
	switch (m.hdr.type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		return handle_alloc(d, s, &m);
	case FARSWAP_MSG_SLAB_FREE_REQ:
		return handle_free(d, s, &m);
	case FARSWAP_MSG_RECLAIM_REP:
		return handle_reclaim_rep(d, s, &m, now_ms);
	case FARSWAP_MSG_STATS_REQ:
		farswap_msg_init(&r, FARSWAP_MSG_STATS_REP, s->version,
				 le64_to_cpu(m.hdr.cookie));
		fill_stats(d, s, &r);
		return send_msg(d, s, &r, 0);
	default:
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "bad message: %s is only sent by a donor",
				  farswap_msg_type_str(m.hdr.type));
		return -EPROTO;
	}
}

static int send_notice(struct fsd_donor *d, struct fsd_session *s,
		       enum fsd_notice_kind kind, uint64_t now_ms);
static bool notice_ok(const struct fsd_session *s);

/*
 * An unsolicited STATS_REP was acknowledged by the host's transport: the
 * host is alive, which is all a keepalive probe wants to know.  An offer
 * that had to wait for it goes out now.
 */
void fsd_notice_sent(struct fsd_donor *d, struct fsd_session *s,
		     uint64_t now_ms)
{
	if (!s->notice_in_flight)
		return;
	s->notice_in_flight = false;
	s->unsolicited--;
	s->last_active = now_ms;
	if (s->offer_pending) {
		s->offer_pending = false;
		if (fsd_slabs_offered(d) && notice_ok(s))
			send_notice(d, s, FSD_NOTICE_OFFER, now_ms);
	}
}

/*
 * A send on @s's control QP completed with an error (@why): the QP is
 * dead, and so is the session.  A failed probe (@notice: the failed send
 * carried an unsolicited STATS_REP) most likely means the host is gone
 * without a word, which is worth saying plainly: its slabs go back to the
 * pool now.
 */
void fsd_send_failed(struct fsd_donor *d, struct fsd_session *s, bool notice,
		     const char *why, uint64_t now_ms)
{
	uint64_t wait;

	if (s->closing)
		return;
	if (notice && s->notice_in_flight) {
		s->notice_in_flight = false;
		s->unsolicited--;
	}
	if (!notice) {
		fsd_session_close(d, s, FSD_LOG_WARN, "send completion error: %s",
				  why);
		return;
	}
	switch (s->notice_kind) {
	case FSD_NOTICE_KEEPALIVE:
		d->cnt.keepalive_dead++;
		wait = now_ms > s->probe_sent ? now_ms - s->probe_sent : 0;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "keepalive: no answer to the probe sent after %" PRIu64 ".%01" PRIu64 " s idle, %" PRIu64 ".%01" PRIu64 " s ago (%s); host presumed gone, freeing its %u slabs",
				  s->probe_idle / 1000, s->probe_idle % 1000 / 100,
				  wait / 1000, wait % 1000 / 100, why,
				  s->nr_slabs);
		break;
	case FSD_NOTICE_REPROBE:
		fsd_session_close(d, s, FSD_LOG_NOTICE,
				  "the host connected again and this old session does not answer (%s); freeing its %u slabs",
				  why, s->nr_slabs);
		break;
	default:
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "stats notice failed: %s", why);
		break;
	}
}

/* Post an unsolicited STATS_REP (cookie 0) of @kind; 0 or -errno. */
static int send_notice(struct fsd_donor *d, struct fsd_session *s,
		       enum fsd_notice_kind kind, uint64_t now_ms)
{
	union farswap_msg m;
	int ret;

	farswap_msg_init(&m, FARSWAP_MSG_STATS_REP, s->version, 0);
	fill_stats(d, s, &m);
	ret = send_msg(d, s, &m, FSD_SEND_NOTICE);
	if (ret)
		return ret;
	s->notice_in_flight = true;
	s->notice_kind = kind;
	s->unsolicited++;
	s->last_active = now_ms;
	if (kind == FSD_NOTICE_KEEPALIVE)
		d->cnt.keepalives++;
	else
		d->cnt.notices++;
	return 0;
}

/* Hosts that may be sent an unsolicited STATS_REP right now. */
static bool notice_ok(const struct fsd_session *s)
{
	return !s->closing && s->established && !s->notice_in_flight &&
	       (s->features & FARSWAP_FEAT_STATS_PUSH) &&
	       s->unsolicited < FSD_UNSOLICITED_MAX;
}

static bool can_reclaim(const struct fsd_slab *slab, uint64_t now)
{
	const struct fsd_session *s = slab->owner;

	return slab->state == FSD_SLAB_HELD && !slab->reclaiming &&
	       now >= slab->reclaim_retry_after && s && !s->closing &&
	       s->established && (s->features & FARSWAP_FEAT_RECLAIM);
}

static void send_reclaims(struct fsd_donor *d, struct fsd_session *s,
			  uint32_t n, uint64_t now)
{
	uint32_t i;

	/* Highest slab ids first: the pool hands out low ids first. */
	for (i = d->pool.nr_slabs; i-- > 0 && n && !s->closing;) {
		struct fsd_slab *slab = &d->pool.slabs[i];
		union farswap_msg m;
		uint64_t cookie;

		if (slab->owner != s || !can_reclaim(slab, now))
			continue;
		cookie = ++s->next_cookie;
		farswap_msg_init(&m, FARSWAP_MSG_RECLAIM_REQ, s->version,
				 cookie);
		m.reclaim_req.slab_id = cpu_to_le32(slab->id);
		m.reclaim_req.deadline_ms = cpu_to_le32(d->reclaim_deadline_ms);
		if (send_msg(d, s, &m, 0))
			return;
		fsd_pool_reclaim_start(&d->pool, slab, cookie,
				       now + d->reclaim_deadline_ms);
		s->nr_reclaiming++;
		s->unsolicited++;
		s->last_active = now;
		d->cnt.reclaim_sent++;
		n--;
		pr_info("host %u (%s, %s): RECLAIM_REQ slab %u, deadline %u ms",
			s->nr, s->name, s->peer, slab->id,
			d->reclaim_deadline_ms);
	}
}

static void reclaim_from_hosts(struct fsd_donor *d, uint32_t want,
			       uint64_t now)
{
	struct fsd_pressure_host *hosts;
	struct fsd_session **ss, *s;
	unsigned int n = 0, i;
	uint32_t j;

	if (!d->nr_sessions)
		return;
	hosts = calloc(d->nr_sessions, sizeof(*hosts));
	ss = calloc(d->nr_sessions, sizeof(*ss));
	if (!hosts || !ss)
		goto out_free;
	for (s = d->sessions; s && n < d->nr_sessions; s = s->next) {
		ss[n] = s;
		hosts[n].outstanding = s->nr_reclaiming;
		n++;
	}
	for (j = 0; j < d->pool.nr_slabs; j++) {
		struct fsd_slab *slab = &d->pool.slabs[j];

		if (!can_reclaim(slab, now))
			continue;
		for (i = 0; i < n; i++)
			if (ss[i] == slab->owner)
				hosts[i].reclaimable++;
	}
	fsd_pressure_pick(hosts, n, want, FSD_RECLAIMS_MAX);
	for (i = 0; i < n; i++)
		if (hosts[i].pick)
			send_reclaims(d, ss[i], hosts[i].pick, now);
out_free:
	free(hosts);
	free(ss);
}

/* Tell hosts there are slabs again; after the notice in flight, if any. */
static void send_notices(struct fsd_donor *d, uint64_t now)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next) {
		if (notice_ok(s))
			send_notice(d, s, FSD_NOTICE_OFFER, now);
		else if (s->notice_in_flight)
			s->offer_pending = true;
	}
}

/*
 * A host opens one session per donor, so a new control connection from a
 * host_id that already has a session means the old one is probably dead:
 * a host that rebooted sends no disconnect, and an RC connection nobody
 * sends on never notices.  Send the old session a stats notice: if the
 * host is gone the send fails after the transport's retries and the
 * session closes, freeing its slabs; if it is alive it learns our free
 * count, which it may always be sent.
 */
void fsd_probe_host(struct fsd_donor *d, const uint8_t *host_id,
		    uint64_t now_ms)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next) {
		if (memcmp(s->host_id, host_id, FARSWAP_ID_LEN) ||
		    !notice_ok(s))
			continue;
		pr_notice("host %u (%s, %s): the same host connects again; checking the old session is alive",
			  s->nr, s->name, s->peer);
		send_notice(d, s, FSD_NOTICE_REPROBE, now_ms);
	}
}

/*
 * Probe every session idle for the keepalive interval (keepalive.h): an
 * unsolicited STATS_REP, which a live host's transport acknowledges and
 * a dead host's fails after the control QP's retries (fsd_send_failed()).
 */
void fsd_donor_keepalive(struct fsd_donor *d, uint64_t now_ms)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next) {
		struct fsd_ka_in in = {
			.now = now_ms,
			.last_active = s->last_active,
			.interval = d->keepalive_ms,
			.eligible = !s->closing && s->established &&
				    (s->features & FARSWAP_FEAT_STATS_PUSH),
			.notice_in_flight = s->notice_in_flight,
			.unsolicited = s->unsolicited,
			.max_unsolicited = FSD_UNSOLICITED_MAX,
		};
		enum fsd_ka_verdict v = fsd_keepalive_check(&in);

		if (v == FSD_KA_NO_ROOM)
			pr_debug("host %u: idle, but %u unsolicited messages in flight: no keepalive probe",
				 s->nr, s->unsolicited);
		if (v != FSD_KA_PROBE)
			continue;
		pr_debug("host %u (%s, %s): idle for %" PRIu64 " ms; keepalive probe",
			 s->nr, s->name, s->peer, now_ms - s->last_active);
		s->probe_sent = now_ms;
		s->probe_idle = now_ms - s->last_active;
		send_notice(d, s, FSD_NOTICE_KEEPALIVE, now_ms);
	}
}

/*
 * Zero freed slabs a bounded amount at a time, so that a grant rarely has
 * a whole slab to clear while every other host waits.
 */
static void zero_some(struct fsd_donor *d)
{
	uint64_t budget = FSD_ZERO_BYTES, size = d->pool.slab_size, n;
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs && budget; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_FREE || !slab->dirty)
			continue;
		n = size - slab->clean_upto;
		if (n > budget)
			n = budget;
		d->ops->slab_zero(d, slab, slab->clean_upto, n);
		slab->clean_upto += n;
		budget -= n;
		if (slab->clean_upto == size) {
			slab->dirty = false;
			slab->clean_upto = 0;
		}
	}
}

static void check_deadlines(struct fsd_donor *d, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];
		struct fsd_session *s = slab->owner;

		if (!slab->reclaiming || slab->deadline_logged ||
		    now < slab->reclaim_deadline)
			continue;
		slab->deadline_logged = true;
		d->cnt.reclaim_late++;
		pr_warn("host %u (%s, %s): no answer to RECLAIM_REQ for slab %u within %u ms; the slab stays theirs until they answer",
			s->nr, s->name, s->peer, slab->id,
			d->reclaim_deadline_ms);
	}
}

/*
 * The periodic pressure check: decide (fsd_pressure_decide), then act:
 * release free slabs, ask hosts for held ones, or take memory back and
 * tell hosts there are slabs to be had.
 */
void fsd_donor_tick(struct fsd_donor *d, const struct fsd_meminfo *mi,
		    uint64_t now)
{
	struct fsd_pressure_in in = { 0 };
	struct fsd_pressure_out out;
	char avail[32], head[32];
	uint32_t i, n;
	bool was = d->under_pressure;

	d->mem = *mi;
	in.mem_available = mi->mem_available;
	in.mem_hidden = mi->pcp_valid ? mi->pcp_free : 0;
	in.headroom = d->headroom;
	in.hysteresis = d->hysteresis;
	in.slab_size = d->pool.slab_size;
	in.psi = mi->psi_some_avg10;
	in.psi_valid = mi->psi_valid;
	in.psi_threshold = d->psi_threshold;
	in.was_under = was;
	in.nr_free = d->pool.nr_free;
	in.nr_reclaiming = d->pool.nr_reclaiming;
	in.nr_released = d->pool.nr_released;
	for (i = 0; i < d->pool.nr_slabs; i++)
		if (can_reclaim(&d->pool.slabs[i], now))
			in.nr_reclaimable++;
	fsd_pressure_decide(&in, &out);
	if (out.under || was)
		pr_debug("pressure check: MemAvailable %" PRIu64 " KiB + %" PRIu64 " KiB on per-CPU lists; %u free, %u reclaiming, %u released: release %u, reclaim %u",
			 in.mem_available >> 10, in.mem_hidden >> 10,
			 in.nr_free, in.nr_reclaiming, in.nr_released,
			 out.release_free, out.reclaim);

	d->under_pressure = out.under;
	fsd_format_size_mb(mi->mem_available, avail, sizeof(avail));
	fsd_format_size_mb(d->headroom, head, sizeof(head));
	if (out.under && !was)
		pr_warn("memory pressure: MemAvailable %s, headroom %s, PSI some avg10 %u.%02u%%: no new slabs until it passes",
			avail, head, mi->psi_some_avg10 / 100,
			mi->psi_some_avg10 % 100);
	else if (!out.under && was)
		pr_notice("memory pressure over: MemAvailable %s", avail);

	for (i = d->pool.nr_slabs, n = 0; i-- > 0 && n < out.release_free;) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_FREE)
			continue;
		release_slab(d, slab);
		n++;
	}
	if (n)
		pr_info("released %u free slabs to the OS", n);
	if (out.reclaim)
		reclaim_from_hosts(d, out.reclaim, now);

	/* Faulting in and pinning takes time: a bounded amount per check. */
	if (out.repopulate > FSD_REPOPULATE_BYTES / d->pool.slab_size)
		out.repopulate = FSD_REPOPULATE_BYTES / d->pool.slab_size ?: 1;
	for (i = 0, n = 0; i < d->pool.nr_slabs && n < out.repopulate; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state != FSD_SLAB_RELEASED)
			continue;
		if (d->ops->slab_populate(d, slab)) {
			pr_warn("cannot take slab %u back from the OS; will retry",
				slab->id);
			break;
		}
		fsd_pool_populated(&d->pool, slab);
		d->cnt.repopulated++;
		n++;
	}
	if (n)
		pr_info("took %u slabs back from the OS", n);
	if ((n || (was && !out.under)) && fsd_slabs_offered(d))
		send_notices(d, now);
	check_deadlines(d, now);
	zero_some(d);
}

struct outbuf {
	char *buf;
	size_t len;
	size_t off;
	bool full;
};

static __printf(2, 3) void emit(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->full = true;
	else
		o->off += (size_t)n;
}

/* The stats text of the socket, SIGUSR1 and daemon/README.md. */
int fsd_donor_stats(const struct fsd_donor *d, char *buf, size_t len)
{
	const struct fsd_pool *p = &d->pool;
	const struct fsd_session *s;
	struct outbuf o = { buf, len, 0, false };

	emit(&o, "slab_size %" PRIu64 "\n", p->slab_size);
	emit(&o, "slabs_total %u\nslabs_free %u\nslabs_used %u\n", p->nr_slabs,
	     p->nr_free, p->nr_held);
	emit(&o, "slabs_reclaiming %u\nslabs_released %u\n", p->nr_reclaiming,
	     p->nr_released);
	emit(&o, "bytes_total %" PRIu64 "\nbytes_used %" PRIu64 "\n",
	     p->slab_size * p->nr_slabs, p->slab_size * p->nr_held);
	emit(&o, "pressure %s\nmem_available %" PRIu64 "\nmem_total %" PRIu64 "\n",
	     d->under_pressure ? "yes" : "no", d->mem.mem_available,
	     d->mem.mem_total);
	emit(&o, "psi_some_avg10 %u.%02u\n", d->mem.psi_some_avg10 / 100,
	     d->mem.psi_some_avg10 % 100);
	emit(&o, "counters sessions=%" PRIu64 " rejects=%" PRIu64
	     " bad_msgs=%" PRIu64 " grants=%" PRIu64 " frees=%" PRIu64
	     " denied=%" PRIu64 " reclaim_sent=%" PRIu64
	     " reclaim_ok=%" PRIu64 " reclaim_refused=%" PRIu64
	     " reclaim_late=%" PRIu64 " released=%" PRIu64
	     " repopulated=%" PRIu64 " notices=%" PRIu64
	     " keepalives=%" PRIu64 " keepalive_dead=%" PRIu64 "\n",
	     d->cnt.sessions, d->cnt.rejects, d->cnt.bad_msgs, d->cnt.grants,
	     d->cnt.frees, d->cnt.denied, d->cnt.reclaim_sent,
	     d->cnt.reclaim_ok, d->cnt.reclaim_refused, d->cnt.reclaim_late,
	     d->cnt.released, d->cnt.repopulated, d->cnt.notices,
	     d->cnt.keepalives, d->cnt.keepalive_dead);
	emit(&o, "hosts %u\n", d->nr_sessions);
	for (s = d->sessions; s; s = s->next)
		emit(&o, "host %u id %s peer %s slabs %u bytes %" PRIu64
		     " reclaiming %u io_queues %u/%u state %s\n",
		     s->nr, s->name, s->peer, s->nr_slabs,
		     (uint64_t)s->nr_slabs * p->slab_size, s->nr_reclaiming,
		     (unsigned int)__builtin_popcountll(s->io_attached),
		     s->nr_io_queues,
		     s->closing ? "closing" :
		     s->established ? "up" : "connecting");
	return o.full ? -ENOSPC : (int)o.off;
}
