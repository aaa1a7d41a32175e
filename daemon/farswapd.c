// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd: the farswap donor daemon.
 *
 * One epoll loop over the rdma_cm event channel, each host session's
 * completion channel, a signalfd, two timerfds (memory checks and
 * reclaim deadlines; keepalive and handshake checks), the stats sockets
 * (text and JSON) and the grant worker's eventfd.  Nothing in the loop
 * blocks: every fd is non-blocking, every CM event is acknowledged before
 * it is acted on, so destroying an id never waits, and the one slow thing
 * a host can ask for, a slab (zeroed, pinned and registered), is done by
 * the worker thread (worker.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-id128.h>

#include "client.h"
#include "keyfile.h"
#include "log.h"
#include "poolfd.h"
#include "report.h"
#include "restart.h"
#include "server.h"
#include "slabmem.h"
#include "statsock.h"
#include "verbs.h"

#define MEMINFO "/proc/meminfo"
#define PSI_MEMORY "/proc/pressure/memory"
#define ZONEINFO "/proc/zoneinfo"
#define STATS_MAX (64 * 1024)

static void die_status(int status, const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	pr_err("%s", msg);
	exit(status);
}

/* A start that may succeed later: a device, memory, the listener. */
static void die(const char *fmt, const char *arg)
{
	die_status(1, fmt, arg);
}

/*
 * A start that fails the same way until an administrator changes the
 * configuration, a key file or the unit: EX_CONFIG, which the unit's
 * RestartPreventExitStatus= keeps from being restarted every RestartSec,
 * so that the unit stays failed and systemctl status shows why.
 */
static void die_config(const char *fmt, const char *arg)
{
	die_status(EX_CONFIG, fmt, arg);
}

/*
 * A key file farswapd cannot use: why, as which user (a unit's User= is
 * not the shell's), and how to fix it.
 */
static void die_key(const char *path, const char *err, int ret)
{
	struct passwd *pw = getpwuid(geteuid());
	char user[64], fix[1024];

	if (pw)
		snprintf(user, sizeof(user), "%s", pw->pw_name);
	else
		snprintf(user, sizeof(user), "uid %u", (unsigned int)geteuid());
	fsd_key_fix(fix, sizeof(fix), path, user, ret);
	pr_err("%s (farswapd runs as user %s)%s%s", err, user,
	       fix[0] ? "; " : "", fix);
	exit(EX_CONFIG);
}

/*
 * farswapd's application id for sd_id128_get_machine_app_specific(), made
 * once with systemd-id128 new: the donor id derived from the machine id
 * is stable on this machine and tells nothing of the machine id itself,
 * which machine-id(5) says must not go on the network.
 */
#define FSD_APP_ID \
	SD_ID128_MAKE(8b, 77, 50, 60, 83, ea, 4c, fa, aa, 4b, 04, 97, d3, 4b, 65, 66)

/*
 * The donor's identity: --donor-id, else this machine's id keyed for
 * farswapd (above), else the hostname.
 */
static void pick_donor_id(const struct fsd_config *cfg, uint8_t *id)
{
	sd_id128_t app;
	char buf[64];

	memset(id, 0, FARSWAP_ID_LEN);
	if (cfg->donor_id_set) {
		memcpy(id, cfg->donor_id, FARSWAP_ID_LEN);
		return;
	}
	if (!sd_id128_get_machine_app_specific(FSD_APP_ID, &app)) {
		memcpy(id, app.bytes, FARSWAP_ID_LEN);
		return;
	}
	if (!gethostname(buf, sizeof(buf)))
		memcpy(id, buf, strnlen(buf, FARSWAP_ID_LEN));
}

static int watch_fd(struct fsd_server *srv, int fd, struct fsd_watch *w,
		    enum fsd_watch_type type, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	w->type = type;
	w->ptr = ptr;
	return epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int arm_every(int fd, uint32_t ms)
{
	struct itimerspec its = {
		.it_interval = { ms / 1000, (long)(ms % 1000) * 1000000 },
		.it_value = { ms / 1000, (long)(ms % 1000) * 1000000 },
	};

	return timerfd_settime(fd, 0, &its, NULL);
}

static int arm_timer(struct fsd_server *srv)
{
	return arm_every(srv->timer_fd, srv->cfg.pressure_interval_ms);
}

/*
 * Look for idle sessions, and connections stuck half way, a few times
 * per keepalive interval and per handshake-timeout.
 */
static int arm_keepalive(struct fsd_server *srv)
{
	uint32_t ka = fsd_keepalive_period(srv->cfg.keepalive_ms);
	uint32_t hs = fsd_keepalive_period(srv->cfg.handshake_timeout_ms);

	return arm_every(srv->ka_fd, ka && hs && hs < ka ? hs : ka ?: hs);
}

static void log_keepalive(const struct fsd_server *srv)
{
	uint64_t bound = fsd_keepalive_bound_ms(srv->cfg.keepalive_ms);

	pr_info("keepalive %u ms: a host gone without a word loses its slabs within %" PRIu64 ".%01" PRIu64 " s",
		srv->cfg.keepalive_ms, bound / 1000, bound % 1000 / 100);
}

static void log_auth(const struct fsd_server *srv)
{
	if (fsd_donor_auth_required(&srv->donor))
		pr_info("hosts must authenticate (hmac-sha256, key-file %s, host-keys %s, donor-key-file %s)",
			srv->cfg.key_file[0] ? srv->cfg.key_file : "none",
			srv->cfg.host_keys[0] ? srv->cfg.host_keys : "none",
			srv->cfg.donor_key_file[0] ?
				srv->cfg.donor_key_file : "none");
	else
		pr_warn("insecure-no-auth: hosts are not authenticated; any host that reaches %s:%u can take this donor's memory",
			srv->cfg.listen_addr, srv->cfg.port);
}

static void log_access(const struct fsd_server *srv)
{
	char *text;

	if (!srv->cfg.allowed_hosts.nr) {
		pr_warn("allowed-hosts is empty: any host that reaches %s:%u can take this donor's memory",
			srv->cfg.listen_addr, srv->cfg.port);
		return;
	}
	text = malloc(FSD_ACCESS_MAX * 64);
	if (!text)
		return;
	fsd_access_format(&srv->cfg.allowed_hosts, text, FSD_ACCESS_MAX * 64);
	pr_info("allowed-hosts: %s", text);
	free(text);
}

/* The limits a host meets, as resolved: the defaults are some of them. */
static void log_limits(const struct fsd_server *srv)
{
	const struct fsd_limits_live *l = &srv->donor.lim;
	char cap[16];

	fsd_slab_cap_text(l->max_slabs_fair, l->max_slabs_per_host, cap,
			  sizeof(cap));
	pr_info("limits: max-slabs-per-host %s of %u slabs, alloc-rate %u/s burst %u, connect-rate %u/s burst %u per address, max-unauthenticated %u (%u per address)",
		cap, srv->lim.nr_slabs, l->alloc_rate,
		l->alloc_burst, l->connect_rate, l->connect_burst,
		srv->donor.max_unauthenticated, l->max_unauth_per_address);
}

static void apply_limits(struct fsd_server *srv)
{
	struct fsd_donor *d = &srv->donor;
	struct fsd_limits_live *l = &d->lim;

	l->acl = srv->cfg.allowed_hosts;
	l->max_slabs_per_host = srv->lim.max_slabs_per_host;
	l->max_slabs_fair = srv->lim.max_slabs_fair;
	l->max_sessions_per_address = srv->cfg.max_sessions_per_address;
	l->max_unauth_per_address = srv->cfg.max_unauth_per_address;
	l->connect_rate = srv->cfg.connect_rate;
	l->connect_burst = srv->cfg.connect_burst;
	l->max_queue_depth = srv->cfg.max_queue_depth;
	l->handshake_timeout_ms = srv->cfg.handshake_timeout_ms;
	l->auth_timeout_ms = srv->cfg.auth_timeout_ms;
	l->require_kx = srv->cfg.require_session_keys;
	l->alloc_rate = srv->lim.alloc_rate;
	l->alloc_burst = srv->lim.alloc_burst;
	l->revoke_after = srv->cfg.revoke_after;

	d->headroom = srv->lim.headroom;
	d->hysteresis = srv->lim.hysteresis;
	d->reclaim_deadline_ms = srv->cfg.reclaim_deadline_ms;
	d->keepalive_ms = srv->cfg.keepalive_ms;
	d->psi_threshold = srv->cfg.psi_threshold;
	d->max_hosts = srv->cfg.max_hosts;
	d->max_unauthenticated = srv->cfg.max_unauthenticated;
	d->resume_grace_ms = srv->cfg.resume_grace_ms;
}

/*
 * systemd's notification socket (Type=notify): READY=1 once the slabs
 * are pinned and the listener is up, RELOADING=1 and READY=1 around a
 * SIGHUP, STOPPING=1 at exit, and a STATUS= line for systemctl status.
 * sd_notify() does nothing outside systemd (no NOTIFY_SOCKET).
 */
static void notify(const char *state)
{
	int ret = sd_notify(0, state);

	if (ret < 0)
		pr_debug("sd_notify: %s", strerror(-ret));
}

/* STATUS=: hosts and slabs in use, sent when it changes. */
static void notify_status(struct fsd_server *srv)
{
	const struct fsd_donor *d = &srv->donor;
	char status[sizeof(srv->notify_status)];
	char msg[sizeof(status) + 16], kept[48] = "";

	static const char *const drain[] = {
		[FSD_DRAIN_OFF] = "",
		[FSD_DRAIN_DRAINING] = ", draining",
		[FSD_DRAIN_DRAINED] = ", drained: safe to stop",
	};

	if (d->pool.nr_kept)
		snprintf(kept, sizeof(kept), ", %u kept for hosts to resume",
			 d->pool.nr_kept);
	snprintf(status, sizeof(status),
		 "%u hosts, %u of %u slabs in use%s%s%s", d->nr_sessions,
		 d->pool.nr_held, d->pool.nr_slabs, kept,
		 d->under_pressure ? ", under memory pressure" : "",
		 drain[fsd_drain_state(d)]);
	if (!strcmp(status, srv->notify_status))
		return;
	memcpy(srv->notify_status, status, sizeof(status));
	snprintf(msg, sizeof(msg), "STATUS=%s", status);
	notify(msg);
}

/* RELOADING=1 with the time systemd 253 and later want beside it. */
static void notify_reloading(void)
{
	struct timespec ts;
	char msg[64];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
	notify(msg);
}

/*
 * --metrics-file: the donor's metrics, replaced whole every pressure
 * interval.  A failure is logged once, not every interval, until the
 * file can be written again.
 */
static void write_metrics(struct fsd_server *srv)
{
	char err[sizeof(srv->metrics_error)];
	size_t len;
	char *text;
	int ret;

	if (!srv->cfg.metrics_file[0])
		return;
	text = fsd_donor_metrics_text(&srv->donor, &len);
	if (!text) {
		snprintf(err, sizeof(err), "cannot build the metrics");
		ret = -ENOMEM;
	} else {
		ret = fsm_write_file(srv->cfg.metrics_file, text, len, err,
				     sizeof(err));
		free(text);
	}
	if (ret && strcmp(err, srv->metrics_error)) {
		pr_warn("metrics-file: %s", err);
		memcpy(srv->metrics_error, err, sizeof(err));
	} else if (!ret && srv->metrics_error[0]) {
		pr_notice("metrics-file: %s written again",
			  srv->cfg.metrics_file);
		srv->metrics_error[0] = '\0';
	}
}

static void log_stats(struct fsd_server *srv)
{
	char *buf = malloc(STATS_MAX), *line, *save;

	if (!buf)
		return;
	if (fsd_donor_stats(&srv->donor, buf, STATS_MAX) < 0) {
		pr_warn("stats do not fit %u bytes", STATS_MAX);
	} else {
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			pr_info("stats: %s", line);
	}
	free(buf);
}

/* SIGHUP: re-read the config; only the keys that can change live do. */
static void reload(struct fsd_server *srv)
{
	bool domain, keepalive, metrics;
	struct fsd_config c;
	struct fsd_meminfo mi;
	char err[512], keys[256];

	notify_reloading();
	fsd_config_defaults(&c);
	if (fsd_config_load(&c, srv->config_path, srv->config_must_exist, err,
			    sizeof(err)) ||
	    fsd_config_apply_args(&c, &srv->args, err, sizeof(err))) {
		pr_err("SIGHUP: %s; keeping the running configuration", err);
		notify("READY=1\nSTATUS=reload failed, running the previous configuration");
		srv->notify_status[0] = '\0';
		return;
	}
	if (c.max_bytes_per_host && c.max_bytes_per_host < srv->cfg.slab_size) {
		pr_err("SIGHUP: max-slabs-per-host is less than one slab; keeping the running configuration");
		return;
	}
	/* What the keys' new values set off, looked at before they land. */
	domain = !fsd_config_key_same(fsd_config_key("failure-domain"),
				      &srv->cfg, &c);
	keepalive = !fsd_config_key_same(fsd_config_key("keepalive"),
					 &srv->cfg, &c) ||
		    !fsd_config_key_same(fsd_config_key("handshake-timeout"),
					 &srv->cfg, &c);
	metrics = !fsd_config_key_same(fsd_config_key("metrics-file"),
				       &srv->cfg, &c);
	if (fsd_config_reload(&srv->cfg, &c)) {
		fsd_config_restart_keys(keys, sizeof(keys));
		pr_warn("SIGHUP: %s take effect after a restart (the files in host-keys are read at each host's handshake)",
			keys);
	}
	if (domain) {
		fsd_donor_set_domain(&srv->donor, c.failure_domain);
		pr_notice("SIGHUP: failure-domain is now %s (for host sessions from now on)",
			  srv->donor.domain);
	}
	if (keepalive) {
		arm_keepalive(srv);
		log_keepalive(srv);
	}
	srv->lim.max_slabs_per_host = fsd_slab_cap(&c, srv->cfg.slab_size,
						   srv->lim.nr_slabs);
	srv->lim.max_slabs_fair = c.max_slabs_fair;
	fsd_alloc_rate(&c, srv->cfg.slab_size, &srv->lim.alloc_rate,
		       &srv->lim.alloc_burst);
	fsd_log_set_level(c.log_level);
	if (!fsd_read_meminfo(MEMINFO, NULL, &mi)) {
		srv->lim.headroom = fsd_amount_resolve(&c.headroom,
						       mi.mem_total);
		srv->lim.hysteresis = fsd_amount_resolve(&c.hysteresis,
							 mi.mem_total);
	}
	if (metrics)
		srv->metrics_error[0] = '\0';
	apply_limits(srv);
	log_access(srv);
	log_limits(srv);
	/* Access is for sessions too, not only for the next connects. */
	fsd_donor_recheck_access(&srv->donor);
	arm_timer(srv);
	pr_notice("reloaded %s", srv->config_path);
	/* Debian 12's systemd (252) waits for READY=1 after RELOADING=1. */
	notify("READY=1");
	srv->notify_status[0] = '\0';
	notify_status(srv);
}

/* Copy what we need out of a CM event, so it can be acked at once. */
struct cm_event {
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	int status;
	struct fsd_conn_params cp;
	uint8_t pdata[256];
	uint8_t plen;
};

static void on_connect_request(struct fsd_server *srv, struct cm_event *ev)
{
	struct fsd_conn_decision dec;
	struct fsd_session *s;
	struct fsd_addr addr;
	char peer[FSD_PEER_LEN];
	int ret;

	fsd_peer_name(ev->id, peer, sizeof(peer));
	fsd_conn_decide(&srv->donor, fsd_peer_addr(ev->id, &addr), ev->pdata,
			ev->plen, &dec, fsd_now_ms());
	if (dec.status != FARSWAP_ST_OK)
		goto reject;
	if (dec.qtype == FARSWAP_QT_CTRL) {
		/* With authentication, once the new session proved its id. */
		if (!fsd_donor_auth_required(&srv->donor))
			fsd_probe_host(&srv->donor, dec.req.host_id, NULL,
				       fsd_now_ms());
		/* Its place, if it takes one of a session not yet proven. */
		fsd_conn_make_room(&srv->donor, &dec, fsd_now_ms());
		s = fsd_session_new(&srv->donor, &dec, peer, fsd_now_ms());
		if (!s) {
			dec.status = FARSWAP_ST_INTERNAL;
			dec.refusal = FSD_REFUSED_INTERNAL;
			snprintf(dec.detail, sizeof(dec.detail),
				 "cannot create a session");
			goto reject;
		}
		ret = fsd_host_accept_ctrl(srv, ev->id, s, &ev->cp);
		if (ret) {
			pr_err("host %s: cannot set up the control QP: %s",
			       peer, strerror(-ret));
			fsd_session_free(&srv->donor, s);
			dec.status = FARSWAP_ST_INTERNAL;
			dec.refusal = FSD_REFUSED_INTERNAL;
			snprintf(dec.detail, sizeof(dec.detail),
				 "cannot set up the control QP");
			goto reject;
		}
		/*
		 * Debug, not info: every connect gets here, a keyless flood's
		 * too (connect-rate bounds them per address, not in all);
		 * what a host that proves the key does next is logged at
		 * info ("authenticated", "session up").
		 */
		pr_debug("host %u (%s, %s): control QP accepted", s->nr,
			 s->name, s->peer);
		return;
	}
	s = dec.session;
	ret = fsd_host_accept_io(srv, ev->id, s, dec.qid, &ev->cp);
	if (ret) {
		fsd_host_reject(ev->id, FARSWAP_ST_INTERNAL);
		rdma_destroy_id(ev->id);
		fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
				  "cannot set up I/O queue %u: %s", dec.qid,
				  strerror(-ret));
		return;
	}
	pr_debug("host %u: I/O queue %u accepted", s->nr, dec.qid);
	return;

reject:
	fsd_conn_refused(&srv->donor, &dec, peer, fsd_now_ms());
	fsd_host_reject(ev->id, (unsigned int)dec.status);
	rdma_destroy_id(ev->id);
}

static void on_conn_event(struct fsd_server *srv, struct cm_event *ev)
{
	struct fsd_conn *c = ev->id->context;
	struct fsd_session *s = c ? c->s : NULL;
	char q[32];

	if (!s)
		return;
	if (c->qtype == FARSWAP_QT_CTRL)
		snprintf(q, sizeof(q), "control QP");
	else
		snprintf(q, sizeof(q), "I/O queue %u", c->qid);
	switch (ev->type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = true;
		if (c->qtype == FARSWAP_QT_CTRL)
			fsd_session_established(&srv->donor, s, fsd_now_ms());
		else
			fsd_session_io_established(s, c->qid);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		fsd_session_close(&srv->donor, s, FSD_LOG_INFO,
				  "host disconnected (%s)", q);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		fsd_session_close(&srv->donor, s, FSD_LOG_WARN, "%s: %s (%d)",
				  q, rdma_event_str(ev->type), ev->status);
		break;
	default:
		pr_debug("host %u: %s on %s", s->nr, rdma_event_str(ev->type),
			 q);
		break;
	}
}

static void on_cm_ready(struct fsd_server *srv)
{
	struct rdma_cm_event *e;
	struct cm_event ev;

	while (!rdma_get_cm_event(srv->cm_ch, &e)) {
		memset(&ev, 0, sizeof(ev));
		ev.type = e->event;
		ev.id = e->id;
		ev.listen_id = e->listen_id;
		ev.status = e->status;
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			ev.cp.initiator_depth = e->param.conn.initiator_depth;
			ev.cp.responder_resources =
				e->param.conn.responder_resources;
			ev.plen = e->param.conn.private_data_len;
			if (e->param.conn.private_data && ev.plen)
				memcpy(ev.pdata, e->param.conn.private_data,
				       ev.plen);
			else
				ev.plen = 0;
		}
		rdma_ack_cm_event(e);

		if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST)
			on_connect_request(srv, &ev);
		else if (ev.id == srv->listen_id &&
			 ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			/* Exit non-zero: systemd restarts us on the next device. */
			pr_err("listener: %s; exiting", rdma_event_str(ev.type));
			srv->stop = true;
			srv->exit_code = 1;
		} else if (ev.id == srv->listen_id) {
			pr_debug("listener: %s", rdma_event_str(ev.type));
		} else {
			on_conn_event(srv, &ev);
		}
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		pr_err("rdma_get_cm_event: %s", strerror(errno));
}

