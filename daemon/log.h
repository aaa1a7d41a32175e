/* SPDX-License-Identifier: GPL-2.0 */
/*
 * farswapd logging: one line per event on stderr, with a syslog priority
 * prefix ("<3>") when stderr is not a terminal, so journald files each
 * line at its level.
 */
#ifndef FSD_LOG_H
#define FSD_LOG_H

#include <stdbool.h>

#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif

enum fsd_log_level {
	FSD_LOG_ERR = 3,
	FSD_LOG_WARN = 4,
	FSD_LOG_NOTICE = 5,
	FSD_LOG_INFO = 6,
	FSD_LOG_DEBUG = 7,
};

void fsd_log_init(int level, bool force_prefix);
void fsd_log_set_level(int level);
int fsd_log_level(void);
int fsd_log_parse_level(const char *s);
const char *fsd_log_level_name(int level);

__printf(2, 3) void fsd_log(int level, const char *fmt, ...);
/* Tests: every line that passes the level goes to @hook, not stderr. */
void fsd_log_set_hook(void (*hook)(int level, const char *line));

#define pr_err(fmt, ...) fsd_log(FSD_LOG_ERR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) fsd_log(FSD_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_notice(fmt, ...) fsd_log(FSD_LOG_NOTICE, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) fsd_log(FSD_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) fsd_log(FSD_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif /* FSD_LOG_H */
