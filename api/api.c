/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The router: one table of method + path -> handler (handler.c), the
 * 404/405 fallback, and the turn of what a handler left into a response,
 * with conditional GET (etag.c) for the routes that take it.
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "etag.h"
#include "handler.h"

#define CT_JSON "application/json"
#define CT_PROBLEM "application/problem+json"

/* Unset members are 0: no {name}, no query parameters, no POST. */
struct route {
	const char *path;     /* an exact path, or the prefix of a {name} route ('/' last) */
	const char *template; /* a {name} route's path as OpenAPI writes it; NULL: exact */
	unsigned get_fields;  /* query parameters GET takes; a POST body carries its own */
	handler_fn *get;
	handler_fn *post; /* NULL: GET and HEAD only */
};

static const struct route routes[] = {
	{.path = "/v1/splits", .get_fields = DECIDE_FIELDS, .get = handler_splits_get,
	 .post = handler_splits_post},
	{.path = "/v1/targets", .get = handler_targets},
	{.path = "/v1/targets/", .template = "/v1/targets/{name}", .get = handler_target},
	{.path = "/v1/models", .get = handler_models},
	{.path = "/v1/models/", .template = "/v1/models/{name}", .get = handler_model},
	{.path = "/v1/catalog", .get = handler_catalog},
	{.path = "/v1/policy", .get_fields = QUERY_BIT(QF_SPELLING), .get = handler_policy},
	{.path = "/v1/matrix", .get_fields = HANDLER_MATRIX_FIELDS, .get = handler_matrix},
	{.path = "/healthz", .get = handler_healthz},
	{.path = "/readyz", .get = handler_readyz},
	{.path = "/version", .get = handler_version},
	{.path = "/openapi.json", .get = handler_openapi},
	{.path = "/problems/", .template = "/problems/{type}", .get = handler_problem_type},
};

#define NUM_ROUTES (sizeof(routes) / sizeof(routes[0]))

const char *api_route_path(size_t i, const char **methods)
{
	if (i >= NUM_ROUTES) {
		return NULL;
	}
	*methods = routes[i].post != NULL ? "GET, HEAD, POST" : "GET, HEAD";
	return routes[i].template != NULL ? routes[i].template : routes[i].path;
}

size_t api_route_count(void)
{
	return NUM_ROUTES;
}

/* Whether a raw path (no query) names a route: an exact path, or for a
 * {name} route its prefix and one more non-empty segment. */
static bool path_matches(const struct route *r, const char *path, size_t len)
{
	size_t n = strlen(r->path);

	if (r->template == NULL) {
		return len == n && memcmp(path, r->path, n) == 0;
	}
	return len > n && memcmp(path, r->path, n) == 0 && memchr(path + n, '/', len - n) == NULL;
}

/* Matches a raw path; for a {name} route, decodes the name into `out`
 * (room for the path's length) and points *name at it. */
static bool match(const struct route *r, struct slice path, char *out, struct slice *name)
{
	size_t n = strlen(r->path);
	long len;

	if (!path_matches(r, path.p, path.len)) {
		return false;
	}
	if (r->template == NULL) {
		return true;
	}
	len = query_percent_decode(path.p + n, path.len - n, out);
	if (len <= 0) {
		return false;
	}
	*name = (struct slice){out, (size_t)len};
	return true;
}

int api_route_of(const char *uri, size_t uri_len)
{
	const char *qmark = memchr(uri, '?', uri_len);
	size_t len = qmark ? (size_t)(qmark - uri) : uri_len;

	for (size_t i = 0; i < NUM_ROUTES; i++) {
		if (path_matches(&routes[i], uri, len)) {
			return (int)i;
		}
	}
	return -1;
}

static void answer_problem(struct api_response *resp, struct jsonw *w, const struct problem *p)
{
	jsonw_cleanup(w);
	jsonw_init(w, 512);
	problem_write(w, p);
	resp->status = problem_status(p->kind);
	resp->content_type = CT_PROBLEM;
}

static const char oom_body[] =
	"{\"type\":\"/problems/internal\",\"title\":\"Internal error\",\"status\":500,"
	"\"detail\":\"out of memory\"}";