static void on_timer(struct fsd_server *srv)
{
	struct fsd_meminfo mi;
	uint64_t ticks;

	if (read(srv->timer_fd, &ticks, sizeof(ticks)) < 0)
		return;
	if (fsd_read_meminfo(MEMINFO, PSI_MEMORY, &mi)) {
		pr_warn("cannot read %s", MEMINFO);
		return;
	}
	/*
	 * Near or under pressure, also count the free pages MemAvailable
	 * does not show yet (pressure.h).  Only then: /proc/zoneinfo takes
	 * each zone's lock while it prints every CPU's pageset.
	 */
	if (mi.mem_available < srv->donor.headroom + srv->donor.hysteresis &&
	    !fsd_read_pcp(ZONEINFO, (uint64_t)sysconf(_SC_PAGESIZE),
			  &mi.pcp_free))
		mi.pcp_valid = true;
	fsd_donor_tick(&srv->donor, &mi, fsd_now_ms());
	write_metrics(srv);
	notify_status(srv);
}

static void on_keepalive(struct fsd_server *srv)
{
	uint64_t ticks;

	if (read(srv->ka_fd, &ticks, sizeof(ticks)) < 0)
		return;
	fsd_donor_keepalive(&srv->donor, fsd_now_ms());
	fsd_donor_handshakes(&srv->donor, fsd_now_ms());
}

