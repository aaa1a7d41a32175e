/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs layer (verbs.c): per-host RDMA state (the session's
 * protection domain, its completion queue and channel, the control QP's
 * message buffers, and one rdma_cm id per queue pair), and the fsd_ops
 * the donor logic reaches memory and the fabric through.
 */
#ifndef FSD_VERBS_H
#define FSD_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "donor.h"
#include "server.h"
#include "worker.h"

#define FSD_SEND_SLOTS (2 * FARSWAP_CTRL_DEPTH)
#define FSD_RECV_BUF (2 * FARSWAP_MSG_MAX)	/* oversize messages are logged */

struct fsd_conn {
	struct fsd_conn *next;
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	struct fsd_session *s;
	unsigned int qtype;
	unsigned int qid;
	bool has_qp;
	bool own_qp;		/* created and moved to RTS here, not by librdmacm */
	bool established;
};

struct fsd_rdma {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct fsd_watch watch;
	bool in_epoll;
	struct fsd_conn *conns;
	struct fsd_conn *ctrl;
	uint8_t *bufs;		/* recv slots, then send slots */
	struct ibv_mr *buf_mr;
	uint64_t send_busy;	/* one bit per send slot */
	uint64_t send_notice;	/* slots carrying an unsolicited notice */
	uint64_t send_revoke;	/* slots carrying a SLAB_REVOKE */
};

struct fsd_conn_params {
	uint8_t initiator_depth;
	uint8_t responder_resources;
};

int fsd_host_accept_ctrl(struct fsd_server *srv, struct rdma_cm_id *id,
			 struct fsd_session *s,
			 const struct fsd_conn_params *cp);
int fsd_host_accept_io(struct fsd_server *srv, struct rdma_cm_id *id,
		       struct fsd_session *s, unsigned int qid,
		       const struct fsd_conn_params *cp);
void fsd_host_reject(struct rdma_cm_id *id, unsigned int reason);
void fsd_host_cq_ready(struct fsd_server *srv, struct fsd_session *s);
void fsd_host_destroy(struct fsd_server *srv, struct fsd_session *s);
void fsd_peer_name(struct rdma_cm_id *id, char *buf, size_t len);
const struct fsd_addr *fsd_peer_addr(struct rdma_cm_id *id,
				     struct fsd_addr *addr);
void fsd_host_grant_reaped(struct fsd_server *srv, struct fsd_job *job);

extern const struct fsd_ops fsd_verbs_ops;

#endif /* FSD_VERBS_H */
