/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's integer types, for kmod/ files built into tests/sim. */
#ifndef FARSWAP_SIM_LINUX_TYPES_H
#define FARSWAP_SIM_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif
