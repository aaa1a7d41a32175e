// SPDX-License-Identifier: GPL-2.0
/*
 * Donor sessions: rdma_cm connection of the control and I/O queue pairs,
 * the authentication handshake, keepalive, failure handling and
 * reconnection.  The messages on the control queue pair are ctrl.c's.
 *
 * A session is all or nothing: losing any queue pair fails the donor,
 * which tears every queue down (draining them, so every posted work
 * request completes), lets the loss work unbind the slabs it held, and
 * reconnects after a delay.  The donor frees a session's slabs when it
 * ends, so a new session never holds old data.
 */
#include <crypto/hash.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "compat.h"
#include "farswap.h"
#include "log.h"
#include "trace.h"

#define FARSWAP_RECONNECT_MAX_MS	30000
/* Outstanding RDMA READs per I/O queue; rxe allows 128. */
#define FARSWAP_MAX_RD_ATOM		16

static void farswap_donor_teardown(struct farswap_donor *donor);

/*
 * Returns whether the transition was legal and made.  A live session that
 * fails here (its RDMA device goes) leaves its slabs waiting for the donor
 * from that moment (resume.c), as farswap_donor_error() does: the donor
 * keeps them (FARSWAP_FEAT_KEEP) and the device may come back.
 */
static bool farswap_donor_change_state(struct farswap_donor *donor,
				       enum farswap_donor_state to)
{
	enum farswap_donor_state from;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&donor->state_lock, flags);
	from = donor->state;
	ok = farswap_donor_state_allowed(from, to);
	if (ok && from == FARSWAP_DONOR_LIVE && to == FARSWAP_DONOR_FAILED)
		farswap_donor_suspend_locked(donor);
	if (ok) {
		/* release: pairs with the acquire in farswap_donor_state() */
		smp_store_release(&donor->state, to);
		/* under the lock: the events come in the order of the changes */
		trace_farswap_donor_state(donor, from, to);
	}
	spin_unlock_irqrestore(&donor->state_lock, flags);
	return ok;
}

/*
 * Is @gen the donor's current, live session?  Callers that go on to post
 * work requests hold rcu_read_lock() across the check and the post.
 */
bool farswap_donor_live(struct farswap_donor *donor, u32 gen)
{
	return farswap_donor_state(donor) == FARSWAP_DONOR_LIVE &&
	       READ_ONCE(donor->gen) == gen;
}

/*
 * last_error is written by the connecting thread and rdma_cm's handler,
 * and read by sysfs at any time: each copy in or out under the state
 * lock, so a reader never sees half of one reason and half of another.
 */
void farswap_donor_set_error(struct farswap_donor *donor,
			     const char *fmt, ...)
{
	char msg[FARSWAP_ERR_LEN];
	unsigned long flags;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	spin_lock_irqsave(&donor->state_lock, flags);
	memcpy(donor->last_error, msg, sizeof(msg));
	spin_unlock_irqrestore(&donor->state_lock, flags);
}

/* Why the donor's last connect or session failed ("" if none did). */
void farswap_donor_last_error(struct farswap_donor *donor, char *buf,
			      size_t len)
{
	unsigned long flags;

	spin_lock_irqsave(&donor->state_lock, flags);
	strscpy(buf, donor->last_error, len);
	spin_unlock_irqrestore(&donor->state_lock, flags);
}

/*
 * The same copy, as words for a message: "error" when the donor failed
 * without saying why.
 */
const char *farswap_donor_error_text(struct farswap_donor *donor, char *buf,
				     size_t len)
{
	farswap_donor_last_error(donor, buf, len);
	return buf[0] ? buf : "error";
}

/**
 * farswap_donor_error - a donor failed: tear it down and reconnect
 * @donor: the donor
 * @why: what was seen, for the log
 *
 * Callable from any context, any number of times: only the first call of
 * a session logs and schedules the teardown.  While the session is still
 * being connected there is nothing to tear down yet: the attempt is
 * marked failed, and the connect path gives it up instead of going live.
 */
void farswap_donor_error(struct farswap_donor *donor, const char *why)
{
	enum farswap_donor_state from;
	enum farswap_error_action act;
	bool waits = false;
	unsigned long flags;

	spin_lock_irqsave(&donor->state_lock, flags);
	from = donor->state;
	act = farswap_donor_error_action(from, donor->attempt_failed);
	if (act == FARSWAP_ERR_FAIL_SESSION) {
		/*
		 * Its slabs wait for it (resume.c) from the moment the session
		 * is dead to anyone who looks.
		 */
		waits = farswap_donor_suspend_locked(donor);
		/* release: pairs with the acquire in farswap_donor_state() */
		smp_store_release(&donor->state, FARSWAP_DONOR_FAILED);
		trace_farswap_donor_state(donor, from, FARSWAP_DONOR_FAILED);
		snprintf(donor->last_error, sizeof(donor->last_error),
			 "%s failed: %s", donor->name, why);
	} else if (act == FARSWAP_ERR_FAIL_ATTEMPT) {
		donor->attempt_failed = true;
	}
	spin_unlock_irqrestore(&donor->state_lock, flags);

	switch (act) {
	case FARSWAP_ERR_FAIL_SESSION:
		farswap_donor_pr_err(donor, " failed: %s; failing its I/O and reconnecting\n",
				     why);
		if (waits)
			farswap_donor_pr_info(donor, " may come back with its slabs (it keeps them across a restart): chunks whose last copy is there wait up to %u ms for it\n",
					      donor->dev->params.resume_grace_ms);
		queue_work(donor->dev->reset_wq, &donor->err_work);
		break;
	case FARSWAP_ERR_FAIL_ATTEMPT:
		farswap_donor_pr_err(donor, " failed while connecting: %s\n",
				     why);
		/* A handshake step waiting for a reply stops waiting. */
		farswap_ctrl_fail_waiters(donor);
		break;
	case FARSWAP_ERR_IGNORE:
		break;
	}
}

/* Did an error hit the connect attempt under way? */
bool farswap_donor_attempt_failed(struct farswap_donor *donor)
{
	unsigned long flags;
	bool failed;

	spin_lock_irqsave(&donor->state_lock, flags);
	failed = donor->attempt_failed;
	spin_unlock_irqrestore(&donor->state_lock, flags);
	return failed;
}

/*
 * Queue pairs
 */

