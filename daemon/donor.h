/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The donor's logic: sessions, connect decisions, control message
 * handling, the authentication handshake and the pressure response
 * (donor.c, dispatch.c, handshake.c, reclaim.c).  Everything that touches
 * memory or RDMA goes through struct fsd_ops, so these files run
 * unchanged under the unit tests and the fuzzer with fake ops.
 */
#ifndef FSD_DONOR_H
#define FSD_DONOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "auth.h"
#include "farswap_proto.h"
#include "keepalive.h"
#include "log.h"
#include "pool.h"
#include "pressure.h"

#define FSD_PEER_LEN 64
#define FSD_NAME_LEN (2 * FARSWAP_ID_LEN + 1)
/* Unsolicited messages (reclaims, stats notices) in flight per host. */
#define FSD_UNSOLICITED_MAX (FARSWAP_CTRL_DEPTH / 2)
/*
 * Reclaim requests in flight per host: one short of the budget, so that
 * a stats notice (at most one at a time), and with it a keepalive probe,
 * always fits.
 */
#define FSD_RECLAIMS_MAX (FSD_UNSOLICITED_MAX - 1)
/* Memory taken back from the OS per pressure check, at most (>= 1 slab). */
#define FSD_REPOPULATE_BYTES (1ull << 30)
/* Freed slabs are zeroed in the background, this much per check. */
#define FSD_ZERO_BYTES (256ull << 20)
/*
 * Features this donor implements (FARSWAP_FEAT_AUTH only with a key,
 * FARSWAP_FEAT_PINNED only with a donor key too).
 */
#define FSD_FEATURES (FARSWAP_FEAT_RECLAIM | FARSWAP_FEAT_STATS_PUSH | \
		      FARSWAP_FEAT_INFO | FARSWAP_FEAT_AUTH | FARSWAP_FEAT_REVOKE | \
		      FARSWAP_FEAT_RESUME | FARSWAP_FEAT_PINNED | FARSWAP_FEAT_KX | \
		      FARSWAP_FEAT_KEEP)
/*
 * Features a host must have: it takes keepalive probes (an unsolicited
 * STATS_REP), so a dead host's slabs come back in bounded time, and it
 * gives slabs back when asked, so a donor short of memory can get some.
 */
#define FSD_FEATURES_REQUIRED (FARSWAP_FEAT_RECLAIM | FARSWAP_FEAT_STATS_PUSH)
/*
 * A drain asks for at most this many slabs per pressure check, over all
 * hosts (and each host has at most FSD_RECLAIMS_MAX requests in flight).
 */
#define FSD_DRAIN_BATCH 32
/* Refused allocations and authentications: this many log lines per interval. */
#define FSD_REFUSE_LOG_BURST 20
#define FSD_REFUSE_LOG_MS 10000
/*
 * Refused and evicted connects: this many lines a second, then one line
 * that says how many more there were.  A flood of connects (or a host
 * retrying in a loop) costs the journal a few lines a second.
 */
#define FSD_CONNECT_LOG_BURST 5
#define FSD_CONNECT_LOG_MS 1000

/* Why an unsolicited STATS_REP was sent. */
enum fsd_notice_kind {
	FSD_NOTICE_OFFER,	/* slabs to be had again after pressure */
	FSD_NOTICE_REPROBE,	/* the same host connected again */
	FSD_NOTICE_KEEPALIVE,	/* the session was idle */
};

/* Why a connection was refused, for the stats. */
enum fsd_refusal {
	FSD_REFUSED_MALFORMED,
	FSD_REFUSED_VERSION,
	FSD_REFUSED_NOT_ALLOWED,	/* allowed-hosts */
	FSD_REFUSED_PER_ADDRESS,	/* max-sessions-per-address */
	FSD_REFUSED_MAX_HOSTS,		/* authenticated sessions */
	FSD_REFUSED_FEATURES,		/* no keepalive probes or reclaim */
	FSD_REFUSED_SHUTDOWN,
	FSD_REFUSED_IO,			/* I/O queue: bad token, qid, ... */
	FSD_REFUSED_INTERNAL,		/* the donor could not set it up */
	FSD_REFUSED_AUTH,		/* no authentication, or not yet */
	FSD_REFUSED_UNAUTHENTICATED,	/* max-unauthenticated */
	FSD_REFUSED_RATE,		/* connect-rate */
	FSD_REFUSED_COUNT
};

