// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_auth: the host's half of authentication
 * (kmod/auth.c) and its attach option (key= in kmod/args.c).
 *
 * The MAC is checked against a known answer computed apart from this
 * code: the 88 bytes of struct farswap_auth_mac_input written out by
 * hand and fed to `openssl dgst -sha256 -hmac KEY` (the same answer the
 * daemon's unit test checks, so host and donor agree byte for byte).
 * Every field the MAC binds changes it when one of its bytes flips.
 * The pair key of pinned donors is checked the same way, against
 * Python's hmac (as the daemon's unit test checks it).
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "args.h"
#include "auth.h"

#define KEY "0123456789abcdef0123456789abcdef"

struct mac_in {
	struct farswap_auth_key key;
	u8 hn[FARSWAP_AUTH_NONCE_LEN];
	u8 dn[FARSWAP_AUTH_NONCE_LEN];
	u64 session;
	u8 hid[FARSWAP_ID_LEN];
	u8 did[FARSWAP_ID_LEN];
};

static void mac_in_init(struct mac_in *m)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	memcpy(m->key.bytes, KEY, 32);
	m->key.len = 32;
	for (i = 0; i < FARSWAP_AUTH_NONCE_LEN; i++) {
		m->hn[i] = i;
		m->dn[i] = 16 + i;
	}
	m->session = 0x0123456789abcdefULL;
	memcpy(m->hid, "host-a", 6);
	memcpy(m->did, "donor-1", 7);
}

/* @key's bytes, prepared as attach prepares them. */
static int mac_of(const struct mac_in *m, enum farswap_auth_role role,
		  u8 *mac)
{
	struct farswap_auth_key k = m->key;
	int ret;

	ret = farswap_auth_key_prepare(&k);
	if (!ret)
		ret = farswap_auth_mac(&k, role, m->hn, m->dn, m->session,
				       m->hid, m->did, mac);
	farswap_auth_key_clear(&k);
	return ret;
}

static int answer_with(const struct farswap_auth_key *key,
		       const u8 *host_nonce,
		       const struct farswap_auth_chal *chal, u64 session,
		       const u8 *host_id, const u8 *donor_id, u8 *host_mac)
{
	struct farswap_auth_key k = *key;
	int ret;

	ret = farswap_auth_key_prepare(&k);
	if (!ret)
		ret = farswap_auth_answer(&k, 1, host_nonce, chal, session,
					  host_id, donor_id, host_mac);
	farswap_auth_key_clear(&k);
	return ret;
}

static const u8 want_donor[32] = {
	0xe7, 0x89, 0x91, 0xed, 0xa5, 0xa6, 0xd6, 0xb1,
	0x4e, 0x64, 0x92, 0x70, 0xa4, 0xa5, 0xa3, 0x43,
	0x64, 0x1a, 0x75, 0xbf, 0x88, 0xf2, 0x41, 0xe8,
	0x7d, 0xbe, 0x74, 0x77, 0xd4, 0x51, 0xab, 0x4a,
};

static const u8 want_host[32] = {
	0x87, 0xb5, 0xd5, 0xf4, 0xdd, 0x80, 0xfd, 0xfd,
	0xe0, 0xc7, 0x16, 0x5b, 0xaa, 0x8f, 0x6a, 0xe6,
	0x05, 0xaf, 0x00, 0x29, 0xf0, 0x04, 0xa3, 0x0a,
	0xeb, 0x5e, 0x9b, 0x05, 0x99, 0x5e, 0x36, 0x47,
};

