// SPDX-License-Identifier: GPL-2.0
/*
 * Host authentication on the donor (daemon/auth.c, the AUTH_* handling of
 * daemon/handshake.c), with fake ops: the MAC against a known answer, the key
 * file's checks, and the handshake's state machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "keyfile.h"
#include "fake_ops.h"
#include "log.h"
#include "report.h"

#define NR 8
#define SLAB (2ull << 20)
#define KEY "0123456789abcdef0123456789abcdef"

struct ctx {
	struct fsd_donor d;
	struct fake f;
};

static void set_key(struct fsd_donor *d, const char *secret)
{
	struct fsd_auth_key k = { .len = strlen(secret) };

	memcpy(k.bytes, secret, k.len);
	fsd_donor_set_key(d, &k, "/etc/farswap/key");
}

static int setup(void **state)
{
	static struct ctx c;

	if (fake_donor_init(&c.d, &c.f, NR, SLAB))
		return -1;
	set_key(&c.d, KEY);
	*state = &c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	fsd_donor_set_host_keys(&c->d, NULL);
	fake_donor_exit(&c->d);
	return 0;
}

/* A control session of @host that announces authentication (or not). */
static struct fsd_session *session(struct ctx *c, const char *host,
				   bool auth, struct fsd_conn_decision *dec)
{
	struct farswap_conn_req req;
	struct fsd_session *s;

	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 128);
	if (auth)
		req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	strncpy((char *)req.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), dec, 0);
	if (dec->status != FARSWAP_ST_OK)
		return NULL;
	s = fsd_session_new(&c->d, dec, "10.0.0.1:5000", 0);
	if (s)
		fsd_session_established(&c->d, s, 0);
	return s;
}

static int io_join(struct ctx *c, struct fsd_session *s)
{
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;

	farswap_conn_req_init(&req, FARSWAP_QT_IO, 1, 2, s->token, 128);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	memcpy(req.host_id, s->host_id, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), &dec, 0);
	return dec.status;
}

static int handle(struct ctx *c, struct fsd_session *s, union farswap_msg *m,
		  uint64_t now)
{
	return fsd_handle_msg(&c->d, s, m, farswap_msg_size(m->hdr.type), now);
}

static const uint8_t HNONCE[16] = { 0, 1, 2, 3, 4, 5, 6, 7,
				    8, 9, 10, 11, 12, 13, 14, 15 };

/* AUTH_REQ; returns the AUTH_CHAL the donor sent. */
static const struct farswap_auth_chal *auth_req(struct ctx *c,
						struct fsd_session *s)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 0x101);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_CHAL);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x101);
	return &fake_last(&c->f)->auth_chal;
}

/* The host's side: its proof for @s's challenge, with @secret. */
static void host_mac(const char *secret, const struct fsd_session *s,
		     const uint8_t *dnonce, uint8_t *mac)
{
	struct fsd_auth_key k = { .len = strlen(secret) };

	memcpy(k.bytes, secret, k.len);
	assert_int_equal(fsd_auth_mac(&k, FARSWAP_AUTH_HOST, HNONCE, dnonce,
				      s->token, s->host_id,
				      (const uint8_t *)"donor-1\0\0\0\0\0\0\0\0\0",
				      mac), 0);
}

static int proof(struct ctx *c, struct fsd_session *s, const uint8_t *mac)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, 1, 0x102);
	memcpy(m.auth_proof.host_mac, mac, 32);
	return handle(c, s, &m, 2);
}

/*
 * Known answer, computed apart from this code: the 88 bytes of the MAC
 * input written out by hand (Python struct) and fed to
 *   openssl dgst -sha256 -hmac 0123456789abcdef0123456789abcdef
 */
static void test_mac_known_answer(void **state)
{
	static const uint8_t want_donor[32] = {
		0xe7, 0x89, 0x91, 0xed, 0xa5, 0xa6, 0xd6, 0xb1,
		0x4e, 0x64, 0x92, 0x70, 0xa4, 0xa5, 0xa3, 0x43,
		0x64, 0x1a, 0x75, 0xbf, 0x88, 0xf2, 0x41, 0xe8,
		0x7d, 0xbe, 0x74, 0x77, 0xd4, 0x51, 0xab, 0x4a,
	};
	static const uint8_t want_host[32] = {
		0x87, 0xb5, 0xd5, 0xf4, 0xdd, 0x80, 0xfd, 0xfd,
		0xe0, 0xc7, 0x16, 0x5b, 0xaa, 0x8f, 0x6a, 0xe6,
		0x05, 0xaf, 0x00, 0x29, 0xf0, 0x04, 0xa3, 0x0a,
		0xeb, 0x5e, 0x9b, 0x05, 0x99, 0x5e, 0x36, 0x47,
	};
	struct fsd_auth_key k = { .len = 32 };
	uint8_t dn[16], hid[16] = "host-a", did[16] = "donor-1", mac[32];
	unsigned int i;

	(void)state;
	memcpy(k.bytes, KEY, 32);
	for (i = 0; i < 16; i++)
		dn[i] = (uint8_t)(16 + i);
	assert_int_equal(fsd_auth_mac(&k, FARSWAP_AUTH_DONOR, HNONCE, dn,
				      0x0123456789abcdefull, hid, did, mac), 0);
	assert_memory_equal(mac, want_donor, 32);
	assert_true(fsd_auth_mac_equal(mac, want_donor));
	assert_int_equal(fsd_auth_mac(&k, FARSWAP_AUTH_HOST, HNONCE, dn,
				      0x0123456789abcdefull, hid, did, mac), 0);
	assert_memory_equal(mac, want_host, 32);
	assert_false(fsd_auth_mac_equal(mac, want_donor));
	k.len = 0;
	assert_int_equal(fsd_auth_mac(&k, FARSWAP_AUTH_HOST, HNONCE, dn, 1,
				      hid, did, mac), -ENOKEY);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	fchmod(fd, mode);
	return close(fd);
}

/* The key file of the 32-byte @secret (common/keyfile.h's format). */
static int write_key(const char *path, const char *secret, mode_t mode)
{
	char text[FS_KEY_TEXT_SIZE];

	fs_key_format((const uint8_t *)secret, text);
	return write_file(path, text, mode);
}