/*
 * SIGTERM: at once.  With the pool in systemd's fd store the held slabs
 * stay in it for the next farswapd (a restart); else they are freed, and
 * farswapd --drain --wait first loses nothing.
 */
static void log_stop(const struct fsd_server *srv, int sig)
{
	const struct fsd_pool *p = &srv->donor.pool;

	if (srv->kept_by_store)
		pr_notice("%s: exiting; %u held and %u kept slabs stay in systemd's fd store for the next farswapd (resumable for %u s after it starts)",
			  strsignal(sig), p->nr_held, p->nr_kept,
			  srv->cfg.resume_grace_ms / 1000);
	else
		pr_notice("%s: freeing everything and exiting%s", strsignal(sig),
			  p->nr_held ?
				  " (hosts still hold slabs here: pages with no other copy are lost)" :
				  "");
}

/*
 * SIGUSR2 or farswapd --restart (@who): leave the loop, then exec the
 * binary farswapd started from, keeping the pool (main()).  False when
 * there is no binary to exec.
 */
static bool restart_in_place(struct fsd_server *srv, const char *who)
{
	if (!srv->self_exe[0]) {
		pr_warn("%s: no binary to restart as (/proc/self/exe was not resolved at start); ignored",
			who);
		return false;
	}
	pr_notice("%s: restarting as %s, keeping %u held and %u kept slabs for their hosts",
		  who, srv->self_exe, srv->donor.pool.nr_held,
		  srv->donor.pool.nr_kept);
	srv->reexec = true;
	srv->stop = true;
	return true;
}

