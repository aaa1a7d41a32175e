// SPDX-License-Identifier: GPL-2.0
/*
 * Memory pressure monitor and policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pressure.h"

/* "Key:   12345 kB" -> bytes; -ENOENT if the key is missing. */
static int meminfo_field(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(p + klen + 1, &end, 10);
			if (errno || end == p + klen + 1)
				return -EINVAL;
			while (*end == ' ')
				end++;
			if (!strncmp(end, "kB", 2)) {
				if (v > UINT64_MAX / 1024)
					return -ERANGE;
				v *= 1024;
			}
			*out = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int fsd_parse_meminfo(const char *text, struct fsd_meminfo *mi)
{
	int ret;

	ret = meminfo_field(text, "MemTotal", &mi->mem_total);
	if (ret)
		return ret;
	return meminfo_field(text, "MemAvailable", &mi->mem_available);
}

/* The "some" line's avg10 of /proc/pressure/memory, in 1/100 %. */
int fsd_parse_psi(const char *text, unsigned int *some_avg10)
{
	const char *p = strstr(text, "some ");
	unsigned int whole, frac = 0;
	const char *a;
	char *end;

	if (!p || (p != text && p[-1] != '\n'))
		return -ENOENT;
	a = strstr(p, "avg10=");
	if (!a || (strchr(p, '\n') && a > strchr(p, '\n')))
		return -EINVAL;
	a += 6;
	whole = (unsigned int)strtoul(a, &end, 10);
	if (end == a || whole > 100)
		return -EINVAL;
	if (*end == '.') {
		const char *f = end + 1;

		if (f[0] >= '0' && f[0] <= '9') {
			frac = (unsigned int)(f[0] - '0') * 10;
			if (f[1] >= '0' && f[1] <= '9')
				frac += (unsigned int)(f[1] - '0');
		}
	}
	*some_avg10 = whole * 100 + frac;
	return 0;
}

static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return 0;
}

int fsd_read_meminfo(const char *meminfo_path, const char *psi_path,
		     struct fsd_meminfo *mi)
{
	char buf[8192];
	int ret;

	memset(mi, 0, sizeof(*mi));
	ret = read_small(meminfo_path, buf, sizeof(buf));
	if (ret)
		return ret;
	ret = fsd_parse_meminfo(buf, mi);
	if (ret)
		return ret;
	if (psi_path && !read_small(psi_path, buf, sizeof(buf)) &&
	    !fsd_parse_psi(buf, &mi->psi_some_avg10))
		mi->psi_valid = true;
	return 0;
}

/*
 * One line of /proc/zoneinfo: the "count:" of a per-CPU pageset, in
 * pages.  Returns 1 and sets *pages for such a line, 0 for any other.
 */
int fsd_pcp_line(const char *line, uint64_t *pages)
{
	unsigned long long v;
	char *end;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "count:", 6))
		return 0;
	line += 6;
	errno = 0;
	v = strtoull(line, &end, 10);
	if (errno || end == line)
		return 0;
	*pages = v;
	return 1;
}

