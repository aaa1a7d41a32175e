/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The authentication messages (handshake.c), for the message dispatch
 * alone (dispatch.c): nothing else includes this.  Each returns 0, or a
 * negative errno when the session was refused or closed because of the
 * message.
 */
#ifndef FSD_HANDSHAKE_H
#define FSD_HANDSHAKE_H

#include <stdint.h>

#include "donor.h"

int fsd_handle_auth_kx_req(struct fsd_donor *d, struct fsd_session *s,
			   const union farswap_msg *m, uint64_t now_ms);
int fsd_handle_auth_req(struct fsd_donor *d, struct fsd_session *s,
			const union farswap_msg *m, uint64_t now_ms);
int fsd_handle_auth_proof(struct fsd_donor *d, struct fsd_session *s,
			  const union farswap_msg *m, uint64_t now_ms);
int fsd_deny_unauthenticated(struct fsd_donor *d, struct fsd_session *s,
			     const union farswap_msg *m, uint64_t now_ms);

#endif /* FSD_HANDSHAKE_H */
