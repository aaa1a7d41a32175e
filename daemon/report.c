// SPDX-License-Identifier: GPL-2.0
/*
 * The donor's stats as text, JSON and Prometheus metrics (report.h).
 * The counters are listed once, with the metric each becomes; their JSON
 * names are those of the text's "counters" line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "outbuf.h"

#define FSD_SCHEMA_VERSION 1
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *key;
	size_t offset;
	const char *metric;
	const char *help;
} counters[] = {
#define C(field, metric, help) \
	{ #field, offsetof(struct fsd_counters, field), metric, help }
	C(sessions, "farswapd_sessions_total", "Host sessions opened."),
	C(rejects, "farswapd_rejects_total", "Connection requests rejected."),
	C(bad_msgs, "farswapd_bad_messages_total",
	  "Malformed control messages (each closes its session)."),
	C(grants, "farswapd_grants_total", "Slabs granted to hosts."),
	C(frees, "farswapd_frees_total", "Slabs hosts gave back."),
	C(denied, "farswapd_denied_total", "Slab requests refused."),
	C(reclaim_sent, "farswapd_reclaim_sent_total",
	  "RECLAIM_REQ sent to hosts."),
	C(reclaim_ok, "farswapd_reclaim_ok_total",
	  "Reclaims the host completed (slab returned)."),
	C(reclaim_refused, "farswapd_reclaim_refused_total",
	  "Reclaims the host refused (no room elsewhere)."),
	C(reclaim_late, "farswapd_reclaim_late_total",
	  "Reclaims answered after their deadline."),
	C(released, "farswapd_released_total",
	  "Slabs whose memory was given back to the kernel under pressure."),
	C(repopulated, "farswapd_repopulated_total",
	  "Released slabs mapped and pinned again after pressure."),
	C(notices, "farswapd_notices_total",
	  "Unsolicited STATS_REP sent (offers, checks of a host that came back)."),
	C(keepalives, "farswapd_keepalives_total", "Keepalive probes sent."),
	C(keepalive_dead, "farswapd_keepalive_dead_total",
	  "Sessions closed because a keepalive probe failed."),
#define N(key, field, metric, help) \
	{ key, offsetof(struct fsd_counters, field), metric, help }
	C(handshake_timeouts, "farswapd_handshake_timeouts_total",
	  "Connections closed because they did not finish their handshake in time."),
	N("revoked_slabs", revoked, "farswapd_revoked_slabs_total",
	  "Slabs taken back by force from hosts that did not return them under pressure."),
	C(revoke_notices, "farswapd_revoke_notices_total",
	  "Revoked slabs whose host was told first (SLAB_REVOKE) and had a deadline to stop using them."),
	N("quarantined_slabs", quarantined, "farswapd_quarantined_slabs_total",
	  "Slabs whose memory registration could not be removed, never reused."),
	C(alloc_capped, "farswapd_alloc_capped_total",
	  "Slab requests refused at a host's cap."),
	C(alloc_rate_limited, "farswapd_alloc_rate_limited_total",
	  "Slab requests refused by the per-host rate limit."),
	C(depth_clamped, "farswapd_depth_clamped_total",
	  "I/O queue pairs whose requested depth was cut to max-queue-depth."),
	C(closed_not_allowed, "farswapd_closed_not_allowed_total",
	  "Sessions closed on reload because allowed-hosts no longer names them."),
	C(unauth_evicted, "farswapd_unauth_evicted_total",
	  "Sessions not yet authenticated closed to make room for a new connect (max-unauthenticated, max-unauthenticated-per-address, max-sessions-per-address)."),
	C(unauth_evicted_per_address,
	  "farswapd_unauth_evicted_per_address_total",
	  "Of those, closed for a newer connect from their own address (max-unauthenticated-per-address)."),
	C(auth_ok, "farswapd_auth_ok_total", "Host sessions authenticated."),
	C(auth_failed, "farswapd_auth_failed_total",
	  "Authentication proofs that were wrong (each closes its session)."),
	C(auth_denied_msgs, "farswapd_auth_denied_messages_total",
	  "Control messages denied because their session was not authenticated."),
	C(auth_timeouts, "farswapd_auth_timeouts_total",
	  "Sessions closed because they did not authenticate in time."),
	N("resumed_slabs", resumed, "farswapd_resumed_slabs_total",
	  "Slabs kept across a restart of farswapd and taken back by their host (SLAB_RESUME_REQ)."),
	C(resume_refused, "farswapd_resume_refused_total",
	  "SLAB_RESUME_REQ refused: not kept, a wrong token, another host's, or after the resume grace."),
	N("kept_expired_slabs", kept_expired,
	  "farswapd_kept_expired_slabs_total",
	  "Kept slabs (across a restart, or a session that ended without its host) that no host resumed within resume-grace, freed."),
	C(fair_reclaims, "farswapd_fair_reclaims_total",
	  "Slabs asked back (RECLAIM_REQ) of hosts over their fair share while another host waited for one."),
	N("session_kept_slabs", kept, "farswapd_session_kept_slabs_total",
	  "Held slabs kept for their host when its session ended without it giving them back (a transport error, a silent host), resumable for resume-grace."),
	C(auth_kx, "farswapd_auth_kx_total",
	  "Of the sessions authenticated, those with an X25519 session key (every later control message tagged)."),
	C(auth_legacy, "farswapd_auth_legacy_total",
	  "Of the sessions authenticated, those of hosts without session keys (an older farswap.ko)."),
	C(bad_tags, "farswapd_bad_tags_total",
	  "Control messages whose tag was wrong (changed, replayed or reordered on the way); each closes its session."),
	C(join_refused, "farswapd_join_refused_total",
	  "I/O queue pairs refused for a wrong join tag."),
#undef N
#undef C
};

/* Refused connections, by reason (fsd_refusal_name()). */
static uint64_t refused(const struct fsd_donor *d, int r)
{
	return d->cnt.refused[r];
}

