// SPDX-License-Identifier: GPL-2.0
/*
 * A session's way in: the authentication handshake (AUTH_REQ, AUTH_CHAL,
 * AUTH_PROOF, AUTH_REP; docs/protocol.md, Authentication), the secret
 * each host must prove, and the handshake-timeout that bounds how long a
 * session may take to be set up and authenticated.  Free of verbs calls,
 * as donor.c is: everything goes through struct fsd_ops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "donor.h"
#include "donor_internal.h"
#include "handshake.h"
#include "log.h"

void fsd_donor_set_key(struct fsd_donor *d, const struct fsd_auth_key *key,
		       const char *path)
{
	d->key = *key;
	snprintf(d->key_file, sizeof(d->key_file), "%s", path ? path : "");
}

void fsd_donor_set_host_keys(struct fsd_donor *d, const char *dir)
{
	snprintf(d->host_keys, sizeof(d->host_keys), "%s", dir ? dir : "");
}

void fsd_donor_set_donor_key(struct fsd_donor *d,
			     const struct fsd_auth_key *key)
{
	d->donor_key = *key;
}

/*
 * Has @s, established, had auth-timeout to prove its key?  A connect
 * without the key holds a place among the unauthenticated ones and a
 * protection domain for no longer than that.
 */
static bool auth_late(const struct fsd_donor *d, const struct fsd_session *s,
		      uint64_t now_ms)
{
	return d->lim.auth_timeout_ms && s->established &&
	       ms_since(now_ms, s->up_since) >= d->lim.auth_timeout_ms;
}

/*
 * Close sessions whose connections were accepted but did not come up
 * within handshake-timeout: a connect that stops half way holds a
 * protection domain, queue pairs and buffers for nothing.
 */
void fsd_donor_handshakes(struct fsd_donor *d, uint64_t now_ms)
{
	uint32_t limit = d->lim.handshake_timeout_ms;
	struct fsd_session *s;

	fsd_connect_log_flush(d, now_ms);
	if (!limit)
		return;
	for (s = d->sessions; s; s = s->next) {
		uint64_t pending;
		unsigned int q;

		if (s->closing)
			continue;
		if (s->refused) {
			if (ms_since(now_ms, s->created) >= limit)
				fsd_session_close(d, s, s->refusal_level,
						  "%s (the reply was not acknowledged within handshake-timeout)",
						  s->refusal);
			continue;
		}
		if (!s->established) {
			if (ms_since(now_ms, s->created) < limit)
				continue;
			d->cnt.handshake_timeouts++;
			fsd_session_close(d, s, FSD_LOG_WARN,
					  "control QP not established within %u ms (handshake-timeout)",
					  limit);
			continue;
		}
		if (!fsd_session_authenticated(s)) {
			bool late = ms_since(now_ms, s->created) >= limit;

			if (!late && !auth_late(d, s, now_ms))
				continue;
			d->cnt.handshake_timeouts++;
			d->cnt.auth_timeouts++;
			fsd_session_close(d, s, FSD_LOG_WARN,
					  "not authenticated within %u ms (%s)",
					  late ? limit : d->lim.auth_timeout_ms,
					  late ? "handshake-timeout" :
						 "auth-timeout, from the connection's establishment");
			continue;
		}
		pending = s->io_attached & ~s->io_up;
		for (q = 1; pending && q <= 64; q++, pending >>= 1) {
			if (!(pending & 1) ||
			    ms_since(now_ms, s->io_since[q - 1]) < limit)
				continue;
			d->cnt.handshake_timeouts++;
			fsd_session_close(d, s, FSD_LOG_WARN,
					  "I/O queue %u not established within %u ms (handshake-timeout)",
					  q, limit);
			break;
		}
	}
}

/* An answer to a request of @s that is not allowed: an AUTH_REP of @st. */
static int send_auth_rep(struct fsd_donor *d, struct fsd_session *s,
			 uint64_t cookie, unsigned int st)
{
	union farswap_msg r;

	farswap_msg_init(&r, FARSWAP_MSG_AUTH_REP, s->version, cookie);
	r.auth_rep.status = cpu_to_le16((uint16_t)st);
	return fsd_send_msg(d, s, &r, 0);
}

/*
 * Refuse @s with an AUTH_REP of @st (@cookie echoed), and close it for
 * @why once that reply is out.  Closing at once moves the queue pair to
 * the error state, which can flush the reply before it leaves: the host
 * would see a disconnect instead of the reason.  The session takes no
 * more messages meanwhile, and handshake-timeout bounds the wait (it is
 * not authenticated).
 */
