// SPDX-License-Identifier: GPL-2.0
/*
 * Host authentication: X25519 (lib/crypto's curve25519) and HMAC-SHA256
 * (the kernel crypto API), the keys from the kernel keyring (see auth.h).
 */
#include <crypto/algapi.h>
#include <crypto/curve25519.h>
#include <crypto/hash.h>
#include <keys/user-type.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/key.h>
#include <linux/random.h>
#include <linux/string.h>

#include "auth.h"

/* Constant time: how many bytes match says nothing. */
bool farswap_auth_mac_equal(const u8 *a, const u8 *b)
{
	return !crypto_memneq(a, b, FARSWAP_AUTH_MAC_LEN);
}

/* As farswap_auth_mac_equal(), for a control message's tag. */
bool farswap_auth_tag_equal(const u8 *a, const u8 *b)
{
	return !crypto_memneq(a, b, FARSWAP_KX_TAG_LEN);
}

/**
 * farswap_auth_pair_key - the key a host and a pinned donor both prove
 * @donor_key: the donor's secret (its farswapd donor-key-file)
 * @host_key: this host's secret (key=)
 * @pair: receives HMAC-SHA256(@donor_key, pair label || @host_key), not
 *        prepared (farswap_auth_key_prepare() makes its transform)
 *
 * At attach, in process context (the transform is allocated here and
 * freed before return).  See "Pinned donors" in farswap_proto.h.
 *
 * Return: 0, -ENOKEY without both keys, or the crypto API's error (then
 * @pair is zero).
 */
int farswap_auth_pair_key(const struct farswap_auth_key *donor_key,
			  const struct farswap_auth_key *host_key,
			  struct farswap_auth_key *pair)
{
	u8 label[FARSWAP_AUTH_LABEL_LEN];
	struct crypto_shash *tfm;
	int ret;

	memzero_explicit(pair, sizeof(*pair));
	if (!donor_key->len || !host_key->len)
		return -ENOKEY;
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, donor_key->bytes, donor_key->len);
	if (!ret) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		farswap_auth_pair_label(label);
		ret = crypto_shash_init(desc) ?:
		      crypto_shash_update(desc, label, sizeof(label)) ?:
		      crypto_shash_update(desc, host_key->bytes,
					  host_key->len) ?:
		      crypto_shash_final(desc, pair->bytes);
		shash_desc_zero(desc);
	}
	crypto_free_shash(tfm);
	if (ret) {
		memzero_explicit(pair, sizeof(*pair));
		return ret;
	}
	pair->len = FARSWAP_AUTH_MAC_LEN;
	return 0;
}

/* HMAC-SHA256 of one transcript variant under @tfm's key (a prk). */
static int farswap_kx_mac(struct crypto_shash *tfm,
			  const struct farswap_kx_transcript *base,
			  const char *label, u8 expand, u8 out[32])
{
	struct farswap_kx_transcript t = *base;

	memset(t.label, 0, sizeof(t.label));
	memcpy(t.label, label, strlen(label));
	t.expand = expand;
	return crypto_shash_tfm_digest(tfm, (const u8 *)&t, sizeof(t), out);
}

/* Key @tfm with the prk of @key and @dh (HKDF-Extract, salt @key). */
static int farswap_kx_extract(const struct farswap_auth_key *key,
			      struct crypto_shash *tfm,
			      const u8 dh[CURVE25519_KEY_SIZE])
{
	u8 prk[32];
	int ret;

	if (!key->len || !key->tfm)
		return -ENOKEY;
	ret = crypto_shash_tfm_digest(key->tfm, dh, CURVE25519_KEY_SIZE, prk);
	if (!ret)
		ret = crypto_shash_setkey(tfm, prk, sizeof(prk));
	memzero_explicit(prk, sizeof(prk));
	return ret;
}

/**
 * farswap_kx_keypair - a key pair for one handshake
 * @priv: receives the private key (wipe it when the handshake is done)
 * @pub: receives its X25519 public key
 *
 * Return: 0, or -EINVAL in the (never seen) case of a degenerate key.
 */
int farswap_kx_keypair(u8 priv[FARSWAP_KX_PUB_LEN], u8 pub[FARSWAP_KX_PUB_LEN])
{
	curve25519_generate_secret(priv);
	return curve25519_generate_public(pub, priv) ? 0 : -EINVAL;
}

