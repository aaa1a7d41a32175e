// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's logic, free of verbs calls: sessions, connect decisions,
 * slab grants and frees, stats notices and keepalive probes.  The files
 * that hold the rest stand on this one (donor_internal.h): the dispatch
 * of control messages (dispatch.c), the authentication handshake
 * (handshake.c) and the response to memory pressure (reclaim.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "config.h"
#include "donor.h"
#include "donor_internal.h"
#include "log.h"

int fsd_donor_init(struct fsd_donor *d, uint32_t nr_slabs, uint64_t slab_size,
		   const struct fsd_ops *ops, void *priv)
{
	memset(d, 0, sizeof(*d));
	d->ops = ops;
	d->priv = priv;
	d->max_hosts = 256;
	d->max_unauthenticated = 16;
	d->reclaim_deadline_ms = 10000;
	d->keepalive_ms = 15000;
	d->lim.max_sessions_per_address = 4;
	d->lim.max_unauth_per_address = 2;
	d->lim.connect_rate = 10;
	d->lim.connect_burst = 20;
	d->lim.max_queue_depth = 1024;
	d->lim.handshake_timeout_ms = 5000;
	d->lim.auth_timeout_ms = 2000;
	d->lim.revoke_after = 3;
	d->resume_grace_ms = 60000;
	return fsd_pool_init(&d->pool, nr_slabs, slab_size);
}

/* Sessions must be gone (fsd_session_free) before this. */
void fsd_donor_exit(struct fsd_donor *d)
{
	fsd_pool_exit(&d->pool);
	fsd_auth_key_clear(&d->key);
	fsd_auth_key_clear(&d->donor_key);
}

/* Hosts must prove a secret: key-file, host-keys, or both. */
bool fsd_donor_auth_required(const struct fsd_donor *d)
{
	return d->key.len || d->host_keys[0];
}

/* May the session's host use the donor: authenticated, or no key asked. */
bool fsd_session_authenticated(const struct fsd_session *s)
{
	return s->auth == FSD_AUTH_NONE || s->auth == FSD_AUTH_OK;
}

/* Slabs a host may get right now: none while short of memory or draining. */
uint32_t fsd_slabs_offered(const struct fsd_donor *d)
{
	if (d->under_pressure || d->shutting_down || d->drain.on)
		return 0;
	return d->pool.nr_free;
}

/*
 * Do @a and @b count as one host for max-slabs-per-host and its log?
 * The same id, proven the same way: a host that proved its host-keys
 * file shares its cap only with sessions that proved it too, so an id
 * claimed with key-file (or with no key at all) never uses up the share
 * of a host that proved it.  Claimed ids are only what the host says: a
 * holder of key-file can claim a new one for each session.
 */
static bool same_host(const struct fsd_session *a, const struct fsd_session *b)
{
	return a->proof == b->proof &&
	       !memcmp(a->host_id, b->host_id, FARSWAP_ID_LEN);
}

/*
 * Slabs held by the host of @s, over all its live sessions: a host opens
 * one session per donor, but nothing stops it from opening more.
 */
static uint32_t host_slabs(const struct fsd_donor *d,
			   const struct fsd_session *s)
{
	const struct fsd_session *o;
	uint32_t i, n = 0;

	for (o = d->sessions; o; o = o->next)
		if (o == s || (!o->closing && same_host(o, s)))
			n += o->nr_slabs;
	/* Kept for it too: a host must not hold more by reconnecting. */
	for (i = 0; d->pool.nr_kept && i < d->pool.nr_slabs; i++) {
		const struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->state == FSD_SLAB_KEPT &&
		    slab->kept_proof == s->proof &&
		    !memcmp(slab->kept_id, s->host_id, FARSWAP_ID_LEN))
			n++;
	}
	return n;
}

/* How the id of @s is known, for the log: "proven" or "claimed". */
static const char *host_id_kind(const struct fsd_session *s)
{
	return s->proof == FSD_PROOF_HOST_KEY ? "proven" : "claimed";
}

/* A host with a session that may ask for slabs: up, proven, allowed. */
static bool host_present(const struct fsd_session *s)
{
	return s->established && !s->closing && !s->disallowed &&
	       fsd_session_authenticated(s);
}

/* The hosts present, @s's own counted whether it is yet or not. */
static uint32_t hosts_present(const struct fsd_donor *d,
			      const struct fsd_session *s)
{
	const struct fsd_session *o, *p;
	uint32_t n = 1;

	for (o = d->sessions; o; o = o->next) {
		if (!host_present(o) || same_host(o, s))
			continue;
		/* Counted once however many sessions it has. */
		for (p = d->sessions; p != o; p = p->next)
			if (host_present(p) && same_host(p, o))
				break;
		n += p == o;
	}
	return n;
}

/*
 * The slabs @s's host may hold: max-slabs-per-host, or with "fair" the
 * pool shared evenly among the hosts present (rounded up), so that one
 * host cannot take what others ask for while a host alone takes it all.
 * A host over its share when another arrives keeps what it holds (its
 * pages may have no other copy) and gets no more; 0: no cap.
 */
static uint32_t slab_cap(const struct fsd_donor *d, const struct fsd_session *s)
{
	uint32_t n;

	if (!d->lim.max_slabs_fair)
		return d->lim.max_slabs_per_host;
	n = hosts_present(d, s);
	return (d->pool.nr_slabs + n - 1) / n;
}

static bool at_slab_cap(const struct fsd_donor *d,
			const struct fsd_session *s)
{
	uint32_t cap = slab_cap(d, s);

	return cap && host_slabs(d, s) >= cap;
}

/*
 * max-slabs-per-host fair: the slabs the host of @s holds beyond its
 * share, less those already asked back of any of its sessions.  0 for a
 * host not present (it asks for nothing, and its slabs are its own
 * business: a drain or a reload asks for them).
 */
uint32_t fsd_host_excess(const struct fsd_donor *d, const struct fsd_session *s)
{
	const struct fsd_session *o;
	uint32_t held, cap, asked = 0;

	if (!d->lim.max_slabs_fair || !host_present(s))
		return 0;
	for (o = d->sessions; o; o = o->next)
		if (o == s || (!o->closing && same_host(o, s)))
			asked += o->nr_reclaiming;
	held = host_slabs(d, s);
	cap = slab_cap(d, s);
	return held > cap + asked ? held - cap - asked : 0;
}

/* What to tell @s is free: nothing once it holds its share, or must go. */
static uint32_t slabs_offered_to(const struct fsd_donor *d,
				 const struct fsd_session *s)
{
	return at_slab_cap(d, s) || s->disallowed ? 0 : fsd_slabs_offered(d);
}

