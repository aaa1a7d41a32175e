// SPDX-License-Identifier: GPL-2.0
/*
 * Per-host RDMA resources and the verbs side of struct fsd_ops.
 *
 * A session owns one PD, one completion channel and one CQ shared by its
 * control QP and its I/O QPs.  Only the control QP ever has work
 * requests: FARSWAP_CTRL_DEPTH receives, and sends for replies and
 * unsolicited messages.  The I/O QPs are targets of one-sided RDMA READ
 * and WRITE from the host and complete nothing on this side.
 *
 * The control QP is ours, not librdmacm's: a passive side's QP would
 * take its transport retry count from the host's connect request, and
 * hosts ask for 7, which Soft-RoCE takes as "retry forever", so a send to
 * a dead host would never fail.  We move it to RTR and RTS ourselves
 * with the attributes rdma_cm computes, our own ACK timeout and retry
 * count on top (keepalive.h), before rdma_accept().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <fcntl.h>
#include <unistd.h>

#include "verbs.h"
#include "log.h"
#include "server.h"
#include "slabmem.h"

#define SEND_TAG (1ull << 32)
#define CQ_SIZE (FSD_SEND_SLOTS + FARSWAP_CTRL_DEPTH + 16)
#define MR_ACCESS \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

void fsd_peer_name(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char addr[INET6_ADDRSTRLEN] = "?";

	if (sa && sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		snprintf(buf, len, "%s:%u", addr, ntohs(in->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
		snprintf(buf, len, "[%s]:%u", addr, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

/* The peer's address for allowed-hosts; NULL when it is not IP (AF_IB). */
const struct fsd_addr *fsd_peer_addr(struct rdma_cm_id *id,
				     struct fsd_addr *addr)
{
	if (fsd_addr_from_sockaddr(rdma_get_peer_addr(id), addr))
		return NULL;
	return addr;
}

void fsd_host_reject(struct rdma_cm_id *id, unsigned int reason)
{
	struct farswap_conn_rej rej;

	farswap_conn_rej_init(&rej, reason);
	if (rdma_reject(id, &rej, sizeof(rej)))
		pr_debug("rdma_reject: %s", strerror(errno));
}

static uint8_t *recv_buf(struct fsd_rdma *r, unsigned int i)
{
	return r->bufs + (size_t)i * FSD_RECV_BUF;
}

static uint8_t *send_buf(struct fsd_rdma *r, unsigned int i)
{
	return r->bufs + (size_t)FARSWAP_CTRL_DEPTH * FSD_RECV_BUF +
	       (size_t)i * FARSWAP_MSG_MAX;
}

static int post_recv(struct fsd_rdma *r, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(r, i),
		.length = FSD_RECV_BUF,
		.lkey = r->buf_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(r->ctrl->qp, &wr, &bad);
}

static struct fsd_conn *conn_new(struct fsd_rdma *r, struct rdma_cm_id *id,
				 struct fsd_session *s, unsigned int qtype,
				 unsigned int qid)
{
	struct fsd_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = id;
	c->s = s;
	c->qtype = qtype;
	c->qid = qid;
	id->context = c;
	c->next = r->conns;
	r->conns = c;
	return c;
}

/* An RC QP on the shared CQ, one SGE each way: every QP farswapd makes. */
static struct ibv_qp_init_attr rc_qp_attr(struct fsd_rdma *r,
					  uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return attr;
}

static int create_qp(struct fsd_rdma *r, struct fsd_conn *c,
		     uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr attr = rc_qp_attr(r, send_wr, recv_wr);

	if (rdma_create_qp(c->id, r->pd, &attr))
		return -errno;
	c->qp = c->id->qp;
	c->has_qp = true;
	return 0;
}

/* A QP of our own for @c, in INIT as rdma_cm would have left it. */
static int create_own_qp(struct fsd_rdma *r, struct fsd_conn *c,
			 uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr init = rc_qp_attr(r, send_wr, recv_wr);
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	int mask, ret;

	c->qp = ibv_create_qp(r->pd, &init);
	if (!c->qp)
		return errno ? -errno : -ENOMEM;
	c->has_qp = true;
	c->own_qp = true;
	if (rdma_init_qp_attr(c->id, &attr, &mask))
		return errno ? -errno : -EINVAL;
	ret = ibv_modify_qp(c->qp, &attr, mask);
	return -ret;
}

static void destroy_qp(struct fsd_conn *c)
{
	if (!c->has_qp)
		return;
	if (c->own_qp)
		ibv_destroy_qp(c->qp);
	else
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	c->has_qp = false;
	c->own_qp = false;
}

