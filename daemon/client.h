/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What farswapd does without becoming the daemon (client.c): tell the
 * running one to drain or undrain (statsock.h's commands), and
 * --check-config.  Each returns the process's exit code.
 */
#ifndef FSD_CLIENT_H
#define FSD_CLIENT_H

#include "config.h"

int fsd_client_drain(const char *path, bool wait, uint32_t timeout_ms);
int fsd_client_undrain(const char *path);
int fsd_client_restart(const char *path);
int fsd_client_check(struct fsd_config *cfg, const struct fsd_args *args,
		     struct fsd_limits *lim);
/*
 * How @user comes to read the key file @path that failed with @ret
 * (fsd_auth_load_key()), in @buf; empty unless @ret says access.
 */
int fsd_key_fix(char *buf, size_t len, const char *path, const char *user,
		int ret);
/* RDMA devices ibv_get_device_list() sees. */
int fsd_rdma_devices(void);

#endif /* FSD_CLIENT_H */
