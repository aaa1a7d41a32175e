/* SPDX-License-Identifier: GPL-2.0 */
/*
 * farswapd configuration: defaults, the config file (config.c),
 * command-line flags (cmdline.c); values to and from their text
 * (parse.c).
 * Pure parsing, no side effects: unit-tested in tests/unit/test_config.c.
 */
#ifndef FSD_CONFIG_H
#define FSD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "access.h"
#include "farswap_proto.h"

#define FSD_CONFIG_PATH "/etc/farswap/farswapd.conf"
#define FSD_STATS_SOCKET "/run/farswap/farswapd.sock"
#define FSD_ADDR_LEN 64
#define FSD_PATH_LEN 108	/* sun_path */
#define FSD_MAX_OVERRIDES 64
#define FSD_MAX_KEYS 64		/* rows fsd_keys[] may grow to */
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
	unsigned int max_unauth_per_address;	/* of those, one address's; 0: off */
	uint32_t connect_rate;		/* control connects/s per address; 0: off */
	uint32_t connect_burst;
	char metrics_file[FSD_METRICS_PATH_LEN];	/* "" : none */
	/* Who may connect, and how much one host may take. */
	struct fsd_access allowed_hosts;	/* empty: any host */
	uint64_t max_slabs_per_host;		/* 0: no cap (or see the others) */
	uint64_t max_bytes_per_host;		/* set by a SIZE; 0: not */
	unsigned int max_slabs_pct;		/* set by PCT% of the pool; 0: not */
	bool max_slabs_fair;			/* "fair": the pool / hosts present */
	unsigned int max_sessions_per_address;	/* 0: no limit */
	uint32_t max_queue_depth;		/* I/O QP size, clamped to this */
	uint32_t handshake_timeout_ms;
	uint32_t auth_timeout_ms;
	uint32_t resume_grace_ms;		/* kept slabs wait this long */
	uint32_t alloc_rate;			/* grants per second; 0: off */
	uint32_t alloc_burst;
	bool alloc_rate_auto;			/* from the slab size (fsd_alloc_rate()) */
	unsigned int revoke_after;		/* missed deadlines; 0: never */
	/* Authentication: the secret's file; "": none (insecure-no-auth). */
	char key_file[FSD_METRICS_PATH_LEN];
	char host_keys[FSD_METRICS_PATH_LEN];	/* a directory; "": none */
	/* This donor's own secret, for hosts that pin it; "": none. */
	char donor_key_file[FSD_METRICS_PATH_LEN];
	bool insecure_no_auth;			/* allowed to run without one */
	bool require_session_keys;		/* refuse hosts without FEAT_KX */
};

/* What the command line asks for. */
enum fsd_action {
	FSD_ACT_RUN,
	FSD_ACT_HELP,
	FSD_ACT_VERSION,
	FSD_ACT_STATS,		/* print a running daemon's stats */
	FSD_ACT_CHECK,		/* print the effective configuration */
	FSD_ACT_DRAIN,		/* tell a running daemon to drain */
	FSD_ACT_UNDRAIN,	/* ... to return to service */
	FSD_ACT_RESTART,	/* ... to restart in place (SIGUSR2) */
	FSD_ACT_GEN_KEY,	/* make a key file */
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
	bool wait;			/* --drain --wait: until drained */
	bool unless_restarting;		/* --drain: not if systemd restarts us */
	uint32_t timeout_ms;		/* --drain --wait --timeout; 0: none */
	const char *check_as;		/* --check-config --check-as USER */
	const char *gen_key_path;	/* --gen-key FILE; NULL: stdout */
	unsigned int nr;
	struct fsd_override kv[FSD_MAX_OVERRIDES];
};

/* Sizes the daemon runs with, once MemTotal/MemAvailable are known. */
struct fsd_limits {
	uint64_t donate;	/* bytes, a multiple of slab_size */
	uint32_t nr_slabs;
	uint64_t headroom;
	uint64_t hysteresis;
	uint32_t max_slabs_per_host;	/* 0: no cap, or fair */
	bool max_slabs_fair;		/* max-slabs-per-host fair */
	uint32_t alloc_rate;		/* grants/s per session; 0: off */
	uint32_t alloc_burst;
};

/*
 * Values to and from their text (parse.c).  fsd_skip_space(): @s past
 * its leading white space; fsd_parse_u64(): an unsigned decimal (no
 * sign, no overflow), *end left after its digits.  The keys' parse
 * helpers in config.c scan with these two as well.
 */
const char *fsd_skip_space(const char *s);
int fsd_parse_u64(const char *s, uint64_t *out, const char **end);
int fsd_parse_size(const char *s, uint64_t *out);
int fsd_parse_amount(const char *s, struct fsd_amount *out);
int fsd_parse_duration_ms(const char *s, uint32_t *out);
int fsd_parse_listen(const char *s, char *addr, size_t addr_len,
		     uint16_t *port);
