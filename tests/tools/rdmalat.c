// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalat: the latency of an RDMA READ or WRITE between two machines, and
 * their rate, as a kernel consumer waiting for its completions sees them.
 *
 *   rdmalat --serve ADDR [--port P] [--size B]
 *   rdmalat --to ADDR [--port P] [--size B] [--op read|write] [--iters N]
 *           [--warmup N] [--depth D]
 *
 * The server listens on its address ADDR (a listener on its own address
 * rather than on 0.0.0.0 has never seen the rejected connects of
 * tests/vm/scenarios/rdma-rw/rdma-lib.sh), lends one buffer of B bytes
 * (4096) to one client and sleeps in rdma_cm until that client
 * disconnects.  The client keeps D (1) signalled work requests in flight
 * and sleeps on the completion channel until one completes: an interrupt
 * and a wakeup per completion, as a swap-in that waits for its page has.
 * At depth 1 that is the latency of one verb; deeper, the rate (iops) is
 * what one queue pair and both ends can carry.  perftest's ib_read_lat
 * busy-polls on both sides, and on a one-vCPU guest its pollers compete
 * with Soft-RoCE's kernel threads for the CPU: what it measures there is
 * the scheduler.  Nothing here spins.
 *
 * The client prints one line (latency: from a verb's post to its
 * completion reaped):
 *   rdmalat: read 4096 B x N depth D: min_us= p50_us= p90_us= p99_us=
 *            p999_us= max_us= avg_us= iops=
 * and exits 0; any failure is one "rdmalat: ..." line on stderr, exit 1.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CM_TIMEOUT_MS	2000
#define VERB_TIMEOUT_MS	10000	/* a verb not done by then is lost */
#define MAX_DEPTH	16	/* READs in flight: rdma_cm's usual limit */
#define LENT_FILL	0x5a	/* the lent buffer's bytes: what READs return */

/* What the server's accept tells the client (rdma_cm private data). */
struct lend {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

/* One side's verbs objects. */
struct side {
	struct rdma_event_channel *events;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *completions;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *buf;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmalat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

/*
 * The next event on @s's channel, which must be @want; its private data
 * (if any, up to @len bytes) is copied to @data, and the READs the peer
 * wants in flight to @reads.
 */
static struct rdma_cm_id *expect_event(struct side *s,
				       enum rdma_cm_event_type want,
				       void *data, size_t len, uint8_t *reads)
{
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;

	if (rdma_get_cm_event(s->events, &e))
		fail("rdma_get_cm_event: %s", strerror(errno));
	if (e->event != want) {
		enum rdma_cm_event_type got = e->event;
		int status = e->status;

		rdma_ack_cm_event(e);
		fail("waited for %s, got %s (status %d)", rdma_event_str(want),
		     rdma_event_str(got), status);
	}
	id = want == RDMA_CM_EVENT_CONNECT_REQUEST ? e->id : NULL;
	/*
	 * The CM hands a request's figures over in our view: its responder
	 * resources are the READs the peer will have in flight at once.
	 */
	if (reads)
		*reads = e->param.conn.responder_resources;
	if (data) {
		if (e->param.conn.private_data_len < len)
			fail("%s carried %u bytes, need %zu", rdma_event_str(want),
			     e->param.conn.private_data_len, len);
		memcpy(data, e->param.conn.private_data, len);
	}
	rdma_ack_cm_event(e);
	return id;
}

/*
 * PD, completion channel, CQ, QP for @depth verbs in flight, and a buffer
 * of @depth times @size bytes (filled with @fill), for the connected
 * @s->id.
 */
static void setup_verbs(struct side *s, size_t size, unsigned int depth,
			int access, int fill)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_context *verbs = s->id->verbs;

	s->pd = ibv_alloc_pd(verbs);
	s->completions = ibv_create_comp_channel(verbs);
	if (!s->pd || !s->completions)
		fail("ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	s->cq = ibv_create_cq(verbs, depth + 1, NULL, s->completions, 0);
	if (!s->cq)
		fail("ibv_create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = s->cq;
	if (rdma_create_qp(s->id, s->pd, &qa))
		fail("rdma_create_qp: %s", strerror(errno));
	size *= depth;
	if (posix_memalign(&s->buf, 4096, size))
		fail("no memory for %zu bytes", size);
	memset(s->buf, fill, size);
	s->mr = ibv_reg_mr(s->pd, s->buf, size, access);
	if (!s->mr)
		fail("ibv_reg_mr: %s", strerror(errno));
}

static void teardown(struct side *s)
{
	rdma_destroy_qp(s->id);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_destroy_comp_channel(s->completions);
	ibv_dealloc_pd(s->pd);
	free(s->buf);
	rdma_destroy_id(s->id);
}

static struct addrinfo *lookup(const char *host, const char *port, int flags)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = flags };
	struct addrinfo *res;
	int ret = getaddrinfo(host, port, &hints, &res);