static void farswap_qp_event(struct ib_event *ev, void *ctx)
{
	struct farswap_queue *q = ctx;

	if (ev->event == IB_EVENT_QP_FATAL || ev->event == IB_EVENT_QP_REQ_ERR ||
	    ev->event == IB_EVENT_QP_ACCESS_ERR)
		farswap_donor_error(q->donor, ib_event_msg(ev->event));
}

/*
 * Work requests one blk-mq request may post: one per max_sge segments,
 * with the smaller of the READ and WRITE limits.
 */
static unsigned int farswap_cmd_wrs(const struct farswap_donor *donor)
{
	return DIV_ROUND_UP(FARSWAP_MAX_SEGS,
			    min(donor->max_sge, donor->max_read_sge));
}

static int farswap_ctrl_map_bufs(struct farswap_donor *donor)
{
	struct ib_device *ibdev = donor->ibdev;
	int i;

	for (i = 0; i < FARSWAP_CTRL_DEPTH; i++) {
		struct farswap_ctrl_recv *recv = &donor->recv[i];

		recv->dma = ib_dma_map_single(ibdev, recv->buf, FARSWAP_MSG_MAX,
					      DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, recv->dma))
			goto out_unmap;
	}
	for (i = 0; i < FARSWAP_CTRL_CALLS; i++) {
		struct farswap_ctrl_inflight *call = &donor->call[i];

		call->dma = ib_dma_map_single(ibdev, call->buf, FARSWAP_MSG_MAX,
					      DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, call->dma))
			goto out_unmap_calls;
	}
	donor->bufs_mapped = true;
	return 0;

out_unmap_calls:
	while (--i >= 0)
		ib_dma_unmap_single(ibdev, donor->call[i].dma, FARSWAP_MSG_MAX,
				    DMA_TO_DEVICE);
	i = FARSWAP_CTRL_DEPTH;
out_unmap:
	while (--i >= 0)
		ib_dma_unmap_single(ibdev, donor->recv[i].dma, FARSWAP_MSG_MAX,
				    DMA_FROM_DEVICE);
	return -ENOMEM;
}

static void farswap_ctrl_unmap_bufs(struct farswap_donor *donor)
{
	int i;

	if (!donor->bufs_mapped)
		return;
	for (i = 0; i < FARSWAP_CTRL_DEPTH; i++)
		ib_dma_unmap_single(donor->ibdev, donor->recv[i].dma,
				    FARSWAP_MSG_MAX, DMA_FROM_DEVICE);
	for (i = 0; i < FARSWAP_CTRL_CALLS; i++)
		ib_dma_unmap_single(donor->ibdev, donor->call[i].dma,
				    FARSWAP_MSG_MAX, DMA_TO_DEVICE);
	donor->bufs_mapped = false;
}

/*
 * The first queue of a session picks the device and sets up what all share.
 *
 * iWARP is refused: its RDMA READ sink must be a registered memory region
 * (rdma_protocol_iwarp), and the kernel's rdma_rw API, which would handle
 * it, allocates per I/O context, which a swap device's queue_rq cannot.
 */
static int farswap_session_init_device(struct farswap_donor *donor,
				       struct ib_device *ibdev, u32 port)
{
	struct farswap_dev *dev = donor->dev;
	u32 sq;
	int ret;

	donor->ibdev = ibdev;
	if (rdma_protocol_iwarp(ibdev, port)) {
		farswap_donor_set_error(donor, "RDMA device %s is iWARP, which farswap does not support (RDMA READ needs a registered sink)",
					dev_name(&ibdev->dev));
		return -EOPNOTSUPP;
	}
	donor->max_sge = min_t(u32, farswap_ib_limit(ibdev, max_send_sge),
			       FARSWAP_MAX_SEGS);
	/* An RDMA READ's SGEs are bounded by max_sge_rd, not max_send_sge. */
	donor->max_read_sge = min_t(u32, donor->max_sge,
				    farswap_ib_limit(ibdev, max_sge_rd));
	if (!donor->max_read_sge) {
		farswap_donor_set_error(donor, "RDMA device %s has no %s SGEs",
					dev_name(&ibdev->dev),
					donor->max_sge ? "RDMA READ" : "send");
		return -EOPNOTSUPP;
	}
	sq = dev->params.queue_depth * farswap_cmd_wrs(donor) +
	     FARSWAP_SQ_RESERVE;
	if (sq + 1 > farswap_ib_limit(ibdev, max_qp_wr)) {
		farswap_donor_set_error(donor, "RDMA device %s allows %u work requests per queue pair, %u needed: lower queue_depth",
					dev_name(&ibdev->dev),
					farswap_ib_limit(ibdev, max_qp_wr), sq + 1);
		return -EINVAL;
	}

	donor->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(donor->pd)) {
		ret = PTR_ERR(donor->pd);
		donor->pd = NULL;
		farswap_donor_set_error(donor, "cannot allocate a protection domain on %s (%d)",
					dev_name(&ibdev->dev), ret);
		return ret;
	}
	ret = farswap_ctrl_map_bufs(donor);
	if (ret) {
		ib_dealloc_pd(donor->pd);
		donor->pd = NULL;
		farswap_donor_set_error(donor, "cannot map control buffers");
	}
	return ret;
}

static int farswap_queue_create_qp(struct farswap_queue *q)
{
	struct farswap_donor *donor = q->donor;
	struct ib_device *ibdev = q->cm_id->device;
	struct ib_qp_init_attr attr = {};
	u32 rq;
	int ret, i;

	if (!q->qid) {
		ret = farswap_session_init_device(donor, ibdev,
						  q->cm_id->port_num);
		if (ret)
			return ret;
		q->sq_depth = FARSWAP_CTRL_CALLS;
		rq = FARSWAP_CTRL_DEPTH;
	} else {
		if (ibdev != donor->ibdev) {
			farswap_donor_set_error(donor, "I/O queue %u resolved to RDMA device %s, the control queue to %s",
						q->qid, dev_name(&ibdev->dev),
						dev_name(&donor->ibdev->dev));
			return -EXDEV;
		}
		q->sq_depth = donor->dev->params.queue_depth *
			      farswap_cmd_wrs(donor) + FARSWAP_SQ_RESERVE;
		rq = 0;
	}

	/* One more on each side for the drain work request. */
	q->cq = ib_alloc_cq(ibdev, q, q->sq_depth + rq + 2,
			    q->qid % ibdev->num_comp_vectors, IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		farswap_donor_set_error(donor, "cannot allocate a completion queue (%d)",
					ret);
		return ret;
	}

	attr.event_handler = farswap_qp_event;
	attr.qp_context = q;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = q->sq_depth + 1;
	attr.cap.max_recv_wr = rq + 1;
	attr.cap.max_send_sge = q->qid ? donor->max_sge : 1;
	attr.cap.max_recv_sge = 1;
	ret = rdma_create_qp(q->cm_id, donor->pd, &attr);
	if (ret) {
		farswap_donor_set_error(donor, "cannot create a queue pair (%d)",
					ret);
		return ret;
	}
	q->qp = q->cm_id->qp;

	if (!q->qid) {
		/* Receives go up before connecting: the donor may send first. */
		for (i = 0; i < FARSWAP_CTRL_DEPTH; i++) {
			ret = farswap_ctrl_post_recv(&donor->recv[i]);
			if (ret) {
				farswap_donor_set_error(donor, "cannot post control receives (%d)",
							ret);
				return ret;
			}
		}
	}
	return 0;
}

