// SPDX-License-Identifier: GPL-2.0
/*
 * farswapd's command line: --help, the options and the flags that
 * override config keys, applied after the config file is read.  Every
 * key of fsd_keys[] (config.c) is a long option of its name, so the
 * options, their --help and the setter they go through come from the
 * key table: a new key is a new flag without a line here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"

/* Options that are not config keys; their values start after the keys'. */
enum {
	OPT_STATS = 256, OPT_CHECK, OPT_VERSION, OPT_JSON, OPT_DRAIN,
	OPT_UNDRAIN, OPT_WAIT, OPT_TIMEOUT, OPT_CHECK_AS,
	OPT_UNLESS_RESTARTING, OPT_RESTART, OPT_GEN_KEY,
	OPT_KEY,	/* OPT_KEY + i: fsd_keys[i] */
};

static const struct option other_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "drain", no_argument, NULL, OPT_DRAIN },
	{ "undrain", no_argument, NULL, OPT_UNDRAIN },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "check-as", required_argument, NULL, OPT_CHECK_AS },
	{ "unless-restarting", no_argument, NULL, OPT_UNLESS_RESTARTING },
	{ "restart", no_argument, NULL, OPT_RESTART },
	{ "gen-key", no_argument, NULL, OPT_GEN_KEY },
};

#define NR_OTHER_OPTS (sizeof(other_opts) / sizeof(other_opts[0]))

/* --help: this, a paragraph per key (fsd_keys[]), then the rest. */
static const char usage_head[] =
	"Usage: farswapd [OPTIONS]\n"
	"       farswapd --stats [--json] [--stats-socket PATH]\n"
	"       farswapd --drain [--wait [--timeout DUR]] [--unless-restarting]\n"
	"       farswapd --undrain | --restart\n"
	"       farswapd --check-config [--check-as USER] [OPTIONS]\n"
	"       farswapd --gen-key [FILE]\n"
	"\n"
	"Donate this machine's idle DRAM to farswap hosts over RDMA.\n"
	"\n";

static const char usage_tail[] =
	"  -c, --config PATH            config file (default " FSD_CONFIG_PATH ")\n"
	"  -v, --verbose                more log output (repeatable)\n"
	"      --stats                  print a running daemon's stats and exit\n"
	"      --json                   with --stats: as JSON\n"
	"      --drain                  tell the running daemon to drain: grant no\n"
	"                               slab, ask every host for its slabs back\n"
	"                               (never revoked)\n"
	"      --wait                   with --drain: until no host holds a slab\n"
	"                               here (exit 0: safe to stop)\n"
	"      --timeout DUR            with --wait: give up after DUR (exit 1)\n"
	"      --unless-restarting      with --drain: do nothing (exit 0) when\n"
	"                               systemd is restarting farswapd.service,\n"
	"                               whose pool outlives the restart (the\n"
	"                               unit's ExecStop)\n"
	"      --undrain                tell the running daemon to grant again\n"
	"      --restart                tell the running daemon to restart in\n"
	"                               place, keeping the hosts' slabs (as\n"
	"                               SIGUSR2 does; without systemd)\n"
	"      --check-config           print the effective configuration, run the\n"
	"                               checks a start runs, and exit (1: it would\n"
	"                               not start)\n"
	"      --check-as USER          with --check-config: check the key files as\n"
	"                               USER (the unit's User=; as root, farswap\n"
	"                               when that user exists)\n"
	"      --gen-key [FILE]         make a key (key-file, host-keys): to a new\n"
	"                               FILE, mode 0600, never over an existing\n"
	"                               one; without FILE, print it\n"
	"      --version                print the protocol versions and exit\n"
	"  -h, --help                   this text\n"
	"\n"
	"SIZE takes K, M, G, T suffixes (powers of 1024).  DUR takes ms, s, m\n"
	"suffixes; a bare number is seconds.  Every long option is also a config\n"
	"file key (KEY=VALUE or 'KEY VALUE' lines, # comments).  SIGUSR1 logs the\n"
	"stats, SIGHUP re-reads the config file, SIGTERM frees everything and exits.\n";

/* The help column: options longer than fits put their text below. */
#define USAGE_COL 31

void fsd_usage(FILE *out)
{
	size_t i;

	fputs(usage_head, out);
	for (i = 0; i < fsd_nr_keys; i++) {
		const struct fsd_key *k = &fsd_keys[i];
		const char *h = k->help;
		char opt[80];
		int n;

		if (k->short_opt)
			n = snprintf(opt, sizeof(opt), "  -%c, --%s",
				     k->short_opt, k->name);
		else
			n = snprintf(opt, sizeof(opt), "      --%s", k->name);
		if (k->arg)
			n += snprintf(opt + n, sizeof(opt) - (size_t)n, " %s",
				      k->arg);
		if (n <= USAGE_COL - 2)
			fprintf(out, "%-*s", USAGE_COL, opt);
		else
			fprintf(out, "%s\n%*s", opt, USAGE_COL, "");
		while (*h) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%.*s\n", (int)len, h);
			h += len;
			if (*h) {
				h++;
				fprintf(out, "%*s", USAGE_COL, "");
			}
		}
	}
	fputs(usage_tail, out);
}

