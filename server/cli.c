/* SPDX-License-Identifier: AGPL-3.0-only */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: splitkd [options]\n"
	"\n"
	"Serves the paged-decode attention split-K policy over HTTP/JSON.\n"
	"\n"
	"  --listen HOST:PORT        address to serve on (default 127.0.0.1:8080;\n"
	"                            port 0 picks a free port; [::1]:8080 for IPv6)\n"
	"  --catalog FILE            targets and models (default: the embedded catalog)\n"
	"  --threads N               worker threads (default: the number of CPUs)\n"
	"  --check-catalog FILE      validate FILE and exit 0 (valid) or 1 (not)\n"
	"  --dump-catalog            print the catalog in use as JSON and exit\n"
	"  --max-connections N       open connections at most (default 1024)\n"
	"  --max-client-connections N  per client address (default 0: no limit)\n"
	"  --idle-timeout SECONDS    close idle connections (default 30)\n"
	"  --max-body BYTES          request body limit (default 1048576)\n"
	"  --max-header BYTES        request line + headers limit (default 4096)\n"
	"  --drain-timeout SECONDS   on SIGTERM, wait this long for requests (default 10)\n"
	"  --log-format text|json    log line format on stderr (default text)\n"
	"  --access-log on|off       one line per request (default on)\n"
	"  --version                 print the version and exit\n"
	"  --help                    print this help and exit\n"
	"\n"
	"Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP reloads --catalog FILE.\n";

const char *cli_usage(void)
{
	return usage;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9') {
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max) {
		return -1;
	}
	*out = v;
	return 0;
}

/* HOST:PORT, [V6]:PORT. */
static int parse_listen(const char *s, struct server_config *cfg)
{
	const char *colon, *host = s;
	size_t host_len;
	unsigned long long port;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':') {
			return -1;
		}
		host = s + 1;
		host_len = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL) {
			return -1;
		}
		host_len = (size_t)(colon - s);
	}
	if (host_len == 0 || host_len >= sizeof(cfg->host) || parse_uint(colon + 1, 65535, &port) != 0) {
		return -1;
	}
	memcpy(cfg->host, host, host_len);
	cfg->host[host_len] = '\0';
	cfg->port = (unsigned)port;
	return 0;
}

enum {
	OPT_LISTEN = 256,
	OPT_CATALOG,
	OPT_THREADS,
	OPT_CHECK,
	OPT_DUMP,
	OPT_MAX_CONN,
	OPT_MAX_CLIENT,
	OPT_IDLE,
	OPT_MAX_BODY,
	OPT_MAX_HEADER,
	OPT_DRAIN,
	OPT_LOG_FORMAT,
	OPT_ACCESS_LOG,
	OPT_VERSION,
	OPT_HELP,
};

