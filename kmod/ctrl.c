// SPDX-License-Identifier: GPL-2.0
/*
 * The control channel of a donor session: control messages (struct
 * farswap_msg) sent on queue pair 0 from a pool of call buffers, replies
 * matched to their request by cookie, the receive completion that
 * dispatches what a donor sends on its own (reclaim requests, revokes,
 * free counts), and the typed calls: slab alloc and free, info and stats
 * queries.  The session that carries it is conn.c's.
 */
#include <linux/jiffies.h>
#include <linux/rcupdate.h>

#include "farswap.h"
#include "log.h"

int farswap_status_errno(unsigned int status)
{
	switch (status) {
	case FARSWAP_ST_OK:
		return 0;
	case FARSWAP_ST_VERSION:
		return -EPROTONOSUPPORT;
	case FARSWAP_ST_NO_SPACE:
		return -ENOSPC;
	case FARSWAP_ST_NO_ENTRY:
		return -ENOENT;
	case FARSWAP_ST_SLAB_SIZE:
		return -EINVAL;
	case FARSWAP_ST_BUSY:
		return -EBUSY;
	case FARSWAP_ST_DENIED:
		return -EACCES;
	default:
		return -EPROTO;
	}
}

int farswap_ctrl_post_recv(struct farswap_ctrl_recv *recv)
{
	struct farswap_donor *donor = recv->donor;
	struct ib_sge sge = {
		.addr	= recv->dma,
		.length	= FARSWAP_MSG_MAX,
		.lkey	= donor->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe	 = &recv->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(donor->ctrl.qp, &wr, NULL);
}

/* A reply arrived: hand it to the call waiting for its cookie. */
static void farswap_ctrl_complete(struct farswap_donor *donor,
				  const union farswap_msg *msg)
{
	u64 cookie = le64_to_cpu(msg->hdr.cookie);
	unsigned int i = (cookie & 0xff) - 1;
	struct farswap_ctrl_inflight *call;
	unsigned long flags;
	bool found = false;

	if (i >= FARSWAP_CTRL_CALLS)
		goto stale;
	call = &donor->call[i];
	spin_lock_irqsave(&donor->call_lock, flags);
	if (call->cookie == cookie) {
		call->reply = *msg;
		call->cookie = 0;
		found = true;
	}
	spin_unlock_irqrestore(&donor->call_lock, flags);
	if (found) {
		complete(&call->reply_done);
		return;
	}
stale:
	/*
	 * A reply to a call that timed out: the call failed, and so did the
	 * session, which frees what it holds.  A slab granted that late is
	 * given back all the same, should the session still be live.
	 */
	farswap_donor_pr_warn_ratelimited(donor, ": unexpected %s (cookie %llx)\n",
					  farswap_msg_type_str(msg->hdr.type),
					  cookie);
	/* An unproven donor was never asked for a slab: nothing to give back. */
	if (msg->hdr.type == FARSWAP_MSG_SLAB_ALLOC_REP &&
	    le16_to_cpu(msg->alloc_rep.status) == FARSWAP_ST_OK &&
	    READ_ONCE(donor->proven))
		farswap_late_grant(donor, le32_to_cpu(msg->alloc_rep.slab_id));
}

/*
 * What a donor says on its own, unasked, moves this host: a reclaim
 * request takes slabs back, a free count steers placement.  Only a donor
 * that proved the device's key may say it; a reply is matched to a
 * request this host sent, so it needs no such check.
 */
static bool farswap_ctrl_unasked_ok(struct farswap_donor *donor,
				    const union farswap_msg *msg)
{
	if (READ_ONCE(donor->proven))
		return true;
	farswap_donor_pr_err_ratelimited(donor, " sent %s before it proved the device's key; dropping the connection\n",
					 farswap_msg_type_str(msg->hdr.type));
	farswap_donor_error(donor, "unauthenticated message");
	return false;
}

/*
 * A donor's free count steers placement toward it, so it counts only
 * once the donor proved the key: replies are matched by cookie, but a
 * donor that has not authenticated can send one unasked, and the host
 * asks nothing before the proof but the handshake itself.
 */
static void farswap_donor_note_free(struct farswap_donor *donor,
				    __le32 slabs_free)
{
	if (READ_ONCE(donor->proven))
		WRITE_ONCE(donor->slabs_free, le32_to_cpu(slabs_free));
}

static void farswap_ctrl_dispatch(struct farswap_donor *donor,
				  const union farswap_msg *msg)
{
	switch (msg->hdr.type) {
	case FARSWAP_MSG_SLAB_ALLOC_REP:
		farswap_donor_note_free(donor, msg->alloc_rep.slabs_free);
		farswap_ctrl_complete(donor, msg);
		break;
	case FARSWAP_MSG_SLAB_FREE_REP:
		farswap_donor_note_free(donor, msg->free_rep.slabs_free);
		farswap_ctrl_complete(donor, msg);
		break;
	case FARSWAP_MSG_SLAB_RESUME_REP:
		farswap_donor_note_free(donor, msg->resume_rep.slabs_free);
		farswap_ctrl_complete(donor, msg);
		break;
	case FARSWAP_MSG_STATS_REP:
		if (!msg->hdr.cookie && !farswap_ctrl_unasked_ok(donor, msg))
			break;
		if (READ_ONCE(donor->proven)) {
			WRITE_ONCE(donor->slabs_free,
				   le32_to_cpu(msg->stats_rep.slabs_free));
			WRITE_ONCE(donor->slabs_total,
				   le32_to_cpu(msg->stats_rep.slabs_total));
		}
		/* Cookie 0: the donor offers room again, nobody waits. */
		if (msg->hdr.cookie)
			farswap_ctrl_complete(donor, msg);
		break;
	case FARSWAP_MSG_RECLAIM_REQ:
		if (farswap_ctrl_unasked_ok(donor, msg))
			farswap_reclaim_enqueue(donor, &msg->reclaim_req);
		break;
	case FARSWAP_MSG_SLAB_REVOKE:
		if (farswap_ctrl_unasked_ok(donor, msg))
			farswap_slab_revoked(donor,
					     le32_to_cpu(msg->slab_revoke.slab_id),
					     le32_to_cpu(msg->slab_revoke.grace_ms));
		break;
	case FARSWAP_MSG_INFO_REP:
	case FARSWAP_MSG_AUTH_KX_CHAL:
	case FARSWAP_MSG_AUTH_REP:
		farswap_ctrl_complete(donor, msg);
		break;
	default:
		farswap_donor_pr_err(donor, " sent %s, which only a host sends; dropping the connection\n",
				     farswap_msg_type_str(msg->hdr.type));
		farswap_donor_error(donor, "protocol violation");
	}
}

/*
 * A received message of a tagged session: FARSWAP_ST_OK with its tag the
 * next the donor's session key gives, FARSWAP_ST_DENIED for a wrong tag,
 * or farswap_msg_check_tagged()'s refusal.
 */
static int farswap_ctrl_check_tag(struct farswap_donor *donor,
				  const union farswap_msg *buf, u32 len)
{
	u8 want[FARSWAP_KX_TAG_LEN];
	int st;

	st = farswap_msg_check_tagged(buf, len, donor->version);
	if (st != FARSWAP_ST_OK)
		return st;
	len -= FARSWAP_KX_TAG_LEN;
	if (farswap_kx_tag(donor->kx_tfm, 'D', donor->rx_seq, buf, len, want) ||
	    !farswap_auth_tag_equal(want, buf->raw + len))
		return FARSWAP_ST_DENIED;
	donor->rx_seq++;
	return FARSWAP_ST_OK;
}

void farswap_ctrl_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_ctrl_recv *recv =
		container_of(wc->wr_cqe, struct farswap_ctrl_recv, cqe);
	struct farswap_donor *donor = recv->donor;
	union farswap_msg msg;
	bool tagged;
	int st;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/* On a live donor even a flush means its queue pair died. */
		farswap_donor_error(donor, ib_wc_status_msg(wc->status));
		return;
	}

	ib_dma_sync_single_for_cpu(donor->ibdev, recv->dma, FARSWAP_MSG_MAX,
				   DMA_FROM_DEVICE);
	tagged = donor->rx_tagged;
	st = tagged ? farswap_ctrl_check_tag(donor, recv->buf, wc->byte_len) :
		      farswap_msg_check(recv->buf, wc->byte_len,
					donor->version);
	if (st == FARSWAP_ST_OK)
		memcpy(&msg, recv->buf, wc->byte_len -
		       (tagged ? FARSWAP_KX_TAG_LEN : 0));
	else if (st == FARSWAP_ST_DENIED)
		farswap_donor_pr_err(donor, " sent a control message (type %u) with a wrong tag (changed, replayed or out of order on the way); dropping the connection\n",
				     recv->buf->hdr.type);
	else
		farswap_donor_pr_err(donor, " sent a malformed control message (type %u, %u bytes: %s); dropping the connection\n",
				     wc->byte_len ? recv->buf->hdr.type : 0,
				     wc->byte_len, farswap_status_str(st));
	/*
	 * Reposted whatever it held, before any error is raised: the
	 * receive ring stays full for as long as the session lives,
	 * whichever way the error below is handled.
	 */
	ib_dma_sync_single_for_device(donor->ibdev, recv->dma, FARSWAP_MSG_MAX,
				      DMA_FROM_DEVICE);
	if (farswap_ctrl_post_recv(recv)) {
		farswap_donor_error(donor, "cannot repost a control receive");
		return;
	}
	if (st != FARSWAP_ST_OK) {
		farswap_donor_error(donor, st == FARSWAP_ST_DENIED ?
				    "control message with a wrong tag" :
				    "malformed control message");
		return;
	}
	/*
	 * The AUTH_REP that ends a handshake with a session key comes bare;
	 * every message after it is tagged.
	 */
	if (!tagged && READ_ONCE(donor->kx) &&
	    msg.hdr.type == FARSWAP_MSG_AUTH_REP &&
	    le16_to_cpu(msg.auth_rep.status) == FARSWAP_ST_OK)
		donor->rx_tagged = true;
	farswap_ctrl_dispatch(donor, &msg);
}

