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