static void test_key_file(void **state)
{
	char path[] = "/tmp/farswap-key-XXXXXX", err[256];
	struct fsd_auth_key k;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(write_key(path, KEY, 0600), 0);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)), 0);
	assert_int_equal(k.len, 32);
	assert_memory_equal(k.bytes, KEY, 32);
	/* Readable by others: refused, and the message names the mode. */
	assert_int_equal(write_key(path, KEY, 0644), 0);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "0644"));
	assert_null(strstr(err, "0123456789"));
	assert_int_equal(k.len, 0);
	/* Its group may read it (root:farswap 0640), never write it. */
	assert_int_equal(write_key(path, KEY, 0640), 0);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)), 0);
	assert_int_equal(k.len, 32);
	assert_int_equal(write_key(path, KEY, 0660), 0);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "0660"));
	assert_int_equal(k.len, 0);
	/* A symbolic link is not followed, a FIFO not waited on. */
	{
		char link[sizeof(path) + 8], fifo[sizeof(path) + 8];

		snprintf(link, sizeof(link), "%s.link", path);
		snprintf(fifo, sizeof(fifo), "%s.fifo", path);
		assert_int_equal(write_key(path, KEY, 0600), 0);
		assert_int_equal(symlink(path, link), 0);
		assert_int_equal(fsd_auth_load_key(link, &k, err, sizeof(err)),
				 -ELOOP);
		assert_non_null(strstr(err, "symbolic link"));
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(fsd_auth_load_key(fifo, &k, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "not a regular file"));
		unlink(link);
		unlink(fifo);
	}
	/*
	 * A secret as key files were before their format (the bytes used
	 * as is): refused, saying why and how to make a key (the reasons
	 * are test_keyfile.c's).
	 */
	assert_int_equal(write_file(path, KEY "\n", 0600), 0);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a farswap key"));
	assert_non_null(strstr(err, "gen-key"));
	assert_null(strstr(err, "0123456789"));
	assert_int_equal(k.len, 0);
	/* Owned by another user (who could set the secret): refused. */
	assert_int_equal(write_key(path, KEY, 0600), 0);
	if (geteuid() == 0 && chown(path, 65534, (gid_t)-1) == 0) {
		assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)),
				 -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_int_equal(k.len, 0);
	}
	unlink(path);
	assert_int_equal(fsd_auth_load_key(path, &k, err, sizeof(err)),
			 -ENOENT);
}

static void test_config_needs_key_or_insecure(void **state)
{
	struct fsd_config cfg;
	struct fsd_args a;
	char err[512];
	char *argv1[] = { "farswapd", "--insecure-no-auth", NULL };
	char *argv2[] = { "farswapd", "--key-file", "/etc/farswap/key", NULL };

	(void)state;
	fsd_config_defaults(&cfg);
	assert_int_equal(fsd_config_check_auth(&cfg, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "--insecure-no-auth"));
	assert_int_equal(fsd_parse_args(2, argv1, &a, err, sizeof(err)), 0);
	assert_int_equal(fsd_config_apply_args(&cfg, &a, err, sizeof(err)), 0);
	assert_true(cfg.insecure_no_auth);
	assert_int_equal(fsd_config_check_auth(&cfg, err, sizeof(err)), 0);

	fsd_config_defaults(&cfg);
	assert_int_equal(fsd_parse_args(3, argv2, &a, err, sizeof(err)), 0);
	assert_int_equal(fsd_config_apply_args(&cfg, &a, err, sizeof(err)), 0);
	assert_string_equal(cfg.key_file, "/etc/farswap/key");
	assert_int_equal(fsd_config_check_auth(&cfg, err, sizeof(err)), 0);

	fsd_config_defaults(&cfg);
	assert_int_equal(fsd_config_parse(&cfg,
					  "insecure-no-auth = yes\n", "t", err,
					  sizeof(err)), 0);
	assert_true(cfg.insecure_no_auth);
	assert_int_not_equal(fsd_config_set(&cfg, "key-file", "relative",
					    err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&cfg, "insecure-no-auth", "maybe",
					    err, sizeof(err)), 0);
}

/* A donor with a key refuses, at connect, a host that cannot prove it. */
static void test_host_without_auth_refused(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	assert_null(session(c, "host-x", false, &dec));
	assert_int_equal(dec.status, FARSWAP_ST_DENIED);
	assert_int_equal(dec.refusal, FSD_REFUSED_AUTH);
	/* The log line names the claimed host_id. */
	assert_non_null(strstr(dec.detail, "host-x"));
}

/* Before authentication: every request DENIED, no I/O QP joins. */
static void test_before_auth_denied(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, "host-a", true, &dec);
	union farswap_msg m;
	unsigned int grants = c->f.grants;

	assert_non_null(s);
	assert_int_equal(s->auth, FSD_AUTH_WAIT_REQ);
	assert_true(s->features & FARSWAP_FEAT_AUTH);
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, 1, 0x55);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x55);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	assert_int_equal(c->f.grants, grants);
	assert_int_equal(s->nr_slabs, 0);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 0x56);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	/* Not even the failure domain: the donor tells nothing before. */
	farswap_msg_init(&m, FARSWAP_MSG_INFO_REQ, 1, 0x58);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	assert_int_equal(c->d.cnt.auth_denied_msgs, 3);
	assert_false(s->closing);
	/* The token alone does not open an I/O queue pair. */
	assert_int_equal(io_join(c, s), FARSWAP_ST_DENIED);
	assert_int_equal(fsd_session_attach_io(s, 1, 1), -EACCES);
	assert_int_equal(s->io_attached, 0);
	/* Nor after the challenge, before the proof. */
	auth_req(c, s);
	assert_int_equal(s->auth, FSD_AUTH_WAIT_PROOF);
	assert_int_equal(io_join(c, s), FARSWAP_ST_DENIED);
	/* A proof before AUTH_REQ, or a second AUTH_REQ: out of turn. */
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 0x57);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	assert_int_equal(handle(c, s, &m, 1), -EPROTO);
	assert_true(s->closing);
}

static void test_right_mac_ok(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, "host-a", true, &dec);
	const struct farswap_auth_chal *ch;
	uint8_t want[32], mac[32];

	assert_non_null(s);
	ch = auth_req(c, s);
	assert_false(farswap_is_zero(ch->donor_nonce, 16));
	/* The donor's MAC is what the host computes with the same key. */
	assert_int_equal(fsd_auth_mac(&c->d.key, FARSWAP_AUTH_DONOR, HNONCE,
				      ch->donor_nonce, s->token, s->host_id,
				      c->d.donor_id, want), 0);
	assert_memory_equal(ch->donor_mac, want, 32);
	host_mac(KEY, s, ch->donor_nonce, mac);
	/* The donor's own MAC is no proof for the host. */
	assert_memory_not_equal(mac, ch->donor_mac, 32);
	assert_int_equal(proof(c, s, mac), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x102);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_OK);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	assert_int_equal(c->d.cnt.auth_ok, 1);
	assert_int_equal(io_join(c, s), FARSWAP_ST_OK);
	/* Now requests are served. */
	{
		union farswap_msg m;

		farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 9);
		assert_int_equal(handle(c, s, &m, 3), 0);
		assert_int_equal(fake_last(&c->f)->hdr.type,
				 FARSWAP_MSG_STATS_REP);
	}
}

static void test_wrong_mac_denied(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, "host-a", true, &dec);
	const struct farswap_auth_chal *ch;
	uint8_t mac[32];

	assert_non_null(s);
	ch = auth_req(c, s);
	host_mac("another-secret-of-32-bytes-00000", s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), -EACCES);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	assert_int_equal(s->auth, FSD_AUTH_FAILED);
	assert_true(s->refused);
	assert_int_equal(c->d.cnt.auth_failed, 1);
	assert_int_not_equal(io_join(c, s), FARSWAP_ST_OK);
	/* The reply is out: now the session closes. */
	assert_false(s->closing);
	fsd_sends_done(&c->d, s);
	assert_true(s->closing);
}