static void farswap_ctrl_put_call(struct farswap_donor *donor, int i);

void farswap_ctrl_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct farswap_ctrl_inflight *call =
		container_of(wc->wr_cqe, struct farswap_ctrl_inflight, send_cqe);
	struct farswap_donor *donor = call->donor;
	unsigned long flags;
	bool abandoned;

	spin_lock_irqsave(&donor->call_lock, flags);
	call->send_status = wc->status;
	call->send_pending = false;
	abandoned = call->abandoned;
	call->abandoned = false;
	spin_unlock_irqrestore(&donor->call_lock, flags);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		farswap_donor_error(donor, ib_wc_status_msg(wc->status));
	/* Its caller is gone: the call is ours to free. */
	if (abandoned)
		farswap_ctrl_put_call(donor, call - donor->call);
	else
		complete(&call->send_done);
}

static int farswap_ctrl_get_call(struct farswap_donor *donor)
{
	unsigned int tmo = donor->dev->params.ctrl_timeout_ms;
	unsigned long flags;
	int i;

	if (down_timeout(&donor->call_sem, msecs_to_jiffies(tmo)))
		return -ETIMEDOUT;
	spin_lock_irqsave(&donor->call_lock, flags);
	i = find_first_zero_bit(&donor->call_busy, FARSWAP_CTRL_CALLS);
	__set_bit(i, &donor->call_busy);
	spin_unlock_irqrestore(&donor->call_lock, flags);
	return i;
}

