// SPDX-License-Identifier: GPL-2.0
/*
 * I/O admission arithmetic (see admit.h).
 */
#include <linux/jiffies.h>
#include <linux/limits.h>
/* time_after_eq() needs it, and jiffies.h does not include it. */
#include <linux/typecheck.h>

#include "admit.h"

/**
 * farswap_write_budget_admit - may a write go, given its queue's budget?
 * @now: bytes in flight on the queue, this write's @bytes included
 * @bytes: the write's bytes
 * @cap: the queue's budget in bytes; 0 means no cap
 *
 * The count is signed and wide: a count that went below zero must read as
 * "nothing in flight", never as a huge unsigned number that refuses every
 * write, and a queue_depth of 2 MiB writes does not fit an int.  A write
 * with nothing else in flight always goes, whatever its size, so that the
 * queue never waits for a completion that cannot come.
 *
 * Return: true if the write goes now.
 */
bool farswap_write_budget_admit(s64 now, u32 bytes, u32 cap)
{
	return !cap || now <= (s64)cap || now - (s64)bytes <= 0;
}

/**
 * farswap_nomap_give_up - a request's mapping failed once more: give up?
 * @n: the request's failures so far
 * @now: jiffies now
 * @span: jiffies the failures must have lasted before giving up
 *
 * Both bounds: a count alone is reached in milliseconds when every
 * completion on the queue reruns the request, which would fail requests
 * that only waited for bounce buffers; a time alone would retry a
 * request that the DMA layer refuses at once, thousands of times.
 *
 * Return: true when the request should fail now.
 */
bool farswap_nomap_give_up(struct farswap_nomap *n, unsigned long now,
			   unsigned long span)
{
	if (!n->tries)
		n->since = now;
	if (n->tries < UINT_MAX)
		n->tries++;
	return n->tries >= FARSWAP_NOMAP_TRIES &&
	       time_after_eq(now, n->since + span);
}
