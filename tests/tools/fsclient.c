// SPDX-License-Identifier: GPL-2.0
/*
 * fsclient: a userspace farswap host, for testing farswapd.
 *
 * Speaks the host side of include/farswap_proto.h with plain librdmacm
 * and verbs: opens a session (control QP + I/O QPs), allocates slabs,
 * writes patterns with RDMA WRITE and reads them back with RDMA READ,
 * answers reclaim requests, frees.  Other modes misbehave on purpose
 * (someone else's rkey, malformed messages, a version nobody speaks, bad
 * I/O queue connects) and check the donor reacts as it must.
 *
 * Prints "fsclient: ..." lines; exits 0 when what was expected happened.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <rdma/rdma_cma.h>

#include "auth.h"
#include "farswap_proto.h"
#include "keyfile.h"

#ifndef __noreturn
#define __noreturn __attribute__((noreturn))
#endif

#define PAGE FARSWAP_PAGE_SIZE
#define MAX_SLABS 256
#define MAX_IO 8
#define BUF_PAGES 32		/* local RDMA buffer: 128 KiB */
#define RECV_BASE 0
#define SEND_BASE 0x100
#define RDMA_BASE 0x10000
#define FSC_STORM_MAX 1024	/* --mode storm: connects */
#define FSC_STORM_SOURCES 64	/* ... source addresses */

struct slab {
	bool held;
	uint32_t id;
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
	uint64_t host_slab;
};

struct pending {
	bool used;
	union farswap_msg m;
};

static struct {
	const char *mode;
	char host_id[FARSWAP_ID_LEN + 1];
	const char *dst;
	unsigned int nr_io;
	unsigned int nr_slabs;
	unsigned int pages;
	unsigned int timeout;
	unsigned int hold;
	const char *rkey_file;
	const char *steal_file;
	const char *malformed;
	const char *ready_file;
	const char *reclaimed_file;
	const char *stop_file;
	bool expect_notice;
	bool ack_reclaim;
	bool refuse_reclaim;
	unsigned int ack_delay;
	unsigned int expect_reclaims;
	unsigned int verify_every;
	unsigned int min_notices;
	bool keep;
	bool quiet;
	unsigned int queue_depth;	/* asked for in every conn_req */
	unsigned int sessions;		/* --mode flood: connects to open */
	unsigned int accepted;		/* ... of which the donor takes */
	const char *key_file;		/* authenticate with this secret */
	char *sources;			/* --mode storm: source addresses */
	unsigned int within;		/* ms: fail a slower authentication */
	bool kx;			/* prove the key with a session key */
} opt = {
	.mode = "basic",
	.host_id = "fsclient",
	.nr_io = 2,
	.nr_slabs = 2,
	.pages = 16,
	.timeout = 20,
	.expect_reclaims = 1,
	.verify_every = 1,
	.queue_depth = 64,
};

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *ctrl;
	struct rdma_cm_id *io[MAX_IO + 1];
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union farswap_msg *recv;	/* FARSWAP_CTRL_DEPTH */
	union farswap_msg *send;	/* FARSWAP_CTRL_DEPTH */
	uint8_t *data;			/* BUF_PAGES pages */
	struct ibv_mr *msg_mr;
	struct ibv_mr *data_mr;
	uint64_t token;
	uint64_t slab_size;
	uint32_t slabs_total, slabs_free;
	uint8_t version;
	uint32_t features;
	uint64_t cookie;
	unsigned int send_next;
	bool disconnected;
	struct pending queue[64];
	struct slab slabs[MAX_SLABS];
	unsigned int reclaims;
	unsigned int notices;		/* unsolicited STATS_REP */
	unsigned int offers;		/* ... with slabs free */
	uint64_t rdma_seq;
	enum ibv_wc_status last_rdma_status;
	bool rdma_done;
	uint8_t donor_id[FARSWAP_ID_LEN];
	uint8_t key[FARSWAP_AUTH_KEY_MAX];
	size_t key_len;			/* 0: no --key-file */
	uint32_t host_features;		/* what our conn_req announced */
	bool tagged;			/* FARSWAP_FEAT_KX, after AUTH_REP OK */
	uint8_t sk[FARSWAP_KX_KEY_LEN];
	uint64_t tx_seq, rx_seq;
	bool no_recv;			/* control QPs that will get nothing */
} c;

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fsclient: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

static void __noreturn fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fsclient: FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Connection management */

struct event {
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	int status;
	uint8_t pdata[256];
	uint8_t plen;
};

static bool is_ours(struct rdma_cm_id *id)
{
	unsigned int i;

	if (id == c.ctrl)
		return true;
	for (i = 0; i <= MAX_IO; i++)
		if (c.io[i] == id)
			return true;
	return false;
}

/* Next CM event within @ms, or false.  Notes disconnects of any of ours. */
static bool get_event(struct event *ev, int ms)
{
	struct pollfd pfd = { .fd = c.ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;

	if (poll(&pfd, 1, ms) <= 0)
		return false;
	if (rdma_get_cm_event(c.ch, &e))
		return false;
	memset(ev, 0, sizeof(*ev));
	ev->type = e->event;
	ev->id = e->id;
	ev->status = e->status;
	if ((e->event == RDMA_CM_EVENT_REJECTED ||
	     e->event == RDMA_CM_EVENT_ESTABLISHED) &&
	    e->param.conn.private_data) {
		ev->plen = e->param.conn.private_data_len;
		memcpy(ev->pdata, e->param.conn.private_data, ev->plen);
	}
	rdma_ack_cm_event(e);
	if ((ev->type == RDMA_CM_EVENT_DISCONNECTED ||
	     ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL) && is_ours(ev->id))
		c.disconnected = true;
	return true;
}

/* Wait for an event on @id; any other event of ours is only noted. */
/*
 * Connections the donor closed while wait_event() waited for another's
 * event (a flood's evicted sessions): kept for whoever counts them.
 */
static struct rdma_cm_id *passed_over[64];
static unsigned int nr_passed_over;

static bool wait_event(struct rdma_cm_id *id, struct event *ev, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		if (!get_event(ev, (int)(end - now_ms())))
			continue;
		if (ev->id == id)
			return true;
		if (ev->type == RDMA_CM_EVENT_DISCONNECTED &&
		    nr_passed_over < sizeof(passed_over) / sizeof(passed_over[0]))
			passed_over[nr_passed_over++] = ev->id;
	}
	return false;
}

/* The source address of the next connect (--mode storm); none: the route's. */
static struct sockaddr_in src_addr;
static bool src_set;

static void resolve(struct rdma_cm_id *id)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	char host[128], *colon;
	const char *port = "7471";
	struct event ev;

	snprintf(host, sizeof(host), "%s", opt.dst);
	colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		port = colon + 1;
	}
	if (getaddrinfo(host, port, &hints, &res))
		fail("cannot resolve %s", opt.dst);
	if (rdma_resolve_addr(id, src_set ? (struct sockaddr *)&src_addr : NULL,
			      res->ai_addr, 2000))
		fail("rdma_resolve_addr: %s", strerror(errno));
	freeaddrinfo(res);
	if (!wait_event(id, &ev, 5000) || ev.type != RDMA_CM_EVENT_ADDR_RESOLVED)
		fail("rdma_cm could not resolve the address");
	if (rdma_resolve_route(id, 2000))
		fail("rdma_resolve_route: %s", strerror(errno));
	if (!wait_event(id, &ev, 5000) || ev.type != RDMA_CM_EVENT_ROUTE_RESOLVED)
		fail("route not resolved");
}

static void setup_verbs(struct ibv_context *verbs)
{
	size_t msgs = 2 * FARSWAP_CTRL_DEPTH * sizeof(union farswap_msg);

	c.verbs = verbs;
	c.pd = ibv_alloc_pd(verbs);
	c.cq = ibv_create_cq(verbs, 512, NULL, NULL, 0);
	if (!c.pd || !c.cq)
		fail("cannot create PD/CQ");
	c.recv = calloc(1, msgs);
	c.send = c.recv + FARSWAP_CTRL_DEPTH;
	if (posix_memalign((void **)&c.data, PAGE, BUF_PAGES * PAGE))
		fail("out of memory");
	c.msg_mr = ibv_reg_mr(c.pd, c.recv, msgs, IBV_ACCESS_LOCAL_WRITE);
	c.data_mr = ibv_reg_mr(c.pd, c.data, BUF_PAGES * PAGE,
			       IBV_ACCESS_LOCAL_WRITE);
	if (!c.msg_mr || !c.data_mr)
		fail("cannot register buffers");
}