/* Where a session is in the authentication handshake. */
enum fsd_auth_state {
	FSD_AUTH_NONE,		/* the donor has no key: not authenticated */
	FSD_AUTH_WAIT_REQ,	/* waiting for AUTH_REQ */
	FSD_AUTH_WAIT_PROOF,	/* AUTH_CHAL sent, waiting for AUTH_PROOF */
	FSD_AUTH_OK,		/* the host proved it holds the key */
	FSD_AUTH_FAILED,	/* wrong proof: the session is closing */
};

/*
 * Which secret a session's host proves, and so what its host id is
 * worth: only a host-keys file is the host's own, named by its id.
 */
enum fsd_proof {
	FSD_PROOF_NONE,		/* none asked, or none yet: the id is claimed */
	FSD_PROOF_HOST_KEY,	/* its file in host-keys: the id is proven */
	FSD_PROOF_KEY_FILE,	/* key-file, which every host holds: claimed */
};

struct fsd_session {
	struct fsd_session *next;
	uint32_t nr;			/* host number, for logs and stats */
	uint64_t token;
	uint8_t host_id[FARSWAP_ID_LEN];
	char name[FSD_NAME_LEN];	/* host_id, printable */
	char peer[FSD_PEER_LEN];	/* address:port of the control QP */
	struct fsd_addr addr;		/* the control QP's, without port */
	uint64_t created;		/* ms: control QP accepted */
	uint64_t up_since;		/* ms: control QP established */
	uint64_t io_up;			/* bit qid - 1: I/O QP established */
	uint64_t io_since[FARSWAP_MAX_IO_QUEUES];	/* ms: accepted */
	uint32_t grants_in_flight;	/* slabs being zeroed and registered */
	struct fsd_bucket alloc_tokens;	/* alloc-rate */
	uint8_t version;
	uint32_t features;		/* negotiated */
	uint16_t nr_io_queues;
	uint32_t queue_depth;
	uint64_t io_attached;		/* bit qid - 1: I/O QP accepted */
	bool established;		/* control QP connected */
	bool closing;
	/*
	 * Refused (AUTH_REP DENIED or BUSY): closes, for @refusal, once its
	 * sends are out (fsd_sends_done()) or at handshake-timeout.
	 */
	bool refused;
	int refusal_level;
	char refusal[96];
	/*
	 * A reload's allowed-hosts no longer names it: it gets no slab, its
	 * slabs are asked back (never revoked), and it closes at zero.
	 */
	bool disallowed;
	/*
	 * The host said goodbye (FARSWAP_FREE_SESSION): nothing of this
	 * session is kept when it ends.
	 */
	bool leaving;
	uint32_t nr_slabs;		/* held, grants in flight included */
	uint32_t nr_reclaiming;
	uint32_t unsolicited;		/* reclaims + notices in flight */
	bool notice_in_flight;
	uint32_t revokes_in_flight;	/* SLAB_REVOKEs not yet acknowledged */
	bool offer_pending;		/* an offer waits for the notice in flight */
	enum fsd_notice_kind notice_kind;	/* of the one in flight */
	uint64_t last_active;		/* ms: last control message in or out */
	uint64_t probe_sent;		/* ms: keepalive probe in flight since */
	uint64_t probe_idle;		/* ms idle when it was sent */
	uint64_t next_cookie;
	uint64_t msgs_in;
	uint64_t msgs_out;
	enum fsd_auth_state auth;
	uint8_t host_nonce[FARSWAP_AUTH_NONCE_LEN];
	uint8_t donor_nonce[FARSWAP_AUTH_NONCE_LEN];
	/* The secret this host proves: its host-keys file, or key-file. */
	struct fsd_auth_key key;
	enum fsd_proof proof;		/* what @key is (proven once auth is OK) */
	char key_name[FSD_HOST_KEY_NAME_MAX + 1];	/* its file in host-keys */
	/*
	 * FARSWAP_FEAT_KX: the features the host's conn_req announced (the
	 * transcript binds them), the proof its AUTH_PROOF must carry, the
	 * session key, and, once tagged, how many tagged messages each
	 * side sent.
	 */
	uint32_t host_features;
	uint8_t kx_host_mac[FARSWAP_AUTH_MAC_LEN];
	uint8_t kx_key[FARSWAP_KX_KEY_LEN];
	bool tagged;
	uint64_t tx_seq;
	uint64_t rx_seq;
	void *rdma;			/* verbs.c's state */
};