static void farswap_ctrl_put_call(struct farswap_donor *donor, int i)
{
	unsigned long flags;

	spin_lock_irqsave(&donor->call_lock, flags);
	donor->call[i].cookie = 0;
	/* A late reply may have landed after a timeout: forget it. */
	memset(&donor->call[i].reply, 0, sizeof(donor->call[i].reply));
	__clear_bit(i, &donor->call_busy);
	spin_unlock_irqrestore(&donor->call_lock, flags);
	up(&donor->call_sem);
}

/* Fail every call waiting for a reply: the session is gone. */
void farswap_ctrl_fail_waiters(struct farswap_donor *donor)
{
	unsigned long flags;
	int i;

	for (i = 0; i < FARSWAP_CTRL_CALLS; i++) {
		struct farswap_ctrl_inflight *call = &donor->call[i];
		bool waiting;

		spin_lock_irqsave(&donor->call_lock, flags);
		waiting = call->cookie != 0;
		call->cookie = 0;
		spin_unlock_irqrestore(&donor->call_lock, flags);
		if (waiting)
			complete(&call->reply_done);
	}
}

/*
 * Wait for a control SEND to complete, at most @tmo.  Past it the donor is
 * failed (a donor that stopped reposting receives leaves the SEND in RNR
 * retries for ever) and the call is abandoned to the completion, which
 * the teardown flushes.
 *
 * Return: true if the caller still owns the call.
 */
