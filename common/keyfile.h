/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a shared secret from a key file, for farswapd (key-file,
 * host-keys) and farswapctl (attach --key-file) alike, so that host and
 * donor take the same bytes from the same file: the file's content
 * without its trailing newlines, FARSWAP_AUTH_KEY_MIN to _MAX bytes.
 *
 * Who may set the secret is who owns the file: this user or root.  Who
 * may read it: the owner, and the file's group if the group may not
 * write (root:farswap 0640 lets a farswapd that runs as user farswap
 * read a file root keeps), never others.
 */
#ifndef FS_KEYFILE_H
#define FS_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "farswap_proto.h"

int fs_keyfile_read(const char *path, uint8_t secret[FARSWAP_AUTH_KEY_MAX],
		    size_t *len, char *err, size_t errlen);

#endif /* FS_KEYFILE_H */