static int farswap_cm_route_resolved(struct farswap_queue *q)
{
	struct farswap_donor *donor = q->donor;
	struct rdma_conn_param param = {};
	struct farswap_conn_req req;
	int ret;

	ret = farswap_queue_create_qp(q);
	if (ret)
		return ret;

	farswap_conn_req_init(&req, q->qid ? FARSWAP_QT_IO : FARSWAP_QT_CTRL,
			      q->qid, donor->nr_ioq, q->qid ? donor->session : 0,
			      q->sq_depth);
	memcpy(req.host_id, donor->dev->host_id, FARSWAP_ID_LEN);
	/* Announced only with a key: the donor then expects the handshake. */
	if (donor->dev->auth_key.len)
		req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	/* Only with donor keys: the donor then proves its own key too. */
	if (donor->dev->nr_pair_keys)
		req.features |= cpu_to_le32(FARSWAP_FEAT_PINNED);
	/* With a key, always a session key: never a handshake without. */
	if (donor->dev->auth_key.len)
		req.features |= cpu_to_le32(FARSWAP_FEAT_KX);
	/* A detach says goodbye (farswap_donor_goodbye()): keep the rest. */
	req.features |= cpu_to_le32(FARSWAP_FEAT_KEEP);
	if (!q->qid)
		donor->req_features = le32_to_cpu(req.features);
	/* An I/O QP proves the session key it joins with. */
	if (q->qid && donor->kx) {
		ret = farswap_kx_join_tag(donor->kx_tfm, donor->session,
					  donor->dev->host_id, req.join_tag);
		if (ret) {
			farswap_donor_set_error(donor, "cannot compute the join tag (%d)",
						ret);
			return ret;
		}
	}

	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.initiator_depth = q->qid ?
		min_t(u32, farswap_ib_limit(donor->ibdev, max_qp_init_rd_atom),
		      FARSWAP_MAX_RD_ATOM) : 0;
	param.responder_resources = 0;
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;	/* infinite: the donor reposts receives */
	ret = rdma_connect_locked(q->cm_id, &param);
	if (ret)
		farswap_donor_set_error(donor, "rdma_connect failed (%d)", ret);
	return ret;
}

static int farswap_cm_established(struct farswap_queue *q,
				  struct rdma_cm_event *ev)
{
	const struct farswap_conn_rep *rep = ev->param.conn.private_data;
	u8 len = ev->param.conn.private_data_len;
	struct farswap_donor *donor = q->donor;
	int st;

	/*
	 * I/O queues need no reply: they joined the session their token
	 * names, or the donor would have rejected them.  Check one if sent.
	 */
	if (q->qid && (!rep || len < sizeof(*rep) ||
		       le32_to_cpu(rep->magic) != FARSWAP_MAGIC)) {
		q->established = true;
		return 0;
	}
	st = farswap_conn_rep_check(rep, len);
	if (st != FARSWAP_ST_OK) {
		farswap_donor_set_error(donor, "%s accepted with a malformed reply (%s): is it farswapd?",
					donor->name, farswap_status_str(st));
		return -EPROTO;
	}
	if (!q->qid) {
		donor->session = le64_to_cpu(rep->session);
		donor->version = rep->version;
		/*
		 * FEAT_AUTH, _PINNED, _KX: asked for only with keys, not in
		 * KNOWN; FEAT_KEEP by farswap.ko, which says goodbye.
		 */
		donor->rep_features = le32_to_cpu(rep->features);
		donor->features = donor->rep_features &
				  (FARSWAP_FEATURES_KNOWN | FARSWAP_FEAT_AUTH |
				   FARSWAP_FEAT_PINNED | FARSWAP_FEAT_KX |
				   FARSWAP_FEAT_KEEP);
		donor->slab_size = le64_to_cpu(rep->slab_size);
		donor->slabs_total = le32_to_cpu(rep->slabs_total);
		WRITE_ONCE(donor->slabs_free, le32_to_cpu(rep->slabs_free));
		memcpy(donor->donor_id, rep->donor_id, FARSWAP_ID_LEN);
	} else if (le64_to_cpu(rep->session) != donor->session) {
		farswap_donor_set_error(donor, "%s put I/O queue %u in another session",
					donor->name, q->qid);
		return -EPROTO;
	}
	q->established = true;
	return 0;
}

static int farswap_cm_rejected(struct farswap_queue *q,
			       struct rdma_cm_event *ev)
{
	struct farswap_donor *donor = q->donor;
	const struct farswap_conn_rej *rej;
	u8 len = 0;
	int reason;

	rej = rdma_consumer_reject_data(q->cm_id, ev, &len);
	reason = farswap_conn_rej_reason(rej, len);
	if (reason < 0) {
		farswap_donor_set_error(donor, "%s refused the connection (%s): is farswapd running there?",
					donor->name,
					rdma_reject_msg(q->cm_id, ev->status));
		return -ECONNREFUSED;
	}
	if (reason == FARSWAP_ST_VERSION) {
		farswap_donor_set_error(donor, "%s speaks protocol versions %u-%u, this host %u-%u",
					donor->name, rej->ver_min, rej->ver_max,
					FARSWAP_VERSION_MIN,
					FARSWAP_VERSION_MAX);
		return -EPROTONOSUPPORT;
	}
	if (reason == FARSWAP_ST_DENIED && !donor->dev->auth_key.len) {
		farswap_donor_set_error(donor, "%s refused the connection: %s (a donor that requires authentication refuses hosts attached without key=)",
					donor->name, farswap_status_str(reason));
		return -EACCES;
	}
	farswap_donor_set_error(donor, "%s refused the connection: %s",
				donor->name, farswap_status_str(reason));
	return farswap_status_errno(reason) ?: -ECONNREFUSED;
}