struct fsd_session *fsd_session_find(struct fsd_donor *d, uint64_t token)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next)
		if (s->token == token)
			return s;
	return NULL;
}

const char *fsd_refusal_name(enum fsd_refusal r)
{
	static const char *const names[FSD_REFUSED_COUNT] = {
		[FSD_REFUSED_MALFORMED] = "malformed",
		[FSD_REFUSED_VERSION] = "version",
		[FSD_REFUSED_NOT_ALLOWED] = "not_allowed",
		[FSD_REFUSED_PER_ADDRESS] = "per_address",
		[FSD_REFUSED_MAX_HOSTS] = "max_hosts",
		[FSD_REFUSED_FEATURES] = "features",
		[FSD_REFUSED_SHUTDOWN] = "shutdown",
		[FSD_REFUSED_IO] = "io",
		[FSD_REFUSED_INTERNAL] = "internal",
		[FSD_REFUSED_AUTH] = "auth",
		[FSD_REFUSED_UNAUTHENTICATED] = "max_unauthenticated",
		[FSD_REFUSED_RATE] = "connect_rate",
	};

	return r < FSD_REFUSED_COUNT ? names[r] : "?";
}

static void refuse(struct fsd_conn_decision *dec, int status,
		   enum fsd_refusal why_kind, const char *why)
{
	dec->status = status;
	dec->refusal = why_kind;
	dec->why = why;
	snprintf(dec->detail, sizeof(dec->detail), "%s", why);
}

static void format_name(const uint8_t *id, char *out);

/* Live sessions whose control QP comes from @addr. */
static unsigned int sessions_from(const struct fsd_donor *d,
				  const struct fsd_addr *addr)
{
	const struct fsd_session *s;
	unsigned int n = 0;

	for (s = d->sessions; s; s = s->next)
		if (!s->closing && fsd_addr_equal(&s->addr, addr))
			n++;
	return n;
}

/*
 * Live sessions that are authenticated (@authenticated), or that are not
 * yet: what max-hosts and max-unauthenticated count.  A closing session
 * counts for neither.
 */
uint32_t fsd_live_sessions(const struct fsd_donor *d, bool authenticated)
{
	const struct fsd_session *s;
	uint32_t n = 0;

	for (s = d->sessions; s; s = s->next)
		if (!s->closing && fsd_session_authenticated(s) == authenticated)
			n++;
	return n;
}

/* allowed-hosts, for the address alone (before any data is read) or all. */
static bool access_refused(struct fsd_donor *d, struct fsd_conn_decision *dec,
			   const uint8_t *host_id)
{
	static const uint8_t no_id[FARSWAP_ID_LEN];
	enum fsd_access_verdict v;
	char text[FSD_ADDR_STR];

	v = fsd_access_check(&d->lim.acl, &dec->addr, host_id ? host_id : no_id);
	if (v == FSD_ACCESS_BAD_ADDRESS) {
		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_NOT_ALLOWED,
		       "address not in allowed-hosts");
		fsd_addr_format(&dec->addr, text, sizeof(text));
		snprintf(dec->detail, sizeof(dec->detail),
			 "address %s not in allowed-hosts", text);
		return true;
	}
	if (v == FSD_ACCESS_BAD_ID && host_id) {
		char name[FSD_NAME_LEN];

		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_NOT_ALLOWED,
		       "host_id not in allowed-hosts");
		format_name(host_id, name);
		snprintf(dec->detail, sizeof(dec->detail),
			 "host_id %s not in allowed-hosts", name);
		return true;
	}
	return false;
}

/* The oldest live session that has not proved the key, from @addr if given. */
static struct fsd_session *oldest_unauthenticated(struct fsd_donor *d,
						  const struct fsd_addr *addr)
{
	struct fsd_session *s, *old = NULL;

	for (s = d->sessions; s; s = s->next) {
		if (s->closing || fsd_session_authenticated(s))
			continue;
		if (addr && !fsd_addr_equal(&s->addr, addr))
			continue;
		/* Oldest first; of two as old, the first connected. */
		if (!old || s->created < old->created ||
		    (s->created == old->created && s->nr < old->nr))
			old = s;
	}
	return old;
}

/* Live sessions from @addr that have not proved the key yet. */
unsigned int fsd_unauthenticated_from(const struct fsd_donor *d,
				      const struct fsd_addr *addr)
{
	const struct fsd_session *s;
	unsigned int n = 0;

	for (s = d->sessions; s; s = s->next)
		if (!s->closing && !fsd_session_authenticated(s) &&
		    fsd_addr_equal(&s->addr, addr))
			n++;
	return n;
}

/*
 * Is a limit of @max (0: none) full for one more session, with @have
 * counted toward it now, one of which makes way if @one_leaves?
 */
static bool full(unsigned int have, unsigned int max, bool one_leaves)
{
	return max && have - (one_leaves ? 1 : 0) >= max;
}

/*
 * Room for a new control session among those still to prove the key
 * from its address (max-unauthenticated-per-address), from anywhere
 * (max-unauthenticated), and among all from its address
 * (max-sessions-per-address).  When one is full, the oldest session
 * that has not proved the key, and that counts toward it, makes way (as
 * sshd's MaxStartups drops starts): connects without the key cannot hold
 * a place for a whole handshake-timeout and keep hosts out.  The limit
 * per address comes first, so that connects from one address push out
 * their own before anyone else's.  A connect evicts one session at most:
 * a limit still full after that (lowered by a reload) refuses it.
 * Sessions that proved the key are never pushed out.
 */
static void make_room(struct fsd_donor *d, struct fsd_conn_decision *dec)
{
	bool auth = fsd_donor_auth_required(d);
	struct fsd_session *victim = NULL;
	const char *why = NULL;

	if (auth && full(fsd_unauthenticated_from(d, &dec->addr),
			 d->lim.max_unauth_per_address, false)) {
		victim = oldest_unauthenticated(d, &dec->addr);
		why = "max-unauthenticated-per-address";
		dec->evict_per_address = true;
	}
	if (full(sessions_from(d, &dec->addr),
		 d->lim.max_sessions_per_address, victim)) {
		if (!victim && auth) {
			victim = oldest_unauthenticated(d, &dec->addr);
			why = "max-sessions-per-address";
		}
		if (!victim || full(sessions_from(d, &dec->addr),
				    d->lim.max_sessions_per_address, true)) {
			refuse(dec, FARSWAP_ST_BUSY, FSD_REFUSED_PER_ADDRESS,
			       "too many sessions from this address (max-sessions-per-address)");
			snprintf(dec->detail, sizeof(dec->detail),
				 "%u sessions from this address already (max-sessions-per-address)",
				 sessions_from(d, &dec->addr));
			return;
		}
	}
	if (auth && full(fsd_live_sessions(d, false), d->max_unauthenticated,
			 victim)) {
		if (!victim) {
			victim = oldest_unauthenticated(d, NULL);
			why = "max-unauthenticated";
		}
		if (!victim || full(fsd_live_sessions(d, false),
				    d->max_unauthenticated, true)) {
			refuse(dec, FARSWAP_ST_BUSY, FSD_REFUSED_UNAUTHENTICATED,
			       "too many sessions not authenticated yet (max-unauthenticated)");
			return;
		}
	}
	dec->evict = victim;
	dec->evict_why = why;
}

