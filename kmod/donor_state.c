// SPDX-License-Identifier: GPL-2.0
/*
 * Donor connection state machine (see donor_state.h).
 */
#include <linux/bits.h>
#include <linux/errno.h>

#include "donor_state.h"

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

/**
 * farswap_donor_error_action - what an error on a donor's queues does
 * @state: the donor's state when the error is seen
 * @attempt_failed: an error already failed the current connect attempt
 *
 * Return: the action; IGNORE for an attempt already failed, so that the
 * error is reported once.
 */
enum farswap_error_action farswap_donor_error_action(unsigned int state,
						     bool attempt_failed)
{
	if (farswap_donor_state_allowed(state, FARSWAP_DONOR_FAILED))
		return FARSWAP_ERR_FAIL_SESSION;
	if (state == FARSWAP_DONOR_CONNECTING && !attempt_failed)
		return FARSWAP_ERR_FAIL_ATTEMPT;
	return FARSWAP_ERR_IGNORE;
}

/*
 * A connected session goes live only if nothing failed it while it was
 * connecting: a control queue pair that died during the I/O queues'
 * handshakes would otherwise carry a live session that can never send.
 */
bool farswap_donor_may_go_live(unsigned int state, bool attempt_failed)
{
	return farswap_donor_state_allowed(state, FARSWAP_DONOR_LIVE) &&
	       !attempt_failed;
}

/**
 * farswap_connect_error_passes - may a failed connect succeed later?
 * @err: what the connect returned
 *
 * A donor that is down, rebooting, unreachable for now, out of memory or
 * full may answer later, and an attach goes on without it (degraded)
 * while it is reconnected in the background.  A donor that answered and
 * refused for good (a wrong key, another protocol, slabs of another
 * size, a reply that is not farswapd's) fails the attach: that is a
 * mistake to say, not a donor to wait for.
 */
bool farswap_connect_error_passes(int err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EADDRNOTAVAIL:
	case -ENODEV:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ENOSPC:
	case -EBUSY:
		return true;
	default:
		return false;
	}
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