static void post_recv(unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)&c.recv[i], sizeof(c.recv[i]),
			       c.msg_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_BASE + i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c.ctrl->qp, &wr, &bad))
		fail("ibv_post_recv");
}

/*
 * Connect one QP.  Returns 0, or the donor's reject reason (>0), or -1
 * when rejected without farswap private data.
 */
static int connect_qp(struct rdma_cm_id **idp, struct farswap_conn_req *req,
		      struct farswap_conn_rep *rep)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param p = { 0 };
	struct ibv_device_attr da;
	struct event ev;
	bool ctrl = req->qtype == FARSWAP_QT_CTRL;

	if (rdma_create_id(c.ch, idp, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	resolve(*idp);
	if (!c.pd)
		setup_verbs((*idp)->verbs);
	if ((*idp)->verbs != c.verbs)
		fail("I/O QP resolved to another device");
	qa.send_cq = qa.recv_cq = c.cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = ctrl ? FARSWAP_CTRL_DEPTH : 64;
	qa.cap.max_recv_wr = ctrl ? FARSWAP_CTRL_DEPTH : 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(*idp, c.pd, &qa))
		fail("rdma_create_qp: %s", strerror(errno));
	if (ctrl) {
		unsigned int i;

		c.ctrl = *idp;
		for (i = 0; !c.no_recv && i < FARSWAP_CTRL_DEPTH; i++)
			post_recv(i);
	}
	if (ibv_query_device(c.verbs, &da))
		fail("ibv_query_device");
	p.private_data = req;
	p.private_data_len = sizeof(*req);
	p.initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < 16 ?
				      da.max_qp_init_rd_atom : 16);
	p.responder_resources = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (rdma_connect(*idp, &p))
		fail("rdma_connect: %s", strerror(errno));
	if (!wait_event(*idp, &ev, 10000))
		fail("no answer to the connect request");
	if (ev.type == RDMA_CM_EVENT_REJECTED) {
		int reason = farswap_conn_rej_reason(ev.pdata, ev.plen);

		if (reason > 0) {
			const struct farswap_conn_rej *rej =
				(const void *)ev.pdata;

			say("connect rejected: %s (reason %d; donor speaks versions %u..%u)",
			    farswap_status_str((unsigned int)reason), reason,
			    rej->ver_min, rej->ver_max);
		} else {
			say("connect rejected without farswap data (status %d)",
			    ev.status);
		}
		rdma_destroy_qp(*idp);
		rdma_destroy_id(*idp);
		if (ctrl)
			c.ctrl = NULL;
		*idp = NULL;
		return reason;
	}
	if (ev.type != RDMA_CM_EVENT_ESTABLISHED)
		fail("connect: %s (%d)", rdma_event_str(ev.type), ev.status);
	if (ctrl) {
		int st = farswap_conn_rep_check(ev.pdata, ev.plen);

		if (st != FARSWAP_ST_OK)
			fail("bad conn_rep: %s", farswap_status_str((unsigned int)st));
		memcpy(rep, ev.pdata, sizeof(*rep));
	}
	return 0;
}

static void conn_req(struct farswap_conn_req *req, unsigned int qtype,
		     unsigned int qid, uint64_t session)
{
	farswap_conn_req_init(req, qtype, qid, opt.nr_io, session,
			      opt.queue_depth);
	memcpy(req->host_id, opt.host_id, strnlen(opt.host_id, FARSWAP_ID_LEN));
	if (c.key_len)
		req->features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	if (c.key_len && opt.kx)
		req->features |= cpu_to_le32(FARSWAP_FEAT_KX);
	/* An I/O QP of a session with a session key proves it joins it. */
	if (qtype == FARSWAP_QT_IO && c.tagged &&
	    fsd_kx_join_tag(c.sk, session, req->host_id, req->join_tag))
		fail("cannot compute the join tag");
	if (qtype == FARSWAP_QT_CTRL)
		c.host_features = le32_to_cpu(req->features);
}

static void request_either(union farswap_msg *m, unsigned int type1,
			   unsigned int type2, union farswap_msg *rep);

/*
 * libcrypto sets up its providers and random generator at first use.
 * Done here, that first use is not inside the donor's handshake-timeout,
 * which a slow (emulated, loaded) machine could otherwise exceed.
 */
static void warm_crypto(void)
{
	uint8_t buf[FARSWAP_AUTH_NONCE_LEN], out[FARSWAP_AUTH_MAC_LEN];
	unsigned int len = 0;

	if (RAND_bytes(buf, sizeof(buf)) != 1 ||
	    !HMAC(EVP_sha256(), buf, sizeof(buf), buf, sizeof(buf), out, &len))
		fail("libcrypto: RAND_bytes or HMAC-SHA256 failed");
}

/* The secret of --key-file, read and checked as farswapd reads its key-file. */
static void load_key(void)
{
	char err[512];

	if (fs_keyfile_read(opt.key_file, c.key, err, sizeof(err)))
		fail("--key-file: %s", err);
	c.key_len = FARSWAP_AUTH_KEY_LEN;
	warm_crypto();
}

static void mac(enum farswap_auth_role role, const uint8_t *hn,
		const uint8_t *dn, uint8_t *out)
{
	struct farswap_auth_mac_input in;
	uint8_t hid[FARSWAP_ID_LEN] = { 0 };
	unsigned int len = 0;

	memcpy(hid, opt.host_id, strnlen(opt.host_id, FARSWAP_ID_LEN));
	farswap_auth_mac_input_init(&in, role, hn, dn, c.token, hid,
				    c.donor_id);
	if (!HMAC(EVP_sha256(), c.key, (int)c.key_len,
		  (const unsigned char *)&in, sizeof(in), out, &len) ||
	    len != FARSWAP_AUTH_MAC_LEN)
		fail("HMAC-SHA256 failed");
}

/*
 * The handshake with a session key (FARSWAP_FEAT_KX, docs/protocol.md,
 * Session keys), with farswapd's own derivation (daemon/auth.c): an
 * X25519 key pair for this session, the donor's MAC checked, ours sent;
 * on AUTH_REP OK every later control message both ways is tagged.
 * Returns the AUTH_REP status.
 */
static int authenticate_kx(void)
{
	uint8_t priv[FARSWAP_KX_PUB_LEN], pub[FARSWAP_KX_PUB_LEN];
	uint8_t hn[FARSWAP_AUTH_NONCE_LEN], hmac[FARSWAP_AUTH_MAC_LEN];
	uint8_t hid[FARSWAP_ID_LEN] = { 0 };
	struct fsd_auth_key k = { .len = c.key_len };
	struct farswap_kx_transcript t;
	union farswap_msg m, r;
	int st, ret;

	if (!(c.features & FARSWAP_FEAT_KX))
		fail("the donor offers no session key");
	memcpy(k.bytes, c.key, c.key_len);
	memcpy(hid, opt.host_id, strnlen(opt.host_id, FARSWAP_ID_LEN));
	if (RAND_bytes(priv, sizeof(priv)) != 1 ||
	    RAND_bytes(hn, sizeof(hn)) != 1 || fsd_kx_public(priv, pub))
		fail("cannot make an X25519 key pair");
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_KX_REQ, c.version, ++c.cookie);
	memcpy(m.kx_req.host_nonce, hn, sizeof(hn));
	memcpy(m.kx_req.host_pub, pub, sizeof(pub));
	request_either(&m, FARSWAP_MSG_AUTH_KX_CHAL, FARSWAP_MSG_AUTH_REP, &r);
	if (r.hdr.type == FARSWAP_MSG_AUTH_REP)
		return le16_to_cpu(r.auth_rep.status);
	farswap_kx_transcript_init(&t, "", hn, r.kx_chal.donor_nonce, pub,
				   r.kx_chal.donor_pub, c.token, hid,
				   c.donor_id, c.host_features, c.features,
				   c.version);
	ret = fsd_kx_host(&k, priv, &t, r.kx_chal.donor_mac, hmac, c.sk);
	explicit_bzero(priv, sizeof(priv));
	explicit_bzero(&k, sizeof(k));
	if (ret == -EINVAL)
		fail("the donor's X25519 key is of low order");
	if (ret == -EACCES)
		fail("donor failed authentication: its proof does not match --key-file");
	if (ret)
		fail("cannot derive the session key");
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, c.version, ++c.cookie);
	memcpy(m.auth_proof.host_mac, hmac, sizeof(hmac));
	request_either(&m, FARSWAP_MSG_AUTH_REP, FARSWAP_MSG_AUTH_REP, &r);
	st = le16_to_cpu(r.auth_rep.status);
	/* The AUTH_REP came bare; everything after it is tagged. */
	if (st == FARSWAP_ST_OK)
		c.tagged = true;
	return st;
}