/*
 * Our own QP to RTR, then RTS with the control QP's transport settings:
 * what rdma_accept() does for a QP it knows, but with a retry count that
 * gives up on a dead host in bounded time.
 */
static int own_qp_ready(struct fsd_conn *c, uint8_t responder_resources,
			uint8_t initiator_depth)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(c->id, &attr, &mask))
		return errno ? -errno : -EINVAL;
	attr.max_dest_rd_atomic = responder_resources;
	ret = ibv_modify_qp(c->qp, &attr, mask);
	if (ret)
		return -ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(c->id, &attr, &mask))
		return errno ? -errno : -EINVAL;
	attr.max_rd_atomic = initiator_depth;
	attr.timeout = FSD_CTRL_ACK_TIMEOUT;
	attr.retry_cnt = FSD_CTRL_RETRY_CNT;
	attr.rnr_retry = FSD_CTRL_RNR_RETRY;
	mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	ret = ibv_modify_qp(c->qp, &attr, mask);
	return -ret;
}

/* rdma_accept with READ depth as deep as the device allows. */
static int accept_conn(struct fsd_conn *c, const struct fsd_conn_params *cp,
		       const void *pdata, uint8_t plen)
{
	struct ibv_device_attr da;
	struct rdma_conn_param param = {
		.private_data = pdata,
		.private_data_len = plen,
		.rnr_retry_count = 7,
		.retry_count = 7,
	};

	if (ibv_query_device(c->id->verbs, &da))
		return -errno;
	/* The host's RDMA READs are served from our responder resources. */
	param.responder_resources =
		(uint8_t)(da.max_qp_rd_atom > 255 ? 255 : da.max_qp_rd_atom);
	param.initiator_depth = cp->responder_resources;
	if (param.initiator_depth > da.max_qp_init_rd_atom)
		param.initiator_depth = (uint8_t)da.max_qp_init_rd_atom;
	pr_debug("accept qid %u: responder_resources %u (host asked %u), initiator_depth %u",
		 c->qid, param.responder_resources, cp->initiator_depth,
		 param.initiator_depth);
	if (c->own_qp) {
		int ret = own_qp_ready(c, param.responder_resources,
				       param.initiator_depth);

		if (ret)
			return ret;
		param.qp_num = c->qp->qp_num;
	}
	if (rdma_accept(c->id, &param))
		return -errno;
	return 0;
}

static void free_conn_list(struct fsd_rdma *r)
{
	struct fsd_conn *c, *n;

	for (c = r->conns; c; c = n) {
		n = c->next;
		destroy_qp(c);
		rdma_destroy_id(c->id);
		free(c);
	}
	r->conns = NULL;
	r->ctrl = NULL;
}

/* Everything but the slabs' MRs, in reverse order of creation. */
static void rdma_free(struct fsd_server *srv, struct fsd_session *s)
{
	struct fsd_rdma *r = s->rdma;
	struct fsd_conn *c;

	if (!r)
		return;
	if (r->in_epoll)
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, r->ch->fd, NULL);
	for (c = r->conns; c; c = c->next)
		destroy_qp(c);
	/* Slab MRs live in the PD: deregister them before it goes. */
	fsd_session_drop_slabs(&srv->donor, s);
	if (r->buf_mr)
		ibv_dereg_mr(r->buf_mr);
	free(r->bufs);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->ch)
		ibv_destroy_comp_channel(r->ch);
	if (r->pd && ibv_dealloc_pd(r->pd))
		pr_err("host %u: ibv_dealloc_pd: %s (resources leaked)", s->nr,
		       strerror(errno));
	free_conn_list(r);
	free(r);
	s->rdma = NULL;
}

/*
 * A control QP connect that fsd_conn_decide() accepted: create the
 * session's PD, CQ, QP and buffers, post the receives and accept with the
 * session token.  On failure nothing is left behind but @id, which the
 * caller rejects and destroys.
 */
