// SPDX-License-Identifier: GPL-2.0
/*
 * HMAC-SHA256 of the authentication handshake (OpenSSL libcrypto), and
 * reading the donor's key file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth.h"
#include "keyfile.h"

int fsd_auth_mac(const struct fsd_auth_key *key, enum farswap_auth_role role,
		 const uint8_t *host_nonce, const uint8_t *donor_nonce,
		 uint64_t session, const uint8_t *host_id,
		 const uint8_t *donor_id, uint8_t mac[FARSWAP_AUTH_MAC_LEN])
{
	struct farswap_auth_mac_input in;
	unsigned int len = 0;
	unsigned char *ret;

	if (!key->len)
		return -ENOKEY;
	farswap_auth_mac_input_init(&in, role, host_nonce, donor_nonce,
				    session, host_id, donor_id);
	ret = HMAC(EVP_sha256(), key->bytes, (int)key->len,
		   (const unsigned char *)&in, sizeof(in), mac, &len);
	if (!ret || len != FARSWAP_AUTH_MAC_LEN)
		return -EIO;
	return 0;
}

int fsd_auth_pair_key(const struct fsd_auth_key *donor_key,
		      const struct fsd_auth_key *host_key,
		      struct fsd_auth_key *pair)
{
	uint8_t in[FARSWAP_AUTH_LABEL_LEN + FARSWAP_AUTH_KEY_MAX];
	unsigned int len = 0;
	unsigned char *ret;

	fsd_auth_key_clear(pair);
	if (!donor_key->len || !host_key->len)
		return -ENOKEY;
	farswap_auth_pair_label(in);
	memcpy(in + FARSWAP_AUTH_LABEL_LEN, host_key->bytes, host_key->len);
	ret = HMAC(EVP_sha256(), donor_key->bytes, (int)donor_key->len, in,
		   FARSWAP_AUTH_LABEL_LEN + host_key->len, pair->bytes, &len);
	explicit_bzero(in, sizeof(in));
	if (!ret || len != FARSWAP_AUTH_MAC_LEN) {
		fsd_auth_key_clear(pair);
		return -EIO;
	}
	pair->len = len;
	return 0;
}

int fsd_kx_public(const uint8_t priv[FARSWAP_KX_PUB_LEN],
		  uint8_t pub[FARSWAP_KX_PUB_LEN])
{
	size_t len = FARSWAP_KX_PUB_LEN;
	EVP_PKEY *key;
	int ok;

	key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv,
					   FARSWAP_KX_PUB_LEN);
	if (!key)
		return -EIO;
	ok = EVP_PKEY_get_raw_public_key(key, pub, &len) == 1 &&
	     len == FARSWAP_KX_PUB_LEN;
	EVP_PKEY_free(key);
	return ok ? 0 : -EIO;
}

int fsd_kx_shared(const uint8_t priv[FARSWAP_KX_PUB_LEN],
		  const uint8_t peer_pub[FARSWAP_KX_PUB_LEN],
		  uint8_t dh[FARSWAP_KX_PUB_LEN])
{
	EVP_PKEY *mine, *peer = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	size_t len = FARSWAP_KX_PUB_LEN;
	int ret = -EIO;

	mine = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv,
					    FARSWAP_KX_PUB_LEN);
	if (mine)
		peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL,
						   peer_pub,
						   FARSWAP_KX_PUB_LEN);
	if (peer)
		ctx = EVP_PKEY_CTX_new(mine, NULL);
	/* OpenSSL refuses a low-order point itself (an all-zero result). */
	if (ctx && EVP_PKEY_derive_init(ctx) == 1 &&
	    EVP_PKEY_derive_set_peer(ctx, peer) == 1)
		ret = EVP_PKEY_derive(ctx, dh, &len) == 1 &&
		      len == FARSWAP_KX_PUB_LEN ? 0 : -EINVAL;
	if (!ret && farswap_is_zero(dh, FARSWAP_KX_PUB_LEN))
		ret = -EINVAL;
	if (ret)
		explicit_bzero(dh, FARSWAP_KX_PUB_LEN);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer);
	EVP_PKEY_free(mine);
	return ret;
}

