/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The donor's half of host authentication: the MAC of the handshake
 * (include/farswap_proto.h, "Authentication") and the key file.  No
 * verbs, no sessions: donor.c runs the handshake, this computes.
 */
#ifndef FSD_AUTH_H
#define FSD_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "farswap_proto.h"

/* Longest name of a host's key file: its id in hex, with UUID dashes. */
#define FSD_HOST_KEY_NAME_MAX (2 * FARSWAP_ID_LEN + 4)

struct fsd_auth_key {
	uint8_t bytes[FARSWAP_AUTH_KEY_MAX];
	size_t len;			/* 0: no key, no authentication */
};

/*
 * HMAC-SHA256(@key, farswap_auth_mac_input of @role and the rest) into
 * @mac.  Returns 0, or -EIO when libcrypto fails.
 */
int fsd_auth_mac(const struct fsd_auth_key *key, enum farswap_auth_role role,
		 const uint8_t *host_nonce, const uint8_t *donor_nonce,
		 uint64_t session, const uint8_t *host_id,
		 const uint8_t *donor_id, uint8_t mac[FARSWAP_AUTH_MAC_LEN]);

/* Constant-time comparison of two MACs. */
bool fsd_auth_mac_equal(const uint8_t *a, const uint8_t *b);

/*
 * Read the secret of @path into @key: the FARSWAP_AUTH_KEY_LEN bytes of
 * the key file, as common/keyfile.h reads it for farswapctl too: refuses
 * a file others may read or its group may write, a symbolic link, and
 * anything but a well-formed key (the reason in @err).  Returns 0, or
 * -errno with why in @err.  Never puts any byte of the secret in @err.
 */
int fsd_auth_load_key(const char *path, struct fsd_auth_key *key, char *err,
		      size_t errlen);

/*
 * The secret of one host: the file @name (the host's id as farswapd logs
 * it) in the directory @dir (host-keys).  @name must be a safe file name
 * (letters, digits, '.', '_', '-'; not starting with '.'); @dir must be a
 * directory owned by this user or root that group and others cannot
 * write; the file is checked as fsd_auth_load_key() checks key-file.
 * Returns 0, -ENOENT when the host has no file there, or another -errno
 * with why in @err (never a byte of the secret).
 */
int fsd_auth_load_host_key(const char *dir, const char *name,
			   struct fsd_auth_key *key, char *err, size_t errlen);

/* Can @name be a file in host-keys? */
bool fsd_auth_host_key_name_ok(const char *name);

/*
 * The pair key of @donor_key and @host_key (include/farswap_proto.h,
 * "Pinned donors") into @pair.  Returns 0, -ENOKEY without both keys,
 * or -EIO when libcrypto fails (@pair then empty).
 */
int fsd_auth_pair_key(const struct fsd_auth_key *donor_key,
		      const struct fsd_auth_key *host_key,
		      struct fsd_auth_key *pair);

/*
 * Session keys (include/farswap_proto.h, "Session keys").
 *
 * fsd_kx_public(): the X25519 public key of the private key @priv (32
 * random bytes, clamped by X25519 itself).
 * fsd_kx_shared(): X25519(@priv, @peer_pub); -EINVAL for a peer key of
 * low order (an all-zero result).
 * fsd_kx_derive(): from the key @k both prove, @dh and the transcript
 * @t (its label and expand ignored): both MACs and the session key.
 * fsd_kx_tag(): a tagged message's tag, of @len bytes of @msg sent by
 * @dir ('H' or 'D') after @seq others.
 * fsd_kx_join_tag(): an I/O QP's join_tag.
 * Each returns 0, or -EIO when libcrypto fails.
 */
int fsd_kx_public(const uint8_t priv[FARSWAP_KX_PUB_LEN],
		  uint8_t pub[FARSWAP_KX_PUB_LEN]);
int fsd_kx_shared(const uint8_t priv[FARSWAP_KX_PUB_LEN],
		  const uint8_t peer_pub[FARSWAP_KX_PUB_LEN],
		  uint8_t dh[FARSWAP_KX_PUB_LEN]);
int fsd_kx_derive(const struct fsd_auth_key *k,
		  const uint8_t dh[FARSWAP_KX_PUB_LEN],
		  const struct farswap_kx_transcript *t,
		  uint8_t donor_mac[FARSWAP_AUTH_MAC_LEN],
		  uint8_t host_mac[FARSWAP_AUTH_MAC_LEN],
		  uint8_t session_key[FARSWAP_KX_KEY_LEN]);
int fsd_kx_tag(const uint8_t key[FARSWAP_KX_KEY_LEN], char dir, uint64_t seq,
	       const void *msg, size_t len, uint8_t tag[FARSWAP_KX_TAG_LEN]);
int fsd_kx_join_tag(const uint8_t key[FARSWAP_KX_KEY_LEN], uint64_t session,
		    const uint8_t *host_id,
		    uint8_t tag[FARSWAP_KX_JOIN_TAG_LEN]);

/*
 * The host's side, for the hosts built on this file (tests/tools/fsclient,
 * the unit tests, the fuzzer): from the host's private key @priv, the
 * transcript @t (the donor's public key in it) and the AUTH_KX_CHAL's
 * @donor_mac, the host's proof and the session key.  Returns 0; -EACCES
 * when the donor's proof does not match @k; -EINVAL for a donor key of
 * low order; -EIO when libcrypto fails.  Nothing is written unless 0.
 */
int fsd_kx_host(const struct fsd_auth_key *k,
		const uint8_t priv[FARSWAP_KX_PUB_LEN],
		const struct farswap_kx_transcript *t,
		const uint8_t donor_mac[FARSWAP_AUTH_MAC_LEN],
		uint8_t host_mac[FARSWAP_AUTH_MAC_LEN],
		uint8_t session_key[FARSWAP_KX_KEY_LEN]);

/* Forget the secret (explicit_bzero). */
void fsd_auth_key_clear(struct fsd_auth_key *key);

#endif /* FSD_AUTH_H */