/*
 * The handshake of farswap_proto.h ("Authentication").  Returns the
 * donor's AUTH_REP status (FARSWAP_ST_OK when both sides proved the
 * key); fails when the donor's own proof is wrong, unless @hostile (then
 * the proof is sent all the same, to see the donor refuse it).
 */
static int authenticate(bool hostile)
{
	uint8_t hn[FARSWAP_AUTH_NONCE_LEN], want[FARSWAP_AUTH_MAC_LEN];
	union farswap_msg m, r;

	if (!(c.features & FARSWAP_FEAT_AUTH))
		fail("donor does not offer authentication (farswapd without key-file?)");
	do {
		if (RAND_bytes(hn, sizeof(hn)) != 1)
			fail("RAND_bytes failed");
	} while (farswap_is_zero(hn, sizeof(hn)));
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, c.version, ++c.cookie);
	memcpy(m.auth_req.host_nonce, hn, sizeof(hn));
	request_either(&m, FARSWAP_MSG_AUTH_CHAL, FARSWAP_MSG_AUTH_REP, &r);
	if (r.hdr.type == FARSWAP_MSG_AUTH_REP)
		return le16_to_cpu(r.auth_rep.status);
	mac(FARSWAP_AUTH_DONOR, hn, r.auth_chal.donor_nonce, want);
	if (CRYPTO_memcmp(want, r.auth_chal.donor_mac, sizeof(want))) {
		if (!hostile)
			fail("donor failed authentication: its proof does not match --key-file");
		say("donor's proof does not match our (wrong) key, as expected");
	}
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, c.version, ++c.cookie);
	mac(FARSWAP_AUTH_HOST, hn, r.auth_chal.donor_nonce,
	    m.auth_proof.host_mac);
	request_either(&m, FARSWAP_MSG_AUTH_REP, FARSWAP_MSG_AUTH_REP, &r);
	return le16_to_cpu(r.auth_rep.status);
}

/* An I/O queue open_session() leaves for the caller to join (0: none). */
static unsigned int io_deferred;

static void open_session(void)
{
	struct farswap_conn_req req;
	struct farswap_conn_rep rep;
	uint64_t t0 = now_ms(), took;
	unsigned int q;

	c.ch = rdma_create_event_channel();
	if (!c.ch)
		fail("rdma_create_event_channel: %s", strerror(errno));
	conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
	if (connect_qp(&c.ctrl, &req, &rep))
		fail("control QP rejected");
	c.token = le64_to_cpu(rep.session);
	c.slab_size = le64_to_cpu(rep.slab_size);
	c.slabs_total = le32_to_cpu(rep.slabs_total);
	c.slabs_free = le32_to_cpu(rep.slabs_free);
	c.version = rep.version;
	c.features = le32_to_cpu(rep.features);
	memcpy(c.donor_id, rep.donor_id, FARSWAP_ID_LEN);
	if (c.key_len) {
		int st = opt.kx ? authenticate_kx() : authenticate(false);

		if (st != FARSWAP_ST_OK)
			fail("the donor refused our proof: %s",
			     farswap_status_str((unsigned int)st));
		took = now_ms() - t0;
		say("authenticated (hmac-sha256) %" PRIu64 " ms after the connect began",
		    took);
		if (opt.within && took > opt.within)
			fail("authenticated after %" PRIu64 " ms: over --within %u ms",
			     took, opt.within);
	}
	for (q = 1; q <= opt.nr_io; q++) {
		if (q == io_deferred)
			continue;
		conn_req(&req, FARSWAP_QT_IO, q, c.token);
		if (connect_qp(&c.io[q], &req, NULL))
			fail("I/O queue %u rejected", q);
	}
	say("session up: version %u, slab size %" PRIu64 ", %u slabs, %u free, %u I/O queues",
	    c.version, c.slab_size, c.slabs_total, c.slabs_free, opt.nr_io);
}

static void close_session(void)
{
	unsigned int q;

	for (q = 1; q <= MAX_IO; q++)
		if (c.io[q])
			rdma_disconnect(c.io[q]);
	if (c.ctrl)
		rdma_disconnect(c.ctrl);
}

/* Completions and control messages */

static void queue_msg(const union farswap_msg *m)
{
	unsigned int i;

	for (i = 0; i < 64; i++) {
		if (!c.queue[i].used) {
			c.queue[i].used = true;
			c.queue[i].m = *m;
			return;
		}
	}
	fail("too many unhandled messages from the donor");
}

/* A tagged message from the donor: its tag, in order, or the end. */
static void check_tag(const union farswap_msg *m, size_t len)
{
	size_t body = le16_to_cpu(m->hdr.length);
	uint8_t want[FARSWAP_KX_TAG_LEN];

	if (len != body + FARSWAP_KX_TAG_LEN ||
	    fsd_kx_tag(c.sk, 'D', c.rx_seq, m, body, want) ||
	    CRYPTO_memcmp(want, m->raw + body, sizeof(want)))
		fail("the donor's %s (after %" PRIu64 " others) has a wrong tag",
		     farswap_msg_type_str(m->hdr.type), c.rx_seq);
	c.rx_seq++;
}

/* Poll the CQ for up to @ms; returns after one batch of completions. */
static void poll_cq(int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	struct ibv_wc wc[16];
	struct event ev;
	int n, i;

	do {
		n = ibv_poll_cq(c.cq, 16, wc);
		if (n < 0)
			fail("ibv_poll_cq");
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id >= RDMA_BASE) {
				c.last_rdma_status = wc[i].status;
				c.rdma_done = true;
				continue;
			}
			/*
			 * Flushed receives of a control QP already destroyed
			 * (a connect that was refused) share the CQ: not ours.
			 */
			if (wc[i].status != IBV_WC_SUCCESS &&
			    (!c.ctrl || wc[i].qp_num != c.ctrl->qp->qp_num))
				continue;
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					say("completion error: %s",
					    ibv_wc_status_str(wc[i].status));
				c.disconnected = true;
				continue;
			}
			if (wc[i].wr_id < SEND_BASE) {
				unsigned int k = (unsigned int)wc[i].wr_id;
				union farswap_msg m = c.recv[k];
				int st = c.tagged ?
					farswap_msg_check_tagged(&m, wc[i].byte_len,
								 c.version) :
					farswap_msg_check(&m, wc[i].byte_len,
							  c.version);

				post_recv(k);
				if (st == FARSWAP_ST_OK && c.tagged)
					check_tag(&m, wc[i].byte_len);
				if (st != FARSWAP_ST_OK)
					fail("donor sent a bad message: %s",
					     farswap_status_str((unsigned int)st));
				queue_msg(&m);
			}
		}
		if (n)
			return;
		/* Keep an eye on the CM channel: a disconnect ends waits. */
		if (get_event(&ev, 0) && c.disconnected)
			return;
		usleep(200);
	} while (now_ms() < end);
}

