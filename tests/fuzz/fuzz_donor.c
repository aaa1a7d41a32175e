// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the donor's parser and dispatcher, exactly the code a
 * received SEND buffer (fsd_handle_msg) and a connect request's private
 * data (fsd_conn_decide) go through, with the verbs calls replaced by
 * tests/unit/fake_ops.c.  The input is a little script of operations, so
 * the fuzzer can build sessions, hold slabs, trigger pressure and then
 * send garbage; after every step the pool and session counters must
 * still agree (else abort()).
 *
 *   op 0: raw message     [sess] [len] [len bytes]
 *   op 1: connect request [len] [len bytes]
 *   op 2: pressure tick   [avail] [dt]
 *   op 3: close session   [sess]
 *   op 4: notice sent     [sess] (and a revoke notice's send)
 *   op 5: failure knobs   [bits]
 *   op 6: framed message  [sess] [type] [body bytes...] (header made valid)
 *   op 7: keepalive check [dt] [interval]
 *   op 8: send failed     [sess] [bit 0: it carried a notice]
 *   op 9: connect from an address, as the event loop does on a CM
 *         CONNECT_REQUEST: [family] [16 address bytes] [len] [len bytes]
 *         (family % 3: IPv4, IPv6, neither), refusals logged and counted
 *   op 10: the grant worker finishes the oldest grant [bit 0: it failed]
 *   op 11: handshake check [dt], I/O queue up [sess] [qid]
 *   op 12: limits         [acl] [cap] [per address] [rate] [revoke-after]
 *          (per address: sessions, and of them unauthenticated; rate:
 *          of grants, and of connects)
 *   op 13: drain          [bit 0: drain, else undrain] (farswapd --drain):
 *          while it lasts no slab is ever revoked, and a draining host
 *          is granted none
 *   op 14: resume         [sess] [slab] [how] [8 token bytes]: a
 *          SLAB_RESUME_REQ with the slab's own token (how bit 0), the
 *          one it was resumed from (bit 1), or the bytes; bit 2 asks for
 *          another slab size.  The donor starts with slabs 3 and 7 kept
 *          for fuzz-a and 9 for fuzz-b (a restart), resumable for 60 s
 *
 *   op 15: a host with a session key [1 byte] [32 private key bytes]:
 *          a control connect announcing FARSWAP_FEAT_KX, its handshake
 *          run as farswap.ko runs it (byte bit 0: with a wrong key), so
 *          that its session ends tagged
 *   op 16: tagged message [sess] [type] [bit 0: a wrong tag]
 *          [body bytes...]: framed as op 6, tagged as its host would tag
 *          its next message (or not quite, with bit 0)
 *
 * Knobs (op 5) also make grants asynchronous (bit 5: answered by op 10)
 * and deregistration fail (bit 6: the slab is quarantined); bit 7 gives
 * the donor a key, so that new sessions must authenticate (AUTH_*).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "access.h"
#include "donor_internal.h"
#include "fake_ops.h"
#include "log.h"

#define SLAB (4ull << 20)
#define NR_SLABS 12
#define GRACE_MS 60000

struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint8_t next(struct cursor *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static size_t take(struct cursor *c, uint8_t *buf, size_t len)
{
	size_t n = len < c->n ? len : c->n;

	memset(buf, 0, len);
	memcpy(buf, c->p, n);
	c->p += n;
	c->n -= n;
	return len;
}

static struct fsd_session *pick(struct fsd_donor *d, uint8_t k)
{
	struct fsd_session *s = d->sessions;
	unsigned int i;

	if (!s)
		return fake_session(d, "fuzz-new", 2);
	for (i = 0; i < k % d->nr_sessions; i++)
		s = s->next;
	return s;
}

/*
 * The pool-state table says what a restart would keep: every kept slab,
 * with its token, and every granted slab of a host that can resume it;
 * nothing else.  A kept slab is nobody's and registered nowhere.
 */
static void check_table(const struct fsd_donor *d)
{
	uint32_t i;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];
		const struct fsd_keep_rec *r = fsd_keep_get(d->pool.keep, i);
		bool want = slab->state == FSD_SLAB_KEPT ||
			    (slab->state == FSD_SLAB_HELD && slab->resume &&
			     (!slab->granting || slab->resuming));

		if (!r || r->held != want || (want && r->token != slab->resume))
			abort();
		if (slab->state == FSD_SLAB_KEPT && (slab->mr || slab->owner))
			abort();
	}
}