int fsd_host_accept_ctrl(struct fsd_server *srv, struct rdma_cm_id *id,
			 struct fsd_session *s,
			 const struct fsd_conn_params *cp)
{
	struct farswap_conn_rep rep;
	struct epoll_event ev;
	struct fsd_rdma *r;
	size_t len;
	unsigned int i;
	int ret = -ENOMEM, flags;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->rdma = r;
	r->verbs = id->verbs;
	r->pd = ibv_alloc_pd(id->verbs);
	if (!r->pd)
		goto out_errno;
	r->ch = ibv_create_comp_channel(id->verbs);
	if (!r->ch)
		goto out_errno;
	flags = fcntl(r->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(r->ch->fd, F_SETFL, flags | O_NONBLOCK))
		goto out_errno;
	r->cq = ibv_create_cq(id->verbs, CQ_SIZE, s, r->ch, 0);
	if (!r->cq)
		goto out_errno;
	if (ibv_req_notify_cq(r->cq, 0))
		goto out_errno;
	len = (size_t)FARSWAP_CTRL_DEPTH * FSD_RECV_BUF +
	      (size_t)FSD_SEND_SLOTS * FARSWAP_MSG_MAX;
	r->bufs = calloc(1, len);
	if (!r->bufs)
		goto out_free;
	r->buf_mr = ibv_reg_mr(r->pd, r->bufs, len, IBV_ACCESS_LOCAL_WRITE);
	if (!r->buf_mr)
		goto out_errno;
	r->ctrl = conn_new(r, id, s, FARSWAP_QT_CTRL, 0);
	if (!r->ctrl)
		goto out_free;
	ret = create_own_qp(r, r->ctrl, FSD_SEND_SLOTS, FARSWAP_CTRL_DEPTH);
	if (ret)
		goto out_free;
	for (i = 0; i < FARSWAP_CTRL_DEPTH; i++) {
		ret = post_recv(r, i);
		if (ret) {
			ret = -ret;
			goto out_free;
		}
	}
	r->watch.type = FSD_W_CQ;
	r->watch.ptr = s;
	ev.events = EPOLLIN;
	ev.data.ptr = &r->watch;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, r->ch->fd, &ev))
		goto out_errno;
	r->in_epoll = true;
	fsd_conn_rep_build(&srv->donor, s, &rep);
	ret = accept_conn(r->ctrl, cp, &rep, sizeof(rep));
	if (ret)
		goto out_free;
	return 0;

out_errno:
	ret = errno ? -errno : -ENOMEM;
out_free:
	/* The caller still owns @id: take it off the list before freeing. */
	if (r->ctrl) {
		destroy_qp(r->ctrl);
		r->conns = r->ctrl->next;
		free(r->ctrl);
		r->ctrl = NULL;
		id->context = NULL;
	}
	rdma_free(srv, s);
	return ret;
}

/* An I/O QP joins @s: same PD and CQ; nothing is ever posted on it. */
int fsd_host_accept_io(struct fsd_server *srv, struct rdma_cm_id *id,
		       struct fsd_session *s, unsigned int qid,
		       const struct fsd_conn_params *cp)
{
	struct fsd_rdma *r = s->rdma;
	struct ibv_device_attr da;
	struct fsd_conn *c;
	uint32_t depth;
	int ret;

	(void)srv;
	if (!r || id->verbs != r->verbs)
		return -EXDEV;	/* another device than the control QP's */
	if (ibv_query_device(id->verbs, &da))
		return -errno;
	depth = s->queue_depth;
	if (depth > (uint32_t)da.max_qp_wr)
		depth = (uint32_t)da.max_qp_wr;
	c = conn_new(r, id, s, FARSWAP_QT_IO, qid);
	if (!c)
		return -ENOMEM;
	ret = create_qp(r, c, depth, depth);
	if (!ret)
		ret = fsd_session_attach_io(s, qid, fsd_now_ms());
	if (!ret)
		ret = accept_conn(c, cp, NULL, 0);
	if (ret) {
		destroy_qp(c);
		r->conns = c->next;
		free(c);
		id->context = NULL;
		fsd_session_detach_io(s, qid);
	}
	return ret;
}

/* Free every verbs resource of a closed session, then the session. */
void fsd_host_destroy(struct fsd_server *srv, struct fsd_session *s)
{
	rdma_free(srv, s);
	fsd_session_free(&srv->donor, s);
}