static void send_raw(const void *buf, size_t len)
{
	unsigned int i = c.send_next++ % FARSWAP_CTRL_DEPTH;
	struct ibv_sge sge = { (uintptr_t)&c.send[i], (uint32_t)len,
			       c.msg_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = SEND_BASE + i, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (len > sizeof(c.send[i]))
		fail("message too long for the send buffer");
	memcpy(&c.send[i], buf, len);
	if (ibv_post_send(c.ctrl->qp, &wr, &bad))
		fail("ibv_post_send: %s", strerror(errno));
}

/* A control message as the session sends it: tagged once it has a key. */
static void send_ctrl(const union farswap_msg *m)
{
	size_t len = le16_to_cpu(m->hdr.length);
	union farswap_msg t = *m;

	if (c.tagged) {
		if (len + FARSWAP_KX_TAG_LEN > sizeof(t) ||
		    fsd_kx_tag(c.sk, 'H', c.tx_seq, &t, len, t.raw + len))
			fail("cannot tag %s", farswap_msg_type_str(m->hdr.type));
		len += FARSWAP_KX_TAG_LEN;
		c.tx_seq++;
	}
	send_raw(&t, len);
}

static bool take_msg(unsigned int type, uint64_t cookie, union farswap_msg *out)
{
	unsigned int i;

	for (i = 0; i < 64; i++) {
		struct pending *p = &c.queue[i];

		if (p->used && p->m.hdr.type == type &&
		    (!cookie || le64_to_cpu(p->m.hdr.cookie) == cookie)) {
			*out = p->m;
			p->used = false;
			return true;
		}
	}
	return false;
}

static void request(union farswap_msg *m, unsigned int reply_type,
		    union farswap_msg *rep)
{
	uint64_t cookie = le64_to_cpu(m->hdr.cookie);
	uint64_t end = now_ms() + opt.timeout * 1000ull;

	send_ctrl(m);
	while (!take_msg(reply_type, cookie, rep)) {
		if (c.disconnected)
			fail("disconnected while waiting for %s",
			     farswap_msg_type_str(reply_type));
		if (now_ms() > end)
			fail("no %s within %u s", farswap_msg_type_str(reply_type),
			     opt.timeout);
		poll_cq(100);
	}
}

/* As request(), for a reply of either type (an AUTH_REP may refuse). */
static void request_either(union farswap_msg *m, unsigned int type1,
			   unsigned int type2, union farswap_msg *rep)
{
	uint64_t cookie = le64_to_cpu(m->hdr.cookie);
	uint64_t end = now_ms() + opt.timeout * 1000ull;

	send_ctrl(m);
	while (!take_msg(type1, cookie, rep) && !take_msg(type2, cookie, rep)) {
		if (c.disconnected)
			fail("disconnected while waiting for %s",
			     farswap_msg_type_str(type1));
		if (now_ms() > end)
			fail("no %s within %u s", farswap_msg_type_str(type1),
			     opt.timeout);
		poll_cq(100);
	}
}

static int alloc_slab(unsigned int host_slab, struct slab *s)
{
	union farswap_msg m, r;
	unsigned int st;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, c.version, ++c.cookie);
	m.alloc_req.slab_size = cpu_to_le64(c.slab_size);
	m.alloc_req.host_slab = cpu_to_le64(host_slab);
	request(&m, FARSWAP_MSG_SLAB_ALLOC_REP, &r);
	st = le16_to_cpu(r.alloc_rep.status);
	if (st != FARSWAP_ST_OK)
		return (int)st;
	s->held = true;
	s->id = le32_to_cpu(r.alloc_rep.slab_id);
	s->addr = le64_to_cpu(r.alloc_rep.addr);
	s->length = le64_to_cpu(r.alloc_rep.length);
	s->rkey = le32_to_cpu(r.alloc_rep.rkey);
	s->host_slab = host_slab;
	if (s->length != c.slab_size)
		fail("granted slab of %" PRIu64 " bytes, asked %" PRIu64,
		     s->length, c.slab_size);
	say("slab %u granted: addr 0x%" PRIx64 " rkey 0x%x, %u free",
	    s->id, s->addr, s->rkey, le32_to_cpu(r.alloc_rep.slabs_free));
	return 0;
}

static int free_slab(struct slab *s)
{
	union farswap_msg m, r;
	unsigned int st;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, c.version, ++c.cookie);
	m.free_req.slab_id = cpu_to_le32(s->id);
	request(&m, FARSWAP_MSG_SLAB_FREE_REP, &r);
	st = le16_to_cpu(r.free_rep.status);
	if (st == FARSWAP_ST_OK)
		s->held = false;
	return (int)st;
}

static void stats(void)
{
	union farswap_msg m, r;

	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, c.version, ++c.cookie);
	request(&m, FARSWAP_MSG_STATS_REP, &r);
	say("stats: slab_size %" PRIu64 " total %u free %u mine %u mem_available %" PRIu64,
	    le64_to_cpu(r.stats_rep.slab_size),
	    le32_to_cpu(r.stats_rep.slabs_total),
	    le32_to_cpu(r.stats_rep.slabs_free),
	    le32_to_cpu(r.stats_rep.slabs_host),
	    le64_to_cpu(r.stats_rep.mem_available));
}

/* One-sided I/O */

/* RDMA READ/WRITE of @len bytes at @off of the local buffer; wc status. */
static enum ibv_wc_status rdma_op(unsigned int q, enum ibv_wr_opcode op,
				  size_t off, size_t len, uint64_t raddr,
				  uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)(c.data + off), (uint32_t)len,
			       c.data_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = RDMA_BASE + c.rdma_seq++,
				  .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t end = now_ms() + opt.timeout * 1000ull;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	c.rdma_done = false;
	if (ibv_post_send(c.io[q]->qp, &wr, &bad))
		fail("ibv_post_send (RDMA): %s", strerror(errno));
	while (!c.rdma_done) {
		if (now_ms() > end)
			fail("RDMA %s did not complete in %u s",
			     op == IBV_WR_RDMA_READ ? "READ" : "WRITE",
			     opt.timeout);
		poll_cq(100);
	}
	return c.last_rdma_status;
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static uint64_t seed_of(const struct slab *s, uint64_t off)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; opt.host_id[i]; i++)
		h = (h ^ (uint8_t)opt.host_id[i]) * 1099511628211ull;
	return h ^ (s->host_slab << 40) ^ off;
}

/* Page offsets of a slab that get a pattern: spread out, first and last. */
static uint64_t page_off(const struct slab *s, unsigned int i)
{
	uint64_t pages = s->length / PAGE;

	if (i + 1 == opt.pages)
		return (pages - 1) * PAGE;
	return (pages / opt.pages) * i * PAGE;
}

/* The 64 KiB block sits between the first two pattern pages, if it fits. */
#define BLOCK_OFF PAGE
static bool block_fits(const struct slab *s)
{
	return page_off(s, 1) >= BLOCK_OFF + 16 * PAGE;
}

static unsigned int qid_for(unsigned int i)
{
	return 1 + i % opt.nr_io;
}

static void check_zero(const struct slab *s)
{
	unsigned int i, b;

	for (i = 0; i < opt.pages; i++) {
		memset(c.data, 0xa5, PAGE);
		if (rdma_op(qid_for(i), IBV_WR_RDMA_READ, 0, PAGE,
			    s->addr + page_off(s, i), s->rkey) != IBV_WC_SUCCESS)
			fail("RDMA READ of fresh slab %u failed", s->id);
		for (b = 0; b < PAGE; b++)
			if (c.data[b])
				fail("fresh slab %u not zeroed at offset %" PRIu64,
				     s->id, page_off(s, i) + b);
	}
}

static void write_pattern(const struct slab *s)
{
	unsigned int i;
	enum ibv_wc_status st;

	for (i = 0; i < opt.pages; i++) {
		fill(c.data, PAGE, seed_of(s, page_off(s, i)));
		st = rdma_op(qid_for(i), IBV_WR_RDMA_WRITE, 0, PAGE,
			     s->addr + page_off(s, i), s->rkey);
		if (st != IBV_WC_SUCCESS)
			fail("RDMA WRITE to slab %u: %s", s->id,
			     ibv_wc_status_str(st));
	}
	/* One larger transfer: 64 KiB. */
	if (!block_fits(s))
		return;
	fill(c.data, 16 * PAGE, seed_of(s, BLOCK_OFF + 1));
	st = rdma_op(1, IBV_WR_RDMA_WRITE, 0, 16 * PAGE, s->addr + BLOCK_OFF,
		     s->rkey);
	if (st != IBV_WC_SUCCESS)
		fail("64 KiB RDMA WRITE to slab %u: %s", s->id,
		     ibv_wc_status_str(st));
}

static void verify_pattern(const struct slab *s)
{
	uint8_t want[16 * PAGE];
	unsigned int i;
	enum ibv_wc_status st;

	for (i = 0; i < opt.pages; i++) {
		memset(c.data, 0, PAGE);
		st = rdma_op(qid_for(i + 1), IBV_WR_RDMA_READ, 0, PAGE,
			     s->addr + page_off(s, i), s->rkey);
		if (st != IBV_WC_SUCCESS)
			fail("RDMA READ from slab %u: %s", s->id,
			     ibv_wc_status_str(st));
		fill(want, PAGE, seed_of(s, page_off(s, i)));
		if (memcmp(want, c.data, PAGE))
			fail("slab %u: page at %" PRIu64 " does not read back",
			     s->id, page_off(s, i));
	}
	if (!block_fits(s))
		return;
	memset(c.data, 0, 16 * PAGE);
	st = rdma_op(1, IBV_WR_RDMA_READ, 0, 16 * PAGE, s->addr + BLOCK_OFF,
		     s->rkey);
	if (st != IBV_WC_SUCCESS)
		fail("64 KiB RDMA READ from slab %u: %s", s->id,
		     ibv_wc_status_str(st));
	fill(want, 16 * PAGE, seed_of(s, BLOCK_OFF + 1));
	if (memcmp(want, c.data, 16 * PAGE))
		fail("slab %u: 64 KiB block does not read back", s->id);
}

static unsigned int verify_all(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < opt.nr_slabs; i++) {
		if (!c.slabs[i].held)
			continue;
		verify_pattern(&c.slabs[i]);
		n++;
	}
	return n;
}