static int farswap_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct farswap_queue *q = id->context;
	struct farswap_donor *donor = q->donor;
	unsigned int tmo = donor->dev->params.connect_timeout_ms;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, tmo);
		if (err)
			farswap_donor_set_error(donor, "route resolution to %s failed (%d)",
						donor->name, err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		/*
		 * rdma_cm's work, not ours, runs this: allocate the queue's
		 * PD, CQ and QP without recursing into swap, as our own
		 * connect paths do.
		 */
		unsigned int noio = memalloc_noio_save();

		err = farswap_cm_route_resolved(q);
		memalloc_noio_restore(noio);
		break;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		q->cm_error = farswap_cm_established(q, ev);
		complete(&q->cm_done);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		err = farswap_cm_rejected(q, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		farswap_donor_set_error(donor, "%s unreachable: address resolution failed (%d)",
					donor->name, ev->status);
		err = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		farswap_donor_set_error(donor, "%s unreachable: route resolution failed (%d)",
					donor->name, ev->status);
		err = -ENETUNREACH;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (q->established) {
			farswap_donor_error(donor, rdma_event_msg(ev->event));
			return 0;
		}
		farswap_donor_set_error(donor, "%s unreachable: %s (%d)",
					donor->name, rdma_event_msg(ev->event),
					ev->status);
		err = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * ib_client remove tears down devices being removed before
		 * rdma_cm asks; this only catches queues it raced with.
		 */
		if (q->established) {
			farswap_donor_error(donor, rdma_event_msg(ev->event));
			return 0;
		}
		farswap_donor_set_error(donor, "%s: %s while connecting",
					donor->name, rdma_event_msg(ev->event));
		err = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		/* The end of a connection we already tore down. */
		return 0;
	default:
		/* Nothing else is expected on an active side: recover. */
		farswap_donor_pr_warn(donor, ": unexpected rdma_cm event %s (%d) on queue %u\n",
				      rdma_event_msg(ev->event), ev->status,
				      q->qid);
		if (q->established) {
			farswap_donor_error(donor, rdma_event_msg(ev->event));
			return 0;
		}
		farswap_donor_set_error(donor, "%s: unexpected %s while connecting",
					donor->name, rdma_event_msg(ev->event));
		err = -ECONNRESET;
		break;
	}

	if (err) {
		q->cm_error = err;
		complete(&q->cm_done);
	}
	/* Never non-zero: the queue's owner destroys the cm_id. */
	return 0;
}

static void farswap_queue_stop(struct farswap_queue *q)
{
	if (q->established)
		rdma_disconnect(q->cm_id);
	/* Every posted work request completes (flushed) before this returns. */
	if (q->qp)
		ib_drain_qp(q->qp);
}

static void farswap_queue_free(struct farswap_queue *q)
{
	/*
	 * The cm_id goes first, so no more events arrive; the QP is then
	 * destroyed with the verbs call, as the cm_id is gone.
	 */
	if (q->cm_id)
		rdma_destroy_id(q->cm_id);
	if (q->qp)
		ib_destroy_qp(q->qp);
	if (q->cq)
		ib_free_cq(q->cq);
	q->cm_id = NULL;
	q->qp = NULL;
	q->cq = NULL;
	q->established = false;
}

static int farswap_queue_connect(struct farswap_queue *q)
{
	struct farswap_donor *donor = q->donor;
	unsigned int tmo = donor->dev->params.connect_timeout_ms;
	struct rdma_cm_id *id;
	int ret;

	init_completion(&q->cm_done);
	q->cm_error = -ETIMEDOUT;
	q->established = false;

	id = rdma_create_id(&init_net, farswap_cm_handler, q, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		farswap_donor_set_error(donor, "cannot create an rdma_cm id (%ld)",
					PTR_ERR(id));
		return PTR_ERR(id);
	}
	q->cm_id = id;
	/* How long the transport retries before declaring the donor dead. */
	rdma_set_ack_timeout(id, donor->dev->params.ack_timeout);

	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&donor->addr, tmo);
	if (ret) {
		farswap_donor_set_error(donor, "%s unreachable: no local RDMA device routes to it (%d)",
					donor->name, ret);
		return ret;
	}
	/* Address, route and connect each have @tmo; allow for all three. */
	if (!wait_for_completion_timeout(&q->cm_done,
					 msecs_to_jiffies(3 * tmo + 1000))) {
		farswap_donor_set_error(donor, "%s did not answer within %u ms",
					donor->name, 3 * tmo + 1000);
		return -ETIMEDOUT;
	}
	return q->cm_error;
}

/*
 * One step of the handshake: send @req, wait for the reply (bounded by
 * ctrl_timeout_ms), which must be @want or an AUTH_REP refusing.
 */
static int farswap_auth_step(struct farswap_donor *donor,
			     union farswap_msg *req, union farswap_msg *rep,
			     unsigned int want)
{
	unsigned int st;
	int ret;

	ret = farswap_ctrl_xfer(donor, req, rep, NULL, true);
	if (ret) {
		farswap_donor_set_error(donor, "%s: no answer to %s (%d)",
					donor->name,
					farswap_msg_type_str(req->hdr.type), ret);
		return ret;
	}
	if (rep->hdr.type == want && want != FARSWAP_MSG_AUTH_REP)
		return 0;	/* an AUTH_CHAL */
	if (rep->hdr.type != FARSWAP_MSG_AUTH_REP) {
		farswap_donor_set_error(donor, "%s answered %s with %s",
					donor->name,
					farswap_msg_type_str(req->hdr.type),
					farswap_msg_type_str(rep->hdr.type));
		return -EPROTO;
	}
	st = le16_to_cpu(rep->auth_rep.status);
	if (st == FARSWAP_ST_OK && want == FARSWAP_MSG_AUTH_REP)
		return 0;
	if (st == FARSWAP_ST_OK) {
		farswap_donor_set_error(donor, "%s answered %s with AUTH_REP OK",
					donor->name,
					farswap_msg_type_str(req->hdr.type));
		return -EPROTO;
	}
	/* BUSY: the proof was right, but the donor takes no more hosts. */
	if (st == FARSWAP_ST_BUSY)
		farswap_donor_set_error(donor, "%s is full (max-hosts): it answered %s with BUSY; the key is right, try again later",
					donor->name,
					farswap_msg_type_str(req->hdr.type));
	else
		farswap_donor_set_error(donor, "%s refused to authenticate this host after %s: %s (do host and donor hold the same key?)",
					donor->name,
					farswap_msg_type_str(req->hdr.type),
					farswap_status_str(st));
	return farswap_status_errno(st) ?: -EPROTO;
}