static bool farswap_ctrl_wait_send(struct farswap_donor *donor,
				   struct farswap_ctrl_inflight *call,
				   unsigned int tmo)
{
	unsigned long flags;
	bool abandon;

	if (wait_for_completion_timeout(&call->send_done,
					msecs_to_jiffies(tmo)))
		return true;
	spin_lock_irqsave(&donor->call_lock, flags);
	abandon = call->send_pending;
	call->abandoned = abandon;
	spin_unlock_irqrestore(&donor->call_lock, flags);
	if (!abandon) {
		/* Completed as we gave up: its complete() is on the way. */
		wait_for_completion(&call->send_done);
		return true;
	}
	farswap_donor_error(donor, "a control message was not delivered in time");
	return false;
}

/*
 * Send @msg on the control queue; with @reply, wait for the answer.  The
 * message's cookie is set here when a reply is awaited.  @gen, if not
 * NULL, receives the session the message went to.
 *
 * Every wait is bounded by ctrl_timeout_ms: a donor that does not take a
 * message or answer it in that time is failed, so that no caller (they
 * hold map_mutex) waits on it for ever.
 */
int farswap_ctrl_xfer(struct farswap_donor *donor,
		      union farswap_msg *msg, union farswap_msg *reply,
		      u32 *gen, bool handshake)
{
	/* The authentication handshake runs before the session is live. */
	enum farswap_donor_state want = handshake ? FARSWAP_DONOR_CONNECTING :
						    FARSWAP_DONOR_LIVE;
	unsigned int tmo = READ_ONCE(donor->dev->params.ctrl_timeout_ms);
	u32 len = farswap_msg_size(msg->hdr.type);
	struct farswap_ctrl_inflight *call;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	unsigned long flags, tflags;
	int i, ret = 0;

	i = farswap_ctrl_get_call(donor);
	if (i < 0)
		return i;
	call = &donor->call[i];
	reinit_completion(&call->send_done);
	reinit_completion(&call->reply_done);

	spin_lock_irqsave(&donor->call_lock, flags);
	if (reply) {
		donor->cookie_seq++;
		call->cookie = ((u64)donor->cookie_seq << 8) | (i + 1);
		msg->hdr.cookie = cpu_to_le64(call->cookie);
	}
	call->send_pending = true;
	call->abandoned = false;
	spin_unlock_irqrestore(&donor->call_lock, flags);

	rcu_read_lock();
	if (farswap_donor_state(donor) != want ||
	    (handshake && farswap_donor_attempt_failed(donor))) {
		rcu_read_unlock();
		farswap_ctrl_put_call(donor, i);
		return -ENOTCONN;
	}
	if (gen)
		*gen = READ_ONCE(donor->gen);
	/* The tags' count follows the posts' order: one lock over both. */
	spin_lock_irqsave(&donor->tag_lock, tflags);
	memcpy(call->buf, msg, len);
	if (donor->tx_tagged) {
		ret = farswap_kx_tag(donor->kx_tfm, 'H', donor->tx_seq,
				     call->buf, len, call->buf->raw + len);
		len += FARSWAP_KX_TAG_LEN;
	}
	ib_dma_sync_single_for_device(donor->ibdev, call->dma, len,
				      DMA_TO_DEVICE);
	sge.addr = call->dma;
	sge.length = len;
	sge.lkey = donor->pd->local_dma_lkey;
	wr.wr_cqe = &call->send_cqe;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (!ret)
		ret = ib_post_send(donor->ctrl.qp, &wr, NULL);
	if (!ret && donor->tx_tagged)
		donor->tx_seq++;
	spin_unlock_irqrestore(&donor->tag_lock, tflags);
	rcu_read_unlock();
	if (ret) {
		farswap_ctrl_put_call(donor, i);
		farswap_donor_error(donor, "cannot post a control message");
		return ret;
	}

	if (reply) {
		if (!wait_for_completion_timeout(&call->reply_done,
						 msecs_to_jiffies(tmo))) {
			char why[80];

			/* A late reply finds no cookie: it is dropped. */
			spin_lock_irqsave(&donor->call_lock, flags);
			call->cookie = 0;
			spin_unlock_irqrestore(&donor->call_lock, flags);
			snprintf(why, sizeof(why), "no reply to %s within %u ms",
				 farswap_msg_type_str(msg->hdr.type), tmo);
			farswap_donor_error(donor, why);
			ret = -ETIMEDOUT;
		} else {
			spin_lock_irqsave(&donor->call_lock, flags);
			/* Completed without a reply: the session failed. */
			if (!call->reply.hdr.magic)
				ret = -ENOTCONN;
			else
				*reply = call->reply;
			spin_unlock_irqrestore(&donor->call_lock, flags);
		}
	}
	/* The buffer is the HCA's until the send completes or is flushed. */
	if (!farswap_ctrl_wait_send(donor, call, tmo))
		return ret ?: -ETIMEDOUT;
	if (!ret && call->send_status != IB_WC_SUCCESS)
		ret = -EIO;
	farswap_ctrl_put_call(donor, i);
	return ret;
}

