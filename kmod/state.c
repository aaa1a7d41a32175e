// SPDX-License-Identifier: GPL-2.0
/*
 * Donor connection state machine (see state.h).
 */
#include <linux/bits.h>

#include "state.h"

#define S(x) BIT(FARSWAP_DONOR_##x)

/* For each state, the states it may move to. */
static const unsigned long farswap_donor_next[FARSWAP_DONOR_NR_STATES] = {
	[FARSWAP_DONOR_NEW]	   = S(CONNECTING) | S(DELETING),
	[FARSWAP_DONOR_CONNECTING] = S(LIVE) | S(WAITING) | S(DELETING),
	[FARSWAP_DONOR_LIVE]	   = S(FAILED) | S(DELETING),
	[FARSWAP_DONOR_FAILED]	   = S(WAITING) | S(DELETING),
	[FARSWAP_DONOR_WAITING]	   = S(CONNECTING) | S(DELETING),
	[FARSWAP_DONOR_DELETING]   = 0,
};

#undef S

bool farswap_donor_state_allowed(unsigned int from, unsigned int to)
{
	if (from >= FARSWAP_DONOR_NR_STATES || to >= FARSWAP_DONOR_NR_STATES)
		return false;
	return farswap_donor_next[from] & BIT(to);
}

const char *farswap_donor_state_name(unsigned int state)
{
	static const char * const names[FARSWAP_DONOR_NR_STATES] = {
		[FARSWAP_DONOR_NEW]	   = "new",
		[FARSWAP_DONOR_CONNECTING] = "connecting",
		[FARSWAP_DONOR_LIVE]	   = "live",
		[FARSWAP_DONOR_FAILED]	   = "failed",
		[FARSWAP_DONOR_WAITING]	   = "reconnecting",
		[FARSWAP_DONOR_DELETING]   = "deleting",
	};

	return state < FARSWAP_DONOR_NR_STATES ? names[state] : "invalid";
}