/* Slabs 3 and 7 held by fuzz-a, 9 by fuzz-b, before a restart. */
static void adopt_kept(struct fsd_donor *d, struct fsd_keep *k, void *table,
		       uint64_t now)
{
	static const struct { uint32_t id; const char *host; } kept[] = {
		{ 3, "fuzz-a" }, { 7, "fuzz-a" }, { 9, "fuzz-b" },
	};
	struct fsd_keep_rec rec[NR_SLABS];
	struct fsd_adopted a;
	unsigned int i;

	fsd_keep_format(table, NR_SLABS, SLAB, 3);
	fsd_keep_attach(k, table);
	d->pool.keep = k;
	memset(rec, 0, sizeof(rec));
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		struct fsd_slab *slab = &d->pool.slabs[kept[i].id];

		/* fake_donor_init() populated them: as a fresh start would not. */
		fake_ops.slab_release(d, slab);
		fsd_pool_released(&d->pool, slab);
		rec[kept[i].id].held = 1;
		rec[kept[i].id].token = 0x100 + i;
		strncpy((char *)rec[kept[i].id].host_id, kept[i].host,
			FARSWAP_ID_LEN);
	}
	if (fsd_donor_adopt(d, rec, NR_SLABS, now, GRACE_MS, &a) != 3)
		abort();
}

/* op 14: a SLAB_RESUME_REQ, with a token worth trying. */
static void resume_req(struct fsd_donor *d, struct cursor *c, uint64_t now)
{
	struct fsd_session *s = pick(d, next(c));
	uint32_t id = next(c) % (NR_SLABS + 2);
	const struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	uint8_t how = next(c), bytes[8];
	union farswap_msg m;
	uint64_t token;

	take(c, bytes, sizeof(bytes));
	memcpy(&token, bytes, sizeof(token));
	if (slab && (how & 1))
		token = slab->resume;
	else if (slab && (how & 2))
		token = slab->resumed_from;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_RESUME_REQ, FARSWAP_VERSION_MAX,
			 how);
	m.resume_req.slab_id = cpu_to_le32(id);
	m.resume_req.resume = cpu_to_le64(token);
	m.resume_req.slab_size = cpu_to_le64(how & 4 ? SLAB * 2 : SLAB);
	if (s)
		fsd_handle_msg(d, s, &m, sizeof(m.resume_req), now);
}

static void check(const struct fsd_donor *d)
{
	const struct fsd_session *s;
	uint32_t held = 0, reclaiming = 0, i;
	uint32_t authenticated = 0, unauthenticated = 0;

	if (!fsd_pool_consistent(&d->pool))
		abort();
	for (s = d->sessions; s; s = s->next) {
		uint32_t mine = 0;

		if (!s->closing) {
			if (fsd_session_authenticated(s))
				authenticated++;
			else
				unauthenticated++;
		}
		for (i = 0; i < d->pool.nr_slabs; i++)
			if (d->pool.slabs[i].owner == s)
				mine++;
		/* Nothing for a host that has not proved it holds the key. */
		if (!fsd_session_authenticated(s) &&
		    (s->nr_slabs || s->io_attached || s->unsolicited))
			abort();
		if (mine != s->nr_slabs || s->unsolicited > FSD_UNSOLICITED_MAX ||
		    fsd_session_asking(s) > FSD_RECLAIMS_MAX ||
		    s->unsolicited != fsd_session_asking(s) +
					      s->notice_in_flight)
			abort();
		held += s->nr_slabs;
		reclaiming += s->nr_reclaiming;
	}
	if (held != d->pool.nr_held || reclaiming != d->pool.nr_reclaiming)
		abort();
	/* Neither limit is ever passed, whatever the order of things. */
	if (authenticated > d->max_hosts ||
	    unauthenticated > d->max_unauthenticated)
		abort();
	/*
	 * A held slab is registered once granted, a quarantined one keeps
	 * the MR that would not go; nothing else is registered.
	 */
	for (i = 0; i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];
		bool want = (slab->state == FSD_SLAB_HELD && !slab->granting) ||
			    slab->state == FSD_SLAB_QUARANTINED;

		if (want != !!slab->mr)
			abort();
	}
	check_table(d);
	for (s = d->sessions; s; s = s->next) {
		uint32_t granting = 0;

		for (i = 0; i < d->pool.nr_slabs; i++)
			if (d->pool.slabs[i].owner == s &&
			    d->pool.slabs[i].granting)
				granting++;
		if (granting != s->grants_in_flight)
			abort();
	}
}