static void on_signal(struct fsd_server *srv)
{
	struct signalfd_siginfo si;

	while (read(srv->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_stop(srv, (int)si.ssi_signo);
			srv->stop = true;
			break;
		case SIGUSR2:
			restart_in_place(srv, "SIGUSR2");
			break;
		case SIGHUP:
			reload(srv);
			break;
		case SIGUSR1:
			log_stats(srv);
			break;
		}
	}
}

static void on_stats_json(struct fsd_server *srv)
{
	static const char oom[] = "{\"error\": \"out of memory\"}\n";
	size_t len;
	char *text = fsd_donor_json_text(&srv->donor, &len);

	if (text)
		fsd_stats_serve(srv->stats_json_fd, text, len);
	else
		fsd_stats_serve(srv->stats_json_fd, oom, sizeof(oom) - 1);
	free(text);
}

/* farswapd --restart: answered before the loop ends, then as SIGUSR2. */
static int ctl_restart(struct fsd_server *srv, const struct fsd_ctl_req *req,
		       char *reply, size_t len)
{
	char who[64];
	int n;

	snprintf(who, sizeof(who), "restart asked by uid %u (pid %d)",
		 (unsigned int)req->uid, (int)req->pid);
	if (!restart_in_place(srv, who))
		n = snprintf(reply, len, "error no binary to restart as (/proc/self/exe was not resolved at start)\n");
	else
		n = snprintf(reply, len, "ok restarting as %s, %u slabs kept for their hosts\n",
			     srv->self_exe, srv->donor.pool.nr_held +
						    srv->donor.pool.nr_kept);
	return n < 0 || (size_t)n >= len ? 0 : n;
}

