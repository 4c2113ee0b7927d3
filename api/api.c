/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The router: one table of method + path -> handler (handler_*.c, ui.c,
 * ofrep.c), the 404/405 fallback, and the turn of what a handler left into
 * a response, with conditional GET (etag.c) for the routes that take it.
 */
#include "api.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "etag.h"
#include "fields.h"
#include "handler.h"
#include "handler_catalog.h"
#include "handler_engines.h"
#include "handler_policy.h"
#include "handler_revisions.h"
#include "handler_service.h"
#include "handler_splits.h"
#include "names.h"
#include "ofrep.h"
#include "quote.h"
#include "revision.h"
#include "ui.h"

/* Unset members are 0: no {name}, no query parameters, no POST. */
struct route {
	const char *path;     /* an exact path, or the prefix of a {name} route ('/' last) */
	const char *template; /* a {name} route's path as OpenAPI writes it; NULL: exact */
	query_mask get_fields;  /* query parameters GET takes; a POST body carries its own */
	query_mask post_fields; /* query parameters POST takes beside its body */
	handler_fn *get;       /* GET and HEAD; NULL: POST only */
	handler_fn *post;      /* NULL: GET and HEAD only */
	bool conditional_post; /* a 200 to POST carries an ETag and honours If-None-Match */
	bool page_query;       /* for a browser the query is the page's state, read by its script */
	/* the server renders it (api_context.render_metrics): no query fields read,
	 * none refused, and no ETag (every scrape differs) */
	bool server_rendered;
	bool all_catalogs; /* catalog=* is the handler's to read (every catalog's stream) */
};

static handler_fn handler_metrics;

/* catalog=* on a route that takes it: no one catalog to choose. */
static bool every_catalog(const struct route *route, const struct handler_call *c)
{
	return route->all_catalogs && c->q.catalog.len == 1 && c->q.catalog.p[0] == '*' &&
	       c->q.revision.p == NULL;
}

static const struct route routes[] = {
	{.path = "/v1/splits", .get_fields = FIELDS_SPLITS_PARAMS | HANDLER_PIN_FIELD,
	 .get = handler_splits_get, .post = handler_splits_post},
	{.path = "/v1/targets", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_targets},
	{.path = "/v1/targets/", .template = "/v1/targets/{name}", .get_fields = HANDLER_CATALOG_FIELD,
	 .get = handler_target},
	{.path = "/v1/models", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_models},
	{.path = "/v1/models/", .template = "/v1/models/{name}", .get_fields = HANDLER_CATALOG_FIELD,
	 .get = handler_model},
	{.path = "/v1/catalog", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_catalog},
	/* every named catalog (handler_revisions.c) */
	{.path = "/v1/catalogs", .get = handler_catalogs},
	{.path = "/v1/policy", .get_fields = QUERY_BIT(QF_SPELLING), .get = handler_policy},
	{.path = "/v1/matrix", .get_fields = HANDLER_MATRIX_FIELDS | HANDLER_PIN_FIELD,
	 .get = handler_matrix},
	/* revisions and the change stream (handler_revisions.c) */
	{.path = "/v1/revisions", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_revisions},
	{.path = "/v1/diff",
	 .get_fields = HANDLER_MATRIX_FIELDS | QUERY_BIT(QF_FROM) | QUERY_BIT(QF_TO) |
		       HANDLER_CATALOG_FIELD,
	 .get = handler_diff},
	{.path = "/v1/catalog/diff",
	 .post_fields = HANDLER_MATRIX_FIELDS | QUERY_BIT(QF_FROM) | HANDLER_CATALOG_FIELD,
	 .post = handler_catalog_diff},
	{.path = "/v1/events", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_events,
	 .all_catalogs = true},
	/* the followed files and every reload attempt (handler_service.c) */
	{.path = "/v1/status", .get_fields = HANDLER_CATALOG_FIELD, .get = handler_status},
	{.path = "/v1/history", .get_fields = QUERY_BIT(QF_LIMIT) | QUERY_BIT(QF_BEFORE),
	 .get = handler_history},
	/* the other engines beside the seed's rule (handler_engines.c) */
	{.path = "/v1/engines", .get = handler_engines},
	{.path = "/v1/compare", .get_fields = HANDLER_COMPARE_FIELDS, .get = handler_compare},
	/* the worst case over every batch of a serve (engines.h) */
	{.path = "/v1/reserve", .get_fields = FIELDS_SPLITS_PARAMS | HANDLER_PIN_FIELD,
	 .get = handler_reserve_get},
	{.path = "/healthz", .get = handler_healthz},
	{.path = "/readyz", .get = handler_readyz},
	{.path = "/version", .get = handler_version},
	{.path = "/openapi.json", .get = handler_openapi},
	{.path = "/problems/", .template = "/problems/{type}", .get = handler_problem_type},
	/* the page (ui.c); "/ui/" is no route: the page's URLs are relative */
	{.path = "/", .get = handler_root, .page_query = true},
	{.path = "/ui", .get = handler_ui},
	{.path = "/ui/app.js", .get = handler_ui_app_js},
	{.path = "/ui/style.css", .get = handler_ui_style_css},
	/* OFREP (ofrep.c) */
	{.path = "/ofrep/v1/evaluate/flags/", .template = "/ofrep/v1/evaluate/flags/{key}",
	 .post = handler_ofrep_evaluate_flag},
	{.path = "/ofrep/v1/evaluate/flags", .post = handler_ofrep_evaluate_flags,
	 .conditional_post = true,
	 .post_fields = QUERY_BIT(QF_FLAG_CONFIG_ETAG) | QUERY_BIT(QF_FLAG_CONFIG_LAST_MODIFIED)},
	{.path = "/ofrep/v1/configuration", .get = handler_ofrep_configuration},
	/* last, so the index at / lists it last and its metrics row stays last */
	{.path = "/metrics", .get = handler_metrics, .server_rendered = true},
};