/* Unsolicited messages: reclaim requests and stats notices. */
static void handle_unsolicited(void)
{
	union farswap_msg m, r;
	unsigned int i, st;

	while (take_msg(FARSWAP_MSG_STATS_REP, 0, &m)) {
		if (m.hdr.cookie)
			continue;
		c.notices++;
		if (le32_to_cpu(m.stats_rep.slabs_free))
			c.offers++;
		say("stats notice: %u of %u slabs free, %u mine",
		    le32_to_cpu(m.stats_rep.slabs_free),
		    le32_to_cpu(m.stats_rep.slabs_total),
		    le32_to_cpu(m.stats_rep.slabs_host));
	}
	while (take_msg(FARSWAP_MSG_RECLAIM_REQ, 0, &m)) {
		uint32_t id = le32_to_cpu(m.reclaim_req.slab_id);
		struct slab *s = NULL;

		for (i = 0; i < opt.nr_slabs; i++)
			if (c.slabs[i].held && c.slabs[i].id == id)
				s = &c.slabs[i];
		say("RECLAIM_REQ slab %u, deadline %u ms", id,
		    le32_to_cpu(m.reclaim_req.deadline_ms));
		c.reclaims++;
		c.offers = 0;	/* only an offer after the reclaims counts */
		st = FARSWAP_ST_NO_ENTRY;
		if (s && opt.ack_reclaim) {
			/* "Migrate": the data must still be there until we ack. */
			if (opt.ack_delay) {
				say("waiting %u s before acking; the slab must stay readable",
				    opt.ack_delay);
				sleep(opt.ack_delay);
			}
			verify_pattern(s);
			say("slab %u still reads back; acking the reclaim", id);
			st = FARSWAP_ST_OK;
			s->held = false;
		} else if (s) {
			st = FARSWAP_ST_NO_SPACE;
		}
		farswap_msg_init(&r, FARSWAP_MSG_RECLAIM_REP, c.version,
				 le64_to_cpu(m.hdr.cookie));
		r.reclaim_rep.status = cpu_to_le16((uint16_t)st);
		r.reclaim_rep.slab_id = cpu_to_le32(id);
		send_ctrl(&r);
		say("RECLAIM_REP slab %u: %s", id, farswap_status_str(st));
	}
}

static void touch(const char *path)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* Modes */

/* Give back every one of the -n slabs still held; any refusal fails. */
static void free_held(void)
{
	unsigned int i;
	int st;

	for (i = 0; i < opt.nr_slabs; i++) {
		if (!c.slabs[i].held)
			continue;
		st = free_slab(&c.slabs[i]);
		if (st)
			fail("SLAB_FREE_REQ slab %u: %s", c.slabs[i].id,
			     farswap_status_str((unsigned int)st));
	}
}

/* Until an unsolicited STATS_REP offers slabs (keepalive probes may come too). */
static void wait_offer(void)
{
	uint64_t end = now_ms() + opt.timeout * 1000ull;

	say("waiting up to %u s for an unsolicited STATS_REP with slabs free",
	    opt.timeout);
	while (!c.offers && now_ms() < end) {
		poll_cq(200);
		handle_unsolicited();
		if (c.disconnected)
			fail("disconnected while waiting for a notice");
	}
	if (!c.offers)
		fail("no stats notice offering slabs from the donor");
}

static int mode_basic(void)
{
	unsigned int i;
	int st;

	open_session();
	for (i = 0; i < opt.nr_slabs; i++) {
		st = alloc_slab(i, &c.slabs[i]);
		if (st)
			fail("SLAB_ALLOC_REQ %u refused: %s", i,
			     farswap_status_str((unsigned int)st));
		check_zero(&c.slabs[i]);
		write_pattern(&c.slabs[i]);
	}
	say("wrote %u pages + 64 KiB to each of %u slabs", opt.pages,
	    opt.nr_slabs);
	verify_all();
	say("read back and verified %u slabs", opt.nr_slabs);
	stats();
	if (opt.rkey_file) {
		FILE *f = fopen(opt.rkey_file, "w");

		if (!f)
			fail("cannot write %s", opt.rkey_file);
		fprintf(f, "%" PRIu64 " %u %" PRIu64 "\n", c.slabs[0].addr,
			c.slabs[0].rkey, c.slabs[0].length);
		fclose(f);
	}
	touch(opt.ready_file);
	if (opt.hold) {
		uint64_t end = now_ms() + opt.hold * 1000ull;
		uint64_t next_verify = 0;

		unsigned int before = c.notices;

		say("holding for %u s%s", opt.hold,
		    opt.verify_every ? "" : ", idle (no I/O, no requests)");
		while (now_ms() < end) {
			if (opt.stop_file && !access(opt.stop_file, F_OK))
				break;
			poll_cq(200);
			handle_unsolicited();
			if (c.disconnected)
				fail("disconnected while holding");
			if (opt.verify_every && now_ms() >= next_verify) {
				verify_all();
				next_verify = now_ms() + opt.verify_every * 1000ull;
			}
		}
		say("held; %u slabs still verify; %u unsolicited STATS_REP meanwhile",
		    verify_all(), c.notices - before);
		if (c.notices - before < opt.min_notices)
			fail("wanted at least %u unsolicited STATS_REP while holding",
			     opt.min_notices);
	}
	if (!strcmp(opt.mode, "reclaim")) {
		uint64_t end = now_ms() + opt.timeout * 1000ull;

		say("waiting up to %u s for %u RECLAIM_REQ", opt.timeout,
		    opt.expect_reclaims);
		touch(opt.ready_file);
		while (c.reclaims < opt.expect_reclaims && now_ms() < end) {
			poll_cq(200);
			handle_unsolicited();
			if (c.disconnected)
				fail("disconnected while waiting for reclaims");
		}
		if (c.reclaims < opt.expect_reclaims)
			fail("got %u RECLAIM_REQ, wanted %u", c.reclaims,
			     opt.expect_reclaims);
		say("%u slabs still held verify after the reclaims",
		    verify_all());
		touch(opt.reclaimed_file);
	}
	if (opt.expect_notice) {
		wait_offer();
		/* The donor offers slabs again: take one. */
		if (alloc_slab(MAX_SLABS - 1, &c.slabs[opt.nr_slabs]))
			fail("the donor offered slabs but refused one");
		check_zero(&c.slabs[opt.nr_slabs]);
		free_slab(&c.slabs[opt.nr_slabs]);
		say("allocated a slab after the notice");
	}
	if (opt.keep) {
		say("keeping the session until killed");
		for (;;) {
			poll_cq(500);
			handle_unsolicited();
			if (c.disconnected)
				fail("disconnected");
		}
	}
	free_held();
	/*
	 * A second free of the same slab is refused, session intact:
	 * NO_ENTRY, or DENIED once another host was granted it.
	 */
	st = free_slab(&c.slabs[0]);
	if (st != FARSWAP_ST_NO_ENTRY && st != FARSWAP_ST_DENIED)
		fail("double free answered %s, wanted NO_ENTRY or DENIED",
		     farswap_status_str((unsigned int)st));
	stats();
	say("freed all slabs; double free refused (%s)",
	    st == FARSWAP_ST_NO_ENTRY ? "no such slab" : "another host's");
	close_session();
	say("OK");
	return 0;
}

static int mode_steal(void)
{
	unsigned long long addr, len;
	unsigned int rkey, attempt;
	enum ibv_wc_status st;
	FILE *f = fopen(opt.steal_file, "r");

	if (!f || fscanf(f, "%llu %u %llu", &addr, &rkey, &len) != 3)
		fail("cannot read addr/rkey from %s", opt.steal_file);
	fclose(f);
	/* Reading fails in our own PD; a failed op ends the QP: reconnect. */
	for (attempt = 0; attempt < 2; attempt++) {
		bool write = attempt == 1;

		/* A fresh session, with the --key-file secret kept. */
		uint8_t key[sizeof(c.key)];
		size_t key_len = c.key_len;

		memcpy(key, c.key, sizeof(key));
		memset(&c, 0, sizeof(c));
		memcpy(c.key, key, sizeof(key));
		c.key_len = key_len;
		explicit_bzero(key, sizeof(key));
		open_session();
		fill(c.data, PAGE, 99);
		st = rdma_op(1, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, 0,
			     PAGE, addr, rkey);
		if (st == IBV_WC_SUCCESS)
			fail("RDMA %s with another session's rkey 0x%x succeeded",
			     write ? "WRITE" : "READ", rkey);
		say("RDMA %s with another session's rkey 0x%x: %s (as expected)",
		    write ? "WRITE" : "READ", rkey, ibv_wc_status_str(st));
		if (st != IBV_WC_REM_ACCESS_ERR && st != IBV_WC_REM_INV_REQ_ERR &&
		    st != IBV_WC_REM_OP_ERR)
			fail("expected a remote access error, got %s",
			     ibv_wc_status_str(st));
		close_session();
	}
	say("OK");
	return 0;
}

