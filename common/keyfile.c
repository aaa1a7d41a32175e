// SPDX-License-Identifier: GPL-2.0
/*
 * Key files (keyfile.h).  Opened without following a symbolic link and
 * without blocking (a FIFO put where the key should be must not stall
 * the caller: it is refused as not a regular file), read in one go,
 * parsed, and every copy of the secret but the caller's wiped.  Base64
 * is OpenSSL's, the CRC-32 zlib's.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "keyfile.h"

/*
 * More than a key and its newline, so that what follows a key is seen;
 * a file longer than this is refused for that (or for what is wrong
 * before it).
 */
#define KEYFILE_READ_MAX	1024

/* The checks of keyfile.h on an open file; 0 or a negative errno. */
static int keyfile_check(const char *path, int fd, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "key-file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "key-file %s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "key-file %s: owned by uid %u, not by this user or root",
			 path, (unsigned int)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IRWXO | S_IWGRP | S_IXGRP)) {
		snprintf(err, errlen,
			 "key-file %s: others may access it or its group may write it (mode %04o); chmod 600 it (or 640, its group the reader's)",
			 path, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* The CRC-32 of the secret, as the key text stores it: little endian. */
static void key_crc(const uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		    uint8_t out[FS_KEY_CRC_LEN])
{
	uLong crc = crc32(crc32(0L, Z_NULL, 0), secret, FARSWAP_AUTH_KEY_LEN);
	int i;

	for (i = 0; i < FS_KEY_CRC_LEN; i++)
		out[i] = (uint8_t)(crc >> (8 * i));
}

/*
 * Is the field @s, @len bytes, short and plain enough to show in a
 * message?  Only the version and the transform are ever shown, and only
 * when they look like one: the rest of a file that is no key at all may
 * be a secret of some other kind.
 */
static bool field_showable(const char *s, size_t len)
{
	size_t i;

	if (!len || len > 8)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Decode the base64 of @b64 (@len characters) into @out (room for
 * @len / 4 * 3 bytes).  Only the canonical text of what it decodes to is
 * taken: EVP_DecodeBlock() skips leading blanks and takes a '=' inside
 * the text, so the bytes are encoded again and compared.  Returns how
 * many bytes it decodes to (without the '=' padding, which
 * EVP_DecodeBlock() counts as zero bytes), or -1.
 */
static int base64_decode(const char *b64, size_t len, uint8_t *out)
{
	char again[KEYFILE_READ_MAX + 4];
	int n, pad = 0;

	if (!len || len % 4 || len > KEYFILE_READ_MAX)
		return -1;
	n = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)len);
	if (n < 0)
		return -1;
	while (pad < 2 && b64[len - 1 - pad] == '=')
		pad++;
	n -= pad;
	if (n < 0 || EVP_EncodeBlock((unsigned char *)again, out, n) !=
		     (int)len || memcmp(again, b64, len))
		n = -1;
	explicit_bzero(again, sizeof(again));
	return n;
}

/*
 * The field at *@p, up to the next ':' (or @end): returns where it
 * starts, its length in @len, and leaves *@p on the ':' (or @end).
 */
static const char *take_field(const char **p, const char *end, size_t *len)
{
	const char *field = *p;

	while (*p < end && **p != ':')
		(*p)++;
	*len = (size_t)(*p - field);
	return field;
}

int fs_key_parse(const char *text, size_t len,
		 uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *why,
		 size_t whylen)
{
	static const char prefix[] = FS_KEY_PREFIX;
	uint8_t blob[KEYFILE_READ_MAX / 4 * 3 + 3];
	uint8_t crc[FS_KEY_CRC_LEN];
	const char *p = text, *end = text + len, *field;
	size_t flen;
	int n, ret = -EINVAL;

	if (len < sizeof(prefix) - 1 ||
	    memcmp(text, prefix, sizeof(prefix) - 1)) {
		snprintf(why, whylen,
			 "not a farswap key: it does not begin with %s%s: (an old-style key, any 16 to 64 bytes, is no longer read)",
			 FS_KEY_PREFIX, FS_KEY_VERSION);
		return -EINVAL;
	}
	p += sizeof(prefix) - 1;

	field = take_field(&p, end, &flen);
	if (p == end || flen != strlen(FS_KEY_VERSION) ||
	    memcmp(field, FS_KEY_VERSION, flen)) {
		if (p < end && field_showable(field, flen))
			snprintf(why, whylen,
				 "unknown key version %.*s (this farswap reads version %s: %s%s:)",
				 (int)flen, field, FS_KEY_VERSION,
				 FS_KEY_PREFIX, FS_KEY_VERSION);
		else
			snprintf(why, whylen,
				 "unknown key version (this farswap reads version %s: %s%s:)",
				 FS_KEY_VERSION, FS_KEY_PREFIX, FS_KEY_VERSION);
		return -EINVAL;
	}
	p++;

	field = take_field(&p, end, &flen);
	if (p == end || flen != strlen(FS_KEY_TRANSFORM) ||
	    memcmp(field, FS_KEY_TRANSFORM, flen)) {
		if (p < end && field_showable(field, flen))
			snprintf(why, whylen,
				 "unknown key transform %.*s (only %s, the secret as is)",
				 (int)flen, field, FS_KEY_TRANSFORM);
		else
			snprintf(why, whylen,
				 "unknown key transform (only %s, the secret as is)",
				 FS_KEY_TRANSFORM);
		return -EINVAL;
	}
	p++;

	field = take_field(&p, end, &flen);
	if (p == end) {
		snprintf(why, whylen,
			 "bad base64: no ':' ends it (a key is cut short?)");
		return -EINVAL;
	}
	n = base64_decode(field, flen, blob);
	if (n < 0) {
		snprintf(why, whylen,
			 "bad base64: a key is %u characters of A-Z a-z 0-9 + / between the ':'s (these %zu are not base64, or not as base64 writes it)",
			 (unsigned int)FS_KEY_BASE64_LEN, flen);
		goto out;
	}
	if (n != FS_KEY_BLOB_LEN) {
		snprintf(why, whylen,
			 "wrong length: the base64 decodes to %d bytes, not %u (a %u-byte secret and its CRC-32)",
			 n, (unsigned int)FS_KEY_BLOB_LEN,
			 (unsigned int)FARSWAP_AUTH_KEY_LEN);
		goto out;
	}
	key_crc(blob, crc);
	if (memcmp(crc, blob + FARSWAP_AUTH_KEY_LEN, FS_KEY_CRC_LEN)) {
		snprintf(why, whylen,
			 "checksum mismatch: the CRC-32 does not match the secret (the key was damaged or edited)");
		goto out;
	}
	p++;
	/* One newline may end the line; nothing may follow it. */
	if (p < end && *p == '\n')
		p++;
	if (p != end) {
		snprintf(why, whylen,
			 "data after the key (%zu bytes; only one newline may follow its closing ':')",
			 (size_t)(end - p));
		goto out;
	}
	memcpy(secret, blob, FARSWAP_AUTH_KEY_LEN);
	ret = 0;
out:
	explicit_bzero(blob, sizeof(blob));
	explicit_bzero(crc, sizeof(crc));
	return ret;
}

size_t fs_key_format(const uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		     char text[FS_KEY_TEXT_SIZE])
{
	static const char head[] = FS_KEY_PREFIX FS_KEY_VERSION ":"
				   FS_KEY_TRANSFORM ":";
	uint8_t blob[FS_KEY_BLOB_LEN];
	size_t n = sizeof(head) - 1;

	memcpy(blob, secret, FARSWAP_AUTH_KEY_LEN);
	key_crc(secret, blob + FARSWAP_AUTH_KEY_LEN);
	memcpy(text, head, n);
	/* 36 bytes make 48 characters and a NUL, no padding. */
	n += (size_t)EVP_EncodeBlock((unsigned char *)text + n, blob,
				     sizeof(blob));
	text[n++] = ':';
	text[n++] = '\n';
	text[n] = '\0';
	explicit_bzero(blob, sizeof(blob));
	return n;
}

int fs_keyfile_read(const char *path, uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		    char *err, size_t errlen)
{
	char buf[KEYFILE_READ_MAX + 1];
	char why[256];
	size_t n = 0;
	ssize_t got;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
			O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		if (errno == ELOOP)
			snprintf(err, errlen,
				 "key-file %s: a symbolic link; name the file itself",
				 path);
		else
			snprintf(err, errlen, "key-file %s: %s", path,
				 strerror(errno));
		return ret;
	}
	ret = keyfile_check(path, fd, err, errlen);
	if (ret)
		goto out_close;
	do {
		got = read(fd, buf + n, sizeof(buf) - n);
		if (got > 0)
			n += (size_t)got;
	} while (got > 0 && n < sizeof(buf));
	if (got < 0) {
		ret = -errno;
		snprintf(err, errlen, "key-file %s: %s", path, strerror(errno));
		goto out_wipe;
	}
	ret = fs_key_parse(buf, n, secret, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "key-file %s: %s; %s", path, why,
			 FS_KEY_HOW_TO_MAKE);
out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}

