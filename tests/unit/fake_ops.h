/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct fsd_ops without RDMA or real memory, for the unit tests and the
 * fuzzer: records what the donor logic asked for, and fails on request.
 */
#ifndef FAKE_OPS_H
#define FAKE_OPS_H

#include "donor.h"

#define FAKE_SENT_MAX 256
#define FAKE_PENDING_MAX 64

struct fake {
	unsigned int grants, revokes, releases, populates, closes, cancels;
	uint64_t zeroed;
	int fail_grant, fail_send, fail_populate, fail_random, fail_revoke;
	/* Grants answer -EINPROGRESS and wait for fake_grant_finish(). */
	int async_grant;
	unsigned int nr_pending;
	struct fsd_slab *pending[FAKE_PENDING_MAX];
	unsigned int nr_sent;
	struct fsd_session *sent_to[FAKE_SENT_MAX];
	union farswap_msg sent[FAKE_SENT_MAX];
	unsigned int sent_flags[FAKE_SENT_MAX];
	size_t sent_len[FAKE_SENT_MAX];		/* a tagged one's is longer */
	uint64_t rand_state;
	uint32_t next_rkey;
};

extern const struct fsd_ops fake_ops;

/* A donor with @nr slabs of @slab_size, every slab populated (fake mem). */
int fake_donor_init(struct fsd_donor *d, struct fake *f, uint32_t nr,
		    uint64_t slab_size);
void fake_donor_exit(struct fsd_donor *d);
/* A connected control session from @host ("host-a"), version 1. */
struct fsd_session *fake_session(struct fsd_donor *d, const char *host,
				 uint16_t nr_io);
const union farswap_msg *fake_last(const struct fake *f);
/* The peer every fake session comes from: 10.0.0.1. */
const struct fsd_addr *fake_peer(void);
/* The worker is done with the oldest pending grant: @ret, or success. */
int fake_grant_finish(struct fsd_donor *d, int ret);

#endif /* FAKE_OPS_H */