static int mode_malformed(void)
{
	union farswap_msg m;
	uint8_t buf[3 * FARSWAP_MSG_MAX];
	size_t len;
	const char *k = opt.malformed ? opt.malformed : "bad_magic";
	uint64_t end;
	struct event ev;

	open_session();
	stats();	/* the session works first */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, c.version, ++c.cookie);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &m, sizeof(m));
	len = 16;
	if (!strcmp(k, "bad_magic")) {
		buf[0] ^= 0xff;
	} else if (!strcmp(k, "short")) {
		len = 15;
	} else if (!strcmp(k, "long")) {
		/* Over FARSWAP_MSG_MAX, within farswapd's receive buffer. */
		len = FARSWAP_MSG_MAX + 36;
	} else if (!strcmp(k, "huge")) {
		/* Over farswapd's receive buffer (twice FARSWAP_MSG_MAX). */
		len = 2 * FARSWAP_MSG_MAX + 44;
	} else if (!strcmp(k, "bad_type")) {
		buf[5] = 42;
	} else if (!strcmp(k, "version")) {
		buf[4] = (uint8_t)(c.version + 1);
	} else if (!strcmp(k, "length_field")) {
		buf[6] = 17;
	} else if (!strcmp(k, "reserved")) {
		farswap_msg_init(&m, FARSWAP_MSG_SLAB_FREE_REQ, c.version, 1);
		m.free_req.reserved1[3] = 1;
		memcpy(buf, &m, sizeof(m));
		len = 32;
	} else if (!strcmp(k, "donor_type")) {
		farswap_msg_init(&m, FARSWAP_MSG_RECLAIM_REQ, c.version, 1);
		memcpy(buf, &m, sizeof(m));
		len = 32;
	} else {
		fail("unknown --malformed kind %s", k);
	}
	if (len > sizeof(c.send[0])) {
		/* Longer than our send slots: send from the data buffer. */
		struct ibv_sge sge = { (uintptr_t)c.data, (uint32_t)len,
				       c.data_mr->lkey };
		struct ibv_send_wr wr = { .wr_id = SEND_BASE + 63,
					  .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		memcpy(c.data, buf, len);
		if (ibv_post_send(c.ctrl->qp, &wr, &bad))
			fail("ibv_post_send");
	} else {
		send_raw(buf, len);
	}
	say("sent a malformed message (%s, %zu bytes)", k, len);
	end = now_ms() + opt.timeout * 1000ull;
	while (!c.disconnected && now_ms() < end) {
		poll_cq(50);
		get_event(&ev, 50);
	}
	if (!c.disconnected)
		fail("still connected %u s after a malformed message",
		     opt.timeout);
	say("disconnected by the donor (as expected)");
	say("OK");
	return 0;
}

static int mode_version(void)
{
	struct farswap_conn_req req;
	struct farswap_conn_rep rep;
	int reason;

	c.ch = rdma_create_event_channel();
	conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
	req.ver_min = FARSWAP_VERSION_MAX + 1;
	req.ver_max = FARSWAP_VERSION_MAX + 5;
	say("connecting with versions %u..%u", req.ver_min, req.ver_max);
	reason = connect_qp(&c.ctrl, &req, &rep);
	if (reason != FARSWAP_ST_VERSION)
		fail("wanted a reject for the version, got %d", reason);
	say("OK");
	return 0;
}

static int mode_badio(void)
{
	struct farswap_conn_req req;
	struct rdma_cm_id *id = NULL;
	int reason;

	/* With a session key the last queue joins later, tag checked. */
	if (opt.kx)
		io_deferred = opt.nr_io;
	open_session();
	conn_req(&req, FARSWAP_QT_IO, 1, c.token ^ 0x5a5a);
	reason = connect_qp(&id, &req, NULL);
	if (reason != FARSWAP_ST_NO_ENTRY)
		fail("wrong token: wanted NO_ENTRY, got %d", reason);
	conn_req(&req, FARSWAP_QT_IO, 1, c.token);
	reason = connect_qp(&id, &req, NULL);
	if (reason != FARSWAP_ST_INVALID)
		fail("duplicate qid: wanted INVALID, got %d", reason);
	conn_req(&req, FARSWAP_QT_IO, 1, c.token);
	memcpy(req.host_id, "intruder\0\0\0\0\0\0\0\0", FARSWAP_ID_LEN);
	reason = connect_qp(&id, &req, NULL);
	if (reason != FARSWAP_ST_DENIED)
		fail("another host's token: wanted DENIED, got %d", reason);
	if (c.tagged) {
		/* With a session key: the last queue's join, its tag changed. */
		conn_req(&req, FARSWAP_QT_IO, opt.nr_io, c.token);
		req.join_tag[0] ^= 1;
		reason = connect_qp(&id, &req, NULL);
		if (reason != FARSWAP_ST_DENIED)
			fail("a changed join tag: wanted DENIED, got %d", reason);
		conn_req(&req, FARSWAP_QT_IO, opt.nr_io, c.token);
		reason = connect_qp(&c.io[opt.nr_io], &req, NULL);
		if (reason)
			fail("the right join tag after a wrong one: got %d", reason);
		say("a replayed join (its qid taken, its tag valid) and a changed tag refused; the right tag joins");
	}
	stats();	/* the session survived them all */
	if (c.disconnected)
		fail("the session died");
	say("bad I/O connects rejected, session intact");
	close_session();
	say("OK");
	return 0;
}

/*
 * A host that does not hold the donor's key (none, or --key-file with
 * the wrong one) gets nothing: refused at connect without the feature;
 * with it, every request DENIED, no I/O queue pair, and a wrong proof
 * DENIED with the session closed.
 */
static int mode_hostile(void)
{
	struct farswap_conn_req req;
	struct farswap_conn_rep rep;
	struct rdma_cm_id *id = NULL;
	size_t key_len = c.key_len;
	union farswap_msg m, r;
	int reason, st;

	c.ch = rdma_create_event_channel();
	if (!c.ch)
		fail("rdma_create_event_channel: %s", strerror(errno));
	/* 1. No authentication announced: refused at connect. */
	c.key_len = 0;
	conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
	reason = connect_qp(&c.ctrl, &req, &rep);
	if (reason != FARSWAP_ST_DENIED)
		fail("host without auth: wanted DENIED at connect, got %d",
		     reason);
	say("host without auth refused at connect");

	/* 2. Announced, but not done: requests and I/O queues denied. */
	c.key_len = key_len;
	if (!c.key_len) {
		memset(c.key, 0x5a, 32);	/* any 32 bytes: not the key */
		c.key_len = 32;
	}
	conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
	if (connect_qp(&c.ctrl, &req, &rep))
		fail("control QP with FEAT_AUTH rejected");
	c.token = le64_to_cpu(rep.session);
	c.version = rep.version;
	c.features = le32_to_cpu(rep.features);
	memcpy(c.donor_id, rep.donor_id, FARSWAP_ID_LEN);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, c.version, ++c.cookie);
	request_either(&m, FARSWAP_MSG_AUTH_REP, FARSWAP_MSG_STATS_REP, &r);
	if (r.hdr.type != FARSWAP_MSG_AUTH_REP ||
	    le16_to_cpu(r.auth_rep.status) != FARSWAP_ST_DENIED)
		fail("STATS_REQ before authentication answered with %s",
		     farswap_msg_type_str(r.hdr.type));
	say("STATS_REQ before authentication: DENIED");
	conn_req(&req, FARSWAP_QT_IO, 1, c.token);
	reason = connect_qp(&id, &req, NULL);
	if (reason != FARSWAP_ST_DENIED)
		fail("I/O queue before authentication: wanted DENIED, got %d",
		     reason);
	say("I/O queue before authentication: DENIED");

	/* 3. A proof made with the wrong key: DENIED, session closed. */
	st = authenticate(true);
	if (st != FARSWAP_ST_DENIED)
		fail("wrong proof: wanted DENIED, got %s",
		     farswap_status_str((unsigned int)st));
	say("wrong proof: DENIED");
	{
		uint64_t end = now_ms() + opt.timeout * 1000ull;

		while (!c.disconnected && now_ms() < end) {
			struct event ev;

			poll_cq(100);
			get_event(&ev, 0);
		}
	}
	if (!c.disconnected)
		fail("the donor kept the session after a wrong proof");
	say("session closed by the donor");
	say("OK");
	return 0;
}