/*
 * Mutual authentication with a session key (farswap_proto.h, "Session
 * keys"): the donor proves it holds the device's key (or, pinned, a pair
 * key), then this host does, over an X25519 exchange made for this
 * session alone, before any other control message and before any I/O
 * queue pair.  From then on every control message is tagged.  A failure
 * fails the connect like a rejected one: attach fails, or the reconnect
 * backs off.
 */
static int farswap_donor_authenticate(struct farswap_donor *donor)
{
	struct farswap_dev *dev = donor->dev;
	const struct farswap_auth_key *keys = &dev->auth_key;
	unsigned int nr_keys = 1;
	u8 host_nonce[FARSWAP_AUTH_NONCE_LEN], priv[FARSWAP_KX_PUB_LEN];
	struct farswap_kx_transcript t;
	union farswap_msg req, rep;
	int ret;

	donor->pinned_key = -1;
	if (!dev->auth_key.len)
		return 0;
	if (!(donor->features & FARSWAP_FEAT_AUTH)) {
		farswap_donor_pr_err_ratelimited(donor, " failed authentication: it does not authenticate hosts (farswapd without key-file), and this device has a key\n");
		farswap_donor_set_error(donor, "donor %s failed authentication: it does not offer it",
					donor->name);
		return -EACCES;
	}
	/* Never the handshake without: a relay could strip the bit. */
	if (!(donor->features & FARSWAP_FEAT_KX)) {
		farswap_donor_pr_err_ratelimited(donor, " failed authentication: it offers no session key (farswapd older than this module)\n");
		farswap_donor_set_error(donor, "donor %s failed authentication: it offers no session key (an older farswapd: upgrade it)",
					donor->name);
		return -EACCES;
	}
	/*
	 * Pinned: the donor must prove a pair key, never the host key
	 * alone, which every host that shares it could prove as well.
	 */
	if (dev->nr_pair_keys) {
		if (!(donor->features & FARSWAP_FEAT_PINNED)) {
			farswap_donor_pr_err_ratelimited(donor, " failed authentication: it has no donor key (farswapd donor-key-file), and this device pins donor keys\n");
			farswap_donor_set_error(donor, "donor %s failed authentication: it has no donor key to prove (farswapd donor-key-file), and this device pins donor keys",
						donor->name);
			return -EACCES;
		}
		keys = dev->pair_keys;
		nr_keys = dev->nr_pair_keys;
	}
	farswap_auth_nonce(host_nonce);
	farswap_msg_init(&req, FARSWAP_MSG_AUTH_KX_REQ, donor->version, 0);
	memcpy(req.kx_req.host_nonce, host_nonce, sizeof(host_nonce));
	ret = farswap_kx_keypair(priv, req.kx_req.host_pub);
	if (!ret)
		ret = farswap_auth_step(donor, &req, &rep,
					FARSWAP_MSG_AUTH_KX_CHAL);
	if (ret)
		goto out;

	farswap_kx_transcript_init(&t, "", host_nonce, rep.kx_chal.donor_nonce,
				   req.kx_req.host_pub, rep.kx_chal.donor_pub,
				   donor->session, dev->host_id,
				   donor->donor_id, donor->req_features,
				   donor->rep_features, donor->version);
	farswap_msg_init(&req, FARSWAP_MSG_AUTH_PROOF, donor->version, 0);
	ret = farswap_kx_answer(keys, nr_keys, donor->kx_tfm, priv, &t,
				rep.kx_chal.donor_mac, req.auth_proof.host_mac);
	if (ret == -EACCES && dev->nr_pair_keys) {
		farswap_donor_pr_err_ratelimited(donor, " failed authentication: it proves none of the donor keys this device pins\n");
		farswap_donor_set_error(donor, "donor %s failed authentication: it proves none of the %u donor key%s this device pins (another donor, or one whose donor-key-file or host key differs)",
					donor->name, dev->nr_pair_keys,
					dev->nr_pair_keys == 1 ? "" : "s");
		goto out;
	}
	if (ret == -EACCES) {
		farswap_donor_pr_err_ratelimited(donor, " failed authentication: its proof does not match this device's key\n");
		farswap_donor_set_error(donor, "donor %s failed authentication (wrong key)",
					donor->name);
		goto out;
	}
	if (ret == -EINVAL) {
		farswap_donor_pr_err_ratelimited(donor, " failed authentication: its X25519 public key is of low order\n");
		farswap_donor_set_error(donor, "donor %s failed authentication: a public key of low order (no shared secret)",
					donor->name);
		ret = -EACCES;
		goto out;
	}
	if (ret < 0) {
		farswap_donor_set_error(donor, "cannot compute the session key (%d)",
					ret);
		goto out;
	}
	if (dev->nr_pair_keys)
		donor->pinned_key = ret;
	/*
	 * The donor proved the key, and kx_tfm holds the session key.  Set
	 * before the proof goes out: the donor may send notices, tagged, as
	 * soon as it has checked it.
	 */
	donor->kx = true;
	WRITE_ONCE(donor->proven, true);
	ret = farswap_auth_step(donor, &req, &rep, FARSWAP_MSG_AUTH_REP);
	if (ret == -EACCES)
		farswap_donor_pr_err_ratelimited(donor, " denied this host's proof: host and donor hold different keys\n");
	if (!ret) {
		/* The AUTH_REP came bare; all after it in both ways is tagged. */
		spin_lock_irq(&donor->tag_lock);
		donor->tx_tagged = true;
		spin_unlock_irq(&donor->tag_lock);
	}
out:
	memzero_explicit(priv, sizeof(priv));
	memzero_explicit(&req, sizeof(req));
	return ret;
}

