/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A checker of Prometheus text format (0.0.4) for the tests: every sample
 * belongs to a family announced before it by exactly one # HELP and one
 * # TYPE (counter or gauge), a family's samples are one group, label
 * values are quoted and escaped, and every value parses as a float.
 */
#ifndef PROM_CHECK_H
#define PROM_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* True if @text is well formed; else @why says what is wrong and where. */
bool prom_valid(const char *text, char *why, size_t whylen);

#endif /* PROM_CHECK_H */