/*
 * Send a request and wait for its reply; checks the reply's type.  With
 * @handshake, on a session still connecting (INFO_REQ).
 */
static int farswap_ctrl_request(struct farswap_donor *donor,
				union farswap_msg *req,
				union farswap_msg *reply, bool handshake)
{
	unsigned int want = req->hdr.type + 1;	/* every *_REP follows its *_REQ */
	int ret;

	ret = farswap_ctrl_xfer(donor, req, reply, NULL, handshake);
	if (ret)
		return ret;
	if (reply->hdr.type != want) {
		farswap_donor_pr_err(donor, " answered %s with %s; dropping the connection\n",
				     farswap_msg_type_str(req->hdr.type),
				     farswap_msg_type_str(reply->hdr.type));
		farswap_donor_error(donor, "protocol violation");
		return -EPROTO;
	}
	return 0;
}

int farswap_ctrl_call(struct farswap_donor *donor, union farswap_msg *req,
		      union farswap_msg *reply)
{
	return farswap_ctrl_request(donor, req, reply, false);
}

/* Send a message that has no reply (a RECLAIM_REP). */
int farswap_ctrl_send(struct farswap_donor *donor, union farswap_msg *msg)
{
	return farswap_ctrl_xfer(donor, msg, NULL, NULL, false);
}

