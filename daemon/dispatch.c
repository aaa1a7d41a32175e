// SPDX-License-Identifier: GPL-2.0
/*
 * One received control message: checked (farswap_msg_check(), and in
 * words for the log when it fails), then handed to the handler of its
 * type: the authentication handshake's (handshake.c), a reclaim's answer
 * (reclaim.c), a resume after a restart (resume.c), or the slab and stats
 * requests (donor.c).  The dispatch
 * stands above all three, so that none of them calls back up into
 * another.  Free of verbs calls, as donor.c is.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "donor.h"
#include "donor_internal.h"
#include "handshake.h"
#include "log.h"
#include "reclaim.h"

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

/*
 * One received control message.  Returns 0, or a negative errno when the
 * session was closed because of it (a malformed message, a message only
 * a donor sends, a reply that could not be posted).
 */
static int handle_tagged(struct fsd_donor *d, struct fsd_session *s,
			 const void *buf, size_t len, uint64_t now_ms);
static int handle_checked(struct fsd_donor *d, struct fsd_session *s,
			  union farswap_msg *mp, uint64_t now_ms);

int fsd_handle_msg(struct fsd_donor *d, struct fsd_session *s, const void *buf,
		   size_t len, uint64_t now_ms)
{
	union farswap_msg m;
	char why[128];

	/* A refused session only waits for its reply to leave. */
	if (s->closing || s->refused)
		return -ESHUTDOWN;
	if (s->tagged)
		return handle_tagged(d, s, buf, len, now_ms);
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
	return handle_checked(d, s, &m, now_ms);
}

/*
 * A message of a tagged session (FARSWAP_FEAT_KX): its tag must be the
 * one the session key gives the next message from the host, or the
 * session ends; then it is handled as any other.
 */
static int handle_tagged(struct fsd_donor *d, struct fsd_session *s,
			 const void *buf, size_t len, uint64_t now_ms)
{
	uint8_t want[FARSWAP_KX_TAG_LEN];
	union farswap_msg m;
	char why[128];
	size_t body;

	if (farswap_msg_check_tagged(buf, len, s->version) != FARSWAP_ST_OK) {
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN, "bad message: %s",
				  len > FARSWAP_KX_TAG_LEN ?
				  fsd_msg_problem(buf, len - FARSWAP_KX_TAG_LEN,
						  s->version, why, sizeof(why)) :
				  "shorter than a tag");
		return -EPROTO;
	}
	body = len - FARSWAP_KX_TAG_LEN;
	if (fsd_kx_tag(s->kx_key, 'H', s->rx_seq, buf, body, want) ||
	    CRYPTO_memcmp(want, (const uint8_t *)buf + body,
			  FARSWAP_KX_TAG_LEN)) {
		d->cnt.bad_msgs++;
		d->cnt.bad_tags++;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "bad message: %s with a wrong tag (changed, replayed or out of order on the way): closing the session",
				  farswap_msg_type_str(((const struct farswap_msg_hdr *)buf)->type));
		return -EPROTO;
	}
	s->rx_seq++;
	memset(&m, 0, sizeof(m));
	memcpy(&m, buf, body);
	s->msgs_in++;
	s->last_active = now_ms;
	return handle_checked(d, s, &m, now_ms);
}

/* A message that passed its checks (and its tag, if tagged). */
static int handle_checked(struct fsd_donor *d, struct fsd_session *s,
			  union farswap_msg *mp, uint64_t now_ms)
{
	union farswap_msg m = *mp, r;

	switch (m.hdr.type) {
	case FARSWAP_MSG_AUTH_REQ:
		return fsd_handle_auth_req(d, s, &m, now_ms);
	case FARSWAP_MSG_AUTH_KX_REQ:
		return fsd_handle_auth_kx_req(d, s, &m, now_ms);
	case FARSWAP_MSG_AUTH_PROOF:
		return fsd_handle_auth_proof(d, s, &m, now_ms);
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
	case FARSWAP_MSG_SLAB_RESUME_REQ:
	case FARSWAP_MSG_SLAB_FREE_REQ:
	case FARSWAP_MSG_RECLAIM_REP:
	case FARSWAP_MSG_STATS_REQ:
	case FARSWAP_MSG_INFO_REQ:
		if (!fsd_session_authenticated(s))
			return fsd_deny_unauthenticated(d, s, &m, now_ms);
		break;
	default:
		break;
	}
	switch (m.hdr.type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		return fsd_handle_alloc(d, s, &m, now_ms);
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		return fsd_handle_resume(d, s, &m, now_ms);
	case FARSWAP_MSG_SLAB_FREE_REQ:
		return fsd_handle_free(d, s, &m);
	case FARSWAP_MSG_RECLAIM_REP:
		return fsd_handle_reclaim_rep(d, s, &m, now_ms);
	case FARSWAP_MSG_STATS_REQ:
		farswap_msg_init(&r, FARSWAP_MSG_STATS_REP, s->version,
				 le64_to_cpu(m.hdr.cookie));
		fsd_fill_stats(d, s, &r);
		return fsd_send_msg(d, s, &r, 0);
	case FARSWAP_MSG_INFO_REQ:
		fsd_info_rep_build(d, s, le64_to_cpu(m.hdr.cookie), &r);
		return fsd_send_msg(d, s, &r, 0);
	default:
		d->cnt.bad_msgs++;
		fsd_session_close(d, s, FSD_LOG_WARN,
				  "bad message: %s is only sent by a donor",
				  farswap_msg_type_str(m.hdr.type));
		return -EPROTO;
	}
}
