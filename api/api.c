/* SPDX-License-Identifier: AGPL-3.0-only */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decide.h"
#include "embedded.h"
#include "jsonin.h"
#include "jsonw.h"
#include "problem.h"
#include "query.h"
#include "quote.h"
#include "slice.h"

#define CT_JSON "application/json"
#define CT_PROBLEM "application/problem+json"

/* Per-request state a handler needs: the parsed path and query. */
struct call {
	const struct api_context *ctx;
	const struct api_request *req;
	struct slice path;   /* raw, without the query */
	struct slice query;  /* raw, after '?'; p NULL when none */
	struct slice suffix; /* the {name} of a prefix route, decoded */
	struct query q;           /* the query string, parsed for the route */
	char *scratch;            /* decoding space, 2 * API_MAX_URI bytes */
	struct jsonw w;
	int status;
	struct problem problem;
	bool failed; /* problem holds the answer */
};

typedef void handler_fn(struct call *c);

struct route {
	const char *path; /* exact path, or prefix ending in '/' with has_name */
	bool has_name;
	const char *template; /* for OpenAPI */
	unsigned get_fields;  /* query parameters GET takes; a POST body carries its own */
	handler_fn *get;
	handler_fn *post; /* NULL: GET and HEAD only */
};

static int fail(struct call *c)
{
	c->failed = true;
	return -1;
}

/* Parses the query for an endpoint that takes `allowed` fields. */
static int read_query(struct call *c, unsigned allowed, struct query *q)
{
	if (query_parse(c->query.p, c->query.len, c->scratch, allowed, q, &c->problem) != 0) {
		return fail(c);
	}
	return 0;
}

static void count_decision(const struct call *c, const struct decision *d)
{
	if (c->ctx->on_decision != NULL) {
		c->ctx->on_decision(c->ctx->on_decision_cls, d->target ? d->target->name : NULL,
				    d->resolved.policy.kind);
	}
}

/* ------------------------------------------------------------ handlers */

static void get_splits(struct call *c)
{
	struct decision d;

	if (decide_run(c->ctx->catalog, &c->q, &d, &c->problem) != 0) {
		fail(c);
		return;
	}
	count_decision(c, &d);
	decide_write(&c->w, &d, c->ctx->catalog);
}

static bool is_json_media_type(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (ct == NULL) {
		return false;
	}
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, want, n) != 0) {
		return false;
	}
	ct += n + strspn(ct + n, " \t");
	return *ct == '\0' || *ct == ';';
}

static void write_batch(struct call *c, const cJSON *queries)
{
	size_t count = (size_t)cJSON_GetArraySize(queries), failures = 0;
	const cJSON *item;

	/* an answer is ~500 bytes: size the buffer once, not by doubling */
	jsonw_reserve(&c->w, count * 640);
	jsonw_object_begin(&c->w);
	jsonw_kv_u64(&c->w, "count", count);
	jsonw_key(&c->w, "results");
	jsonw_array_begin(&c->w);
	cJSON_ArrayForEach(item, queries) {
		struct query q;
		struct decision d;
		struct problem p;

		if (query_from_json(item, DECIDE_FIELDS, &q, &p) != 0 ||
		    decide_run(c->ctx->catalog, &q, &d, &p) != 0) {
			failures++;
			jsonw_object_begin(&c->w);
			jsonw_key(&c->w, "error");
			problem_write(&c->w, &p);
			jsonw_object_end(&c->w);
			continue;
		}
		count_decision(c, &d);
		decide_write(&c->w, &d, c->ctx->catalog);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_u64(&c->w, "failures", failures);
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

static void post_splits(struct call *c)
{
	static const char *const batch_fields[] = {"queries"};
	char why[160];
	struct jsonin_arena arena = {0};
	cJSON *root = NULL;
	const cJSON *queries;
	const char *bad;
	struct query q;
	struct decision d;
	int n;

	if (!is_json_media_type(c->req->content_type)) {
		problem_set(&c->problem, PROBLEM_UNSUPPORTED_MEDIA_TYPE, NULL, NULL,
			    "POST /v1/splits takes Content-Type: application/json, not %s",
			    c->req->content_type ? c->req->content_type : "no content type");
		fail(c);
		return;
	}
	if (c->req->body_len > API_MAX_BODY) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, NULL, NULL,
			    "the body is over %u bytes", API_MAX_BODY);
		fail(c);
		return;
	}
	root = jsonin_parse_in(&arena, c->req->body, c->req->body_len, why, sizeof(why));
	if (root == NULL) {
		/* a failed parse may still have taken arena blocks */
		problem_set(&c->problem, PROBLEM_MALFORMED_JSON, NULL, NULL, "%s", why);
		fail(c);
		goto done;
	}
	queries = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "queries") : NULL;
	if (queries == NULL) {
		/* one decision, with the same fields as the query string */
		if (query_from_json(root, DECIDE_FIELDS, &q, &c->problem) != 0 ||
		    decide_run(c->ctx->catalog, &q, &d, &c->problem) != 0) {
			fail(c);
		} else {
			count_decision(c, &d);
			decide_write(&c->w, &d, c->ctx->catalog);
		}
		goto done;
	}
	if (jsonin_check_keys(root, batch_fields, 1, &bad) != JSONIN_KEYS_OK) {
		problem_set(&c->problem, PROBLEM_UNKNOWN_PARAMETER, bad, NULL,
			    "a batch body has only \"queries\"; \"%s\" is not allowed beside it", bad);
		fail(c);
		goto done;
	}
	n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;
	if (n < 1) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, "queries", NULL,
			    "queries must be a non-empty array of query objects");
		fail(c);
	} else if (n > API_MAX_BATCH) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, "queries", NULL,
			    "%d queries; a batch holds at most %d", n, API_MAX_BATCH);
		fail(c);
	} else {
		write_batch(c, queries);
	}