/*
 * A refused session waits only for its reply to leave: it answers
 * nothing more, and handshake-timeout closes it if the reply is never
 * acknowledged.
 */
static void test_refused_waits_for_reply(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, "host-a", true, &dec);
	const struct farswap_auth_chal *ch;
	union farswap_msg m;
	unsigned int sent;
	uint8_t mac[32];

	assert_non_null(s);
	c->d.lim.handshake_timeout_ms = 1000;
	ch = auth_req(c, s);
	host_mac("another-secret-of-32-bytes-00000", s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), -EACCES);
	sent = c->f.nr_sent;
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 9);
	assert_int_equal(handle(c, s, &m, 3), -ESHUTDOWN);
	assert_int_equal(c->f.nr_sent, sent);
	/* A right proof now changes nothing either. */
	host_mac(KEY, s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), -ESHUTDOWN);
	assert_int_equal(s->auth, FSD_AUTH_FAILED);
	fsd_donor_handshakes(&c->d, 999);
	assert_false(s->closing);
	fsd_donor_handshakes(&c->d, 1000);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.auth_failed, 1);
}

/* A proof that was right for one session is worthless in another. */
static void test_replayed_proof_fails(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s1 = session(c, "host-a", true, &dec);
	struct fsd_session *s2 = session(c, "host-a", true, &dec);
	const struct farswap_auth_chal *ch;
	uint8_t mac1[32];

	assert_non_null(s1);
	assert_non_null(s2);
	ch = auth_req(c, s1);
	host_mac(KEY, s1, ch->donor_nonce, mac1);
	assert_int_equal(proof(c, s1, mac1), 0);
	assert_int_equal(s1->auth, FSD_AUTH_OK);
	/* Same host nonce in s2; the donor's nonce and the token differ. */
	auth_req(c, s2);
	assert_int_equal(proof(c, s2, mac1), -EACCES);
	assert_int_equal(s2->auth, FSD_AUTH_FAILED);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
}

/* The handshake is bounded by handshake-timeout. */
static void test_auth_timeout(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, "host-a", true, &dec);

	assert_non_null(s);
	c->d.lim.handshake_timeout_ms = 1000;
	fsd_donor_handshakes(&c->d, 999);
	assert_false(s->closing);
	fsd_donor_handshakes(&c->d, 1000);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.auth_timeouts, 1);
}

/* A donor without a key: no authentication, AUTH_REQ is DENIED. */
static void test_no_key(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;
	union farswap_msg m;

	fsd_auth_key_clear(&c->d.key);
	s = session(c, "host-a", true, &dec);
	assert_non_null(s);
	assert_int_equal(s->auth, FSD_AUTH_NONE);
	assert_false(s->features & FARSWAP_FEAT_AUTH);
	assert_int_equal(io_join(c, s), FARSWAP_ST_OK);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 7);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	/* And a host without the feature is served as before. */
	assert_non_null(session(c, "host-b", false, &dec));
}

/* host-keys */

#define KEY_A "host-a-has-a-secret-of-its-own!!"

static char keys_dir[64];

/* A fresh host-keys directory (mode 0700) holding only @files. */
static void make_keys_dir(void)
{
	snprintf(keys_dir, sizeof(keys_dir), "/tmp/farswap-keys-XXXXXX");
	assert_non_null(mkdtemp(keys_dir));
}

static void put_host_key(const char *name, const char *secret, mode_t mode)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", keys_dir, name);
	assert_int_equal(write_key(path, secret, mode), 0);
}

static void remove_keys_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", keys_dir);
	assert_int_equal(system(cmd), 0);
}

static void test_host_key_file(void **state)
{
	struct fsd_auth_key k;
	char err[256];

	(void)state;
	make_keys_dir();
	put_host_key("host-a", KEY_A, 0600);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "host-a", &k, err,
						sizeof(err)), 0);
	assert_int_equal(k.len, 32);
	assert_memory_equal(k.bytes, KEY_A, 32);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "host-b", &k, err,
						sizeof(err)), -ENOENT);
	/* Names that are not a file of this directory. */
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "../host-a", &k,
						err, sizeof(err)), -EINVAL);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, ".hidden", &k, err,
						sizeof(err)), -EINVAL);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "a/b", &k, err,
						sizeof(err)), -EINVAL);
	assert_false(fsd_auth_host_key_name_ok(""));
	assert_true(fsd_auth_host_key_name_ok("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"));
	/* The file's own checks, as key-file's. */
	put_host_key("host-c", KEY_A, 0660);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "host-c", &k, err,
						sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "0660"));
	assert_null(strstr(err, "secret-of"));
	/* A directory others may write: anyone could add a host. */
	assert_int_equal(chmod(keys_dir, 0777), 0);
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "host-a", &k, err,
						sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chmod go-w"));
	assert_int_equal(k.len, 0);
	remove_keys_dir();
	/*
	 * The directory gone is not "no file for this host": that would
	 * hand every host to key-file without a word.
	 */
	assert_int_equal(fsd_auth_load_host_key(keys_dir, "host-a", &k, err,
						sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "No such file"));
}

/* The whole handshake of @host proving @secret: its AUTH_REP status. */
static int prove(struct ctx *c, const char *host, const char *secret)
{
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, host, true, &dec);
	const struct farswap_auth_chal *ch;
	union farswap_msg m;
	uint8_t mac[32];

	assert_non_null(s);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 0x101);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	handle(c, s, &m, 1);
	if (fake_last(&c->f)->hdr.type == FARSWAP_MSG_AUTH_REP)
		return le16_to_cpu(fake_last(&c->f)->auth_rep.status);
	ch = &fake_last(&c->f)->auth_chal;
	host_mac(secret, s, ch->donor_nonce, mac);
	proof(c, s, mac);
	return le16_to_cpu(fake_last(&c->f)->auth_rep.status);
}

/* @host's session, authenticated with @secret. */
static struct fsd_session *proven(struct ctx *c, const char *host,
				  const char *secret)
{
	struct fsd_conn_decision dec;
	struct fsd_session *s = session(c, host, true, &dec);
	const struct farswap_auth_chal *ch;
	uint8_t mac[32];

	assert_non_null(s);
	ch = auth_req(c, s);
	host_mac(secret, s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), 0);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	return s;
}

/* The info lines a test is after, captured. */
static char said[8][512];
static unsigned int nr_said;
static int level_before;

static void capture(int level, const char *line)
{
	(void)level;
	if (nr_said < 8)
		snprintf(said[nr_said], sizeof(said[0]), "%s", line);
	nr_said++;
}

static void capture_start(void)
{
	nr_said = 0;
	level_before = fsd_log_level();
	fsd_log_set_level(FSD_LOG_INFO);
	fsd_log_set_hook(capture);
}

static void capture_stop(void)
{
	fsd_log_set_hook(NULL);
	fsd_log_set_level(level_before);
}

/* The line of those captured that has @what, or NULL. */
static const char *said_line(const char *what)
{
	unsigned int i;

	for (i = 0; i < nr_said && i < 8; i++)
		if (strstr(said[i], what))
			return said[i];
	return NULL;
}