/*
 * May a line about a refused or evicted connect be logged now?  At most
 * FSD_CONNECT_LOG_BURST a second: a flood of connects must not flood the
 * journal too.  Those held back are told in one line, with the next one
 * let through or once the second is over (fsd_connect_log_flush()).
 */
static bool connect_log_pass(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t missed = 0;

	if (!fsd_ratelimit_pass(&d->connect_log, now_ms, FSD_CONNECT_LOG_MS,
				FSD_CONNECT_LOG_BURST, &missed))
		return false;
	if (missed)
		pr_notice("%u more refused connects suppressed", missed);
	return true;
}

void fsd_connect_log_flush(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t missed = fsd_ratelimit_flush(&d->connect_log, now_ms,
					      FSD_CONNECT_LOG_MS);

	if (missed)
		pr_notice("%u more refused connects suppressed", missed);
}

void fsd_conn_make_room(struct fsd_donor *d, struct fsd_conn_decision *dec,
			uint64_t now_ms)
{
	struct fsd_session *s = dec->evict;

	if (!s)
		return;
	dec->evict = NULL;
	d->cnt.unauth_evicted++;
	if (dec->evict_per_address)
		d->cnt.unauth_evicted_per_address++;
	fsd_session_close(d, s,
			  connect_log_pass(d, now_ms) ? FSD_LOG_NOTICE :
							FSD_LOG_DEBUG,
			  "not authenticated after %" PRIu64 " ms: its place goes to a new connect (%s)",
			  ms_since(now_ms, s->created), dec->evict_why);
}

static void decide_ctrl(struct fsd_donor *d, struct fsd_conn_decision *dec)
{
	const struct farswap_conn_req *req = &dec->req;
	uint32_t features = le32_to_cpu(req->features);

	if (d->shutting_down) {
		refuse(dec, FARSWAP_ST_BUSY, FSD_REFUSED_SHUTDOWN,
		       "donor is shutting down");
	} else if ((features & FSD_FEATURES_REQUIRED) != FSD_FEATURES_REQUIRED) {
		refuse(dec, FARSWAP_ST_INVALID, FSD_REFUSED_FEATURES,
		       "host does not take keepalive probes or give slabs back");
		snprintf(dec->detail, sizeof(dec->detail),
			 "host does not take keepalive probes or give slabs back (features 0x%x, 0x%x required)",
			 features, FSD_FEATURES_REQUIRED);
	} else if (fsd_donor_auth_required(d) &&
		   !(features & FARSWAP_FEAT_AUTH)) {
		char name[FSD_NAME_LEN];

		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_AUTH,
		       "host does not authenticate (no key), and this donor requires it");
		format_name(req->host_id, name);
		snprintf(dec->detail, sizeof(dec->detail),
			 "host %.32s does not authenticate (no key=); required here",
			 name);
	} else if (access_refused(d, dec, req->host_id)) {
		return;
	} else if (fsd_live_sessions(d, true) >= d->max_hosts) {
		refuse(dec, FARSWAP_ST_BUSY, FSD_REFUSED_MAX_HOSTS,
		       "too many hosts (max-hosts)");
	} else {
		/*
		 * Only sessions whose host proved the key count toward
		 * max-hosts, so that a machine without the key cannot fill
		 * them and keep the hosts out.  Those still to prove it have
		 * places of their own, which make_room() keeps from filling.
		 */
		make_room(d, dec);
	}
}

/*
 * An I/O QP of a session with a session key proves it (join_tag); one
 * without has nothing to prove, and sends zeros.
 */
static bool join_tag_ok(const struct fsd_session *s,
			const struct farswap_conn_req *req)
{
	uint8_t want[FARSWAP_KX_JOIN_TAG_LEN];
	bool ok;

	if (!(s->features & FARSWAP_FEAT_KX))
		return FARSWAP_RESERVED_ZERO(req->join_tag);
	if (fsd_kx_join_tag(s->kx_key, s->token, s->host_id, want))
		return false;
	ok = !CRYPTO_memcmp(want, req->join_tag, sizeof(want));
	explicit_bzero(want, sizeof(want));
	return ok;
}

static void decide_io(struct fsd_donor *d, struct fsd_conn_decision *dec)
{
	const struct farswap_conn_req *req = &dec->req;
	unsigned int qid = dec->qid;
	struct fsd_session *s;

	s = fsd_session_find(d, le64_to_cpu(req->session));
	if (!s || s->closing) {
		refuse(dec, FARSWAP_ST_NO_ENTRY, FSD_REFUSED_IO,
		       "no session with that token");
	} else if (memcmp(s->host_id, req->host_id, FARSWAP_ID_LEN)) {
		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_IO,
		       "session token belongs to another host");
	} else if (s->addr.family && dec->addr.family &&
		   !fsd_addr_equal(&s->addr, &dec->addr)) {
		/* A token that leaked is no use from another machine. */
		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_IO,
		       "I/O queue from another address than its session's");
	} else if (!fsd_session_authenticated(s)) {
		/* The token alone proves nothing: the proof must come first. */
		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_AUTH,
		       "I/O queue of a session not authenticated (yet)");
	} else if (s->version < req->ver_min || s->version > req->ver_max) {
		refuse(dec, FARSWAP_ST_VERSION, FSD_REFUSED_IO,
		       "I/O queue does not speak the session's version");
	} else if (le16_to_cpu(req->nr_io_queues) != s->nr_io_queues ||
		   qid > s->nr_io_queues) {
		refuse(dec, FARSWAP_ST_INVALID, FSD_REFUSED_IO,
		       "I/O queue id out of the session's range");
	} else if (s->io_attached & (1ull << (qid - 1))) {
		refuse(dec, FARSWAP_ST_INVALID, FSD_REFUSED_IO,
		       "I/O queue id already connected");
	} else if (!join_tag_ok(s, req)) {
		d->cnt.join_refused++;
		refuse(dec, FARSWAP_ST_DENIED, FSD_REFUSED_AUTH,
		       "I/O queue with a wrong join tag (not the session key's)");
	} else {
		dec->session = s;
	}
}

