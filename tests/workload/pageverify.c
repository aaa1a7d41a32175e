// SPDX-License-Identifier: GPL-2.0
/*
 * pageverify: a swap workload that proves no page was lost or corrupted.
 *
 * Each of --procs worker processes maps its share of --mb MiB, writes a
 * pattern unique to (seed, worker, page, generation) into every word of
 * every page, then verifies every page in sequential and in random order.
 * Run it in a memory cgroup smaller than --mb and the pages go through swap
 * and come back.  Worker 0 also forks: the child checks it sees the
 * parent's pages (copy-on-write, shared), rewrites half of them with its
 * own generation and verifies; the parent then verifies that its pages
 * were untouched by the child's writes.
 *
 * With --hold, workers stop after the first round, print "HOLD <pid>" and
 * wait for SIGUSR1, then verify every page once more (e.g. after swapoff
 * brought everything back into memory).
 *
 * With --bench (for tests/bench), a worker only fills its pages and then
 * verifies them in random order (--passes times), each pass followed by
 * one in sequential order with --seq (where swap readahead pays); no
 * fork.  The workers go through these phases in lock-step, so that each
 * phase is one stretch of wall time with every worker busy; the parent
 * prints a "RESULT all phase=..." line per phase with its wall time, the
 * workers' summed failures and the system-wide /proc/vmstat deltas
 * (pswpin, pswpout, pgmajfault) over the phase.
 *
 * Prints per phase timings and "RESULT ..." lines; exits 0 only if every
 * page of every worker verified.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096u
#define WORDS		(PAGE / sizeof(uint64_t))
#define MAX_REPORT	8

struct opts {
	unsigned long mb;
	unsigned int procs;
	uint64_t seed;
	bool hold;
	bool no_fork;
	unsigned int passes;
	long inject;		/* self-test: corrupt this page of worker 0 */
	bool bench;		/* fill + random passes in lock-step */
	bool seq;		/* --bench: a sequential pass after each random one */
};

/*
 * --bench lock-step: a worker writes its phase's failure count to
 * @ready (8 bytes: atomic on a pipe) and waits for a byte on its own
 * @go pipe.  One go pipe per worker, so a fast worker can never take a
 * slow one's byte.
 */
struct lockstep {
	int ready[2];
	int (*go)[2];
};

static struct lockstep lockstep;

struct region {
	uint64_t *mem;
	size_t pages;
	unsigned int worker;
	uint64_t seed;
};

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The expected content of word @w of page @p in generation @gen. */
static uint64_t pattern(const struct region *r, size_t p, unsigned int w,
			unsigned int gen)
{
	uint64_t base = splitmix(r->seed ^ ((uint64_t)r->worker << 48) ^
				 ((uint64_t)gen << 40) ^ p);

	return w == 0 ? ((uint64_t)r->worker << 48 | p) : base + w;
}

static void fill_page(struct region *r, size_t p, unsigned int gen)
{
	uint64_t *page = r->mem + p * WORDS;
	unsigned int w;

	for (w = 0; w < WORDS; w++)
		page[w] = pattern(r, p, w, gen);
}

