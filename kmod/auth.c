// SPDX-License-Identifier: GPL-2.0
/*
 * Host authentication: HMAC-SHA256 with the kernel crypto API, the key
 * from the kernel keyring (see auth.h).
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <keys/user-type.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/key.h>
#include <linux/random.h>
#include <linux/string.h>

#include "auth.h"

/**
 * farswap_auth_mac - the MAC of one side of the handshake
 * @key: the shared secret
 * @role: whose MAC: the donor's (AUTH_CHAL) or the host's (AUTH_PROOF)
 * @host_nonce: the host's nonce (AUTH_REQ)
 * @donor_nonce: the donor's nonce (AUTH_CHAL)
 * @session: the session token of the donor's conn_rep
 * @host_id: the host's identity, as sent in the conn_req
 * @donor_id: the donor's identity, as sent in the conn_rep
 * @mac: the result
 *
 * HMAC-SHA256(@key, struct farswap_auth_mac_input), with the transform
 * farswap_auth_key_prepare() made.  Allocates nothing.
 *
 * Return: 0, -ENOKEY without a prepared key, or the crypto API's error.
 */
int farswap_auth_mac(const struct farswap_auth_key *key,
		     enum farswap_auth_role role, const u8 *host_nonce,
		     const u8 *donor_nonce, u64 session, const u8 *host_id,
		     const u8 *donor_id, u8 mac[FARSWAP_AUTH_MAC_LEN])
{
	struct farswap_auth_mac_input in;

	if (!key->len || !key->tfm)
		return -ENOKEY;
	farswap_auth_mac_input_init(&in, role, host_nonce, donor_nonce,
				    session, host_id, donor_id);
	return crypto_shash_tfm_digest(key->tfm, (const u8 *)&in, sizeof(in),
				       mac);
}

/* Constant time: how many bytes match says nothing. */
bool farswap_auth_mac_equal(const u8 *a, const u8 *b)
{
	return !crypto_memneq(a, b, FARSWAP_AUTH_MAC_LEN);
}

/**
 * farswap_auth_answer - check the donor's proof, and make ours
 * @key: the device's secret
 * @host_nonce: the nonce this host sent in AUTH_REQ
 * @chal: the donor's AUTH_CHAL
 * @session: the session token of the donor's conn_rep
 * @host_id: this host's identity
 * @donor_id: the donor's, from its conn_rep
 * @host_mac: receives the AUTH_PROOF MAC, only when the donor's is right
 *
 * Return: 0; -EACCES when the donor's MAC is wrong (it does not hold the
 * key: @host_mac is left zero, so nothing is ever sent to it); or the
 * crypto API's error.
 */
int farswap_auth_answer(const struct farswap_auth_key *key,
			const u8 *host_nonce,
			const struct farswap_auth_chal *chal, u64 session,
			const u8 *host_id, const u8 *donor_id,
			u8 host_mac[FARSWAP_AUTH_MAC_LEN])
{
	u8 want[FARSWAP_AUTH_MAC_LEN];
	int ret;

	memset(host_mac, 0, FARSWAP_AUTH_MAC_LEN);
	ret = farswap_auth_mac(key, FARSWAP_AUTH_DONOR, host_nonce,
			       chal->donor_nonce, session, host_id, donor_id,
			       want);
	if (!ret && !farswap_auth_mac_equal(want, chal->donor_mac))
		ret = -EACCES;
	memzero_explicit(want, sizeof(want));
	if (ret)
		return ret;
	return farswap_auth_mac(key, FARSWAP_AUTH_HOST, host_nonce,
				chal->donor_nonce, session, host_id, donor_id,
				host_mac);
}

/* A fresh nonce, never all zero (the protocol refuses those). */
void farswap_auth_nonce(u8 nonce[FARSWAP_AUTH_NONCE_LEN])
{
	do {
		get_random_bytes(nonce, FARSWAP_AUTH_NONCE_LEN);
	} while (farswap_is_zero(nonce, FARSWAP_AUTH_NONCE_LEN));
}

/* A logon key's description: "prefix:name", printable, no spaces. */
bool farswap_key_desc_valid(const char *desc)
{
	size_t len = strnlen(desc, FARSWAP_KEY_DESC_LEN);
	const char *colon = strchr(desc, ':');
	size_t i;

	if (!len || len >= FARSWAP_KEY_DESC_LEN || !colon || colon == desc ||
	    !colon[1])
		return false;
	for (i = 0; i < len; i++)
		if (!isgraph(desc[i]))
			return false;
	return true;
}

/**
 * farswap_auth_key_prepare - make the keyed HMAC of a key, once
 * @key: a key with its bytes, or none (len 0: nothing to make)
 *
 * At attach, in process context: the allocation may sleep and load the
 * hmac module, which a handshake under memalloc_noio must not.
 *
 * Return: 0, or the crypto API's error (then nothing is left allocated).
 */
int farswap_auth_key_prepare(struct farswap_auth_key *key)
{
	struct crypto_shash *tfm;
	int ret;

	if (!key->len)
		return 0;
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, key->bytes, key->len);
	if (ret) {
		crypto_free_shash(tfm);
		return ret;
	}
	key->tfm = tfm;
	return 0;
}

/* The transform goes too: it holds the key's HMAC pads. */
void farswap_auth_key_clear(struct farswap_auth_key *key)
{
	if (key->tfm)
		crypto_free_shash(key->tfm);
	memzero_explicit(key, sizeof(*key));
}

/**
 * farswap_auth_key_lookup - copy the secret of a logon key
 * @desc: the key's description, as given with key=
 * @key: filled on success
 * @err: a one-line reason on failure, naming @desc, never the secret
 * @errlen: size of @err
 *
 * Looks in the keyrings of the calling process (the one that writes the
 * attach command), as request_key(2) does.
 *
 * Return: 0, or -ENOKEY: missing, revoked, expired, or not exactly
 * FARSWAP_AUTH_KEY_LEN bytes (the decoded secret of a key file, as
 * farswapctl add-key puts it there; not the file's text).
 */
int farswap_auth_key_lookup(const char *desc, struct farswap_auth_key *key,
			    char *err, size_t errlen)
{
	const struct user_key_payload *p;
	struct key *k;
	int ret = 0;

	/* @key is the caller's to fill: nothing in it is ours to free. */
	memzero_explicit(key, sizeof(*key));
	k = request_key(&key_type_logon, desc, NULL);
	if (IS_ERR(k)) {
		snprintf(err, errlen,
			 "no logon key '%s' in the keyrings of the attaching process (%ld)",
			 desc, PTR_ERR(k));
		return -ENOKEY;
	}
	down_read(&k->sem);
	p = user_key_payload_locked(k);
	if (!p) {
		snprintf(err, errlen, "logon key '%s' was revoked", desc);
		ret = -ENOKEY;
	} else if (p->datalen != FARSWAP_AUTH_KEY_LEN) {
		snprintf(err, errlen,
			 "logon key '%s' holds %u bytes; the secret must be exactly %u (put a key file's secret there with farswapctl add-key)",
			 desc, p->datalen, FARSWAP_AUTH_KEY_LEN);
		ret = -ENOKEY;
	} else {
		memcpy(key->bytes, p->data, p->datalen);
		key->len = p->datalen;
	}
	up_read(&k->sem);
	key_put(k);
	return ret;
}
