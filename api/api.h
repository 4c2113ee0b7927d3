/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * api — the pure request handler: (method, request target, content type,
 * body) in, (status, content type, headers, body) out. No sockets, no
 * libmicrohttpd: the server calls api_handle, and so do the unit tests and
 * the fuzzers. Each request is held to the limits the context carries
 * (the server's --max-body, and two fixed limits: exchange.h).
 * The types it takes and gives are in exchange.h, which handlers include
 * instead of this file, so the router and its handlers form no circle.
 *
 * One table (api.c) maps method + path to a handler (handler_*.c by job;
 * the page in ui.c; the OFREP adapter in ofrep.c); a path that exists
 * answers 405 with Allow for other methods, anything else 404. A route
 * takes GET and HEAD, GET, HEAD and POST, or POST only. HEAD is answered
 * as GET (the server drops the body). Every error is RFC 9457
 * application/problem+json, except what the OFREP routes answer to their
 * body (OFREP's own application/json shapes).
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
#include "exchange.h"
#include "problem.h"

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

/* Adds a header (static name and value) to a response: exchange_add_header,
 * for the server. Returns 0, or -1 when API_MAX_HEADERS are already set
 * (the header is not added). */
int api_response_add_header(struct api_response *resp, const char *name, const char *value);

/* The most routes the router's table may hold: a server keeps a row of
 * figures for each, and one for "other" (server/metrics.h). api.c checks
 * its table against it when it is compiled. */
#define API_MAX_ROUTES 31

/* The number of routes, and the index of the route a request target's path
 * names (ignoring method and query), or -1 when none does. For labels. */
size_t api_route_count(void);
int api_route_of(const char *uri, size_t uri_len);

/* The routes, for the OpenAPI check: the i-th path template
 * ("/v1/targets/{name}") and its methods ("GET, HEAD", "GET, HEAD, POST"
 * or "POST", as the Allow header says them); NULL past the end. */
const char *api_route_path(size_t i, const char **methods);

#endif /* SPLITKD_API_H */