/* HMAC-SHA256(@key, @a || @b) into @out; 0 or -EIO. */
static int hmac2(const uint8_t *key, size_t keylen, const void *a,
		 size_t alen, const void *b, size_t blen, uint8_t out[32])
{
	uint8_t in[sizeof(struct farswap_kx_transcript) + FARSWAP_MSG_MAX];
	unsigned int len = 0;
	unsigned char *ret;

	if (alen + blen > sizeof(in))
		return -EIO;
	memcpy(in, a, alen);
	if (blen)
		memcpy(in + alen, b, blen);
	ret = HMAC(EVP_sha256(), key, (int)keylen, in, alen + blen, out, &len);
	explicit_bzero(in, sizeof(in));
	return ret && len == 32 ? 0 : -EIO;
}

int fsd_kx_derive(const struct fsd_auth_key *k,
		  const uint8_t dh[FARSWAP_KX_PUB_LEN],
		  const struct farswap_kx_transcript *t,
		  uint8_t donor_mac[FARSWAP_AUTH_MAC_LEN],
		  uint8_t host_mac[FARSWAP_AUTH_MAC_LEN],
		  uint8_t session_key[FARSWAP_KX_KEY_LEN])
{
	struct farswap_kx_transcript in = *t;
	uint8_t prk[32];
	int ret;

	if (!k->len)
		return -ENOKEY;
	/* HKDF-Extract with the proven key as its salt. */
	ret = hmac2(k->bytes, k->len, dh, FARSWAP_KX_PUB_LEN, NULL, 0, prk);
	memset(in.label, 0, sizeof(in.label));
	memcpy(in.label, FARSWAP_KX_LABEL_DONOR, strlen(FARSWAP_KX_LABEL_DONOR));
	in.expand = 0;
	if (!ret)
		ret = hmac2(prk, sizeof(prk), &in, sizeof(in), NULL, 0,
			    donor_mac);
	memset(in.label, 0, sizeof(in.label));
	memcpy(in.label, FARSWAP_KX_LABEL_HOST, strlen(FARSWAP_KX_LABEL_HOST));
	if (!ret)
		ret = hmac2(prk, sizeof(prk), &in, sizeof(in), NULL, 0,
			    host_mac);
	/* HKDF-Expand, one block: info is the transcript, 0x01 its end. */
	memset(in.label, 0, sizeof(in.label));
	memcpy(in.label, FARSWAP_KX_LABEL_SESSION,
	       strlen(FARSWAP_KX_LABEL_SESSION));
	in.expand = 1;
	if (!ret)
		ret = hmac2(prk, sizeof(prk), &in, sizeof(in), NULL, 0,
			    session_key);
	explicit_bzero(prk, sizeof(prk));
	return ret;
}

int fsd_kx_host(const struct fsd_auth_key *k,
		const uint8_t priv[FARSWAP_KX_PUB_LEN],
		const struct farswap_kx_transcript *t,
		const uint8_t donor_mac[FARSWAP_AUTH_MAC_LEN],
		uint8_t host_mac[FARSWAP_AUTH_MAC_LEN],
		uint8_t session_key[FARSWAP_KX_KEY_LEN])
{
	uint8_t dh[FARSWAP_KX_PUB_LEN], dmac[FARSWAP_AUTH_MAC_LEN];
	uint8_t hmac[FARSWAP_AUTH_MAC_LEN], sk[FARSWAP_KX_KEY_LEN];
	int ret;

	ret = fsd_kx_shared(priv, t->donor_pub, dh);
	if (!ret)
		ret = fsd_kx_derive(k, dh, t, dmac, hmac, sk);
	/* The donor proves first: a host that cannot check it stops. */
	if (!ret && !fsd_auth_mac_equal(dmac, donor_mac))
		ret = -EACCES;
	if (!ret) {
		memcpy(host_mac, hmac, sizeof(hmac));
		memcpy(session_key, sk, sizeof(sk));
	}
	explicit_bzero(dh, sizeof(dh));
	explicit_bzero(hmac, sizeof(hmac));
	explicit_bzero(sk, sizeof(sk));
	return ret;
}

