// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd logging.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

static int log_level = FSD_LOG_INFO;
static bool log_prefix;
static void (*log_hook)(int level, const char *line);

static const char *const level_names[] = {
	[FSD_LOG_ERR] = "error",   [FSD_LOG_WARN] = "warning",
	[FSD_LOG_NOTICE] = "notice", [FSD_LOG_INFO] = "info",
	[FSD_LOG_DEBUG] = "debug",
};

void fsd_log_init(int level, bool force_prefix)
{
	log_level = level;
	log_prefix = force_prefix || !isatty(STDERR_FILENO);
}

void fsd_log_set_hook(void (*hook)(int level, const char *line))
{
	log_hook = hook;
}

void fsd_log_set_level(int level)
{
	log_level = level;
}

int fsd_log_level(void)
{
	return log_level;
}

const char *fsd_log_level_name(int level)
{
	if (level < FSD_LOG_ERR || level > FSD_LOG_DEBUG)
		return "unknown";
	return level_names[level];
}

/* "error", "warning", "notice", "info", "debug" or a digit 3..7; -1 if bad. */
int fsd_log_parse_level(const char *s)
{
	int i;

	if (s[0] >= '3' && s[0] <= '7' && !s[1])
		return s[0] - '0';
	for (i = FSD_LOG_ERR; i <= FSD_LOG_DEBUG; i++)
		if (!strcasecmp(s, level_names[i]))
			return i;
	if (!strcasecmp(s, "warn") || !strcasecmp(s, "err"))
		return s[0] == 'w' || s[0] == 'W' ? FSD_LOG_WARN : FSD_LOG_ERR;
	return -1;
}

void fsd_log(int level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (log_hook) {
		log_hook(level, line);
		return;
	}
	/* One write per line, so concurrent writers never interleave. */
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", level, line);
	else if (level <= FSD_LOG_WARN)
		fprintf(stderr, "farswapd: %s: %s\n", level_names[level], line);
	else
		fprintf(stderr, "farswapd: %s\n", line);
}
