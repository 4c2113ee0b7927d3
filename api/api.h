/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * api — the pure request handler: (method, request target, content type,
 * body) in, (status, content type, body) out. No sockets, no
 * libmicrohttpd: the server calls api_handle, and so do the unit tests and
 * the fuzzers.
 *
 * One table (api.c) maps method + path to a handler (handler.c); a path
 * that exists answers 405 with Allow for other methods, anything else 404.
 * HEAD is answered as GET (the server drops the body). Every error is
 * RFC 9457 application/problem+json.
 *
 * Conditional GET (etag.c): a 200 answer to GET or HEAD carries a strong
 * ETag, a hash of its body bytes, the same on every replica with the same
 * catalog and version; If-None-Match with a matching tag (or "*") answers
 * 304, no body.
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

#define API_MAX_URI 8192
#define API_MAX_BODY (1u << 20)
#define API_MAX_BATCH 1024

/* Called once per decision answered (a batch calls it per query), so the
 * server can count decisions by target and policy. `target` is a catalog
 * name or NULL for an sm_count-only query. May be NULL. */
typedef void api_decision_fn(void *cls, const char *target, enum splitk_kind kind);

struct api_context {
	const struct catalog *catalog;
	api_decision_fn *on_decision;
	void *on_decision_cls;
	bool draining;       /* /readyz answers 503 */
	const char *version; /* "0.1.0" */
	const char *build;   /* e.g. a git revision */
};

struct api_request {
	const char *method;
	const char *uri; /* the request target as sent: path?query */
	size_t uri_len;
	const char *content_type;  /* NULL when absent */
	const char *if_none_match; /* NULL when absent */
	const char *body;
	size_t body_len;
};

struct api_response {
	int status;
	const char *content_type; /* static */
	const char *allow;        /* static; set on 405 */
	char etag[ETAG_MAX];      /* "\"<16 hex>\"" on a 200 or 304 to GET/HEAD; "" otherwise */
	bool close;               /* the server must close the connection after it */
	int route;                /* the route answered (see api_route_path), or -1 */
	const char *body;
	size_t body_len;
	char *owned; /* what to free: body, when allocated */
};

/* Answers one request. Never fails: out of memory is a 500 with a static
 * body. */
void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp);

/* Frees what the response owns; safe to call twice. */
void api_response_cleanup(struct api_response *resp);

/* The number of routes, and the index of the route a request target's path
 * names (ignoring method and query), or -1 when none does. For labels. */
size_t api_route_count(void);
int api_route_of(const char *uri, size_t uri_len);

/* The routes, for the OpenAPI check: the i-th path template
 * ("/v1/targets/{name}") and its methods ("GET, HEAD"); NULL past the end. */
const char *api_route_path(size_t i, const char **methods);

#endif /* SPLITKD_API_H */