/*
 * A command on the text socket (statsock.h): drain, undrain, status,
 * restart.
 */
static int on_ctl(void *ctx, const struct fsd_ctl_req *req, char *reply,
		  size_t len)
{
	struct fsd_server *srv = ctx;
	struct fsd_donor *d = &srv->donor;
	const char *head = "ok";
	int n, m;

	if (req->cmd == FSD_CTL_RESTART)
		return ctl_restart(srv, req, reply, len);
	switch (req->cmd) {
	case FSD_CTL_DRAIN:
		pr_notice("drain asked by uid %u (pid %d)",
			  (unsigned int)req->uid, (int)req->pid);
		head = fsd_donor_drain(d, fsd_now_ms()) ? "ok already draining" :
							  "ok draining";
		break;
	case FSD_CTL_UNDRAIN:
		pr_notice("undrain asked by uid %u (pid %d)",
			  (unsigned int)req->uid, (int)req->pid);
		head = fsd_donor_undrain(d, fsd_now_ms()) ? "ok not draining" :
							    "ok back in service";
		break;
	default:
		break;
	}
	notify_status(srv);
	n = snprintf(reply, len, "%s\n", head);
	if (n < 0 || (size_t)n >= len)
		return 0;
	m = fsd_drain_report(d, reply + n, len - (size_t)n);
	return m < 0 ? n : n + m;
}

static void on_stats(struct fsd_server *srv, bool json)
{
	char *buf;
	int n;

	if (json) {
		on_stats_json(srv);
		return;
	}
	buf = malloc(STATS_MAX);
	if (!buf)
		return;
	n = fsd_donor_stats(&srv->donor, buf, STATS_MAX);
	if (n < 0)
		n = snprintf(buf, STATS_MAX, "error stats too long\n");
	fsd_stats_serve_ctl(srv->stats_fd, buf, (size_t)n, on_ctl, srv);
	free(buf);
}

/* Grants the worker finished: answered, or freed if their host left. */
static void on_worker(struct fsd_server *srv)
{
	struct fsd_job *job, *next;

	for (job = fsd_worker_reap(&srv->worker); job; job = next) {
		next = job->next;
		fsd_host_grant_reaped(srv, job);
	}
}

/*
 * Free the verbs resources of every session that was closed, except
 * those with a grant still on the worker: it uses their protection
 * domain, and its completion frees its slab.
 */
static void reap_sessions(struct fsd_server *srv)
{
	struct fsd_session *s, *next;

	for (s = srv->donor.sessions; s; s = next) {
		next = s->next;
		if (fsd_session_reapable(s))
			fsd_host_destroy(srv, s);
	}
}

static int run_loop(struct fsd_server *srv)
{
	struct epoll_event evs[32];
	int n, i;

	while (!srv->stop) {
		n = epoll_wait(srv->epfd, evs, 32, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("epoll_wait: %s", strerror(errno));
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct fsd_watch *w = evs[i].data.ptr;

			switch (w->type) {
			case FSD_W_CM:
				on_cm_ready(srv);
				break;
			case FSD_W_CQ:
				fsd_host_cq_ready(srv, w->ptr);
				break;
			case FSD_W_SIGNAL:
				on_signal(srv);
				break;
			case FSD_W_TIMER:
				on_timer(srv);
				break;
			case FSD_W_KEEPALIVE:
				on_keepalive(srv);
				break;
			case FSD_W_STATS:
				on_stats(srv, w->ptr != NULL);
				break;
			case FSD_W_WORKER:
				on_worker(srv);
				break;
			}
		}
		/* After the batch: no pending event can point at a freed one. */
		reap_sessions(srv);
	}
	return srv->exit_code;
}