/* Ask for a slab; on success @rs describes it (its slots are the caller's). */
int farswap_donor_alloc_slab(struct farswap_donor *donor, u32 serial,
			     u64 slab_bytes, struct farswap_rslab *rs)
{
	union farswap_msg req, rep;
	u32 gen;
	int ret;

	farswap_msg_init(&req, FARSWAP_MSG_SLAB_ALLOC_REQ, donor->version, 0);
	req.alloc_req.slab_size = cpu_to_le64(slab_bytes);
	req.alloc_req.host_slab = cpu_to_le64(serial);
	ret = farswap_ctrl_xfer(donor, &req, &rep, &gen, false);
	if (ret)
		return ret;
	if (rep.hdr.type != FARSWAP_MSG_SLAB_ALLOC_REP) {
		farswap_donor_error(donor, "answered SLAB_ALLOC_REQ with another type");
		return -EPROTO;
	}
	ret = farswap_status_errno(le16_to_cpu(rep.alloc_rep.status));
	if (ret)
		return ret;
	if (le64_to_cpu(rep.alloc_rep.length) != slab_bytes) {
		farswap_donor_error(donor, "granted a slab of the wrong size");
		return -EPROTO;
	}
	rs->donor = donor;
	rs->gen = gen;
	rs->remote_id = le32_to_cpu(rep.alloc_rep.slab_id);
	rs->addr = le64_to_cpu(rep.alloc_rep.addr);
	rs->rkey = le32_to_cpu(rep.alloc_rep.rkey);
	rs->resume = donor->features & FARSWAP_FEAT_RESUME ?
		     le64_to_cpu(rep.alloc_rep.resume) : 0;
	return 0;
}

/*
 * Ask the donor, restarted, for slab @rs of an earlier session back with
 * its content.  On success the new address, rkey and token are in @got
 * (its remote_id, addr, rkey, resume) and the session it was granted in
 * in @gen; @rs itself is the caller's to change.
 */
int farswap_donor_resume_slab(struct farswap_donor *donor,
			      const struct farswap_rslab *rs, u64 slab_bytes,
			      struct farswap_rslab *got, u32 *gen)
{
	union farswap_msg req, rep;
	int ret;

	farswap_msg_init(&req, FARSWAP_MSG_SLAB_RESUME_REQ, donor->version, 0);
	req.resume_req.slab_id = cpu_to_le32(rs->remote_id);
	req.resume_req.resume = cpu_to_le64(rs->resume);
	req.resume_req.slab_size = cpu_to_le64(slab_bytes);
	ret = farswap_ctrl_xfer(donor, &req, &rep, gen, false);
	if (ret)
		return ret;
	if (rep.hdr.type != FARSWAP_MSG_SLAB_RESUME_REP) {
		farswap_donor_error(donor, "answered SLAB_RESUME_REQ with another type");
		return -EPROTO;
	}
	ret = farswap_status_errno(le16_to_cpu(rep.resume_rep.status));
	if (ret)
		return ret;
	if (le32_to_cpu(rep.resume_rep.slab_id) != rs->remote_id ||
	    le64_to_cpu(rep.resume_rep.length) != slab_bytes) {
		farswap_donor_error(donor, "resumed another slab, or one of the wrong size");
		return -EPROTO;
	}
	got->remote_id = rs->remote_id;
	got->addr = le64_to_cpu(rep.resume_rep.addr);
	got->rkey = le32_to_cpu(rep.resume_rep.rkey);
	got->resume = le64_to_cpu(rep.resume_rep.resume);
	return 0;
}

