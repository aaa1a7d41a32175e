/* SPDX-License-Identifier: GPL-2.0 */
/*
 * farswapd configuration: defaults, the config file, command-line flags.
 * Pure parsing, no side effects: unit-tested in tests/unit/test_config.c.
 */
#ifndef FSD_CONFIG_H
#define FSD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "farswap_proto.h"

#define FSD_CONFIG_PATH "/etc/farswap/farswapd.conf"
#define FSD_STATS_SOCKET "/run/farswap/farswapd.sock"
#define FSD_ADDR_LEN 64
#define FSD_PATH_LEN 108	/* sun_path */
#define FSD_MAX_OVERRIDES 64
#define FSD_METRICS_PATH_LEN 4096
#define FSD_DOMAIN_MAX 31	/* characters of a --failure-domain */

/* A size in bytes, or a percentage of some base (pct != 0). */
struct fsd_amount {
	uint64_t bytes;
	unsigned int pct;
};

enum fsd_hugepages {
	FSD_HUGE_AUTO,		/* hugetlb if the kernel has free pages, else THP */
	FSD_HUGE_NEVER,		/* anonymous memory with MADV_HUGEPAGE */
	FSD_HUGE_ALWAYS,	/* hugetlb or refuse to start */
};

struct fsd_config {
	char listen_addr[FSD_ADDR_LEN];
	uint16_t port;
	struct fsd_amount donate;	/* pct: of MemAvailable at start */
	uint64_t slab_size;
	struct fsd_amount headroom;	/* pct: of MemTotal */
	struct fsd_amount hysteresis;	/* pct: of MemTotal */
	uint32_t pressure_interval_ms;
	uint32_t reclaim_deadline_ms;
	uint32_t keepalive_ms;		/* probe sessions idle this long; 0: off */
	unsigned int psi_threshold;	/* some avg10, in 1/100 %; 0: off */
	int log_level;
	char stats_socket[FSD_PATH_LEN];	/* "" disables */
	uint8_t donor_id[FARSWAP_ID_LEN];
	bool donor_id_set;
	/* Failure domain sent to hosts; "": the donor's id (as reported). */
	char failure_domain[FSD_DOMAIN_MAX + 1];
	enum fsd_hugepages hugepages;
	unsigned int max_hosts;		/* authenticated sessions */
	unsigned int max_unauthenticated;	/* not yet, with a key-file */
	char metrics_file[FSD_METRICS_PATH_LEN];	/* "" : none */
	/* Who may connect, and how much one host may take. */
	struct fsd_access allowed_hosts;	/* empty: any host */
	uint64_t max_slabs_per_host;		/* 0: no cap (or see bytes) */
	uint64_t max_bytes_per_host;		/* set by a SIZE; 0: a count */
	unsigned int max_sessions_per_address;	/* 0: no limit */
	uint32_t max_queue_depth;		/* I/O QP size, clamped to this */
	uint32_t handshake_timeout_ms;
	uint32_t alloc_rate;			/* grants per second; 0: off */
	uint32_t alloc_burst;
	unsigned int revoke_after;		/* missed deadlines; 0: never */
	/* Authentication: the secret's file; "": none (insecure-no-auth). */
	char key_file[FSD_METRICS_PATH_LEN];
	char host_keys[FSD_METRICS_PATH_LEN];	/* a directory; "": none */
	bool insecure_no_auth;			/* allowed to run without one */
};

/* What the command line asks for. */
enum fsd_action {
	FSD_ACT_RUN,
	FSD_ACT_HELP,
	FSD_ACT_VERSION,
	FSD_ACT_STATS,		/* print a running daemon's stats */
	FSD_ACT_CHECK,		/* print the effective configuration */
};

struct fsd_override {
	const char *key;
	const char *val;
};

struct fsd_args {
	enum fsd_action action;
	const char *config_path;	/* NULL: the default, may be absent */
	int verbose;			/* -v count */
	bool json;			/* --stats --json */
	unsigned int nr;
	struct fsd_override kv[FSD_MAX_OVERRIDES];
};

/* Sizes the daemon runs with, once MemTotal/MemAvailable are known. */
struct fsd_limits {
	uint64_t donate;	/* bytes, a multiple of slab_size */
	uint32_t nr_slabs;
	uint64_t headroom;
	uint64_t hysteresis;
	uint32_t max_slabs_per_host;	/* 0: no cap */
};

int fsd_parse_size(const char *s, uint64_t *out);
int fsd_parse_amount(const char *s, struct fsd_amount *out);
int fsd_parse_duration_ms(const char *s, uint32_t *out);
int fsd_parse_listen(const char *s, char *addr, size_t addr_len,
		     uint16_t *port);
int fsd_parse_percent100(const char *s, unsigned int *out);
int fsd_parse_rate(const char *s, uint32_t *rate, uint32_t *burst);
uint32_t fsd_slab_cap(const struct fsd_config *c, uint64_t slab_size);
uint64_t fsd_amount_resolve(const struct fsd_amount *a, uint64_t base);
void fsd_format_size(uint64_t bytes, char *buf, size_t len);
void fsd_format_size_mb(uint64_t bytes, char *buf, size_t len);

void fsd_config_defaults(struct fsd_config *c);
int fsd_config_set(struct fsd_config *c, const char *key, const char *val,
		   char *err, size_t errlen);
int fsd_config_parse(struct fsd_config *c, const char *text, const char *name,
		     char *err, size_t errlen);
int fsd_config_load(struct fsd_config *c, const char *path, bool must_exist,
		    char *err, size_t errlen);
int fsd_parse_args(int argc, char **argv, struct fsd_args *a, char *err,
		   size_t errlen);
int fsd_config_apply_args(struct fsd_config *c, const struct fsd_args *a,
			  char *err, size_t errlen);
int fsd_config_resolve(const struct fsd_config *c, uint64_t mem_total,
		       uint64_t mem_available, struct fsd_limits *out,
		       char *err, size_t errlen);
void fsd_config_print(const struct fsd_config *c, char *buf, size_t len);
int fsd_config_check_auth(const struct fsd_config *c, char *err,
			  size_t errlen);

extern const char fsd_usage[];

int fsd_parse_domain(const char *s, char *out, size_t outlen);

#endif /* FSD_CONFIG_H */