static int resolve_listen(const struct fsd_config *cfg,
			  struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res;
	char port[8];
	int ret;

	snprintf(port, sizeof(port), "%u", cfg->port);
	ret = getaddrinfo(cfg->listen_addr, port, &hints, &res);
	if (ret)
		return ret;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static int start_listener(struct fsd_server *srv)
{
	struct sockaddr_storage ss;
	int flags, ret;

	ret = resolve_listen(&srv->cfg, &ss);
	if (ret) {
		pr_err("cannot resolve listen address %s: %s",
		       srv->cfg.listen_addr, gai_strerror(ret));
		return -EINVAL;
	}
	srv->cm_ch = rdma_create_event_channel();
	if (!srv->cm_ch) {
		pr_err("cannot open the RDMA CM (rdma_create_event_channel: %s); is rdma_ucm loaded?",
		       strerror(errno));
		return -errno;
	}
	flags = fcntl(srv->cm_ch->fd, F_GETFL);
	fcntl(srv->cm_ch->fd, F_SETFL, flags | O_NONBLOCK);
	if (rdma_create_id(srv->cm_ch, &srv->listen_id, NULL, RDMA_PS_TCP)) {
		pr_err("rdma_create_id: %s", strerror(errno));
		return -errno;
	}
	if (rdma_bind_addr(srv->listen_id, (struct sockaddr *)&ss)) {
		pr_err("cannot bind %s:%u: %s", srv->cfg.listen_addr,
		       srv->cfg.port, strerror(errno));
		return -errno;
	}
	if (rdma_listen(srv->listen_id, 64)) {
		pr_err("cannot listen on %s:%u: %s", srv->cfg.listen_addr,
		       srv->cfg.port, strerror(errno));
		return -errno;
	}
	if (watch_fd(srv, srv->cm_ch->fd, &srv->cm_watch, FSD_W_CM, NULL))
		return -errno;
	return 0;
}

/* The JSON stats socket beside the text one; its ptr marks it JSON. */
static int start_stats_json(struct fsd_server *srv)
{
	int ret;

	if (!srv->cfg.stats_socket[0])
		return 0;
	ret = fsd_stats_json_path(srv->cfg.stats_socket, srv->stats_json_path,
				  sizeof(srv->stats_json_path));
	if (!ret) {
		srv->stats_json_fd = fsd_stats_listen(srv->stats_json_path);
		ret = srv->stats_json_fd < 0 ? srv->stats_json_fd : 0;
	}
	if (ret) {
		pr_warn("no JSON stats socket at %s.json: %s",
			srv->cfg.stats_socket, strerror(-ret));
		srv->stats_json_path[0] = '\0';
		srv->stats_json_fd = -1;
		return 0;
	}
	if (watch_fd(srv, srv->stats_json_fd, &srv->stats_json_watch,
		     FSD_W_STATS, srv))
		return -errno;
	return 0;
}

static int start_fds(struct fsd_server *srv)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	srv->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (srv->sig_fd < 0 ||
	    watch_fd(srv, srv->sig_fd, &srv->sig_watch, FSD_W_SIGNAL, NULL))
		return -errno;
	srv->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	if (srv->timer_fd < 0 || arm_timer(srv) ||
	    watch_fd(srv, srv->timer_fd, &srv->timer_watch, FSD_W_TIMER,
		     NULL))
		return -errno;
	srv->ka_fd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_NONBLOCK | TFD_CLOEXEC);
	if (srv->ka_fd < 0 || arm_keepalive(srv) ||
	    watch_fd(srv, srv->ka_fd, &srv->ka_watch, FSD_W_KEEPALIVE, NULL))
		return -errno;
	if (fsd_worker_start(&srv->worker) ||
	    watch_fd(srv, srv->worker.efd, &srv->worker_watch, FSD_W_WORKER,
		     NULL))
		return -errno;
	if (srv->cfg.stats_socket[0]) {
		srv->stats_fd = fsd_stats_listen(srv->cfg.stats_socket);
		if (srv->stats_fd < 0) {
			pr_warn("no stats socket at %s: %s",
				srv->cfg.stats_socket,
				strerror(-srv->stats_fd));
		} else if (watch_fd(srv, srv->stats_fd, &srv->stats_watch,
				    FSD_W_STATS, NULL)) {
			return -errno;
		}
	}
	return start_stats_json(srv);
}

/*
 * The pool, adopted from the last farswapd or fresh, every slab not kept
 * for a host mapped and pinned.  A fresh one goes to systemd's fd store,
 * if there is one; an adopted one is in it already (or came by an exec).
 */
static int setup_pool(struct fsd_server *srv, bool handed_in_store)
{
	struct fsd_poolfd *pf = &srv->poolfd;
	char size[32];
	bool adopted;
	int ret;

	ret = fsd_poolfd_setup(pf, &srv->donor, srv->cfg.hugepages,
			       srv->cfg.resume_grace_ms, fsd_now_ms(),
			       handed_in_store ? "fd store" : "last farswapd",
			       &adopted);
	if (ret)
		return ret;
	if (adopted) {
		srv->kept_by_store = handed_in_store;
	} else {
		srv->kept_by_store = fsd_restart_store_fds(pf->mem.fd,
							   pf->state_fd);
		if (srv->kept_by_store)
			pr_info("pool handed to systemd's fd store: a restart keeps the hosts' slabs");
	}
	srv->donor.pool_kept = srv->kept_by_store;
	ret = fsd_poolfd_populate(&srv->donor);
	if (ret)
		return ret;
	fsd_format_size(srv->lim.donate, size, sizeof(size));
	pr_info("donating %s: %u slabs, %s", size, srv->donor.pool.nr_slabs,
		fsd_mem_kind_str(pf->mem.kind));
	return 0;
}

