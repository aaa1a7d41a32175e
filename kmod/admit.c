// SPDX-License-Identifier: GPL-2.0
/*
 * I/O admission arithmetic (see admit.h).
 */
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
