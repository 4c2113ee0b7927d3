/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_splits.h"

#include "answer.h"
#include "decide.h"
#include "jsonin.h"

/* Reports a decision to the context's on_decision: by target name (NULL
 * for an sm_count alone) and the kind of policy it resolved to. */
static void count_decision(const struct handler_call *c, const struct decision *d)
{
	handler_count_decision(c, d->target ? d->target->names.name : NULL,
			       d->res.resolved.policy.kind);
}

/* One decision, answered, or its problem. */
static void answer_one(struct handler_call *c, const struct query *q)
{
	struct decision d;

	if (decide_run(c->ctx->catalog, q, &d, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	count_decision(c, &d);
	answer_write(&c->w, &d, c->ctx->catalog);
}

void handler_splits_get(struct handler_call *c)
{
	answer_one(c, &c->q);
}

static void write_batch(struct handler_call *c, const cJSON *queries)
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
		answer_write(&c->w, &d, c->ctx->catalog);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_u64(&c->w, "failures", failures);
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

/* {"queries": [...]}: nothing else beside it, 1..max_batch queries. */
static void post_batch(struct handler_call *c, const cJSON *root, const cJSON *queries)
{
	static const char *const batch_fields[] = {"queries"};
	const char *bad;
	int n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;

	if (jsonin_check_keys(root, batch_fields, 1, &bad) != JSONIN_KEYS_OK) {
		problem_set(&c->problem, PROBLEM_UNKNOWN_PARAMETER, bad, NULL,
			    "a batch body has only \"queries\"; \"%s\" is not allowed beside it", bad);
		handler_fail(c);
	} else if (n < 1) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, "queries", NULL,
			    "queries must be a non-empty array of query objects");
		handler_fail(c);
	} else if ((size_t)n > c->limits->max_batch) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, "queries", NULL,
			    "%d queries; a batch holds at most %zu", n, c->limits->max_batch);
		handler_fail(c);
	} else {
		write_batch(c, queries);
	}
}

void handler_splits_post(struct handler_call *c)
{
	char why[160];
	struct jsonin_arena arena = {0};
	const cJSON *root, *queries;
	struct query q;

	if (!handler_is_json(c->req->content_type)) {
		problem_set(&c->problem, PROBLEM_UNSUPPORTED_MEDIA_TYPE, NULL, NULL,
			    "POST /v1/splits takes Content-Type: application/json, not %s",
			    c->req->content_type ? c->req->content_type : "no content type");
		handler_fail(c);
		return;
	}
	if (c->req->body_len > c->limits->max_body) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, NULL, NULL,
			    "the body is over %zu bytes", c->limits->max_body);
		handler_fail(c);
		return;
	}
	root = jsonin_parse_in(&arena, c->req->body, c->req->body_len, why, sizeof(why));
	queries = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "queries") : NULL;
	if (root == NULL) {
		problem_set(&c->problem, PROBLEM_MALFORMED_JSON, NULL, NULL, "%s", why);
		handler_fail(c);
	} else if (queries != NULL) {
		post_batch(c, root, queries);
	} else if (query_from_json(root, DECIDE_FIELDS, &q, &c->problem) != 0) {
		handler_fail(c); /* one decision, with the same fields as the query string */
	} else {
		answer_one(c, &q);
	}
	/* a failed parse may still have taken arena blocks */
	jsonin_arena_cleanup(&arena);
}

