// SPDX-License-Identifier: GPL-2.0
/*
 * kxcost [N]: what the session keys cost farswapd's CPU, with its own
 * code (daemon/auth.c): the donor's side of N handshakes (an X25519 key
 * pair, the shared secret, the MACs and the session key over a
 * transcript), then the tags of 10 N control messages.  Prints the time
 * per handshake and per tag, and handshakes a second on one core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "auth.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fill(void *buf, size_t len)
{
	if (getrandom(buf, len, 0) != (ssize_t)len) {
		perror("getrandom");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	uint8_t hpriv[32], hpub[32], dpriv[32], dpub[32], dh[32];
	uint8_t dmac[32], hmac[32], sk[32], tag[FARSWAP_KX_TAG_LEN];
	uint8_t nonce[16], id[16] = "kxcost";
	struct fsd_auth_key k = { .len = FARSWAP_AUTH_KEY_LEN };
	struct farswap_kx_transcript t;
	union farswap_msg m;
	long i, n = argc > 1 ? atol(argv[1]) : 20000;
	double t0, t1, t2;

	if (n < 1) {
		fprintf(stderr, "usage: kxcost [N]\n");
		return 2;
	}
	fill(k.bytes, k.len);
	fill(hpriv, sizeof(hpriv));
	fill(nonce, sizeof(nonce));
	if (fsd_kx_public(hpriv, hpub))
		return 1;
	farswap_msg_init(&m, FARSWAP_MSG_SLAB_ALLOC_REQ, 1, 1);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		fill(dpriv, sizeof(dpriv));
		if (fsd_kx_public(dpriv, dpub) || fsd_kx_shared(dpriv, hpub, dh))
			return 1;
		farswap_kx_transcript_init(&t, "", nonce, nonce, hpub, dpub,
					   (uint64_t)i, id, id, 0xff, 0xff, 1);
		if (fsd_kx_derive(&k, dh, &t, dmac, hmac, sk))
			return 1;
	}
	t1 = now_s();
	for (i = 0; i < 10 * n; i++)
		if (fsd_kx_tag(sk, 'D', (uint64_t)i, &m,
			       farswap_msg_size(m.hdr.type), tag))
			return 1;
	t2 = now_s();
	printf("kxcost: donor side of a handshake %.1f us (%.0f a second on one core); tag of a %u-byte control message %.2f us; %ld handshakes\n",
	       (t1 - t0) / (double)n * 1e6, (double)n / (t1 - t0),
	       farswap_msg_size(m.hdr.type),
	       (t2 - t1) / (double)(10 * n) * 1e6, n);
	return 0;
}
