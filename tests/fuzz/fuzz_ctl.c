// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the stats socket's commands (statsock.c), what a
 * local client may write to the daemon (fsd_ctl_parse()) and what
 * farswapd --drain reads back (fsd_ctl_reply_field()).  Checks: a command
 * is recognised only as one of its exact words, and a field's value is
 * NUL-terminated within its buffer and found in the reply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "statsock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char text[FSD_CTL_REPLY_MAX + 1];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "state", "slabs_left",
					    "bytes_moved", "refusals" };
	char val[32];
	size_t i;
	int cmd;

	cmd = fsd_ctl_parse((const char *)data, size);
	if (cmd != FSD_CTL_BAD) {
		size_t n = size && data[size - 1] == '\n' ? size - 1 : size;
		const char *w = cmd == FSD_CTL_DRAIN ? "drain" :
				cmd == FSD_CTL_UNDRAIN ? "undrain" :
				cmd == FSD_CTL_RESTART ? "restart" :
				"drain-status";

		if (n != strlen(w) || memcmp(w, data, n))
			abort();
	}
	if (size > FSD_CTL_REPLY_MAX)
		size = FSD_CTL_REPLY_MAX;
	memcpy(text, data, size);
	text[size] = '\0';
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		memset(val, 'x', sizeof(val));
		if (fsd_ctl_reply_field(text, keys[i], val, sizeof(val)))
			continue;
		if (!memchr(val, '\0', sizeof(val)) ||
		    !strstr(text, keys[i]))
			abort();
	}
	return 0;
}
