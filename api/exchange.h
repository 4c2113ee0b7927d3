/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * exchange — what the server and the api hand each other: the context a
 * request is answered in, the request, and the response, with the limits
 * and content types they name. Types only (and one inline helper), so
 * that the router (api.c) and the handlers it calls (handler*.c, ui.c,
 * ofrep.c) both build on it without including each other: api.h
 * includes this file, and a handler never includes api.h.
 *
 * Who owns what is said at each member; nothing here allocates or keeps
 * state. Thread-safe as plain data: a response belongs to one request.
 */
#ifndef SPLITKD_EXCHANGE_H
#define SPLITKD_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "etag.h"
#include "splitk.h"

/* The limits a request is held to. One is the operator's: max_body, from
 * --max-body. Two are fixed: max_uri and max_batch, which the server sets
 * to API_DEFAULT_MAX_URI and API_DEFAULT_MAX_BATCH (no flag changes them).
 * API_DEFAULT_* are defined once: the CLI's default for --max-body, the
 * fixed values, and what the api holds a request to when the context
 * gives no limits (unit tests, fuzzers). */
#define API_DEFAULT_MAX_BODY ((size_t)1 << 20)
#define API_DEFAULT_MAX_URI ((size_t)8192)
#define API_DEFAULT_MAX_BATCH ((size_t)1024)

struct api_limits {
	size_t max_body;  /* bytes of a POST body; over it, 413 */
	size_t max_uri;   /* bytes of the request target; over it, 414 (fixed) */
	size_t max_batch; /* queries in one POST /v1/splits batch; over it, 413 (fixed) */
};

/* Content types a route may answer with (static strings). */
#define API_CT_JSON "application/json"
#define API_CT_PROBLEM "application/problem+json"
#define API_CT_HTML "text/html; charset=utf-8"
#define API_CT_CSS "text/css; charset=utf-8"
#define API_CT_JS "text/javascript; charset=utf-8"
#define API_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define API_CT_EVENT_STREAM "text/event-stream; charset=utf-8"

/* Extra response headers a route may set: a few static name/value pairs. */
#define API_MAX_HEADERS 4

struct api_header {
	const char *name;  /* static, e.g. "Content-Security-Policy" */
	const char *value; /* static */
};

/* Called once per decision answered (a batch calls it per query), so the
 * server can count decisions by catalog, target and policy. `catalog` is
 * the name of the catalog that answered, NULL for the default one (the
 * common case, told apart without comparing names); `target` an entry's
 * name in it, or NULL for an sm_count-only query. May be NULL. */
typedef void api_decision_fn(void *cls, const char *catalog, const char *target,
			     enum splitk_kind kind);
/* One answer of another engine than the seed: the engine (engines.h's
 * enum engines_id), and whether it answered (true) or refused the shape
 * (false). */
/* An engine's launch (engines.h): which engine, by which path (enum
 * engines_path: a uniform batch, a mixed one, FlashInfer's tensor-core
 * plan), and whether it answered. */
typedef void api_engine_fn(void *cls, int engine, int path, bool answered);

/* Fills *out (status.h) with a consistent copy of the server's catalog
 * state, for GET /v1/status. May be NULL. */
struct api_status;
typedef void api_status_fn(void *cls, struct api_status *out);

/* Renders GET /metrics: the server's counters, which only the server knows
 * (the api routes the request, the server writes the text). Returns a
 * buffer the api frees, with its length, or NULL when out of memory. */
typedef char *api_metrics_fn(void *cls, const struct catalog *catalog, size_t *len);

struct revision;       /* revision.h */
struct history_entry;  /* history.h */
struct revision_named; /* revision.h */

struct api_context {
	const struct catalog *catalog;
	/* Every catalog revision the server still holds, newest first; the
	 * first is `catalog`. NULL (0): `catalog` alone (unit tests, fuzzers).
	 * Immutable for the request. */
	const struct revision *revisions;
	size_t num_revisions;
	/* Every catalog the server serves by name (catalog=NAME), the default
	 * among them; NULL (0): `catalog` alone, under its own name. Immutable
	 * for the request. */
	const struct revision_named *catalogs;
	size_t num_catalogs;
	api_decision_fn *on_decision;
	void *on_decision_cls;
	api_engine_fn *on_engine; /* called with on_decision_cls; NULL: none */
	api_status_fn *report_status; /* NULL: the status names the catalog alone */
	void *report_status_cls;
	/* GET /v1/history's entries (history.h's api_history_fn); NULL: none */
	size_t (*list_history)(void *cls, uint64_t before, struct history_entry *out, size_t max);
	void *list_history_cls;
	bool draining;       /* /readyz answers 503 */
	const char *version; /* "0.1.0" */
	const char *build;   /* e.g. a git revision */
	const struct api_limits *limits; /* the server's; NULL: API_DEFAULT_* */
	api_metrics_fn *render_metrics; /* NULL: /metrics answers 404 (unit tests, fuzzers) */
	void *render_metrics_cls;
	/* read every batch body through cJSON, never batchfast.c's reader:
	 * the reference the fuzzer and the tests hold the fast reader to;
	 * false in the server */
	bool batch_tree_only;
};

struct api_request {
	const char *method;
	const char *uri; /* the request target as sent: path?query */
	size_t uri_len;
	const char *content_type;  /* NULL when absent */
	const char *if_none_match; /* NULL when absent */
	const char *if_match;      /* NULL when absent */
	const char *accept;        /* NULL when absent; GET / negotiates on it */
	const char *body;
	size_t body_len;
};

/*
 * What the server sends: the status; Content-Type; Allow when set; ETag
 * when set (on a 200 or 304 to GET/HEAD, and to POST on a route that opts
 * in); then headers[0..num_headers) in order; then the body — none for
 * HEAD, which the api answers as GET, and none for a 304, which keeps the
 * 200's body only so that the server can announce its length.
 */
struct api_response {
	int status;
	const char *content_type; /* static */
	const char *allow;        /* static; set on 405 */
	char etag[ETAG_MAX];      /* "\"<16 hex>\"", or "" for none */
	struct api_header headers[API_MAX_HEADERS];
	size_t num_headers;
	bool close; /* the server must close the connection after it */
	bool stream; /* GET /v1/events: the server holds a change stream open (events.h) */
	/* which: a catalog's name (the request's), "*" (every catalog's), or
	 * NULL (the default's) */
	const char *stream_catalog;
	int route;  /* the route answered (see api_route_path), or -1 */
	const char *body;
	size_t body_len;
	char *owned; /* what to free: body, when allocated; NULL for a static body */
};

/* Adds a header (static name and value) to a response. Returns 0, or -1
 * when API_MAX_HEADERS are already set (the header is not added). */
static inline int exchange_add_header(struct api_response *resp, const char *name,
				      const char *value)
{
	if (resp->num_headers == API_MAX_HEADERS) {
		return -1;
	}
	resp->headers[resp->num_headers++] = (struct api_header){name, value};
	return 0;
}

/* Whether the request method m is `want` (both NUL-terminated): a byte
 * loop the compiler unrolls for a constant `want`, where a call to strcmp
 * costs 20 to 30 instructions on every request (more where the strings
 * happen to sit near a page's end). */
static inline bool api_method_is(const char *m, const char *want)
{
	while (*want != '\0' && *m == *want) {
		m++;
		want++;
	}
	return *m == *want;
}

#endif /* SPLITKD_EXCHANGE_H */
