/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Erasure coding of a page: its bytes cut in K data pieces and M parity
 * pieces (M = 1: P; M = 2: P and Q), each piece to a donor of its own, so
 * that any M pieces may be lost and the page still rebuilt from the rest.
 * The data pieces are the page itself (piece j is bytes j * 4096 / K on),
 * so a write sends them without a copy; only the parity is made.
 *
 * The arithmetic is lib/raid6's (raid6_pq: the RAID-6 P+Q code over
 * GF(2^8) that md uses), chosen over lib/reed_solomon because M <= 2
 * is what it covers, it works on whole buffers with the CPU's vector
 * units (AVX2, AVX-512 and the rest picked at boot), and its recovery
 * routines are the ones md-raid6 has run for two decades.  Nothing here
 * computes in the field: P alone (and a data piece rebuilt from P) is
 * gen_syndrome()'s P of the right inputs.
 *
 * lib/raid6 wants each piece a multiple of 512 bytes (7.2's lib/raid
 * warns below) and 64-byte aligned: K is 2, 4 or 8.  Its calls are for
 * task context (7.2's warn in softirq): a coded device encodes and
 * rebuilds in a work item, never in a completion handler.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_EC_H
#define FARSWAP_EC_H

#include <linux/types.h>

/* Members of a coded page: its K + M pieces, each on its own donor. */
#define FARSWAP_EC_MAX_MEMBERS	16
#define FARSWAP_EC_MAX_PARITY	2

struct farswap_ec {
	u8 k;		/* data pieces */
	u8 m;		/* parity pieces: any m may be lost */
	u32 piece;	/* bytes in each: the page size / k */
};

int farswap_ec_init(struct farswap_ec *ec, unsigned int k, unsigned int m);
void farswap_ec_encode(const struct farswap_ec *ec, void *page,
		       void *const parity[FARSWAP_EC_MAX_PARITY]);
int farswap_ec_rebuild(const struct farswap_ec *ec, void *page,
		       void *const parity[FARSWAP_EC_MAX_PARITY],
		       unsigned long lost);

#endif /* FARSWAP_EC_H */
