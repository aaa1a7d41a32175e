/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * farswap wire protocol: the one definition of every message exchanged
 * between farswap.ko (the host) and farswapd (the donor).
 *
 * Included by the kernel module and by the userspace daemon alike, so it
 * uses only fixed-width little-endian fields, explicit reserved bytes
 * (always sent as zero, and checked to be zero), and a size assertion on
 * every structure.
 *
 * Transport
 * ---------
 * The host is the rdma_cm client, the donor the server (default port
 * FARSWAP_DEFAULT_PORT).  A host opens one session per donor made of one
 * control queue pair (qid 0) and nr_io_queues I/O queue pairs (qid 1..n):
 *
 *  1. The control QP connects with a struct farswap_conn_req as
 *     rdma_connect() private data (session = 0).  The donor answers with a
 *     struct farswap_conn_rep as rdma_accept() private data: the negotiated
 *     version, a session token and its slab geometry; or it rejects with a
 *     struct farswap_conn_rej giving the reason.
 *  2. Each I/O QP connects with the same request, qtype IO, its qid and the
 *     session token from step 1.  The donor accepts it with no private data
 *     (or a struct farswap_conn_rep of the same session, which the host
 *     then checks).  All QPs of a session share the donor's
 *     protection domain for that host, so the I/O QPs can reach the slabs
 *     handed out on the control QP, and nothing else.
 *  3. Control messages (struct farswap_msg_hdr + body) are two-sided
 *     SEND/RECV on the control QP.  Each message fits FARSWAP_MSG_MAX bytes.
 *  4. Page data moves only by one-sided RDMA WRITE (swap-out) and RDMA READ
 *     (swap-in) on the I/O QPs, to [addr, addr + length) with the rkey of a
 *     slab the host holds.  The donor's CPU never touches page data.
 *
 * Losing any QP of a session ends the session: the donor deregisters and
 * frees every slab of it.
 *
 * Flow control: each side keeps FARSWAP_CTRL_DEPTH receives posted on the
 * control QP.  The host has at most FARSWAP_CTRL_DEPTH / 2 requests
 * outstanding; the donor has at most FARSWAP_CTRL_DEPTH / 2 unsolicited
 * messages outstanding: a reclaim request until its RECLAIM_REP arrives,
 * a SLAB_REVOKE or an unsolicited STATS_REP until its send completes.
 *
 * Liveness: the donor may send an unsolicited STATS_REP at any time, e.g.
 * to probe an old session of a host that connects again: a host that is
 * gone fails the send, and the donor frees that session.
 *
 * Versioning: the connect request carries the range of versions the host
 * speaks; the donor picks the highest version both speak
 * (farswap_negotiate_version()) or rejects with FARSWAP_ST_VERSION and its
 * own range.  Every later message carries the negotiated version.
 */
#ifndef FARSWAP_PROTO_H
#define FARSWAP_PROTO_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#else
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

/* Userspace shim for the kernel's byte-order helpers. */
#ifndef cpu_to_le16
#define cpu_to_le16(x) ((__le16)htole16(x))
#define cpu_to_le32(x) ((__le32)htole32(x))
#define cpu_to_le64(x) ((__le64)htole64(x))
#define le16_to_cpu(x) le16toh((__u16)(x))
#define le32_to_cpu(x) le32toh((__u32)(x))
#define le64_to_cpu(x) le64toh((__u64)(x))
#endif
#endif /* __KERNEL__ */

#define FARSWAP_MAGIC		0x50575346u	/* "FSWP" in memory order */
#define FARSWAP_VERSION_MIN	1
#define FARSWAP_VERSION_MAX	1
#define FARSWAP_DEFAULT_PORT	7471

/* Unit of page data on the wire: one page of a 4 KiB-page host. */
#define FARSWAP_PAGE_SIZE	4096u
/* Slab sizes are powers of two in this range. */
#define FARSWAP_SLAB_SIZE_MIN	(2ull << 20)	/* one THP swap-out */
#define FARSWAP_SLAB_SIZE_MAX	(1ull << 40)
#define FARSWAP_SLAB_SIZE_DEFAULT (1ull << 30)

#define FARSWAP_CTRL_DEPTH	32	/* receives posted on the control QP */
/*
 * Bytes: every control message fits, its tag included (FARSWAP_FEAT_KX).
 * Without FARSWAP_FEAT_KX no message is over 64 bytes, the receive
 * buffers of peers that predate it.
 */
#define FARSWAP_MSG_MAX		128
#define FARSWAP_MAX_IO_QUEUES	64
#define FARSWAP_ID_LEN		16	/* host and donor identities */
#define FARSWAP_PRIVATE_DATA_MAX 56	/* rdma_connect/accept private data limit */
#define FARSWAP_KX_JOIN_TAG_LEN	12	/* an I/O QP's join_tag (FARSWAP_FEAT_KX) */

/*
 * Status and reason codes, carried in replies and in connection rejects.
 * farswap_status_str() gives each a sentence for logs.
 */
enum farswap_status {
	FARSWAP_ST_OK		= 0,
	FARSWAP_ST_VERSION	= 1,	/* no protocol version in common */
	FARSWAP_ST_INVALID	= 2,	/* malformed or out-of-range message,
					 * or a duplicate/out-of-range qid */
	FARSWAP_ST_NO_SPACE	= 3,	/* no free slab (or nowhere to move one) */
	FARSWAP_ST_NO_ENTRY	= 4,	/* no such slab or session */
	FARSWAP_ST_SLAB_SIZE	= 5,	/* slab size differs from the donor's */
	FARSWAP_ST_BUSY		= 6,	/* donor short of memory, serving too
					 * many hosts or sessions from one
					 * address, over a rate, or shutting
					 * down */
	FARSWAP_ST_DENIED	= 7,	/* slab or session belongs to another
					 * host, or the donor does not allow
					 * this host */
	FARSWAP_ST_INTERNAL	= 8,	/* registration or allocation failed */
	FARSWAP_ST_COUNT
};

/* Which kind of queue pair a connection request opens. */
enum farswap_qtype {
	FARSWAP_QT_CTRL	= 1,
	FARSWAP_QT_IO	= 2,
};

/* Feature bits, announced in the connect request and reply. */
#define FARSWAP_FEAT_RECLAIM	(1u << 0)	/* host migrates reclaimed slabs */
#define FARSWAP_FEAT_STATS_PUSH	(1u << 1)	/* donor sends unsolicited stats */
#define FARSWAP_FEAT_AUTH	(1u << 2)	/* HMAC challenge-response (AUTH_*) */
#define FARSWAP_FEAT_INFO	(1u << 3)	/* donor answers INFO_REQ */
#define FARSWAP_FEAT_REVOKE	(1u << 4)	/* host takes SLAB_REVOKE notices */
#define FARSWAP_FEAT_RESUME	(1u << 5)	/* slabs outlive the donor's restart */
#define FARSWAP_FEAT_PINNED	(1u << 6)	/* proofs under the pair key (AUTH_*) */
#define FARSWAP_FEAT_KX		(1u << 7)	/* X25519, a session key, tags */
/*
 * Slabs outlive the host's session too: a session that ends without the
 * host's FARSWAP_FREE_SESSION (a transport error, a host that stopped
 * answering) leaves its slabs kept for the host, who asks them back with
 * SLAB_RESUME_REQ in a new session.  Needs FARSWAP_FEAT_RESUME.  Not in
 * FARSWAP_FEATURES_KNOWN: a host asks for it only if it says goodbye.
 */