static void answer_oom(struct api_response *resp)
{
	free(resp->owned);
	resp->status = 500;
	resp->content_type = CT_PROBLEM;
	resp->allow = NULL;
	resp->etag[0] = '\0';
	resp->body = oom_body;
	resp->body_len = sizeof(oom_body) - 1;
	resp->owned = NULL;
}

/* Finds the route, checks the method and reads the query; then the
 * handler runs. Returns the route, or NULL when none matched; the call
 * holds the answer or the problem. `scratch` has room for twice the
 * longest request target: the decoded query, then a decoded {name}. */
static const struct route *dispatch(struct handler_call *c, char *scratch,
				    struct api_response *resp, bool *is_get)
{
	const struct api_request *req = c->req;
	const char *qmark = memchr(req->uri, '?', req->uri_len);
	struct slice path = {req->uri, qmark ? (size_t)(qmark - req->uri) : req->uri_len};
	struct slice query = {qmark ? qmark + 1 : NULL, qmark ? req->uri_len - path.len - 1 : 0};
	const struct route *route = NULL;

	for (size_t i = 0; i < NUM_ROUTES && route == NULL; i++) {
		if (match(&routes[i], path, scratch + API_MAX_URI, &c->name)) {
			route = &routes[i];
		}
	}
	if (route == NULL) {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL,
			    "no resource at this path (GET /openapi.json lists the routes)");
		handler_fail(c);
		return NULL;
	}
	resp->route = (int)(route - routes);
	*is_get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	if (!*is_get && !(strcmp(req->method, "POST") == 0 && route->post != NULL)) {
		const char *template = api_route_path((size_t)resp->route, &resp->allow);

		problem_set(&c->problem, PROBLEM_METHOD_NOT_ALLOWED, NULL, NULL, "%s takes %s",
			    template, resp->allow);
		handler_fail(c);
	} else if (query_parse(query.p, query.len, scratch, *is_get ? route->get_fields : 0, &c->q,
			       &c->problem) != 0) {
		handler_fail(c);
	} else {
		(*is_get ? route->get : route->post)(c);
	}
	return route;
}

/* A 200 to GET or HEAD carries its tag; If-None-Match with that tag (or
 * "*") turns it into a 304 without a body. */
static void answer_conditionally(const struct api_request *req, struct api_response *resp)
{
	etag_of(resp->body, resp->body_len, resp->etag);
	if (req->if_none_match != NULL && etag_none_match(req->if_none_match, resp->etag)) {
		resp->status = 304;
		free(resp->owned);
		resp->owned = NULL;
		resp->body = "";
		resp->body_len = 0;
	}
}

void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp)
{
	struct handler_call c;
	/* twice the URI: the query's decoding, then a decoded path name. On the
	 * stack: no allocation for it, and 16 KiB is far inside a thread's. */
	char scratch[2 * API_MAX_URI];
	bool is_get = false;

	memset(resp, 0, sizeof(*resp));
	resp->route = -1;
	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.req = req;
	c.status = 200;
	jsonw_init(&c.w, 1024);
	if (req->uri_len > API_MAX_URI) {
		problem_set(&c.problem, PROBLEM_URI_TOO_LONG, NULL, NULL,
			    "the request target is %zu bytes; the limit is %d", req->uri_len,
			    API_MAX_URI);
		handler_fail(&c);
	} else if (!c.w.failed) {
		dispatch(&c, scratch, resp, &is_get);
	}
	if (c.failed) {
		answer_problem(resp, &c.w, &c.problem);
	} else {
		resp->status = c.status;
		resp->content_type = CT_JSON;
	}
	resp->owned = jsonw_take(&c.w, &resp->body_len);
	resp->body = resp->owned;
	if (resp->owned == NULL) {
		answer_oom(resp);
	} else if (resp->status == 200 && is_get) {
		answer_conditionally(req, resp);
	}
}

void api_response_cleanup(struct api_response *resp)
{
	free(resp->owned);
	resp->owned = NULL;
	resp->body = NULL;
	resp->body_len = 0;
}