int fs_key_generate(uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *err,
		    size_t errlen)
{
	size_t n = 0;
	ssize_t got;

	/* Blocks only until the kernel's generator is seeded, once a boot. */
	while (n < FARSWAP_AUTH_KEY_LEN) {
		got = getrandom(secret + n, FARSWAP_AUTH_KEY_LEN - n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			return -errno;
		}
		n += (size_t)got;
	}
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t got;

	while (len) {
		got = write(fd, buf, len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		buf += got;
		len -= (size_t)got;
	}
	return 0;
}

int fs_keyfile_write(const char *path,
		     const uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *err,
		     size_t errlen)
{
	char text[FS_KEY_TEXT_SIZE];
	size_t len = fs_key_format(secret, text);
	int fd, ret;

	if (!path) {
		ret = write_all(STDOUT_FILENO, text, len);
		if (ret)
			snprintf(err, errlen, "standard output: %s",
				 strerror(-ret));
		goto out;
	}
	/* O_EXCL: a key in use is never replaced by mistake. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		ret = -errno;
		if (errno == EEXIST)
			snprintf(err, errlen,
				 "%s exists: a new key never replaces a file (remove it first if no farswap uses that key)",
				 path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = write_all(fd, text, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		unlink(path);
	}
out:
	explicit_bzero(text, sizeof(text));
	return ret;
}

int fs_keyfile_generate(const char *path, char *err, size_t errlen)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	int ret;

	ret = fs_key_generate(secret, err, errlen);
	if (!ret)
		ret = fs_keyfile_write(path, secret, err, errlen);
	explicit_bzero(secret, sizeof(secret));
	return ret;
}