#define NUM_ROUTES (sizeof(routes) / sizeof(routes[0]))
_Static_assert(NUM_ROUTES <= API_MAX_ROUTES, "more routes than API_MAX_ROUTES: raise it, and "
	       "the server's rows of figures with it");

const char *api_route_path(size_t i, const char **methods)
{
	if (i >= NUM_ROUTES) {
		return NULL;
	}
	if (routes[i].get == NULL) {
		*methods = "POST";
	} else {
		*methods = routes[i].post != NULL ? "GET, HEAD, POST" : "GET, HEAD";
	}
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

/* GET /metrics: the server's text, copied into the call's body. */
static void handler_metrics(struct handler_call *c)
{
	char *text;
	size_t len = 0;

	if (c->ctx->render_metrics == NULL) {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL, "this server keeps no metrics");
		handler_fail(c);
		return;
	}
	text = c->ctx->render_metrics(c->ctx->render_metrics_cls, c->ctx->catalog, &len);
	if (text == NULL) {
		c->w.failed = true; /* out of memory: the static 500 */
		return;
	}
	jsonw_raw(&c->w, text, len);
	free(text);
	c->content_type = API_CT_PROMETHEUS;
}

static void answer_problem(struct api_response *resp, struct jsonw *w, const struct problem *p)
{
	jsonw_cleanup(w);
	jsonw_init(w, 512);
	problem_write(w, p);
	resp->status = problem_status(p->kind);
	resp->content_type = API_CT_PROBLEM;
}

static const char oom_body[] =
	"{\"type\":\"/problems/internal\",\"title\":\"Internal error\",\"status\":500,"
	"\"detail\":\"out of memory\"}";

static void answer_oom(struct api_response *resp)
{
	free(resp->owned);
	resp->status = 500;
	resp->content_type = API_CT_PROBLEM;
	resp->allow = NULL;
	resp->etag[0] = '\0';
	resp->num_headers = 0;
	resp->body = oom_body;
	resp->body_len = sizeof(oom_body) - 1;
	resp->owned = NULL;
}

/* The 404 of a path no route has, with the nearest route's path by the
 * house's did-you-mean (/v1/split suggests /v1/splits, /metric /metrics);
 * a {name} route is offered by its exact sibling (/v1/targets). */
