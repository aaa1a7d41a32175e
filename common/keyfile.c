// SPDX-License-Identifier: GPL-2.0
/*
 * Key files (keyfile.h).  Opened without following a symbolic link and
 * without blocking (a FIFO put where the key should be must not stall
 * the caller: it is refused as not a regular file), read in one go, and
 * every copy of the secret but the caller's wiped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyfile.h"

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

int fs_keyfile_read(const char *path, uint8_t secret[FARSWAP_AUTH_KEY_MAX],
		    size_t *len, char *err, size_t errlen)
{
	uint8_t buf[FARSWAP_AUTH_KEY_MAX + 2];
	size_t n = 0;
	ssize_t got;
	int fd, ret;

	*len = 0;
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
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n < FARSWAP_AUTH_KEY_MIN || n > FARSWAP_AUTH_KEY_MAX) {
		ret = -EINVAL;
		snprintf(err, errlen,
			 "key-file %s: the secret must be %u to %u bytes (without trailing newline)%s",
			 path, FARSWAP_AUTH_KEY_MIN, FARSWAP_AUTH_KEY_MAX,
			 n < FARSWAP_AUTH_KEY_MIN ? ", it is shorter" :
						    ", it is longer");
		goto out_wipe;
	}
	memcpy(secret, buf, n);
	*len = n;
out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}