/* Connect every queue of a new session; on failure nothing is left. */
static int farswap_donor_connect(struct farswap_donor *donor)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&donor->lock);
	/* No queue of this attempt exists yet: nothing can have failed it. */
	spin_lock_irq(&donor->state_lock);
	donor->attempt_failed = false;
	spin_unlock_irq(&donor->state_lock);
	donor->session = 0;
	/* A new session: no session key, no tags until its handshake. */
	donor->kx = false;
	donor->rx_tagged = false;
	donor->rx_seq = 0;
	spin_lock_irq(&donor->tag_lock);
	donor->tx_tagged = false;
	donor->tx_seq = 0;
	spin_unlock_irq(&donor->tag_lock);
	/*
	 * Without a key there is nothing to prove, and a donor may send a
	 * notice as soon as the control QP is up.
	 */
	WRITE_ONCE(donor->proven, !donor->dev->auth_key.len);

	ret = farswap_queue_connect(&donor->ctrl);
	if (ret)
		goto out_teardown;
	if (donor->dev->geo.slab_shift &&
	    donor->slab_size != farswap_slab_bytes(&donor->dev->geo)) {
		farswap_donor_set_error(donor, "%s now serves %llu-byte slabs, the device uses %llu",
					donor->name, donor->slab_size,
					farswap_slab_bytes(&donor->dev->geo));
		ret = -EINVAL;
		goto out_teardown;
	}
	/* Authenticated before anything else, I/O queue pairs included. */
	ret = farswap_donor_authenticate(donor);
	if (ret)
		goto out_teardown;
	ret = farswap_donor_query_info(donor);
	if (ret)
		goto out_teardown;
	for (i = 0; i < donor->nr_ioq; i++) {
		ret = farswap_queue_connect(&donor->ioq[i]);
		if (ret)
			goto out_teardown;
	}
	/*
	 * An error while the I/O queues connected (the control queue pair
	 * died, a message that fails the session) must not go live; going
	 * live checks again, under the state lock, for one that comes later.
	 */
	if (farswap_donor_attempt_failed(donor)) {
		ret = -ECONNRESET;
		goto out_failed;
	}
	return 0;

out_failed:
	farswap_donor_set_error(donor, "%s failed while connecting (see the kernel log)",
				donor->name);
out_teardown:
	/* The flushes of the teardown are no news: the attempt failed. */
	spin_lock_irq(&donor->state_lock);
	donor->attempt_failed = true;
	spin_unlock_irq(&donor->state_lock);
	farswap_donor_teardown(donor);
	return ret;
}

/* Tear every queue of the session down; no work request survives it. */
static void farswap_donor_teardown(struct farswap_donor *donor)
{
	unsigned int i;

	for (i = 0; i < donor->nr_ioq; i++)
		farswap_queue_stop(&donor->ioq[i]);
	farswap_queue_stop(&donor->ctrl);
	farswap_ctrl_fail_waiters(donor);
	/*
	 * The drain completed every chunk copy; wait until their callers have
	 * unmapped their buffers, while the device is still ours.
	 */
	wait_var_event(&donor->sync_inflight,
		       !atomic_read(&donor->sync_inflight));

	for (i = 0; i < donor->nr_ioq; i++)
		farswap_queue_free(&donor->ioq[i]);
	farswap_queue_free(&donor->ctrl);

	farswap_ctrl_unmap_bufs(donor);
	if (donor->pd) {
		ib_dealloc_pd(donor->pd);
		donor->pd = NULL;
	}
	donor->ibdev = NULL;
}

/* Make the just-connected session the live one. */
static bool farswap_donor_go_live(struct farswap_donor *donor)
{
	enum farswap_donor_state from;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&donor->state_lock, flags);
	from = donor->state;
	ok = farswap_donor_may_go_live(from, donor->attempt_failed);
	if (ok) {
		/*
		 * Why it was down stays shown through every failed attempt,
		 * until one succeeds.
		 */
		donor->last_error[0] = '\0';
		/* A new generation: placements of the old session are dead. */
		WRITE_ONCE(donor->gen, donor->gen + 1);
		/* Release: readers that see LIVE see the new gen too. */
		smp_store_release(&donor->state, FARSWAP_DONOR_LIVE);
		trace_farswap_donor_state(donor, from, FARSWAP_DONOR_LIVE);
	}
	spin_unlock_irqrestore(&donor->state_lock, flags);
	if (!ok && from == FARSWAP_DONOR_CONNECTING)
		farswap_donor_set_error(donor, "%s failed while connecting (see the kernel log)",
					donor->name);
	return ok;
}

/*
 * The data path is one-sided: a donor whose farswapd stopped (SIGSTOP,
 * stuck pinning memory) still serves RDMA, but no longer answers control
 * messages, so it could never give slabs or take reclaim answers.  Ask
 * it for its stats now and then; a call past ctrl_timeout_ms fails it.
 */
static void farswap_donor_keepalive_work(struct work_struct *work)
{
	struct farswap_donor *donor = container_of(to_delayed_work(work),
						   struct farswap_donor,
						   keepalive_work);
	unsigned int ms = donor->dev->params.keepalive_ms;
	unsigned int noio = memalloc_noio_save();
	int ret;

	ret = farswap_donor_query_stats(donor);
	memalloc_noio_restore(noio);
	/* Not live any more: the next session starts its own probes. */
	if (ret == -ENOTCONN || ret == -ESHUTDOWN)
		return;
	queue_delayed_work(donor->dev->connect_wq, &donor->keepalive_work,
			   msecs_to_jiffies(ms));
}

/* A session just went live: probe it from now on. */
static void farswap_donor_start_keepalive(struct farswap_donor *donor)
{
	unsigned int ms = donor->dev->params.keepalive_ms;

	if (ms)
		mod_delayed_work(donor->dev->connect_wq, &donor->keepalive_work,
				 msecs_to_jiffies(ms));
}