done:
	jsonin_arena_cleanup(&arena);
}

/* GET /v1/targets and /v1/models: the digest and every entry of a kind. */
static void get_list(struct call *c, bool targets)
{
	const struct catalog *cat = c->ctx->catalog;
	size_t n = targets ? cat->num_targets : cat->num_models;

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "catalog", cat->digest);
	jsonw_key(&c->w, targets ? "targets" : "models");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		if (targets) {
			catalog_write_target(&c->w, &cat->targets[i]);
		} else {
			catalog_write_model(&c->w, &cat->models[i]);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

static void get_targets(struct call *c)
{
	get_list(c, true);
}

static void get_models(struct call *c)
{
	get_list(c, false);
}

static void get_target(struct call *c)
{
	const struct catalog *cat = c->ctx->catalog;
	const struct catalog_target *t;

	t = catalog_find_target(cat, c->suffix.p, c->suffix.len);
	if (t == NULL) {
		problem_unknown_name(&c->problem, PROBLEM_UNKNOWN_TARGET, NULL, "target", c->suffix.p,
				     c->suffix.len,
				     catalog_suggest_target(cat, c->suffix.p, c->suffix.len),
				     "GET /v1/targets");
		fail(c);
		return;
	}
	catalog_write_target(&c->w, t);
}

static void get_model(struct call *c)
{
	const struct catalog *cat = c->ctx->catalog;
	const struct catalog_model *m;

	m = catalog_find_model(cat, c->suffix.p, c->suffix.len);
	if (m == NULL) {
		problem_unknown_name(&c->problem, PROBLEM_UNKNOWN_MODEL, NULL, "model", c->suffix.p,
				     c->suffix.len, catalog_suggest_model(cat, c->suffix.p, c->suffix.len),
				     "GET /v1/models");
		fail(c);
		return;
	}
	catalog_write_model(&c->w, m);
}

static void get_catalog(struct call *c)
{

	catalog_write(&c->w, c->ctx->catalog, true);
}

static void get_policy(struct call *c)
{
	const struct query *q = &c->q;
	struct splitk_policy pol;
	uint32_t requested = 0;
	char label[SPLITK_LABEL_MAX];
	bool ok;
	static const char *const kinds[] = {"legacy", "auto", "pinned"};

	if (q->spelling.p == NULL) {
		problem_set(&c->problem, PROBLEM_MISSING_PARAMETER, "spelling", NULL,
			    "give the spelling to check, e.g. /v1/policy?spelling=auto");
		fail(c);
		return;
	}
	ok = splitk_parse_requested(q->spelling.p, q->spelling.len, &pol, &requested);
	jsonw_object_begin(&c->w);
	jsonw_key(&c->w, "spelling");
	jsonw_strn(&c->w, q->spelling.p, q->spelling.len);
	jsonw_kv_bool(&c->w, "parses", ok);
	if (ok) {
		splitk_label(pol, label);
		jsonw_kv_str(&c->w, "policy", label);
		jsonw_kv_str(&c->w, "kind", kinds[pol.kind]);
		jsonw_key(&c->w, "pinned");
		if (pol.kind == SPLITK_PINNED) {
			jsonw_u64(&c->w, pol.pinned);
		} else {
			jsonw_null(&c->w);
		}
		jsonw_kv_bool(&c->w, "clamped", pol.kind == SPLITK_PINNED && requested != pol.pinned);
		jsonw_kv_str(&c->w, "note",
			     pol.kind == SPLITK_PINNED
				     ? "a pinned count, clamped to 1..16; 0/off/false/no mean 1 (no split-K)"
				     : "a named policy");
	} else {
		jsonw_key(&c->w, "policy");
		jsonw_null(&c->w);
		jsonw_key(&c->w, "kind");
		jsonw_null(&c->w);
		jsonw_key(&c->w, "pinned");
		jsonw_null(&c->w);
		jsonw_kv_bool(&c->w, "clamped", false);
		jsonw_kv_str(&c->w, "note",
			     "does not parse: as ATLAS_ATTN_DECODE_SPLITK the engine ignores it and "
			     "keeps the target's declaration; in a catalog it is refused");
	}
	jsonw_object_end(&c->w);
}

static void get_matrix(struct call *c)
{
	const struct catalog *cat = c->ctx->catalog;
	const struct query *q = &c->q;
	struct decision d;
	uint32_t mb, seqs, rows;
	struct splitk_policy ignored;

	mb = q->max_batch_size.set ? q->max_batch_size.v : 1;
	seqs = q->num_seqs.set ? q->num_seqs.v : 1;
	rows = q->max_rows.set ? q->max_rows.v : mb;
	jsonw_object_begin(&c->w);
	jsonw_kv_u64(&c->w, "max_batch_size", mb);
	jsonw_kv_u64(&c->w, "num_seqs", seqs);
	jsonw_kv_u64(&c->w, "max_rows", rows);
	jsonw_key(&c->w, "override");
	if (q->override.p != NULL) {
		jsonw_strn(&c->w, q->override.p, q->override.len);
	} else {
		jsonw_null(&c->w);
	}
	jsonw_key(&c->w, "warnings");
	jsonw_array_begin(&c->w);
	if (q->override.p != NULL && !splitk_parse(q->override.p, q->override.len, &ignored)) {
		char msg[200], quoted[72];

		quote_excerpt(q->override.p, q->override.len, quoted, sizeof(quoted));
		snprintf(msg, sizeof(msg),
			 "override \"%s\" does not parse, so it is ignored and each target's declared "
			 "policy stands, as the engine does",
			 quoted);
		jsonw_str(&c->w, msg);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_str(&c->w, "catalog", cat->digest);
	jsonw_key(&c->w, "cells");
	jsonw_array_begin(&c->w);
	for (size_t t = 0; t < cat->num_targets; t++) {
		for (size_t m = 0; m < cat->num_models; m++) {
			char label[SPLITK_LABEL_MAX];

			decide_pair(&cat->targets[t], &cat->models[m], mb, seqs, rows, q->override, &d);
			splitk_label(d.resolved.policy, label);
			jsonw_object_begin(&c->w);
			jsonw_kv_str(&c->w, "target", d.target->name);
			jsonw_kv_str(&c->w, "model", d.model->name);
			jsonw_kv_str(&c->w, "policy", label);
			jsonw_kv_str(&c->w, "source", d.resolved.from_override ? "override" : "declared");
			jsonw_kv_u64(&c->w, "num_splits", d.num_splits);
			jsonw_kv_u64(&c->w, "workspace_slots", d.workspace_slots);
			decide_write_bytes(&c->w, "workspace_bytes", d.workspace_bytes);
			jsonw_object_end(&c->w);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

static void get_healthz(struct call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", "ok");
	jsonw_object_end(&c->w);
}

static void get_readyz(struct call *c)
{

	c->status = c->ctx->draining ? 503 : 200;
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", c->ctx->draining ? "draining" : "ready");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

static void get_version(struct call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "name", "splitkd");
	jsonw_kv_str(&c->w, "version", c->ctx->version ? c->ctx->version : "unknown");
	jsonw_kv_str(&c->w, "build", c->ctx->build ? c->ctx->build : "unknown");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

static void get_openapi(struct call *c)
{

	jsonw_raw(&c->w, embedded_openapi_json, embedded_openapi_json_len);
}

static void get_problem_type(struct call *c)
{

	if (!problem_write_type(&c->w, c->suffix.p, c->suffix.len)) {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL, "no such problem type");
		fail(c);
	}
}

#define MATRIX_FIELDS                                                                 \
	(QUERY_BIT(QF_MAX_BATCH_SIZE) | QUERY_BIT(QF_NUM_SEQS) | QUERY_BIT(QF_MAX_ROWS) | \
	 QUERY_BIT(QF_OVERRIDE))

static const struct route routes[] = {
	{"/v1/splits", false, "/v1/splits", DECIDE_FIELDS, get_splits, post_splits},
	{"/v1/targets", false, "/v1/targets", 0, get_targets, NULL},
	{"/v1/targets/", true, "/v1/targets/{name}", 0, get_target, NULL},
	{"/v1/models", false, "/v1/models", 0, get_models, NULL},
	{"/v1/models/", true, "/v1/models/{name}", 0, get_model, NULL},
	{"/v1/catalog", false, "/v1/catalog", 0, get_catalog, NULL},
	{"/v1/policy", false, "/v1/policy", QUERY_BIT(QF_SPELLING), get_policy, NULL},
	{"/v1/matrix", false, "/v1/matrix", MATRIX_FIELDS, get_matrix, NULL},
	{"/healthz", false, "/healthz", 0, get_healthz, NULL},
	{"/readyz", false, "/readyz", 0, get_readyz, NULL},
	{"/version", false, "/version", 0, get_version, NULL},
	{"/openapi.json", false, "/openapi.json", 0, get_openapi, NULL},
	{"/problems/", true, "/problems/{type}", 0, get_problem_type, NULL},
};

#define NUM_ROUTES (sizeof(routes) / sizeof(routes[0]))

const char *api_route_path(size_t i, const char **methods)
{
	if (i >= NUM_ROUTES) {
		return NULL;
	}
	*methods = routes[i].post != NULL ? "GET, HEAD, POST" : "GET, HEAD";
	return routes[i].template;
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

	if (!r->has_name) {
		return len == n && memcmp(path, r->path, n) == 0;
	}
	return len > n && memcmp(path, r->path, n) == 0 && memchr(path + n, '/', len - n) == NULL;
}

/* Matches the request's path; for a {name} route, decodes the name. */
static bool match(const struct route *r, struct call *c)
{
	size_t n = strlen(r->path);
	long len;

	if (!path_matches(r, c->path.p, c->path.len)) {
		return false;
	}
	if (!r->has_name) {
		return true;
	}
	/* The query scratch is not in use yet: decode the name into its tail. */
	len = query_percent_decode(c->path.p + n, c->path.len - n, c->scratch + API_MAX_URI);
	if (len <= 0) {
		return false;
	}
	c->suffix = (struct slice){c->scratch + API_MAX_URI, (size_t)len};
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

/* Eight bytes as a little-endian number on any host, so replicas on
 * different hardware agree on tags; compilers turn it into one load. */
static uint64_t load_le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

/* A 64-bit hash of the body, eight bytes a step (byte-at-a-time FNV-1a was
 * most of api_handle's time under load), finished with MurmurHash3's
 * fmix64 so every input bit reaches every output bit. Any change of a byte
 * changes the tag with overwhelming likelihood; an ETag needs no more. */
static uint64_t body_hash(const char *body, size_t len)
{
	const unsigned char *p = (const unsigned char *)body;
	uint64_t h = 0x9E3779B97F4A7C15u ^ len;
	unsigned char tail[8] = {0};
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		h = (h ^ load_le64(p + i)) * 0xBF58476D1CE4E5B9u;
		h ^= h >> 31;
	}
	memcpy(tail, p + i, len - i);
	h = (h ^ load_le64(tail)) * 0x94D049BB133111EBu;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDu;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53u;
	h ^= h >> 33;
	return h;
}

static void make_etag(const char *body, size_t len, char out[24])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t h = body_hash(body, len);

	out[0] = '"';
	for (int i = 0; i < 16; i++) {
		out[1 + i] = hex[(h >> (60 - 4 * i)) & 0xF];
	}
	out[17] = '"';
	out[18] = '\0';
}

/* If-None-Match (RFC 9110 13.1.2): "*", or a list of entity-tags compared
 * weakly (a W/ prefix is ignored). */
static bool none_match_hits(const char *header, const char *etag)
{
	const char *p = header;
	size_t tag_len = strlen(etag);

	while (*p != '\0') {
		const char *start;

		while (*p == ' ' || *p == '\t' || *p == ',') {
			p++;
		}
		if (*p == '*') {
			return true;
		}
		if (p[0] == 'W' && p[1] == '/') {
			p += 2;
		}
		start = p;
		if (*p == '"') {
			p = strchr(p + 1, '"');
			if (p == NULL) {
				return false; /* malformed: no match, answer in full */
			}
			p++;
		} else {
			while (*p != '\0' && *p != ',') {
				p++;
			}
		}
		if ((size_t)(p - start) == tag_len && memcmp(start, etag, tag_len) == 0) {
			return true;
		}
		while (*p != '\0' && *p != ',') {
			p++;
		}
	}
	return false;
}

static const char oom_body[] =
	"{\"type\":\"/problems/internal\",\"title\":\"Internal error\",\"status\":500,"
	"\"detail\":\"out of memory\"}";

void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp)
{
	struct call c;
	/* twice the URI: the query's decoding, then a decoded path name. On the
	 * stack: no allocation for it, and 16 KiB is far inside a thread's. */
	char scratch[2 * API_MAX_URI];
	const struct route *route = NULL;
	const char *qmark;
	bool is_get = false, is_post;

	memset(resp, 0, sizeof(*resp));
	resp->route = -1;
	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.req = req;
	c.status = 200;
	c.scratch = scratch;
	jsonw_init(&c.w, 1024);
	if (c.w.failed) {
		goto oom;
	}

	if (req->uri_len > API_MAX_URI) {
		problem_set(&c.problem, PROBLEM_URI_TOO_LONG, NULL, NULL,
			    "the request target is %zu bytes; the limit is %d", req->uri_len,
			    API_MAX_URI);
		fail(&c);
		goto answer;
	}
	qmark = memchr(req->uri, '?', req->uri_len);
	c.path = (struct slice){req->uri, qmark ? (size_t)(qmark - req->uri) : req->uri_len};
	if (qmark != NULL) {
		c.query = (struct slice){qmark + 1, req->uri_len - c.path.len - 1};
	}
	for (size_t i = 0; i < NUM_ROUTES && route == NULL; i++) {
		if (match(&routes[i], &c)) {
			route = &routes[i];
		}
	}
	if (route == NULL) {
		problem_set(&c.problem, PROBLEM_NOT_FOUND, NULL, NULL,
			    "no resource at this path (GET /openapi.json lists the routes)");
		fail(&c);
		goto answer;
	}
	resp->route = (int)(route - routes);
	is_get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	is_post = strcmp(req->method, "POST") == 0;
	if (!is_get && !(is_post && route->post != NULL)) {
		api_route_path((size_t)resp->route, &resp->allow);
		problem_set(&c.problem, PROBLEM_METHOD_NOT_ALLOWED, NULL, NULL,
			    "%s takes %s", route->template, resp->allow);
		fail(&c);
	} else if (read_query(&c, is_get ? route->get_fields : 0, &c.q) == 0) {
		(is_get ? route->get : route->post)(&c);
	}

answer:
	if (c.failed) {
		answer_problem(resp, &c.w, &c.problem);
	} else {
		resp->status = c.status;
		resp->content_type = CT_JSON;
	}
	if (c.w.failed) {
		goto oom;
	}
	resp->owned = jsonw_take(&c.w, &resp->body_len);
	resp->body = resp->owned;
	if (resp->status == 200 && is_get) {
		make_etag(resp->body, resp->body_len, resp->etag);
		if (req->if_none_match != NULL && none_match_hits(req->if_none_match, resp->etag)) {
			resp->status = 304;
			free(resp->owned);
			resp->owned = NULL;
			resp->body = "";
			resp->body_len = 0;
		}
	}
	return;
oom:
	jsonw_cleanup(&c.w);
	resp->status = 500;
	resp->content_type = CT_PROBLEM;
	resp->allow = NULL;
	resp->body = oom_body;
	resp->body_len = sizeof(oom_body) - 1;
	resp->owned = NULL;
}

void api_response_cleanup(struct api_response *resp)
{
	free(resp->owned);
	resp->owned = NULL;
	resp->body = NULL;
	resp->body_len = 0;
}