static int refuse_session(struct fsd_donor *d, struct fsd_session *s,
			  uint64_t cookie, unsigned int st, int level,
			  const char *why)
{
	int ret = send_auth_rep(d, s, cookie, st);

	if (ret)
		return ret;	/* closed by fsd_send_msg() */
	s->refused = true;
	s->refusal_level = level;
	snprintf(s->refusal, sizeof(s->refusal), "%s", why);
	return -EACCES;
}

/* Every send of @s completed: a refused session's reply is out. */
void fsd_sends_done(struct fsd_donor *d, struct fsd_session *s)
{
	if (s->refused)
		fsd_session_close(d, s, s->refusal_level, "%s", s->refusal);
}

/* Log an authentication failure of @s, at most so often. */
static void auth_log(struct fsd_donor *d, struct fsd_session *s,
		     uint64_t now_ms, const char *why)
{
	uint32_t missed = 0;

	if (!fsd_ratelimit_pass(&d->auth_log, now_ms, FSD_REFUSE_LOG_MS,
				FSD_REFUSE_LOG_BURST, &missed))
		return;
	if (missed)
		pr_warn("%u more authentication failures were not logged",
			missed);
	pr_warn("host %u (%s, %s): authentication failed: %s", s->nr,
		s->name, s->peer, why);
}

/*
 * The host id as a UUID with dashes (as the host's sysfs host_id shows
 * it), for an id farswapd names in hex; false for any other id.
 */
static bool host_uuid_name(const struct fsd_session *s, char *out,
			   size_t len)
{
	static const unsigned int dash[] = { 8, 12, 16, 20 };
	size_t i, at = 0, k = 0;

	if (strlen(s->name) != 2 * FARSWAP_ID_LEN || len < 2 * FARSWAP_ID_LEN + 5)
		return false;
	for (i = 0; i < 2 * FARSWAP_ID_LEN; i++) {
		if (k < 4 && i == dash[k]) {
			out[at++] = '-';
			k++;
		}
		out[at++] = s->name[i];
	}
	out[at] = '\0';
	return true;
}

/* Which secret a host proves, and where it came from. */
struct host_key {
	struct fsd_auth_key key;
	enum fsd_proof proof;
	char name[FSD_HOST_KEY_NAME_MAX + 1];	/* its file in host-keys */
};

/* A host's file in host-keys, by @name: 0, -ENOENT (none) or -errno. */
static int load_host_key(struct fsd_donor *d, const char *name,
			 struct host_key *hk, char *why, size_t whylen)
{
	int ret = fsd_auth_load_host_key(d->host_keys, name, &hk->key, why,
					 whylen);

	if (!ret) {
		hk->proof = FSD_PROOF_HOST_KEY;
		snprintf(hk->name, sizeof(hk->name), "%s", name);
	}
	return ret;
}

/*
 * The secret @s must prove: the host's own file in host-keys (named by
 * its id as logged, or as a dashed UUID), else key-file.  Returns 0 with
 * @hk set, or -errno with why in @why (never a byte of a secret).
 */
static int pick_host_key(struct fsd_donor *d, struct fsd_session *s,
			 struct host_key *hk, char *why, size_t whylen)
{
	char uuid[2 * FARSWAP_ID_LEN + 5];
	int ret = -ENOENT;

	memset(hk, 0, sizeof(*hk));
	if (d->host_keys[0] && fsd_auth_host_key_name_ok(s->name))
		ret = load_host_key(d, s->name, hk, why, whylen);
	if (ret == -ENOENT && d->host_keys[0] &&
	    host_uuid_name(s, uuid, sizeof(uuid)))
		ret = load_host_key(d, uuid, hk, why, whylen);
	if (ret != -ENOENT)
		return ret;
	if (!d->key.len) {
		snprintf(why, whylen,
			 "no key for this host in host-keys %.160s, and no key-file",
			 d->host_keys);
		return -ENOKEY;
	}
	hk->key = d->key;
	hk->proof = FSD_PROOF_KEY_FILE;
	return 0;
}

/*
 * The secret @s proves with: the host's key, or, when the host pins this
 * donor (FARSWAP_FEAT_PINNED, granted only with a donor key), the pair
 * key of this donor's key and the host's.  In place in @hk.
 */
static int session_secret(struct fsd_donor *d, struct fsd_session *s,
			  struct host_key *hk, char *why, size_t whylen)
{
	struct fsd_auth_key pair;
	int ret;