static void shutdown_all(struct fsd_server *srv)
{
	struct fsd_donor *d = &srv->donor;
	struct fsd_session *s;
	bool keep = srv->kept_by_store || srv->reexec;

	d->shutting_down = true;
	/*
	 * A kept pool's records stay as they are: closing the sessions
	 * below frees their slabs here, not for the next farswapd.
	 */
	if (keep)
		srv->poolfd.keep.frozen = true;
	for (s = d->sessions; s; s = s->next)
		fsd_session_close(d, s, FSD_LOG_INFO, "donor shutting down");
	/* Queued grants were cancelled; the one running ends on its own. */
	if (srv->worker.running) {
		fsd_worker_stop(&srv->worker);
		on_worker(srv);
		fsd_worker_exit(&srv->worker);
	}
	reap_sessions(srv);
	if (srv->listen_id)
		rdma_destroy_id(srv->listen_id);
	if (srv->cm_ch)
		rdma_destroy_event_channel(srv->cm_ch);
	/* The exec passes both fds on; systemd's store holds its own. */
	fsd_poolfd_release(&srv->poolfd, d, !srv->reexec);
	fsd_donor_exit(d);
	if (srv->cfg.stats_socket[0])
		fsd_stats_close(srv->stats_fd, srv->cfg.stats_socket);
	if (srv->stats_json_path[0])
		fsd_stats_close(srv->stats_json_fd, srv->stats_json_path);
	if (srv->timer_fd >= 0)
		close(srv->timer_fd);
	if (srv->ka_fd >= 0)
		close(srv->ka_fd);
	if (srv->sig_fd >= 0)
		close(srv->sig_fd);
	if (srv->epfd >= 0)
		close(srv->epfd);
}

/*
 * Held slabs the running farswapd says a restart would lose (its
 * slabs_lost_on_restart line); -1 when it cannot be asked.
 */
static long lost_on_restart(const char *path)
{
	char *buf = malloc(STATS_MAX), err[256];
	const char *line;
	long n = -1;

	if (!buf)
		return -1;
	if (!fsd_stats_fetch(path, buf, STATS_MAX, err, sizeof(err))) {
		line = strstr(buf, "\nslabs_lost_on_restart ");
		if (line)
			n = strtol(line + strlen("\nslabs_lost_on_restart "),
				   NULL, 10);
	}
	free(buf);
	return n;
}

/*
 * ExecStop's --drain --unless-restarting: a restart keeps the pool (it is
 * in systemd's fd store), so hosts that can resume need not move their
 * pages away.  Hosts that cannot (an older kernel module), or a pool the
 * store does not hold, still drain.
 */
static bool restarting(const char *path)
{
	char why[256];
	int ret = fsd_systemd_restarting(why, sizeof(why));
	long lost;

	if (ret < 0)
		pr_warn("cannot tell whether systemd is restarting farswapd (%s): draining",
			why);
	if (ret <= 0)
		return false;
	/*
	 * An upgrade's stop runs the new binary beside the old daemon, which
	 * does not say (and keeps no pool): cannot tell is drain.
	 */
	lost = lost_on_restart(path);
	if (lost < 0) {
		pr_notice("systemd is restarting farswapd (%s), but the running farswapd does not say what a restart would lose: draining",
			  why);
		return false;
	}
	if (lost > 0) {
		pr_notice("systemd is restarting farswapd (%s), but %ld held slabs would not outlive it (hosts that cannot resume, or a pool not in the fd store): draining",
			  why, lost);
		return false;
	}
	pr_notice("systemd is restarting farswapd (%s): no drain, the pool is kept across the restart",
		  why);
	return true;
}

/* SIGUSR2, after a clean shutdown that kept the pool: the next farswapd. */
static int reexec(struct fsd_server *srv)
{
	int ret = -ENOENT;

	if (srv->self_exe[0])
		ret = fsd_restart_exec(srv->self_exe, srv->argv,
				       srv->poolfd.mem.fd, srv->poolfd.state_fd,
				       srv->kept_by_store);
	pr_err("cannot exec %s: %s; %s", srv->self_exe[0] ? srv->self_exe : "farswapd",
	       strerror(-ret),
	       srv->kept_by_store ? "the pool stays in systemd's fd store for the next start" :
				    "the hosts' slabs are lost");
	return 1;
}

