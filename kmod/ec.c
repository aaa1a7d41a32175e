// SPDX-License-Identifier: GPL-2.0
/*
 * Erasure coding of a page with lib/raid6 (see ec.h).
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/log2.h>

#include "chunkmap.h"
#include "compat.h"
#include "ec.h"

/* What 7.2's lib/raid wants of every buffer (6.x's widest loop: 256). */
#define FARSWAP_EC_PIECE_ALIGN	512u

/**
 * farswap_ec_init - set up a code of @k data and @m parity pieces a page
 * @ec: filled in
 * @k: data pieces: 2, 4 or 8
 * @m: parity pieces: 1 or 2
 *
 * Return: 0, or -EINVAL for a code lib/raid6 cannot make, or whose
 * members would not fit FARSWAP_EC_MAX_MEMBERS donors.
 */
int farswap_ec_init(struct farswap_ec *ec, unsigned int k, unsigned int m)
{
	if (k < 2 || !is_power_of_2(k) || m < 1 || m > FARSWAP_EC_MAX_PARITY ||
	    k + m > FARSWAP_EC_MAX_MEMBERS ||
	    FARSWAP_PAGE_BYTES / k % FARSWAP_EC_PIECE_ALIGN)
		return -EINVAL;
	ec->k = k;
	ec->m = m;
	ec->piece = FARSWAP_PAGE_BYTES / k;
	return 0;
}

static void *farswap_ec_data(const struct farswap_ec *ec, void *page,
			     unsigned int j)
{
	return page + j * ec->piece;
}

/* lib/raid6's "disks": the page's data pieces, then P and Q. */
static void farswap_ec_disks(const struct farswap_ec *ec, void *page,
			     void *p, void *q, void **ptrs)
{
	unsigned int j;

	for (j = 0; j < ec->k; j++)
		ptrs[j] = farswap_ec_data(ec, page, j);
	ptrs[ec->k] = p;
	ptrs[ec->k + 1] = q;
}

/*
 * P and Q of the page's data pieces into @p and @q.  With one parity
 * piece @q is the caller's scratch: gen_syndrome() always writes both.
 */
static void farswap_ec_syndrome(const struct farswap_ec *ec, void *page,
				void *p, void *q)
{
	void *ptrs[FARSWAP_EC_MAX_MEMBERS + 2];

	farswap_ec_disks(ec, page, p, q, ptrs);
	farswap_raid6_gen_syndrome(ec->k + 2, ec->piece, ptrs);
}

/**
 * farswap_ec_encode - make a page's parity pieces
 * @ec: the code
 * @page: the page, 64-byte aligned: its k data pieces
 * @parity: two buffers of ec->piece bytes, 64-byte aligned: P, then Q;
 *	with m = 1 the second is scratch, overwritten
 */
void farswap_ec_encode(const struct farswap_ec *ec, void *page,
		       void *const parity[FARSWAP_EC_MAX_PARITY])
{
	farswap_ec_syndrome(ec, page, parity[0], parity[1]);
}

/*
 * Data piece @a from P and the other data pieces: P is the sum of every
 * data piece, so gen_syndrome()'s P over the others and P itself is the
 * lost one.  Its Q lands in @scratch.
 */
static void farswap_ec_from_p(const struct farswap_ec *ec, void *page,
			      void *p, unsigned int a, void *scratch)
{
	void *ptrs[FARSWAP_EC_MAX_MEMBERS + 2];
	unsigned int j, n = 0;

	for (j = 0; j < ec->k; j++)
		if (j != a)
			ptrs[n++] = farswap_ec_data(ec, page, j);
	ptrs[n++] = p;
	ptrs[n++] = farswap_ec_data(ec, page, a);
	ptrs[n++] = scratch;
	farswap_raid6_gen_syndrome(n, ec->piece, ptrs);
}

/**
 * farswap_ec_rebuild - rebuild a page's lost pieces from the others
 * @ec: the code
 * @page: the page: its data pieces, those in @lost to be rebuilt
 * @parity: P and Q as for farswap_ec_encode(), those in @lost rebuilt
 * @lost: the lost members, a bit each: data pieces 0 to k - 1, then P
 *	(bit k) and Q (bit k + 1)
 *
 * Every lost piece is made again, parity included; the others are read
 * only.  A piece that came back but failed its check counts as lost.
 *
 * Return: 0, or -EINVAL when more than m members are lost (nothing is
 * changed then: the page cannot be had).
 */
int farswap_ec_rebuild(const struct farswap_ec *ec, void *page,
		       void *const parity[FARSWAP_EC_MAX_PARITY],
		       unsigned long lost)
{
	unsigned long data = lost & GENMASK(ec->k - 1, 0);
	bool p_lost = lost & BIT(ec->k);
	void *ptrs[FARSWAP_EC_MAX_MEMBERS + 2];
	unsigned int a, b;

	if (lost & ~GENMASK(ec->k + ec->m - 1, 0) ||
	    hweight_long(lost) > ec->m)
		return -EINVAL;
	switch (hweight_long(data)) {
	case 0:
		break;
	case 1:
		a = __ffs(data);
		if (!p_lost) {
			/* Q (or m = 1's scratch) is made again below. */
			farswap_ec_from_p(ec, page, parity[0], a, parity[1]);
			break;
		}
		/* Data and P lost, so m = 2 and Q is whole. */
		farswap_ec_disks(ec, page, parity[0], parity[1], ptrs);
		farswap_raid6_recov_datap(ec->k + 2, ec->piece, a, ptrs);
		return 0;
	default:
		/* Two data pieces, so m = 2 and P and Q are whole. */
		a = __ffs(data);
		b = __ffs(data & ~BIT(a));
		farswap_ec_disks(ec, page, parity[0], parity[1], ptrs);
		farswap_raid6_recov_2data(ec->k + 2, ec->piece, a, b, ptrs);
		return 0;
	}
	/*
	 * Every data piece is whole now: a lost P or Q follows from them,
	 * as does the Q that farswap_ec_from_p() took as its scratch.
	 */
	if ((lost & ~data) || (data && ec->m == 2))
		farswap_ec_syndrome(ec, page, parity[0], parity[1]);
	return 0;
}
