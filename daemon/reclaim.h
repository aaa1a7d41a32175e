/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host's answer to a RECLAIM_REQ (reclaim.c), for the message dispatch
 * alone (dispatch.c): nothing else includes this.  Returns 0: a refusal or an
 * answer to no request is logged, not held against the session.
 */
#ifndef FSD_RECLAIM_H
#define FSD_RECLAIM_H

#include <stdint.h>

#include "donor.h"

int fsd_handle_reclaim_rep(struct fsd_donor *d, struct fsd_session *s,
			   const union farswap_msg *m, uint64_t now);

#endif /* FSD_RECLAIM_H */