#define FARSWAP_FEAT_KEEP	(1u << 8)
#define FARSWAP_FEATURES_KNOWN	(FARSWAP_FEAT_RECLAIM | FARSWAP_FEAT_STATS_PUSH | \
				 FARSWAP_FEAT_INFO | FARSWAP_FEAT_REVOKE | \
				 FARSWAP_FEAT_RESUME)

/*
 * A donor's failure domain: a name of 1 to FARSWAP_DOMAIN_LEN printable
 * ASCII characters other than space, NUL-padded on the wire (a name of
 * exactly FARSWAP_DOMAIN_LEN characters has no NUL).  Donors that share
 * a power feed, a switch or a rack share a name; a host puts a chunk's
 * replicas in distinct domains when the donors allow it.
 */
#define FARSWAP_DOMAIN_LEN	32

/*
 * Connection private data
 */

/* Host -> donor, rdma_connect() private data, for every QP of a session. */
struct farswap_conn_req {
	__le32 magic;
	__u8 ver_min;		/* lowest version the host speaks */
	__u8 ver_max;		/* highest version the host speaks */
	__u8 qtype;		/* enum farswap_qtype */
	__u8 reserved0;
	__le16 qid;		/* 0 for control, 1..nr_io_queues for I/O */
	__le16 nr_io_queues;	/* I/O QPs the host will open */
	__le32 features;	/* FARSWAP_FEAT_* the host supports */
	__u8 host_id[FARSWAP_ID_LEN];	/* stable identity of the host */
	__le64 session;		/* 0 for control; token from conn_rep for I/O */
	__le32 queue_depth;	/* work requests the host may post on this QP */
	/*
	 * An I/O QP of a session with FARSWAP_FEAT_KX: its proof of the
	 * session key (farswap_kx_join_input); otherwise zero.
	 */
	__u8 join_tag[FARSWAP_KX_JOIN_TAG_LEN];
};
_Static_assert(sizeof(struct farswap_conn_req) == FARSWAP_PRIVATE_DATA_MAX,
	       "conn_req must fill rdma_connect private data exactly");

/*
 * Donor -> host, rdma_accept() private data.  56 bytes, like the request:
 * the userspace rdma_cm ABI carries no more (struct rdma_ucm_conn_param),
 * and librdmacm drops larger private data without an error.
 */
struct farswap_conn_rep {
	__le32 magic;
	__u8 version;		/* negotiated version */
	__u8 reserved0[3];
	__le32 features;	/* FARSWAP_FEAT_* both sides support */
	__le32 slabs_total;	/* slabs this donor donates */
	__le64 session;		/* token the host's I/O QPs present */
	__le64 slab_size;	/* bytes per slab, a power of two */
	__le32 slabs_free;	/* slabs free right now */
	__le32 reserved1;
	__u8 donor_id[FARSWAP_ID_LEN];
};
_Static_assert(sizeof(struct farswap_conn_rep) == FARSWAP_PRIVATE_DATA_MAX,
	       "conn_rep must fit rdma_accept private data from userspace");

/* Donor -> host, rdma_reject() private data. */
struct farswap_conn_rej {
	__le32 magic;
	__le16 reason;		/* enum farswap_status */
	__u8 ver_min;		/* versions the donor speaks */
	__u8 ver_max;
	__u8 reserved[8];
};
_Static_assert(sizeof(struct farswap_conn_rej) == 16, "conn_rej size");

/*
 * Control messages (SEND/RECV on the control QP)
 */
enum farswap_msg_type {
	FARSWAP_MSG_SLAB_ALLOC_REQ	= 1,	/* host -> donor */
	FARSWAP_MSG_SLAB_ALLOC_REP	= 2,	/* donor -> host */
	FARSWAP_MSG_SLAB_FREE_REQ	= 3,	/* host -> donor */
	FARSWAP_MSG_SLAB_FREE_REP	= 4,	/* donor -> host */
	FARSWAP_MSG_RECLAIM_REQ		= 5,	/* donor -> host, unsolicited */
	FARSWAP_MSG_RECLAIM_REP		= 6,	/* host -> donor */
	FARSWAP_MSG_STATS_REQ		= 7,	/* host -> donor */
	FARSWAP_MSG_STATS_REP		= 8,	/* donor -> host, also unsolicited */
	FARSWAP_MSG_AUTH_REQ		= 9,	/* host -> donor */
	FARSWAP_MSG_AUTH_CHAL		= 10,	/* donor -> host */
	FARSWAP_MSG_AUTH_PROOF		= 11,	/* host -> donor */
	FARSWAP_MSG_AUTH_REP		= 12,	/* donor -> host */
	FARSWAP_MSG_INFO_REQ		= 13,	/* host -> donor */
	FARSWAP_MSG_INFO_REP		= 14,	/* donor -> host */
	FARSWAP_MSG_SLAB_REVOKE		= 15,	/* donor -> host, unsolicited */
	FARSWAP_MSG_SLAB_RESUME_REQ	= 16,	/* host -> donor */
	FARSWAP_MSG_SLAB_RESUME_REP	= 17,	/* donor -> host */
	FARSWAP_MSG_AUTH_KX_REQ		= 18,	/* host -> donor */
	FARSWAP_MSG_AUTH_KX_CHAL	= 19,	/* donor -> host */
	FARSWAP_MSG_TYPE_MAX		= FARSWAP_MSG_AUTH_KX_CHAL,
};

/*
 * Common header of every control message.  The cookie is chosen by the
 * sender of a request and echoed in its reply; unsolicited donor messages
 * carry their own cookie, which the host echoes in a RECLAIM_REP.  An
 * unsolicited STATS_REP carries cookie 0.
 */
struct farswap_msg_hdr {
	__le32 magic;
	__u8 version;		/* negotiated version */
	__u8 type;		/* enum farswap_msg_type */
	__le16 length;		/* bytes, header included; exact per type */
	__le64 cookie;
};
_Static_assert(sizeof(struct farswap_msg_hdr) == 16, "msg_hdr size");

/*
 * SLAB_ALLOC_REQ: the host asks for one slab of slab_size bytes.  host_slab
 * is the host's serial number of the request, counted per device from 1:
 * for the donor's logs only, it means nothing to the protocol.
 */
struct farswap_slab_alloc_req {
	struct farswap_msg_hdr hdr;
	__le64 slab_size;	/* must equal the donor's slab size */
	__le64 host_slab;
	__u8 reserved[16];
};
_Static_assert(sizeof(struct farswap_slab_alloc_req) == 48, "alloc_req size");

/*
 * SLAB_ALLOC_REP: on FARSWAP_ST_OK the slab [addr, addr + length) is the
 * host's, readable and writable with rkey, zero-filled.  Otherwise status
 * says why and slab_id, addr, length, rkey and resume are zero.
 * slabs_free is the donor's free count after this allocation, in both
 * cases.  resume is the slab's resume token (SLAB_RESUME_REQ) when the
 * session has FARSWAP_FEAT_RESUME, else 0: a random number the donor keeps
 * with the slab's owner, never reused for another grant.
 */
struct farswap_slab_alloc_rep {
	struct farswap_msg_hdr hdr;
	__le16 status;		/* enum farswap_status */
	__le16 reserved0;
	__le32 slab_id;		/* donor's name for the slab */
	__le64 addr;		/* remote address of the first byte */
	__le64 length;		/* bytes, equals the requested slab_size */
	__le32 rkey;
	__le32 slabs_free;
	__le64 resume;		/* token for SLAB_RESUME_REQ; 0: none */
};
_Static_assert(sizeof(struct farswap_slab_alloc_rep) == 56, "alloc_rep size");