static uint64_t counter(const struct fsd_donor *d, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)&d->cnt + counters[i].offset, sizeof(v));
	return v;
}

static const char *session_state(const struct fsd_session *s)
{
	if (s->closing)
		return "closing";
	return s->established ? "up" : "connecting";
}

static unsigned int io_attached(const struct fsd_session *s)
{
	return (unsigned int)__builtin_popcountll(s->io_attached);
}

static void json_host(struct fsj *j, const struct fsd_donor *d,
		      const struct fsd_session *s)
{
	fsj_object_begin(j, NULL);
	fsj_u64(j, "host", s->nr);
	fsj_string(j, "id", s->name);
	fsj_string(j, "peer", s->peer);
	fsj_u64(j, "slabs", s->nr_slabs);
	fsj_u64(j, "bytes", (uint64_t)s->nr_slabs * d->pool.slab_size);
	fsj_u64(j, "reclaiming", s->nr_reclaiming);
	fsj_u64(j, "io_queues_attached", io_attached(s));
	fsj_u64(j, "io_queues", s->nr_io_queues);
	fsj_string(j, "state", session_state(s));
	fsj_u64(j, "granting", s->grants_in_flight);
	fsj_bool(j, "draining", fsd_session_draining(d, s));
	fsj_u64(j, "refused", fsd_session_refused_slabs(d, s, NULL));
	fsj_object_end(j);
}

static void json_drain(struct fsj *j, const struct fsd_donor *d)
{
	fsj_object_begin(j, "drain");
	fsj_string(j, "state", fsd_drain_state_str(fsd_drain_state(d)));
	fsj_u64(j, "slabs_left", d->pool.nr_held);
	fsj_u64(j, "slabs_returned", d->drain.slabs_returned);
	fsj_u64(j, "bytes_moved", d->drain.slabs_returned * d->pool.slab_size);
	fsj_u64(j, "refusals", d->drain.refusals);
	fsj_object_end(j);
}

