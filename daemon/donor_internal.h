/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What donor.c lends the files that hold the rest of the donor logic
 * (dispatch.c, handshake.c, reclaim.c): not part of the interface donor.h
 * gives the daemon, the tests and the fuzzer, so nothing else includes
 * this.  donor.c calls none of those files: they stand on it.
 */
#ifndef FSD_DONOR_INTERNAL_H
#define FSD_DONOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "donor.h"

/* Post @m on @s's control QP; a failure closes @s.  0 or -errno. */
int fsd_send_msg(struct fsd_donor *d, struct fsd_session *s,
		 const union farswap_msg *m, unsigned int flags);
uint32_t fsd_live_sessions(const struct fsd_donor *d, bool authenticated);
bool fsd_unregister_slab(struct fsd_donor *d, struct fsd_slab *slab);
void fsd_slab_leaves(struct fsd_session *s, struct fsd_slab *slab);
void fsd_send_notices(struct fsd_donor *d, uint64_t now);
uint32_t fsd_host_excess(const struct fsd_donor *d,
			 const struct fsd_session *s);
/* reclaim.c's, for drain.c: may @slab be asked back; ask for it. */
uint32_t fsd_session_asking(const struct fsd_session *s);
bool fsd_can_reclaim(const struct fsd_slab *slab, uint64_t now);
int fsd_reclaim_slab(struct fsd_donor *d, struct fsd_session *s,
		     struct fsd_slab *slab, uint64_t now);
/* The requests donor.c answers, for dispatch.c. */
int fsd_handle_alloc(struct fsd_donor *d, struct fsd_session *s,
		     const union farswap_msg *m, uint64_t now);
int fsd_handle_free(struct fsd_donor *d, struct fsd_session *s,
		    const union farswap_msg *m);
int fsd_handle_resume(struct fsd_donor *d, struct fsd_session *s,
		      const union farswap_msg *m, uint64_t now);
int fsd_send_grant_rep(struct fsd_donor *d, struct fsd_session *s,
		       uint64_t cookie, unsigned int st,
		       const struct fsd_slab *slab, bool resume,
		       uint32_t refused_id);
int fsd_new_resume_token(struct fsd_donor *d, const struct fsd_session *s,
			 uint64_t *token);
int fsd_start_grant(struct fsd_donor *d, struct fsd_session *s,
		    struct fsd_slab *slab, uint64_t cookie, uint64_t token);
/* @out has room for FSD_NAME_LEN. */
void fsd_format_host_id(const uint8_t *id, char *out);
void fsd_fill_stats(const struct fsd_donor *d, const struct fsd_session *s,
		    union farswap_msg *r);

/* ms since @then, 0 if the clock says it is in the future. */
static inline uint64_t ms_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

#endif /* FSD_DONOR_INTERNAL_H */
