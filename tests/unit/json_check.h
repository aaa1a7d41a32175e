/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON validator for the tests (RFC 8259 grammar, UTF-8 text):
 * the emitter's output is checked by something that does not share its
 * code.
 */
#ifndef JSON_CHECK_H
#define JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* True if @s (@n bytes) is exactly one JSON value, whitespace around. */
bool json_valid(const char *s, size_t n);

#endif /* JSON_CHECK_H */