void fsd_donor_json(const struct fsd_donor *d, struct fsj *j)
{
	const struct fsd_pool *p = &d->pool;
	const struct fsd_session *s;
	size_t i;
	int r;

	fsj_object_begin(j, NULL);
	fsj_u64(j, "schema_version", FSD_SCHEMA_VERSION);
	fsj_string(j, "failure_domain", d->domain);
	fsj_u64(j, "slab_size", p->slab_size);
	fsj_u64(j, "slabs_total", p->nr_slabs);
	fsj_u64(j, "slabs_free", p->nr_free);
	fsj_u64(j, "slabs_used", p->nr_held);
	fsj_u64(j, "slabs_reclaiming", p->nr_reclaiming);
	fsj_u64(j, "slabs_released", p->nr_released);
	fsj_u64(j, "bytes_total", p->slab_size * p->nr_slabs);
	fsj_u64(j, "bytes_used", p->slab_size * p->nr_held);
	fsj_bool(j, "pressure", d->under_pressure);
	fsj_u64(j, "mem_available", d->mem.mem_available);
	fsj_u64(j, "mem_total", d->mem.mem_total);
	fsj_double(j, "psi_some_avg10", d->mem.psi_some_avg10 / 100.0);
	fsj_u64(j, "slabs_quarantined", p->nr_quarantined);
	fsj_u64(j, "slabs_kept", p->nr_kept);
	fsj_u64(j, "slabs_lost_on_restart", fsd_slabs_lost_on_restart(d));
	fsj_string(j, "auth", fsd_donor_auth_required(d) ? "hmac-sha256" : "none");
	json_drain(j, d);
	fsj_object_begin(j, "counters");
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		fsj_u64(j, counters[i].key, counter(d, i));
	for (r = 0; r < FSD_REFUSED_COUNT; r++) {
		char key[64];

		snprintf(key, sizeof(key), "refused_%s", fsd_refusal_name(r));
		fsj_u64(j, key, refused(d, r));
	}
	fsj_object_end(j);
	fsj_array_begin(j, "hosts");
	for (s = d->sessions; s; s = s->next)
		json_host(j, d, s);
	fsj_array_end(j);
	fsj_object_end(j);
}

static void gauge(struct fsm *m, const char *name, const char *help,
		  uint64_t v)
{
	fsm_family(m, name, FSM_GAUGE, help);
	fsm_u64(m, NULL, 0, v);
}

static void slab_states(struct fsm *m, const struct fsd_pool *p)
{
	static const char *const state[] = {
		"free", "used", "reclaiming", "released",
	};
	const uint32_t count[] = {
		p->nr_free, p->nr_held, p->nr_reclaiming, p->nr_released,
	};
	size_t i;

	fsm_family(m, "farswapd_slabs", FSM_GAUGE,
		   "Slabs by state: free (populated, nobody's), used (held by hosts, reclaiming included), reclaiming, released (memory back with the kernel).");
	for (i = 0; i < ARRAY_SIZE(state); i++) {
		struct fsm_label l = { "state", state[i] };

		fsm_u64(m, &l, 1, count[i]);
	}
}

/* Per-host families: one sample per session, labelled by it. */
static void host_family(struct fsm *m, const struct fsd_donor *d,
			const char *name, const char *help,
			uint64_t (*value)(const struct fsd_session *s))
{
	const struct fsd_session *s;
	char nr[16];

	fsm_family(m, name, FSM_GAUGE, help);
	for (s = d->sessions; s; s = s->next) {
		struct fsm_label l[] = {
			{ "host", nr }, { "id", s->name }, { "peer", s->peer },
		};

		snprintf(nr, sizeof(nr), "%u", s->nr);
		fsm_u64(m, l, 3, value(s));
	}
}

static uint64_t host_slabs(const struct fsd_session *s)
{
	return s->nr_slabs;
}

static uint64_t host_reclaiming(const struct fsd_session *s)
{
	return s->nr_reclaiming;
}

static uint64_t host_io_queues(const struct fsd_session *s)
{
	return io_attached(s);
}

static uint64_t host_up(const struct fsd_session *s)
{
	return s->established && !s->closing;
}