/*
 * Revoking a host: its host-keys file removed, or replaced, then a reload.
 * Its session, proven under the old key, goes (drained first if it holds
 * slabs, as a host allowed-hosts drops); hosts whose keys stand stay.
 */
static void test_host_key_revoked_at_reload(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *a, *b, *k;
	char path[512];

	make_keys_dir();
	put_host_key("host-a", KEY_A, 0600);
	put_host_key("host-b", KEY_A, 0600);
	fsd_donor_set_host_keys(&c->d, keys_dir);
	a = proven(c, "host-a", KEY_A);
	b = proven(c, "host-b", KEY_A);
	k = proven(c, "host-k", KEY);	/* key-file's */
	fsd_donor_recheck_access(&c->d);
	assert_false(a->closing);
	assert_false(b->closing);
	assert_false(k->closing);
	/* host-a's file removed: it would fall back to key-file, not its key. */
	snprintf(path, sizeof(path), "%s/host-a", keys_dir);
	assert_int_equal(unlink(path), 0);
	capture_start();
	fsd_donor_recheck_access(&c->d);
	capture_stop();
	assert_true(a->closing);
	assert_false(b->closing);
	assert_int_equal(c->d.cnt.closed_not_allowed, 1);
	assert_non_null(said_line("its host-keys file is gone after the reload; it holds no slab"));
	/* host-b's file replaced by another secret. */
	put_host_key("host-b", KEY, 0600);
	capture_start();
	fsd_donor_recheck_access(&c->d);
	capture_stop();
	assert_true(b->closing);
	assert_non_null(said_line("its key in host-keys or key-file changed after the reload; it holds no slab"));
	assert_false(k->closing);
	/* key-file changed: the hosts that proved the old one go. */
	memcpy(c->d.key.bytes, KEY_A, 32);
	fsd_donor_recheck_access(&c->d);
	assert_true(k->closing);
	assert_int_equal(c->d.cnt.closed_not_allowed, 3);
	remove_keys_dir();
}

/* A host with a file proves its own secret; the others, key-file's. */
static void test_host_keys_per_host(void **state)
{
	struct ctx *c = *state;
	char buf[2048];

	make_keys_dir();
	put_host_key("host-a", KEY_A, 0600);
	fsd_donor_set_host_keys(&c->d, keys_dir);
	assert_int_equal(prove(c, "host-a", KEY_A), FARSWAP_ST_OK);
	/* key-file's secret is not host-a's any more. */
	assert_int_equal(prove(c, "host-a", KEY), FARSWAP_ST_DENIED);
	assert_int_equal(prove(c, "host-b", KEY), FARSWAP_ST_OK);
	/* Nor is host-a's secret anyone else's. */
	assert_int_equal(prove(c, "host-c", KEY_A), FARSWAP_ST_DENIED);
	assert_int_equal(c->d.cnt.auth_ok, 2);
	assert_int_equal(c->d.cnt.auth_failed, 2);
	fsd_donor_stats(&c->d, buf, sizeof(buf));
	assert_non_null(strstr(buf, "auth hmac-sha256\n"));
	remove_keys_dir();
}

/* host-keys alone: a host without a file is refused at its AUTH_REQ. */
static void test_host_keys_only(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;

	fsd_auth_key_clear(&c->d.key);
	make_keys_dir();
	fsd_donor_set_host_keys(&c->d, keys_dir);
	assert_true(fsd_donor_auth_required(&c->d));
	/* Authentication is still required of every host. */
	assert_null(session(c, "host-x", false, &dec));
	assert_int_equal(prove(c, "host-b", KEY), FARSWAP_ST_DENIED);
	assert_int_equal(c->d.cnt.grants, 0);
	/* A key added while farswapd runs is read at the next handshake. */
	put_host_key("host-b", KEY_A, 0600);
	assert_int_equal(prove(c, "host-b", KEY_A), FARSWAP_ST_OK);
	remove_keys_dir();
}

/* A host whose id is binary (a kernel's UUID) may have its file so named. */
static void test_host_keys_uuid_name(void **state)
{
	struct ctx *c = *state;
	static const uint8_t id[16] = { 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a,
					0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4,
					0xc3, 0xd2, 0xe1, 0xf0 };
	struct fsd_conn_decision dec;
	struct farswap_conn_req req;
	const struct farswap_auth_chal *ch;
	struct fsd_session *s;
	uint8_t mac[32];

	fsd_auth_key_clear(&c->d.key);
	make_keys_dir();
	put_host_key("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", KEY_A, 0600);
	fsd_donor_set_host_keys(&c->d, keys_dir);
	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 128);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH);
	memcpy(req.host_id, id, sizeof(id));
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), &dec, 0);
	assert_int_equal(dec.status, FARSWAP_ST_OK);
	s = fsd_session_new(&c->d, &dec, "10.0.0.1:5000", 0);
	assert_non_null(s);
	fsd_session_established(&c->d, s, 0);
	assert_string_equal(s->name, "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
	ch = auth_req(c, s);
	host_mac(KEY_A, s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), 0);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	remove_keys_dir();
}

/*
 * The log says which key a host proved, by its file: its own in
 * host-keys (its id proven), or the shared key-file (its id claimed);
 * never a byte of either secret.
 */
static void test_log_names_key_proved(void **state)
{
	struct ctx *c = *state;
	char want[256];
	unsigned int i;

	make_keys_dir();
	put_host_key("host-a", KEY_A, 0600);
	fsd_donor_set_host_keys(&c->d, keys_dir);
	capture_start();
	proven(c, "host-a", KEY_A);
	proven(c, "host-b", KEY);
	capture_stop();
	snprintf(want, sizeof(want),
		 "host 1 (host-a, 10.0.0.1:5000): authenticated (hmac-sha256) with its own key, host-keys file %s/host-a: host id proven",
		 keys_dir);
	assert_non_null(said_line(want));
	assert_non_null(said_line("host 2 (host-b, 10.0.0.1:5000): authenticated (hmac-sha256) with the shared key-file /etc/farswap/key: host id claimed, not proven"));
	for (i = 0; i < nr_said && i < 8; i++) {
		assert_null(strstr(said[i], KEY));
		assert_null(strstr(said[i], KEY_A));
	}
	remove_keys_dir();
}

/* SLAB_ALLOC_REQ of @s: the reply's status. */
static unsigned int alloc_status(struct ctx *c, struct fsd_session *s)
{
	union farswap_msg m;

	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, 1, 0x77);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(handle(c, s, &m, 5), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type,
			 FARSWAP_MSG_SLAB_ALLOC_REP);
	return le16_to_cpu(fake_last(&c->f)->alloc_rep.status);
}

/*
 * max-slabs-per-host counts by the proven identity: a session that proved
 * host-a's own key shares its cap with none that only claimed host-a
 * (with key-file, here after host-a's file went away), and the log says
 * how the id is known.
 */