/*
 * connect-rate: a control connect costs the donor a session, a protection
 * domain, queue pairs and a registered buffer, set up and torn down on
 * the event loop.  Over the rate of its address it is refused here, before
 * any of that.  An I/O queue's connect is not counted: it joins a session
 * whose host proved the key, from that session's address, or is refused
 * before anything is set up for it (decide_io()).
 */
static bool connect_rate_refused(struct fsd_donor *d,
				 struct fsd_conn_decision *dec,
				 uint64_t now_ms)
{
	if (fsd_connect_take(&d->connects, &dec->addr, now_ms,
			     d->lim.connect_rate, d->lim.connect_burst))
		return false;
	refuse(dec, FARSWAP_ST_BUSY, FSD_REFUSED_RATE,
	       "too many connects from this address (connect-rate)");
	snprintf(dec->detail, sizeof(dec->detail),
		 "over %u connects a second from this address, burst %u (connect-rate)",
		 d->lim.connect_rate, d->lim.connect_burst);
	return true;
}

/*
 * What to answer the connect request of a host at @peer (NULL: not an IP
 * peer), at @now_ms.  A host allowed-hosts does not name is refused
 * before its private data is even looked at.
 */
void fsd_conn_decide(struct fsd_donor *d, const struct fsd_addr *peer,
		     const void *pdata, size_t len,
		     struct fsd_conn_decision *dec, uint64_t now_ms)
{
	struct farswap_conn_req *req = &dec->req;

	memset(dec, 0, sizeof(*dec));
	if (peer)
		dec->addr = *peer;
	if (access_refused(d, dec, NULL))
		return;
	dec->status = farswap_conn_req_check(pdata, len);
	if (dec->status != FARSWAP_ST_OK) {
		refuse(dec, dec->status, FSD_REFUSED_MALFORMED,
		       "malformed connect request");
		return;
	}
	memcpy(req, pdata, sizeof(*req));
	dec->qtype = req->qtype;
	dec->qid = le16_to_cpu(req->qid);
	dec->version = farswap_negotiate_version(req->ver_min, req->ver_max);
	if (!dec->version) {
		refuse(dec, FARSWAP_ST_VERSION, FSD_REFUSED_VERSION,
		       "no protocol version in common");
		return;
	}
	if (req->qtype != FARSWAP_QT_CTRL)
		decide_io(d, dec);
	else if (!connect_rate_refused(d, dec, now_ms))
		decide_ctrl(d, dec);
}

/*
 * Count a refused connection and say why, naming the peer; at most so
 * many lines a second (connect_log_pass()), so that a host retrying in a
 * loop or a flood cannot flood the journal.
 */
void fsd_conn_refused(struct fsd_donor *d, const struct fsd_conn_decision *dec,
		      const char *peer, uint64_t now_ms)
{
	d->cnt.rejects++;
	if (dec->refusal < FSD_REFUSED_COUNT)
		d->cnt.refused[dec->refusal]++;
	if (!connect_log_pass(d, now_ms))
		return;
	pr_notice("connect from %s rejected: %s (%s)", peer ? peer : "?",
		  dec->detail[0] ? dec->detail : dec->why,
		  farswap_status_str((unsigned int)dec->status));
}

static void format_name(const uint8_t *id, char *out)
{
	fsd_format_host_id(id, out);
}

/* A host id as the logs show it: its text if printable, else hex. */
void fsd_format_host_id(const uint8_t *id, char *out)
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
				    const char *peer, uint64_t now_ms)
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
	s->addr = dec->addr;
	s->created = now_ms;
	s->version = (uint8_t)dec->version;
	s->features = le32_to_cpu(dec->req.features) & FSD_FEATURES;
	/* resume-grace 0: no slab outlives a restart, so none is promised. */
	if (!d->resume_grace_ms)
		s->features &= ~FARSWAP_FEAT_RESUME;
	/* Keeping a session's slabs is resuming them in the next. */
	if (!(s->features & FARSWAP_FEAT_RESUME))
		s->features &= ~FARSWAP_FEAT_KEEP;
	if (fsd_donor_auth_required(d)) {
		s->auth = FSD_AUTH_WAIT_REQ;
	} else {
		s->auth = FSD_AUTH_NONE;
		s->features &= ~(FARSWAP_FEAT_AUTH | FARSWAP_FEAT_KX);
	}
	s->host_features = le32_to_cpu(dec->req.features);
	/* Granted only when there is a donor key to prove (handshake.c). */
	if (s->auth == FSD_AUTH_NONE || !d->donor_key.len)
		s->features &= ~FARSWAP_FEAT_PINNED;
	s->nr_io_queues = le16_to_cpu(dec->req.nr_io_queues);
	s->queue_depth = le32_to_cpu(dec->req.queue_depth);
	/*
	 * The donor never posts on I/O queue pairs, so their size costs it
	 * memory and gains the host nothing: cut it, never refuse.
	 */
	if (d->lim.max_queue_depth && s->queue_depth > d->lim.max_queue_depth) {
		pr_info("host %u (%s, %s): queue depth %u cut to %u (max-queue-depth)",
			s->nr, s->name, s->peer, s->queue_depth,
			d->lim.max_queue_depth);
		s->queue_depth = d->lim.max_queue_depth;
		d->cnt.depth_clamped++;
	}
	s->next = d->sessions;
	d->sessions = s;
	d->nr_sessions++;
	d->cnt.sessions++;
	return s;
}

int fsd_session_attach_io(struct fsd_session *s, unsigned int qid,
			  uint64_t now_ms)
{
	uint64_t bit;

	if (!qid || qid > s->nr_io_queues || qid > 64)
		return -EINVAL;
	/* fsd_conn_decide() refused it already; never attach it anyway. */
	if (!fsd_session_authenticated(s) || s->closing)
		return -EACCES;
	bit = 1ull << (qid - 1);
	if (s->io_attached & bit)
		return -EEXIST;
	s->io_attached |= bit;
	s->io_up &= ~bit;
	s->io_since[qid - 1] = now_ms;
	return 0;
}

void fsd_session_io_established(struct fsd_session *s, unsigned int qid)
{
	if (qid && qid <= 64)
		s->io_up |= (1ull << (qid - 1)) & s->io_attached;
}