	if (!(s->features & FARSWAP_FEAT_PINNED))
		return 0;
	ret = fsd_auth_pair_key(&d->donor_key, &hk->key, &pair);
	fsd_auth_key_clear(&hk->key);
	if (ret) {
		snprintf(why, whylen, "cannot derive the pair key: %s",
			 strerror(-ret));
		return ret;
	}
	hk->key = pair;
	fsd_auth_key_clear(&pair);
	return 0;
}

bool fsd_session_key_current(struct fsd_donor *d, struct fsd_session *s,
			     char *why, size_t whylen)
{
	struct host_key now;
	bool same;

	if (pick_host_key(d, s, &now, why, whylen))
		return false;
	/*
	 * Its own file gone: revoked, even where key-file's secret happens
	 * to be the same bytes.
	 */
	if (s->proof == FSD_PROOF_HOST_KEY && now.proof != FSD_PROOF_HOST_KEY) {
		fsd_auth_key_clear(&now.key);
		snprintf(why, whylen, "its host-keys file is gone");
		return false;
	}
	if (session_secret(d, s, &now, why, whylen))
		return false;
	same = now.key.len == s->key.len &&
	       !CRYPTO_memcmp(now.key.bytes, s->key.bytes, now.key.len);
	fsd_auth_key_clear(&now.key);
	if (!same)
		snprintf(why, whylen, "its key in %s changed",
			 d->host_keys[0] ? "host-keys or key-file" : "key-file");
	return same;
}

/*
 * Which secret @s proved, by its file (never a byte of it): its own in
 * host-keys, which proves its id, or the key-file every host may hold,
 * which proves only that it is one of them (its id is claimed).
 */
static void log_proof(const struct fsd_donor *d, const struct fsd_session *s)
{
	char pin[160];

	snprintf(pin, sizeof(pin), "%s%s",
		 s->features & FARSWAP_FEAT_PINNED ?
			"; it pins this donor's key" :
		 d->donor_key.len ? "; it does not pin this donor's key" : "",
		 s->features & FARSWAP_FEAT_KX ? "; session key (x25519)" :
			"; no session key (its farswap.ko predates them): its control messages are not tagged");

	if (s->proof == FSD_PROOF_HOST_KEY)
		pr_info("host %u (%s, %s): authenticated (hmac-sha256) with its own key, host-keys file %s/%s: host id proven%s",
			s->nr, s->name, s->peer, d->host_keys, s->key_name,
			pin);
	else
		pr_info("host %u (%s, %s): authenticated (hmac-sha256) with the shared key-file %s: host id claimed, not proven%s",
			s->nr, s->name, s->peer,
			d->key_file[0] ? d->key_file : "(path not known)",
			pin);
}

/*
 * The handshake fails for good: a proof refused, or one that cannot be
 * asked for.  Logged (rate-limited) with @why, counted, and the session
 * closed after an AUTH_REP DENIED that tells the host @reason.
 */
static int deny_proof(struct fsd_donor *d, struct fsd_session *s,
		      uint64_t cookie, uint64_t now_ms, const char *why,
		      const char *reason)
{
	s->auth = FSD_AUTH_FAILED;
	d->cnt.auth_failed++;
	auth_log(d, s, now_ms, why);
	return refuse_session(d, s, cookie, FARSWAP_ST_DENIED, FSD_LOG_INFO,
			      reason);
}

/*
 * The secret the host of @s must prove, into s->key; or the session
 * refused (AUTH_REP DENIED echoing @cookie) with -EACCES.
 */
static int take_host_key(struct fsd_donor *d, struct fsd_session *s,
			 uint64_t cookie, uint64_t now_ms)
{
	struct host_key hk;
	char why[256];

	if (pick_host_key(d, s, &hk, why, sizeof(why)) ||
	    session_secret(d, s, &hk, why, sizeof(why)))
		return deny_proof(d, s, cookie, now_ms, why,
				  "no key for this host");
	s->key = hk.key;
	s->proof = hk.proof;
	memcpy(s->key_name, hk.name, sizeof(s->key_name));
	fsd_auth_key_clear(&hk.key);
	return 0;
}

/* A fresh nonce of the donor's for @s, never all zero. */
static int donor_nonce(struct fsd_donor *d, struct fsd_session *s)
{
	int ret;

	do {
		ret = d->ops->random(d, s->donor_nonce, FARSWAP_AUTH_NONCE_LEN);
	} while (!ret && farswap_is_zero(s->donor_nonce, FARSWAP_AUTH_NONCE_LEN));
	return ret;
}

/*
 * What AUTH_REQ and AUTH_KX_REQ check first.  A donor without a key
 * answers DENIED: nothing to prove, and the host asked anyway.  Out of
 * turn, or not the handshake the host announced (AUTH_KX_REQ exactly
 * when it announced FARSWAP_FEAT_KX), closes the session.  True to go
 * on; else false with what the handler returns in @ret.
 */