static void test_cap_keyed_on_proof(void **state)
{
	struct ctx *c = *state;
	struct fsd_session *own, *claimed;
	char path[512];

	make_keys_dir();
	put_host_key("host-a", KEY_A, 0600);
	fsd_donor_set_host_keys(&c->d, keys_dir);
	c->d.lim.max_slabs_per_host = 1;
	own = proven(c, "host-a", KEY_A);
	assert_int_equal(own->proof, FSD_PROOF_HOST_KEY);
	snprintf(path, sizeof(path), "%s/host-a", keys_dir);
	assert_int_equal(unlink(path), 0);
	claimed = proven(c, "host-a", KEY);
	assert_int_equal(claimed->proof, FSD_PROOF_KEY_FILE);
	/* The claimed one takes its share first: the proven one keeps its. */
	assert_int_equal(alloc_status(c, claimed), FARSWAP_ST_OK);
	assert_int_equal(alloc_status(c, own), FARSWAP_ST_OK);
	capture_start();
	assert_int_equal(alloc_status(c, claimed), FARSWAP_ST_NO_SPACE);
	assert_int_equal(alloc_status(c, own), FARSWAP_ST_NO_SPACE);
	capture_stop();
	assert_int_equal(c->d.cnt.alloc_capped, 2);
	assert_non_null(said_line("its host holds 1 slabs, max-slabs-per-host 1 (host id claimed)"));
	assert_non_null(said_line("its host holds 1 slabs, max-slabs-per-host 1 (host id proven)"));
	remove_keys_dir();
}

/* The donor key of the pinning tests. */
#define DKEY "fedcba9876543210fedcba9876543210"

static void set_donor_key(struct fsd_donor *d, const char *secret)
{
	struct fsd_auth_key k = { .len = strlen(secret) };

	memcpy(k.bytes, secret, k.len);
	fsd_donor_set_donor_key(d, &k);
}

static struct fsd_auth_key pair_of(const char *donor, const char *host)
{
	struct fsd_auth_key dk = { .len = strlen(donor) };
	struct fsd_auth_key hk = { .len = strlen(host) };
	struct fsd_auth_key pair;

	memcpy(dk.bytes, donor, dk.len);
	memcpy(hk.bytes, host, hk.len);
	assert_int_equal(fsd_auth_pair_key(&dk, &hk, &pair), 0);
	return pair;
}

/* A control session of @host asking for @features on top of FEAT_AUTH. */
static struct fsd_session *session_with(struct ctx *c, const char *host,
					uint32_t features,
					struct fsd_conn_decision *dec)
{
	struct farswap_conn_req req;
	struct fsd_session *s;

	farswap_conn_req_init(&req, FARSWAP_QT_CTRL, 0, 2, 0, 128);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH | features);
	strncpy((char *)req.host_id, host, FARSWAP_ID_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), dec, 0);
	if (dec->status != FARSWAP_ST_OK)
		return NULL;
	s = fsd_session_new(&c->d, dec, "10.0.0.1:5000", 0);
	if (s)
		fsd_session_established(&c->d, s, 0);
	return s;
}

static void mac_with(const struct fsd_auth_key *k,
		     enum farswap_auth_role role, const struct fsd_session *s,
		     const uint8_t *dnonce, const uint8_t *donor_id,
		     uint8_t *mac)
{
	assert_int_equal(fsd_auth_mac(k, role, HNONCE, dnonce, s->token,
				      s->host_id, donor_id, mac), 0);
}

/*
 * Known answer, computed apart from this code (Python's hmac):
 * HMAC-SHA256(DKEY, "farswap pair v1" "\0" KEY).
 */
static void test_pair_key_known_answer(void **state)
{
	static const uint8_t want[32] = {
		0x27, 0x37, 0x01, 0x33, 0x4a, 0xef, 0xea, 0x9b,
		0xd7, 0x6d, 0x36, 0x35, 0x6d, 0x1f, 0x35, 0xf1,
		0xfd, 0xc8, 0x6e, 0xba, 0xc3, 0x45, 0xaa, 0x1d,
		0x51, 0xa8, 0xe1, 0xcb, 0x10, 0x06, 0x92, 0x0e,
	};
	struct fsd_auth_key pair = pair_of(DKEY, KEY), none = { .len = 0 };
	struct fsd_auth_key hk = { .len = 32 };

	(void)state;
	assert_int_equal(pair.len, 32);
	assert_memory_equal(pair.bytes, want, 32);
	/* Each key changes it; either missing makes none. */
	pair = pair_of(DKEY, "0123456789abcdef0123456789abcdeF");
	assert_memory_not_equal(pair.bytes, want, 32);
	memcpy(hk.bytes, KEY, 32);
	assert_int_equal(fsd_auth_pair_key(&none, &hk, &pair), -ENOKEY);
	assert_int_equal(pair.len, 0);
	assert_int_equal(fsd_auth_pair_key(&hk, &none, &pair), -ENOKEY);
}

/*
 * A host that pins this donor: granted only with a donor key, then both
 * MACs are under the pair key, and the host key alone proves nothing.
 */
static void test_pinned_host_proves_pair(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key pair = pair_of(DKEY, KEY), host = { .len = 32 };
	const struct farswap_auth_chal *ch;
	struct fsd_session *s;
	uint8_t want[32], mac[32];

	memcpy(host.bytes, KEY, 32);
	set_donor_key(&c->d, DKEY);
	s = session_with(c, "host-a", FARSWAP_FEAT_PINNED, &dec);
	assert_non_null(s);
	assert_true(s->features & FARSWAP_FEAT_PINNED);
	ch = auth_req(c, s);
	mac_with(&pair, FARSWAP_AUTH_DONOR, s, ch->donor_nonce,
		 c->d.donor_id, want);
	assert_memory_equal(ch->donor_mac, want, 32);
	/* Under the host key alone, as an unpinned donor would: not it. */
	mac_with(&host, FARSWAP_AUTH_DONOR, s, ch->donor_nonce,
		 c->d.donor_id, want);
	assert_memory_not_equal(ch->donor_mac, want, 32);
	/* A host that proves the host key alone is refused... */
	mac_with(&host, FARSWAP_AUTH_HOST, s, ch->donor_nonce, c->d.donor_id,
		 mac);
	assert_int_equal(proof(c, s, mac), -EACCES);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	/* ...one that proves the pair key is in. */
	s = session_with(c, "host-b", FARSWAP_FEAT_PINNED, &dec);
	assert_non_null(s);
	ch = auth_req(c, s);
	mac_with(&pair, FARSWAP_AUTH_HOST, s, ch->donor_nonce, c->d.donor_id,
		 mac);
	assert_int_equal(proof(c, s, mac), 0);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	assert_int_equal(io_join(c, s), FARSWAP_ST_OK);
	fsd_auth_key_clear(&c->d.donor_key);
}

/* Without a donor key the feature is not granted: the host refuses then. */
static void test_pinned_host_no_donor_key(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_session *s;

	s = session_with(c, "host-a", FARSWAP_FEAT_PINNED, &dec);
	assert_non_null(s);
	assert_false(s->features & FARSWAP_FEAT_PINNED);
	assert_true(s->features & FARSWAP_FEAT_AUTH);
}