/* Returns true if the page holds generation @gen; reports the first bad word. */
static bool check_page(const struct region *r, size_t p, unsigned int gen,
		       unsigned long *reported, const char *phase)
{
	const uint64_t *page = r->mem + p * WORDS;
	unsigned int w;

	for (w = 0; w < WORDS; w++) {
		uint64_t want = pattern(r, p, w, gen);

		if (page[w] == want)
			continue;
		if ((*reported)++ < MAX_REPORT)
			fprintf(stderr,
				"MISMATCH worker %u %s: page %zu word %u: got %016" PRIx64
				" want %016" PRIx64 " (generation %u)\n",
				r->worker, phase, p, w, page[w], want, gen);
		return false;
	}
	return true;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Verify every page, in order or in a random permutation; count failures. */
static unsigned long verify_all(const struct region *r, const unsigned int *gen,
				bool random_order, const char *phase)
{
	unsigned long bad = 0, reported = 0;
	size_t *order = NULL, i;

	if (random_order) {
		uint64_t s = splitmix(r->seed ^ 0xabcdef ^ r->worker);

		order = malloc(r->pages * sizeof(*order));
		if (!order) {
			fprintf(stderr, "worker %u: out of memory\n", r->worker);
			exit(2);
		}
		for (i = 0; i < r->pages; i++)
			order[i] = i;
		for (i = r->pages - 1; i > 0; i--) {
			size_t j, t;

			s = splitmix(s);
			j = s % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}
	for (i = 0; i < r->pages; i++) {
		size_t p = order ? order[i] : i;

		if (!check_page(r, p, gen ? gen[p] : 0, &reported, phase))
			bad++;
	}
	free(order);
	return bad;
}

/*
 * Copy-on-write check: the child must see the parent's pages, and its own
 * writes must not reach the parent.  Returns the parent's failures.
 */
static unsigned long cow_check(struct region *r, unsigned int *gen)
{
	unsigned long bad = 0;
	int status;
	pid_t pid;
	double t = now();

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		unsigned long cbad = verify_all(r, gen, true, "cow-child-read");
		size_t p;

		/* Rewrite every other page with a generation of our own. */
		for (p = 0; p < r->pages; p += 2) {
			gen[p] = 7;
			fill_page(r, p, 7);
		}
		cbad += verify_all(r, gen, true, "cow-child-write");
		printf("RESULT worker=%u phase=cow-child pages=%zu bad=%lu\n",
		       r->worker, r->pages, cbad);
		fflush(stdout);
		_exit(cbad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "worker %u: copy-on-write child failed (status %d)\n",
			r->worker, status);
		bad++;
	}
	/* The child's writes were to its own copies: ours are unchanged. */
	bad += verify_all(r, gen, true, "cow-parent");
	printf("RESULT worker=%u phase=cow pages=%zu bad=%lu seconds=%.2f\n",
	       r->worker, r->pages, bad, now() - t);
	return bad;
}

/* Report this phase's failures to the parent and wait for the next phase. */
static void lockstep_wait(unsigned int id, uint64_t bad)
{
	char c;

	if (write(lockstep.ready[1], &bad, sizeof(bad)) != sizeof(bad) ||
	    read(lockstep.go[id][0], &c, 1) != 1) {
		fprintf(stderr, "worker %u: lock-step pipe failed: %s\n", id,
			strerror(errno));
		exit(2);
	}
}

static int worker(const struct opts *o, unsigned int id, size_t pages)
{
	struct region r = { .pages = pages, .worker = id, .seed = o->seed };
	unsigned int *gen;
	unsigned long bad = 0;
	unsigned int pass;
	double t;
	size_t p;

	r.mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gen = calloc(pages, sizeof(*gen));
	if (r.mem == MAP_FAILED || !gen) {
		fprintf(stderr, "worker %u: cannot map %zu pages\n", id, pages);
		return 2;
	}

	if (o->bench)
		lockstep_wait(id, 0);	/* everyone is mapped: start together */
	t = now();
	for (p = 0; p < pages; p++)
		fill_page(&r, p, 0);
	printf("RESULT worker=%u phase=fill pages=%zu seconds=%.2f\n", id,
	       pages, now() - t);
	fflush(stdout);
	/* Proves the checks can fail: one flipped bit must be caught. */
	if (id == 0 && o->inject >= 0 && (size_t)o->inject < pages)
		r.mem[o->inject * WORDS + WORDS / 2] ^= 1;
	if (o->bench)
		lockstep_wait(id, 0);

	for (pass = 0; o->bench && pass < o->passes; pass++) {
		unsigned long b;

		t = now();
		b = verify_all(&r, gen, true, "random");
		printf("RESULT worker=%u phase=verify-random pages=%zu bad=%lu seconds=%.2f\n",
		       id, pages, b, now() - t);
		fflush(stdout);
		bad += b;
		lockstep_wait(id, b);
		if (!o->seq)
			continue;
		t = now();
		b = verify_all(&r, gen, false, "sequential");
		printf("RESULT worker=%u phase=verify-seq pages=%zu bad=%lu seconds=%.2f\n",
		       id, pages, b, now() - t);
		fflush(stdout);
		bad += b;
		lockstep_wait(id, b);
	}
	for (pass = 0; !o->bench && pass < o->passes; pass++) {
		unsigned long b;

		t = now();
		b = verify_all(&r, gen, false, "sequential");
		printf("RESULT worker=%u phase=verify-seq pages=%zu bad=%lu seconds=%.2f\n",
		       id, pages, b, now() - t);
		bad += b;
		t = now();
		b = verify_all(&r, gen, true, "random");
		printf("RESULT worker=%u phase=verify-random pages=%zu bad=%lu seconds=%.2f\n",
		       id, pages, b, now() - t);
		bad += b;
		fflush(stdout);
	}
	if (id == 0 && !o->no_fork && !o->bench)
		bad += cow_check(&r, gen);

	if (o->hold) {
		sigset_t mask, old;

		sigemptyset(&mask);
		sigaddset(&mask, SIGUSR1);
		sigprocmask(SIG_BLOCK, &mask, &old);
		printf("HOLD %d\n", getpid());
		fflush(stdout);
		while (!go)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		t = now();
		{
			unsigned long b = verify_all(&r, gen, false, "after-hold");

			printf("RESULT worker=%u phase=verify-after-hold pages=%zu bad=%lu seconds=%.2f\n",
			       id, pages, b, now() - t);
			bad += b;
		}
	}
	printf("RESULT worker=%u phase=done pages=%zu bad=%lu\n", id, pages, bad);
	fflush(stdout);
	return bad ? 1 : 0;
}

struct vmstat_swap {
	unsigned long long pswpin, pswpout, pgmajfault;
};

static void read_vmstat(struct vmstat_swap *v)
{
	char key[64];
	unsigned long long val;
	FILE *f = fopen("/proc/vmstat", "r");

	memset(v, 0, sizeof(*v));
	if (!f)
		return;
	while (fscanf(f, "%63s %llu", key, &val) == 2) {
		if (!strcmp(key, "pswpin"))
			v->pswpin = val;
		else if (!strcmp(key, "pswpout"))
			v->pswpout = val;
		else if (!strcmp(key, "pgmajfault"))
			v->pgmajfault = val;
	}
	fclose(f);
}

/*
 * A worker that died can never reach the end of the phase, and the others
 * would wait for it for ever: look (without reaping, main() does that) and
 * kill them all so main() reports the failure.
 */
static bool lockstep_worker_died(const pid_t *pids, unsigned int procs)
{
	siginfo_t si;
	unsigned int i;

	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) || !si.si_pid)
		return false;
	fprintf(stderr, "worker pid %d ended mid-phase: stopping the others\n",
		(int)si.si_pid);
	for (i = 0; i < procs; i++)
		kill(pids[i], SIGKILL);
	return true;
}

