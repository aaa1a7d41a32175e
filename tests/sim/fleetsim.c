// SPDX-License-Identifier: GPL-2.0
/*
 * fleetsim: farswap's placement at fleet scale.  Many hosts, each with a
 * swap device over up to FARSWAP_MAX_DONORS donors of a large fleet, bind
 * every chunk with a redundancy scheme, then lose one donor and then one
 * whole failure domain, and re-protect what lost a copy.
 *
 * The choices are farswap.ko's own: kmod/pick.c (new slabs by the power of
 * two choices, failure domains) and kmod/slots.c (slots of a held slab),
 * compiled unchanged against the small shims in tests/sim/linux/.  What is
 * written here is what the kernel does around them with RDMA in between
 * (kmod/rslab.c): a held slab with a free slot first, the current one
 * ahead of the rest, outside the domains the chunk already has a copy in;
 * else a new slab from two donors asked; a shared domain only when no
 * other has room.  The grow work's spare slabs are left out: they change
 * when a slab is asked for, not where.
 *
 * A scheme places a group of W members per 2 MiB chunk, each on its own
 * donor: "replicas:R" R whole copies (W = R, members of 2 MiB); "ec:K+M"
 * the chunk's pages split in K data and M parity pieces (W = K + M,
 * members of 2 MiB / K).  A group survives the loss of R - 1, or M,
 * members.  Re-protecting a member reads one copy (replicas) or K pieces
 * (ec, decoded on the host) and writes the member on a new donor; the
 * host copies at repair_kbps (bytes read), and a donor's link carries what
 * is read from and written to it.
 *
 * Output: one table row per scheme; with --check, a line per invariant
 * ("ok"/"not ok", TAP) and exit 1 if one failed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bitmap.h>

#include "pick.h"
#include "slots.h"

#define CHUNK_BYTES	(2ull << 20)
#define MIB		(1ull << 20)
#define GIB		(1ull << 30)

struct options {
	unsigned int hosts;
	unsigned int donors;
	unsigned int domains;
	unsigned int view;		/* donors each host is given */
	unsigned int chunks;		/* 2 MiB chunks per host */
	unsigned int slab_mb;
	unsigned int donor_gb;		/* each donor lends this much */
	unsigned int repair_kbps;	/* per host, as the module parameter */
	unsigned int link_gbps;		/* each donor's link */
	uint64_t seed;
	bool check;
};

struct scheme {
	char name[16];
	unsigned int k;			/* data members (1 for replicas) */
	unsigned int m;			/* members that may be lost */
	unsigned int w;			/* members per group */
};

struct donor {
	unsigned int domain;
	uint32_t slabs;			/* lent, held by some host */
	uint32_t cap;
	bool dead;
	uint64_t link_bytes;		/* re-protection traffic */
};

struct hslab {
	uint8_t vi;			/* index in the host's view */
	struct farswap_slots slots;
	unsigned long *map;
};

/* A member: its slab (index in the host's slabs) and slot. */
struct member {
	uint16_t slab;
	uint16_t slot;
};

struct host {
	unsigned int nview;
	unsigned int view[FARSWAP_MAX_DONORS];	/* fleet donor indices */
	uint8_t dom[FARSWAP_MAX_DONORS];	/* farswap_pick_domain_ids() */
	struct hslab *slabs;
	unsigned int nslabs, slabs_cap;
	int cur;				/* the current slab, or -1 */
	struct member *members;			/* chunks * w */
	uint64_t read_bytes;			/* re-protection reads */
};

struct fleet {
	const struct options *o;
	const struct scheme *s;
	struct donor *donors;
	struct host *hosts;
	uint32_t slots_per_slab;
	uint64_t member_bytes;
	uint64_t rng;
};

struct loss {
	unsigned int donors_lost;
	uint64_t lost_groups;		/* past their tolerance */
	uint64_t lost_pages;		/* in those */
	uint64_t bytes_moved;		/* read + written, every host */
	double host_s, link_s;		/* slowest host, busiest link */
	uint64_t unplaced;		/* members with no room anywhere */
};

