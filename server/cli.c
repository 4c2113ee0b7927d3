/* SPDX-License-Identifier: AGPL-3.0-only */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "names.h"

/* The help text is longer than the 4,095 bytes C99 promises a string
 * literal; every compiler splitkd builds with (GCC, Clang) takes far
 * more, and one literal keeps the text readable as it prints. */
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char usage[] =
	"usage: splitkd [options]\n"
	"\n"
	"Serves the paged-decode attention split-K policy over HTTP/JSON.\n"
	"\n"
	"  --listen HOST:PORT        address to serve on (default 127.0.0.1:8080;\n"
	"                            port 0 picks a free port; [::1]:8080 for IPv6);\n"
	"                            with sockets from systemd (LISTEN_FDS), only the\n"
	"                            address expected: those are served, none bound\n"
	"  --reuse-port              share the port with other processes (SO_REUSEPORT);\n"
	"                            without it a port in use is an error\n"
	"  --catalog FILE            targets and models (default: the embedded catalog);\n"
	"                            followed: a change is loaded when valid\n"
	"  --catalog NAME=FILE       a named catalog (repeatable; a request selects it\n"
	"                            with catalog=NAME); FILE alone is named default\n"
	"  --catalog-dir DIR         every NAME.json in DIR is a catalog, followed:\n"
	"                            files added, changed and removed (a ConfigMap)\n"
	"  --default-catalog NAME    the catalog of a request that names none\n"
	"                            (default: the first given, or in DIR the first\n"
	"                            by name)\n"
	"  --max-catalogs N          named catalogs at most (1-64, default 16)\n"
	"  --catalog-check SECONDS   re-read FILE this often, besides watching its\n"
	"                            directory (default 5; 0: only on SIGHUP)\n"
	"  --threads N               worker threads (default: the number of CPUs)\n"
	"  --check-catalog FILE      validate FILE and exit 0 (valid) or 1 (not)\n"
	"  --dump-catalog            print the catalog in use as JSON and exit\n"
	"  --pretty                  with --dump-catalog: one field a line, to edit\n"
	"  --revisions N             catalogs held for revision=R and /v1/diff, the\n"
	"                            current one included (1-64, default 8); the\n"
	"                            changes a stream replays after a reconnect\n"
	"  --state-dir DIR           keep every revision in DIR across restarts\n"
	"  --history N               reload attempts kept for /v1/history (200)\n"
	"  --diff OLD NEW            print what NEW changes in the entries and decisions\n"
	"                            of OLD and exit 0 (nothing), 1 (something) or 2\n"
	"                            (a file is invalid);\n"
	"                            takes --max-batch-size N, --num-seqs N,\n"
	"                            --max-rows N and --override S\n"
	"  --max-connections N       open connections at most (default 1024)\n"
	"  --backlog N               the listen queue asked of the kernel, which caps it\n"
	"                            at net.core.somaxconn (default: that cap)\n"
	"  --max-client-connections N  per client address (default 0: no limit)\n"
	"  --idle-timeout SECONDS    close idle connections (default 30)\n"
	"  --header-timeout SECONDS  a request's line and headers must arrive within\n"
	"                            this of its first byte (default 10)\n"
	"  --body-timeout SECONDS    a body must arrive within this (default 10) ...\n"
	"  --body-min-rate BYTES     ... plus a second for each BYTES of it\n"
	"                            (default 1024; 0: no minimum rate)\n"
	"  --max-body BYTES          request body limit (default 1048576)\n"
	"  --body-budget BYTES       request bodies held at once, all connections\n"
	"                            together (default 67108864); over it: 503\n"
	"  --max-header BYTES        request line + headers limit (default 4096)\n"
	"  --drain-timeout SECONDS   on SIGTERM, wait this long for requests (default 10)\n"
	"  --max-streams N           change streams (GET /v1/events) open at once\n"
	"                            (default 10000); over it: 503\n"
	"  --stream-heartbeat SECONDS  a comment on an idle stream this often (1-15,\n"
	"                            default 15)\n"
	"  --cors-allow-origin ORIGIN  let pages from ORIGIN (http[s]://HOST[:PORT],\n"
	"                            exact; repeatable) call splitkd from a browser\n"
	"  --rate-limit N            requests a second per client address, and a\n"
	"                            burst of N (default 0: no limit); over it: 429;\n"
	"                            /healthz, /readyz and /metrics are never limited\n"
	"  --rate-limit-clients N    client addresses remembered for --rate-limit\n"
	"                            (default 4096; the least recent is forgotten)\n"
	"  --log-format text|json    log line format on stderr (default text)\n"
	"  --access-log on|off       one line per request (default on)\n"
	"  --tls-cert FILE           serve HTTPS with this PEM certificate (chain)\n"
	"  --tls-key FILE            ... and this PEM private key (both, or neither)\n"
	"  --tls-client-ca FILE      require client certificates signed by this PEM CA\n"
	"  --tls-priority STRING     GnuTLS priority string (default: TLS 1.2 and 1.3,\n"
	"                            forward-secret AEAD suites only)\n"
	"                            The TLS files are reloaded when they change.\n"
	"  --version                 print the version and exit\n"
	"  --help                    print this help and exit\n"
	"\n"
	"Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP reloads --catalog FILE now.\n";