struct fsd_donor;

/* Flags for fsd_ops.send. */
#define FSD_SEND_NOTICE 1	/* unsolicited STATS_REP: report completion */
#define FSD_SEND_REVOKE 2	/* SLAB_REVOKE: report completion */

/*
 * The address of a slab's first byte for its host: every slab's memory
 * region is registered zero-based, so a host learns nothing of the
 * donor's address space (where its heap or its pool lies), and a slab
 * resumed after a restart, mapped elsewhere, keeps its address.
 */
#define FSD_SLAB_IOVA 0

struct fsd_ops {
	/*
	 * Zero what is not yet clean of @slab (from clean_upto, if dirty)
	 * and register it in @s's PD; set mr and rkey.  Returns 0 when
	 * done, -EINPROGRESS when the work goes on elsewhere (the caller
	 * then owes fsd_grant_done() exactly one call for @slab), or -errno.
	 */
	int (*slab_grant)(struct fsd_donor *d, struct fsd_session *s,
			  struct fsd_slab *slab);
	/* Optional: a grant in flight is no longer wanted (its host left). */
	void (*slab_grant_cancel)(struct fsd_donor *d, struct fsd_slab *slab);
	/* Zero [off, off + len) of a free slab's memory. */
	void (*slab_zero)(struct fsd_donor *d, struct fsd_slab *slab,
			  uint64_t off, uint64_t len);
	/*
	 * Deregister a held slab's MR: its rkey is dead afterwards.  On
	 * failure (-errno) the rkey may still work: the slab is quarantined.
	 */
	int (*slab_revoke)(struct fsd_donor *d, struct fsd_slab *slab);
	/* Give an unregistered slab's memory back to the OS; mem = NULL. */
	int (*slab_release)(struct fsd_donor *d, struct fsd_slab *slab);
	/* Allocate and pin memory for a released slab; sets mem. */
	int (*slab_populate)(struct fsd_donor *d, struct fsd_slab *slab);
	/* Post one control message of @len bytes on @s's control QP. */
	int (*send)(struct fsd_donor *d, struct fsd_session *s,
		    const union farswap_msg *msg, size_t len,
		    unsigned int flags);
	/* Begin tearing down @s's connections (the session is closing). */
	void (*close)(struct fsd_donor *d, struct fsd_session *s);
	/* Fill @buf with random bytes. */
	int (*random)(struct fsd_donor *d, void *buf, size_t len);
};