/*
 * Quota: -n N slabs are this host's share (max-slabs-per-host): N come,
 * the next is refused with NO_SPACE (go elsewhere), and once one is
 * freed the next comes again.
 */
/*
 * A newcomer to a donor another host filled (max-slabs-per-host fair):
 * its first SLAB_ALLOC_REQ is NO_SPACE; the donor then asks the host over
 * its share for slabs back and tells the newcomer once they are free, and
 * -n slabs come, each zeroed, written and verified.
 */
static int mode_share(void)
{
	unsigned int i;
	int st;

	open_session();
	st = alloc_slab(0, &c.slabs[0]);
	if (st != FARSWAP_ST_NO_SPACE)
		fail("a slab of a full donor: wanted NO_SPACE, got %s",
		     farswap_status_str((unsigned int)st));
	say("the donor is full: NO_SPACE");
	wait_offer();
	for (i = 0; i < opt.nr_slabs; i++) {
		st = alloc_slab(i, &c.slabs[i]);
		if (st)
			fail("slab %u of %u after the notice refused: %s", i,
			     opt.nr_slabs, farswap_status_str((unsigned int)st));
		check_zero(&c.slabs[i]);
		write_pattern(&c.slabs[i]);
	}
	say("%u slabs after the notice; all %u verify", opt.nr_slabs,
	    verify_all());
	free_held();
	close_session();
	say("OK");
	return 0;
}

static int mode_quota(void)
{
	struct slab extra;
	unsigned int i;
	int st;

	open_session();
	for (i = 0; i < opt.nr_slabs; i++) {
		st = alloc_slab(i, &c.slabs[i]);
		if (st)
			fail("slab %u of a share of %u refused: %s", i,
			     opt.nr_slabs, farswap_status_str((unsigned int)st));
		write_pattern(&c.slabs[i]);
	}
	st = alloc_slab(opt.nr_slabs, &extra);
	if (st != FARSWAP_ST_NO_SPACE)
		fail("slab %u, over the share: wanted NO_SPACE, got %s",
		     opt.nr_slabs, farswap_status_str((unsigned int)st));
	say("slab %u, over the share of %u: NO_SPACE", opt.nr_slabs,
	    opt.nr_slabs);
	verify_all();
	if (free_slab(&c.slabs[0]))
		fail("SLAB_FREE_REQ refused");
	st = alloc_slab(0, &c.slabs[0]);
	if (st)
		fail("a slab after freeing one: %s",
		     farswap_status_str((unsigned int)st));
	check_zero(&c.slabs[0]);
	write_pattern(&c.slabs[0]);
	say("freed one, got one again (zeroed); all %u verify", verify_all());
	free_held();
	close_session();
	say("OK");
	return 0;
}

/*
 * A connect flood: --sessions control connections that never
 * authenticate.  The donor takes every one, but keeps only --accepted
 * (max-unauthenticated) open: each connect over that closes the oldest
 * still unproven, at once, so that a flood cannot hold the places; the
 * ones left are closed at handshake-timeout.  Then an authenticated
 * session comes in as usual.
 */
static void flood_closed(struct rdma_cm_id **ids, struct rdma_cm_id *id,
			 unsigned int *open)
{
	unsigned int i;

	for (i = 0; i < opt.sessions; i++) {
		if (ids[i] != id)
			continue;
		rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
		ids[i] = NULL;
		(*open)--;
	}
}

static int mode_flood(void)
{
	struct rdma_cm_id *ids[64] = { NULL };
	struct farswap_conn_req req;
	struct farswap_conn_rep rep;
	unsigned int i, taken = 0, busy = 0, open, evicted, early = 0;
	uint64_t t0, end;
	struct event ev;
	int reason;

	if (!opt.sessions || opt.sessions > 64 || opt.accepted > opt.sessions)
		fail("bad --sessions or --accepted");
	c.ch = rdma_create_event_channel();
	if (!c.ch)
		fail("rdma_create_event_channel: %s", strerror(errno));
	c.no_recv = true;
	for (i = 0; i < opt.sessions; i++) {
		conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
		reason = connect_qp(&ids[i], &req, &rep);
		if (!reason)
			taken++;
		else if (reason == FARSWAP_ST_BUSY)
			busy++;
		else
			fail("flood connect %u: wanted OK or BUSY, got %d", i,
			     reason);
	}
	c.ctrl = NULL;
	say("flood: %u connects, %u taken, %u refused BUSY", opt.sessions,
	    taken, busy);
	if (taken != opt.sessions)
		fail("the donor took %u of %u connects: a full table must make room, not refuse",
		     taken, opt.sessions);
	open = taken;
	evicted = nr_passed_over;
	for (i = 0; i < evicted; i++)
		flood_closed(ids, passed_over[i], &open);
	t0 = now_ms();
	end = t0 + opt.timeout * 1000ull;
	while (open && now_ms() < end) {
		if (!get_event(&ev, 200) ||
		    ev.type != RDMA_CM_EVENT_DISCONNECTED)
			continue;
		/* Closed before handshake-timeout could: made way. */
		if (now_ms() - t0 < 2000)
			early++;
		flood_closed(ids, ev.id, &open);
	}
	if (open)
		fail("%u unauthenticated sessions still open after %u s", open,
		     opt.timeout);
	say("%u closed as the flood went on (the oldest making way), the other %u within %" PRIu64 " ms",
	    evicted + early, taken - evicted - early, now_ms() - t0);
	if (evicted + early != taken - opt.accepted)
		fail("%u sessions made way for newer connects, wanted %u (max-unauthenticated %u)",
		     evicted + early, taken - opt.accepted, opt.accepted);
	c.no_recv = false;
	open_session();
	stats();
	close_session();
	say("a host with the key came in after the flood");
	say("OK");
	return 0;
}

/*
 * A connect storm: --sessions control connections without the key, one
 * after another as fast as the donor answers, their source addresses
 * taken in turn from --sources (this machine's own; default the route's).
 * Each is taken (OK) or refused (BUSY: connect-rate or
 * max-sessions-per-address, before the donor set anything up); those it
 * takes and closes later (making way for newer ones) are let go as they
 * close.  --ready-file is made once 16 were taken (max-unauthenticated's
 * default: the table full), for a host with the key to come in then.
 */
static int mode_storm(void)
{
	static struct rdma_cm_id *ids[FSC_STORM_MAX];
	struct in_addr srcs[FSC_STORM_SOURCES];
	struct farswap_conn_req req;
	struct farswap_conn_rep rep;
	unsigned int i, j, nr_srcs = 0, taken = 0, busy = 0, open = 0;
	uint64_t t0;
	char *tok, *save = NULL;
	struct event ev;
	int reason;

	if (!opt.sessions || opt.sessions > FSC_STORM_MAX)
		fail("bad --sessions (1 to %u with --mode storm)",
		     FSC_STORM_MAX);
	for (tok = opt.sources ? strtok_r(opt.sources, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nr_srcs == FSC_STORM_SOURCES ||
		    inet_pton(AF_INET, tok, &srcs[nr_srcs]) != 1)
			fail("bad --sources: want up to %u IPv4 addresses",
			     FSC_STORM_SOURCES);
		nr_srcs++;
	}
	c.ch = rdma_create_event_channel();
	if (!c.ch)
		fail("rdma_create_event_channel: %s", strerror(errno));
	c.no_recv = true;
	t0 = now_ms();
	for (i = 0; i < opt.sessions; i++) {
		if (nr_srcs) {
			src_addr.sin_family = AF_INET;
			src_addr.sin_addr = srcs[i % nr_srcs];
			src_set = true;
		}
		conn_req(&req, FARSWAP_QT_CTRL, 0, 0);
		/* It says it will prove a key, as a host with one does. */
		req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
		reason = connect_qp(&ids[i], &req, &rep);
		if (!reason) {
			taken++;
			open++;
		} else if (reason == FARSWAP_ST_BUSY) {
			busy++;
		} else {
			fail("storm connect %u: wanted OK or BUSY, got %d", i,
			     reason);
		}
		c.ctrl = NULL;
		/* Those the donor closed meanwhile: gone for good. */
		for (j = 0; j < nr_passed_over; j++)
			flood_closed(ids, passed_over[j], &open);
		nr_passed_over = 0;
		if (taken == 16)
			touch(opt.ready_file);
	}
	say("storm: %u connects from %u addresses in %" PRIu64 " ms: %u taken, %u refused BUSY; %u of those taken still open",
	    opt.sessions, nr_srcs ? nr_srcs : 1, now_ms() - t0, taken, busy,
	    open);
	/* The rest close at the donor's deadlines (or stay, if it has none). */
	t0 = now_ms();
	while (open && now_ms() - t0 < opt.timeout * 1000ull) {
		if (get_event(&ev, 200) &&
		    ev.type == RDMA_CM_EVENT_DISCONNECTED)
			flood_closed(ids, ev.id, &open);
	}
	say("storm: %u unauthenticated sessions still open after %u s", open,
	    opt.timeout);
	say("OK");
	return 0;
}

