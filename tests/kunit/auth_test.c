// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_auth: the host's half of authentication
 * (kmod/auth.c) and its attach options (key= and donor_key= in
 * kmod/args.c).
 *
 * The handshake with a session key is checked against a known answer
 * computed apart from this code, by farswapd's implementation (OpenSSL's
 * X25519 and HMAC; tests/unit/test_auth.c checks the same numbers): the
 * public keys, the donor's and the host's MACs, the session key through
 * a message tag and a join tag.  The pair key of pinned donors is
 * checked against Python's hmac.
 */
#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <crypto/curve25519.h>

#include "args.h"
#include "auth.h"

#define KEY "0123456789abcdef0123456789abcdef"

/* The known answer (farswapd's OpenSSL side, tests/unit/test_auth.c). */
static const u8 kx_host_pub[32] = {
	0x79, 0xa6, 0x31, 0xee, 0xde, 0x1b, 0xf9, 0xc9, 0x8f, 0x12, 0x03, 0x2c,
	0xde, 0xad, 0xd0, 0xe7, 0xa0, 0x79, 0x39, 0x8f, 0xc7, 0x86, 0xb8, 0x8c,
	0xc8, 0x46, 0xec, 0x89, 0xaf, 0x85, 0xa5, 0x1a,
};
static const u8 kx_donor_pub[32] = {
	0x49, 0x3e, 0x82, 0xfc, 0x74, 0x46, 0x4a, 0x59, 0x26, 0x88, 0x17, 0x62,
	0x3d, 0x20, 0x53, 0xc5, 0xeb, 0x8e, 0x2c, 0xc4, 0xa9, 0x88, 0xb4, 0xfe,
	0xe1, 0x79, 0xec, 0x6b, 0x01, 0x0d, 0x53, 0x1d,
};
static const u8 kx_donor_mac[32] = {
	0xcb, 0x67, 0x25, 0xab, 0x72, 0x21, 0x12, 0x38, 0x34, 0x75, 0x56, 0x43,
	0x09, 0x8e, 0x9c, 0x38, 0x5e, 0xe5, 0xda, 0x88, 0x6c, 0x56, 0x16, 0x89,
	0x66, 0x04, 0xa1, 0x96, 0x8d, 0x3c, 0xe4, 0x11,
};
static const u8 kx_host_mac[32] = {
	0x0d, 0x0d, 0xef, 0x86, 0xa1, 0xb2, 0x2c, 0xc2, 0xf2, 0xac, 0x6a, 0x10,
	0x08, 0x5e, 0x94, 0x39, 0xf3, 0x77, 0x57, 0x6f, 0xb1, 0xf5, 0x74, 0xf4,
	0xcf, 0x11, 0x88, 0xee, 0xac, 0xc9, 0xda, 0x0b,
};
/* A STATS_REQ of cookie 7, the donor's fourth tagged message. */
static const u8 kx_tag[16] = {
	0x4a, 0x2d, 0xbc, 0x8a, 0xea, 0x1f, 0x9b, 0x91, 0xbd, 0xe1, 0x13, 0x7d,
	0xed, 0xbd, 0x42, 0x14,
};
static const u8 kx_join[12] = {
	0x1e, 0xcf, 0xaa, 0x6a, 0xf8, 0x42, 0x80, 0xe2, 0xa0, 0x42, 0x4b, 0x4a,
};

#define KX_SESSION 0x0123456789abcdefULL

/* The vector's inputs: private keys 0x40.. (host), nonces 0.. and 16... */
struct kx_case {
	struct farswap_auth_key key;
	u8 priv[32];
	u8 pub[32];
	struct farswap_kx_transcript t;
	struct crypto_shash *tfm;
};

static void kx_case_init(struct kunit *test, struct kx_case *c)
{
	u8 hn[16], dn[16], hid[16] = "host-a", did[16] = "donor-1";
	unsigned int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 32; i++)
		c->priv[i] = 0x40 + i;
	for (i = 0; i < 16; i++) {
		hn[i] = i;
		dn[i] = 16 + i;
	}
	memcpy(c->key.bytes, KEY, 32);
	c->key.len = 32;
	KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&c->key), 0);
	KUNIT_ASSERT_TRUE(test, curve25519_generate_public(c->pub, c->priv));
	farswap_kx_transcript_init(&c->t, "", hn, dn, c->pub, kx_donor_pub,
				   KX_SESSION, hid, did, 0x1f7, 0xbf, 1);
	c->tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->tfm));
}

static void kx_case_exit(struct kx_case *c)
{
	crypto_free_shash(c->tfm);
	farswap_auth_key_clear(&c->key);
}

/*
 * The host's side of the vector: its public key, the donor's MAC
 * accepted, its own proof, and the session key through the tags it
 * gives.
 */
