/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing of control commands, written to /dev/farswap-ctl (and the
 * attach module parameters at load):
 *
 *   [attach] donor=ADDR[:PORT] [donor=...] size=SIZE [slab_size=SIZE]
 *            [name=farswapN] [queues=N] [queue_depth=N] [io_timeout_ms=N]
 *            [sync_io=0|1] [integrity=siphash|crc32c|off] [replicas=N]
 *            [read_policy=fastest|round-robin] [key=PREFIX:NAME]
 *            [encrypt=0|1] [host_id=UUID] [stage_kb=N]
 *   detach name=farswapN
 *
 * Options are separated by spaces, tabs, newlines or commas.  ADDR is IPv4
 * dotted-quad or IPv6 (in brackets when a port follows; a link-local one
 * may carry %SCOPE).  Numbers are decimal.  Every option but donor= may
 * appear once.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_ARGS_H
#define FARSWAP_ARGS_H

#include <linux/socket.h>
#include <linux/types.h>

#include "auth.h"
#include "pick.h"
#include "replica.h"
#include "seal.h"
#include "tag.h"

#define FARSWAP_NAME_LEN	32
#define FARSWAP_ERR_LEN		160

/*
 * Where a device's host_id came from: an attach's host_id= (farswapctl
 * sends /etc/farswap/hostid's), else the module's, which is the host_id
 * module parameter or random at load.  A random one changes at every load:
 * donors that know hosts by their id (host-keys, allowed-hosts id:, the
 * per-host cap) no longer know this one after a reboot.
 */
enum farswap_host_id_source {
	FARSWAP_HOST_ID_RANDOM,
	FARSWAP_HOST_ID_MODULE,
	FARSWAP_HOST_ID_ATTACH,
};

struct farswap_attach_args {
	char name[FARSWAP_NAME_LEN];	/* "" lets the module choose */
	struct sockaddr_storage donor[FARSWAP_MAX_DONORS];
	unsigned int nr_donors;
	u64 size;
	u64 slab_size;			/* 0: the donors' slab size */
	unsigned int nr_queues;
	unsigned int queue_depth;
	unsigned int io_timeout_ms;
	bool sync_io;
	enum farswap_tag_alg integrity;	/* unused with encrypt: seal.h checks */
	bool encrypt;			/* seal every page (seal.h) */
	enum farswap_read_policy read_policy;
	unsigned int replicas;		/* 0: 2 with two donors or more, else 1 */
	unsigned int stage_kb;		/* staging per write queue; 0: none */
	/* A logon key's description; "": do not authenticate. */
	char key_desc[FARSWAP_KEY_DESC_LEN];
	/* Without key_desc: the attach says it means to go unauthenticated. */
	bool insecure_no_auth;
	/*
	 * The logon keys of the donors this device trusts (donor_key=):
	 * each donor must prove one of them with key_desc's (pinned).
	 * None: any holder of key_desc's key may answer as a donor.
	 */
	char donor_key_desc[FARSWAP_DONOR_KEYS_MAX][FARSWAP_KEY_DESC_LEN];
	unsigned int nr_donor_keys;
	/* The identity the device's sessions show donors, and its source. */
	u8 host_id[FARSWAP_ID_LEN];
	enum farswap_host_id_source host_id_source;
};

/* Limits, also enforced on module parameters. */
#define FARSWAP_QUEUE_DEPTH_MAX		1024
#define FARSWAP_IO_TIMEOUT_MIN_MS	100
#define FARSWAP_IO_TIMEOUT_MAX_MS	3600000
/* Staging per write queue: 4 GiB in 64 KiB slots fits u16 indices. */
#define FARSWAP_STAGE_MAX_KB		(256U << 10)
/* 1 GiB: the cap is kept in bytes in a u32. */
#define FARSWAP_WRITE_INFLIGHT_MAX_KB	(1U << 20)

/* What a control command asks for. */
enum farswap_cmd_op {
	FARSWAP_CMD_ATTACH,
	FARSWAP_CMD_DETACH,
	FARSWAP_CMD_DONOR_ADD,
	FARSWAP_CMD_DONOR_REMOVE,
};

int farswap_parse_addr(const char *s, struct sockaddr_storage *ss);
int farswap_parse_size(const char *s, u64 *out);
enum farswap_cmd_op farswap_cmd_op(char **buf);
int farswap_parse_attach(char *buf, struct farswap_attach_args *args,
			 char *err, size_t errlen);
int farswap_parse_detach(char *buf, char *name, char *err, size_t errlen);
int farswap_attach_auth_check(const struct farswap_attach_args *args,
			      char *err, size_t errlen);
int farswap_parse_donor_cmd(char *buf, char *name,
			    struct sockaddr_storage *addr, char *err,
			    size_t errlen);
bool farswap_addr_equal(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b);
int farswap_name_index(const char *name);
const char *farswap_host_id_source_name(enum farswap_host_id_source src);

#endif /* FARSWAP_ARGS_H */