void fsd_donor_metrics(const struct fsd_donor *d, struct fsm *m)
{
	const struct fsd_pool *p = &d->pool;
	size_t i;
	int r;

	gauge(m, "farswapd_slab_size_bytes", "Bytes per slab.", p->slab_size);
	gauge(m, "farswapd_pool_slabs", "Slabs in the pool.", p->nr_slabs);
	slab_states(m, p);
	gauge(m, "farswapd_donated_bytes",
	      "Bytes of the pool (pool_slabs x slab_size).",
	      p->slab_size * p->nr_slabs);
	gauge(m, "farswapd_used_bytes", "Bytes of the slabs held by hosts.",
	      p->slab_size * p->nr_held);
	gauge(m, "farswapd_under_pressure",
	      "1 while the donor is short of memory and reclaiming.",
	      d->under_pressure);
	gauge(m, "farswapd_mem_available_bytes",
	      "MemAvailable at the last memory check.", d->mem.mem_available);
	gauge(m, "farswapd_mem_total_bytes", "MemTotal.", d->mem.mem_total);
	fsm_family(m, "farswapd_psi_some_avg10", FSM_GAUGE,
		   "Memory pressure stall information, some avg10 (percent).");
	fsm_double(m, NULL, 0, d->mem.psi_some_avg10 / 100.0);
	gauge(m, "farswapd_quarantined_slabs",
	      "Slabs quarantined now: their registration could not be removed.",
	      p->nr_quarantined);
	gauge(m, "farswapd_kept_slabs",
	      "Slabs kept across a restart of farswapd, waiting for their host to resume them.",
	      p->nr_kept);
	for (i = 0; i < ARRAY_SIZE(counters); i++) {
		fsm_family(m, counters[i].metric, FSM_COUNTER,
			   counters[i].help);
		fsm_u64(m, NULL, 0, counter(d, i));
	}
	fsm_family(m, "farswapd_refused_total", FSM_COUNTER,
		   "Connections refused, by reason.");
	for (r = 0; r < FSD_REFUSED_COUNT; r++) {
		struct fsm_label l = { "reason", fsd_refusal_name(r) };

		fsm_u64(m, &l, 1, refused(d, r));
	}
	gauge(m, "farswapd_draining",
	      "1 while the donor drains (farswapd --drain), drained or not.",
	      d->drain.on);
	gauge(m, "farswapd_drain_slabs_returned",
	      "Slabs hosts gave back since the drain began.",
	      d->drain.slabs_returned);
	gauge(m, "farswapd_hosts", "Host sessions.", d->nr_sessions);
	host_family(m, d, "farswapd_host_slabs", "Slabs the host holds.",
		    host_slabs);
	host_family(m, d, "farswapd_host_reclaiming_slabs",
		    "The host's slabs asked back and not yet returned.",
		    host_reclaiming);
	host_family(m, d, "farswapd_host_io_queues",
		    "I/O queue pairs the host has connected.", host_io_queues);
	host_family(m, d, "farswapd_host_up",
		    "1 if the host's control connection is established.",
		    host_up);
}

char *fsd_donor_json_text(const struct fsd_donor *d, size_t *len)
{
	const char *text;
	char *copy = NULL;
	struct fsj j;

	fsj_init(&j);
	fsd_donor_json(d, &j);
	text = fsj_finish(&j, len);
	if (text)
		copy = strdup(text);
	fsj_free(&j);
	return copy;
}

char *fsd_donor_metrics_text(const struct fsd_donor *d, size_t *len)
{
	const char *text;
	char *copy = NULL;
	struct fsm m;

	fsm_init(&m);
	fsd_donor_metrics(d, &m);
	text = fsm_finish(&m, len);
	if (text)
		copy = strdup(text);
	fsm_free(&m);
	return copy;
}