static void handle_wc(struct fsd_server *srv, struct fsd_session *s,
		      const struct ibv_wc *wc)
{
	struct fsd_rdma *r = s->rdma;
	uint8_t msg[FSD_RECV_BUF];
	unsigned int i;
	uint32_t len;
	bool notice, revoke;

	if (wc->wr_id & SEND_TAG) {
		i = (unsigned int)(wc->wr_id & 63);
		notice = r->send_notice & (1ull << i);
		revoke = r->send_revoke & (1ull << i);
		r->send_busy &= ~(1ull << i);
		r->send_notice &= ~(1ull << i);
		r->send_revoke &= ~(1ull << i);
		if (wc->status != IBV_WC_SUCCESS)
			fsd_send_failed(&srv->donor, s, notice,
					ibv_wc_status_str(wc->status),
					fsd_now_ms());
		else if (notice)
			fsd_notice_sent(&srv->donor, s, fsd_now_ms());
		else if (revoke)
			fsd_revoke_sent(&srv->donor, s);
		if (!r->send_busy)
			fsd_sends_done(&srv->donor, s);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		/* rxe says LOC_QP_OP_ERR where others say LOC_LEN_ERR. */
		if (wc->status == IBV_WC_LOC_LEN_ERR ||
		    wc->status == IBV_WC_LOC_QP_OP_ERR)
			fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
					  "bad message: too long for a receive buffer of %u bytes (%s)",
					  FSD_RECV_BUF,
					  ibv_wc_status_str(wc->status));
		else
			fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
					  "receive completion error: %s",
					  ibv_wc_status_str(wc->status));
		return;
	}
	if (s->closing)
		return;
	if (wc->opcode != IBV_WC_RECV) {
		fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
				  "unexpected completion opcode %d",
				  wc->opcode);
		return;
	}
	i = (unsigned int)wc->wr_id;
	if (i >= FARSWAP_CTRL_DEPTH)
		return;
	len = wc->byte_len > FSD_RECV_BUF ? FSD_RECV_BUF : wc->byte_len;
	memcpy(msg, recv_buf(r, i), len);
	/* Repost first: the reply may prompt the host's next request. */
	if (post_recv(r, i)) {
		fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
				  "cannot repost a receive");
		return;
	}
	fsd_handle_msg(&srv->donor, s, msg, wc->byte_len, fsd_now_ms());
}

/* The session's completion channel is readable. */
void fsd_host_cq_ready(struct fsd_server *srv, struct fsd_session *s)
{
	struct fsd_rdma *r = s->rdma;
	struct ibv_cq *cq;
	struct ibv_wc wc[16];
	void *ctx;
	int n, i;

	while (!ibv_get_cq_event(r->ch, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(cq, 0))
			fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
					  "cannot arm the completion queue");
	}
	do {
		n = ibv_poll_cq(r->cq, 16, wc);
		for (i = 0; i < n; i++)
			handle_wc(srv, s, &wc[i]);
	} while (n > 0);
	if (n < 0)
		fsd_session_close(&srv->donor, s, FSD_LOG_WARN,
				  "cannot poll the completion queue");
}

/* struct fsd_ops, the real thing. */

/*
 * A grant's slow part, on the worker thread: zero what background
 * zeroing has not reached, then pin and register the slab (for 1 GiB,
 * tens to hundreds of ms).  Its inputs are copied in and its result
 * copied out: the job shares nothing with the loop while it runs.
 */
struct grant_job {
	struct fsd_job job;
	struct fsd_slab *slab;	/* the loop's, not touched by run_grant */
	struct ibv_pd *pd;
	uint8_t *mem;
	uint64_t size;
	uint64_t zero_from;	/* == size: clean already */
	struct ibv_mr *mr;
};

static int run_grant(struct fsd_job *job)
{
	struct grant_job *g = (struct grant_job *)job;

	if (g->zero_from < g->size)
		memset(g->mem + g->zero_from, 0, g->size - g->zero_from);
	g->mr = ibv_reg_mr_iova(g->pd, g->mem, g->size, FSD_SLAB_IOVA,
				MR_ACCESS);
	if (!g->mr)
		return errno ? -errno : -ENOMEM;
	return 0;
}

static int verbs_slab_grant(struct fsd_donor *d, struct fsd_session *s,
			    struct fsd_slab *slab)
{
	struct fsd_server *srv = d->priv;
	struct fsd_rdma *r = s->rdma;
	struct grant_job *g;
	int ret;

	if (!r || !slab->mem)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->job.run = run_grant;
	g->slab = slab;
	g->pd = r->pd;
	g->mem = slab->mem;
	g->size = d->pool.slab_size;
	g->zero_from = slab->dirty ? slab->clean_upto : g->size;
	slab->grant_ctx = g;
	if (srv->worker.running) {
		fsd_worker_submit(&srv->worker, &g->job);
		return -EINPROGRESS;
	}
	/* No worker (it could not start): do it here, stalling the loop. */
	g->job.ret = run_grant(&g->job);
	ret = g->job.ret;
	if (!ret) {
		slab->mr = g->mr;
		slab->rkey = g->mr->rkey;
		slab->dirty = false;
		slab->clean_upto = 0;
	}
	slab->grant_ctx = NULL;
	free(g);
	return ret;
}

/* A grant job is back from the worker: hand its result to the logic. */
void fsd_host_grant_reaped(struct fsd_server *srv, struct fsd_job *job)
{
	struct grant_job *g = (struct grant_job *)job;
	struct fsd_slab *slab = g->slab;
	int ret = job->ret;

	slab->grant_ctx = NULL;
	if (!ret) {
		slab->mr = g->mr;
		slab->rkey = g->mr->rkey;
		slab->dirty = false;
		slab->clean_upto = 0;
	}
	free(g);
	fsd_grant_done(&srv->donor, slab, ret);
}

