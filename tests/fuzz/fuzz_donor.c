// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the donor's parser and dispatcher, exactly the code a
 * received SEND buffer (fsd_handle_msg) and a connect request's private
 * data (fsd_conn_decide) go through, with the verbs calls replaced by
 * tests/unit/fake_ops.c.  The input is a little script of operations, so
 * the fuzzer can build sessions, hold slabs, trigger pressure and then
 * send garbage; after every step the pool and session counters must
 * still agree (else abort()).
 *
 *   op 0: raw message     [sess] [len] [len bytes]
 *   op 1: connect request [len] [len bytes]
 *   op 2: pressure tick   [avail] [dt]
 *   op 3: close session   [sess]
 *   op 4: notice sent     [sess]
 *   op 5: failure knobs   [bits]
 *   op 6: framed message  [sess] [type] [body bytes...] (header made valid)
 *   op 7: keepalive check [dt] [interval]
 *   op 8: send failed     [sess] [bit 0: it carried a notice]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_ops.h"
#include "log.h"

#define SLAB (4ull << 20)
#define NR_SLABS 12

struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint8_t next(struct cursor *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static size_t take(struct cursor *c, uint8_t *buf, size_t len)
{
	size_t n = len < c->n ? len : c->n;

	memset(buf, 0, len);
	memcpy(buf, c->p, n);
	c->p += n;
	c->n -= n;
	return len;
}

static struct fsd_session *pick(struct fsd_donor *d, uint8_t k)
{
	struct fsd_session *s = d->sessions;
	unsigned int i;

	if (!s)
		return fake_session(d, "fuzz-new", 2);
	for (i = 0; i < k % d->nr_sessions; i++)
		s = s->next;
	return s;
}

static void check(const struct fsd_donor *d)
{
	const struct fsd_session *s;
	uint32_t held = 0, reclaiming = 0, i;

	if (!fsd_pool_consistent(&d->pool))
		abort();
	for (s = d->sessions; s; s = s->next) {
		uint32_t mine = 0;

		for (i = 0; i < d->pool.nr_slabs; i++)
			if (d->pool.slabs[i].owner == s)
				mine++;
		if (mine != s->nr_slabs || s->unsolicited > FSD_UNSOLICITED_MAX ||
		    s->nr_reclaiming > FSD_RECLAIMS_MAX ||
		    s->unsolicited != s->nr_reclaiming + s->notice_in_flight)
			abort();
		held += s->nr_slabs;
		reclaiming += s->nr_reclaiming;
	}
	if (held != d->pool.nr_held || reclaiming != d->pool.nr_reclaiming)
		abort();
	/* A held slab is registered; nothing else is. */
	for (i = 0; i < d->pool.nr_slabs; i++)
		if ((d->pool.slabs[i].state == FSD_SLAB_HELD) !=
		    !!d->pool.slabs[i].mr)
			abort();
}

/* Drop sessions the logic closed, as the event loop's reaper does. */
static void reap(struct fsd_donor *d)
{
	struct fsd_session *s, *n;

	for (s = d->sessions; s; s = n) {
		n = s->next;
		if (s->closing)
			fsd_session_free(d, s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	struct fsd_donor d;
	struct fake f;
	uint64_t now = 1000;
	unsigned int steps = 0;

	fsd_log_init(0, false);	/* silent */
	if (fake_donor_init(&d, &f, NR_SLABS, SLAB))
		abort();
	d.max_hosts = 8;
	fake_session(&d, "fuzz-a", 2);
	fake_session(&d, "fuzz-b", 4);

	while (c.n && steps++ < 256) {
		uint8_t buf[160], op = next(&c) % 9;
		struct fsd_conn_decision dec;
		struct fsd_session *s;
		struct fsd_meminfo mi;
		size_t len;

		switch (op) {
		case 0:
			s = pick(&d, next(&c));
			len = take(&c, buf, next(&c) % 129);
			if (s)
				fsd_handle_msg(&d, s, buf, len, now);
			break;
		case 1:
			len = take(&c, buf, next(&c) % 80);
			fsd_conn_decide(&d, buf, len, &dec);
			if (dec.status != FARSWAP_ST_OK)
				break;
			if (dec.qtype == FARSWAP_QT_CTRL) {
				s = fsd_session_new(&d, &dec, "fuzz");
				if (s)
					fsd_session_established(&d, s, now);
			} else if (fsd_session_attach_io(dec.session,
							 dec.qid)) {
				abort();	/* decide said it was free */
			}
			break;
		case 2:
			memset(&mi, 0, sizeof(mi));
			mi.mem_total = 64ull << 30;
			mi.mem_available = d.headroom +
					   ((int64_t)next(&c) - 128) *
						   (int64_t)(SLAB / 2);
			mi.psi_some_avg10 = next(&c) * 40u;
			mi.psi_valid = true;
			now += 100ull * next(&c);
			fsd_donor_tick(&d, &mi, now);
			break;
		case 3:
			s = pick(&d, next(&c));
			if (s)
				fsd_session_close(&d, s, FSD_LOG_DEBUG, "fuzz");
			break;
		case 4:
			s = pick(&d, next(&c));
			if (s)
				fsd_notice_sent(&d, s, now);
			break;
		case 5:
			op = next(&c);
			f.fail_grant = op & 1;
			f.fail_send = (op & 2) && (op & 4);
			f.fail_populate = op & 8;
			d.psi_threshold = op & 16 ? 1000 : 0;
			break;
		case 6: {
			union farswap_msg *m = (union farswap_msg *)buf;
			unsigned int type;

			s = pick(&d, next(&c));
			type = next(&c) % (FARSWAP_MSG_TYPE_MAX + 1);
			take(&c, buf, sizeof(buf));
			m->hdr.magic = cpu_to_le32(FARSWAP_MAGIC);
			m->hdr.version = FARSWAP_VERSION_MAX;
			m->hdr.type = (uint8_t)type;
			len = farswap_msg_size(type);
			m->hdr.length = cpu_to_le16((uint16_t)len);
			if (s)
				fsd_handle_msg(&d, s, buf, len ? len : 16, now);
			break;
		}
		case 7:
			now += 250ull * next(&c);
			d.keepalive_ms = 500u * next(&c);
			fsd_donor_keepalive(&d, now);
			break;
		case 8:
			s = pick(&d, next(&c));
			if (s)
				fsd_send_failed(&d, s, next(&c) & 1,
						"fuzz", now);
			break;
		}
		check(&d);
		reap(&d);
		check(&d);
	}
	fake_donor_exit(&d);
	return 0;
}
