/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the I/O path lets through, as arithmetic on counters kept
 * elsewhere: the write budget of a hardware queue (bytes of swap-out in
 * flight), and how long a request whose pages cannot be DMA-mapped keeps
 * being retried.
 *
 * Free of RDMA calls, so KUnit runs it under UML.
 */
#ifndef FARSWAP_ADMIT_H
#define FARSWAP_ADMIT_H

#include <linux/types.h>

bool farswap_write_budget_admit(s64 now, u32 bytes, u32 cap);

#endif /* FARSWAP_ADMIT_H */