static void known_answer_test(struct kunit *test)
{
	struct mac_in m;
	u8 mac[32];

	mac_in_init(&m);
	KUNIT_ASSERT_EQ(test, mac_of(&m, FARSWAP_AUTH_DONOR, mac), 0);
	KUNIT_EXPECT_MEMEQ(test, mac, want_donor, 32);
	KUNIT_EXPECT_TRUE(test, farswap_auth_mac_equal(mac, want_donor));
	KUNIT_ASSERT_EQ(test, mac_of(&m, FARSWAP_AUTH_HOST, mac), 0);
	KUNIT_EXPECT_MEMEQ(test, mac, want_host, 32);
	/* The labels keep one side's MAC from passing for the other's. */
	KUNIT_EXPECT_FALSE(test, farswap_auth_mac_equal(mac, want_donor));
	m.key.len = 0;
	KUNIT_EXPECT_EQ(test, mac_of(&m, FARSWAP_AUTH_HOST, mac), -ENOKEY);
}

/* The bytes of struct mac_in each MAC binds, by field. */
static const struct {
	const char *name;
	size_t off, len;
} bound[] = {
	{ "key", offsetof(struct mac_in, key.bytes), 32 },
	{ "host nonce", offsetof(struct mac_in, hn), FARSWAP_AUTH_NONCE_LEN },
	{ "donor nonce", offsetof(struct mac_in, dn), FARSWAP_AUTH_NONCE_LEN },
	{ "session", offsetof(struct mac_in, session), sizeof(u64) },
	{ "host_id", offsetof(struct mac_in, hid), FARSWAP_ID_LEN },
	{ "donor_id", offsetof(struct mac_in, did), FARSWAP_ID_LEN },
};

static void flipped_byte_test(struct kunit *test)
{
	enum farswap_auth_role role;
	struct mac_in m;
	unsigned int f;
	size_t b;
	u8 mac[32];

	for (role = FARSWAP_AUTH_DONOR; role <= FARSWAP_AUTH_HOST; role++) {
		const u8 *want = role == FARSWAP_AUTH_DONOR ? want_donor :
							      want_host;

		for (f = 0; f < ARRAY_SIZE(bound); f++) {
			for (b = 0; b < bound[f].len; b++) {
				mac_in_init(&m);
				((u8 *)&m)[bound[f].off + b] ^= 0x01;
				KUNIT_ASSERT_EQ(test, mac_of(&m, role, mac), 0);
				KUNIT_EXPECT_FALSE_MSG(test,
						       farswap_auth_mac_equal(mac, want),
						       "%s MAC unchanged by a flip in %s byte %zu",
						       role == FARSWAP_AUTH_DONOR ?
						       "donor" : "host",
						       bound[f].name, b);
			}
		}
	}
	/* A longer key (same first bytes) is another key. */
	mac_in_init(&m);
	m.key.bytes[32] = 'x';
	m.key.len = 33;
	KUNIT_ASSERT_EQ(test, mac_of(&m, FARSWAP_AUTH_HOST, mac), 0);
	KUNIT_EXPECT_FALSE(test, farswap_auth_mac_equal(mac, want_host));
}

/*
 * The host's side of the handshake: a right challenge is answered with
 * the host's MAC, a wrong one (another key, another session, the host's
 * own label) gets no answer at all.
 */
static void answer_test(struct kunit *test)
{
	struct farswap_auth_chal chal;
	struct mac_in m, other;
	u8 proof[32];

	mac_in_init(&m);
	memset(&chal, 0, sizeof(chal));
	memcpy(chal.donor_nonce, m.dn, sizeof(chal.donor_nonce));
	memcpy(chal.donor_mac, want_donor, 32);
	KUNIT_ASSERT_EQ(test, answer_with(&m.key, m.hn, &chal,
					  m.session, m.hid, m.did,
					  proof), 0);
	KUNIT_EXPECT_MEMEQ(test, proof, want_host, 32);

	/* A donor with another key. */
	other = m;
	other.key.bytes[0] ^= 1;
	KUNIT_ASSERT_EQ(test, mac_of(&other, FARSWAP_AUTH_DONOR,
				     chal.donor_mac), 0);
	KUNIT_EXPECT_EQ(test, answer_with(&m.key, m.hn, &chal,
					  m.session, m.hid, m.did,
					  proof), -EACCES);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(proof, sizeof(proof)));

	/* The right key, but another session's challenge. */
	memcpy(chal.donor_mac, want_donor, 32);
	KUNIT_EXPECT_EQ(test, answer_with(&m.key, m.hn, &chal,
					  m.session + 1, m.hid, m.did,
					  proof), -EACCES);

	/* A donor echoing the host's own MAC proves nothing. */
	memcpy(chal.donor_mac, want_host, 32);
	KUNIT_EXPECT_EQ(test, answer_with(&m.key, m.hn, &chal,
					  m.session, m.hid, m.did,
					  proof), -EACCES);
}