int cli_parse(int argc, char **argv, struct server_config *cfg, char *err, size_t err_cap)
{
	static const struct option options[] = {
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"catalog", required_argument, NULL, OPT_CATALOG},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"check-catalog", required_argument, NULL, OPT_CHECK},
		{"dump-catalog", no_argument, NULL, OPT_DUMP},
		{"max-connections", required_argument, NULL, OPT_MAX_CONN},
		{"max-client-connections", required_argument, NULL, OPT_MAX_CLIENT},
		{"idle-timeout", required_argument, NULL, OPT_IDLE},
		{"max-body", required_argument, NULL, OPT_MAX_BODY},
		{"max-header", required_argument, NULL, OPT_MAX_HEADER},
		{"drain-timeout", required_argument, NULL, OPT_DRAIN},
		{"log-format", required_argument, NULL, OPT_LOG_FORMAT},
		{"access-log", required_argument, NULL, OPT_ACCESS_LOG},
		{"version", no_argument, NULL, OPT_VERSION},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long v;
	int opt;

	memset(cfg, 0, sizeof(*cfg));
	cfg->action = CLI_SERVE;
	snprintf(cfg->host, sizeof(cfg->host), "127.0.0.1");
	cfg->port = 8080;
	cfg->threads = cpus > 0 && cpus < 256 ? (unsigned)cpus : 2;
	cfg->max_connections = 1024;
	cfg->idle_timeout = 30;
	cfg->max_body = 1u << 20;
	cfg->max_header = 4096;
	cfg->drain_timeout = 10;
	cfg->log_format = CLI_LOG_TEXT;
	cfg->access_log = true;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
		const char *a = optarg;

		switch (opt) {
		case OPT_LISTEN:
			if (parse_listen(a, cfg) != 0) {
				snprintf(err, err_cap, "--listen takes HOST:PORT (port 0-65535), not \"%s\"", a);
				return -1;
			}
			break;
		case OPT_CATALOG:
			cfg->catalog_path = a;
			break;
		case OPT_CHECK:
			cfg->action = CLI_CHECK_CATALOG;
			cfg->check_path = a;
			break;
		case OPT_DUMP:
			cfg->action = CLI_DUMP_CATALOG;
			break;
		case OPT_VERSION:
			cfg->action = CLI_VERSION;
			break;
		case OPT_HELP:
			cfg->action = CLI_HELP;
			break;
		case OPT_THREADS:
		case OPT_MAX_CONN:
		case OPT_MAX_CLIENT:
		case OPT_IDLE:
		case OPT_DRAIN: {
			/* each has its own sane range */
			unsigned long long lo = opt == OPT_MAX_CLIENT ? 0 : 1;
			unsigned long long hi = opt == OPT_THREADS ? 256 : opt == OPT_IDLE || opt == OPT_DRAIN ? 3600 : 1000000;

			if (parse_uint(a, hi, &v) != 0 || v < lo) {
				snprintf(err, err_cap, "%s takes a whole number from %llu to %llu, not \"%s\"",
					 argv[optind - 1], lo, hi, a);
				return -1;
			}
			if (opt == OPT_THREADS) {
				cfg->threads = (unsigned)v;
			} else if (opt == OPT_MAX_CONN) {
				cfg->max_connections = (unsigned)v;
			} else if (opt == OPT_MAX_CLIENT) {
				cfg->per_client_connections = (unsigned)v;
			} else if (opt == OPT_IDLE) {
				cfg->idle_timeout = (unsigned)v;
			} else {
				cfg->drain_timeout = (unsigned)v;
			}
			break;
		}
		case OPT_MAX_BODY:
		case OPT_MAX_HEADER: {
			unsigned long long lo = opt == OPT_MAX_BODY ? 1024 : 2048;
			unsigned long long hi = opt == OPT_MAX_BODY ? (64ull << 20) : (1ull << 20);

			if (parse_uint(a, hi, &v) != 0 || v < lo) {
				snprintf(err, err_cap, "%s takes a byte count from %llu to %llu, not \"%s\"",
					 argv[optind - 1], lo, hi, a);
				return -1;
			}
			if (opt == OPT_MAX_BODY) {
				cfg->max_body = (size_t)v;
			} else {
				cfg->max_header = (size_t)v;
			}
			break;
		}
		case OPT_LOG_FORMAT:
			if (strcmp(a, "text") == 0) {
				cfg->log_format = CLI_LOG_TEXT;
			} else if (strcmp(a, "json") == 0) {
				cfg->log_format = CLI_LOG_JSON;
			} else {
				snprintf(err, err_cap, "--log-format takes text or json, not \"%s\"", a);
				return -1;
			}
			break;
		case OPT_ACCESS_LOG:
			if (strcmp(a, "on") == 0 || strcmp(a, "off") == 0) {
				cfg->access_log = strcmp(a, "on") == 0;
			} else {
				snprintf(err, err_cap, "--access-log takes on or off, not \"%s\"", a);
				return -1;
			}
			break;
		case ':':
			snprintf(err, err_cap, "%s needs a value", argv[optind - 1]);
			return -1;
		default:
			snprintf(err, err_cap, "unknown option \"%s\" (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, err_cap, "unexpected argument \"%s\" (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}