int main(int argc, char **argv)
{
	static struct fsd_server srv;
	struct fsd_auth_key key = { .len = 0 };
	struct fsd_auth_key donor_key = { .len = 0 };
	struct fsd_handed handed;
	struct fsd_meminfo mi;
	char err[512], size[32];
	int ret;

	srv.epfd = srv.sig_fd = srv.timer_fd = srv.ka_fd = srv.stats_fd = -1;
	srv.stats_json_fd = -1;
	fsd_poolfd_init(&srv.poolfd);
	srv.argv = argv;
	fsd_log_init(FSD_LOG_INFO, false);
	if (fsd_parse_args(argc, argv, &srv.args, err, sizeof(err)))
		die_config("%s", err);
	switch (srv.args.action) {
	case FSD_ACT_HELP:
		fsd_usage(stdout);
		return 0;
	case FSD_ACT_VERSION:
		printf("farswapd %s, protocol versions %u..%u\n",
		       FARSWAP_VERSION, FARSWAP_VERSION_MIN,
		       FARSWAP_VERSION_MAX);
		return 0;
	case FSD_ACT_GEN_KEY:
		/* No config needed: a key is made before farswapd is set up. */
		if (fs_keyfile_generate(srv.args.gen_key_path, err,
					sizeof(err))) {
			fprintf(stderr, "farswapd: --gen-key: %s\n", err);
			return 1;
		}
		return 0;
	default:
		break;
	}
	srv.config_path = srv.args.config_path ? srv.args.config_path :
						 FSD_CONFIG_PATH;
	srv.config_must_exist = srv.args.config_path != NULL;
	fsd_config_defaults(&srv.cfg);
	if (fsd_config_load(&srv.cfg, srv.config_path, srv.config_must_exist,
			    err, sizeof(err)) ||
	    fsd_config_apply_args(&srv.cfg, &srv.args, err, sizeof(err)))
		die_config("%s", err);
	fsd_log_set_level(srv.cfg.log_level);

	if (srv.args.action == FSD_ACT_STATS) {
		const char *path = srv.cfg.stats_socket;

		if (srv.args.json && *path) {
			if (fsd_stats_json_path(path, srv.stats_json_path,
						sizeof(srv.stats_json_path)))
				die("stats socket path too long for its .json twin: %s",
				    path);
			path = srv.stats_json_path;
		}
		if (fsd_stats_query(path, err, sizeof(err)))
			die("%s", err);
		return 0;
	}
	if (srv.args.action == FSD_ACT_DRAIN && srv.args.unless_restarting &&
	    restarting(srv.cfg.stats_socket))
		return 0;
	if (srv.args.action == FSD_ACT_DRAIN)
		return fsd_client_drain(srv.cfg.stats_socket, srv.args.wait,
					srv.args.timeout_ms);
	if (srv.args.action == FSD_ACT_UNDRAIN)
		return fsd_client_undrain(srv.cfg.stats_socket);
	if (srv.args.action == FSD_ACT_RESTART)
		return fsd_client_restart(srv.cfg.stats_socket);
	if (srv.args.action == FSD_ACT_CHECK)
		return fsd_client_check(&srv.cfg, &srv.args, &srv.lim);
	if (fsd_restart_self_exe(srv.self_exe, sizeof(srv.self_exe)))
		pr_warn("cannot resolve /proc/self/exe: SIGUSR2 cannot restart farswapd");
	fsd_restart_take_fds(&handed);
	if (handed.pool >= 0)
		fsd_poolfd_check(&srv.poolfd, handed.pool, handed.state,
				 srv.cfg.slab_size);
	if (fsd_read_meminfo(MEMINFO, PSI_MEMORY, &mi))
		die("cannot read %s", MEMINFO);
	/*
	 * MemAvailable does not count the kept pool, which is the donation
	 * already: counted back in, a restart donates what it did before.
	 */
	mi.mem_available += fsd_poolfd_resident(&srv.poolfd);
	if (fsd_config_resolve(&srv.cfg, mi.mem_total, mi.mem_available,
			       &srv.lim, err, sizeof(err)))
		die("%s", err);
	if (fsd_config_check_auth(&srv.cfg, err, sizeof(err)))
		die_config("%s", err);
	if (srv.cfg.key_file[0]) {
		ret = fsd_auth_load_key(srv.cfg.key_file, &key, err,
					sizeof(err));
		if (ret)
			die_key(srv.cfg.key_file, err, ret);
	}
	if (srv.cfg.donor_key_file[0]) {
		ret = fsd_auth_load_key(srv.cfg.donor_key_file, &donor_key,
					err, sizeof(err));
		if (ret)
			die_key(srv.cfg.donor_key_file, err, ret);
	}
	/*
	 * The secrets live in this process from here on: no core file of it
	 * (systemd-coredump's included), and no ptrace but by root, as
	 * ssh-agent does.
	 */
	if ((srv.cfg.key_file[0] || srv.cfg.host_keys[0] ||
	     srv.cfg.donor_key_file[0]) &&
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		pr_warn("cannot keep the keys out of core dumps: %s",
			strerror(errno));
	/*
	 * A name no file has: the directory's own checks alone, into a key
	 * of its own (@key holds key-file's secret until the donor has it).
	 */
	if (srv.cfg.host_keys[0]) {
		struct fsd_auth_key probe;

		ret = fsd_auth_load_host_key(srv.cfg.host_keys, "check-config",
					     &probe, err, sizeof(err));
		fsd_auth_key_clear(&probe);
		/* The file's fix does not fit a directory: its error says it. */
		if (ret && ret != -ENOENT)
			die_key(srv.cfg.host_keys, err, -ENOTDIR);
	}
	if (fsd_memlock_check(srv.lim.donate + (16ull << 20), err, sizeof(err)))
		die_config("%s", err);
	if (fsd_rdma_devices() <= 0)
		die("%s", "no RDMA device: load a driver (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0)");

	if (fsd_donor_init(&srv.donor, srv.lim.nr_slabs, srv.cfg.slab_size,
			   &fsd_verbs_ops, &srv))
		die("%s", "out of memory");
	pick_donor_id(&srv.cfg, srv.donor.donor_id);
	fsd_donor_set_domain(&srv.donor, srv.cfg.failure_domain);
	fsd_donor_set_key(&srv.donor, &key, srv.cfg.key_file);
	fsd_auth_key_clear(&key);
	fsd_donor_set_donor_key(&srv.donor, &donor_key);
	fsd_auth_key_clear(&donor_key);
	fsd_donor_set_host_keys(&srv.donor, srv.cfg.host_keys);
	apply_limits(&srv);
	srv.donor.mem = mi;
	ret = setup_pool(&srv, handed.in_store);
	if (ret) {
		shutdown_all(&srv);
		return 1;
	}
	srv.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv.epfd < 0 || start_fds(&srv) || start_listener(&srv)) {
		if (srv.epfd < 0 || errno)
			pr_err("cannot start: %s", strerror(errno));
		shutdown_all(&srv);
		return 1;
	}
	fsd_format_size(srv.cfg.slab_size, size, sizeof(size));
	pr_notice("listening on %s:%u, %u slabs of %s, stats at %s",
		  srv.cfg.listen_addr, srv.cfg.port, srv.lim.nr_slabs, size,
		  srv.cfg.stats_socket[0] ? srv.cfg.stats_socket : "(none)");
	log_keepalive(&srv);
	log_auth(&srv);
	log_access(&srv);
	log_limits(&srv);
	write_metrics(&srv);
	notify("READY=1");
	notify_status(&srv);
	ret = run_loop(&srv);
	if (srv.reexec)
		notify_reloading();
	else
		notify(srv.kept_by_store ?
			       "STOPPING=1\nSTATUS=disconnecting hosts, keeping their slabs" :
			       "STOPPING=1\nSTATUS=disconnecting hosts and freeing slabs");
	shutdown_all(&srv);
	if (srv.reexec)
		return reexec(&srv);
	pr_notice("exited cleanly");
	return ret;
}