/*
 * SLAB_RESUME_REQ: after the donor restarted, or the session failed (a
 * new session, with FARSWAP_FEAT_RESUME on both sides), the host asks for
 * a slab it held in the old session back, with its content: slab_id and
 * resume are what the SLAB_ALLOC_REP granting it said.  The donor kept
 * the memory across its restart (farswapd(8), RESTART) for a grace
 * period after it started, or across the old session's end for a grace
 * period after that (FARSWAP_FEAT_KEEP).  A donor that still holds the
 * slab in an older session of the same host ends that session: the
 * token says the host is done with it.
 */
struct farswap_slab_resume_req {
	struct farswap_msg_hdr hdr;
	__le32 slab_id;
	__le32 reserved0;
	__le64 resume;		/* never 0 */
	__le64 slab_size;	/* the slab's size when it was granted */
};
_Static_assert(sizeof(struct farswap_slab_resume_req) == 40, "resume_req size");

/*
 * SLAB_RESUME_REP: laid out as SLAB_ALLOC_REP.  On FARSWAP_ST_OK the slab
 * is the host's again with the content it had, at addr with a new rkey
 * (the old rkey died with the old process); resume is its token from now
 * on.  NO_ENTRY: the donor did not keep it (no such slab, a wrong token,
 * or the grace passed); DENIED: it was another host's; SLAB_SIZE: the
 * donor's slab size changed.  The host treats every refusal as the loss
 * of that slab.
 */
struct farswap_slab_resume_rep {
	struct farswap_msg_hdr hdr;
	__le16 status;		/* enum farswap_status */
	__le16 reserved0;
	__le32 slab_id;
	__le64 addr;
	__le64 length;
	__le32 rkey;
	__le32 slabs_free;
	__le64 resume;
};
_Static_assert(sizeof(struct farswap_slab_resume_rep) == 56, "resume_rep size");

/*
 * SLAB_FREE_REQ: the host gives a slab back (all its pages were discarded);
 * its rkey is dead once the reply is sent.  A reclaimed slab needs no
 * SLAB_FREE_REQ: the donor frees it on a RECLAIM_REP with status OK.
 *
 * With FARSWAP_FREE_SESSION in flags (FARSWAP_FEAT_KEEP only) slab_id is
 * 0 and the host gives back every slab of the session, for good: it is
 * detaching, and nothing of this session is to be kept when it ends.
 */
#define FARSWAP_FREE_SESSION	(1u << 0)

struct farswap_slab_free_req {
	struct farswap_msg_hdr hdr;
	__le32 slab_id;
	__le32 flags;		/* FARSWAP_FREE_*; 0 without FARSWAP_FEAT_KEEP */
	__u8 reserved1[8];
};
_Static_assert(sizeof(struct farswap_slab_free_req) == 32, "free_req size");

/*
 * SLAB_FREE_REP: status FARSWAP_ST_OK; NO_ENTRY for a slab nobody holds;
 * DENIED for a slab another host holds.
 */
struct farswap_slab_free_rep {
	struct farswap_msg_hdr hdr;
	__le16 status;
	__le16 reserved0;
	__le32 slab_id;
	__le32 slabs_free;
	__le32 reserved1;
};
_Static_assert(sizeof(struct farswap_slab_free_rep) == 32, "free_rep size");

/*
 * RECLAIM_REQ: the donor needs slab_id back within deadline_ms.  The host
 * moves the slab's pages elsewhere (or finds it no longer needs them) and
 * answers with RECLAIM_REP.  The donor frees the slab only on a
 * RECLAIM_REP with status OK: until then the host may still be reading it.
 * A deadline that passes costs nothing but a log line: no page is lost.
 */
struct farswap_reclaim_req {
	struct farswap_msg_hdr hdr;
	__le32 slab_id;
	__le32 deadline_ms;
	__u8 reserved[8];
};
_Static_assert(sizeof(struct farswap_reclaim_req) == 32, "reclaim_req size");

/*
 * SLAB_REVOKE: the donor takes slab_id back without the host's word (the
 * host neither gave it back nor could, past the donor's reclaim deadlines,
 * while the donor is short of memory).  It deregisters the slab grace_ms
 * after sending this, or when the host frees it (SLAB_FREE_REQ), whichever
 * comes first.  The host stops placing and posting anything there at once:
 * the slab's chunks lose that replica (their pages are lost when it was the
 * last), and nothing else of the session is touched.  RDMA to the slab
 * after the grace fails, and fails the session.  No reply.
 */
struct farswap_slab_revoke {
	struct farswap_msg_hdr hdr;
	__le32 slab_id;
	__le32 grace_ms;
	__u8 reserved[8];
};
_Static_assert(sizeof(struct farswap_slab_revoke) == 32, "slab_revoke size");

/*
 * RECLAIM_REP: echoes the request's cookie.  status OK: the host no longer
 * uses slab_id and the donor may free it.  NO_SPACE: the host found no
 * other home for the pages and keeps using the slab.  NO_ENTRY: the host
 * does not hold slab_id.
 */
struct farswap_reclaim_rep {
	struct farswap_msg_hdr hdr;
	__le16 status;
	__le16 reserved0;
	__le32 slab_id;
	__u8 reserved1[8];
};
_Static_assert(sizeof(struct farswap_reclaim_rep) == 32, "reclaim_rep size");

/* STATS_REQ: header only. */
struct farswap_stats_req {
	struct farswap_msg_hdr hdr;
};
_Static_assert(sizeof(struct farswap_stats_req) == 16, "stats_req size");

/*
 * STATS_REP: the donor's capacity, for placement.  Sent in reply to
 * STATS_REQ (cookie echoed), and unsolicited with cookie 0 when the donor
 * has slabs to offer again after a period of pressure.
 */
struct farswap_stats_rep {
	struct farswap_msg_hdr hdr;
	__le64 slab_size;
	__le32 slabs_total;	/* slabs the donor donates */
	__le32 slabs_free;	/* free for any host right now */
	__le32 slabs_host;	/* held by the receiving host */
	__le32 reserved0;
	__le64 mem_available;	/* donor's MemAvailable, bytes */
	__u8 reserved1[8];
};
_Static_assert(sizeof(struct farswap_stats_rep) == 56, "stats_rep size");