/* The stats text of the socket, SIGUSR1 and daemon/README.md. */
int fsd_donor_stats(const struct fsd_donor *d, char *buf, size_t len)
{
	const struct fsd_pool *p = &d->pool;
	const struct fsd_session *s;
	struct fsd_outbuf o = { buf, len, 0, false };
	unsigned int r;

	fsd_emit(&o, "failure_domain %s\n", d->domain);
	fsd_emit(&o, "slab_size %" PRIu64 "\n", p->slab_size);
	fsd_emit(&o, "slabs_total %u\nslabs_free %u\nslabs_used %u\n", p->nr_slabs,
	     p->nr_free, p->nr_held);
	fsd_emit(&o, "slabs_reclaiming %u\nslabs_released %u\n", p->nr_reclaiming,
	     p->nr_released);
	fsd_emit(&o, "bytes_total %" PRIu64 "\nbytes_used %" PRIu64 "\n",
	     p->slab_size * p->nr_slabs, p->slab_size * p->nr_held);
	fsd_emit(&o, "pressure %s\nmem_available %" PRIu64 "\nmem_total %" PRIu64 "\n",
	     d->under_pressure ? "yes" : "no", d->mem.mem_available,
	     d->mem.mem_total);
	fsd_emit(&o, "psi_some_avg10 %u.%02u\n", d->mem.psi_some_avg10 / 100,
	     d->mem.psi_some_avg10 % 100);
	fsd_emit(&o, "slabs_quarantined %u\n", p->nr_quarantined);
	fsd_emit(&o, "slabs_kept %u\n", p->nr_kept);
	fsd_emit(&o, "slabs_lost_on_restart %u\n", fsd_slabs_lost_on_restart(d));
	fsd_emit(&o, "auth %s\n", fsd_donor_auth_required(d) ? "hmac-sha256" : "none");
	fsd_emit(&o, "counters sessions=%" PRIu64 " rejects=%" PRIu64
	     " bad_msgs=%" PRIu64 " grants=%" PRIu64 " frees=%" PRIu64
	     " denied=%" PRIu64 " reclaim_sent=%" PRIu64
	     " reclaim_ok=%" PRIu64 " reclaim_refused=%" PRIu64
	     " reclaim_late=%" PRIu64 " released=%" PRIu64
	     " repopulated=%" PRIu64 " notices=%" PRIu64
	     " keepalives=%" PRIu64 " keepalive_dead=%" PRIu64,
	     d->cnt.sessions, d->cnt.rejects, d->cnt.bad_msgs, d->cnt.grants,
	     d->cnt.frees, d->cnt.denied, d->cnt.reclaim_sent,
	     d->cnt.reclaim_ok, d->cnt.reclaim_refused, d->cnt.reclaim_late,
	     d->cnt.released, d->cnt.repopulated, d->cnt.notices,
	     d->cnt.keepalives, d->cnt.keepalive_dead);
	/* Appended: scripts read the fields above by name. */
	for (r = 0; r < FSD_REFUSED_COUNT; r++)
		fsd_emit(&o, " refused_%s=%" PRIu64, fsd_refusal_name(r),
		     d->cnt.refused[r]);
	fsd_emit(&o, " handshake_timeouts=%" PRIu64 " revoked_slabs=%" PRIu64
	     " quarantined_slabs=%" PRIu64 " alloc_capped=%" PRIu64
	     " alloc_rate_limited=%" PRIu64 " depth_clamped=%" PRIu64
	     " closed_not_allowed=%" PRIu64 " auth_ok=%" PRIu64
	     " auth_failed=%" PRIu64 " auth_denied_msgs=%" PRIu64
	     " auth_timeouts=%" PRIu64 " revoke_notices=%" PRIu64
	     " unauth_evicted=%" PRIu64 " unauth_evicted_per_address=%" PRIu64
	     " resumed_slabs=%" PRIu64 " resume_refused=%" PRIu64
	     " kept_expired_slabs=%" PRIu64 " auth_kx=%" PRIu64
	     " auth_legacy=%" PRIu64 " bad_tags=%" PRIu64
	     " join_refused=%" PRIu64 " session_kept_slabs=%" PRIu64
	     " fair_reclaims=%" PRIu64 "\n",
	     d->cnt.handshake_timeouts, d->cnt.revoked, d->cnt.quarantined,
	     d->cnt.alloc_capped, d->cnt.alloc_rate_limited,
	     d->cnt.depth_clamped, d->cnt.closed_not_allowed,
	     d->cnt.auth_ok, d->cnt.auth_failed, d->cnt.auth_denied_msgs,
	     d->cnt.auth_timeouts, d->cnt.revoke_notices,
	     d->cnt.unauth_evicted, d->cnt.unauth_evicted_per_address,
	     d->cnt.resumed, d->cnt.resume_refused, d->cnt.kept_expired,
	     d->cnt.auth_kx, d->cnt.auth_legacy, d->cnt.bad_tags,
	     d->cnt.join_refused, d->cnt.kept, d->cnt.fair_reclaims);
	fsd_emit(&o, "drain %s\ndrain_slabs_left %u\ndrain_slabs_returned %" PRIu64
	     "\ndrain_bytes_moved %" PRIu64 "\ndrain_refusals %" PRIu64 "\n",
	     fsd_drain_state_str(fsd_drain_state(d)), p->nr_held,
	     d->drain.slabs_returned, d->drain.slabs_returned * p->slab_size,
	     d->drain.refusals);
	fsd_emit(&o, "hosts %u\n", d->nr_sessions);
	for (s = d->sessions; s; s = s->next)
		fsd_emit(&o, "host %u id %s peer %s slabs %u bytes %" PRIu64
		     " reclaiming %u io_queues %u/%u state %s granting %u"
		     " draining %s refused %u\n",
		     s->nr, s->name, s->peer, s->nr_slabs,
		     (uint64_t)s->nr_slabs * p->slab_size, s->nr_reclaiming,
		     io_attached(s), s->nr_io_queues, session_state(s),
		     s->grants_in_flight,
		     fsd_session_draining(d, s) ? "yes" : "no",
		     fsd_session_refused_slabs(d, s, NULL));
	return o.full ? -ENOSPC : (int)o.off;
}
