// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the allowed-hosts parser and matcher (access.c), fed
 * whatever a config file or --allowed-hosts may hold.  The input is a
 * 16-byte address and a 16-byte host_id, then the list's text.  Checks:
 * a list that parses prints as text that parses back to the same rules,
 * and a verdict never depends on the order of the rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "access.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fsd_access acl, again, reversed;
static char text[4096], printed[FSD_ACCESS_MAX * 64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	uint8_t id[FARSWAP_ID_LEN];
	struct fsd_addr addr;
	char err[256];
	enum fsd_access_verdict v;
	unsigned int i;

	if (size < 32)
		return 0;
	memcpy(&in6.sin6_addr, data, 16);
	memcpy(id, data + 16, 16);
	size -= 32;
	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data + 32, size);
	text[size] = '\0';
	if (fsd_addr_from_sockaddr(&in6, &addr))
		abort();
	if (fsd_access_parse(text, &acl, err, sizeof(err))) {
		if (acl.nr || strncmp(err, "allowed-hosts: ", 15))
			abort();	/* a refused list is empty and says why */
		return 0;
	}
	if (acl.nr != acl.nr_net + acl.nr_id || acl.nr > FSD_ACCESS_MAX)
		abort();
	fsd_access_format(&acl, printed, sizeof(printed));
	if (fsd_access_parse(printed, &again, err, sizeof(err)) ||
	    memcmp(&acl, &again, sizeof(acl)))
		abort();
	v = fsd_access_check(&acl, &addr, id);
	reversed = acl;
	for (i = 0; i < acl.nr; i++)
		reversed.rules[i] = acl.rules[acl.nr - 1 - i];
	if (fsd_access_check(&reversed, &addr, id) != v)
		abort();
	return 0;
}