/*
 * Authentication (FARSWAP_FEAT_AUTH), after NVMe in-band authentication
 * (DH-HMAC-CHAP without the DH part).  Host and donor share one secret
 * key.  When the donor announces FARSWAP_FEAT_AUTH in its conn_rep, the
 * host's first control messages, before any other and before it opens an
 * I/O QP, are:
 *
 *   host  -> donor  AUTH_REQ    host_nonce
 *   donor -> host   AUTH_CHAL   donor_nonce, donor_mac
 *   host  -> donor  AUTH_PROOF  host_mac
 *   donor -> host   AUTH_REP    status OK, or DENIED (the donor then
 *                               closes the session), or BUSY (right
 *                               proof, but the donor has as many hosts
 *                               as it takes; it closes the session)
 *
 * Each MAC is HMAC-SHA256(key, struct farswap_auth_mac_input) with the
 * label of its sender (FARSWAP_AUTH_LABEL_*), so the donor's MAC cannot be
 * replayed as the host's; both nonces, the session token and both
 * identities are bound in, so a MAC of one session is worthless in any
 * other.  Nonces are 16 fresh random bytes, never all zero.  A host
 * checks donor_mac before it sends its own.  AUTH_CHAL and AUTH_PROOF
 * echo the AUTH_REQ's and carry their own request cookie like any
 * request; AUTH_CHAL and AUTH_REP echo the cookie of what they answer.
 *
 * Until the session is authenticated the donor answers every other
 * message with an AUTH_REP of status FARSWAP_ST_DENIED (echoing its
 * cookie) and refuses the session's I/O QPs (FARSWAP_ST_DENIED).  A
 * donor that requires authentication refuses, at connect, a control QP
 * whose conn_req lacks FARSWAP_FEAT_AUTH (FARSWAP_ST_DENIED).  A donor
 * without a key answers AUTH_REQ with an AUTH_REP of FARSWAP_ST_DENIED.
 *
 * Pinned donors (FARSWAP_FEAT_PINNED, asked for like FARSWAP_FEAT_AUTH
 * only by a host that has it: one that pins the keys of the donors it
 * trusts).  The host proves its host key, the donor its donor key, and
 * both at once: the two MACs are keyed with the pair key
 *
 *   HMAC-SHA256(donor key, FARSWAP_AUTH_LABEL_PAIR zero-padded to 16
 *               bytes || the host key's bytes)
 *
 * instead of the host key.  Only a holder of both secrets can make it: a
 * host, which holds the donor's key to check it, cannot pose as that
 * donor to another host (it lacks that host's key), and a donor that
 * holds a host's key but not this donor's key cannot pose as this donor.
 * A donor grants the feature (echoes it in its conn_rep) only when it
 * has a donor key; a host that asked for it refuses a donor that did not
 * grant it.  A relay that strips or adds the bit only makes the MACs
 * differ: the handshake fails, it never falls back.
 */
#define FARSWAP_AUTH_NONCE_LEN	16
#define FARSWAP_AUTH_MAC_LEN	32	/* HMAC-SHA256 */
/*
 * The secret: 32 bytes, decoded from a key file (common/keyfile.h) by
 * farswapctl and farswapd; the host's module takes it from a logon key
 * of exactly that length.  _MAX sizes the buffers that hold it: one
 * SHA-256 block, which HMAC uses as is.
 */
#define FARSWAP_AUTH_KEY_LEN	32
#define FARSWAP_AUTH_KEY_MAX	64
#define FARSWAP_AUTH_LABEL_LEN	16
/* The labels, zero-padded to FARSWAP_AUTH_LABEL_LEN bytes. */
#define FARSWAP_AUTH_LABEL_DONOR "farswap donor v1"	/* 16 bytes */
#define FARSWAP_AUTH_LABEL_HOST	"farswap host v1"	/* 15 + one zero */
#define FARSWAP_AUTH_LABEL_PAIR	"farswap pair v1"	/* 15 + one zero */

enum farswap_auth_role {
	FARSWAP_AUTH_DONOR = 0,	/* the MAC in AUTH_CHAL */
	FARSWAP_AUTH_HOST = 1,	/* the MAC in AUTH_PROOF */
};

/*
 * The exact bytes each MAC covers, 88 bytes, built only by
 * farswap_auth_mac_input_init() on both sides.
 */
struct farswap_auth_mac_input {
	__u8 label[FARSWAP_AUTH_LABEL_LEN];
	__u8 host_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 donor_nonce[FARSWAP_AUTH_NONCE_LEN];
	__le64 session;		/* the token of the conn_rep */
	__u8 host_id[FARSWAP_ID_LEN];
	__u8 donor_id[FARSWAP_ID_LEN];
};
_Static_assert(sizeof(struct farswap_auth_mac_input) == 88,
	       "auth_mac_input size");

/* AUTH_REQ: the host's challenge. */
struct farswap_auth_req {
	struct farswap_msg_hdr hdr;
	__u8 host_nonce[FARSWAP_AUTH_NONCE_LEN];
};
_Static_assert(sizeof(struct farswap_auth_req) == 32, "auth_req size");

/* AUTH_CHAL: the donor's challenge and its answer to the host's. */
struct farswap_auth_chal {
	struct farswap_msg_hdr hdr;
	__u8 donor_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 donor_mac[FARSWAP_AUTH_MAC_LEN];
};
_Static_assert(sizeof(struct farswap_auth_chal) == 64, "auth_chal size");

/* AUTH_PROOF: the host's answer to the donor's challenge. */
struct farswap_auth_proof {
	struct farswap_msg_hdr hdr;
	__u8 host_mac[FARSWAP_AUTH_MAC_LEN];
};
_Static_assert(sizeof(struct farswap_auth_proof) == 48, "auth_proof size");

/* AUTH_REP: OK (authenticated), DENIED, or BUSY (no room for a host). */
struct farswap_auth_rep {
	struct farswap_msg_hdr hdr;
	__le16 status;
	__le16 reserved0;
	__le32 reserved1;
	__u8 reserved2[8];
};
_Static_assert(sizeof(struct farswap_auth_rep) == 32, "auth_rep size");

/*
 * Session keys (FARSWAP_FEAT_KX), after NVMe's DH-HMAC-CHAP with its DH
 * part.  A host with a key announces it along with FARSWAP_FEAT_AUTH; a
 * donor with a key grants it.  The handshake is then
 *
 *   host  -> donor  AUTH_KX_REQ   host_nonce, host_pub
 *   donor -> host   AUTH_KX_CHAL  donor_nonce, donor_pub, donor_mac
 *   host  -> donor  AUTH_PROOF    host_mac
 *   donor -> host   AUTH_REP      as without
 *
 * where each pub is the X25519 public key of a key pair made for this
 * handshake alone, and, with K the key both prove (the host key, or the
 * pair key of "Pinned donors") and dh the X25519 shared secret (never all
 * zero: a low-order point is refused):
 *
 *   prk        = HMAC-SHA256(K, dh)                   HKDF-Extract, salt K
 *   donor_mac  = HMAC-SHA256(prk, transcript, label FARSWAP_KX_LABEL_DONOR)
 *   host_mac   = HMAC-SHA256(prk, transcript, label FARSWAP_KX_LABEL_HOST)
 *   session key = HMAC-SHA256(prk, transcript, label FARSWAP_KX_LABEL_SESSION
 *                 || 0x01)                            HKDF-Expand, 32 bytes
 *
 * The transcript (struct farswap_kx_transcript) binds both nonces, both
 * public keys, the session token, both identities, the negotiated version
 * and both sides' feature bits: a relay that changes any of them (strips
 * a feature, say) makes the MACs differ.  A passive observer sees no MAC
 * it could check a guessed key against: each covers dh.
 *
 * From the message after AUTH_REP OK on, in both directions, every
 * control message carries a tag after its body (hdr.length stays the
 * body's size; the message is FARSWAP_KX_TAG_LEN bytes longer):
 *
 *   tag = HMAC-SHA256(session key, struct farswap_kx_tag_input || message)
 *         truncated to FARSWAP_KX_TAG_LEN bytes
 *
 * with the direction and the count of tagged messages that side sent
 * before (from 0): a message dropped, replayed, reordered or changed on
 * the way fails its tag, and the receiver drops the session.  Each I/O QP
 * joins with conn_req.join_tag (struct farswap_kx_join_input under the
 * session key, truncated): the donor refuses an I/O QP whose tag is wrong
 * (DENIED), and a qid joins once, so a join seen on the wire cannot be
 * replayed.
 *
 * A donor serves a host that does not announce FARSWAP_FEAT_KX (an older
 * farswap.ko) with the handshake above it (AUTH_REQ), and logs it; a host
 * with a key refuses a donor that does not grant FARSWAP_FEAT_KX, so a
 * relay cannot make it fall back.
 */