struct fsd_counters {
	uint64_t sessions;
	uint64_t rejects;
	uint64_t bad_msgs;
	uint64_t grants;
	uint64_t frees;
	uint64_t denied;
	uint64_t reclaim_sent;
	uint64_t reclaim_ok;
	uint64_t reclaim_refused;
	/* Of reclaim_sent: asked of hosts over their fair share. */
	uint64_t fair_reclaims;
	uint64_t reclaim_late;
	uint64_t released;
	uint64_t repopulated;
	uint64_t notices;
	uint64_t keepalives;		/* probes sent */
	uint64_t keepalive_dead;	/* sessions closed by a failed probe */
	uint64_t refused[FSD_REFUSED_COUNT];	/* connections, by reason */
	uint64_t handshake_timeouts;	/* sessions closed half set up */
	uint64_t revoked;		/* slabs taken back by force */
	uint64_t revoke_notices;	/* of those, told first (SLAB_REVOKE) */
	uint64_t quarantined;		/* slabs whose MR would not go */
	uint64_t alloc_capped;		/* ALLOC over max-slabs-per-host */
	uint64_t alloc_rate_limited;	/* ALLOC over alloc-rate */
	uint64_t depth_clamped;		/* sessions with a queue depth cut */
	uint64_t closed_not_allowed;	/* sessions closed by a reload */
	uint64_t auth_ok;		/* sessions authenticated */
	uint64_t auth_failed;		/* wrong proofs */
	uint64_t auth_denied_msgs;	/* messages before authentication */
	uint64_t auth_timeouts;		/* not authenticated in time */
	uint64_t unauth_evicted;	/* closed to make room for a connect */
	/* Of those, for max-unauthenticated-per-address. */
	uint64_t unauth_evicted_per_address;
	uint64_t resumed;		/* kept slabs taken back by their host */
	uint64_t resume_refused;	/* SLAB_RESUME_REQ answered with no */
	uint64_t kept_expired;		/* kept slabs nobody resumed in time */
	uint64_t kept;			/* held slabs kept as their session ended */
	uint64_t auth_kx;		/* of auth_ok: with a session key */
	uint64_t auth_legacy;		/* of auth_ok: without (older hosts) */
	uint64_t bad_tags;		/* tagged messages whose tag was wrong */
	uint64_t join_refused;		/* I/O QPs with a wrong join_tag */
};

/*
 * The operator's drain (farswapd --drain, drain.c): no slab is granted,
 * every held one is asked back, a round at a time (each slab asked once
 * per round, a refused one again after a reclaim deadline), and none is
 * ever revoked.  Drained, the state shown, is draining with no slab held:
 * safe to stop.
 */
enum fsd_drain_state {
	FSD_DRAIN_OFF,
	FSD_DRAIN_DRAINING,
	FSD_DRAIN_DRAINED,		/* derived: draining, nothing held */
};

struct fsd_drain {
	bool on;			/* --drain until --undrain */
	bool drained_logged;
	uint64_t since;			/* ms: drain asked */
	uint32_t round;			/* slabs asked in it carry its number */
	uint64_t slabs_returned;	/* given back since the drain began */
	uint64_t refusals;		/* RECLAIM_REP refusals since */
	uint64_t reclaim_sent;		/* RECLAIM_REQ sent by the drain */
};

/* Who may connect and how much they may take: the limit keys. */
struct fsd_limits_live {
	struct fsd_access acl;
	uint32_t max_slabs_per_host;	/* 0: no cap, or fair */
	bool max_slabs_fair;		/* a share of the pool per host present */
	unsigned int max_sessions_per_address;	/* 0: no limit */
	unsigned int max_unauth_per_address;	/* 0: no limit */
	uint32_t connect_rate;		/* control connects/s per address; 0: off */
	uint32_t connect_burst;
	uint32_t max_queue_depth;
	uint32_t handshake_timeout_ms;	/* 0: no limit */
	uint32_t auth_timeout_ms;	/* from establishment; 0: no limit */
	bool require_kx;		/* refuse proofs without a session key */
	uint32_t alloc_rate;		/* grants/s per session; 0: no limit */
	uint32_t alloc_burst;
	unsigned int revoke_after;	/* deadlines; 0: never revoke */
};