const char *cli_usage(void)
{
	return usage;
}

/* A flag that takes a whole number: its range and the member it fills. */
struct number_flag {
	const char *name;
	unsigned long long lo, hi;
	size_t offset;
	bool is_size; /* a size_t member; else unsigned */
};

#define UNSIGNED_FLAG(n, lo, hi, member) {n, lo, hi, offsetof(struct server_config, member), false}
#define SIZE_FLAG(n, lo, hi, member) {n, lo, hi, offsetof(struct server_config, member), true}

static const struct number_flag numbers[] = {
	UNSIGNED_FLAG("threads", 1, 256, threads),
	UNSIGNED_FLAG("catalog-check", 0, 86400, catalog_check),
	UNSIGNED_FLAG("max-connections", 1, 1000000, max_connections),
	UNSIGNED_FLAG("backlog", 0, 2147483647u, backlog),
	UNSIGNED_FLAG("max-client-connections", 0, 1000000, per_client_connections),
	UNSIGNED_FLAG("idle-timeout", 1, 3600, idle_timeout),
	UNSIGNED_FLAG("drain-timeout", 1, 3600, drain_timeout),
	UNSIGNED_FLAG("header-timeout", 1, 3600, header_timeout),
	UNSIGNED_FLAG("body-timeout", 1, 3600, body_timeout),
	SIZE_FLAG("body-min-rate", 0, 1ull << 30, body_min_rate),
	SIZE_FLAG("max-body", 1024, 64ull << 20, max_body),
	SIZE_FLAG("max-header", 2048, CLI_MAX_HEADER_MOST, max_header),
	SIZE_FLAG("body-budget", 1ull << 20, 1ull << 40, body_budget),
	UNSIGNED_FLAG("revisions", 1, 64, revisions),
	UNSIGNED_FLAG("max-catalogs", 1, 64, max_catalogs),
	UNSIGNED_FLAG("history", 1, 10000, history),
	/* --diff's, as /v1/matrix takes them */
	UNSIGNED_FLAG("max-batch-size", 1, 4294967295u, diff_max_batch_size),
	UNSIGNED_FLAG("num-seqs", 1, 4294967295u, diff_num_seqs),
	UNSIGNED_FLAG("max-rows", 1, 4294967295u, diff_max_rows),
	UNSIGNED_FLAG("max-streams", 1, 100000, max_streams),
	UNSIGNED_FLAG("stream-heartbeat", 1, 15, stream_heartbeat),
	UNSIGNED_FLAG("rate-limit", 0, 1000000, rate_limit),
	UNSIGNED_FLAG("rate-limit-clients", 1, 1000000, rate_limit_clients),
};

