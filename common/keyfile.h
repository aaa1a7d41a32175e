/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key files, for farswapd (key-file, host-keys), farswapctl (attach
 * --key-file, add-key, gen-key) and farswapd --gen-key alike, so that
 * host and donor take the same secret from the same file.
 *
 * A key file holds one line, after NVMe's DH-HMAC-CHAP secrets
 * ("DHHC-1:00:...:"):
 *
 *	FARSWAP-1:00:<base64 of the secret and its CRC-32>:
 *
 * "1" the format's version, "00" its transform (00: the secret as is,
 * the only one there is), then 48 base64 characters: the 32 bytes of the
 * secret followed by the CRC-32 (zlib's) of those 32 bytes, little
 * endian, which catches a key damaged by copying.  One trailing newline
 * may follow, nothing else.  The secret is the 32 decoded bytes, the
 * HMAC-SHA256 key of the handshake (FARSWAP_AUTH_KEY_LEN).
 *
 * Who may set the secret is who owns the file: this user or root.  Who
 * may read it: the owner, and the file's group if the group may not
 * write (root:farswap 0640 lets a farswapd that runs as user farswap
 * read a file root keeps), never others.
 *
 * Messages never hold a byte of the secret.
 */
#ifndef FS_KEYFILE_H
#define FS_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "farswap_proto.h"

#define FS_KEY_PREFIX		"FARSWAP-"
#define FS_KEY_VERSION		"1"
#define FS_KEY_TRANSFORM	"00"	/* the secret as is */
/* The secret and its CRC-32: 36 bytes, 48 base64 characters. */
#define FS_KEY_CRC_LEN		4
#define FS_KEY_BLOB_LEN		(FARSWAP_AUTH_KEY_LEN + FS_KEY_CRC_LEN)
#define FS_KEY_BASE64_LEN	(FS_KEY_BLOB_LEN / 3 * 4)
/* "FARSWAP-1:00:" + base64 + ":" */
#define FS_KEY_TEXT_LEN		(sizeof(FS_KEY_PREFIX FS_KEY_VERSION ":" \
					FS_KEY_TRANSFORM ":") - 1 + \
				 FS_KEY_BASE64_LEN + 1)
/* What fs_key_format() writes: the key, a newline, a NUL. */
#define FS_KEY_TEXT_SIZE	(FS_KEY_TEXT_LEN + 2)

/* How to make a key, for the messages that refuse one. */
#define FS_KEY_HOW_TO_MAKE \
	"make a key with 'farswapctl gen-key FILE' or 'farswapd --gen-key FILE'"

/*
 * The secret of the key text @text (@len bytes, not NUL-terminated) into
 * @secret.  Returns 0, or -EINVAL with the reason in @why (no file name,
 * no hint how to make a key, never a byte of the secret).
 */
int fs_key_parse(const char *text, size_t len,
		 uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *why,
		 size_t whylen);

/*
 * The key text of @secret, with a newline and a NUL, into @text.
 * Returns its length (FS_KEY_TEXT_LEN + 1).
 */
size_t fs_key_format(const uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		     char text[FS_KEY_TEXT_SIZE]);

/*
 * The secret of the key file @path into @secret, exactly
 * FARSWAP_AUTH_KEY_LEN bytes.  Refuses a symbolic link, anything but a
 * regular file, a file of another owner than this user or root, one
 * others may access or its group may write, and any content but a key
 * as above.  Returns 0, or -errno with why in @err, naming @path.
 */
int fs_keyfile_read(const char *path, uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		    char *err, size_t errlen);

/*
 * A fresh secret (getrandom(2)) into @secret.  Returns 0, or -errno with
 * why in @err.
 */
int fs_key_generate(uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *err,
		    size_t errlen);

/*
 * The key text of @secret to a new file @path, mode 0600 (never over an
 * existing file or through a symbolic link), or to standard output when
 * @path is NULL.  Returns 0, or -errno with why in @err (-EEXIST: @path
 * exists).
 */
int fs_keyfile_write(const char *path,
		     const uint8_t secret[FARSWAP_AUTH_KEY_LEN], char *err,
		     size_t errlen);

/*
 * farswapctl gen-key and farswapd --gen-key: a fresh key to @path, or to
 * standard output when @path is NULL.  Returns 0, or -errno with why in
 * @err.
 */
int fs_keyfile_generate(const char *path, char *err, size_t errlen);

#endif /* FS_KEYFILE_H */