/* Sum of the per-CPU pagesets' counts of /proc/zoneinfo text, in pages. */
int fsd_parse_pcp(const char *text, uint64_t *pages)
{
	const char *p = text;
	uint64_t sum = 0, v;
	bool seen = false;

	while (p && *p) {
		if (fsd_pcp_line(p, &v)) {
			sum += v;
			seen = true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!seen)
		return -ENOENT;
	*pages = sum;
	return 0;
}

/*
 * Bytes of free memory parked on per-CPU lists, from /proc/zoneinfo
 * (which can be long: one pageset per CPU and zone, so read by lines).
 */
int fsd_read_pcp(const char *zoneinfo_path, uint64_t page_size,
		 uint64_t *bytes)
{
	uint64_t sum = 0, v;
	bool seen = false;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	f = fopen(zoneinfo_path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (fsd_pcp_line(line, &v)) {
			sum += v;
			seen = true;
		}
	}
	free(line);
	fclose(f);
	if (!seen)
		return -ENOENT;
	*bytes = sum * page_size;
	return 0;
}

static uint32_t min_u32(uint64_t a, uint64_t b)
{
	uint64_t m = a < b ? a : b;

	return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

/*
 * Pressure starts when the available memory drops below the headroom (or
 * when PSI reports stalls while it is within the hysteresis band), and
 * ends only once it is back above headroom + hysteresis.  Available is
 * MemAvailable plus the free pages it does not count yet (mem_hidden):
 * memory given back a moment ago is available to the kernel at once but
 * shows in MemAvailable only seconds later, and asking hosts for more
 * meanwhile would take slabs nobody needs.
 *
 * Under pressure, free the deficit in whole slabs: first slabs nobody
 * holds (it costs no host anything), then ask hosts for held ones,
 * counting requests not yet answered as on their way.  So while memory
 * use grows, each check asks only for what the growth added, and the
 * total converges on the shortfall.  Revoking is bounded the same way:
 * at most the held slabs the deficit needs, less those revoked whose
 * memory is not back yet (a request still unanswered may be the one
 * revoked, so those do not count against it).  Within the hysteresis
 * band nothing is revoked: the deficit is gone.  Out of pressure, take
 * back released slabs as long as the available memory stays above
 * headroom + hysteresis afterwards, so repopulating never causes the
 * next pressure episode by itself.
 */
void fsd_pressure_decide(const struct fsd_pressure_in *in,
			 struct fsd_pressure_out *out)
{
	uint64_t high = in->headroom + in->hysteresis;
	uint64_t slab = in->slab_size ? in->slab_size : 1;
	uint64_t avail = in->mem_available + in->mem_hidden;
	bool low, psi_hit;
	uint64_t deficit = 0, needed, rest;

	if (avail < in->mem_available)
		avail = UINT64_MAX;
	low = avail < in->headroom;
	psi_hit = in->psi_threshold && in->psi_valid &&
		  in->psi >= in->psi_threshold && avail < high;
	memset(out, 0, sizeof(*out));
	if (low)
		deficit = in->headroom - avail;
	else if (psi_hit)
		deficit = high - avail;
	out->under = low || psi_hit || (in->was_under && avail < high);

	if (deficit) {
		needed = (deficit + slab - 1) / slab;
		out->release_free = min_u32(needed, in->nr_free);
		rest = needed - out->release_free;
		rest = rest > in->nr_revoking ? rest - in->nr_revoking : 0;
		out->revoke = min_u32(rest, UINT32_MAX);
		rest = rest > in->nr_reclaiming ? rest - in->nr_reclaiming : 0;
		out->reclaim = min_u32(rest, in->nr_reclaimable);
		return;
	}
	if (!out->under && avail > high)
		out->repopulate = min_u32((avail - high) / slab,
					  in->nr_released);
}

/*
 * Spread @want reclaim requests over @hosts, one at a time to whichever
 * host holds the most slabs not yet asked for, never taking a host past
 * @max_outstanding unsolicited messages.  Ties go to the earlier host.
 * Returns the number of requests placed.
 */
uint32_t fsd_pressure_pick(struct fsd_pressure_host *hosts, unsigned int n,
			   uint32_t want, uint32_t max_outstanding)
{
	uint32_t placed = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		hosts[i].pick = 0;
	while (placed < want) {
		struct fsd_pressure_host *best = NULL;

		for (i = 0; i < n; i++) {
			struct fsd_pressure_host *h = &hosts[i];

			if (h->pick >= h->reclaimable ||
			    h->outstanding + h->pick >= max_outstanding)
				continue;
			if (!best || h->reclaimable - h->pick >
					     best->reclaimable - best->pick)
				best = h;
		}
		if (!best)
			break;
		best->pick++;
		placed++;
	}
	return placed;
}