/* A donor key does not change what an unpinning host proves. */
static void test_unpinned_host_with_donor_key(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	const struct farswap_auth_chal *ch;
	struct fsd_session *s;
	uint8_t mac[32];

	set_donor_key(&c->d, DKEY);
	s = session_with(c, "host-a", 0, &dec);
	assert_non_null(s);
	assert_false(s->features & FARSWAP_FEAT_PINNED);
	ch = auth_req(c, s);
	host_mac(KEY, s, ch->donor_nonce, mac);
	assert_int_equal(proof(c, s, mac), 0);
	assert_int_equal(s->auth, FSD_AUTH_OK);
	fsd_auth_key_clear(&c->d.donor_key);
}

/* donor-key-file needs a host's key to be proven with. */
static void test_config_donor_key_alone(void **state)
{
	struct fsd_config cfg;
	char err[512];

	(void)state;
	fsd_config_defaults(&cfg);
	assert_int_equal(fsd_config_set(&cfg, "donor-key-file",
					"/etc/farswap/donor.key", err,
					sizeof(err)), 0);
	assert_int_equal(fsd_config_check_auth(&cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "donor-key-file without key-file"));
	assert_int_equal(fsd_config_set(&cfg, "host-keys", "/etc/farswap/h",
					err, sizeof(err)), 0);
	assert_int_equal(fsd_config_check_auth(&cfg, err, sizeof(err)), 0);
	assert_int_not_equal(fsd_config_set(&cfg, "donor-key-file", "rel",
					    err, sizeof(err)), 0);
}

/* RFC 7748, 6.1: Alice's and Bob's keys and their shared secret. */
static void test_x25519_rfc7748(void **state)
{
	static const uint8_t a_priv[32] = {
		0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1,
		0x72, 0x51, 0xb2, 0x66, 0x45, 0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0,
		0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
	};
	static const uint8_t a_pub[32] = {
		0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54, 0x74, 0x8b, 0x7d,
		0xdc, 0xb4, 0x3e, 0xf7, 0x5a, 0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38,
		0x1a, 0xf4, 0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a,
	};
	static const uint8_t b_pub[32] = {
		0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61,
		0xc2, 0xec, 0xe4, 0x35, 0x37, 0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78,
		0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
	};
	static const uint8_t shared[32] = {
		0x4a, 0x5d, 0x9d, 0x5b, 0xa4, 0xce, 0x2d, 0xe1, 0x72, 0x8e, 0x3b,
		0xf4, 0x80, 0x35, 0x0f, 0x25, 0xe0, 0x7e, 0x21, 0xc9, 0x47, 0xd1,
		0x9e, 0x33, 0x76, 0xf0, 0x9b, 0x3c, 0x1e, 0x16, 0x17, 0x42,
	};
	uint8_t pub[32], dh[32], zero[32] = { 0 };

	(void)state;
	assert_int_equal(fsd_kx_public(a_priv, pub), 0);
	assert_memory_equal(pub, a_pub, 32);
	assert_int_equal(fsd_kx_shared(a_priv, b_pub, dh), 0);
	assert_memory_equal(dh, shared, 32);
	/* A point of low order gives no shared secret. */
	assert_int_equal(fsd_kx_shared(a_priv, zero, dh), -EINVAL);
	assert_true(farswap_is_zero(dh, 32));
}

/*
 * The session-key handshake's known answer, which the kernel's KUnit
 * suite (tests/kunit/auth_test.c) checks farswap.ko against.
 */
static void test_kx_known_answer(void **state)
{
	static const uint8_t want_dmac[32] = {
		0xcb, 0x67, 0x25, 0xab, 0x72, 0x21, 0x12, 0x38, 0x34, 0x75, 0x56,
		0x43, 0x09, 0x8e, 0x9c, 0x38, 0x5e, 0xe5, 0xda, 0x88, 0x6c, 0x56,
		0x16, 0x89, 0x66, 0x04, 0xa1, 0x96, 0x8d, 0x3c, 0xe4, 0x11,
	};
	static const uint8_t want_hmac[32] = {
		0x0d, 0x0d, 0xef, 0x86, 0xa1, 0xb2, 0x2c, 0xc2, 0xf2, 0xac, 0x6a,
		0x10, 0x08, 0x5e, 0x94, 0x39, 0xf3, 0x77, 0x57, 0x6f, 0xb1, 0xf5,
		0x74, 0xf4, 0xcf, 0x11, 0x88, 0xee, 0xac, 0xc9, 0xda, 0x0b,
	};
	static const uint8_t want_tag[16] = {
		0x4a, 0x2d, 0xbc, 0x8a, 0xea, 0x1f, 0x9b, 0x91, 0xbd, 0xe1, 0x13,
		0x7d, 0xed, 0xbd, 0x42, 0x14,
	};
	static const uint8_t want_join[12] = {
		0x1e, 0xcf, 0xaa, 0x6a, 0xf8, 0x42, 0x80, 0xe2, 0xa0, 0x42, 0x4b,
		0x4a,
	};
	uint8_t hpriv[32], dpriv[32], hpub[32], dpub[32], dh[32], dh2[32];
	uint8_t hn[16], dn[16], hid[16] = "host-a", did[16] = "donor-1";
	uint8_t dmac[32], hmac[32], sk[32], tag[16], join[12];
	struct fsd_auth_key k = { .len = 32 };
	struct farswap_kx_transcript t;
	union farswap_msg m;
	int i;

	(void)state;
	for (i = 0; i < 32; i++) {
		hpriv[i] = (uint8_t)(0x40 + i);
		dpriv[i] = (uint8_t)(0x80 + i);
	}
	for (i = 0; i < 16; i++) {
		hn[i] = (uint8_t)i;
		dn[i] = (uint8_t)(16 + i);
	}
	memcpy(k.bytes, KEY, 32);
	assert_int_equal(fsd_kx_public(hpriv, hpub), 0);
	assert_int_equal(fsd_kx_public(dpriv, dpub), 0);
	assert_int_equal(fsd_kx_shared(dpriv, hpub, dh), 0);
	assert_int_equal(fsd_kx_shared(hpriv, dpub, dh2), 0);
	assert_memory_equal(dh, dh2, 32);
	farswap_kx_transcript_init(&t, "", hn, dn, hpub, dpub,
				   0x0123456789abcdefull, hid, did, 0x1f7, 0xbf,
				   1);
	assert_int_equal(fsd_kx_derive(&k, dh, &t, dmac, hmac, sk), 0);
	assert_memory_equal(dmac, want_dmac, 32);
	assert_memory_equal(hmac, want_hmac, 32);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 7);
	assert_int_equal(fsd_kx_tag(sk, 'D', 3, &m,
				    farswap_msg_size(FARSWAP_MSG_STATS_REQ),
				    tag), 0);
	assert_memory_equal(tag, want_tag, 16);
	assert_int_equal(fsd_kx_join_tag(sk, 0x0123456789abcdefull, hid, join),
			 0);
	assert_memory_equal(join, want_join, 12);
	/* The version and each side's features are bound. */
	t.donor_features ^= cpu_to_le32(FARSWAP_FEAT_PINNED);
	assert_int_equal(fsd_kx_derive(&k, dh, &t, dmac, hmac, sk), 0);
	assert_memory_not_equal(dmac, want_dmac, 32);
}