#define NUM_NUMBERS (sizeof(numbers) / sizeof(numbers[0]))

enum {
	OPT_LISTEN = 256,
	OPT_REUSE_PORT,
	OPT_CATALOG,
	OPT_CATALOG_DIR,
	OPT_DEFAULT_CATALOG,
	OPT_CHECK,
	OPT_DUMP,
	OPT_DIFF,
	OPT_OVERRIDE,
	OPT_LOG_FORMAT,
	OPT_ACCESS_LOG,
	OPT_VERSION,
	OPT_HELP,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_CLIENT_CA,
	OPT_TLS_PRIORITY,
	OPT_PRETTY,
	OPT_STATE_DIR,
	OPT_CORS_ALLOW_ORIGIN,
	OPT_NUMBER, /* OPT_NUMBER + i: numbers[i] */
};

static const struct option words[] = {
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"reuse-port", no_argument, NULL, OPT_REUSE_PORT},
	{"catalog", required_argument, NULL, OPT_CATALOG},
	{"catalog-dir", required_argument, NULL, OPT_CATALOG_DIR},
	{"state-dir", required_argument, NULL, OPT_STATE_DIR},
	{"default-catalog", required_argument, NULL, OPT_DEFAULT_CATALOG},
	{"check-catalog", required_argument, NULL, OPT_CHECK},
	{"dump-catalog", no_argument, NULL, OPT_DUMP},
	{"diff", required_argument, NULL, OPT_DIFF},
	{"override", required_argument, NULL, OPT_OVERRIDE},
	{"log-format", required_argument, NULL, OPT_LOG_FORMAT},
	{"access-log", required_argument, NULL, OPT_ACCESS_LOG},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, OPT_HELP},
	{"tls-cert", required_argument, NULL, OPT_TLS_CERT},
	{"tls-key", required_argument, NULL, OPT_TLS_KEY},
	{"tls-client-ca", required_argument, NULL, OPT_TLS_CLIENT_CA},
	{"tls-priority", required_argument, NULL, OPT_TLS_PRIORITY},
	{"pretty", no_argument, NULL, OPT_PRETTY},
	{"cors-allow-origin", required_argument, NULL, OPT_CORS_ALLOW_ORIGIN},
};

#define NUM_WORDS (sizeof(words) / sizeof(words[0]))

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

static int set_number(const struct number_flag *f, const char *arg, struct server_config *cfg,
		      char *err, size_t err_cap)
{
	unsigned long long v;
	char *member = (char *)cfg + f->offset;

	if (parse_uint(arg, f->hi, &v) != 0 || v < f->lo) {
		snprintf(err, err_cap, "--%s takes a whole number from %llu to %llu, not \"%s\"", f->name,
			 f->lo, f->hi, arg);
		return -1;
	}
	if (f->is_size) {
		*(size_t *)(void *)member = (size_t)v;
	} else {
		*(unsigned *)(void *)member = (unsigned)v;
	}
	return 0;
}

static void set_defaults(struct server_config *cfg)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof(*cfg));
	cfg->action = CLI_SERVE;
	snprintf(cfg->host, sizeof(cfg->host), "127.0.0.1");
	cfg->port = 8080;
	cfg->threads = cpus > 0 && cpus < 256 ? (unsigned)cpus : 2;
	cfg->max_connections = 1024;
	cfg->idle_timeout = 30;
	cfg->catalog_check = 5;
	cfg->max_body = API_DEFAULT_MAX_BODY;
	cfg->max_header = 4096;
	cfg->drain_timeout = 10;
	cfg->header_timeout = 10;
	cfg->body_timeout = 10;
	cfg->body_min_rate = 1024;
	cfg->body_budget = 64u << 20;
	cfg->log_format = CLI_LOG_TEXT;
	cfg->access_log = true;
	cfg->revisions = 8;
	cfg->max_catalogs = 16;
	cfg->history = 200;
	cfg->max_streams = 10000;
	cfg->stream_heartbeat = 15;
}