void fsd_session_detach_io(struct fsd_session *s, unsigned int qid)
{
	if (qid && qid <= 64) {
		s->io_attached &= ~(1ull << (qid - 1));
		s->io_up &= ~(1ull << (qid - 1));
	}
}

/*
 * Why a reload no longer lets @s in: allowed-hosts does not name it, or
 * the key it proved is not its key any more (its host-keys file removed
 * or replaced: how a host is revoked).  NULL while it may stay.
 */
static const char *no_longer_allowed(struct fsd_donor *d,
				     struct fsd_session *s, char *why,
				     size_t whylen)
{
	enum fsd_access_verdict v;

	v = fsd_access_check(&d->lim.acl, &s->addr, s->host_id);
	if (v != FSD_ACCESS_OK)
		return fsd_access_verdict_str(v);
	if (s->auth == FSD_AUTH_OK && !fsd_session_key_current(d, s, why, whylen))
		return why;
	return NULL;
}

/*
 * After a reload: sessions allowed-hosts no longer names, or whose key
 * was revoked, are closed, but not those holding slabs, whose pages may
 * have no other copy (a typo in allowed-hosts must lose nothing): those
 * are drained first (drain.c), refused new slabs, and closed once they
 * hold none.  A session allowed again by a later reload keeps what it
 * holds and may ask for more.
 */
void fsd_donor_recheck_access(struct fsd_donor *d)
{
	struct fsd_session *s;
	char why[256];

	for (s = d->sessions; s; s = s->next) {
		const char *v;

		if (s->closing)
			continue;
		v = no_longer_allowed(d, s, why, sizeof(why));
		if (!v) {
			if (s->disallowed)
				pr_notice("host %u (%s, %s): allowed again after the reload; keeps its %u slabs",
					  s->nr, s->name, s->peer, s->nr_slabs);
			s->disallowed = false;
			continue;
		}
		if (!s->nr_slabs) {
			d->cnt.closed_not_allowed++;
			fsd_session_close(d, s, FSD_LOG_WARN,
					  "%s after the reload; it holds no slab",
					  v);
			continue;
		}
		if (!s->disallowed)
			pr_warn("host %u (%s, %s): %s after the reload, but it holds %u slabs: asking for them back (never revoked), granting it no more, closing it once it holds none",
				s->nr, s->name, s->peer, v, s->nr_slabs);
		s->disallowed = true;
	}
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
	rep->slabs_free = cpu_to_le32(slabs_offered_to(d, s));
	memcpy(rep->donor_id, d->donor_id, FARSWAP_ID_LEN);
}

void fsd_session_established(struct fsd_donor *d, struct fsd_session *s,
			     uint64_t now_ms)
{
	(void)d;
	if (s->established || s->closing)
		return;
	s->established = true;
	s->up_since = now_ms;
	s->last_active = now_ms;
	pr_info("host %u (%s, %s): session up, version %u, %u I/O queues, depth %u",
		s->nr, s->name, s->peer, s->version, s->nr_io_queues,
		s->queue_depth);
}

/* Is @slab granted to @s (held by it, its grant done)? */
static bool granted_to(const struct fsd_slab *slab, const struct fsd_session *s)
{
	return slab->state == FSD_SLAB_HELD && slab->owner == s &&
	       !slab->granting;
}

/*
 * Does @s's end leave its slabs kept for its host?  When the host can take
 * them back (FARSWAP_FEAT_KEEP) and did not say goodbye: the session ended
 * on a transport error or a silent host, and the host may be back.  Not
 * when the host may no longer have them (allowed-hosts), nor at exit (the
 * pool is freed, or kept whole in systemd's fd store).
 */
static bool keeps_slabs(const struct fsd_donor *d, const struct fsd_session *s)
{
	return (s->features & FARSWAP_FEAT_KEEP) && s->nr_slabs &&
	       !s->leaving && !s->disallowed && !d->shutting_down &&
	       fsd_session_authenticated(s);
}

/*
 * @s ended without its host: its held slabs become KEPT, their memory
 * regions deregistered at once (no rkey of a dead session reaches them),
 * resumable with their tokens for resume-grace.  Revoked slabs go: the
 * donor took those back already.  Grants in flight end in
 * fsd_grant_done(), freed.
 */
static void keep_slabs(struct fsd_donor *d, struct fsd_session *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (!granted_to(slab, s) || slab->revoke_at || !slab->resume)
			continue;
		fsd_slab_leaves(s, slab);
		if (!fsd_unregister_slab(d, slab))
			continue;
		fsd_pool_keep_held(&d->pool, slab, s->host_id, s->proof);
		n++;
	}
	d->cnt.kept += n;
	if (n)
		pr_notice("host %u (%s, %s): %u slabs kept for its host for %u s: it may take them back in a new session",
			  s->nr, s->name, s->peer, n,
			  d->resume_grace_ms / 1000);
}

/* Mark @s closing and start the teardown; logs once per session. */
void fsd_session_close(struct fsd_donor *d, struct fsd_session *s, int level,
		       const char *fmt, ...)
{
	char why[256];
	va_list ap;
	uint32_t i;

	if (s->closing)
		return;
	s->closing = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fsd_log(level, "host %u (%s, %s): closing session: %s", s->nr,
		s->name, s->peer, why);
	if (keeps_slabs(d, s))
		keep_slabs(d, s);
	/* Grants not started yet need not be: the host will not see them. */
	for (i = 0; s->grants_in_flight && i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (slab->granting && slab->owner == s &&
		    d->ops->slab_grant_cancel)
			d->ops->slab_grant_cancel(d, slab);
	}
	if (d->ops->close)
		d->ops->close(d, s);
}

/*
 * Deregister a held slab's memory region.  When that fails the host may
 * still reach the memory with its rkey: the slab is quarantined (never
 * handed out, zeroed or given back again), counted and logged, and the
 * caller must leave it alone.
 */
bool fsd_unregister_slab(struct fsd_donor *d, struct fsd_slab *slab)
{
	int ret = d->ops->slab_revoke(d, slab);

	if (!ret)
		return true;
	fsd_pool_quarantine(&d->pool, slab);
	d->cnt.quarantined++;
	pr_err("slab %u: cannot deregister its memory region (%s): quarantined, never used again",
	       slab->id, strerror(-ret));
	return false;
}

/* A held slab leaves @s: its reclaim or revoke, if any, is over. */
void fsd_slab_leaves(struct fsd_session *s, struct fsd_slab *slab)
{
	if (slab->reclaiming) {
		s->nr_reclaiming--;
		s->unsolicited--;
	}
	slab->revoke_at = 0;
	s->nr_slabs--;
}

