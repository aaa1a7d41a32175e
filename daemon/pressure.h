/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory pressure: reading /proc/meminfo and /proc/pressure/memory, and
 * the policy deciding how many slabs to give back.  The policy functions
 * are pure (unit-tested in tests/unit/test_pressure.c).
 */
#ifndef FSD_PRESSURE_H
#define FSD_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>

struct fsd_meminfo {
	uint64_t mem_total;	/* bytes */
	uint64_t mem_available;	/* bytes */
	uint64_t pcp_free;	/* bytes on per-CPU free lists (not in MemAvailable) */
	unsigned int psi_some_avg10;	/* 1/100 % */
	bool psi_valid;
	bool pcp_valid;
};

int fsd_parse_meminfo(const char *text, struct fsd_meminfo *mi);
int fsd_parse_psi(const char *text, unsigned int *some_avg10);
int fsd_read_meminfo(const char *meminfo_path, const char *psi_path,
		     struct fsd_meminfo *mi);
int fsd_pcp_line(const char *line, uint64_t *pages);
int fsd_parse_pcp(const char *text, uint64_t *pages);
int fsd_read_pcp(const char *zoneinfo_path, uint64_t page_size,
		 uint64_t *bytes);

struct fsd_pressure_in {
	uint64_t mem_available;
	/*
	 * Free memory MemAvailable leaves out: pages on the per-CPU free
	 * lists, where the kernel (6.7 and later) parks freed memory, the
	 * slabs just given back included, for seconds before it counts them.
	 */
	uint64_t mem_hidden;
	uint64_t headroom;
	uint64_t hysteresis;
	uint64_t slab_size;
	unsigned int psi;		/* some avg10, 1/100 % */
	bool psi_valid;
	unsigned int psi_threshold;	/* 0: ignore PSI */
	bool was_under;
	uint32_t nr_free;		/* populated, nobody's */
	uint32_t nr_reclaiming;		/* reclaim requests in flight */
	uint32_t nr_revoking;		/* revoked, memory not back yet */
	uint32_t nr_reclaimable;	/* held, not being reclaimed */
	uint32_t nr_released;		/* given back to the OS */
};

struct fsd_pressure_out {
	bool under;		/* hand out no slabs (BUSY) */
	uint32_t release_free;	/* free slabs to give back to the OS now */
	uint32_t reclaim;	/* held slabs to ask hosts for */
	uint32_t revoke;	/* held slabs that may be revoked, if due */
	uint32_t repopulate;	/* released slabs to take back from the OS */
};

void fsd_pressure_decide(const struct fsd_pressure_in *in,
			 struct fsd_pressure_out *out);

/* One candidate host for reclaim requests. */
struct fsd_pressure_host {
	uint32_t reclaimable;	/* slabs it holds that can be asked for */
	uint32_t outstanding;	/* unsolicited messages in flight to it */
	uint32_t pick;		/* out: reclaim requests to send it */
};

uint32_t fsd_pressure_pick(struct fsd_pressure_host *hosts, unsigned int n,
			   uint32_t want, uint32_t max_outstanding);

#endif /* FSD_PRESSURE_H */
