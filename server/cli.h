/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * cli — splitkd's command line: flags into a const server_config.
 * No I/O besides the messages cli_parse writes into the caller's buffer;
 * no globals (getopt's are reset before use).
 */
#ifndef SPLITKD_CLI_H
#define SPLITKD_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "cors.h"

enum cli_action { CLI_SERVE, CLI_CHECK_CATALOG, CLI_DUMP_CATALOG, CLI_DIFF, CLI_VERSION, CLI_HELP };
enum cli_log_format { CLI_LOG_TEXT, CLI_LOG_JSON };

struct activation;

/* The largest --max-header: no header value can be longer (the contract's
 * maxLength of If-None-Match, If-Match and Last-Event-ID). */
#define CLI_MAX_HEADER_MOST ((size_t)1 << 20)

/* Catalogs named on the command line at most (--catalog, repeated). */
#define CLI_MAX_CATALOGS 64

/* A catalog named on the command line: --catalog NAME=FILE, or --catalog
 * FILE (named "default"). */
struct cli_catalog {
	char name[64]; /* catalog_name_ok */
	const char *path;
};

struct server_config {
	enum cli_action action;
	char host[256];           /* "127.0.0.1", "::1", "0.0.0.0", "localhost" */
	unsigned port;            /* 0: any free port */
	bool listen_given;        /* --listen was on the command line */
	/* the sockets a service manager passed (LISTEN_FDS): main sets it
	 * from activation_take, never a flag. With any, they are served and
	 * nothing is bound; host:port is then only what --listen expects.
	 * NULL (cli_parse's) or none: bind host:port. */
	const struct activation *inherited;
	const char *catalog_path; /* the default catalog's file; NULL: the embedded catalog */
	struct cli_catalog catalogs[CLI_MAX_CATALOGS]; /* every --catalog, in order */
	size_t num_catalogs;
	const char *catalog_dir;     /* --catalog-dir DIR: every NAME.json; NULL: none */
	/* --default-catalog NAME, else the first --catalog's name (cli_parse
	 * sets it, pointing into catalogs[]); NULL: no --catalog (the
	 * embedded catalog, or --catalog-dir's first, found when read) */
	const char *default_catalog;
	unsigned max_catalogs;       /* --max-catalogs */
	unsigned catalog_check;   /* seconds between checks of the file (and inotify); 0: SIGHUP only */
	const char *check_path;   /* --check-catalog FILE */
	unsigned threads;
	unsigned max_connections;
	unsigned backlog; /* listen(2)'s; 0: net.core.somaxconn */
	unsigned per_client_connections; /* 0: no per-client limit */
	unsigned idle_timeout;           /* seconds */
	size_t max_body;                 /* bytes */
	size_t max_header;               /* bytes: request line + headers */
	unsigned drain_timeout;          /* seconds */
	unsigned header_timeout;         /* seconds: a request's line and headers */
	unsigned body_timeout;           /* seconds: a body, before body_min_rate extends it */
	size_t body_min_rate;            /* bytes a second; 0: none */
	size_t body_budget;              /* bytes of request bodies held at once */
	bool reuse_port;                 /* share the port with other processes (SO_REUSEPORT) */
	enum cli_log_format log_format;
	bool access_log;
	bool pretty; /* --pretty: --dump-catalog writes one field a line */
	unsigned revisions; /* --revisions: catalogs held for pinning and diffs */
	const char *state_dir; /* --state-dir DIR: revisions kept across restarts; NULL: none */
	unsigned history;      /* --history N: GET /v1/history's entries kept */
	/* --diff OLD NEW and the matrix inputs it takes (0 / NULL: unset) */
	const char *diff_old, *diff_new;
	unsigned diff_max_batch_size, diff_num_seqs, diff_max_rows;
	const char *diff_override;
	unsigned max_streams;      /* GET /v1/events held open at once */
	unsigned stream_heartbeat; /* seconds between comments on an idle stream */
	const char *tls_cert;      /* --tls-cert FILE: serve HTTPS; NULL: HTTP */
	const char *tls_key;       /* --tls-key FILE */
	const char *tls_client_ca; /* --tls-client-ca FILE: require client certificates */
	const char *tls_priority;  /* --tls-priority STRING; NULL: tls.h's default */
	/* --cors-allow-origin ORIGIN, each as given (cors.h); none: no CORS */
	const char *cors_origins[CORS_MAX_ORIGINS];
	size_t num_cors_origins;
	unsigned rate_limit;         /* --rate-limit N: a client's requests a second; 0: off */
	unsigned rate_limit_clients; /* --rate-limit-clients N: addresses remembered (4096) */
};

/* Fills cfg from argv. Returns 0, or -1 with a message in err (a usage
 * error: exit status 2). Defaults: see cli_usage. */
int cli_parse(int argc, char **argv, struct server_config *cfg, char *err, size_t err_cap);

/* The --help text. */
const char *cli_usage(void);

#endif /* SPLITKD_CLI_H */