static void kx_known_answer_test(struct kunit *test)
{
	union farswap_msg m;
	struct kx_case c;
	u8 mac[32], tag[16], join[12];

	kx_case_init(test, &c);
	KUNIT_EXPECT_MEMEQ(test, c.pub, kx_host_pub, 32);
	KUNIT_ASSERT_EQ(test, farswap_kx_answer(&c.key, 1, c.tfm, c.priv, &c.t,
						kx_donor_mac, mac), 0);
	KUNIT_EXPECT_MEMEQ(test, mac, kx_host_mac, 32);
	farswap_msg_init(&m, FARSWAP_MSG_STATS_REQ, 1, 7);
	KUNIT_ASSERT_EQ(test, farswap_kx_tag(c.tfm, 'D', 3, &m,
				farswap_msg_size(FARSWAP_MSG_STATS_REQ), tag), 0);
	KUNIT_EXPECT_MEMEQ(test, tag, kx_tag, 16);
	KUNIT_EXPECT_TRUE(test, farswap_auth_tag_equal(tag, kx_tag));
	/* The other direction, the next count, one byte more: all differ. */
	farswap_kx_tag(c.tfm, 'H', 3, &m, farswap_msg_size(m.hdr.type), tag);
	KUNIT_EXPECT_FALSE(test, farswap_auth_tag_equal(tag, kx_tag));
	farswap_kx_tag(c.tfm, 'D', 4, &m, farswap_msg_size(m.hdr.type), tag);
	KUNIT_EXPECT_FALSE(test, farswap_auth_tag_equal(tag, kx_tag));
	m.hdr.cookie = cpu_to_le64(8);
	farswap_kx_tag(c.tfm, 'D', 3, &m, farswap_msg_size(m.hdr.type), tag);
	KUNIT_EXPECT_FALSE(test, farswap_auth_tag_equal(tag, kx_tag));
	KUNIT_ASSERT_EQ(test, farswap_kx_join_tag(c.tfm, KX_SESSION,
						  (const u8 *)"host-a\0\0\0\0\0\0\0\0\0",
						  join), 0);
	KUNIT_EXPECT_MEMEQ(test, join, kx_join, 12);
	kx_case_exit(&c);
}

/*
 * Every byte of the transcript the donor's MAC covers: a relay that
 * changes a feature bit, a nonce or a public key on the way makes it
 * fail.
 */
static void kx_transcript_bound_test(struct kunit *test)
{
	struct kx_case c;
	u8 mac[32];
	size_t i;

	kx_case_init(test, &c);
	for (i = FARSWAP_AUTH_LABEL_LEN; i < offsetof(struct farswap_kx_transcript,
						       reserved); i++) {
		struct farswap_kx_transcript t = c.t;

		((u8 *)&t)[i] ^= 0x01;
		KUNIT_EXPECT_EQ_MSG(test, farswap_kx_answer(&c.key, 1, c.tfm,
							    c.priv, &t,
							    kx_donor_mac, mac),
				    -EACCES,
				    "byte %zu of the transcript is not bound", i);
		KUNIT_EXPECT_TRUE(test, farswap_is_zero(mac, sizeof(mac)));
	}
	kx_case_exit(&c);
}

/* A wrong key, or a donor's public key of low order: refused. */
static void kx_refused_test(struct kunit *test)
{
	struct farswap_kx_transcript t;
	struct kx_case c;
	u8 mac[32];

	kx_case_init(test, &c);
	t = c.t;
	farswap_auth_key_clear(&c.key);
	memcpy(c.key.bytes, KEY, 32);
	c.key.bytes[31] ^= 1;
	c.key.len = 32;
	KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&c.key), 0);
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(&c.key, 1, c.tfm, c.priv, &t,
						kx_donor_mac, mac), -EACCES);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(mac, sizeof(mac)));
	/* The point of order 1 (all zero): no shared secret. */
	memset(t.donor_pub, 0, sizeof(t.donor_pub));
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(&c.key, 1, c.tfm, c.priv, &t,
						kx_donor_mac, mac), -EINVAL);
	/* A key never prepared proves nothing. */
	t = c.t;
	farswap_auth_key_clear(&c.key);
	memcpy(c.key.bytes, KEY, 32);
	c.key.len = 32;
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(&c.key, 1, c.tfm, c.priv, &t,
						kx_donor_mac, mac), -ENOKEY);
	kx_case_exit(&c);
}