static int failures, checks;

static void check(const struct options *o, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(const struct options *o, bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	failures += !ok;
	if (!o->check && ok)
		return;
	printf(o->check ? "%s %d - " : "%s: ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* splitmix64: seeded, so a run can be repeated. */
static uint64_t rnd64(struct fleet *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd32(struct fleet *f)
{
	return (uint32_t)rnd64(f);
}

static void *need(void *p)
{
	if (!p) {
		fprintf(stderr, "fleetsim: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	return need(calloc(n ? n : 1, size));
}

static struct donor *host_donor(struct fleet *f, const struct host *h,
				unsigned int vi)
{
	return &f->donors[h->view[vi]];
}

/* The pick views, as farswap_pick_views(): donors outside @exclude. */
static unsigned int views(struct fleet *f, const struct host *h,
			  unsigned long exclude, struct farswap_pick_view *v)
{
	unsigned int i;

	for (i = 0; i < h->nview; i++) {
		const struct donor *d = host_donor(f, h, i);

		v[i].usable = !d->dead && !(exclude & BIT(i));
		v[i].free = d->cap - d->slabs;
		v[i].domain = h->dom[i];
	}
	return h->nview;
}

/* farswap_rslab_open() */
static bool slab_open(struct fleet *f, const struct host *h,
		      const struct hslab *hs, unsigned long exclude,
		      unsigned long avoid)
{
	return !(exclude & BIT(hs->vi)) && !(avoid & BIT(h->dom[hs->vi])) &&
	       farswap_slots_free(&hs->slots) && !host_donor(f, h, hs->vi)->dead;
}

/* farswap_take_slot() */
static bool take_slot(struct fleet *f, struct host *h, unsigned long exclude,
		      unsigned long avoid, struct member *to)
{
	int i = -1;
	unsigned int j;

	if (h->cur >= 0 && slab_open(f, h, &h->slabs[h->cur], exclude, avoid)) {
		i = h->cur;
	} else {
		for (j = 0; j < h->nslabs; j++) {
			if (slab_open(f, h, &h->slabs[j], exclude, avoid)) {
				i = j;
				break;
			}
		}
		if (i >= 0 && !exclude && !avoid)
			h->cur = i;
	}
	if (i < 0)
		return false;
	to->slab = i;
	to->slot = farswap_slots_take(&h->slabs[i].slots);
	return true;
}

/* farswap_acquire_rslab(): two donors asked, then the rest by room. */
static int acquire(struct fleet *f, struct host *h, unsigned long exclude,
		   unsigned long avoid)
{
	struct farswap_pick_view v[FARSWAP_MAX_DONORS];
	int cand[2], order[FARSWAP_MAX_DONORS];
	unsigned int nr = views(f, h, exclude, v), i;
	int nc, n;

	nc = farswap_pick_two_dom(v, nr, avoid, rnd32(f), rnd32(f), cand);
	n = farswap_pick_order_dom(v, nr, avoid, cand, nc, order);
	for (i = 0; i < (unsigned int)n; i++) {
		struct donor *d = host_donor(f, h, order[i]);
		struct hslab *hs;

		if (d->slabs >= d->cap)
			continue;
		if (h->nslabs == UINT16_MAX)
			return -ENOSPC;
		if (h->nslabs == h->slabs_cap) {
			h->slabs_cap = h->slabs_cap ? 2 * h->slabs_cap : 16;
			h->slabs = need(realloc(h->slabs,
						h->slabs_cap * sizeof(*hs)));
		}
		hs = &h->slabs[h->nslabs++];
		hs->vi = order[i];
		hs->map = xcalloc(BITS_TO_LONGS(f->slots_per_slab), sizeof(long));
		farswap_slots_init(&hs->slots, f->slots_per_slab, hs->map);
		d->slabs++;
		return 0;
	}
	return -ENOSPC;
}

/* farswap_room_outside() */
static bool room_outside(struct fleet *f, const struct host *h,
			 unsigned long exclude, unsigned long avoid)
{
	struct farswap_pick_view v[FARSWAP_MAX_DONORS];
	unsigned int nr = views(f, h, exclude, v);

	return farswap_pick_room_outside(v, nr, avoid);
}

/* farswap_take_slot_any() */
static int take_slot_any(struct fleet *f, struct host *h,
			 unsigned long exclude, unsigned long avoid,
			 struct member *to)
{
	if (take_slot(f, h, exclude, avoid, to))
		return 0;
	if (avoid && !room_outside(f, h, exclude, avoid) &&
	    take_slot(f, h, exclude, 0, to))
		return 0;
	for (;;) {
		int ret = acquire(f, h, exclude, avoid);

		if (ret)
			return take_slot(f, h, exclude, 0, to) ? 0 : ret;
		if (take_slot(f, h, exclude, avoid, to) ||
		    take_slot(f, h, exclude, 0, to))
			return 0;
	}
}

static unsigned int member_vi(const struct host *h, const struct member *m)
{
	return h->slabs[m->slab].vi;
}

/*
 * A member of a group on a donor the group has none on (@exclude), in a
 * domain it has none in (@avoid) where one has room; both masks then
 * take it in.
 */
static int place(struct fleet *f, struct host *h, unsigned long *exclude,
		 unsigned long *avoid, struct member *to)
{
	int ret = take_slot_any(f, h, *exclude, *avoid, to);

	if (ret)
		return ret;
	*exclude |= BIT(member_vi(h, to));
	*avoid |= BIT(h->dom[member_vi(h, to)]);
	return 0;
}

static bool member_dead(struct fleet *f, const struct host *h,
			const struct member *m)
{
	return host_donor(f, h, member_vi(h, m))->dead;
}

/* The host's view: @view donors, each from a domain of its own while
 * there are domains left, as an operator would list them. */
static void give_view(struct fleet *f, struct host *h)
{
	const struct options *o = f->o;
	unsigned int per_dom = o->donors / o->domains;
	char names[FARSWAP_MAX_DONORS][16];
	const char *np[FARSWAP_MAX_DONORS];
	unsigned int i, j;

	h->nview = o->view;
	for (i = 0; i < h->nview; i++) {
		unsigned int d;
		bool dup;

		do {
			/* Donor d is in domain d % domains. */
			unsigned int dom = rnd32(f) % o->domains;

			d = dom + o->domains * (rnd32(f) % per_dom);
			dup = false;
			for (j = 0; j < i; j++) {
				dup |= h->view[j] == d;
				/* Distinct domains while the view can have them. */
				dup |= i < o->domains &&
				       f->donors[h->view[j]].domain == dom;
			}
		} while (dup);
		h->view[i] = d;
		snprintf(names[i], sizeof(names[i]), "d%u", f->donors[d].domain);
		np[i] = names[i];
	}
	farswap_pick_domain_ids(np, h->nview, h->dom);
	h->cur = -1;
}

static int fill(struct fleet *f)
{
	const struct options *o = f->o;
	unsigned int hi, c, j;

	for (hi = 0; hi < o->hosts; hi++) {
		struct host *h = &f->hosts[hi];

		give_view(f, h);
		h->members = xcalloc((size_t)o->chunks * f->s->w,
				     sizeof(*h->members));
		for (c = 0; c < o->chunks; c++) {
			struct member *g = &h->members[(size_t)c * f->s->w];
			unsigned long exclude = 0, avoid = 0;

			for (j = 0; j < f->s->w; j++)
				if (place(f, h, &exclude, &avoid, &g[j]))
					return -ENOSPC;
		}
	}
	return 0;
}

/* Has a group two members in one failure domain? */
static bool group_colocated(struct fleet *f, const struct host *h,
			    const struct member *g)
{
	uint8_t dom[FARSWAP_MAX_DONORS];
	unsigned int j;

	for (j = 0; j < f->s->w; j++)
		dom[j] = h->dom[member_vi(h, &g[j])];
	return farswap_pick_colocated(dom, f->s->w);
}

/* Is every member of a group on a live donor, distinct donors each? */
static bool group_whole(struct fleet *f, const struct host *h,
			const struct member *g)
{
	unsigned long seen = 0;
	unsigned int j;

	for (j = 0; j < f->s->w; j++) {
		unsigned int vi = member_vi(h, &g[j]);

		if (member_dead(f, h, &g[j]) || (seen & BIT(vi)))
			return false;
		seen |= BIT(vi);
	}
	return true;
}

/* The groups of every host for which @pred holds. */
static uint64_t count_groups(struct fleet *f,
			     bool (*pred)(struct fleet *, const struct host *,
					  const struct member *))
{
	uint64_t n = 0;
	unsigned int hi, c;

	for (hi = 0; hi < f->o->hosts; hi++)
		for (c = 0; c < f->o->chunks; c++)
			n += pred(f, &f->hosts[hi],
				  &f->hosts[hi].members[(size_t)c * f->s->w]);
	return n;
}

/*
 * The dead donors' slabs are gone: every group that had a member there
 * gets a new one (from a surviving copy, or decoded from K pieces), on a
 * donor it has no member on, outside its members' domains when one has
 * room.  A group past its tolerance is lost.
 */
static void reprotect(struct fleet *f, struct loss *l)
{
	const struct scheme *s = f->s;
	unsigned int hi, c, j, i;
	double host_s = 0;

	for (hi = 0; hi < f->o->hosts; hi++) {
		struct host *h = &f->hosts[hi];

		h->read_bytes = 0;
		for (c = 0; c < f->o->chunks; c++) {
			struct member *g = &h->members[(size_t)c * s->w];
			unsigned long exclude = 0, avoid = 0;
			unsigned int lost = 0, src = 0;

			for (j = 0; j < s->w; j++) {
				unsigned int vi = member_vi(h, &g[j]);

				exclude |= BIT(vi);
				if (member_dead(f, h, &g[j])) {
					lost++;
					continue;
				}
				avoid |= BIT(h->dom[vi]);
			}
			if (!lost)
				continue;
			if (lost > s->m) {
				l->lost_groups++;
				l->lost_pages += CHUNK_BYTES / 4096;
				continue;
			}
			/* The sources: one copy, or the first K pieces. */
			for (j = 0; j < s->w && src < s->k; j++) {
				if (member_dead(f, h, &g[j]))
					continue;
				host_donor(f, h, member_vi(h, &g[j]))->link_bytes +=
					f->member_bytes;
				h->read_bytes += f->member_bytes;
				src++;
			}
			for (j = 0; j < s->w; j++) {
				struct member to;

				if (!member_dead(f, h, &g[j]))
					continue;
				if (place(f, h, &exclude, &avoid, &to)) {
					l->unplaced++;
					continue;
				}
				/* The old slot dies with its slab. */
				farswap_slots_put(&h->slabs[g[j].slab].slots, g[j].slot);
				g[j] = to;
				host_donor(f, h, member_vi(h, &to))->link_bytes +=
					f->member_bytes;
				l->bytes_moved += f->member_bytes;
			}
		}
		l->bytes_moved += h->read_bytes;
		if (f->o->repair_kbps) {
			double t = (double)h->read_bytes / (f->o->repair_kbps * 1024.0);

			if (t > host_s)
				host_s = t;
		}
	}
	l->host_s = host_s;
	l->link_s = 0;
	for (i = 0; i < f->o->donors; i++) {
		double t = (double)f->donors[i].link_bytes * 8 /
			   (f->o->link_gbps * 1e9);

		if (t > l->link_s)
			l->link_s = t;
		f->donors[i].link_bytes = 0;
	}
}

static int parse_scheme(const char *arg, struct scheme *s)
{
	unsigned int a, b;
	char end;

	memset(s, 0, sizeof(*s));
	if (sscanf(arg, "replicas:%u%c", &a, &end) == 1 && a >= 1 &&
	    a <= FARSWAP_MAX_DONORS) {
		s->k = 1;
		s->m = a - 1;
		s->w = a;
	} else if (sscanf(arg, "ec:%u+%u%c", &a, &b, &end) == 2 && a >= 1 &&
		   b >= 1 && a + b <= FARSWAP_MAX_DONORS && CHUNK_BYTES % a == 0) {
		s->k = a;
		s->m = b;
		s->w = a + b;
	} else {
		return -EINVAL;
	}
	snprintf(s->name, sizeof(s->name), "%s", arg);
	return 0;
}

static double gib(uint64_t bytes)
{
	return (double)bytes / GIB;
}

static void fmt_time(double s, char *buf, size_t len)
{
	if (s >= 3600)
		snprintf(buf, len, "%.1f h", s / 3600);
	else if (s >= 60)
		snprintf(buf, len, "%.1f min", s / 60);
	else
		snprintf(buf, len, "%.1f s", s);
}

/* The busiest donor's slabs over the mean of the live donors'. */
static double balance(const struct fleet *f)
{
	uint64_t sum = 0, max = 0;
	unsigned int i, n = 0;

	for (i = 0; i < f->o->donors; i++) {
		if (f->donors[i].dead)
			continue;
		sum += f->donors[i].slabs;
		if (f->donors[i].slabs > max)
			max = f->donors[i].slabs;
		n++;
	}
	return sum ? (double)max * n / sum : 0;
}

static void free_fleet(struct fleet *f)
{
	unsigned int hi, i;

	for (hi = 0; hi < f->o->hosts; hi++) {
		for (i = 0; i < f->hosts[hi].nslabs; i++)
			free(f->hosts[hi].slabs[i].map);
		free(f->hosts[hi].slabs);
		free(f->hosts[hi].members);
	}
	free(f->hosts);
	free(f->donors);
}

/* The donor holding the most slabs: the worst single loss. */
static unsigned int fullest(const struct fleet *f)
{
	unsigned int i, best = 0;

	for (i = 1; i < f->o->donors; i++)
		if (f->donors[i].slabs > f->donors[best].slabs)
			best = i;
	return best;
}

static void run(const struct options *o, const struct scheme *s)
{
	struct fleet f = { .o = o, .s = s, .rng = o->seed };
	uint64_t stored = (uint64_t)o->hosts * o->chunks * CHUNK_BYTES, groups;
	uint64_t lent = 0, used = 0;
	struct loss one = { 0 }, dom = { 0 };
	unsigned int i, hi, lost_dom, first;
	char t1[32], t2[32];
	double ratio, bal;
	uint64_t col, col2;
	unsigned int spread;

	f.member_bytes = CHUNK_BYTES / s->k;
	f.slots_per_slab = (uint64_t)o->slab_mb * MIB / f.member_bytes;
	f.donors = xcalloc(o->donors, sizeof(*f.donors));
	f.hosts = xcalloc(o->hosts, sizeof(*f.hosts));
	for (i = 0; i < o->donors; i++) {
		f.donors[i].domain = i % o->domains;
		f.donors[i].cap = (uint64_t)o->donor_gb * GIB / ((uint64_t)o->slab_mb * MIB);
	}
	groups = (uint64_t)o->hosts * o->chunks;
	if (fill(&f)) {
		printf("%-11s the fleet has no room: %.0f GiB lent for %.0f GiB stored at x%.2f\n",
		       s->name, gib((uint64_t)o->donors * o->donor_gb * GIB),
		       gib(stored), (double)s->w / s->k);
		check(o, false, "%s: every chunk placed", s->name);
		free_fleet(&f);
		return;
	}
	for (i = 0; i < o->donors; i++)
		lent += (uint64_t)f.donors[i].slabs * o->slab_mb * MIB;
	for (hi = 0; hi < o->hosts; hi++)
		for (i = 0; i < f.hosts[hi].nslabs; i++)
			used += (uint64_t)f.hosts[hi].slabs[i].slots.used * f.member_bytes;
	ratio = (double)lent / stored;
	bal = balance(&f);
	col = count_groups(&f, group_colocated);
	check(o, count_groups(&f, group_whole) == groups, "%s: every chunk has %u members on distinct live donors",
	      s->name, s->w);
	check(o, used == stored * s->w / s->k,
	      "%s: the members hold x%.3f the data (x%.3f expected)", s->name,
	      (double)used / stored, (double)s->w / s->k);
	check(o, col == 0 || o->view < s->w || o->domains < s->w,
	      "%s: %" PRIu64 " chunks with two members in one domain (views span %u domains)",
	      s->name, col, o->view < o->domains ? o->view : o->domains);

	/* One donor, the fullest, is lost. */
	first = fullest(&f);
	f.donors[first].dead = true;
	one.donors_lost = 1;
	reprotect(&f, &one);
	check(o, one.lost_pages == 0, "%s: one donor lost: %" PRIu64 " pages lost",
	      s->name, one.lost_pages);
	check(o, one.unplaced == 0 && count_groups(&f, group_whole) == groups - one.lost_groups,
	      "%s: one donor lost: every chunk not lost whole again (%" PRIu64 " members had no room)",
	      s->name, one.unplaced);

	/* Then a whole failure domain. */
	lost_dom = f.donors[first].domain;
	for (i = 0; i < o->donors; i++) {
		if (f.donors[i].domain == lost_dom && !f.donors[i].dead) {
			f.donors[i].dead = true;
			dom.donors_lost++;
		}
	}
	reprotect(&f, &dom);
	check(o, dom.lost_pages == 0 || col > 0,
	      "%s: a domain lost: %" PRIu64 " pages lost, %" PRIu64 " chunks were colocated",
	      s->name, dom.lost_pages, col);
	check(o, dom.unplaced == 0 &&
	      count_groups(&f, group_whole) == groups - one.lost_groups - dom.lost_groups,
	      "%s: a domain lost: every chunk not lost whole again (%" PRIu64 " members had no room)",
	      s->name, dom.unplaced);
	/* Re-protection keeps the members' domains apart where it can. */
	spread = (o->view < o->domains ? o->view : o->domains) - 1;
	col2 = count_groups(&f, group_colocated);
	check(o, col2 == 0 || spread < s->w,
	      "%s: after both losses %" PRIu64 " chunks with two members in one domain (%u domains left)",
	      s->name, col2, spread);

	fmt_time(one.host_s > one.link_s ? one.host_s : one.link_s, t1, sizeof(t1));
	fmt_time(dom.host_s > dom.link_s ? dom.host_s : dom.link_s, t2, sizeof(t2));
	printf("%-11s %6.2f %7.2f %9.2f %10" PRIu64 " | %9.1f %8s %6" PRIu64 " | %3u %9.1f %8s %6" PRIu64 "\n",
	       s->name, (double)s->w / s->k, ratio, bal, col,
	       gib(one.bytes_moved), t1, one.lost_pages,
	       dom.donors_lost, gib(dom.bytes_moved), t2, dom.lost_pages);
	free_fleet(&f);
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: fleetsim [options] SCHEME...\n"
		"  SCHEME: replicas:R or ec:K+M (members on distinct donors, at most %d)\n"
		"  --hosts N        hosts, each with one swap device (1000)\n"
		"  --donors N       donors in the fleet (1000)\n"
		"  --domains N      failure domains; donor i is in domain i %% N (50)\n"
		"  --view N         donors each host is given, at most %d (16)\n"
		"  --chunks N       2 MiB chunks each host stores (2048: 4 GiB)\n"
		"  --slab-mb N      slab size, MiB (1024, farswapd's default)\n"
		"  --donor-gb N     GiB each donor lends (32)\n"
		"  --repair-kbps N  each host's re-protection rate (32768, farswap.ko's default)\n"
		"  --link-gbps N    each donor's link, Gbit/s (25)\n"
		"  --seed N         random seed (1)\n"
		"  --check          print each invariant as TAP; exit 1 if one fails\n",
		FARSWAP_MAX_DONORS, FARSWAP_MAX_DONORS);
}

static unsigned int num(const char *opt, const char *arg, unsigned int min,
			unsigned int max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > max) {
		fprintf(stderr, "fleetsim: %s: '%s' is not a number from %u to %u\n",
			opt, arg, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hosts", required_argument, NULL, 'H' },
		{ "donors", required_argument, NULL, 'D' },
		{ "domains", required_argument, NULL, 'd' },
		{ "view", required_argument, NULL, 'v' },
		{ "chunks", required_argument, NULL, 'c' },
		{ "slab-mb", required_argument, NULL, 's' },
		{ "donor-gb", required_argument, NULL, 'g' },
		{ "repair-kbps", required_argument, NULL, 'r' },
		{ "link-gbps", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 'S' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct options o = {
		.hosts = 1000, .donors = 1000, .domains = 50, .view = 16,
		.chunks = 2048, .slab_mb = 1024, .donor_gb = 32,
		.repair_kbps = 32768, .link_gbps = 25, .seed = 1,
	};
	struct scheme s[8];
	int c, i, n = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': o.hosts = num("--hosts", optarg, 1, 1000000); break;
		case 'D': o.donors = num("--donors", optarg, 1, 1000000); break;
		case 'd': o.domains = num("--domains", optarg, 1, 1000000); break;
		case 'v': o.view = num("--view", optarg, 1, FARSWAP_MAX_DONORS); break;
		case 'c': o.chunks = num("--chunks", optarg, 1, 1u << 24); break;
		case 's': o.slab_mb = num("--slab-mb", optarg, 2, 1u << 20); break;
		case 'g': o.donor_gb = num("--donor-gb", optarg, 1, 1u << 20); break;
		case 'r': o.repair_kbps = num("--repair-kbps", optarg, 0, UINT32_MAX); break;
		case 'l': o.link_gbps = num("--link-gbps", optarg, 1, 100000); break;
		case 'S': o.seed = num("--seed", optarg, 0, UINT32_MAX); break;
		case 'C': o.check = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		if (n == (int)(sizeof(s) / sizeof(s[0])) || parse_scheme(argv[i], &s[n])) {
			fprintf(stderr, "fleetsim: '%s' is not replicas:R or ec:K+M (K divides 2 MiB, at most %d members), or too many schemes\n",
				argv[i], FARSWAP_MAX_DONORS);
			return 2;
		}
		if (s[n].w > o.view) {
			fprintf(stderr, "fleetsim: %s needs %u donors per host, --view is %u\n",
				argv[i], s[n].w, o.view);
			return 2;
		}
		n++;
	}
	if (o.domains > o.donors || o.donors % o.domains || o.view > o.donors) {
		fprintf(stderr, "fleetsim: --donors must be a multiple of --domains, and at least --view\n");
		return 2;
	}
	if ((uint64_t)o.slab_mb * MIB < CHUNK_BYTES || (o.slab_mb & (o.slab_mb - 1))) {
		fprintf(stderr, "fleetsim: --slab-mb must be a power of two of at least 2\n");
		return 2;
	}
	printf("# %u hosts x %u MiB stored, %u donors x %u GiB lent in %u domains, %u donors per host, slabs of %u MiB, seed %" PRIu64 "\n",
	       o.hosts, (unsigned int)(o.chunks * CHUNK_BYTES / MIB), o.donors, o.donor_gb,
	       o.domains, o.view, o.slab_mb, o.seed);
	printf("# re-protection: %u KiB/s read per host, %u Gbit/s per donor link; first the fullest donor is lost, then its whole domain\n",
	       o.repair_kbps, o.link_gbps);
	printf("%-11s %6s %7s %9s %10s | %9s %8s %6s | %3s %9s %8s %6s\n",
	       "#scheme", "x/page", "lent/pg", "max/mean", "colocated",
	       "moved GiB", "time", "lost", "dom", "moved GiB", "time", "lost");
	for (i = 0; i < n; i++)
		run(&o, &s[i]);
	if (o.check)
		printf("1..%d\n", checks);
	return failures ? 1 : 0;
}