/* The host's side of a session-key handshake, as farswap.ko runs it. */
struct kx_host {
	uint8_t priv[32];
	uint8_t pub[32];
	uint8_t nonce[16];
	uint8_t key[32];	/* the session key */
	uint64_t tx_seq;
	uint64_t rx_seq;
};

/* A message as the host sends it once tagged: body, then its tag. */
static int send_tagged(struct ctx *c, struct fsd_session *s,
		       struct kx_host *h, union farswap_msg *m, uint64_t seq)
{
	size_t len = farswap_msg_size(m->hdr.type);

	assert_int_equal(fsd_kx_tag(h->key, 'H', seq, m, len, m->raw + len),
			 0);
	return fsd_handle_msg(&c->d, s, m, len + FARSWAP_KX_TAG_LEN, 5);
}

/* The donor's last message, tagged: its tag checks out with @h's key. */
static void assert_tagged_from_donor(struct ctx *c, struct kx_host *h)
{
	size_t i = (c->f.nr_sent - 1) % FAKE_SENT_MAX;
	const union farswap_msg *m = &c->f.sent[i];
	size_t len = farswap_msg_size(m->hdr.type);
	uint8_t want[16];

	assert_int_equal(c->f.sent_len[i], len + FARSWAP_KX_TAG_LEN);
	assert_int_equal(fsd_kx_tag(h->key, 'D', h->rx_seq++, m, len, want), 0);
	assert_memory_equal(want, m->raw + len, 16);
}

/*
 * Up to AUTH_REP OK with a session key, @k the key the host proves;
 * false when the donor's MAC did not check out (the host then stops).
 */
static bool kx_handshake(struct ctx *c, struct fsd_session *s,
			 struct kx_host *h, const struct fsd_auth_key *k)
{
	const struct farswap_auth_kx_chal *ch;
	struct farswap_kx_transcript t;
	uint8_t hmac[32];
	union farswap_msg m;
	int i, ret;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < 32; i++)
		h->priv[i] = (uint8_t)(0x40 + i);
	for (i = 0; i < 16; i++)
		h->nonce[i] = (uint8_t)(i + 1);
	assert_int_equal(fsd_kx_public(h->priv, h->pub), 0);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_KX_REQ, 1, 0x301);
	memcpy(m.kx_req.host_nonce, h->nonce, 16);
	memcpy(m.kx_req.host_pub, h->pub, 32);
	assert_int_equal(handle(c, s, &m, 1), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_KX_CHAL);
	assert_int_equal(le64_to_cpu(fake_last(&c->f)->hdr.cookie), 0x301);
	ch = &fake_last(&c->f)->kx_chal;
	farswap_kx_transcript_init(&t, "", h->nonce, ch->donor_nonce, h->pub,
				   ch->donor_pub, s->token, s->host_id,
				   c->d.donor_id, s->host_features,
				   s->features, s->version);
	ret = fsd_kx_host(k, h->priv, &t, ch->donor_mac, hmac, h->key);
	if (ret == -EACCES)
		return false;
	assert_int_equal(ret, 0);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_PROOF, 1, 0x302);
	memcpy(m.auth_proof.host_mac, hmac, 32);
	assert_int_equal(handle(c, s, &m, 2), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_OK);
	/* The AUTH_REP itself went bare. */
	assert_int_equal(c->f.sent_len[(c->f.nr_sent - 1) % FAKE_SENT_MAX],
			 sizeof(struct farswap_auth_rep));
	return true;
}

static int io_join_tag(struct ctx *c, struct fsd_session *s,
		       const uint8_t *tag, unsigned int qid)
{
	struct farswap_conn_req req;
	struct fsd_conn_decision dec;

	farswap_conn_req_init(&req, FARSWAP_QT_IO, qid, 2, s->token, 128);
	req.features |= cpu_to_le32(FARSWAP_FEAT_AUTH | FARSWAP_FEAT_KX);
	memcpy(req.host_id, s->host_id, FARSWAP_ID_LEN);
	if (tag)
		memcpy(req.join_tag, tag, FARSWAP_KX_JOIN_TAG_LEN);
	fsd_conn_decide(&c->d, fake_peer(), &req, sizeof(req), &dec, 0);
	if (dec.status == FARSWAP_ST_OK)
		assert_int_equal(fsd_session_attach_io(s, qid, 0), 0);
	return dec.status;
}

/*
 * A host with a session key: its proof, then every message both ways
 * tagged, I/O queues that prove the key; a message changed, replayed or
 * bare after the handshake closes the session.
 */
static void test_kx_session(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key host = { .len = 32 };
	struct fsd_session *s;
	struct kx_host h;
	uint8_t join[12];
	union farswap_msg m, keep;

	memcpy(host.bytes, KEY, 32);
	s = session_with(c, "host-a", FARSWAP_FEAT_KX, &dec);
	assert_non_null(s);
	assert_true(s->features & FARSWAP_FEAT_KX);
	assert_true(kx_handshake(c, s, &h, &host));
	assert_int_equal(s->auth, FSD_AUTH_OK);
	assert_true(s->tagged);
	assert_int_equal(c->d.cnt.auth_kx, 1);
	/* I/O queues: the join tag of the session key, and nothing else. */
	assert_int_equal(io_join_tag(c, s, NULL, 1), FARSWAP_ST_DENIED);
	memset(join, 0x5a, sizeof(join));
	assert_int_equal(io_join_tag(c, s, join, 1), FARSWAP_ST_DENIED);
	assert_int_equal(c->d.cnt.join_refused, 2);
	assert_int_equal(fsd_kx_join_tag(h.key, s->token, s->host_id, join), 0);
	assert_int_equal(io_join_tag(c, s, join, 1), FARSWAP_ST_OK);
	/* The same join again (a replay): the qid is taken. */
	assert_int_equal(io_join_tag(c, s, join, 1), FARSWAP_ST_INVALID);
	/* Tagged both ways. */
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 9);
	keep = m;
	assert_int_equal(send_tagged(c, s, &h, &m, h.tx_seq++), 0);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_STATS_REP);
	assert_tagged_from_donor(c, &h);
	m = keep;
	assert_int_equal(send_tagged(c, s, &h, &m, h.tx_seq++), 0);
	assert_tagged_from_donor(c, &h);
	/* A replay of the first (its old count): the session ends. */
	m = keep;
	assert_int_equal(send_tagged(c, s, &h, &m, 0), -EPROTO);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.bad_tags, 1);
}

/*
 * require-session-keys: a host that proves its key without a session key
 * is refused at its AUTH_REQ, before the donor computes a MAC it could
 * attack offline; one with a session key is let in as ever.
 */