/* Key pairs: fresh, and the public key is the private key's. */
static void kx_keypair_test(struct kunit *test)
{
	u8 a[32], b[32], pa[32], pb[32], check[32];

	KUNIT_ASSERT_EQ(test, farswap_kx_keypair(a, pa), 0);
	KUNIT_ASSERT_EQ(test, farswap_kx_keypair(b, pb), 0);
	KUNIT_EXPECT_NE(test, memcmp(a, b, 32), 0);
	KUNIT_ASSERT_TRUE(test, curve25519_generate_public(check, a));
	KUNIT_EXPECT_MEMEQ(test, check, pa, 32);
}

/*
 * The key is prepared once (attach) and serves every handshake after;
 * clearing it frees the transform and wipes the bytes.
 */
static void prepared_key_test(struct kunit *test)
{
	struct farswap_auth_key k = { .len = 32 };

	memcpy(k.bytes, KEY, 32);
	KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&k), 0);
	KUNIT_ASSERT_NOT_NULL(test, k.tfm);
	farswap_auth_key_clear(&k);
	KUNIT_EXPECT_NULL(test, k.tfm);
	KUNIT_EXPECT_EQ(test, k.len, 0U);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(k.bytes, sizeof(k.bytes)));
	/* No key: nothing to prepare. */
	KUNIT_EXPECT_EQ(test, farswap_auth_key_prepare(&k), 0);
	KUNIT_EXPECT_NULL(test, k.tfm);
}

static const u8 want_host[32] = {
	0x87, 0xb5, 0xd5, 0xf4, 0xdd, 0x80, 0xfd, 0xfd,
	0xe0, 0xc7, 0x16, 0x5b, 0xaa, 0x8f, 0x6a, 0xe6,
	0x05, 0xaf, 0x00, 0x29, 0xf0, 0x04, 0xa3, 0x0a,
	0xeb, 0x5e, 0x9b, 0x05, 0x99, 0x5e, 0x36, 0x47,
};

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

/* The donor's MAC of the vector's transcript under @key (test only). */
static void donor_mac_with(struct kunit *test, const struct farswap_auth_key *key,
			   const struct kx_case *c, u8 mac[32])
{
	static const u8 donor_priv[32] = {
		0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
		0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
		0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
		0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
	};
	struct farswap_kx_transcript t = c->t;
	struct crypto_shash *tfm;
	u8 dh[32], prk[32];

	KUNIT_ASSERT_TRUE(test, curve25519(dh, donor_priv, c->pub));
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tfm));
	KUNIT_ASSERT_EQ(test, crypto_shash_setkey(tfm, key->bytes, key->len), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, dh, 32, prk), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_setkey(tfm, prk, 32), 0);
	memset(t.label, 0, sizeof(t.label));
	memcpy(t.label, FARSWAP_KX_LABEL_DONOR, 16);
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, (u8 *)&t, sizeof(t),
						      mac), 0);
	crypto_free_shash(tfm);
}

/*
 * A pinning host tries each pair key it holds and answers with the one
 * the donor proved; the host key alone, or a donor key it does not pin,
 * proves nothing.
 */
static void pinned_answer_test(struct kunit *test)
{
	struct farswap_auth_key *keys;
	struct kx_case c;
	u8 dmac[32], proof[32];
	int i;

	kx_case_init(test, &c);
	keys = kunit_kcalloc(test, 3, sizeof(*keys), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, keys);
	for (i = 0; i < 3; i++) {
		struct farswap_auth_key dk = { .len = 32 };

		memcpy(dk.bytes, DKEY, 32);
		dk.bytes[0] += i;
		KUNIT_ASSERT_EQ(test, farswap_auth_pair_key(&dk, &c.key,
							    &keys[i]), 0);
		KUNIT_ASSERT_EQ(test, farswap_auth_key_prepare(&keys[i]), 0);
	}
	/* The vector's donor, proving the second donor key's pair key. */
	donor_mac_with(test, &keys[1], &c, dmac);
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(keys, 3, c.tfm, c.priv, &c.t,
						dmac, proof), 1);
	KUNIT_EXPECT_FALSE(test, farswap_is_zero(proof, sizeof(proof)));
	/* One pinned key fewer: refused. */
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(keys, 1, c.tfm, c.priv, &c.t,
						dmac, proof), -EACCES);
	KUNIT_EXPECT_TRUE(test, farswap_is_zero(proof, sizeof(proof)));
	/* The host key alone (an unpinned donor's proof): refused. */
	KUNIT_EXPECT_EQ(test, farswap_kx_answer(keys, 3, c.tfm, c.priv, &c.t,
						kx_donor_mac, proof), -EACCES);
	for (i = 0; i < 3; i++)
		farswap_auth_key_clear(&keys[i]);
	kx_case_exit(&c);
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
	KUNIT_CASE(kx_known_answer_test),
	KUNIT_CASE(kx_transcript_bound_test),
	KUNIT_CASE(kx_refused_test),
	KUNIT_CASE(kx_keypair_test),
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