static int mode_stats(void)
{
	open_session();
	stats();
	close_session();
	say("OK");
	return 0;
}

static void usage(void)
{
	puts("Usage: fsclient [OPTIONS] DONOR[:PORT]\n"
	     "  -m, --mode MODE     basic (default): alloc, write, read back, free\n"
	     "                      reclaim: basic, then wait for RECLAIM_REQ\n"
	     "                      steal: use --steal FILE's addr/rkey (must fail)\n"
	     "                      malformed: send a bad message (must be dropped)\n"
	     "                      version: connect with an unknown version\n"
	     "                      badio: wrong token / duplicate qid / intruder\n"
	     "                      stats: STATS_REQ\n"
	     "                      hostile: no key / wrong --key-file: refused\n"
	     "                      quota: -n N slabs come, the next is NO_SPACE\n"
	     "                      share: NO_SPACE from a full donor, then -n N\n"
	     "                      slabs once it offers some (fair share)\n"
	     "                      flood: --sessions connects without the key,\n"
	     "                      --accepted of them taken, then closed\n"
	     "                      at connect, then DENIED at every step\n"
	     "                      storm: --sessions connects without the key\n"
	     "                      from --sources, taken or refused BUSY\n"
	     "  -k, --key-file F    authenticate with the secret in F (the donor's\n"
	     "                      key-file); with --mode hostile, a wrong one\n"
	     "  -i, --host-id ID    host identity (default fsclient)\n"
	     "  -q, --io-queues N   I/O queue pairs (default 2, max 8)\n"
	     "  -n, --slabs N       slabs to allocate (default 2)\n"
	     "  -p, --pages N       pattern pages per slab (default 16)\n"
	     "  -t, --timeout S     per-step timeout (default 20)\n"
	     "      --queue-depth N I/O queue depth asked for (default 64)\n"
	     "      --sessions N    --mode flood: connects to open (max 64)\n"
	     "      --accepted N    --mode flood: how many the donor must take\n"
	     "      --sources LIST  --mode storm: source addresses, comma-separated\n"
	     "      --within MS     fail unless authenticated within MS of the connect\n"
	     "      --kx            with --key-file: a session key (X25519), every\n"
	     "                      control message tagged, I/O QPs joined by tag\n"
	     "      --hold S        keep verifying the data for S seconds\n"
	     "      --verify-every S  while holding (default 1; 0: stay idle)\n"
	     "      --min-notices N fail unless N unsolicited STATS_REP came\n"
	     "                      while holding (keepalive probes)\n"
	     "      --keep          keep the session until killed\n"
	     "      --stop-file F   end --hold early once F exists\n"
	     "      --rkey-file F   write slab 0's 'addr rkey length' to F\n"
	     "      --steal F       read 'addr rkey length' from F\n"
	     "      --malformed K   bad_magic short long huge bad_type version\n"
	     "                      length_field reserved donor_type\n"
	     "      --ready-file F  create F once the slabs are written\n"
	     "      --ack-reclaim   answer RECLAIM_REQ with OK (after re-reading)\n"
	     "      --refuse-reclaim answer RECLAIM_REQ with NO_SPACE\n"
	     "      --ack-delay S   wait S seconds before acking\n"
	     "      --reclaims N    reclaim requests to wait for (default 1)\n"
	     "      --reclaimed-file F  create F once the reclaims are answered\n"
	     "      --expect-notice wait for an unsolicited STATS_REP offering\n"
	     "                      slabs, then alloc");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "host-id", required_argument, NULL, 'i' },
		{ "io-queues", required_argument, NULL, 'q' },
		{ "slabs", required_argument, NULL, 'n' },
		{ "pages", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "hold", required_argument, NULL, 1 },
		{ "rkey-file", required_argument, NULL, 2 },
		{ "steal", required_argument, NULL, 3 },
		{ "malformed", required_argument, NULL, 4 },
		{ "ready-file", required_argument, NULL, 5 },
		{ "ack-reclaim", no_argument, NULL, 6 },
		{ "refuse-reclaim", no_argument, NULL, 7 },
		{ "ack-delay", required_argument, NULL, 8 },
		{ "reclaims", required_argument, NULL, 9 },
		{ "keep", no_argument, NULL, 10 },
		{ "reclaimed-file", required_argument, NULL, 11 },
		{ "expect-notice", no_argument, NULL, 12 },
		{ "stop-file", required_argument, NULL, 13 },
		{ "verify-every", required_argument, NULL, 14 },
		{ "min-notices", required_argument, NULL, 15 },
		{ "key-file", required_argument, NULL, 'k' },
		{ "queue-depth", required_argument, NULL, 16 },
		{ "sessions", required_argument, NULL, 17 },
		{ "accepted", required_argument, NULL, 18 },
		{ "sources", required_argument, NULL, 19 },
		{ "within", required_argument, NULL, 20 },
		{ "kx", no_argument, NULL, 21 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "m:i:q:n:p:t:k:h", lo, NULL)) != -1) {
		switch (o) {
		case 'm':
			opt.mode = optarg;
			break;
		case 'i':
			snprintf(opt.host_id, sizeof(opt.host_id), "%s", optarg);
			break;
		case 'q':
			opt.nr_io = (unsigned int)atoi(optarg);
			break;
		case 'n':
			opt.nr_slabs = (unsigned int)atoi(optarg);
			break;
		case 'p':
			opt.pages = (unsigned int)atoi(optarg);
			break;
		case 't':
			opt.timeout = (unsigned int)atoi(optarg);
			break;
		case 1:
			opt.hold = (unsigned int)atoi(optarg);
			break;
		case 2:
			opt.rkey_file = optarg;
			break;
		case 3:
			opt.steal_file = optarg;
			break;
		case 4:
			opt.malformed = optarg;
			break;
		case 5:
			opt.ready_file = optarg;
			break;
		case 6:
			opt.ack_reclaim = true;
			break;
		case 7:
			opt.refuse_reclaim = true;
			break;
		case 8:
			opt.ack_delay = (unsigned int)atoi(optarg);
			break;
		case 9:
			opt.expect_reclaims = (unsigned int)atoi(optarg);
			break;
		case 10:
			opt.keep = true;
			break;
		case 11:
			opt.reclaimed_file = optarg;
			break;
		case 12:
			opt.expect_notice = true;
			break;
		case 13:
			opt.stop_file = optarg;
			break;
		case 14:
			opt.verify_every = (unsigned int)atoi(optarg);
			break;
		case 15:
			opt.min_notices = (unsigned int)atoi(optarg);
			break;
		case 16:
			opt.queue_depth = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 17:
			opt.sessions = (unsigned int)atoi(optarg);
			break;
		case 18:
			opt.accepted = (unsigned int)atoi(optarg);
			break;
		case 19:
			opt.sources = optarg;
			break;
		case 20:
			opt.within = (unsigned int)atoi(optarg);
			break;
		case 21:
			opt.kx = true;
			break;
		case 'k':
			opt.key_file = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage();
		return 2;
	}
	opt.dst = argv[optind];
	if (!opt.nr_io || opt.nr_io > MAX_IO || opt.nr_slabs >= MAX_SLABS ||
	    opt.pages < 2 || opt.pages > 4096)
		fail("bad --io-queues, --slabs or --pages");
	signal(SIGPIPE, SIG_IGN);
	if (opt.key_file)
		load_key();
	if (!strcmp(opt.mode, "hostile"))
		return mode_hostile();
	if (!strcmp(opt.mode, "basic") || !strcmp(opt.mode, "reclaim"))
		return mode_basic();
	if (!strcmp(opt.mode, "steal"))
		return mode_steal();
	if (!strcmp(opt.mode, "malformed"))
		return mode_malformed();
	if (!strcmp(opt.mode, "version"))
		return mode_version();
	if (!strcmp(opt.mode, "badio"))
		return mode_badio();
	if (!strcmp(opt.mode, "stats"))
		return mode_stats();
	if (!strcmp(opt.mode, "quota"))
		return mode_quota();
	if (!strcmp(opt.mode, "share"))
		return mode_share();
	if (!strcmp(opt.mode, "flood"))
		return mode_flood();
	if (!strcmp(opt.mode, "storm"))
		return mode_storm();
	fail("unknown mode %s", opt.mode);
}