/**
 * farswap_kx_answer - check the donor's AUTH_KX_CHAL, make our proof
 * @keys: the secrets the donor may prove (as farswap_auth_answer())
 * @nr_keys: how many, at least one
 * @tfm: an HMAC-SHA256 transform of this donor's own: keyed with the
 *       session key on success
 * @priv: this handshake's private key
 * @t: the transcript (its label and expand are set here)
 * @donor_mac: the donor's MAC, from its AUTH_KX_CHAL
 * @host_mac: receives the AUTH_PROOF MAC, only when the donor's is right
 *
 * See "Session keys" in farswap_proto.h.  The X25519 secret is computed
 * once; each key is tried with it, all of them whichever matches.  At
 * handshake time (process context): nothing is allocated.
 *
 * Return: the index of the key the donor proved, with @tfm keyed with the
 * session key; -EACCES when it proved none (@host_mac zero), -EINVAL when
 * the donor's public key is of low order, or the crypto API's error.
 */
int farswap_kx_answer(const struct farswap_auth_key *keys,
		      unsigned int nr_keys, struct crypto_shash *tfm,
		      const u8 priv[FARSWAP_KX_PUB_LEN],
		      const struct farswap_kx_transcript *t,
		      const u8 donor_mac[FARSWAP_AUTH_MAC_LEN],
		      u8 host_mac[FARSWAP_AUTH_MAC_LEN])
{
	u8 dh[CURVE25519_KEY_SIZE], want[32], session_key[32];
	int found = -EACCES, ret = 0;
	unsigned int i;

	memset(host_mac, 0, FARSWAP_AUTH_MAC_LEN);
	if (!curve25519(dh, priv, t->donor_pub))
		return -EINVAL;
	for (i = 0; i < nr_keys && !ret; i++) {
		ret = farswap_kx_extract(&keys[i], tfm, dh) ?:
		      farswap_kx_mac(tfm, t, FARSWAP_KX_LABEL_DONOR, 0, want);
		if (!ret && farswap_auth_mac_equal(want, donor_mac) &&
		    found < 0)
			found = i;
	}
	if (!ret && found >= 0)
		ret = farswap_kx_extract(&keys[found], tfm, dh) ?:
		      farswap_kx_mac(tfm, t, FARSWAP_KX_LABEL_HOST, 0,
				     host_mac) ?:
		      farswap_kx_mac(tfm, t, FARSWAP_KX_LABEL_SESSION, 1,
				     session_key) ?:
		      crypto_shash_setkey(tfm, session_key,
					  sizeof(session_key));
	memzero_explicit(dh, sizeof(dh));
	memzero_explicit(want, sizeof(want));
	memzero_explicit(session_key, sizeof(session_key));
	if (ret) {
		memset(host_mac, 0, FARSWAP_AUTH_MAC_LEN);
		return ret;
	}
	return found;
}

/**
 * farswap_kx_tag - the tag of a control message (FARSWAP_FEAT_KX)
 * @tfm: keyed with the session key (farswap_kx_answer())
 * @dir: 'H' for a message this host sends, 'D' for one from the donor
 * @seq: tagged messages that side sent before it
 * @msg: the message, @len bytes without its tag
 * @len: its length
 * @tag: receives the tag
 *
 * Any context: the hash state is on the stack.
 *
 * Return: 0, or the crypto API's error.
 */
int farswap_kx_tag(struct crypto_shash *tfm, char dir, u64 seq,
		   const void *msg, size_t len, u8 tag[FARSWAP_KX_TAG_LEN])
{
	struct farswap_kx_tag_input in;
	u8 mac[32];
	int ret;

	SHASH_DESC_ON_STACK(desc, tfm);

	desc->tfm = tfm;
	farswap_kx_tag_input_init(&in, dir, seq);
	ret = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, (const u8 *)&in, sizeof(in)) ?:
	      crypto_shash_update(desc, msg, len) ?:
	      crypto_shash_final(desc, mac);
	shash_desc_zero(desc);
	memcpy(tag, mac, FARSWAP_KX_TAG_LEN);
	memzero_explicit(mac, sizeof(mac));
	return ret;
}

/* An I/O QP's join_tag under the session key @tfm holds. */
int farswap_kx_join_tag(struct crypto_shash *tfm, u64 session,
			const u8 *host_id, u8 tag[FARSWAP_KX_JOIN_TAG_LEN])
{
	struct farswap_kx_join_input in;
	u8 mac[32];
	int ret;

	farswap_kx_join_input_init(&in, session, host_id);
	ret = crypto_shash_tfm_digest(tfm, (const u8 *)&in, sizeof(in), mac);
	memcpy(tag, mac, FARSWAP_KX_JOIN_TAG_LEN);
	memzero_explicit(mac, sizeof(mac));
	return ret;
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