/*
 * The key is prepared once (attach) and serves every handshake after:
 * a MAC without a prepared transform is refused rather than allocating
 * one (the reconnect path runs under memalloc_noio), and clearing the
 * key frees the transform.
 */
static void prepared_key_test(struct kunit *test)
{
	struct mac_in m;
	u8 mac[32];
	int i;

	mac_in_init(&m);
	KUNIT_EXPECT_EQ(test, farswap_auth_mac(&m.key, FARSWAP_AUTH_HOST, m.hn,
					       m.dn, m.session, m.hid, m.did,
					       mac), -ENOKEY);
	KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&m.key), 0);
	KUNIT_ASSERT_NOT_NULL(test, m.key.tfm);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, farswap_auth_mac(&m.key, FARSWAP_AUTH_DONOR,
						       m.hn, m.dn, m.session,
						       m.hid, m.did, mac), 0);
		KUNIT_EXPECT_MEMEQ(test, mac, want_donor, 32);
		KUNIT_ASSERT_EQ(test, farswap_auth_mac(&m.key, FARSWAP_AUTH_HOST,
						       m.hn, m.dn, m.session,
						       m.hid, m.did, mac), 0);
		KUNIT_EXPECT_MEMEQ(test, mac, want_host, 32);
	}
	farswap_auth_key_clear(&m.key);
	KUNIT_EXPECT_NULL(test, m.key.tfm);
	KUNIT_EXPECT_EQ(test, m.key.len, 0U);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(m.key.bytes,
						sizeof(m.key.bytes)));
	/* No key: nothing to prepare, nothing to compute. */
	KUNIT_EXPECT_EQ(test, farswap_auth_key_prepare(&m.key), 0);
	KUNIT_EXPECT_NULL(test, m.key.tfm);
}

static void mac_equal_test(struct kunit *test)
{
	u8 a[32];
	unsigned int i;

	for (i = 0; i < 32; i++) {
		memcpy(a, want_host, 32);
		a[i] ^= 0x80;
		KUNIT_EXPECT_FALSE(test, farswap_auth_mac_equal(a, want_host));
	}
	KUNIT_EXPECT_TRUE(test, farswap_auth_mac_equal(want_host, want_host));
}

static void nonce_test(struct kunit *test)
{
	u8 a[FARSWAP_AUTH_NONCE_LEN], b[FARSWAP_AUTH_NONCE_LEN];

	farswap_auth_nonce(a);
	farswap_auth_nonce(b);
	KUNIT_EXPECT_FALSE(test, farswap_is_zero(a, sizeof(a)));
	KUNIT_EXPECT_NE(test, memcmp(a, b, sizeof(a)), 0);
}

static void key_desc_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, farswap_key_desc_valid("farswap:donor1"));
	KUNIT_EXPECT_TRUE(test, farswap_key_desc_valid("a:b"));
	KUNIT_EXPECT_FALSE(test, farswap_key_desc_valid(""));
	KUNIT_EXPECT_FALSE(test, farswap_key_desc_valid("nocolon"));
	KUNIT_EXPECT_FALSE(test, farswap_key_desc_valid(":name"));
	KUNIT_EXPECT_FALSE(test, farswap_key_desc_valid("prefix:"));
	KUNIT_EXPECT_FALSE(test, farswap_key_desc_valid("a:b\x01"));
}

