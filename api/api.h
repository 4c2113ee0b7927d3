/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * api — the pure request handler: (method, request target, content type,
 * body) in, (status, content type, headers, body) out. No sockets, no
 * libmicrohttpd: the server calls api_handle, and so do the unit tests and
 * the fuzzers. Each request is held to the limits the context carries
 * (the server's configuration), never to limits of the api's own.
 *
 * One table (api.c) maps method + path to a handler (handler.c; the page
 * in ui.c; the OFREP adapter in ofrep.c); a path that exists answers 405
 * with Allow for other methods, anything else 404. A route takes GET and HEAD, GET, HEAD
 * and POST, or POST only. HEAD is answered as GET (the server drops the
 * body). Every error is RFC 9457 application/problem+json, except what the
 * OFREP routes answer to their body (OFREP's own application/json shapes).
 *
 * Conditional requests (etag.c): a 200 answer to GET or HEAD (and to POST
 * on a route that opts in) carries a strong ETag, a hash of its body
 * bytes, the same on every replica with the same catalog and version;
 * If-None-Match with a matching tag (or "*") answers 304, no body.
 *
 * Thread-safe: api_handle reads the context and writes only the response.
 * The response body is owned by the response (api_response_cleanup).
 */
#ifndef SPLITKD_API_H
#define SPLITKD_API_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "etag.h"
#include "problem.h"

/* The limits a request is held to. The server fills them from its
 * configuration (--max-body ...), so each limit has the one value the
 * operator set. API_DEFAULT_* are the defaults, defined once: the CLI's
 * defaults, and what the api holds a request to when the context gives no
 * limits (unit tests, fuzzers). */
#define API_DEFAULT_MAX_BODY ((size_t)1 << 20)
#define API_DEFAULT_MAX_URI ((size_t)8192)
#define API_DEFAULT_MAX_BATCH ((size_t)1024)

struct api_limits {
	size_t max_body;  /* bytes of a POST body; over it, 413 */
	size_t max_uri;   /* bytes of the request target; over it, 414 */
	size_t max_batch; /* queries in one POST /v1/splits batch; over it, 413 */
};

/* Content types a route may answer with (static strings). */
#define API_CT_JSON "application/json"
#define API_CT_PROBLEM "application/problem+json"
#define API_CT_HTML "text/html; charset=utf-8"
#define API_CT_CSS "text/css; charset=utf-8"
#define API_CT_JS "text/javascript; charset=utf-8"
#define API_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

/* Extra response headers a route may set: a few static name/value pairs. */
#define API_MAX_HEADERS 4

struct api_header {
	const char *name;  /* static, e.g. "Content-Security-Policy" */
	const char *value; /* static */
};

/* Called once per decision answered (a batch calls it per query), so the
 * server can count decisions by target and policy. `target` is a catalog
 * name or NULL for an sm_count-only query. May be NULL. */
typedef void api_decision_fn(void *cls, const char *target, enum splitk_kind kind);

/* Fills *out (status.h) with a consistent copy of the server's catalog
 * state, for GET /v1/status. May be NULL. */
struct api_status;
typedef void api_status_fn(void *cls, struct api_status *out);

/* Renders GET /metrics: the server's counters, which only the server knows
 * (the api routes the request, the server writes the text). Returns a
 * buffer the api frees, with its length, or NULL when out of memory. */
typedef char *api_metrics_fn(void *cls, const struct catalog *catalog, size_t *len);

struct api_context {
	const struct catalog *catalog;
	api_decision_fn *on_decision;
	void *on_decision_cls;
	api_status_fn *status; /* NULL: the status names the catalog alone */
	void *status_cls;
	bool draining;       /* /readyz answers 503 */
	const char *version; /* "0.1.0" */
	const char *build;   /* e.g. a git revision */
	const struct api_limits *limits; /* the server's; NULL: API_DEFAULT_* */
	api_metrics_fn *metrics; /* NULL: /metrics answers 404 (unit tests, fuzzers) */
	void *metrics_cls;
};

struct api_request {
	const char *method;
	const char *uri; /* the request target as sent: path?query */
	size_t uri_len;
	const char *content_type;  /* NULL when absent */
	const char *if_none_match; /* NULL when absent */
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
	int route;  /* the route answered (see api_route_path), or -1 */
	const char *body;
	size_t body_len;
	char *owned; /* what to free: body, when allocated; NULL for a static body */
};

/* Answers one request. Never fails: out of memory is a 500 with a static
 * body. */
void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp);

/* A problem answer for a request refused before the router saw it (a
 * limit, HTTP framing): `detail` under the kind's type, title and status,
 * written by the same problem writer as every other error. Never fails:
 * out of memory is the static 500. The response owns its body. */
void api_problem_answer(struct api_response *resp, enum problem_kind kind, const char *detail);

/* Frees what the response owns; safe to call twice. */
void api_response_cleanup(struct api_response *resp);

/* Adds a header (static name and value) to a response. Returns 0, or -1
 * when API_MAX_HEADERS are already set (the header is not added). */
int api_response_add_header(struct api_response *resp, const char *name, const char *value);

/* The number of routes, and the index of the route a request target's path
 * names (ignoring method and query), or -1 when none does. For labels. */
size_t api_route_count(void);
int api_route_of(const char *uri, size_t uri_len);

/* The routes, for the OpenAPI check: the i-th path template
 * ("/v1/targets/{name}") and its methods ("GET, HEAD", "GET, HEAD, POST"
 * or "POST", as the Allow header says them); NULL past the end. */
const char *api_route_path(size_t i, const char **methods);

#endif /* SPLITKD_API_H */
