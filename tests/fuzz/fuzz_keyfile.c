// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the key file parser (common/keyfile.c), fed whatever
 * a key file may hold.  Checks: a text that parses is exactly the key
 * fs_key_format() writes for its secret (with or without the newline):
 * one secret has one text; a refused one leaves the caller's buffer as
 * it was and says why, and no reason holds the text's base64 (the
 * parser only shows a short version or transform).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int base64_run(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '+' || p[i] == '/'))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	char text[FS_KEY_TEXT_SIZE], why[256];
	size_t i, len;

	memset(secret, 0x5a, sizeof(secret));
	why[0] = '\0';
	if (fs_key_parse((const char *)data, size, secret, why, sizeof(why))) {
		if (!why[0])
			abort();
		for (i = 0; i < sizeof(secret); i++)
			if (secret[i] != 0x5a)
				abort();
		/*
		 * Past the header stands the base64, never shown: 16 base64
		 * characters there are nowhere in the reason (whose own
		 * words never run that long without a blank or a '-').
		 */
		if (size >= 13 + 16 && base64_run(data + 13, 16) &&
		    memmem(why, strlen(why), data + 13, 16))
			abort();
		return 0;
	}
	len = fs_key_format(secret, text);
	if (size != len && size != len - 1)
		abort();
	if (memcmp(text, data, size))
		abort();
	return 0;
}