int farswap_donor_connect_first(struct farswap_donor *donor)
{
	unsigned int noio, attempt;
	int ret;

	mutex_lock(&donor->lock);
	if (!farswap_donor_change_state(donor, FARSWAP_DONOR_CONNECTING)) {
		mutex_unlock(&donor->lock);
		return -ESHUTDOWN;
	}
	noio = memalloc_noio_save();
	/*
	 * A listener can answer "invalid service ID" for a moment (seen with
	 * Soft-RoCE under load): try twice more before calling it refused.
	 */
	for (attempt = 0;; attempt++) {
		ret = farswap_donor_connect(donor);
		if (ret != -ECONNREFUSED || attempt == 2)
			break;
		msleep(500);
	}
	memalloc_noio_restore(noio);
	if (!ret && !farswap_donor_go_live(donor)) {
		farswap_donor_teardown(donor);
		ret = farswap_donor_attempt_failed(donor) ? -ECONNRESET :
							    -ESHUTDOWN;
	}
	if (!ret)
		farswap_donor_start_keepalive(donor);
	mutex_unlock(&donor->lock);
	return ret;
}

/**
 * farswap_donor_connect_later - reconnect in the background from now on
 * @donor: a donor whose first connect failed for a reason that passes
 *
 * A degraded attach goes on without it: the donor waits and reconnects
 * as one that failed does (reconnect_delay_ms, doubling), and once live
 * it takes the replicas the device's chunks lack (the repair work).
 * Called once the device's map exists, so that nothing of the donor can
 * reach a map not yet made.
 */
void farswap_donor_connect_later(struct farswap_donor *donor)
{
	struct farswap_dev *dev = donor->dev;

	mutex_lock(&donor->lock);
	if (farswap_donor_change_state(donor, FARSWAP_DONOR_WAITING)) {
		donor->reconnect_backoff_ms = dev->params.reconnect_delay_ms;
		queue_delayed_work(dev->connect_wq, &donor->reconnect_work,
				   msecs_to_jiffies(donor->reconnect_backoff_ms));
	}
	mutex_unlock(&donor->lock);
}

/*
 * A failed donor's session goes: tear it down (every posted work request
 * completes, flushed), schedule the reconnect, and let the loss work
 * unbind what the session held.  Called with donor->lock held, on a
 * donor already moved to FAILED.
 */
static void farswap_donor_reset(struct farswap_donor *donor)
{
	struct farswap_dev *dev = donor->dev;

	lockdep_assert_held(&donor->lock);
	/* Whoever saw the donor live has posted by now; drain the rest. */
	synchronize_rcu();
	farswap_donor_teardown(donor);
	if (farswap_donor_change_state(donor, FARSWAP_DONOR_WAITING)) {
		donor->reconnect_backoff_ms = dev->params.reconnect_delay_ms;
		queue_delayed_work(dev->connect_wq, &donor->reconnect_work,
				   msecs_to_jiffies(donor->reconnect_backoff_ms));
	}
	if (farswap_dev_map_ready(dev))
		queue_work(dev->wq, &dev->loss_work);
}

static void farswap_donor_err_work(struct work_struct *work)
{
	struct farswap_donor *donor =
		container_of(work, struct farswap_donor, err_work);

	mutex_lock(&donor->lock);
	if (farswap_donor_state(donor) == FARSWAP_DONOR_FAILED)
		farswap_donor_reset(donor);
	mutex_unlock(&donor->lock);
}

static void farswap_donor_reconnect_work(struct work_struct *work)
{
	struct farswap_donor *donor = container_of(to_delayed_work(work),
						   struct farswap_donor,
						   reconnect_work);
	struct farswap_dev *dev = donor->dev;
	char err[FARSWAP_ERR_LEN];
	unsigned int noio;
	int ret;

	mutex_lock(&donor->lock);
	if (!farswap_donor_change_state(donor, FARSWAP_DONOR_CONNECTING)) {
		mutex_unlock(&donor->lock);
		return;
	}
	noio = memalloc_noio_save();
	ret = farswap_donor_connect(donor);
	memalloc_noio_restore(noio);

	if (!ret && farswap_donor_go_live(donor)) {
		atomic64_inc(&donor->stats.reconnects);
		farswap_donor_pr_info(donor, " reconnected (session %u)\n",
				      donor->gen);
		farswap_donor_start_keepalive(donor);
		if (farswap_donor_resume_pending(donor)) {
			/* Room and repairs once its slabs are back. */
			queue_work(dev->wq, &donor->resume_work);
		} else if (farswap_dev_map_ready(dev)) {
			/* Its slabs were lost: room for the next writes, now. */
			farswap_chunks_want_room(dev);
			/* A new, empty donor may take chunks short of a replica. */
			queue_work(dev->wq, &dev->repair_work);
		}
	} else {
		if (!ret)
			farswap_donor_teardown(donor);
		if (farswap_donor_change_state(donor, FARSWAP_DONOR_WAITING)) {
			farswap_donor_pr_info_ratelimited(donor, ": reconnect failed: %s; retrying in %u ms\n",
							  farswap_donor_error_text(donor, err, sizeof(err)),
							  donor->reconnect_backoff_ms);
			queue_delayed_work(dev->connect_wq,
					   &donor->reconnect_work,
					   msecs_to_jiffies(donor->reconnect_backoff_ms));
			/*
			 * While its slabs wait for it (resume.c), a restart
			 * takes seconds: ask that often, not ever later.
			 */
			if (!READ_ONCE(donor->resume_open))
				donor->reconnect_backoff_ms =
					min(donor->reconnect_backoff_ms * 2,
					    FARSWAP_RECONNECT_MAX_MS);
		}
	}
	mutex_unlock(&donor->lock);
}

/*
 * ib_client remove: the RDMA device goes away.  Tear down every session on
 * it before returning (rdma_cm waits for our cm_ids after this), and let
 * the reconnect work find another way to the donor later.
 */
void farswap_donors_remove_device(struct ib_device *ibdev)
{
	struct farswap_dev *dev;
	unsigned int i;

	mutex_lock(&farswap_devs_mutex);
	list_for_each_entry(dev, &farswap_devs, node) {
		for (i = 0; i < farswap_nr_donors(dev); i++) {
			struct farswap_donor *donor = dev->donors[i];

			if (!donor)
				continue;
			mutex_lock(&donor->lock);
			if (donor->ibdev != ibdev) {
				mutex_unlock(&donor->lock);
				continue;
			}
			if (farswap_donor_change_state(donor, FARSWAP_DONOR_FAILED))
				farswap_donor_pr_err(donor, ": RDMA device %s removed; failing its I/O%s\n",
						     dev_name(&ibdev->dev),
						     READ_ONCE(donor->resume_open) ?
							     " (its slabs wait for it to come back)" : "");
			/*
			 * Failed before (its teardown pending) or now: either
			 * way the session goes before the device does.
			 */
			if (farswap_donor_state(donor) == FARSWAP_DONOR_FAILED)
				farswap_donor_reset(donor);
			else
				farswap_donor_teardown(donor);
			mutex_unlock(&donor->lock);
		}
	}
	mutex_unlock(&farswap_devs_mutex);
	/*
	 * A device that left the list before the walk may still have
	 * queue pairs and a PD on @ibdev: its teardown ends before the
	 * RDMA device goes.
	 */
	down_write(&farswap_teardown_rwsem);
	up_write(&farswap_teardown_rwsem);
}