/*
 * --bench, in the parent: wait until every worker reached the end of a
 * phase, print the phase's line, let them all go on.  Returns false if a
 * worker died, after which nobody waits any more.
 */
static bool lockstep_phase(const pid_t *pids, unsigned int procs,
			   const char *phase, unsigned int pass,
			   unsigned long pages, double *t,
			   struct vmstat_swap *v)
{
	struct pollfd pfd = { .fd = lockstep.ready[0], .events = POLLIN };
	struct vmstat_swap v1;
	uint64_t bad = 0, b;
	unsigned int i;
	double t1;

	for (i = 0; i < procs; i++) {
		while (poll(&pfd, 1, 1000) == 0 || (pfd.revents & ~POLLIN)) {
			if (lockstep_worker_died(pids, procs))
				return false;
			if (pfd.revents & ~POLLIN)
				return false;
		}
		if (read(lockstep.ready[0], &b, sizeof(b)) != sizeof(b))
			return false;
		bad += b;
	}
	t1 = now();
	read_vmstat(&v1);
	if (phase) {
		printf("RESULT all phase=%s pass=%u procs=%u pages=%lu bad=%llu seconds=%.3f pswpin=%llu pswpout=%llu pgmajfault=%llu\n",
		       phase, pass, procs, pages, (unsigned long long)bad,
		       t1 - *t, v1.pswpin - v->pswpin,
		       v1.pswpout - v->pswpout,
		       v1.pgmajfault - v->pgmajfault);
		fflush(stdout);
	}
	for (i = 0; i < procs; i++)
		if (write(lockstep.go[i][1], "g", 1) != 1)
			return false;
	/* The next phase starts now: time and count it from here. */
	*t = now();
	read_vmstat(v);
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pageverify --mb MIB [--procs N] [--seed S] [--passes N] [--hold]\n"
		"                  [--no-fork] [--inject-corruption PAGE] [--bench [--seq]]\n"
		"--bench: fill, then --passes random-order verify passes, workers in\n"
		"         lock-step; prints \"RESULT all phase=...\" per phase with wall\n"
		"         seconds and /proc/vmstat pswpin/pswpout/pgmajfault deltas\n"
		"--seq:   with --bench, a sequential verify pass after each random one\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mb", required_argument, NULL, 'm' },
		{ "procs", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "passes", required_argument, NULL, 'n' },
		{ "hold", no_argument, NULL, 'H' },
		{ "no-fork", no_argument, NULL, 'F' },
		{ "inject-corruption", required_argument, NULL, 'I' },
		{ "bench", no_argument, NULL, 'B' },
		{ "seq", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .procs = 3, .seed = 1, .passes = 1, .inject = -1 };
	unsigned long total_pages;
	unsigned int i, failed = 0;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pid_t *pids;
	double t;
	int c;

	while ((c = getopt_long(argc, argv, "m:p:s:n:HFI:BSh", lopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o.mb = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o.procs = strtoul(optarg, NULL, 0);
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o.passes = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			o.hold = true;
			break;
		case 'F':
			o.no_fork = true;
			break;
		case 'I':
			o.inject = strtol(optarg, NULL, 0);
			break;
		case 'B':
			o.bench = true;
			break;
		case 'S':
			o.seq = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!o.mb || !o.procs || o.procs > 64 || (o.seq && !o.bench)) {
		usage(stderr);
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	total_pages = o.mb * (1024 * 1024 / PAGE);
	pids = calloc(o.procs, sizeof(*pids));
	if (!pids)
		return 2;
	if (o.bench) {
		lockstep.go = calloc(o.procs, sizeof(*lockstep.go));
		if (!lockstep.go || pipe(lockstep.ready))
			return 2;
		for (i = 0; i < o.procs; i++)
			if (pipe(lockstep.go[i]))
				return 2;
	}

	t = now();
	for (i = 0; i < o.procs; i++) {
		size_t share = total_pages / o.procs +
			       (i < total_pages % o.procs ? 1 : 0);

		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			if (o.bench)
				close(lockstep.ready[0]);
			_exit(worker(&o, i, share));
		}
		if (pids[i] < 0) {
			perror("fork");
			return 2;
		}
	}
	if (o.bench) {
		struct vmstat_swap v;
		double tp = now();
		unsigned int pass;
		bool ok;

		/* Only the workers may hold the write ends: a dead one is EOF. */
		close(lockstep.ready[1]);
		read_vmstat(&v);
		ok = lockstep_phase(pids, o.procs, NULL, 0, total_pages, &tp,
				    &v) &&
		     lockstep_phase(pids, o.procs, "fill", 0, total_pages, &tp,
				    &v);
		for (pass = 1; ok && pass <= o.passes; pass++) {
			ok = lockstep_phase(pids, o.procs, "verify-random", pass,
					    total_pages, &tp, &v);
			if (ok && o.seq)
				ok = lockstep_phase(pids, o.procs, "verify-seq",
						    pass, total_pages, &tp, &v);
		}
		if (!ok)
			fprintf(stderr, "a worker died mid-phase\n");
	}
	/*
	 * Reap in the order they end.  A worker that failed or was killed
	 * (the OOM killer, SIGBUS on a lost page) takes the others down:
	 * with --hold they would wait for a SIGUSR1 nobody sends, since the
	 * caller waits for every worker's HOLD line.
	 */
	for (i = 0; i < o.procs; i++) {
		unsigned int w;
		int status = 0;
		pid_t pid;

		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			perror("waitpid");
			failed += o.procs - i;
			break;
		}
		for (w = 0; w < o.procs && pids[w] != pid; w++)
			;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		fprintf(stderr, "worker %u failed (status 0x%x)%s\n", w, status,
			failed ? "" : ": stopping the others");
		if (!failed) {
			for (w = 0; w < o.procs; w++)
				if (pids[w] != pid)
					kill(pids[w], SIGKILL);
		}
		failed++;
	}
	printf("RESULT total mb=%lu procs=%u pages=%lu failed_workers=%u seconds=%.2f\n",
	       o.mb, o.procs, total_pages, failed, now() - t);
	return failed ? 1 : 0;
}