	if (ret)
		fail("%s port %s: %s", host, port, gai_strerror(ret));
	return res;
}

/* Lend one buffer to one client, until it disconnects. */
static void serve(const char *at, const char *port, size_t size)
{
	struct rdma_conn_param param = { 0 };
	struct addrinfo *res = lookup(at, port, AI_PASSIVE);
	struct rdma_cm_id *listener;
	struct side s = { 0 };
	struct lend lend;
	uint8_t reads;

	s.events = rdma_create_event_channel();
	if (!s.events)
		fail("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(s.events, &listener, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(listener, res->ai_addr) || rdma_listen(listener, 1))
		fail("listening on %s port %s: %s", at, port, strerror(errno));
	freeaddrinfo(res);

	s.id = expect_event(&s, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, 0, &reads);
	setup_verbs(&s, size, 1, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
		    LENT_FILL);
	/* As many READs in flight as the client asks for. */
	param.responder_resources = reads ? reads : 1;
	lend = (struct lend){ .addr = (uintptr_t)s.buf, .rkey = s.mr->rkey,
			      .size = size };
	param.private_data = &lend;
	param.private_data_len = sizeof(lend);
	if (rdma_accept(s.id, &param))
		fail("rdma_accept: %s", strerror(errno));
	expect_event(&s, RDMA_CM_EVENT_ESTABLISHED, NULL, 0, NULL);
	expect_event(&s, RDMA_CM_EVENT_DISCONNECTED, NULL, 0, NULL);
	rdma_disconnect(s.id);
	teardown(&s);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(s.events);
}

/* Post verb @slot: its own @lend->size bytes of the local buffer. */
static void post_verb(struct side *s, const struct lend *lend,
		      enum ibv_wr_opcode op, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + (size_t)slot * lend->size,
		.length = lend->size, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = lend->addr,
					       .rkey = lend->rkey } };
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(s->id->qp, &wr, &bad);

	if (ret)
		fail("ibv_post_send: %s", strerror(ret));
}

/*
 * Sleep on the completion channel until the CQ (armed) has completions,
 * re-arm it and reap them into @wc (room for @max); returns how many.
 */