/* A missing key fails with -ENOKEY, naming the description. */
static void key_missing_test(struct kunit *test)
{
	struct farswap_auth_key k;
	char err[FARSWAP_ERR_LEN] = "";

	memset(&k, 0xaa, sizeof(k));
	KUNIT_EXPECT_EQ(test, farswap_auth_key_lookup("farswap:kunit-none", &k,
						      err, sizeof(err)),
			-ENOKEY);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "farswap:kunit-none"));
	KUNIT_EXPECT_EQ(test, k.len, 0U);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(k.bytes, sizeof(k.bytes)));
}

static int parse(struct kunit *test, const char *cmd,
		 struct farswap_attach_args *a, char *err)
{
	char *buf = kunit_kstrdup(test, cmd, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(a, 0, sizeof(*a));
	return farswap_parse_attach(buf, a, err, FARSWAP_ERR_LEN);
}

static void key_option_test(struct kunit *test)
{
	struct farswap_attach_args *a = kunit_kzalloc(test, sizeof(*a),
						      GFP_KERNEL);
	char err[FARSWAP_ERR_LEN] = "";

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G", a, err), 0);
	KUNIT_EXPECT_STREQ(test, a->key_desc, "");
	KUNIT_EXPECT_EQ_MSG(test, parse(test, "donor=10.0.0.1 size=4G key=farswap:d1",
					a, err), 0, "refused: %s", err);
	KUNIT_EXPECT_STREQ(test, a->key_desc, "farswap:d1");
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G key=d1", a,
				    err), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "logon key"));
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G key=a:b key=a:c",
				    a, err), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "given twice"));
}

/* HMAC-SHA256(DKEY, "farswap pair v1" "\0" KEY), from Python's hmac. */
#define DKEY "fedcba9876543210fedcba9876543210"
static const u8 want_pair[32] = {
	0x27, 0x37, 0x01, 0x33, 0x4a, 0xef, 0xea, 0x9b,
	0xd7, 0x6d, 0x36, 0x35, 0x6d, 0x1f, 0x35, 0xf1,
	0xfd, 0xc8, 0x6e, 0xba, 0xc3, 0x45, 0xaa, 0x1d,
	0x51, 0xa8, 0xe1, 0xcb, 0x10, 0x06, 0x92, 0x0e,
};

static void pair_key_test(struct kunit *test)
{
	struct farswap_auth_key dk = { .len = 32 }, hk = { .len = 32 };
	struct farswap_auth_key pair, none = { .len = 0 };

	memcpy(dk.bytes, DKEY, 32);
	memcpy(hk.bytes, KEY, 32);
	KUNIT_ASSERT_EQ(test, farswap_auth_pair_key(&dk, &hk, &pair), 0);
	KUNIT_EXPECT_EQ(test, pair.len, 32U);
	KUNIT_EXPECT_NULL(test, pair.tfm);
	KUNIT_EXPECT_MEMEQ(test, pair.bytes, want_pair, 32);
	hk.bytes[31] ^= 1;
	KUNIT_ASSERT_EQ(test, farswap_auth_pair_key(&dk, &hk, &pair), 0);
	KUNIT_EXPECT_MEMNEQ(test, pair.bytes, want_pair, 32);
	KUNIT_EXPECT_EQ(test, farswap_auth_pair_key(&none, &hk, &pair),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, pair.len, 0U);
	KUNIT_EXPECT_EQ(test, farswap_auth_pair_key(&dk, &none, &pair),
			-ENOKEY);
}

/*
 * A pinning host tries each pair key it holds and answers with the one
 * the donor proved; the host key alone, or a donor key it does not pin,
 * proves nothing.
 */