#define FARSWAP_KX_PUB_LEN	32	/* X25519 */
#define FARSWAP_KX_KEY_LEN	32	/* the session key */
#define FARSWAP_KX_TAG_LEN	16	/* a control message's tag */
#define FARSWAP_KX_LABEL_DONOR	"farswap donor v2"	/* 16 bytes */
#define FARSWAP_KX_LABEL_HOST	"farswap host v2"	/* 15 + one zero */
#define FARSWAP_KX_LABEL_SESSION "farswap sess v2"	/* 15 + one zero */
#define FARSWAP_KX_LABEL_JOIN	"farswap join v2"	/* 15 + one zero */

/* What each MAC and the session key cover, 168 bytes. */
struct farswap_kx_transcript {
	__u8 label[FARSWAP_AUTH_LABEL_LEN];
	__u8 host_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 donor_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 host_pub[FARSWAP_KX_PUB_LEN];
	__u8 donor_pub[FARSWAP_KX_PUB_LEN];
	__le64 session;		/* the token of the conn_rep */
	__u8 host_id[FARSWAP_ID_LEN];
	__u8 donor_id[FARSWAP_ID_LEN];
	__le32 host_features;	/* the control QP's conn_req */
	__le32 donor_features;	/* its conn_rep */
	__u8 version;		/* negotiated */
	__u8 reserved[3];
	__u8 expand;		/* 0x01 for the session key, else 0 */
	__u8 reserved2[3];
};
_Static_assert(sizeof(struct farswap_kx_transcript) == 168,
	       "kx_transcript size");

/* Ahead of each tagged message in its tag's input. */
struct farswap_kx_tag_input {
	__u8 dir;		/* 'H': host to donor, 'D': donor to host */
	__u8 reserved[7];
	__le64 seq;		/* tagged messages this side sent before */
};
_Static_assert(sizeof(struct farswap_kx_tag_input) == 16, "kx_tag_input");

/* An I/O QP's join_tag covers these 40 bytes. */
struct farswap_kx_join_input {
	__u8 label[FARSWAP_AUTH_LABEL_LEN];
	__le64 session;
	__u8 host_id[FARSWAP_ID_LEN];
};
_Static_assert(sizeof(struct farswap_kx_join_input) == 40, "kx_join_input");

/* AUTH_KX_REQ: the host's nonce and public key. */
struct farswap_auth_kx_req {
	struct farswap_msg_hdr hdr;
	__u8 host_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 host_pub[FARSWAP_KX_PUB_LEN];
};
_Static_assert(sizeof(struct farswap_auth_kx_req) == 64, "auth_kx_req size");

/* AUTH_KX_CHAL: the donor's nonce, public key and proof. */
struct farswap_auth_kx_chal {
	struct farswap_msg_hdr hdr;
	__u8 donor_nonce[FARSWAP_AUTH_NONCE_LEN];
	__u8 donor_pub[FARSWAP_KX_PUB_LEN];
	__u8 donor_mac[FARSWAP_AUTH_MAC_LEN];
};
_Static_assert(sizeof(struct farswap_auth_kx_chal) == 96,
	       "auth_kx_chal size");

/*
 * INFO_REQ: the host asks what the donor is, once per session, right after
 * the control QP is established and before it places anything there.
 * Sent only to a donor that announced FARSWAP_FEAT_INFO.
 */
struct farswap_info_req {
	struct farswap_msg_hdr hdr;
	__u8 reserved[16];
};
_Static_assert(sizeof(struct farswap_info_req) == 32, "info_req size");

/*
 * INFO_REP: echoes the request's cookie.  domain is the donor's failure
 * domain (see FARSWAP_DOMAIN_LEN): printable ASCII without spaces, at
 * least one character, NUL-padded; nothing but NULs after the first NUL.
 */
struct farswap_info_rep {
	struct farswap_msg_hdr hdr;
	__u8 domain[FARSWAP_DOMAIN_LEN];
	__u8 reserved[16];
};
_Static_assert(sizeof(struct farswap_info_rep) == 64, "info_rep size");

/* Every control message, for receive buffers. */
union farswap_msg {
	struct farswap_msg_hdr hdr;
	struct farswap_slab_alloc_req alloc_req;
	struct farswap_slab_alloc_rep alloc_rep;
	struct farswap_slab_free_req free_req;
	struct farswap_slab_free_rep free_rep;
	struct farswap_reclaim_req reclaim_req;
	struct farswap_reclaim_rep reclaim_rep;
	struct farswap_stats_req stats_req;
	struct farswap_stats_rep stats_rep;
	struct farswap_auth_req auth_req;
	struct farswap_auth_chal auth_chal;
	struct farswap_auth_proof auth_proof;
	struct farswap_auth_rep auth_rep;
	struct farswap_info_req info_req;
	struct farswap_info_rep info_rep;
	struct farswap_slab_revoke slab_revoke;
	struct farswap_slab_resume_req resume_req;
	struct farswap_slab_resume_rep resume_rep;
	struct farswap_auth_kx_req kx_req;
	struct farswap_auth_kx_chal kx_chal;
	__u8 raw[FARSWAP_MSG_MAX];
};
_Static_assert(sizeof(union farswap_msg) == FARSWAP_MSG_MAX, "msg max");

/*
 * Helpers shared by both sides: sizes, building and checking.  Every
 * received message goes through farswap_msg_check() (or the conn_* checks)
 * before any field of it is used.
 */

static inline const char *farswap_status_str(unsigned int status)
{
	switch (status) {
	case FARSWAP_ST_OK:
		return "success";
	case FARSWAP_ST_VERSION:
		return "no protocol version in common";
	case FARSWAP_ST_INVALID:
		return "malformed message";
	case FARSWAP_ST_NO_SPACE:
		return "no free slab";
	case FARSWAP_ST_NO_ENTRY:
		return "no such slab or session";
	case FARSWAP_ST_SLAB_SIZE:
		return "slab size differs from the donor's";
	case FARSWAP_ST_BUSY:
		return "donor is short of memory, at a limit, or shutting down";
	case FARSWAP_ST_DENIED:
		return "denied: another host's, or a host the donor does not allow";
	case FARSWAP_ST_INTERNAL:
		return "donor failed to register memory";
	default:
		return "unknown status";
	}
}

