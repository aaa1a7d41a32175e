/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus text exposition format (version 0.0.4, what node_exporter's
 * textfile collector reads): metric families, each announced by one
 * "# HELP" and one "# TYPE" line before its first sample, label values
 * escaped, and a file written so that a reader never sees half of it.
 */
#ifndef FSM_METRICS_H
#define FSM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fsm_type {
	FSM_COUNTER,
	FSM_GAUGE,
};

struct fsm_label {
	const char *name;
	const char *value;
};

struct fsm {
	char *buf;
	size_t len;
	size_t cap;
	bool failed;
	/* The family samples go to; its header is written with the first. */
	const char *family;
	enum fsm_type type;
	const char *help;
	bool header_done;
};

void fsm_init(struct fsm *m);
void fsm_free(struct fsm *m);

/* Start a family: the samples that follow are @name's. */
void fsm_family(struct fsm *m, const char *name, enum fsm_type type,
		const char *help);
void fsm_u64(struct fsm *m, const struct fsm_label *labels, size_t nr,
	     uint64_t v);
void fsm_double(struct fsm *m, const struct fsm_label *labels, size_t nr,
		double v);

/* The text, or NULL after an error (bad name, out of memory). */
const char *fsm_finish(struct fsm *m, size_t *len);

/*
 * Replace @path with @text atomically: write a temporary file beside it
 * (a name node_exporter ignores: it reads only *.prom), then rename.
 */
int fsm_write_file(const char *path, const char *text, size_t len,
		   char *err, size_t errlen);

#endif /* FSM_METRICS_H */
