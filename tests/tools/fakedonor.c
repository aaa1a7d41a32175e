// SPDX-License-Identifier: GPL-2.0
/*
 * fakedonor: a donor that misbehaves, for testing how farswap.ko copes.
 *
 *   fakedonor --listen ADDR[:PORT] --mode MODE
 *
 * Modes:
 *   bad-accept   accept every connection with garbage private data
 *   bad-version  reject every connection: "I speak version 9 only"
 *   reject-busy  reject every connection with FARSWAP_ST_BUSY
 *   garbage      accept properly, then answer the first control message
 *                with garbage (wrong magic, lengths, types), one per
 *                request, until the host goes away
 *   silent       accept properly and never answer a control message
 *   wrong-size   answer SLAB_ALLOC_REQ with a slab of the wrong size
 *
 * Serves one host session at a time, forever (until SIGTERM/SIGINT).
 * Prints "fakedonor: ..." lines describing what it did.
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

#define RECVS		8
#define MAX_CONNS	16
#define SLAB		(16u << 20)

enum mode { BAD_ACCEPT, BAD_VERSION, REJECT_BUSY, GARBAGE, SILENT, WRONG_SIZE };

static const char *const mode_names[] = {
	[BAD_ACCEPT] = "bad-accept", [BAD_VERSION] = "bad-version",
	[REJECT_BUSY] = "reject-busy", [GARBAGE] = "garbage",
	[SILENT] = "silent", [WRONG_SIZE] = "wrong-size",
};

static enum mode mode;
static volatile sig_atomic_t stop;

/* One session's resources (the control QP's; I/O QPs share them). */
static struct {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct rdma_cm_id *ctrl;
	struct rdma_cm_id *conns[MAX_CONNS];
	unsigned int nconns;
	union farswap_msg bufs[RECVS + 1];	/* receives, then one send */
	uint8_t slab[4096];			/* what wrong-size hands out */
	struct ibv_mr *slab_mr;
	unsigned int garbage_sent;
} s;

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("fakedonor: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void post_recv(unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&s.bufs[i],
		.length = sizeof(s.bufs[i]),
		.lkey = s.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s.ctrl->qp, &wr, &bad))
		say("post_recv failed: %s", strerror(errno));
}

static void send_bytes(const void *buf, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&s.bufs[RECVS],
		.length = (uint32_t)len,
		.lkey = s.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memcpy(&s.bufs[RECVS], buf, len);
	if (ibv_post_send(s.ctrl->qp, &wr, &bad))
		say("post_send failed: %s", strerror(errno));
}

static void free_session(void)
{
	unsigned int i;

	for (i = 0; i < s.nconns; i++) {
		if (s.conns[i]->qp)
			rdma_destroy_qp(s.conns[i]);
		rdma_destroy_id(s.conns[i]);
	}
	if (s.slab_mr)
		ibv_dereg_mr(s.slab_mr);
	if (s.mr)
		ibv_dereg_mr(s.mr);
	if (s.cq)
		ibv_destroy_cq(s.cq);
	if (s.pd)
		ibv_dealloc_pd(s.pd);
	memset(&s, 0, sizeof(s));
}

static int setup_session(struct rdma_cm_id *id)
{
	s.verbs = id->verbs;
	s.pd = ibv_alloc_pd(id->verbs);
	s.cq = s.pd ? ibv_create_cq(id->verbs, 64, NULL, NULL, 0) : NULL;
	s.mr = s.cq ? ibv_reg_mr(s.pd, s.bufs, sizeof(s.bufs),
				 IBV_ACCESS_LOCAL_WRITE) : NULL;
	s.slab_mr = s.mr ? ibv_reg_mr(s.pd, s.slab, sizeof(s.slab),
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_WRITE) : NULL;
	return s.slab_mr ? 0 : -1;
}

static int create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = s.cq, .recv_cq = s.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = RECVS + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return rdma_create_qp(id, s.pd, &attr);
}