int fsd_kx_tag(const uint8_t key[FARSWAP_KX_KEY_LEN], char dir, uint64_t seq,
	       const void *msg, size_t len, uint8_t tag[FARSWAP_KX_TAG_LEN])
{
	struct farswap_kx_tag_input in;
	uint8_t mac[32];
	int ret;

	farswap_kx_tag_input_init(&in, dir, seq);
	ret = hmac2(key, FARSWAP_KX_KEY_LEN, &in, sizeof(in), msg, len, mac);
	memcpy(tag, mac, FARSWAP_KX_TAG_LEN);
	return ret;
}

int fsd_kx_join_tag(const uint8_t key[FARSWAP_KX_KEY_LEN], uint64_t session,
		    const uint8_t *host_id,
		    uint8_t tag[FARSWAP_KX_JOIN_TAG_LEN])
{
	struct farswap_kx_join_input in;
	uint8_t mac[32];
	int ret;

	farswap_kx_join_input_init(&in, session, host_id);
	ret = hmac2(key, FARSWAP_KX_KEY_LEN, &in, sizeof(in), NULL, 0, mac);
	memcpy(tag, mac, FARSWAP_KX_JOIN_TAG_LEN);
	return ret;
}

bool fsd_auth_mac_equal(const uint8_t *a, const uint8_t *b)
{
	return CRYPTO_memcmp(a, b, FARSWAP_AUTH_MAC_LEN) == 0;
}

void fsd_auth_key_clear(struct fsd_auth_key *key)
{
	explicit_bzero(key, sizeof(*key));
}

int fsd_auth_load_key(const char *path, struct fsd_auth_key *key, char *err,
		      size_t errlen)
{
	int ret;

	fsd_auth_key_clear(key);
	ret = fs_keyfile_read(path, key->bytes, err, errlen);
	if (!ret)
		key->len = FARSWAP_AUTH_KEY_LEN;
	return ret;
}

bool fsd_auth_host_key_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	/* "", ".", ".." and hidden files are never a host's key. */
	if (!n || n > FSD_HOST_KEY_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

/* Only this user or root may choose which keys are in @dir. */
static int check_host_keys_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (stat(dir, &st)) {
		/*
		 * Not -ENOENT, which means "no file for this host" to the
		 * caller: a directory gone (a typo, a mount missing) must not
		 * silently hand every host to key-file.
		 */
		int ret = errno == ENOENT ? -ENOTDIR : -errno;

		snprintf(err, errlen, "host-keys %s: %s", dir, strerror(errno));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "host-keys %s: not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "host-keys %s: owned by uid %u, not by this user or root",
			 dir, (unsigned int)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "host-keys %s: group or others may write it (mode %04o); chmod go-w it",
			 dir, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int fsd_auth_load_host_key(const char *dir, const char *name,
			   struct fsd_auth_key *key, char *err, size_t errlen)
{
	char path[4096];
	int ret;

	fsd_auth_key_clear(key);
	if (!fsd_auth_host_key_name_ok(name)) {
		snprintf(err, errlen, "host id '%.64s' is not a file name host-keys can hold",
			 name);
		return -EINVAL;
	}
	ret = check_host_keys_dir(dir, err, errlen);
	if (ret)
		return ret;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		snprintf(err, errlen, "host-keys %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	/* No file: the caller falls back to key-file, or denies. */
	if (access(path, F_OK) && errno == ENOENT)
		return -ENOENT;
	return fsd_auth_load_key(path, key, err, errlen);
}