int fsd_parse_percent100(const char *s, unsigned int *out);
int fsd_parse_rate(const char *s, uint32_t *rate, uint32_t *burst);
int fsd_parse_domain(const char *s, char *out, size_t outlen);
uint64_t fsd_amount_resolve(const struct fsd_amount *a, uint64_t base);
void fsd_format_size(uint64_t bytes, char *buf, size_t len);
void fsd_format_size_mb(uint64_t bytes, char *buf, size_t len);

/* What SIGHUP does with a key's new value. */
enum fsd_key_reload {
	FSD_KEY_LIVE,		/* takes it (fsd_config_reload()) */
	FSD_KEY_RESTART,	/* keeps the old one, logs that it needs a restart */
	FSD_KEY_RESTART_QUIET,	/* keeps the old one without a word (donor-id) */
};

/* k->flags of a path key (parse_path()). */
#define FSD_KEY_ABSOLUTE	0x1	/* a relative path is refused */
#define FSD_KEY_NONE_ANYCASE	0x2	/* "NONE", "None" mean none too */
#define FSD_KEY_EMPTY_NONE	0x4	/* "" means none */

struct fsd_key_name {
	const char *name;
	int value;
};

struct fsd_key;

/* What a key's parse helper gets: the value for k, to store in c. */
struct fsd_set {
	const struct fsd_key *k;
	struct fsd_config *c;
	const char *val;
	char *why;		/* the helper's own error message, if any */
	size_t whylen;
};

/* What a key's print helper gets: the value of k in c, into buf. */
struct fsd_show {
	const struct fsd_key *k;
	const struct fsd_config *c;
	char *buf;
	size_t len;
};

/* One config key: see fsd_keys[] in config.c. */
struct fsd_key {
	const char *name;	/* in the file, and the long option */
	char short_opt;		/* 0: none */
	const char *arg;	/* --help's word for the value; NULL: a flag */
	const char *help;	/* --help's text, '\n' between its lines */
	/* The fields of struct fsd_config it sets, for reload. */
	size_t off;
	size_t size;
	uint64_t min, max;	/* for the helpers that take a range */
	unsigned int flags;	/* FSD_KEY_*, for path keys */
	const char *unit;	/* printed after a number: "ms" */
	const struct fsd_key_name *names;	/* for enums */
	enum fsd_key_reload reload;
	/* The error for a refused value, after "NAME 'VALUE': ". */
	const char *want;
	int (*parse)(const struct fsd_set *s);
	void (*print)(const struct fsd_show *s);	/* NULL: not printed */
};

extern const struct fsd_key fsd_keys[];
extern const size_t fsd_nr_keys;

const struct fsd_key *fsd_config_key(const char *key);
bool fsd_config_key_same(const struct fsd_key *k, const struct fsd_config *a,
			 const struct fsd_config *b);
/*
 * SIGHUP: copy the live keys of @next into @cur.  True if a key that
 * needs a restart differs (and so was not copied).
 */
bool fsd_config_reload(struct fsd_config *cur, const struct fsd_config *next);
/* Those keys for the log: "listen, donate, ... and insecure-no-auth". */
void fsd_config_restart_keys(char *buf, size_t len);

void fsd_config_defaults(struct fsd_config *c);
int fsd_config_set(struct fsd_config *c, const char *key, const char *val,
		   char *err, size_t errlen);
int fsd_config_parse(struct fsd_config *c, const char *text, const char *name,
		     char *err, size_t errlen);
int fsd_config_load(struct fsd_config *c, const char *path, bool must_exist,
		    char *err, size_t errlen);
int fsd_config_resolve(const struct fsd_config *c, uint64_t mem_total,
		       uint64_t mem_available, struct fsd_limits *out,
		       char *err, size_t errlen);
uint32_t fsd_slab_cap(const struct fsd_config *c, uint64_t slab_size,
		      uint32_t nr_slabs);
/* A resolved max-slabs-per-host for the log: "fair" or its slabs. */
void fsd_slab_cap_text(bool fair, uint32_t slabs, char *buf, size_t len);
void fsd_alloc_rate(const struct fsd_config *c, uint64_t slab_size,
		    uint32_t *rate, uint32_t *burst);
void fsd_config_print(const struct fsd_config *c, char *buf, size_t len);
int fsd_config_check_auth(const struct fsd_config *c, char *err,
			  size_t errlen);

/* The command line (cmdline.c). */
int fsd_parse_args(int argc, char **argv, struct fsd_args *a, char *err,
		   size_t errlen);
int fsd_config_apply_args(struct fsd_config *c, const struct fsd_args *a,
			  char *err, size_t errlen);
void fsd_usage(FILE *out);

#endif /* FSD_CONFIG_H */