int farswap_donor_free_slab(struct farswap_donor *donor, u32 remote_id)
{
	union farswap_msg req, rep;
	int ret;

	farswap_msg_init(&req, FARSWAP_MSG_SLAB_FREE_REQ, donor->version, 0);
	req.free_req.slab_id = cpu_to_le32(remote_id);
	ret = farswap_ctrl_call(donor, &req, &rep);
	if (ret)
		return ret;
	return farswap_status_errno(le16_to_cpu(rep.free_rep.status));
}

/*
 * Detach: every slab of the session is given back for good, so that the
 * donor keeps none of them for a resume when the session ends
 * (FARSWAP_FEAT_KEEP).  Best effort: a donor that does not hear it keeps
 * them for its resume grace, then frees them; nothing is lost either way.
 */
void farswap_donor_goodbye(struct farswap_donor *donor)
{
	union farswap_msg req, rep;
	int ret;

	if (!(donor->features & FARSWAP_FEAT_KEEP) ||
	    farswap_donor_state(donor) != FARSWAP_DONOR_LIVE)
		return;
	farswap_msg_init(&req, FARSWAP_MSG_SLAB_FREE_REQ, donor->version, 0);
	req.free_req.flags = cpu_to_le32(FARSWAP_FREE_SESSION);
	ret = farswap_ctrl_call(donor, &req, &rep);
	if (!ret)
		ret = farswap_status_errno(le16_to_cpu(rep.free_rep.status));
	if (ret && ret != -ENOTCONN)
		farswap_donor_pr_warn(donor, ": giving its slabs back failed (%d); the donor frees them after its resume grace\n",
				      ret);
}

/*
 * The donor's failure domain, asked once per session right after the
 * control QP is established.  A donor that does not speak INFO is a
 * domain of its own, named after its id (or, without one, its address).
 * A donor that does not answer in ctrl_timeout_ms fails the connect.
 */
int farswap_donor_query_info(struct farswap_donor *donor)
{
	char name[FARSWAP_DOMAIN_LEN + 1];
	union farswap_msg req, rep;
	size_t n;
	int ret;

	if (!(donor->features & FARSWAP_FEAT_INFO)) {
		/* The id as farswapd shows it: its text, else hex. */
		n = farswap_domain_len(donor->donor_id, FARSWAP_ID_LEN);
		if (n)
			snprintf(name, sizeof(name), "donor:%.*s", (int)n,
				 donor->donor_id);
		else if (memchr_inv(donor->donor_id, 0, FARSWAP_ID_LEN))
			snprintf(name, sizeof(name), "donor:%*phN",
				 (int)min_t(size_t, FARSWAP_ID_LEN,
					    (sizeof(name) - 7) / 2),
				 donor->donor_id);
		else
			snprintf(name, sizeof(name), "donor:%.26s", donor->name);
		farswap_dev_set_domain(donor, name);
		return 0;
	}
	farswap_msg_init(&req, FARSWAP_MSG_INFO_REQ, donor->version, 0);
	/* Asked while connecting: the domain is known before placement. */
	ret = farswap_ctrl_request(donor, &req, &rep, true);
	if (ret) {
		farswap_donor_set_error(donor, "%s did not answer INFO_REQ (%d)",
					donor->name, ret);
		return ret;
	}
	/* farswap_msg_check() passed it: 1 to 32 printable characters. */
	n = farswap_domain_len(rep.info_rep.domain,
			       sizeof(rep.info_rep.domain));
	memcpy(name, rep.info_rep.domain, n);
	name[n] = '\0';
	if (strcmp(name, donor->domain))
		farswap_donor_pr_info(donor, " is in failure domain %s\n",
				      name);
	farswap_dev_set_domain(donor, name);
	return 0;
}

/* Refresh the donor's free slab count (placement asks before choosing). */
int farswap_donor_query_stats(struct farswap_donor *donor)
{
	union farswap_msg req, rep;

	farswap_msg_init(&req, FARSWAP_MSG_STATS_REQ, donor->version, 0);
	return farswap_ctrl_call(donor, &req, &rep);
}