static inline const char *farswap_msg_type_str(unsigned int type)
{
	switch (type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		return "SLAB_ALLOC_REQ";
	case FARSWAP_MSG_SLAB_ALLOC_REP:
		return "SLAB_ALLOC_REP";
	case FARSWAP_MSG_SLAB_FREE_REQ:
		return "SLAB_FREE_REQ";
	case FARSWAP_MSG_SLAB_FREE_REP:
		return "SLAB_FREE_REP";
	case FARSWAP_MSG_RECLAIM_REQ:
		return "RECLAIM_REQ";
	case FARSWAP_MSG_RECLAIM_REP:
		return "RECLAIM_REP";
	case FARSWAP_MSG_STATS_REQ:
		return "STATS_REQ";
	case FARSWAP_MSG_STATS_REP:
		return "STATS_REP";
	case FARSWAP_MSG_AUTH_REQ:
		return "AUTH_REQ";
	case FARSWAP_MSG_AUTH_CHAL:
		return "AUTH_CHAL";
	case FARSWAP_MSG_AUTH_PROOF:
		return "AUTH_PROOF";
	case FARSWAP_MSG_AUTH_REP:
		return "AUTH_REP";
	case FARSWAP_MSG_INFO_REQ:
		return "INFO_REQ";
	case FARSWAP_MSG_INFO_REP:
		return "INFO_REP";
	case FARSWAP_MSG_SLAB_REVOKE:
		return "SLAB_REVOKE";
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		return "SLAB_RESUME_REQ";
	case FARSWAP_MSG_SLAB_RESUME_REP:
		return "SLAB_RESUME_REP";
	case FARSWAP_MSG_AUTH_KX_REQ:
		return "AUTH_KX_REQ";
	case FARSWAP_MSG_AUTH_KX_CHAL:
		return "AUTH_KX_CHAL";
	default:
		return "unknown";
	}
}

/* Exact wire size of a message type, or 0 for an unknown type. */
static inline __u32 farswap_msg_size(unsigned int type)
{
	switch (type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		return sizeof(struct farswap_slab_alloc_req);
	case FARSWAP_MSG_SLAB_ALLOC_REP:
		return sizeof(struct farswap_slab_alloc_rep);
	case FARSWAP_MSG_SLAB_FREE_REQ:
		return sizeof(struct farswap_slab_free_req);
	case FARSWAP_MSG_SLAB_FREE_REP:
		return sizeof(struct farswap_slab_free_rep);
	case FARSWAP_MSG_RECLAIM_REQ:
		return sizeof(struct farswap_reclaim_req);
	case FARSWAP_MSG_RECLAIM_REP:
		return sizeof(struct farswap_reclaim_rep);
	case FARSWAP_MSG_STATS_REQ:
		return sizeof(struct farswap_stats_req);
	case FARSWAP_MSG_STATS_REP:
		return sizeof(struct farswap_stats_rep);
	case FARSWAP_MSG_AUTH_REQ:
		return sizeof(struct farswap_auth_req);
	case FARSWAP_MSG_AUTH_CHAL:
		return sizeof(struct farswap_auth_chal);
	case FARSWAP_MSG_AUTH_PROOF:
		return sizeof(struct farswap_auth_proof);
	case FARSWAP_MSG_AUTH_REP:
		return sizeof(struct farswap_auth_rep);
	case FARSWAP_MSG_INFO_REQ:
		return sizeof(struct farswap_info_req);
	case FARSWAP_MSG_INFO_REP:
		return sizeof(struct farswap_info_rep);
	case FARSWAP_MSG_SLAB_REVOKE:
		return sizeof(struct farswap_slab_revoke);
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		return sizeof(struct farswap_slab_resume_req);
	case FARSWAP_MSG_SLAB_RESUME_REP:
		return sizeof(struct farswap_slab_resume_rep);
	case FARSWAP_MSG_AUTH_KX_REQ:
		return sizeof(struct farswap_auth_kx_req);
	case FARSWAP_MSG_AUTH_KX_CHAL:
		return sizeof(struct farswap_auth_kx_chal);
	default:
		return 0;
	}
}

/* Is @type a message type of this protocol? */
static inline int farswap_msg_type_known(unsigned int type)
{
	return farswap_msg_size(type) != 0;
}

/* Zero @msg and fill its header; the caller fills the body. */
static inline void farswap_msg_init(union farswap_msg *msg, unsigned int type,
				    unsigned int version, __u64 cookie)
{
	memset(msg, 0, sizeof(*msg));
	msg->hdr.magic = cpu_to_le32(FARSWAP_MAGIC);
	msg->hdr.version = (__u8)version;
	msg->hdr.type = (__u8)type;
	msg->hdr.length = cpu_to_le16((__u16)farswap_msg_size(type));
	msg->hdr.cookie = cpu_to_le64(cookie);
}