/* Flags that choose what splitkd does instead of serving. */
static const struct {
	int opt;
	enum cli_action action;
} actions[] = {
	{OPT_CHECK, CLI_CHECK_CATALOG},
	{OPT_DUMP, CLI_DUMP_CATALOG},
	{OPT_DIFF, CLI_DIFF},
	{OPT_VERSION, CLI_VERSION},
	{OPT_HELP, CLI_HELP},
};

/* A word that must be one of two: sets *second to whether it is the second. */
static int one_of_two(const char *flag, const char *a, const char *first, const char *second_word,
		      bool *second, char *err, size_t cap)
{
	if (strcmp(a, first) != 0 && strcmp(a, second_word) != 0) {
		snprintf(err, cap, "--%s takes %s or %s, not \"%s\"", flag, first, second_word, a);
		return -1;
	}
	*second = strcmp(a, second_word) == 0;
	return 0;
}

#define NAME_RULE "1 to 63 of a-z 0-9 . _ -, first a letter or digit"

/* The --catalog named `name` (`len` bytes), or NULL. */
static const struct cli_catalog *find_catalog(const struct server_config *cfg, const char *name,
					      size_t len)
{
	for (size_t i = 0; i < cfg->num_catalogs; i++) {
		if (strlen(cfg->catalogs[i].name) == len && memcmp(cfg->catalogs[i].name, name, len) == 0) {
			return &cfg->catalogs[i];
		}
	}
	return NULL;
}

/* --catalog NAME=FILE, or --catalog FILE (named "default"): NAME= only
 * when what is before the first '=' is a catalog name, so a path with an
 * '=' further on is still a path. */
static int add_catalog(const char *a, struct server_config *cfg, char *err, size_t cap)
{
	const char *eq = strchr(a, '=');
	struct cli_catalog *c = &cfg->catalogs[cfg->num_catalogs];
	const char *name = CATALOG_DEFAULT_NAME;
	size_t len = sizeof(CATALOG_DEFAULT_NAME) - 1;

	if (cfg->num_catalogs == CLI_MAX_CATALOGS) {
		snprintf(err, cap, "--catalog: at most %d catalogs", CLI_MAX_CATALOGS);
		return -1;
	}
	if (eq != NULL && eq > a && catalog_name_ok(a, (size_t)(eq - a))) {
		name = a;
		len = (size_t)(eq - a);
		a = eq + 1;
	}
	if (*a == '\0') {
		snprintf(err, cap, "--catalog %.*s= needs a file after the '='", (int)len, name);
		return -1;
	}
	if (find_catalog(cfg, name, len) != NULL) {
		snprintf(err, cap, "--catalog: two catalogs named \"%.*s\" (give each NAME=FILE "
			 "its own name)", (int)len, name);
		return -1;
	}
	memcpy(c->name, name, len);
	c->name[len] = '\0';
	c->path = a;
	cfg->num_catalogs++;
	return 0;
}

/* The default catalog, from the catalogs given and --default-catalog: its
 * name (the first --catalog's when no --default-catalog) and its file. */
static int pick_default(struct server_config *cfg, char *err, size_t cap)
{
	const struct cli_catalog *c;

	if (cfg->catalog_dir != NULL && cfg->num_catalogs > 0) {
		snprintf(err, cap, "--catalog-dir and --catalog: give one or the other (put every "
			 "catalog in the directory as NAME.json)");
		return -1;
	}
	if (cfg->catalog_dir != NULL) {
		return 0; /* its default is found when the directory is read */
	}
	if (cfg->default_catalog == NULL && cfg->num_catalogs > 0) {
		cfg->default_catalog = cfg->catalogs[0].name;
	}
	if (cfg->default_catalog == NULL) {
		cfg->catalog_path = NULL; /* the embedded catalog */
		return 0;
	}
	c = find_catalog(cfg, cfg->default_catalog, strlen(cfg->default_catalog));
	if (c == NULL) {
		snprintf(err, cap, "--default-catalog %s names no --catalog %s=FILE",
			 cfg->default_catalog, cfg->default_catalog);
		return -1;
	}
	cfg->catalog_path = c->path;
	return 0;
}