static bool auth_req_in_turn(struct fsd_donor *d, struct fsd_session *s,
			     const union farswap_msg *m, uint64_t now_ms,
			     int *ret)
{
	bool kx = m->hdr.type == FARSWAP_MSG_AUTH_KX_REQ;

	if (s->auth == FSD_AUTH_NONE) {
		auth_log(d, s, now_ms,
			 "the host asks to authenticate, and this donor has no key-file");
		*ret = send_auth_rep(d, s, le64_to_cpu(m->hdr.cookie),
				     FARSWAP_ST_DENIED);
		return false;
	}
	if (s->auth != FSD_AUTH_WAIT_REQ ||
	    kx != !!(s->features & FARSWAP_FEAT_KX)) {
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "bad message: %s out of turn",
				  farswap_msg_type_str(m->hdr.type));
		*ret = -EPROTO;
		return false;
	}
	return true;
}

/*
 * The end of AUTH_REQ's and AUTH_KX_REQ's handling: @chal, when @ret says
 * it could be made, goes out and the proof is awaited; otherwise the
 * session closes, saying it could not compute @what.
 */
static int send_challenge(struct fsd_donor *d, struct fsd_session *s,
			  const union farswap_msg *chal, int ret,
			  const char *what)
{
	if (ret) {
		fsd_session_close(d, s, FSD_LOG_ERR, "cannot compute %s: %s",
				  what, strerror(-ret));
		return ret;
	}
	s->auth = FSD_AUTH_WAIT_PROOF;
	return fsd_send_msg(d, s, chal, 0);
}

/*
 * AUTH_KX_REQ (FARSWAP_FEAT_KX): a key pair of our own for this session
 * alone, the X25519 secret both now share, and from it and the proven key
 * our MAC, the proof the host must send, and the session key.
 */
int fsd_handle_auth_kx_req(struct fsd_donor *d, struct fsd_session *s,
			   const union farswap_msg *m, uint64_t now_ms)
{
	uint64_t cookie = le64_to_cpu(m->hdr.cookie);
	uint8_t priv[FARSWAP_KX_PUB_LEN], dh[FARSWAP_KX_PUB_LEN];
	struct farswap_kx_transcript t;
	union farswap_msg r;
	int ret;

	if (!auth_req_in_turn(d, s, m, now_ms, &ret))
		return ret;
	ret = take_host_key(d, s, cookie, now_ms);
	if (ret)
		return ret;
	memcpy(s->host_nonce, m->kx_req.host_nonce, FARSWAP_AUTH_NONCE_LEN);
	farswap_msg_init(&r, FARSWAP_MSG_AUTH_KX_CHAL, s->version, cookie);
	ret = donor_nonce(d, s);
	if (!ret)
		ret = d->ops->random(d, priv, sizeof(priv));
	if (!ret)
		ret = fsd_kx_public(priv, r.kx_chal.donor_pub);
	if (!ret)
		ret = fsd_kx_shared(priv, m->kx_req.host_pub, dh);
	explicit_bzero(priv, sizeof(priv));
	if (ret == -EINVAL)
		return deny_proof(d, s, cookie, now_ms,
				  "its X25519 public key is of low order (no shared secret)",
				  "a public key of low order");
	memcpy(r.kx_chal.donor_nonce, s->donor_nonce, FARSWAP_AUTH_NONCE_LEN);
	farswap_kx_transcript_init(&t, "", s->host_nonce, s->donor_nonce,
				   m->kx_req.host_pub, r.kx_chal.donor_pub,
				   s->token, s->host_id, d->donor_id,
				   s->host_features, s->features, s->version);
	if (!ret)
		ret = fsd_kx_derive(&s->key, dh, &t, r.kx_chal.donor_mac,
				    s->kx_host_mac, s->kx_key);
	explicit_bzero(dh, sizeof(dh));
	return send_challenge(d, s, &r, ret, "the session key");
}

