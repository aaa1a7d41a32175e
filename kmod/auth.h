/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host authentication: the host's half of the handshake of
 * include/farswap_proto.h ("Authentication", "Pinned donors", "Session
 * keys"): an X25519 exchange, MACs under a key derived from it and the
 * secret both prove, a session key, the tags of control messages and the
 * join tags of I/O queue pairs.  The secrets come from the
 * kernel keyring, a key of type logon (userspace cannot read it back),
 * named at attach with key=DESCRIPTION, as NVMe in-band authentication
 * keeps its secrets.  It is copied into the device and wiped at detach;
 * it never appears in logs, sysfs or stats.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_AUTH_H
#define FARSWAP_AUTH_H

#include <linux/types.h>

#include "farswap_proto.h"

/* A logon key's description: "prefix:name". */
#define FARSWAP_KEY_DESC_LEN	128
/* Donor keys one device may pin (donor_key=, given once for each). */
#define FARSWAP_DONOR_KEYS_MAX	8

struct crypto_shash;

struct farswap_auth_key {
	u8 bytes[FARSWAP_AUTH_KEY_MAX];
	unsigned int len;		/* 0: no key, no authentication */
	/*
	 * HMAC-SHA256 keyed with @bytes, made once at attach: a handshake
	 * (a reconnect, under memalloc_noio) allocates nothing and loads
	 * no module.  Used by concurrent handshakes: the hash state lives
	 * in each call's descriptor.
	 */
	struct crypto_shash *tfm;
};

bool farswap_auth_mac_equal(const u8 *a, const u8 *b);
bool farswap_auth_tag_equal(const u8 *a, const u8 *b);
int farswap_auth_pair_key(const struct farswap_auth_key *donor_key,
			  const struct farswap_auth_key *host_key,
			  struct farswap_auth_key *pair);
int farswap_kx_keypair(u8 priv[FARSWAP_KX_PUB_LEN], u8 pub[FARSWAP_KX_PUB_LEN]);
int farswap_kx_answer(const struct farswap_auth_key *keys,
		      unsigned int nr_keys, struct crypto_shash *tfm,
		      const u8 priv[FARSWAP_KX_PUB_LEN],
		      const struct farswap_kx_transcript *t,
		      const u8 donor_mac[FARSWAP_AUTH_MAC_LEN],
		      u8 host_mac[FARSWAP_AUTH_MAC_LEN]);
int farswap_kx_tag(struct crypto_shash *tfm, char dir, u64 seq,
		   const void *msg, size_t len, u8 tag[FARSWAP_KX_TAG_LEN]);
int farswap_kx_join_tag(struct crypto_shash *tfm, u64 session,
			const u8 *host_id, u8 tag[FARSWAP_KX_JOIN_TAG_LEN]);
bool farswap_key_desc_valid(const char *desc);
int farswap_auth_key_lookup(const char *desc, struct farswap_auth_key *key,
			    char *err, size_t errlen);
int farswap_auth_key_prepare(struct farswap_auth_key *key);
void farswap_auth_key_clear(struct farswap_auth_key *key);
void farswap_auth_nonce(u8 nonce[FARSWAP_AUTH_NONCE_LEN]);

#endif /* FARSWAP_AUTH_H */