/*
 * Deregister and free every slab @s holds; returns how many.  Grants in
 * flight are left to fsd_grant_done(), which frees them once the worker
 * is done with them.
 */
static uint32_t free_held(struct fsd_donor *d, struct fsd_session *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->pool.nr_slabs; i++) {
		struct fsd_slab *slab = &d->pool.slabs[i];

		if (!granted_to(slab, s))
			continue;
		fsd_slab_leaves(s, slab);
		if (fsd_unregister_slab(d, slab))
			fsd_pool_put(&d->pool, slab);
		n++;
	}
	return n;
}

/* @s is over: every slab it holds is freed, its requests forgotten. */
void fsd_session_drop_slabs(struct fsd_donor *d, struct fsd_session *s)
{
	uint32_t n = free_held(d, s);

	if (n)
		pr_info("host %u (%s, %s): freed %u slabs", s->nr, s->name,
			s->peer, n);
	s->nr_reclaiming = 0;
	s->unsolicited = 0;
	s->revokes_in_flight = 0;
	s->notice_in_flight = false;
	s->offer_pending = false;
}

/* A closed session may be freed once no grant of it is in flight. */
bool fsd_session_reapable(const struct fsd_session *s)
{
	return s->closing && !s->grants_in_flight;
}

void fsd_session_free(struct fsd_donor *d, struct fsd_session *s)
{
	struct fsd_session **pp;

	/* A grant in flight still points at @s: the caller waits for it. */
	if (s->grants_in_flight)
		abort();
	fsd_session_drop_slabs(d, s);
	fsd_auth_key_clear(&s->key);
	explicit_bzero(s->kx_key, sizeof(s->kx_key));
	explicit_bzero(s->kx_host_mac, sizeof(s->kx_host_mac));
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			d->nr_sessions--;
			break;
		}
	}
	free(s);
}

int fsd_send_msg(struct fsd_donor *d, struct fsd_session *s,
		 const union farswap_msg *m, unsigned int flags)
{
	size_t len = le16_to_cpu(m->hdr.length);
	union farswap_msg t;
	int ret = 0;

	/* Tagged (FARSWAP_FEAT_KX): the tag goes after the body. */
	if (s->tagged) {
		t = *m;
		ret = fsd_kx_tag(s->kx_key, 'D', s->tx_seq, &t, len,
				 t.raw + len);
		m = &t;
		len += FARSWAP_KX_TAG_LEN;
	}
	if (!ret)
		ret = d->ops->send(d, s, m, len, flags);
	else
		ret = -EIO;

	if (ret) {
		fsd_session_close(d, s, FSD_LOG_WARN, "cannot send %s: %s",
				  farswap_msg_type_str(m->hdr.type),
				  strerror(-ret));
		return ret;
	}
	s->msgs_out++;
	if (s->tagged)
		s->tx_seq++;
	return 0;
}

/* Why an ALLOC is refused before any slab is picked, or OK. */
static unsigned int alloc_refusal(struct fsd_donor *d, struct fsd_session *s,
				  const struct farswap_slab_alloc_req *req,
				  uint64_t now)
{
	uint32_t missed = 0;

	if (d->shutting_down)
		return FARSWAP_ST_BUSY;
	if (le64_to_cpu(req->slab_size) != d->pool.slab_size)
		return FARSWAP_ST_SLAB_SIZE;
	/*
	 * Draining, or no longer allowed: NO_SPACE (and 0 free), which a
	 * host takes as "this donor is full" and goes elsewhere.
	 */
	if (fsd_session_draining(d, s))
		return FARSWAP_ST_NO_SPACE;
	if (d->under_pressure)
		return FARSWAP_ST_BUSY;
	if (!d->pool.nr_free) {
		/* Under its share: hosts over theirs are asked (reclaim.c). */
		if (d->lim.max_slabs_fair && !at_slab_cap(d, s))
			d->fair_wait_until = now + 2ull * d->reclaim_deadline_ms;
		return FARSWAP_ST_NO_SPACE;
	}
	/*
	 * Over its share: NO_SPACE, which a host takes as "this donor is
	 * full" and goes elsewhere, as it must.
	 */
	if (at_slab_cap(d, s)) {
		d->cnt.alloc_capped++;
		if (fsd_ratelimit_pass(&d->alloc_log, now, FSD_REFUSE_LOG_MS,
				       FSD_REFUSE_LOG_BURST, &missed))
			pr_notice("host %u (%s, %s): SLAB_ALLOC_REQ refused (no free slab): its host holds %u slabs, max-slabs-per-host %u%s (host id %s)",
				  s->nr, s->name, s->peer, host_slabs(d, s),
				  slab_cap(d, s),
				  d->lim.max_slabs_fair ?
					  " (fair: the pool shared among the hosts present)" :
					  "",
				  host_id_kind(s));
		return FARSWAP_ST_NO_SPACE;
	}
	/* Too fast: BUSY, which a host retries later or elsewhere. */
	if (d->lim.alloc_rate &&
	    !fsd_bucket_take(&s->alloc_tokens, now, d->lim.alloc_rate,
			     d->lim.alloc_burst)) {
		d->cnt.alloc_rate_limited++;
		if (fsd_ratelimit_pass(&d->alloc_log, now, FSD_REFUSE_LOG_MS,
				       FSD_REFUSE_LOG_BURST, &missed))
			pr_notice("host %u (%s, %s): SLAB_ALLOC_REQ refused (busy): over alloc-rate %u/s, burst %u",
				  s->nr, s->name, s->peer, d->lim.alloc_rate,
				  d->lim.alloc_burst);
		return FARSWAP_ST_BUSY;
	}
	return FARSWAP_ST_OK;
}

/*
 * The answer to a SLAB_ALLOC_REQ, or to a SLAB_RESUME_REQ (@resume): the
 * two replies are laid out alike.  A refusal names no slab, but a resume's
 * refusal names the slab it refuses (@refused_id).
 */