struct fsd_donor {
	struct fsd_pool pool;
	const struct fsd_ops *ops;
	void *priv;
	struct fsd_session *sessions;
	uint32_t nr_sessions;
	uint32_t next_nr;
	uint32_t max_hosts;		/* sessions authenticated */
	uint32_t max_unauthenticated;	/* sessions not authenticated yet */
	uint8_t donor_id[FARSWAP_ID_LEN];
	char domain[FARSWAP_DOMAIN_LEN + 1];	/* failure domain, for hosts */
	uint32_t reclaim_deadline_ms;
	/*
	 * max-slabs-per-host fair: until this ms a host under its share
	 * waits for a slab the pool does not have, and hosts over theirs
	 * are asked for the excess (reclaim.c).
	 */
	uint64_t fair_wait_until;
	uint32_t keepalive_ms;		/* 0: off */
	uint64_t headroom;
	uint64_t hysteresis;
	unsigned int psi_threshold;
	bool under_pressure;
	bool shutting_down;
	struct fsd_meminfo mem;		/* last reading */
	struct fsd_counters cnt;
	struct fsd_limits_live lim;
	struct fsd_drain drain;
	struct fsd_ratelimit alloc_log;
	struct fsd_ratelimit auth_log;
	struct fsd_ratelimit connect_log;	/* refused and evicted connects */
	struct fsd_connect_table connects;	/* connect-rate */
	struct fsd_auth_key key;	/* key-file; len 0: none */
	char key_file[4096];		/* its path, for the log */
	/* donor-key-file: hosts that pin it get proofs under a pair key. */
	struct fsd_auth_key donor_key;
	/* host-keys: a directory of per-host secrets; "": none. */
	char host_keys[4096];
	/*
	 * How long a kept slab (pool.h) waits for its host; 0: resuming off,
	 * nothing kept.
	 */
	uint32_t resume_grace_ms;
	/* The pool outlives a restart (systemd's fd store holds it). */
	bool pool_kept;
};

/* What to do with a connect request. */
struct fsd_conn_decision {
	int status;			/* FARSWAP_ST_OK or the reject reason */
	const char *why;		/* for the log when rejected */
	char detail[96];		/* why, with the particulars */
	enum fsd_refusal refusal;
	struct fsd_addr addr;		/* the peer's */
	struct farswap_conn_req req;	/* valid when status is OK */
	unsigned int qtype;
	unsigned int version;
	unsigned int qid;
	struct fsd_session *session;	/* I/O QP: the session it joins */
	/*
	 * Control QP accepted in place of this session, which has not
	 * proved the key: fsd_conn_make_room() closes it, for evict_why.
	 */
	struct fsd_session *evict;
	const char *evict_why;		/* the limit that was full */
	bool evict_per_address;		/* max-unauthenticated-per-address */
};

int fsd_donor_init(struct fsd_donor *d, uint32_t nr_slabs, uint64_t slab_size,
		   const struct fsd_ops *ops, void *priv);
void fsd_donor_exit(struct fsd_donor *d);
/* Hosts must authenticate; the donor keeps a copy of @key, read from @path. */
void fsd_donor_set_key(struct fsd_donor *d, const struct fsd_auth_key *key,
		       const char *path);
void fsd_donor_set_host_keys(struct fsd_donor *d, const char *dir);
void fsd_donor_set_donor_key(struct fsd_donor *d,
			     const struct fsd_auth_key *key);
bool fsd_donor_auth_required(const struct fsd_donor *d);
bool fsd_session_authenticated(const struct fsd_session *s);
unsigned int fsd_unauthenticated_from(const struct fsd_donor *d,
				      const struct fsd_addr *addr);

void fsd_conn_decide(struct fsd_donor *d, const struct fsd_addr *peer,
		     const void *pdata, size_t len,
		     struct fsd_conn_decision *dec, uint64_t now_ms);
/* Close the session an accepted decision evicts, if any. */
void fsd_conn_make_room(struct fsd_donor *d, struct fsd_conn_decision *dec,
			uint64_t now_ms);
void fsd_conn_refused(struct fsd_donor *d, const struct fsd_conn_decision *dec,
		      const char *peer, uint64_t now_ms);
/* The line that says how many connect lines were held back, when due. */
void fsd_connect_log_flush(struct fsd_donor *d, uint64_t now_ms);
struct fsd_session *fsd_session_new(struct fsd_donor *d,
				    const struct fsd_conn_decision *dec,
				    const char *peer, uint64_t now_ms);
int fsd_session_attach_io(struct fsd_session *s, unsigned int qid,
			  uint64_t now_ms);
void fsd_session_io_established(struct fsd_session *s, unsigned int qid);
void fsd_session_detach_io(struct fsd_session *s, unsigned int qid);
struct fsd_session *fsd_session_find(struct fsd_donor *d, uint64_t token);
void fsd_conn_rep_build(const struct fsd_donor *d, const struct fsd_session *s,
			struct farswap_conn_rep *rep);