/* The fsd_addr of a CM event's peer, the way verbs.c gets it. */
static const struct fsd_addr *peer_of(struct cursor *c, struct fsd_addr *a)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr other = { .sa_family = AF_UNIX };
	uint8_t kind = next(c), bytes[16];
	const void *sa;

	take(c, bytes, sizeof(bytes));
	memcpy(&in.sin_addr, bytes, 4);
	memcpy(&in6.sin6_addr, bytes, 16);
	sa = kind % 3 == 0 ? (const void *)&in :
	     kind % 3 == 1 ? (const void *)&in6 : (const void *)&other;
	if (fsd_addr_from_sockaddr(sa, a))
		return NULL;
	return a;
}

/* A few allowed-hosts lists, from any host to naming the fuzzed ones. */
static void set_limits(struct fsd_donor *d, struct cursor *c)
{
	static const char *const lists[] = {
		"", "10.0.0.0/8", "::ffff:10.0.0.1/128 name:fuzz-a",
		"2001:db8::/32, 0.0.0.0/0", "name:fuzz-b", "fe80::/10 id:00000000000000000000000000000000",
	};
	char err[128];
	uint8_t v;

	fsd_access_parse(lists[next(c) % 6], &d->lim.acl, err, sizeof(err));
	d->lim.max_slabs_per_host = next(c) % 8;
	/* Two limits a byte: the seeds keep their meaning. */
	v = next(c);
	d->lim.max_sessions_per_address = v % 5;
	d->lim.max_unauth_per_address = v / 5 % 4;
	v = next(c);
	d->lim.alloc_rate = v % 4;
	d->lim.alloc_burst = d->lim.alloc_rate * 2;
	d->lim.connect_rate = v / 4 % 4;
	d->lim.connect_burst = d->lim.connect_rate * 2;
	d->lim.revoke_after = next(c) % 4;
}

/* Drop sessions the logic closed, as the event loop's reaper does. */
static void reap(struct fsd_donor *d)
{
	struct fsd_session *s, *n;

	for (s = d->sessions; s; s = n) {
		n = s->next;
		if (fsd_session_reapable(s))
			fsd_session_free(d, s);
	}
}

/* What the event loop does with a connect request it decided on. */
static void connect_request(struct fsd_donor *d, struct fsd_conn_decision *dec,
			    uint64_t now)
{
	unsigned int before, limit = d->lim.max_unauth_per_address;
	struct fsd_session *s;

	if (dec->status != FARSWAP_ST_OK) {
		fsd_conn_refused(d, dec, "fuzz", now);
		return;
	}
	if (dec->qtype == FARSWAP_QT_CTRL) {
		/* As farswapd does: with authentication, after the proof. */
		if (!fsd_donor_auth_required(d))
			fsd_probe_host(d, dec->req.host_id, NULL, now);
		before = fsd_unauthenticated_from(d, &dec->addr);
		fsd_conn_make_room(d, dec, now);
		s = fsd_session_new(d, dec, "fuzz", now);
		if (s)
			fsd_session_established(d, s, now);
		/*
		 * One address never gets past its limit of sessions still to
		 * prove the key (or, lowered by op 12, past what it had).
		 */
		if (limit && fsd_unauthenticated_from(d, &dec->addr) >
			     (before > limit ? before : limit))
			abort();
	} else if (fsd_session_attach_io(dec->session, dec->qid, now)) {
		abort();	/* decide said it was free */
	}
}

/*
 * op 15: connect as a host with a session key and run the handshake the
 * way farswap.ko does, proving the donor's key-file (or a wrong key).
 */