int fsd_send_grant_rep(struct fsd_donor *d, struct fsd_session *s,
		       uint64_t cookie, unsigned int st,
		       const struct fsd_slab *slab, bool resume,
		       uint32_t refused_id)
{
	struct farswap_slab_alloc_rep *rep;
	union farswap_msg r;

	farswap_msg_init(&r, resume ? FARSWAP_MSG_SLAB_RESUME_REP :
				      FARSWAP_MSG_SLAB_ALLOC_REP,
			 s->version, cookie);
	/* SLAB_RESUME_REP is laid out as SLAB_ALLOC_REP (farswap_proto.h). */
	rep = &r.alloc_rep;
	rep->status = cpu_to_le16((uint16_t)st);
	if (slab) {
		rep->slab_id = cpu_to_le32(slab->id);
		rep->addr = cpu_to_le64(FSD_SLAB_IOVA);
		rep->length = cpu_to_le64(d->pool.slab_size);
		rep->rkey = cpu_to_le32(slab->rkey);
		rep->resume = cpu_to_le64(slab->resume);
	} else if (resume) {
		rep->slab_id = cpu_to_le32(refused_id);
	}
	rep->slabs_free = cpu_to_le32(slabs_offered_to(d, s));
	return fsd_send_msg(d, s, &r, 0);
}

static int send_alloc_rep(struct fsd_donor *d, struct fsd_session *s,
			  uint64_t cookie, unsigned int st,
			  const struct fsd_slab *slab)
{
	return fsd_send_grant_rep(d, s, cookie, st, slab, false, 0);
}

/*
 * A fresh resume token for a slab @s is granted: random and never 0 when
 * the host can resume (FARSWAP_FEAT_RESUME), else 0.  Random, so that a
 * host can only ask back the slabs it was given, never guess another's.
 */
int fsd_new_resume_token(struct fsd_donor *d, const struct fsd_session *s,
			 uint64_t *token)
{
	int tries, ret;

	*token = 0;
	if (!(s->features & FARSWAP_FEAT_RESUME))
		return 0;
	for (tries = 0; tries < 4 && !*token; tries++) {
		ret = d->ops->random(d, token, sizeof(*token));
		if (ret)
			return ret;
	}
	return *token ? 0 : -EIO;
}

/* A grant (or resume) that did not reach its host: the slab goes back. */
static void grant_undone(struct fsd_donor *d, struct fsd_slab *slab)
{
	if (slab->resuming)
		fsd_pool_keep_again(&d->pool, slab);
	else
		fsd_pool_put(&d->pool, slab);
}

/*
 * The slab is its host's from now on: its token, written to the
 * pool-state table before the reply goes out, so that a restart right
 * after the reply still keeps it.
 */
static void grant_owned(struct fsd_donor *d, struct fsd_session *s,
			struct fsd_slab *slab)
{
	if (slab->resuming) {
		slab->resumed_from = slab->resume;
		slab->resuming = false;
	}
	slab->resume = slab->grant_token;
	slab->grant_token = 0;
	fsd_keep_hold(d->pool.keep, slab->id, s->host_id, s->proof,
		      slab->resume);
}

/*
 * A slab's grant is over: registered (@ret 0) or not.  Answers the
 * SLAB_ALLOC_REQ (or SLAB_RESUME_REQ), or, when the host left meanwhile,
 * frees the slab (keeps it again, for a resume).  Called by the grant
 * path itself, or by the event loop when the worker thread finished (the
 * -EINPROGRESS case of fsd_ops.slab_grant).
 */
int fsd_grant_done(struct fsd_donor *d, struct fsd_slab *slab, int ret)
{
	struct fsd_session *s = slab->owner;
	bool resume = slab->resuming;

	if (!slab->granting || !s)
		return -EINVAL;
	slab->granting = false;
	s->grants_in_flight--;
	if (s->closing) {
		s->nr_slabs--;
		if (!ret && !fsd_unregister_slab(d, slab))
			return -ESHUTDOWN;
		grant_undone(d, slab);
		return -ESHUTDOWN;
	}
	if (ret) {
		pr_warn("host %u (%s, %s): cannot register slab %u: %s",
			s->nr, s->name, s->peer, slab->id, strerror(-ret));
		s->nr_slabs--;
		grant_undone(d, slab);
		return fsd_send_grant_rep(d, s, slab->grant_cookie,
					  FARSWAP_ST_INTERNAL, NULL, resume,
					  slab->id);
	}
	grant_owned(d, s, slab);
	if (resume) {
		d->cnt.resumed++;
		pr_info("host %s resumed slab %u (host %u, %s), content and all",
			s->name, slab->id, s->nr, s->peer);
	} else {
		d->cnt.grants++;
		pr_info("host %u (%s): slab %u granted (host request %" PRIu64 "), %u free",
			s->nr, s->name, slab->id, slab->host_slab,
			d->pool.nr_free);
	}
	return fsd_send_grant_rep(d, s, slab->grant_cookie, FARSWAP_ST_OK,
				  slab, resume, slab->id);
}

/* Start @slab's registration for @s, as a grant or a resume. */
int fsd_start_grant(struct fsd_donor *d, struct fsd_session *s,
		    struct fsd_slab *slab, uint64_t cookie, uint64_t token)
{
	int ret;

	/* The host holds it from now: it counts against its share. */
	slab->grant_cookie = cookie;
	slab->grant_token = token;
	slab->granting = true;
	s->nr_slabs++;
	s->grants_in_flight++;
	ret = d->ops->slab_grant(d, s, slab);
	if (ret == -EINPROGRESS)
		return 0;
	return fsd_grant_done(d, slab, ret);
}

int fsd_handle_alloc(struct fsd_donor *d, struct fsd_session *s,
		     const union farswap_msg *m, uint64_t now)
{
	const struct farswap_slab_alloc_req *req = &m->alloc_req;
	uint64_t cookie = le64_to_cpu(req->hdr.cookie), token = 0;
	struct fsd_slab *slab;
	unsigned int st;

	st = alloc_refusal(d, s, req, now);
	if (st == FARSWAP_ST_OK && fsd_new_resume_token(d, s, &token))
		st = FARSWAP_ST_INTERNAL;
	slab = st == FARSWAP_ST_OK ? fsd_pool_take(&d->pool, s) : NULL;
	if (!slab) {
		if (st == FARSWAP_ST_OK)
			st = FARSWAP_ST_NO_SPACE;
		pr_debug("host %u: SLAB_ALLOC_REQ refused: %s", s->nr,
			 farswap_status_str(st));
		return send_alloc_rep(d, s, cookie, st, NULL);
	}
	slab->host_slab = le64_to_cpu(req->host_slab);
	return fsd_start_grant(d, s, slab, cookie, token);
}

/*
 * FARSWAP_FREE_SESSION: the host detaches and gives back every slab of
 * @s; whatever @s is granted from here on goes when it ends.
 */