static inline int farswap_is_zero(const void *p, size_t len)
{
	const __u8 *b = (const __u8 *)p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

#define FARSWAP_RESERVED_ZERO(field) farswap_is_zero(&(field), sizeof(field))

static inline int farswap_slab_size_valid(__u64 size)
{
	return size >= FARSWAP_SLAB_SIZE_MIN && size <= FARSWAP_SLAB_SIZE_MAX &&
	       (size & (size - 1)) == 0;
}

static inline int farswap_status_valid(unsigned int status)
{
	return status < FARSWAP_ST_COUNT;
}

/*
 * A failure domain name as it travels (@len bytes, NUL-padded): 1 to @len
 * characters 0x21..0x7e, then only NULs.  Returns its length, or 0 when
 * it is not a valid name.
 */
static inline size_t farswap_domain_len(const __u8 *name, size_t len)
{
	size_t i, n = 0;

	while (n < len && name[n])
		n++;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return 0;
	return farswap_is_zero(name + n, len - n) ? n : 0;
}

/*
 * Fill an INFO_REP's domain from the C string @name; returns 0, or -1
 * (the field left zero) when @name is not a valid domain name.
 */
static inline int farswap_info_rep_set_domain(struct farswap_info_rep *r,
					      const char *name)
{
	size_t n = 0;

	while (name && n <= FARSWAP_DOMAIN_LEN && name[n])
		n++;
	memset(r->domain, 0, sizeof(r->domain));
	if (!n || n > FARSWAP_DOMAIN_LEN)
		return -1;
	memcpy(r->domain, name, n);
	if (!farswap_domain_len(r->domain, sizeof(r->domain))) {
		memset(r->domain, 0, sizeof(r->domain));
		return -1;
	}
	return 0;
}

/*
 * The part SLAB_ALLOC_REP and SLAB_RESUME_REP share: a valid status; a
 * refusal carries no slab (no address, length, rkey or token); a slab
 * given is a valid size and does not wrap the address space.
 */
static inline int farswap_slab_reply_ok(__le16 status, __le16 reserved0,
					__le64 addr_le, __le64 length,
					__le32 rkey, __le64 resume)
{
	__u64 addr = le64_to_cpu(addr_le);
	__u64 len = le64_to_cpu(length);

	if (!farswap_status_valid(le16_to_cpu(status)) || reserved0)
		return 0;
	if (le16_to_cpu(status) != FARSWAP_ST_OK)
		return !addr && !len && !rkey && !resume;
	return farswap_slab_size_valid(len) && addr + len > addr;
}

/* Body checks, one per type: ranges and reserved bytes. */
static inline int farswap_body_ok(const union farswap_msg *m)
{
	switch (m->hdr.type) {
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		return farswap_slab_size_valid(le64_to_cpu(m->alloc_req.slab_size)) &&
		       FARSWAP_RESERVED_ZERO(m->alloc_req.reserved);
	case FARSWAP_MSG_SLAB_ALLOC_REP: {
		const struct farswap_slab_alloc_rep *r = &m->alloc_rep;

		return farswap_slab_reply_ok(r->status, r->reserved0, r->addr,
					     r->length, r->rkey, r->resume) &&
		       (le16_to_cpu(r->status) == FARSWAP_ST_OK || !r->slab_id);
	}
	case FARSWAP_MSG_SLAB_RESUME_REQ:
		return m->resume_req.resume &&
		       farswap_slab_size_valid(le64_to_cpu(m->resume_req.slab_size)) &&
		       FARSWAP_RESERVED_ZERO(m->resume_req.reserved0);
	case FARSWAP_MSG_SLAB_RESUME_REP: {
		const struct farswap_slab_resume_rep *r = &m->resume_rep;

		/* A refusal still names the slab it refuses. */
		return farswap_slab_reply_ok(r->status, r->reserved0, r->addr,
					     r->length, r->rkey, r->resume) &&
		       (le16_to_cpu(r->status) != FARSWAP_ST_OK || r->resume);
	}
	case FARSWAP_MSG_SLAB_FREE_REQ:
		return !(le32_to_cpu(m->free_req.flags) &
			 ~FARSWAP_FREE_SESSION) &&
		       (!m->free_req.flags || !m->free_req.slab_id) &&
		       FARSWAP_RESERVED_ZERO(m->free_req.reserved1);
	case FARSWAP_MSG_SLAB_FREE_REP:
		return farswap_status_valid(le16_to_cpu(m->free_rep.status)) &&
		       FARSWAP_RESERVED_ZERO(m->free_rep.reserved0) &&
		       FARSWAP_RESERVED_ZERO(m->free_rep.reserved1);
	case FARSWAP_MSG_RECLAIM_REQ:
		return FARSWAP_RESERVED_ZERO(m->reclaim_req.reserved);
	case FARSWAP_MSG_RECLAIM_REP:
		return farswap_status_valid(le16_to_cpu(m->reclaim_rep.status)) &&
		       FARSWAP_RESERVED_ZERO(m->reclaim_rep.reserved0) &&
		       FARSWAP_RESERVED_ZERO(m->reclaim_rep.reserved1);
	case FARSWAP_MSG_STATS_REQ:
		return 1;
	case FARSWAP_MSG_STATS_REP: {
		const struct farswap_stats_rep *r = &m->stats_rep;

		return farswap_slab_size_valid(le64_to_cpu(r->slab_size)) &&
		       le32_to_cpu(r->slabs_free) <= le32_to_cpu(r->slabs_total) &&
		       le32_to_cpu(r->slabs_host) <= le32_to_cpu(r->slabs_total) &&
		       FARSWAP_RESERVED_ZERO(r->reserved0) &&
		       FARSWAP_RESERVED_ZERO(r->reserved1);
	}
	case FARSWAP_MSG_AUTH_REQ:
		return !FARSWAP_RESERVED_ZERO(m->auth_req.host_nonce);
	case FARSWAP_MSG_AUTH_CHAL:
		return !FARSWAP_RESERVED_ZERO(m->auth_chal.donor_nonce);
	case FARSWAP_MSG_AUTH_KX_REQ:
		return !FARSWAP_RESERVED_ZERO(m->kx_req.host_nonce) &&
		       !FARSWAP_RESERVED_ZERO(m->kx_req.host_pub);
	case FARSWAP_MSG_AUTH_KX_CHAL:
		return !FARSWAP_RESERVED_ZERO(m->kx_chal.donor_nonce) &&
		       !FARSWAP_RESERVED_ZERO(m->kx_chal.donor_pub);
	case FARSWAP_MSG_AUTH_PROOF:
		return 1;
	case FARSWAP_MSG_AUTH_REP:
		return farswap_status_valid(le16_to_cpu(m->auth_rep.status)) &&
		       FARSWAP_RESERVED_ZERO(m->auth_rep.reserved0) &&
		       FARSWAP_RESERVED_ZERO(m->auth_rep.reserved1) &&
		       FARSWAP_RESERVED_ZERO(m->auth_rep.reserved2);
	case FARSWAP_MSG_INFO_REQ:
		return FARSWAP_RESERVED_ZERO(m->info_req.reserved);
	case FARSWAP_MSG_INFO_REP:
		return farswap_domain_len(m->info_rep.domain,
					  sizeof(m->info_rep.domain)) &&
		       FARSWAP_RESERVED_ZERO(m->info_rep.reserved);
	case FARSWAP_MSG_SLAB_REVOKE:
		return FARSWAP_RESERVED_ZERO(m->slab_revoke.reserved);
	default:
		return 0;
	}
}

/*
 * Lay out the input of the MAC that @role sends: both sides build the
 * same 88 bytes from the same handshake.
 */
static inline void
farswap_auth_mac_input_init(struct farswap_auth_mac_input *in,
			    enum farswap_auth_role role,
			    const __u8 *host_nonce, const __u8 *donor_nonce,
			    __u64 session, const __u8 *host_id,
			    const __u8 *donor_id)
{
	const char *label = role == FARSWAP_AUTH_DONOR ?
				    FARSWAP_AUTH_LABEL_DONOR :
				    FARSWAP_AUTH_LABEL_HOST;

	memset(in, 0, sizeof(*in));
	memcpy(in->label, label, strlen(label));
	memcpy(in->host_nonce, host_nonce, FARSWAP_AUTH_NONCE_LEN);
	memcpy(in->donor_nonce, donor_nonce, FARSWAP_AUTH_NONCE_LEN);
	in->session = cpu_to_le64(session);
	memcpy(in->host_id, host_id, FARSWAP_ID_LEN);
	memcpy(in->donor_id, donor_id, FARSWAP_ID_LEN);
}

/*
 * The first FARSWAP_AUTH_LABEL_LEN bytes of the pair key's HMAC input
 * (see "Pinned donors"); the host key's bytes follow.
 */
static inline void farswap_auth_pair_label(__u8 label[FARSWAP_AUTH_LABEL_LEN])
{
	memset(label, 0, FARSWAP_AUTH_LABEL_LEN);
	memcpy(label, FARSWAP_AUTH_LABEL_PAIR, strlen(FARSWAP_AUTH_LABEL_PAIR));
}

/*
 * Check a received control message of @len bytes against the negotiated
 * @version.  Returns FARSWAP_ST_OK, FARSWAP_ST_VERSION, or
 * FARSWAP_ST_INVALID.  Only a message that passes may be read as its type.
 */
static inline int farswap_msg_check(const void *buf, size_t len,
				    unsigned int version)
{
	const union farswap_msg *m = (const union farswap_msg *)buf;
	__u32 want;

	if (len < sizeof(struct farswap_msg_hdr) || len > FARSWAP_MSG_MAX)
		return FARSWAP_ST_INVALID;
	if (le32_to_cpu(m->hdr.magic) != FARSWAP_MAGIC)
		return FARSWAP_ST_INVALID;
	if (m->hdr.version != version)
		return FARSWAP_ST_VERSION;
	want = farswap_msg_size(m->hdr.type);
	if (!want || len != want || le16_to_cpu(m->hdr.length) != want)
		return FARSWAP_ST_INVALID;
	return farswap_body_ok(m) ? FARSWAP_ST_OK : FARSWAP_ST_INVALID;
}

/*
 * A control message of a session whose messages carry tags
 * (FARSWAP_FEAT_KX): farswap_msg_check() of its first @len -
 * FARSWAP_KX_TAG_LEN bytes; the caller checks the tag after them.
 */
static inline int farswap_msg_check_tagged(const void *buf, size_t len,
					   unsigned int version)
{
	if (len < sizeof(struct farswap_msg_hdr) + FARSWAP_KX_TAG_LEN ||
	    len > FARSWAP_MSG_MAX)
		return FARSWAP_ST_INVALID;
	return farswap_msg_check(buf, len - FARSWAP_KX_TAG_LEN, version);
}

/*
 * Lay out a transcript of the handshake with @label (FARSWAP_KX_LABEL_*),
 * and expand 0 (the session key's sets it to 1).  Both sides build the
 * same 168 bytes from the same handshake.
 */
static inline void
farswap_kx_transcript_init(struct farswap_kx_transcript *t, const char *label,
			   const __u8 *host_nonce, const __u8 *donor_nonce,
			   const __u8 *host_pub, const __u8 *donor_pub,
			   __u64 session, const __u8 *host_id,
			   const __u8 *donor_id, __u32 host_features,
			   __u32 donor_features, unsigned int version)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->label, label, strlen(label));
	memcpy(t->host_nonce, host_nonce, FARSWAP_AUTH_NONCE_LEN);
	memcpy(t->donor_nonce, donor_nonce, FARSWAP_AUTH_NONCE_LEN);
	memcpy(t->host_pub, host_pub, FARSWAP_KX_PUB_LEN);
	memcpy(t->donor_pub, donor_pub, FARSWAP_KX_PUB_LEN);
	t->session = cpu_to_le64(session);
	memcpy(t->host_id, host_id, FARSWAP_ID_LEN);
	memcpy(t->donor_id, donor_id, FARSWAP_ID_LEN);
	t->host_features = cpu_to_le32(host_features);
	t->donor_features = cpu_to_le32(donor_features);
	t->version = (__u8)version;
}