static void kx_host(struct fsd_donor *d, struct fake *f, struct cursor *c,
		    uint64_t now)
{
	struct fsd_auth_key k = { .len = 16 };
	uint8_t priv[32], pub[32], hmac[32], sk[32];
	uint8_t how = next(c);
	struct farswap_kx_transcript t;
	struct fsd_conn_decision dec;
	struct farswap_conn_req req;
	struct fsd_session *s;
	union farswap_msg m;
	int ret;

	take(c, priv, sizeof(priv));
	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 64);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH | FARSWAP_FEAT_KX);
	memcpy(req.host_id, "fuzz-kx", 7);
	fsd_conn_decide(d, fake_peer(), &req, sizeof(req), &dec, now);
	connect_request(d, &dec, now);
	for (s = d->sessions; s; s = s->next)
		if (dec.status == FARSWAP_ST_OK && !s->closing &&
		    s->auth == FSD_AUTH_WAIT_REQ &&
		    (s->features & FARSWAP_FEAT_KX))
			break;
	if (!s || fsd_kx_public(priv, pub))
		return;
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_KX_REQ, s->version, 1);
	memset(m.kx_req.host_nonce, 0x33, sizeof(m.kx_req.host_nonce));
	memcpy(m.kx_req.host_pub, pub, sizeof(pub));
	if (fsd_handle_msg(d, s, &m, sizeof(m.kx_req), now) ||
	    fake_last(f)->hdr.type != FARSWAP_MSG_AUTH_KX_CHAL)
		return;
	m = *fake_last(f);
	memcpy(k.bytes, how & 1 ? "fuzz-key-WRONG!!" : "fuzz-key-16bytes", 16);
	farswap_kx_transcript_init(&t, "", (const uint8_t *)"3333333333333333",
				   m.kx_chal.donor_nonce, pub,
				   m.kx_chal.donor_pub, s->token, s->host_id,
				   d->donor_id, s->host_features, s->features,
				   s->version);
	ret = fsd_kx_host(&k, priv, &t, m.kx_chal.donor_mac, hmac, sk);
	if (ret == -EINVAL)
		return;
	/* A host checks the donor first: with a wrong key, it stops here. */
	if (ret == -EACCES) {
		if (!(how & 1))
			abort();
		return;
	}
	if (ret)
		abort();
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, s->version, 2);
	memcpy(m.auth_proof.host_mac, hmac, sizeof(hmac));
	fsd_handle_msg(d, s, &m, sizeof(m.auth_proof), now);
	/* Right proof, room for it: tagged, under the key both derived. */
	if (s->auth == FSD_AUTH_OK &&
	    (!s->tagged || memcmp(s->kx_key, sk, sizeof(sk))))
		abort();
}