static unsigned int free_session(struct fsd_donor *d, struct fsd_session *s)
{
	uint32_t n;

	if (!(s->features & FARSWAP_FEAT_KEEP))
		return FARSWAP_ST_INVALID;
	s->leaving = true;
	n = free_held(d, s);
	d->cnt.frees += n;
	if (fsd_session_draining(d, s))
		d->drain.slabs_returned += n;
	pr_info("host %u (%s, %s): detaching: %u slabs given back, %u free",
		s->nr, s->name, s->peer, n, d->pool.nr_free);
	return FARSWAP_ST_OK;
}

int fsd_handle_free(struct fsd_donor *d, struct fsd_session *s,
		    const union farswap_msg *m)
{
	uint32_t id = le32_to_cpu(m->free_req.slab_id);
	struct fsd_slab *slab = fsd_pool_get(&d->pool, id);
	unsigned int st = FARSWAP_ST_OK;
	union farswap_msg r;

	if (le32_to_cpu(m->free_req.flags) & FARSWAP_FREE_SESSION) {
		st = free_session(d, s);
	} else if (!slab || slab->state != FSD_SLAB_HELD) {
		st = FARSWAP_ST_NO_ENTRY;
	} else if (slab->owner == s && slab->granting) {
		/* Not granted yet: the host cannot know its id. */
		st = FARSWAP_ST_NO_ENTRY;
	} else if (slab->owner != s) {
		st = FARSWAP_ST_DENIED;
		d->cnt.denied++;
		pr_notice("host %u (%s, %s): SLAB_FREE_REQ for slab %u of another host denied",
			  s->nr, s->name, s->peer, id);
	} else {
		fsd_slab_leaves(s, slab);
		if (fsd_unregister_slab(d, slab))
			fsd_pool_put(&d->pool, slab);
		d->cnt.frees++;
		if (fsd_session_draining(d, s))
			d->drain.slabs_returned++;
		pr_info("host %u (%s): slab %u freed, %u free", s->nr, s->name,
			id, d->pool.nr_free);
	}
	farswap_msg_init(&r, FARSWAP_MSG_SLAB_FREE_REP, s->version,
			 le64_to_cpu(m->hdr.cookie));
	r.free_rep.status = cpu_to_le16((uint16_t)st);
	r.free_rep.slab_id = cpu_to_le32(id);
	r.free_rep.slabs_free = cpu_to_le32(slabs_offered_to(d, s));
	return fsd_send_msg(d, s, &r, 0);
}

void fsd_fill_stats(const struct fsd_donor *d, const struct fsd_session *s,
		    union farswap_msg *r)
{
	struct farswap_stats_rep *rep = &r->stats_rep;

	rep->slab_size = cpu_to_le64(d->pool.slab_size);
	rep->slabs_total = cpu_to_le32(d->pool.nr_slabs);
	rep->slabs_free = cpu_to_le32(slabs_offered_to(d, s));
	rep->slabs_host = cpu_to_le32(s->nr_slabs);
	rep->mem_available = cpu_to_le64(d->mem.mem_available);
}

/*
 * The donor's failure domain: @name (a valid --failure-domain), or with
 * NULL or "" the donor's id as it is shown everywhere (its text when
 * printable, else its hex: at most FARSWAP_DOMAIN_LEN characters).
 */
void fsd_donor_set_domain(struct fsd_donor *d, const char *name)
{
	char id[2 * FARSWAP_ID_LEN + 1];

	if (name && *name) {
		snprintf(d->domain, sizeof(d->domain), "%s", name);
		return;
	}
	format_name(d->donor_id, id);
	snprintf(d->domain, sizeof(d->domain), "%s", id);
}

/*
 * INFO_REP to a host's INFO_REQ (@cookie echoed).  A domain that is not a
 * valid name (none set) goes out as the donor's id, which always is.
 */
void fsd_info_rep_build(const struct fsd_donor *d, const struct fsd_session *s,
			uint64_t cookie, union farswap_msg *r)
{
	char id[2 * FARSWAP_ID_LEN + 1];

	farswap_msg_init(r, FARSWAP_MSG_INFO_REP, s->version, cookie);
	if (!farswap_info_rep_set_domain(&r->info_rep, d->domain))
		return;
	format_name(d->donor_id, id);
	if (farswap_info_rep_set_domain(&r->info_rep, id))
		farswap_info_rep_set_domain(&r->info_rep, "donor");
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
 * A SLAB_REVOKE reached the host's receive queue: it no longer counts
 * against the messages the donor may have there unasked.
 */
void fsd_revoke_sent(struct fsd_donor *d, struct fsd_session *s)
{
	(void)d;
	if (!s->revokes_in_flight)
		return;		/* the session was closed since */
	s->revokes_in_flight--;
	s->unsolicited--;
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
	if (s->refused) {
		fsd_session_close(d, s, s->refusal_level,
				  "%s (the reply failed: %s)", s->refusal, why);
		return;
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
				  "keepalive: no answer to the probe sent after %" PRIu64 ".%01" PRIu64 " s idle, %" PRIu64 ".%01" PRIu64 " s ago (%s); host presumed gone, %s its %u slabs",
				  s->probe_idle / 1000, s->probe_idle % 1000 / 100,
				  wait / 1000, wait % 1000 / 100, why,
				  keeps_slabs(d, s) ? "keeping" : "freeing",
				  s->nr_slabs);
		break;
	case FSD_NOTICE_REPROBE:
		fsd_session_close(d, s, FSD_LOG_NOTICE,
				  "the host connected again and this old session does not answer (%s); %s its %u slabs",
				  why, keeps_slabs(d, s) ? "keeping" : "freeing",
				  s->nr_slabs);
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
	fsd_fill_stats(d, s, &m);
	ret = fsd_send_msg(d, s, &m, FSD_SEND_NOTICE);
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
	       fsd_session_authenticated(s) &&
	       (s->features & FARSWAP_FEAT_STATS_PUSH) &&
	       s->unsolicited < FSD_UNSOLICITED_MAX;
}

/* Tell hosts there are slabs again; after the notice in flight, if any. */
void fsd_send_notices(struct fsd_donor *d, uint64_t now)
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
 * session closes, its slabs kept for the host (FARSWAP_FEAT_KEEP) or
 * freed; if it is alive it learns our free count, which it may always be
 * sent.
 */
void fsd_probe_host(struct fsd_donor *d, const uint8_t *host_id,
		    const struct fsd_session *except, uint64_t now_ms)
{
	struct fsd_session *s;

	for (s = d->sessions; s; s = s->next) {
		if (s == except || memcmp(s->host_id, host_id, FARSWAP_ID_LEN) ||
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
				    fsd_session_authenticated(s) &&
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