static void accept_with(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct rdma_conn_param p = {
		.private_data = pdata, .private_data_len = len,
		.responder_resources = 16, .initiator_depth = 0,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (rdma_accept(id, &p))
		say("rdma_accept failed: %s", strerror(errno));
}

static void reject_with(struct rdma_cm_id *id, unsigned int reason,
			unsigned int vmin, unsigned int vmax)
{
	struct farswap_conn_rej rej;

	farswap_conn_rej_init(&rej, reason);
	rej.ver_min = (uint8_t)vmin;
	rej.ver_max = (uint8_t)vmax;
	rdma_reject(id, &rej, sizeof(rej));
}

/* Returns true if @id must be destroyed once its event is acked. */
static bool on_connect_request(struct rdma_cm_id *id,
			       const struct rdma_cm_event *ev)
{
	const struct farswap_conn_req *req = ev->param.conn.private_data;
	struct farswap_conn_rep rep;

	if (mode == BAD_VERSION) {
		say("rejecting a connection: version 9 only");
		reject_with(id, FARSWAP_ST_VERSION, 9, 9);
		return true;
	}
	if (mode == REJECT_BUSY) {
		say("rejecting a connection: busy");
		reject_with(id, FARSWAP_ST_BUSY, FARSWAP_VERSION_MIN,
			    FARSWAP_VERSION_MAX);
		return true;
	}
	if (farswap_conn_req_check(req, ev->param.conn.private_data_len) ||
	    s.nconns == MAX_CONNS) {
		reject_with(id, FARSWAP_ST_INVALID, FARSWAP_VERSION_MIN,
			    FARSWAP_VERSION_MAX);
		return true;
	}
	if (req->qtype == FARSWAP_QT_CTRL) {
		if (s.ctrl)
			free_session();
		if (setup_session(id)) {
			say("cannot set up verbs: %s", strerror(errno));
			rdma_reject(id, NULL, 0);
			return true;
		}
		s.ctrl = id;
	} else if (!s.ctrl || id->verbs != s.verbs) {
		reject_with(id, FARSWAP_ST_NO_ENTRY, 1, 1);
		return true;
	}
	if (create_qp(id)) {
		say("cannot create a QP: %s", strerror(errno));
		rdma_reject(id, NULL, 0);
		return true;
	}
	s.conns[s.nconns++] = id;
	if (id == s.ctrl) {
		unsigned int i;

		for (i = 0; i < RECVS; i++)
			post_recv(i);
	}

	if (mode == BAD_ACCEPT) {
		uint8_t junk[FARSWAP_PRIVATE_DATA_MAX];
		size_t i;

		for (i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)(0xa5 ^ i * 37);
		say("accepting qid %u with garbage private data",
		    le16_to_cpu(req->qid));
		accept_with(id, junk, sizeof(junk));
		return false;
	}
	memset(&rep, 0, sizeof(rep));
	rep.magic = cpu_to_le32(FARSWAP_MAGIC);
	rep.version = FARSWAP_VERSION_MAX;
	rep.session = cpu_to_le64(0xfeedfacecafe);
	rep.slab_size = cpu_to_le64(SLAB);
	rep.slabs_total = cpu_to_le32(64);
	rep.slabs_free = cpu_to_le32(64);
	say("accepting qid %u (%s)", le16_to_cpu(req->qid), mode_names[mode]);
	accept_with(id, &rep, sizeof(rep));
	return false;
}

/* Garbage of many shapes, one per request, round robin. */
static void send_garbage(const union farswap_msg *req)
{
	union farswap_msg m;
	size_t len = farswap_msg_size(FARSWAP_MSG_SLAB_ALLOC_REP);

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REP, FARSWAP_VERSION_MAX,
			 le64_to_cpu(req->hdr.cookie));
	switch (s.garbage_sent++ % 5) {
	case 0:
		m.hdr.magic = cpu_to_le32(0xdeadbeef);
		break;
	case 1:
		len = 7;
		break;
	case 2:
		m.hdr.type = 99;
		break;
	case 3:
		m.hdr.version = 42;
		break;
	default:
		m.alloc_rep.reserved0 = cpu_to_le16(0x5a);
		break;
	}
	say("answering %s with garbage #%u", farswap_msg_type_str(req->hdr.type),
	    s.garbage_sent);
	send_bytes(&m, len);
}