/* --cors-allow-origin ORIGIN: exact, once each (cors.h). */
static int add_origin(const char *a, struct server_config *cfg, char *err, size_t cap)
{
	const char *why = NULL;

	if (!cors_origin_ok(a, &why)) {
		snprintf(err, cap, "--cors-allow-origin \"%s\": %s", a, why);
		return -1;
	}
	if (cors_match(cfg->cors_origins, cfg->num_cors_origins, a) != NULL) {
		snprintf(err, cap, "--cors-allow-origin %s is given twice", a);
		return -1;
	}
	if (cfg->num_cors_origins == CORS_MAX_ORIGINS) {
		snprintf(err, cap, "--cors-allow-origin: at most %d origins", CORS_MAX_ORIGINS);
		return -1;
	}
	cfg->cors_origins[cfg->num_cors_origins++] = a;
	return 0;
}

/* A flag that takes a word, or none. */
static int set_word(int opt, const char *a, struct server_config *cfg, char *err, size_t cap)
{
	bool json = false, off = false;

	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (actions[i].opt == opt) {
			cfg->action = actions[i].action;
			cfg->check_path = opt == OPT_CHECK ? a : cfg->check_path;
			cfg->diff_old = opt == OPT_DIFF ? a : cfg->diff_old;
			return 0;
		}
	}
	switch (opt) {
	case OPT_LISTEN:
		if (parse_listen(a, cfg) != 0) {
			snprintf(err, cap, "--listen takes HOST:PORT (port 0-65535), not \"%s\"", a);
			return -1;
		}
		cfg->listen_given = true;
		return 0;
	case OPT_REUSE_PORT:
		cfg->reuse_port = true;
		return 0;
	case OPT_CATALOG:
		return add_catalog(a, cfg, err, cap);
	case OPT_CATALOG_DIR:
		cfg->catalog_dir = a;
		return 0;
	case OPT_STATE_DIR:
		cfg->state_dir = a;
		return 0;
	case OPT_DEFAULT_CATALOG:
		if (!catalog_name_ok(a, strlen(a))) {
			snprintf(err, cap, "--default-catalog takes a catalog name (" NAME_RULE "), not "
				 "\"%s\"", a);
			return -1;
		}
		cfg->default_catalog = a;
		return 0;
	case OPT_OVERRIDE:
		cfg->diff_override = a;
		return 0;
	case OPT_TLS_CERT:
		cfg->tls_cert = a;
		return 0;
	case OPT_TLS_KEY:
		cfg->tls_key = a;
		return 0;
	case OPT_TLS_CLIENT_CA:
		cfg->tls_client_ca = a;
		return 0;
	case OPT_TLS_PRIORITY:
		cfg->tls_priority = a;
		return 0;
	case OPT_PRETTY:
		cfg->pretty = true;
		return 0;
	case OPT_CORS_ALLOW_ORIGIN:
		return add_origin(a, cfg, err, cap);
	case OPT_LOG_FORMAT:
		if (one_of_two("log-format", a, "text", "json", &json, err, cap) != 0) {
			return -1;
		}
		cfg->log_format = json ? CLI_LOG_JSON : CLI_LOG_TEXT;
		return 0;
	default: /* OPT_ACCESS_LOG */
		if (one_of_two("access-log", a, "on", "off", &off, err, cap) != 0) {
			return -1;
		}
		cfg->access_log = !off;
		return 0;
	}
}