static void __attribute__((cold)) not_found(struct handler_call *c, struct slice path)
{
	struct names_near near;
	char quoted[QUOTE_MAX];

	/* NAMES_SAME: routes are case-sensitive, so /V1/Splits suggests /v1/splits */
	names_near_init(&near, path.p, path.len, NAMES_SAME);
	for (size_t i = 0; i < NUM_ROUTES; i++) {
		if (routes[i].template == NULL) {
			names_near_offer(&near, routes[i].path);
		}
	}
	if (near.best != NULL) {
		quote_excerpt(path.p, path.len, quoted, sizeof(quoted));
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, near.best,
			    "no resource at \"%s\"; did you mean \"%s\"? (GET /openapi.json lists the routes)",
			    quoted, near.best);
	} else {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL,
			    "no resource at this path (GET /openapi.json lists the routes)");
	}
	handler_fail(c);
}

/* Finds the route, checks the method and reads the query; then the
 * handler runs, and the call holds the answer or the problem. `scratch`
 * has room for the request target's length: the decoded query, then a
 * decoded {name} after it (each at most as long as it was raw). Sets
 * *conditional when a 200 would carry an ETag. */
static void dispatch(struct handler_call *c, char *scratch, bool *conditional)
{
	const struct api_request *req = c->req;
	const char *qmark = memchr(req->uri, '?', req->uri_len);
	struct slice path = {req->uri, qmark ? (size_t)(qmark - req->uri) : req->uri_len};
	struct slice query = {qmark ? qmark + 1 : NULL, qmark ? req->uri_len - path.len - 1 : 0};
	const struct route *route = NULL;
	bool is_get, is_post;

	for (size_t i = 0; i < NUM_ROUTES && route == NULL; i++) {
		if (match(&routes[i], path, scratch + query.len, &c->name)) {
			route = &routes[i];
		}
	}
	if (route == NULL) {
		not_found(c, path);
		return;
	}
	c->resp->route = (int)(route - routes);
	is_get = route->get != NULL &&
		 (api_method_is(req->method, "GET") || api_method_is(req->method, "HEAD"));
	is_post = !is_get && api_method_is(req->method, "POST") && route->post != NULL;
	*conditional = !route->server_rendered && (is_get || (is_post && route->conditional_post));
	if (!is_get && !is_post) {
		const char *template = api_route_path((size_t)c->resp->route, &c->resp->allow);

		problem_set(&c->problem, PROBLEM_METHOD_NOT_ALLOWED, NULL, NULL, "%s takes %s",
			    template, c->resp->allow);
		handler_fail(c);
	} else if (route->server_rendered ||
		   (route->page_query && is_get && ui_prefers_html(req->accept))) {
		/* no query read: the page's HTML ignores it, and so does /metrics */
		memset(&c->q, 0, sizeof(c->q));
		route->get(c);
	} else if (query_parse(query.p, query.len, scratch,
			       is_get ? route->get_fields : route->post_fields, &c->q,
			       &c->problem) != 0) {
		handler_fail(c);
	} else if ((c->q.catalog.p != NULL || c->q.revision.p != NULL) &&
		   !every_catalog(route, c) &&
		   revision_choose(c, c->q.catalog, c->q.revision, &c->problem) != 0) {
		handler_fail(c); /* catalog=NAME names none, or revision=R one this replica let go */
	} else {
		(is_get ? route->get : route->post)(c);
	}
}

/* If-Match named neither "*" nor this answer's tag: the 200 becomes a
 * 412 problem, which carries no tag. */
static void precondition_failed(struct handler_call *c)
{
	struct api_response *resp = c->resp;
	char tag[ETAG_MAX];

	memcpy(tag, resp->etag, sizeof(tag));
	free(resp->owned);
	resp->owned = NULL;
	resp->etag[0] = '\0';
	problem_set(&c->problem, PROBLEM_PRECONDITION_FAILED, NULL, NULL,
		    "If-Match names no tag of the current answer, whose tag is %s", tag);
	jsonw_init(&c->w, 512);
	answer_problem(resp, &c->w, &c->problem);
	resp->owned = jsonw_take(&c->w, &resp->body_len);
	resp->body = resp->owned;
	if (resp->owned == NULL) {
		answer_oom(resp);
	}
}