static void farswap_donor_format_name(struct farswap_donor *donor)
{
	const struct sockaddr_in *sin = (const void *)&donor->addr;
	const struct sockaddr_in6 *sin6 = (const void *)&donor->addr;

	if (donor->addr.ss_family == AF_INET6)
		snprintf(donor->name, sizeof(donor->name), "[%pI6c]:%u",
			 &sin6->sin6_addr, ntohs(sin6->sin6_port));
	else
		snprintf(donor->name, sizeof(donor->name), "%pI4:%u",
			 &sin->sin_addr, ntohs(sin->sin_port));
}

struct farswap_donor *farswap_donor_create(struct farswap_dev *dev,
					   unsigned int index,
					   const struct sockaddr_storage *addr)
{
	struct farswap_donor *donor;
	unsigned int i;

	donor = kzalloc(sizeof(*donor), GFP_KERNEL);
	if (!donor)
		return NULL;
	donor->nr_ioq = 2 * dev->params.nr_queues;
	donor->ioq = kcalloc(donor->nr_ioq, sizeof(*donor->ioq), GFP_KERNEL);
	donor->ctrl_bufs = kcalloc(FARSWAP_CTRL_DEPTH + FARSWAP_CTRL_CALLS,
				   sizeof(union farswap_msg), GFP_KERNEL);
	if (!donor->ioq || !donor->ctrl_bufs)
		goto out_free;
	/* Here, not in a handshake, which runs under memalloc_noio. */
	if (dev->auth_key.len) {
		donor->kx_tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
		if (IS_ERR(donor->kx_tfm)) {
			donor->kx_tfm = NULL;
			goto out_free;
		}
	}

	donor->dev = dev;
	donor->index = index;
	donor->addr = *addr;
	donor->pinned_key = -1;
	farswap_donor_format_name(donor);
	mutex_init(&donor->lock);
	spin_lock_init(&donor->state_lock);
	donor->state = FARSWAP_DONOR_NEW;

	donor->ctrl.donor = donor;
	donor->ctrl.qid = 0;
	for (i = 0; i < donor->nr_ioq; i++) {
		donor->ioq[i].donor = donor;
		donor->ioq[i].qid = i + 1;
	}

	for (i = 0; i < FARSWAP_CTRL_DEPTH; i++) {
		donor->recv[i].donor = donor;
		donor->recv[i].cqe.done = farswap_ctrl_recv_done;
		donor->recv[i].buf = &donor->ctrl_bufs[i];
	}
	for (i = 0; i < FARSWAP_CTRL_CALLS; i++) {
		struct farswap_ctrl_inflight *call = &donor->call[i];

		call->donor = donor;
		call->send_cqe.done = farswap_ctrl_send_done;
		call->buf = &donor->ctrl_bufs[FARSWAP_CTRL_DEPTH + i];
		init_completion(&call->send_done);
		init_completion(&call->reply_done);
	}
	sema_init(&donor->call_sem, FARSWAP_CTRL_CALLS);
	spin_lock_init(&donor->call_lock);
	spin_lock_init(&donor->tag_lock);
	spin_lock_init(&donor->reclaim_lock);
	INIT_KFIFO(donor->reclaim);
	INIT_WORK(&donor->reclaim_work, farswap_reclaim_work);
	INIT_WORK(&donor->err_work, farswap_donor_err_work);
	INIT_DELAYED_WORK(&donor->reconnect_work, farswap_donor_reconnect_work);
	INIT_DELAYED_WORK(&donor->keepalive_work, farswap_donor_keepalive_work);
	INIT_WORK(&donor->resume_work, farswap_donor_resume_work);
	INIT_DELAYED_WORK(&donor->resume_expire_work,
			  farswap_donor_resume_expire);
	return donor;

out_free:
	kfree(donor->ctrl_bufs);
	kfree(donor->ioq);
	kfree(donor);
	return NULL;
}

/*
 * Detach: no more I/O or control traffic.  The session ends here, before
 * any of the donor's work is waited for, so that a chunk copy or control
 * call in that work, stalled on this donor, is flushed rather than waited
 * on for ever (a DELETING donor cannot be failed).
 */
void farswap_donor_stop(struct farswap_donor *donor)
{
	unsigned long flags;

	farswap_donor_goodbye(donor);

	/* Reclaim requests that still arrive are for slabs about to go. */
	spin_lock_irqsave(&donor->reclaim_lock, flags);
	donor->stopping = true;
	spin_unlock_irqrestore(&donor->reclaim_lock, flags);

	mutex_lock(&donor->lock);
	farswap_donor_change_state(donor, FARSWAP_DONOR_DELETING);
	/* Detach waits for nothing: what it still held is let go. */
	farswap_donor_close_resume(donor);
	synchronize_rcu();
	farswap_donor_teardown(donor);
	mutex_unlock(&donor->lock);
}

/* After farswap_donor_stop(): none of the donor's work runs again. */
void farswap_donor_cancel_work(struct farswap_donor *donor)
{
	cancel_delayed_work_sync(&donor->reconnect_work);
	cancel_delayed_work_sync(&donor->keepalive_work);
	cancel_work_sync(&donor->resume_work);
	cancel_delayed_work_sync(&donor->resume_expire_work);
	cancel_work_sync(&donor->err_work);
	cancel_work_sync(&donor->reclaim_work);
}

/* After farswap_donor_cancel_work(): free the donor. */
void farswap_donor_destroy(struct farswap_donor *donor)
{
	/* Its session ended in farswap_donor_stop(); nothing is left. */
	if (donor->kx_tfm)
		crypto_free_shash(donor->kx_tfm);	/* the session key too */
	kfree(donor->ctrl_bufs);
	kfree(donor->ioq);
	kfree(donor);
}