static void test_require_session_keys(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key host = { .len = 32 };
	struct fsd_session *s;
	struct kx_host h;
	union farswap_msg m;
	unsigned int i;

	memcpy(host.bytes, KEY, 32);
	c->d.lim.require_kx = true;
	s = session(c, "host-a", true, &dec);
	assert_non_null(s);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 0x101);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	assert_int_equal(handle(c, s, &m, 1), -EACCES);
	assert_int_equal(fake_last(&c->f)->hdr.type, FARSWAP_MSG_AUTH_REP);
	assert_int_equal(le16_to_cpu(fake_last(&c->f)->auth_rep.status),
			 FARSWAP_ST_DENIED);
	assert_int_equal(s->auth, FSD_AUTH_FAILED);
	assert_int_equal(c->d.cnt.auth_failed, 1);
	/* No MAC went out: nothing in any message but the refusal. */
	for (i = 0; i < c->f.nr_sent; i++)
		assert_int_not_equal(c->f.sent[i].hdr.type,
				     FARSWAP_MSG_AUTH_CHAL);
	s = session_with(c, "host-b", FARSWAP_FEAT_KX, &dec);
	assert_true(kx_handshake(c, s, &h, &host));
	assert_int_equal(s->auth, FSD_AUTH_OK);
	assert_int_equal(c->d.cnt.auth_kx, 1);
	assert_int_equal(c->d.cnt.auth_legacy, 0);
}

/*
 * auth-timeout runs from the control QP's establishment, and is shorter
 * than handshake-timeout: a connect that never proves the key loses its
 * place after it; one that proves in time keeps it.
 */
static void test_auth_timeout_from_established(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key host = { .len = 32 };
	struct fsd_session *idle, *slow, *ok;
	struct kx_host h;

	memcpy(host.bytes, KEY, 32);
	c->d.lim.handshake_timeout_ms = 5000;
	c->d.lim.auth_timeout_ms = 2000;
	idle = session(c, "host-i", true, &dec);
	ok = session_with(c, "host-o", FARSWAP_FEAT_KX, &dec);
	/* Accepted at 0, its connection up only at 1500. */
	slow = session(c, "host-s", true, &dec);
	assert_non_null(idle);
	assert_non_null(ok);
	assert_non_null(slow);
	slow->established = false;
	fsd_session_established(&c->d, slow, 1500);
	assert_true(kx_handshake(c, ok, &h, &host));
	fsd_donor_handshakes(&c->d, 1999);
	assert_false(idle->closing);
	fsd_donor_handshakes(&c->d, 2000);
	assert_true(idle->closing);
	assert_false(slow->closing);
	assert_false(ok->closing);
	assert_int_equal(c->d.cnt.auth_timeouts, 1);
	fsd_donor_handshakes(&c->d, 3500);
	assert_true(slow->closing);
	assert_int_equal(c->d.cnt.auth_timeouts, 2);
	fsd_donor_handshakes(&c->d, 60000);
	assert_false(ok->closing);
}

/* After the handshake a bare message, or a changed one, ends it. */
static void test_kx_untagged_refused(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key host = { .len = 32 };
	struct fsd_session *s;
	struct kx_host h;
	union farswap_msg m;

	memcpy(host.bytes, KEY, 32);
	s = session_with(c, "host-a", FARSWAP_FEAT_KX, &dec);
	assert_true(kx_handshake(c, s, &h, &host));
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 9);
	assert_int_equal(handle(c, s, &m, 3), -EPROTO);
	assert_true(s->closing);
	/* Changed on the way: one bit of the body. */
	s = session_with(c, "host-b", FARSWAP_FEAT_KX, &dec);
	assert_true(kx_handshake(c, s, &h, &host));
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, 1, 9);
	m.alloc_req.slab_size = cpu_to_le64(SLAB);
	assert_int_equal(fsd_kx_tag(h.key, 'H', 0, &m,
				    sizeof(m.alloc_req),
				    m.raw + sizeof(m.alloc_req)), 0);
	m.alloc_req.host_slab = cpu_to_le64(1);
	assert_int_equal(fsd_handle_msg(&c->d, s, &m, sizeof(m.alloc_req) +
					FARSWAP_KX_TAG_LEN, 4), -EPROTO);
	assert_true(s->closing);
	assert_int_equal(c->d.cnt.grants, 0);
	assert_int_equal(c->d.cnt.bad_tags, 1);
}

/*
 * A host with another key: the donor's MAC does not check out (the host
 * stops there); one that sends the old AUTH_REQ after announcing session
 * keys is out of turn.
 */
static void test_kx_wrong_key(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key other = { .len = 32 };
	struct fsd_session *s;
	struct kx_host h;
	union farswap_msg m;

	memcpy(other.bytes, KEY, 32);
	other.bytes[0] ^= 1;
	s = session_with(c, "host-a", FARSWAP_FEAT_KX, &dec);
	assert_false(kx_handshake(c, s, &h, &other));
	assert_false(s->tagged);
	s = session_with(c, "host-b", FARSWAP_FEAT_KX, &dec);
	farswap_msg_init(&m, FARSWAP_MSG_AUTH_REQ, 1, 0x101);
	memcpy(m.auth_req.host_nonce, HNONCE, 16);
	assert_int_equal(handle(c, s, &m, 1), -EPROTO);
	assert_true(s->closing);
}

/* A pinned host with a session key proves the pair key. */
static void test_kx_pinned(void **state)
{
	struct ctx *c = *state;
	struct fsd_conn_decision dec;
	struct fsd_auth_key pair = pair_of(DKEY, KEY), host = { .len = 32 };
	struct fsd_session *s;
	struct kx_host h;

	memcpy(host.bytes, KEY, 32);
	set_donor_key(&c->d, DKEY);
	s = session_with(c, "host-a", FARSWAP_FEAT_KX | FARSWAP_FEAT_PINNED,
			 &dec);
	assert_true(s->features & FARSWAP_FEAT_PINNED);
	assert_false(kx_handshake(c, s, &h, &host));
	s = session_with(c, "host-b", FARSWAP_FEAT_KX | FARSWAP_FEAT_PINNED,
			 &dec);
	assert_true(kx_handshake(c, s, &h, &pair));
	assert_true(s->tagged);
	fsd_auth_key_clear(&c->d.donor_key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_known_answer),
		cmocka_unit_test(test_pair_key_known_answer),
		cmocka_unit_test_setup_teardown(test_pinned_host_proves_pair,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_pinned_host_no_donor_key,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unpinned_host_with_donor_key,
						setup, teardown),
		cmocka_unit_test(test_config_donor_key_alone),
		cmocka_unit_test(test_x25519_rfc7748),
		cmocka_unit_test(test_kx_known_answer),
		cmocka_unit_test_setup_teardown(test_kx_session, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_require_session_keys,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_timeout_from_established,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kx_untagged_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kx_wrong_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kx_pinned, setup,
						teardown),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_config_needs_key_or_insecure),
		cmocka_unit_test_setup_teardown(test_host_without_auth_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_auth_denied, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_right_mac_ok, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wrong_mac_denied, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refused_waits_for_reply,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_replayed_proof_fails,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_timeout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_key, setup, teardown),
		cmocka_unit_test(test_host_key_file),
		cmocka_unit_test_setup_teardown(test_host_keys_per_host, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_key_revoked_at_reload,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_keys_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_keys_uuid_name,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_names_key_proved,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_keyed_on_proof,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