static void verbs_slab_grant_cancel(struct fsd_donor *d, struct fsd_slab *slab)
{
	struct fsd_server *srv = d->priv;
	struct grant_job *g = slab->grant_ctx;

	if (g)
		fsd_worker_cancel(&srv->worker, &g->job);
}

static void verbs_slab_zero(struct fsd_donor *d, struct fsd_slab *slab,
			    uint64_t off, uint64_t len)
{
	(void)d;
	memset((uint8_t *)slab->mem + off, 0, len);
}

/* On failure the MR stays: its rkey may still reach the memory. */
static int verbs_slab_revoke(struct fsd_donor *d, struct fsd_slab *slab)
{
	int ret;

	(void)d;
	if (slab->mr) {
		ret = ibv_dereg_mr(slab->mr);
		if (ret)
			return ret > 0 ? -ret : (errno ? -errno : -EIO);
	}
	slab->mr = NULL;
	slab->rkey = 0;
	return 0;
}

/*
 * Unmapped and punched out of the pool's memfd: the memory is the
 * kernel's again, and the slab reads as zeros when it is mapped again.
 */
static int verbs_slab_release(struct fsd_donor *d, struct fsd_slab *slab)
{
	struct fsd_server *srv = d->priv;
	int ret;

	fsd_slabmem_unmap(slab->mem, d->pool.slab_size);
	slab->mem = NULL;
	slab->mem_kind = FSD_MEM_NONE;
	ret = fsd_slabmem_punch(&srv->poolfd.mem, slab->id);
	if (ret)
		pr_warn("slab %u: cannot punch its memory out of the pool: %s",
			slab->id, strerror(-ret));
	return 0;
}

/* Mapped from the pool's memfd: fresh zeros, or a kept slab's pages. */
static int verbs_slab_populate(struct fsd_donor *d, struct fsd_slab *slab)
{
	struct fsd_server *srv = d->priv;
	int ret = fsd_slabmem_map(&srv->poolfd.mem, slab->id, &slab->mem);

	if (!ret)
		slab->mem_kind = srv->poolfd.mem.kind;
	return ret;
}

static int verbs_send(struct fsd_donor *d, struct fsd_session *s,
		      const union farswap_msg *msg, size_t len,
		      unsigned int flags)
{
	struct fsd_rdma *r = s->rdma;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	unsigned int i;
	int ret;

	(void)d;
	if (!r || !r->ctrl || !r->ctrl->has_qp)
		return -ENOTCONN;
	if (!~r->send_busy)
		return -ENOBUFS;	/* the host ignores flow control */
	i = (unsigned int)__builtin_ctzll(~r->send_busy);
	memcpy(send_buf(r, i), msg, len);
	sge.addr = (uintptr_t)send_buf(r, i);
	sge.length = (uint32_t)len;
	sge.lkey = r->buf_mr->lkey;
	wr.wr_id = SEND_TAG | i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(r->ctrl->qp, &wr, &bad);
	if (ret)
		return -ret;
	r->send_busy |= 1ull << i;
	if (flags & FSD_SEND_NOTICE)
		r->send_notice |= 1ull << i;
	if (flags & FSD_SEND_REVOKE)
		r->send_revoke |= 1ull << i;
	return 0;
}

static void verbs_close(struct fsd_donor *d, struct fsd_session *s)
{
	struct fsd_rdma *r = s->rdma;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct fsd_conn *c;

	(void)d;
	if (!r)
		return;
	for (c = r->conns; c; c = c->next) {
		/* librdmacm moves its own QPs to ERR; ours we do. */
		if (c->own_qp)
			ibv_modify_qp(c->qp, &err, IBV_QP_STATE);
		rdma_disconnect(c->id);
	}
}

static int verbs_random(struct fsd_donor *d, void *buf, size_t len)
{
	(void)d;
	if (getrandom(buf, len, 0) != (ssize_t)len)
		return -errno;
	return 0;
}

const struct fsd_ops fsd_verbs_ops = {
	.slab_grant = verbs_slab_grant,
	.slab_grant_cancel = verbs_slab_grant_cancel,
	.slab_zero = verbs_slab_zero,
	.slab_revoke = verbs_slab_revoke,
	.slab_release = verbs_slab_release,
	.slab_populate = verbs_slab_populate,
	.send = verbs_send,
	.close = verbs_close,
	.random = verbs_random,
};