static void pinned_answer_test(struct kunit *test)
{
	struct farswap_auth_key *keys;
	struct farswap_auth_chal chal;
	struct mac_in m, donor;
	u8 proof[32], want[32];
	int i;

	keys = kunit_kcalloc(test, 3, sizeof(*keys), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, keys);
	mac_in_init(&m);
	/* Three pinned donors: pair keys of three donor keys with KEY. */
	for (i = 0; i < 3; i++) {
		struct farswap_auth_key dk = { .len = 32 };

		memcpy(dk.bytes, DKEY, 32);
		dk.bytes[0] += i;
		KUNIT_ASSERT_EQ(test, farswap_auth_pair_key(&dk, &m.key,
							    &keys[i]), 0);
		KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&keys[i]), 0);
	}
	/* The donor of the second key. */
	donor = m;
	donor.key = keys[1];
	donor.key.tfm = NULL;
	memset(&chal, 0, sizeof(chal));
	memcpy(chal.donor_nonce, m.dn, sizeof(chal.donor_nonce));
	KUNIT_ASSERT_EQ(test, mac_of(&donor, FARSWAP_AUTH_DONOR,
				     chal.donor_mac), 0);
	KUNIT_EXPECT_EQ(test, farswap_auth_answer(keys, 3, m.hn, &chal,
						  m.session, m.hid, m.did,
						  proof), 1);
	KUNIT_ASSERT_EQ(test, mac_of(&donor, FARSWAP_AUTH_HOST, want), 0);
	KUNIT_EXPECT_MEMEQ(test, proof, want, 32);
	/* One pinned key fewer: that donor is refused. */
	KUNIT_EXPECT_EQ(test, farswap_auth_answer(keys, 1, m.hn, &chal,
						  m.session, m.hid, m.did,
						  proof), -EACCES);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(proof, sizeof(proof)));
	/* A donor proving the host key alone (unpinned): refused. */
	memcpy(chal.donor_mac, want_donor, 32);
	KUNIT_EXPECT_EQ(test, farswap_auth_answer(keys, 3, m.hn, &chal,
						  m.session, m.hid, m.did,
						  proof), -EACCES);
	for (i = 0; i < 3; i++)
		farswap_auth_key_clear(&keys[i]);
}

static void donor_key_option_test(struct kunit *test)
{
	struct farswap_attach_args *a = kunit_kzalloc(test, sizeof(*a),
						      GFP_KERNEL);
	char err[FARSWAP_ERR_LEN] = "";

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ_MSG(test, parse(test, "donor=10.0.0.1 size=4G key=f:h donor_key=f:d1 donor_key=f:d2",
					a, err), 0, "refused: %s", err);
	KUNIT_EXPECT_EQ(test, a->nr_donor_keys, 2U);
	KUNIT_EXPECT_STREQ(test, a->donor_key_desc[0], "f:d1");
	KUNIT_EXPECT_STREQ(test, a->donor_key_desc[1], "f:d2");
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G donor_key=f:d1",
				    a, err), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "without key="));
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G key=f:h donor_key=d1",
				    a, err), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "bad donor_key"));
	KUNIT_EXPECT_EQ(test, parse(test, "donor=10.0.0.1 size=4G key=f:h donor_key=a:1 donor_key=a:2 donor_key=a:3 donor_key=a:4 donor_key=a:5 donor_key=a:6 donor_key=a:7 donor_key=a:8 donor_key=a:9",
				    a, err), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "more than 8"));
}

static struct kunit_case farswap_auth_cases[] = {
	KUNIT_CASE(known_answer_test),
	KUNIT_CASE(flipped_byte_test),
	KUNIT_CASE(answer_test),
	KUNIT_CASE(prepared_key_test),
	KUNIT_CASE(mac_equal_test),
	KUNIT_CASE(nonce_test),
	KUNIT_CASE(key_desc_test),
	KUNIT_CASE(key_missing_test),
	KUNIT_CASE(key_option_test),
	KUNIT_CASE(pair_key_test),
	KUNIT_CASE(pinned_answer_test),
	KUNIT_CASE(donor_key_option_test),
	{}
};

static struct kunit_suite farswap_auth_suite = {
	.name = "farswap_auth",
	.test_cases = farswap_auth_cases,
};

kunit_test_suite(farswap_auth_suite);