/* A 200 carries its tag. If-Match is evaluated first (RFC 9110 13.2.2):
 * neither "*" nor the tag, 412. Then If-None-Match with that tag (or "*")
 * turns it into a 304. The 304 keeps the 200's body: the server sends
 * none, but announces its length (RFC 9110 8.6: a 304's Content-Length,
 * if any, is the 200's). */
static void answer_conditionally(struct handler_call *c)
{
	const struct api_request *req = c->req;
	struct api_response *resp = c->resp;

	etag_of(resp->body, resp->body_len, resp->etag);
	if (req->if_match != NULL && !etag_match(req->if_match, resp->etag)) {
		precondition_failed(c);
	} else if (req->if_none_match != NULL && etag_none_match(req->if_none_match, resp->etag)) {
		resp->status = 304;
	}
}

/* What the handler left (or its problem), into the response. */
static void finish(struct handler_call *c, bool conditional)
{
	struct api_response *resp = c->resp;

	if (c->failed) {
		answer_problem(resp, &c->w, &c->problem);
	} else {
		resp->status = c->status;
		resp->content_type = c->content_type != NULL ? c->content_type : API_CT_JSON;
	}
	if (!c->failed && c->body.p != NULL) {
		jsonw_cleanup(&c->w); /* a static body: no copy, nothing to free */
		resp->body = c->body.p;
		resp->body_len = c->body.len;
	} else {
		resp->owned = jsonw_take(&c->w, &resp->body_len);
		resp->body = resp->owned;
		if (resp->owned == NULL) {
			answer_oom(resp);
			return;
		}
	}
	if (resp->status == 200 && conditional && !resp->stream) {
		answer_conditionally(c);
	}
}

static const struct api_limits default_limits = {API_DEFAULT_MAX_BODY, API_DEFAULT_MAX_URI,
						 API_DEFAULT_MAX_BATCH};

void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp)
{
	struct handler_call c;
	/* Decoding space for the request target: on the stack for the usual
	 * short one, allocated for a long one. */
	char small[1024], *scratch = small;
	bool conditional = false;

	memset(resp, 0, sizeof(*resp));
	resp->route = -1;
	memset(&c, 0, offsetof(struct handler_call, problem));
	c.ctx = ctx;
	c.route_path = api_route_path;
	c.req = req;
	c.resp = resp;
	c.limits = ctx->limits != NULL ? ctx->limits : &default_limits;
	c.status = 200;
	jsonw_init(&c.w, 1024);
	if (req->uri_len > c.limits->max_uri) {
		problem_set(&c.problem, PROBLEM_URI_TOO_LONG, NULL, NULL,
			    "the request target is %zu bytes; the limit is %zu", req->uri_len,
			    c.limits->max_uri);
		handler_fail(&c);
	} else {
		if (req->uri_len > sizeof(small)) {
			scratch = malloc(req->uri_len);
		}
		if (scratch == NULL) {
			jsonw_cleanup(&c.w);
			answer_oom(resp);
			return;
		}
		if (!c.w.failed) {
			dispatch(&c, scratch, &conditional);
		}
	}
	finish(&c, conditional);
	if (scratch != small) {
		free(scratch);
	}
}

void api_problem_answer(struct api_response *resp, enum problem_kind kind, const char *detail)
{
	struct problem p;
	struct jsonw w;

	memset(resp, 0, sizeof(*resp));
	resp->route = -1;
	problem_set(&p, kind, NULL, NULL, "%s", detail);
	jsonw_init(&w, 256);
	problem_write(&w, &p);
	resp->status = problem_status(kind);
	resp->content_type = API_CT_PROBLEM;
	resp->owned = jsonw_take(&w, &resp->body_len);
	resp->body = resp->owned;
	if (resp->owned == NULL) {
		answer_oom(resp);
	}
}

void api_response_cleanup(struct api_response *resp)
{
	free(resp->owned);
	resp->owned = NULL;
	resp->body = NULL;
	resp->body_len = 0;
}

int api_response_add_header(struct api_response *resp, const char *name, const char *value)
{
	return exchange_add_header(resp, name, value);
}