void fsd_session_established(struct fsd_donor *d, struct fsd_session *s,
			     uint64_t now_ms);

__printf(4, 5) void
fsd_session_close(struct fsd_donor *d, struct fsd_session *s, int level,
		  const char *fmt, ...);
void fsd_session_drop_slabs(struct fsd_donor *d, struct fsd_session *s);
bool fsd_session_reapable(const struct fsd_session *s);
void fsd_session_free(struct fsd_donor *d, struct fsd_session *s);
int fsd_grant_done(struct fsd_donor *d, struct fsd_slab *slab, int ret);
void fsd_donor_handshakes(struct fsd_donor *d, uint64_t now_ms);
void fsd_donor_recheck_access(struct fsd_donor *d);
/*
 * Is the secret @s proved still the one its host must prove (handshake.c,
 * as a new handshake would pick it)?  False, with why in @why, when its
 * host-keys file is gone or changed (or key-file, for a host without one).
 */
bool fsd_session_key_current(struct fsd_donor *d, struct fsd_session *s,
			     char *why, size_t whylen);
const char *fsd_refusal_name(enum fsd_refusal r);

void fsd_donor_set_domain(struct fsd_donor *d, const char *name);
void fsd_info_rep_build(const struct fsd_donor *d, const struct fsd_session *s,
			uint64_t cookie, union farswap_msg *r);
int fsd_handle_msg(struct fsd_donor *d, struct fsd_session *s, const void *buf,
		   size_t len, uint64_t now_ms);
void fsd_notice_sent(struct fsd_donor *d, struct fsd_session *s,
		     uint64_t now_ms);
void fsd_revoke_sent(struct fsd_donor *d, struct fsd_session *s);
void fsd_sends_done(struct fsd_donor *d, struct fsd_session *s);
void fsd_send_failed(struct fsd_donor *d, struct fsd_session *s, bool notice,
		     const char *why, uint64_t now_ms);
void fsd_probe_host(struct fsd_donor *d, const uint8_t *host_id,
		    const struct fsd_session *except, uint64_t now_ms);
void fsd_donor_keepalive(struct fsd_donor *d, uint64_t now_ms);
const char *fsd_msg_problem(const void *buf, size_t len, unsigned int version,
			    char *out, size_t outlen);
uint32_t fsd_slabs_offered(const struct fsd_donor *d);

void fsd_donor_tick(struct fsd_donor *d, const struct fsd_meminfo *mi,
		    uint64_t now_ms);
/* The restart's side (resume.c): kept slabs adopted, resumed, expired. */
struct fsd_adopted {
	uint32_t slabs;			/* kept for their hosts */
	uint32_t hosts;
	uint32_t dropped;		/* held, but beyond the pool or unmapped */
	uint32_t dropped_hosts;
};
int fsd_donor_adopt(struct fsd_donor *d, const struct fsd_keep_rec *rec,
		    uint32_t nr_rec, uint64_t now_ms, uint32_t grace_ms,
		    struct fsd_adopted *out);
void fsd_donor_expire_kept(struct fsd_donor *d, uint64_t now_ms);
uint32_t fsd_slabs_lost_on_restart(const struct fsd_donor *d);

/* Is @s's host to give its slabs back: a drain, or a reload's access. */
static inline bool fsd_session_draining(const struct fsd_donor *d,
					const struct fsd_session *s)
{
	return d->drain.on || s->disallowed;
}

/* The drain (drain.c). */
int fsd_donor_drain(struct fsd_donor *d, uint64_t now_ms);
int fsd_donor_undrain(struct fsd_donor *d, uint64_t now_ms);
void fsd_drain_tick(struct fsd_donor *d, uint64_t now_ms);
enum fsd_drain_state fsd_drain_state(const struct fsd_donor *d);
const char *fsd_drain_state_str(enum fsd_drain_state st);
uint32_t fsd_session_refused_slabs(const struct fsd_donor *d,
				   const struct fsd_session *s,
				   unsigned int *status);
int fsd_drain_report(const struct fsd_donor *d, char *buf, size_t len);

#endif /* FSD_DONOR_H */