/* AUTH_REQ: answer the host's nonce with ours and the donor's MAC. */
int fsd_handle_auth_req(struct fsd_donor *d, struct fsd_session *s,
			const union farswap_msg *m, uint64_t now_ms)
{
	uint64_t cookie = le64_to_cpu(m->hdr.cookie);
	union farswap_msg r;
	int ret;

	if (!auth_req_in_turn(d, s, m, now_ms, &ret))
		return ret;
	/* Refused before any MAC is computed: nothing to attack offline. */
	if (d->lim.require_kx)
		return deny_proof(d, s, cookie, now_ms,
				  "its farswap.ko has no session keys (no X25519), and require-session-keys is set",
				  "no session keys");
	ret = take_host_key(d, s, cookie, now_ms);
	if (ret)
		return ret;
	memcpy(s->host_nonce, m->auth_req.host_nonce, FARSWAP_AUTH_NONCE_LEN);
	ret = donor_nonce(d, s);
	farswap_msg_init(&r, FARSWAP_MSG_AUTH_CHAL, s->version, cookie);
	memcpy(r.auth_chal.donor_nonce, s->donor_nonce, FARSWAP_AUTH_NONCE_LEN);
	if (!ret)
		ret = fsd_auth_mac(&s->key, FARSWAP_AUTH_DONOR, s->host_nonce,
				   s->donor_nonce, s->token, s->host_id,
				   d->donor_id, r.auth_chal.donor_mac);
	return send_challenge(d, s, &r, ret, "the authentication challenge");
}

/* AUTH_PROOF: the host's MAC decides. */
int fsd_handle_auth_proof(struct fsd_donor *d, struct fsd_session *s,
			  const union farswap_msg *m, uint64_t now_ms)
{
	uint64_t cookie = le64_to_cpu(m->hdr.cookie);
	uint8_t want[FARSWAP_AUTH_MAC_LEN];
	int ret;

	if (s->auth != FSD_AUTH_WAIT_PROOF) {
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "bad message: AUTH_PROOF out of turn");
		return -EPROTO;
	}
	if (s->features & FARSWAP_FEAT_KX) {
		memcpy(want, s->kx_host_mac, sizeof(want));
		explicit_bzero(s->kx_host_mac, sizeof(s->kx_host_mac));
		ret = 0;
	} else {
		ret = fsd_auth_mac(&s->key, FARSWAP_AUTH_HOST, s->host_nonce,
				   s->donor_nonce, s->token, s->host_id,
				   d->donor_id, want);
	}
	if (ret) {
		fsd_session_close(d, s, FSD_LOG_ERR,
				  "cannot check the authentication proof: %s",
				  strerror(-ret));
		return ret;
	}
	if (!fsd_auth_mac_equal(want, m->auth_proof.host_mac)) {
		explicit_bzero(want, sizeof(want));
		return deny_proof(d, s, cookie, now_ms,
				  "wrong proof (not the secret this donor holds for the host)",
				  "authentication failed");
	}
	explicit_bzero(want, sizeof(want));
	/*
	 * max-hosts counts authenticated sessions only, and this one was
	 * let in (decide_ctrl()) before it was one: others may have proved
	 * the key since and taken the last places.  Refused as a connect
	 * over max-hosts is, with BUSY: the donor is full, not the key
	 * wrong.
	 */
	if (fsd_live_sessions(d, true) >= d->max_hosts) {
		d->cnt.rejects++;
		d->cnt.refused[FSD_REFUSED_MAX_HOSTS]++;
		refuse_session(d, s, cookie, FARSWAP_ST_BUSY, FSD_LOG_NOTICE,
			       "right proof, but too many hosts (max-hosts)");
		return -EBUSY;
	}
	s->auth = FSD_AUTH_OK;
	d->cnt.auth_ok++;
	log_proof(d, s);
	ret = send_auth_rep(d, s, cookie, FARSWAP_ST_OK);
	/* The AUTH_REP went out bare; every message after it is tagged. */
	if (!ret && (s->features & FARSWAP_FEAT_KX)) {
		s->tagged = true;
		s->tx_seq = 0;
		s->rx_seq = 0;
		d->cnt.auth_kx++;
	} else if (!ret) {
		d->cnt.auth_legacy++;
	}
	/* Only a host that proved its id may have its old session probed. */
	if (!ret)
		fsd_probe_host(d, s->host_id, s, now_ms);
	return ret;
}

/*
 * A request of a session not authenticated yet: DENIED, in an AUTH_REP
 * that echoes its cookie.  The session stays until handshake-timeout, so
 * a host that sent too early (or a stray message) can still authenticate.
 */
int fsd_deny_unauthenticated(struct fsd_donor *d, struct fsd_session *s,
			     const union farswap_msg *m, uint64_t now_ms)
{
	char why[96];

	d->cnt.auth_denied_msgs++;
	d->cnt.denied++;
	snprintf(why, sizeof(why), "%s before authentication: denied",
		 farswap_msg_type_str(m->hdr.type));
	auth_log(d, s, now_ms, why);
	return send_auth_rep(d, s, le64_to_cpu(m->hdr.cookie),
			     FARSWAP_ST_DENIED);
}