static void answer(const union farswap_msg *req)
{
	union farswap_msg m;
	uint64_t cookie = le64_to_cpu(req->hdr.cookie);

	switch (req->hdr.type) {
	case FARSWAP_MSG_STATS_REQ:
		farswap_msg_init(&m, FARSWAP_MSG_STATS_REP, req->hdr.version,
				 cookie);
		m.stats_rep.slab_size = cpu_to_le64(SLAB);
		m.stats_rep.slabs_total = cpu_to_le32(64);
		m.stats_rep.slabs_free = cpu_to_le32(64);
		break;
	case FARSWAP_MSG_SLAB_ALLOC_REQ:
		farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REP,
				 req->hdr.version, cookie);
		m.alloc_rep.slab_id = cpu_to_le32(1);
		m.alloc_rep.addr = cpu_to_le64((uintptr_t)s.slab);
		/* The lie: a quarter of what was asked for. */
		m.alloc_rep.length = cpu_to_le64(SLAB / 4);
		m.alloc_rep.rkey = cpu_to_le32(s.slab_mr->rkey);
		say("granting a slab of %u bytes for %u asked", SLAB / 4, SLAB);
		break;
	default:
		return;
	}
	send_bytes(&m, farswap_msg_size(m.hdr.type));
}

static void poll_cq(void)
{
	struct ibv_wc wc[8];
	int n, i;

	if (!s.cq)
		return;
	n = ibv_poll_cq(s.cq, 8, wc);
	for (i = 0; i < n; i++) {
		union farswap_msg req;

		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV)
			continue;
		memcpy(&req, &s.bufs[wc[i].wr_id], sizeof(req));
		post_recv((unsigned int)wc[i].wr_id);
		if (farswap_msg_check(&req, wc[i].byte_len, FARSWAP_VERSION_MAX)) {
			say("host sent a malformed message");
			continue;
		}
		say("got %s", farswap_msg_type_str(req.hdr.type));
		if (mode == GARBAGE)
			send_garbage(&req);
		else if (mode == WRONG_SIZE)
			answer(&req);
		/* SILENT: nothing */
	}
}

static int parse_listen(const char *arg, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (n >= sizeof(host))
		return -1;
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(colon ? (uint16_t)atoi(colon + 1) :
				      FARSWAP_DEFAULT_PORT);
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct sockaddr_in sin;
	const char *listen = NULL, *mname = NULL;
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "l:m:", opts, NULL)) != -1) {
		if (c == 'l')
			listen = optarg;
		else if (c == 'm')
			mname = optarg;
		else
			return 2;
	}
	for (i = 0; mname && i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(mname, mode_names[i]))
			break;
	if (!listen || !mname || i == sizeof(mode_names) / sizeof(mode_names[0]) ||
	    parse_listen(listen, &sin)) {
		fprintf(stderr, "usage: fakedonor --listen ADDR[:PORT] --mode bad-accept|bad-version|reject-busy|garbage|silent|wrong-size\n");
		return 2;
	}
	mode = (enum mode)i;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, (struct sockaddr *)&sin) ||
	    rdma_listen(listen_id, 8)) {
		perror("fakedonor: listen");
		return 1;
	}
	say("listening on %s, mode %s", listen, mname);

	while (!stop) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;

		poll_cq();
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		if (rdma_get_cm_event(ch, &ev))
			continue;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST: {
			struct rdma_cm_id *id = ev->id;

			if (on_connect_request(id, ev)) {
				rdma_ack_cm_event(ev);
				rdma_destroy_id(id);
				continue;
			}
			break;
		}
		case RDMA_CM_EVENT_DISCONNECTED:
			if (ev->id == s.ctrl) {
				say("host disconnected");
				rdma_ack_cm_event(ev);
				free_session();
				continue;
			}
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	free_session();
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch);
	say("exiting");
	return 0;
}