/* op 16: a framed message tagged as the host of @s would tag its next. */
static void tagged_msg(struct fsd_donor *d, struct cursor *c, uint64_t now)
{
	struct fsd_session *s = pick(d, next(c));
	unsigned int type = next(c) % (FARSWAP_MSG_TYPE_MAX + 1);
	uint8_t how = next(c), buf[FARSWAP_MSG_MAX];
	union farswap_msg *m = (union farswap_msg *)buf;
	size_t len;

	take(c, buf, sizeof(buf));
	if (!s || !s->tagged)
		return;
	len = farswap_msg_size(type);
	if (!len)
		len = 16;
	if (len + FARSWAP_KX_TAG_LEN > sizeof(buf))
		return;
	m->hdr.magic = cpu_to_le32(FARSWAP_MAGIC);
	m->hdr.version = (uint8_t)s->version;
	m->hdr.type = (uint8_t)type;
	m->hdr.length = cpu_to_le16((uint16_t)farswap_msg_size(type));
	if (fsd_kx_tag(s->kx_key, 'H', s->rx_seq + (how & 1), buf, len,
		       buf + len))
		abort();
	fsd_handle_msg(d, s, buf, len + FARSWAP_KX_TAG_LEN, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	static uint8_t table[4096];
	struct fsd_session *b;
	struct fsd_donor d;
	struct fsd_keep k;
	struct fake f;
	uint64_t now = 1000;
	unsigned int steps = 0;
	uint64_t revoked = 0;

	fsd_log_init(0, false);	/* silent */
	if (fake_donor_init(&d, &f, NR_SLABS, SLAB))
		abort();
	d.max_hosts = 8;
	d.max_unauthenticated = 4;	/* within reach of a short input */
	adopt_kept(&d, &k, table, now);
	fake_session(&d, "fuzz-a", 2);
	/* fuzz-b keeps its slabs when its session ends, as farswap.ko asks. */
	b = fake_session(&d, "fuzz-b", 4);
	if (b)
		b->features |= FARSWAP_FEAT_KEEP;

	while (c.n && steps++ < 256) {
		uint8_t buf[160], op = next(&c) % 17;
		struct fsd_addr addr;
		struct fsd_conn_decision dec;
		struct fsd_session *s;
		struct fsd_meminfo mi;
		size_t len;

		switch (op) {
		case 0:
			s = pick(&d, next(&c));
			len = take(&c, buf, next(&c) % 129);
			if (s)
				fsd_handle_msg(&d, s, buf, len, now);
			break;
		case 1:
			len = take(&c, buf, next(&c) % 80);
			fsd_conn_decide(&d, fake_peer(), buf, len, &dec, now);
			connect_request(&d, &dec, now);
			break;
		case 2:
			memset(&mi, 0, sizeof(mi));
			mi.mem_total = 64ull << 30;
			mi.mem_available = d.headroom +
					   ((int64_t)next(&c) - 128) *
						   (int64_t)(SLAB / 2);
			mi.psi_some_avg10 = next(&c) * 40u;
			mi.psi_valid = true;
			now += 100ull * next(&c);
			fsd_donor_tick(&d, &mi, now);
			break;
		case 3:
			s = pick(&d, next(&c));
			if (s)
				fsd_session_close(&d, s, FSD_LOG_DEBUG, "fuzz");
			break;
		case 4:
			s = pick(&d, next(&c));
			if (s)
				fsd_notice_sent(&d, s, now);
			/* ...or a SLAB_REVOKE's send completed. */
			if (s)
				fsd_revoke_sent(&d, s);
			break;
		case 5:
			op = next(&c);
			f.fail_grant = op & 1;
			f.fail_send = (op & 2) && (op & 4);
			f.fail_populate = op & 8;
			d.psi_threshold = op & 16 ? 1000 : 0;
			f.async_grant = op & 32;
			f.fail_revoke = op & 64;
			/* Hosts must authenticate (new sessions), or not. */
			if (op & 128) {
				struct fsd_auth_key k = { .len = 16 };

				memcpy(k.bytes, "fuzz-key-16bytes", 16);
				fsd_donor_set_key(&d, &k, NULL);
			} else {
				fsd_auth_key_clear(&d.key);
			}
			break;
		case 6: {
			union farswap_msg *m = (union farswap_msg *)buf;
			unsigned int type;

			s = pick(&d, next(&c));
			type = next(&c) % (FARSWAP_MSG_TYPE_MAX + 1);
			take(&c, buf, sizeof(buf));
			m->hdr.magic = cpu_to_le32(FARSWAP_MAGIC);
			m->hdr.version = FARSWAP_VERSION_MAX;
			m->hdr.type = (uint8_t)type;
			len = farswap_msg_size(type);
			m->hdr.length = cpu_to_le16((uint16_t)len);
			if (s)
				fsd_handle_msg(&d, s, buf, len ? len : 16, now);
			break;
		}
		case 7:
			now += 250ull * next(&c);
			d.keepalive_ms = 500u * next(&c);
			fsd_donor_keepalive(&d, now);
			break;
		case 8:
			s = pick(&d, next(&c));
			if (s)
				fsd_send_failed(&d, s, next(&c) & 1,
						"fuzz", now);
			break;
		case 9: {
			const struct fsd_addr *peer = peer_of(&c, &addr);

			len = take(&c, buf, next(&c) % 80);
			fsd_conn_decide(&d, peer, buf, len, &dec, now);
			connect_request(&d, &dec, now);
			break;
		}
		case 10:
			fake_grant_finish(&d, next(&c) & 1 ? -ENOMEM : 0);
			break;
		case 11:
			now += 100ull * next(&c);
			fsd_donor_handshakes(&d, now);
			s = pick(&d, next(&c));
			if (s)
				fsd_session_io_established(s, next(&c) % 66);
			break;
		case 12:
			set_limits(&d, &c);
			fsd_donor_recheck_access(&d);
			break;
		case 13:
			if (next(&c) & 1)
				fsd_donor_drain(&d, now);
			else
				fsd_donor_undrain(&d, now);
			revoked = d.cnt.revoked;
			break;
		case 14:
			resume_req(&d, &c, now);
			break;
		case 15:
			kx_host(&d, &f, &c, now);
			break;
		case 16:
			tagged_msg(&d, &c, now);
			break;
		}
		/* A drain never takes a slab by force. */
		if (d.drain.on && d.cnt.revoked != revoked)
			abort();
		revoked = d.cnt.revoked;
		check(&d);
		reap(&d);
		check(&d);
	}
	fake_donor_exit(&d);
	return 0;
}