static inline void farswap_kx_join_input_init(struct farswap_kx_join_input *j,
					      __u64 session,
					      const __u8 *host_id)
{
	memset(j, 0, sizeof(*j));
	memcpy(j->label, FARSWAP_KX_LABEL_JOIN, strlen(FARSWAP_KX_LABEL_JOIN));
	j->session = cpu_to_le64(session);
	memcpy(j->host_id, host_id, FARSWAP_ID_LEN);
}

static inline void farswap_kx_tag_input_init(struct farswap_kx_tag_input *t,
					     char dir, __u64 seq)
{
	memset(t, 0, sizeof(*t));
	t->dir = (__u8)dir;
	t->seq = cpu_to_le64(seq);
}

/*
 * Pick the highest version in both [host_min, host_max] and the local
 * [FARSWAP_VERSION_MIN, FARSWAP_VERSION_MAX]; 0 if there is none.
 */
static inline unsigned int farswap_negotiate_version(unsigned int host_min,
						     unsigned int host_max)
{
	unsigned int hi = host_max < FARSWAP_VERSION_MAX ? host_max :
							   FARSWAP_VERSION_MAX;
	unsigned int lo = host_min > FARSWAP_VERSION_MIN ? host_min :
							   FARSWAP_VERSION_MIN;

	if (host_min > host_max || lo > hi)
		return 0;
	return hi;
}

/* Fill a connection request; the caller sets host_id. */
static inline void farswap_conn_req_init(struct farswap_conn_req *req,
					 unsigned int qtype, unsigned int qid,
					 unsigned int nr_io_queues,
					 __u64 session, unsigned int depth)
{
	memset(req, 0, sizeof(*req));
	req->magic = cpu_to_le32(FARSWAP_MAGIC);
	req->ver_min = FARSWAP_VERSION_MIN;
	req->ver_max = FARSWAP_VERSION_MAX;
	req->qtype = (__u8)qtype;
	req->qid = cpu_to_le16((__u16)qid);
	req->nr_io_queues = cpu_to_le16((__u16)nr_io_queues);
	req->features = cpu_to_le32(FARSWAP_FEATURES_KNOWN);
	req->session = cpu_to_le64(session);
	req->queue_depth = cpu_to_le32(depth);
}

/*
 * Check connect private data of @len bytes (the donor's side).  Versions
 * are not checked here: the donor negotiates them and rejects with
 * FARSWAP_ST_VERSION and its own range.  rdma_cm may pad private data with
 * zeros, so @len may exceed the structure.
 */
static inline int farswap_conn_req_check(const void *buf, size_t len)
{
	const struct farswap_conn_req *r = (const struct farswap_conn_req *)buf;
	unsigned int nr, qid;

	if (!buf || len < sizeof(*r))
		return FARSWAP_ST_INVALID;
	if (le32_to_cpu(r->magic) != FARSWAP_MAGIC)
		return FARSWAP_ST_INVALID;
	if (!FARSWAP_RESERVED_ZERO(r->reserved0))
		return FARSWAP_ST_INVALID;
	/* Only an I/O QP has a session to prove. */
	if (r->qtype == FARSWAP_QT_CTRL && !FARSWAP_RESERVED_ZERO(r->join_tag))
		return FARSWAP_ST_INVALID;
	nr = le16_to_cpu(r->nr_io_queues);
	qid = le16_to_cpu(r->qid);
	if (nr < 1 || nr > FARSWAP_MAX_IO_QUEUES || !le32_to_cpu(r->queue_depth))
		return FARSWAP_ST_INVALID;
	switch (r->qtype) {
	case FARSWAP_QT_CTRL:
		return qid == 0 && !r->session ? FARSWAP_ST_OK :
						 FARSWAP_ST_INVALID;
	case FARSWAP_QT_IO:
		return qid >= 1 && qid <= nr && r->session ? FARSWAP_ST_OK :
							     FARSWAP_ST_INVALID;
	default:
		return FARSWAP_ST_INVALID;
	}
}

/* Check accept private data (the host's side) against the offered range. */
static inline int farswap_conn_rep_check(const void *buf, size_t len)
{
	const struct farswap_conn_rep *r = (const struct farswap_conn_rep *)buf;

	if (!buf || len < sizeof(*r))
		return FARSWAP_ST_INVALID;
	if (le32_to_cpu(r->magic) != FARSWAP_MAGIC)
		return FARSWAP_ST_INVALID;
	if (r->version < FARSWAP_VERSION_MIN || r->version > FARSWAP_VERSION_MAX)
		return FARSWAP_ST_VERSION;
	if (!r->session || !farswap_slab_size_valid(le64_to_cpu(r->slab_size)) ||
	    le32_to_cpu(r->slabs_free) > le32_to_cpu(r->slabs_total))
		return FARSWAP_ST_INVALID;
	if (!FARSWAP_RESERVED_ZERO(r->reserved0) ||
	    !FARSWAP_RESERVED_ZERO(r->reserved1))
		return FARSWAP_ST_INVALID;
	return FARSWAP_ST_OK;
}

/*
 * Check reject private data (the host's side).  Returns the donor's reason
 * (enum farswap_status), or -1 when the data is not a farswap reject (a
 * donor that is not farswapd, or a reject by the RDMA stack itself).
 */
static inline int farswap_conn_rej_reason(const void *buf, size_t len)
{
	const struct farswap_conn_rej *r = (const struct farswap_conn_rej *)buf;
	unsigned int reason;

	if (!buf || len < sizeof(*r) || le32_to_cpu(r->magic) != FARSWAP_MAGIC)
		return -1;
	reason = le16_to_cpu(r->reason);
	if (!farswap_status_valid(reason) || reason == FARSWAP_ST_OK)
		return -1;
	return (int)reason;
}

static inline void farswap_conn_rej_init(struct farswap_conn_rej *rej,
					 unsigned int reason)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = cpu_to_le32(FARSWAP_MAGIC);
	rej->reason = cpu_to_le16((__u16)reason);
	rej->ver_min = FARSWAP_VERSION_MIN;
	rej->ver_max = FARSWAP_VERSION_MAX;
}

#endif /* FARSWAP_PROTO_H */