/* Limits that only make sense together. */
static int check_config(struct server_config *cfg, char *err, size_t cap)
{
	if (cfg->body_budget < cfg->max_body) {
		snprintf(err, cap, "--body-budget (%zu) is below --max-body (%zu): no body that size "
			 "could ever be taken", cfg->body_budget, cfg->max_body);
		return -1;
	}
	if (cfg->num_catalogs > cfg->max_catalogs) {
		snprintf(err, cap, "%zu catalogs given; --max-catalogs is %u", cfg->num_catalogs,
			 cfg->max_catalogs);
		return -1;
	}
	if (cfg->rate_limit == 0 && cfg->rate_limit_clients != 0) {
		snprintf(err, cap, "--rate-limit-clients goes with --rate-limit N");
		return -1;
	}
	if (cfg->rate_limit != 0 && cfg->rate_limit_clients == 0) {
		cfg->rate_limit_clients = 4096;
	}
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		snprintf(err, cap, "--tls-cert and --tls-key go together: give both, or neither");
		return -1;
	}
	if (cfg->tls_cert == NULL && (cfg->tls_client_ca != NULL || cfg->tls_priority != NULL)) {
		snprintf(err, cap, "--tls-client-ca and --tls-priority need --tls-cert and --tls-key");
		return -1;
	}
	return 0;
}

/* "unknown option", with the nearest flag by the house's one did-you-mean
 * (names_near_*) when one is near: --listn suggests --listen. */
static void unknown_option(const char *arg, const struct option *options, char *err, size_t cap)
{
	const char *word = arg;
	size_t len;
	struct names_near near;

	while (*word == '-') {
		word++;
	}
	len = strcspn(word, "=");
	names_near_init(&near, word, len, 0);
	for (size_t i = 0; options[i].name != NULL; i++) {
		names_near_offer(&near, options[i].name);
	}
	if (near.best != NULL) {
		snprintf(err, cap, "unknown option \"%s\": did you mean --%s? (see --help)", arg, near.best);
	} else {
		snprintf(err, cap, "unknown option \"%s\" (see --help)", arg);
	}
}

int cli_parse(int argc, char **argv, struct server_config *cfg, char *err, size_t err_cap)
{
	struct option options[NUM_WORDS + NUM_NUMBERS + 1];
	int opt;

	set_defaults(cfg);
	memcpy(options, words, sizeof(words));
	for (size_t i = 0; i < NUM_NUMBERS; i++) {
		options[NUM_WORDS + i] = (struct option){numbers[i].name, required_argument, NULL,
							 OPT_NUMBER + (int)i};
	}
	options[NUM_WORDS + NUM_NUMBERS] = (struct option){NULL, 0, NULL, 0};
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
		int rc;

		if (opt == ':') {
			snprintf(err, err_cap, "%s needs a value", argv[optind - 1]);
			return -1;
		}
		if (opt == '?') {
			unknown_option(argv[optind - 1], options, err, err_cap);
			return -1;
		}
		rc = opt >= OPT_NUMBER ? set_number(&numbers[opt - OPT_NUMBER], optarg, cfg, err, err_cap)
				       : set_word(opt, optarg, cfg, err, err_cap);
		if (rc != 0) {
			return -1;
		}
	}
	if (cfg->action == CLI_DIFF) {
		/* --diff OLD NEW: NEW is the one argument left (getopt moves it last) */
		if (optind >= argc) {
			snprintf(err, err_cap, "--diff takes two files: --diff OLD.json NEW.json");
			return -1;
		}
		cfg->diff_new = argv[optind++];
	} else if (cfg->diff_max_batch_size || cfg->diff_num_seqs || cfg->diff_max_rows ||
		   cfg->diff_override) {
		snprintf(err, err_cap, "--max-batch-size, --num-seqs, --max-rows and --override "
			 "go with --diff (a request gives them to a server)");
		return -1;
	}
	if (cfg->pretty && cfg->action != CLI_DUMP_CATALOG) {
		snprintf(err, err_cap, "--pretty goes with --dump-catalog");
		return -1;
	}
	if (optind < argc) {
		snprintf(err, err_cap, "unexpected argument \"%s\" (see --help)", argv[optind]);
		return -1;
	}
	if (pick_default(cfg, err, err_cap) != 0) {
		return -1;
	}
	return check_config(cfg, err, err_cap);
}