/*
 * Collect the command line: the action, the config path and the flags
 * that override config keys (applied after the file is read).  Every
 * key is a long option of its name; a key with a short option has it
 * too.
 */
int fsd_parse_args(int argc, char **argv, struct fsd_args *a, char *err,
		   size_t errlen)
{
	struct option opts[FSD_MAX_KEYS + NR_OTHER_OPTS + 1];
	char shorts[2 * FSD_MAX_KEYS + 8];
	size_t i, ns = 0;
	int opt, idx;

	memset(opts, 0, sizeof(opts));
	shorts[ns++] = ':';	/* a missing value is ':', not '?' */
	for (i = 0; i < fsd_nr_keys; i++) {
		opts[i].name = fsd_keys[i].name;
		opts[i].has_arg = fsd_keys[i].arg ? required_argument :
						    no_argument;
		opts[i].val = OPT_KEY + (int)i;
		if (fsd_keys[i].short_opt) {
			shorts[ns++] = fsd_keys[i].short_opt;
			shorts[ns++] = ':';
		}
	}
	memcpy(opts + fsd_nr_keys, other_opts, sizeof(other_opts));
	memcpy(shorts + ns, "c:vh", sizeof("c:vh"));

	memset(a, 0, sizeof(*a));
	a->action = FSD_ACT_RUN;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, opts, &idx)) != -1) {
		const struct fsd_key *k = NULL;
		const char *val = optarg;

		switch (opt) {
		case 'h':
			a->action = FSD_ACT_HELP;
			return 0;
		case 'v':
			a->verbose++;
			continue;
		case 'c':
			a->config_path = optarg;
			continue;
		case OPT_STATS:
			a->action = FSD_ACT_STATS;
			continue;
		case OPT_CHECK:
			a->action = FSD_ACT_CHECK;
			continue;
		case OPT_VERSION:
			a->action = FSD_ACT_VERSION;
			continue;
		case OPT_JSON:
			a->json = true;
			continue;
		case OPT_DRAIN:
			a->action = FSD_ACT_DRAIN;
			continue;
		case OPT_UNDRAIN:
			a->action = FSD_ACT_UNDRAIN;
			continue;
		case OPT_WAIT:
			a->wait = true;
			continue;
		case OPT_TIMEOUT:
			if (fsd_parse_duration_ms(optarg, &a->timeout_ms)) {
				snprintf(err, errlen,
					 "--timeout: bad duration '%s' (ms, s, m)",
					 optarg);
				return -EINVAL;
			}
			continue;
		case OPT_CHECK_AS:
			a->check_as = optarg;
			continue;
		case OPT_UNLESS_RESTARTING:
			a->unless_restarting = true;
			continue;
		case OPT_RESTART:
			a->action = FSD_ACT_RESTART;
			continue;
		case OPT_GEN_KEY:
			a->action = FSD_ACT_GEN_KEY;
			continue;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value",
				 argv[optind - 1]);
			return -EINVAL;
		case '?':
			snprintf(err, errlen, "unknown option '%s' (see --help)",
				 argv[optind - 1]);
			return -EINVAL;
		default:
			break;
		}
		if (opt >= OPT_KEY) {
			k = &fsd_keys[opt - OPT_KEY];
		} else {
			for (i = 0; i < fsd_nr_keys; i++)
				if (fsd_keys[i].short_opt == opt)
					k = &fsd_keys[i];
		}
		if (!k)
			continue;	/* not reached: every option is above */
		if (!k->arg)
			val = "yes";
		if (a->nr >= FSD_MAX_OVERRIDES) {
			snprintf(err, errlen, "too many options");
			return -E2BIG;
		}
		a->kv[a->nr].key = k->name;
		a->kv[a->nr].val = val;
		a->nr++;
	}
	/* --gen-key's FILE is the one operand farswapd takes. */
	if (a->action == FSD_ACT_GEN_KEY && optind < argc)
		a->gen_key_path = argv[optind++];
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)",
			 argv[optind]);
		return -EINVAL;
	}
	if ((a->wait || a->timeout_ms) && a->action != FSD_ACT_DRAIN) {
		snprintf(err, errlen, "--wait and --timeout go with --drain");
		return -EINVAL;
	}
	if (a->unless_restarting && a->action != FSD_ACT_DRAIN) {
		snprintf(err, errlen, "--unless-restarting goes with --drain");
		return -EINVAL;
	}
	if (a->timeout_ms && !a->wait) {
		snprintf(err, errlen, "--timeout needs --wait");
		return -EINVAL;
	}
	if (a->check_as && a->action != FSD_ACT_CHECK) {
		snprintf(err, errlen, "--check-as goes with --check-config");
		return -EINVAL;
	}
	return 0;
}

int fsd_config_apply_args(struct fsd_config *c, const struct fsd_args *a,
			  char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	for (i = 0; i < a->nr; i++) {
		ret = fsd_config_set(c, a->kv[i].key, a->kv[i].val, err,
				     errlen);
		if (ret)
			return ret;
	}
	if (a->verbose) {
		c->log_level += a->verbose;
		if (c->log_level > FSD_LOG_DEBUG)
			c->log_level = FSD_LOG_DEBUG;
	}
	return 0;
}
