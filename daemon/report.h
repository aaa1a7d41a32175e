/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The donor's stats as text (farswapd --stats, SIGUSR1), as JSON
 * (farswapd --stats --json, docs/json.md) and as Prometheus metrics
 * (--metrics-file, docs/metrics.md): the same numbers under the same
 * names.
 */
#ifndef FSD_REPORT_H
#define FSD_REPORT_H

#include "donor.h"
#include "json.h"
#include "metrics.h"

/* The text into @buf: its length, or -ENOSPC when it does not fit. */
int fsd_donor_stats(const struct fsd_donor *d, char *buf, size_t len);
void fsd_donor_json(const struct fsd_donor *d, struct fsj *j);
void fsd_donor_metrics(const struct fsd_donor *d, struct fsm *m);

/* Either of the above into a malloc'ed string; NULL on failure. */
char *fsd_donor_json_text(const struct fsd_donor *d, size_t *len);
char *fsd_donor_metrics_text(const struct fsd_donor *d, size_t *len);

#endif /* FSD_REPORT_H */