static int reap(struct side *s, struct ibv_wc *wc, int max)
{
	for (;;) {
		struct pollfd pfd = { .fd = s->completions->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *ctx;
		int n = poll(&pfd, 1, VERB_TIMEOUT_MS);

		if (n < 0)
			fail("poll: %s", strerror(errno));
		if (!n)
			fail("no completion in %d ms", VERB_TIMEOUT_MS);
		if (ibv_get_cq_event(s->completions, &cq, &ctx))
			fail("ibv_get_cq_event: %s", strerror(errno));
		ibv_ack_cq_events(cq, 1);
		n = ibv_req_notify_cq(cq, 0);
		if (n)
			fail("ibv_req_notify_cq: %s", strerror(n));
		n = ibv_poll_cq(cq, max, wc);
		if (n < 0)
			fail("ibv_poll_cq failed");
		if (n)
			return n;
	}
}

static double usecs(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e6 + (b->tv_nsec - a->tv_nsec) / 1e3;
}

/*
 * @n verbs, @depth in flight; each one's latency in @lat (if not NULL).
 * Returns the seconds from the first post to the last completion.
 */
static double run_verbs(struct side *s, const struct lend *lend,
			enum ibv_wr_opcode op, unsigned int depth,
			unsigned int n, double *lat)
{
	struct timespec posted[MAX_DEPTH], start, now;
	unsigned int sent = 0, done = 0, slot;
	struct ibv_wc wc[MAX_DEPTH];

	clock_gettime(CLOCK_MONOTONIC, &start);
	now = start;
	for (slot = 0; slot < depth && sent < n; slot++, sent++) {
		clock_gettime(CLOCK_MONOTONIC, &posted[slot]);
		post_verb(s, lend, op, slot);
	}
	while (done < n) {
		int got = reap(s, wc, MAX_DEPTH), i;

		clock_gettime(CLOCK_MONOTONIC, &now);
		for (i = 0; i < got; i++) {
			slot = wc[i].wr_id;
			if (wc[i].status != IBV_WC_SUCCESS)
				fail("%s failed: %s",
				     op == IBV_WR_RDMA_READ ? "READ" : "WRITE",
				     ibv_wc_status_str(wc[i].status));
			if (slot >= depth)
				fail("a completion for slot %u of %u", slot,
				     depth);
			if (lat)
				lat[done] = usecs(&posted[slot], &now);
			done++;
			if (sent < n) {
				clock_gettime(CLOCK_MONOTONIC, &posted[slot]);
				post_verb(s, lend, op, slot);
				sent++;
			}
		}
	}
	return usecs(&start, &now) / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The value below which a fraction @q of the sorted @v[0..n) lies. */
static double quantile(const double *v, unsigned int n, double q)
{
	unsigned int i = (unsigned int)(q * n);

	return v[i < n ? i : n - 1];
}

static void report(const char *opname, size_t size, unsigned int depth,
		   double *lat, unsigned int n, double seconds)
{
	double sum = 0;
	unsigned int i;

	qsort(lat, n, sizeof(*lat), by_value);
	for (i = 0; i < n; i++)
		sum += lat[i];
	printf("rdmalat: %s %zu B x %u depth %u: min_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f avg_us=%.1f iops=%.0f\n",
	       opname, size, n, depth, lat[0], quantile(lat, n, 0.5),
	       quantile(lat, n, 0.9), quantile(lat, n, 0.99),
	       quantile(lat, n, 0.999), lat[n - 1], sum / n,
	       seconds > 0 ? n / seconds : 0);
}

static void measure(const char *to, const char *port, size_t size,
		    bool write, unsigned int iters, unsigned int warmup,
		    unsigned int depth)
{
	enum ibv_wr_opcode op = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	struct rdma_conn_param param = { .initiator_depth = depth,
					 .retry_count = 7 };
	unsigned int slots_used;
	double seconds;
	struct addrinfo *res = lookup(to, port, 0);
	struct side s = { 0 };
	struct lend lend;
	double *lat;

	lat = calloc(iters, sizeof(*lat));
	s.events = rdma_create_event_channel();
	if (!lat || !s.events)
		fail("setting up: %s", strerror(errno));
	if (rdma_create_id(s.events, &s.id, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(s.id, NULL, res->ai_addr, CM_TIMEOUT_MS))
		fail("rdma_resolve_addr %s: %s", to, strerror(errno));
	expect_event(&s, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 0, NULL);
	freeaddrinfo(res);
	if (rdma_resolve_route(s.id, CM_TIMEOUT_MS))
		fail("rdma_resolve_route: %s", strerror(errno));
	expect_event(&s, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 0, NULL);
	setup_verbs(&s, size, depth, IBV_ACCESS_LOCAL_WRITE, ~LENT_FILL & 0xff);
	if (rdma_connect(s.id, &param))
		fail("rdma_connect: %s", strerror(errno));
	expect_event(&s, RDMA_CM_EVENT_ESTABLISHED, &lend, sizeof(lend), NULL);
	if (lend.size < size)
		fail("the server lent %u bytes, not %zu", lend.size, size);
	lend.size = size;

	if (ibv_req_notify_cq(s.cq, 0))
		fail("arming the completion queue failed");
	if (warmup)
		run_verbs(&s, &lend, op, depth, warmup, NULL);
	seconds = run_verbs(&s, &lend, op, depth, iters, lat);
	slots_used = depth < iters || depth < warmup ? depth :
		     iters > warmup ? iters : warmup;
	/* A READ that completed without moving the data is no READ. */
	if (!write)
		for (size_t i = 0; i < size * slots_used; i++)
			if (((unsigned char *)s.buf)[i] != LENT_FILL)
				fail("READ returned byte %zu as 0x%02x, lent 0x%02x",
				     i, ((unsigned char *)s.buf)[i], LENT_FILL);
	report(write ? "write" : "read", size, depth, lat, iters, seconds);

	rdma_disconnect(s.id);
	expect_event(&s, RDMA_CM_EVENT_DISCONNECTED, NULL, 0, NULL);
	teardown(&s);
	rdma_destroy_event_channel(s.events);
	free(lat);
}

static unsigned long number(const char *what, const char *s, unsigned long min,
			    unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		fail("%s must be a number from %lu to %lu, not '%s'", what, min,
		     max, s);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdmalat --serve ADDR [--port P] [--size B]\n"
		"       rdmalat --to ADDR [--port P] [--size B] [--op read|write]\n"
		"               [--iters N] [--warmup N] [--depth D]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "serve", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 'b' },
		{ "op", required_argument, NULL, 'o' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "depth", required_argument, NULL, 'd' },
		{ 0 }
	};
	unsigned long size = 4096, iters = 1000, warmup = 10, depth = 1;
	const char *to = NULL, *at = NULL, *port = "18700";
	bool write = false;
	int c;

	while ((c = getopt_long(argc, argv, "s:t:p:b:o:n:w:d:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			at = optarg;
			break;
		case 't':
			to = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'b':
			size = number("--size", optarg, 1, 1ul << 24);
			break;
		case 'n':
			iters = number("--iters", optarg, 1, 10000000);
			break;
		case 'w':
			warmup = number("--warmup", optarg, 0, 10000000);
			break;
		case 'd':
			depth = number("--depth", optarg, 1, MAX_DEPTH);
			break;
		case 'o':
			if (strcmp(optarg, "read") && strcmp(optarg, "write"))
				fail("--op must be read or write, not '%s'", optarg);
			write = !strcmp(optarg, "write");
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !at == !to)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (at)
		serve(at, port, size);
	else
		measure(to, port, size, write, iters, warmup, depth);
	return 0;
}
