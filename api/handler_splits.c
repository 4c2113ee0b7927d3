/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_splits.h"

#include <string.h>

#include "answer.h"
#include "batchfast.h"
#include "decide.h"
#include "engines.h"
#include "fields.h"
#include "jsonin.h"
#include "revision.h"

/* One decision, answered, or its problem. */
static void answer_one(struct handler_call *c, const struct query *q)
{
	struct decision d;
	unsigned mask = FIELDS_ALL;

	int engine = 1;

	if ((q->fields.p != NULL && fields_parse(q->fields, "fields", &mask, &c->problem) != 0) ||
	    decide_run(c->ctx->catalog, q, &d, &c->problem) != 0 ||
	    (q->engine.p != NULL &&
	     (engine = engines_answer(c->ctx, &c->w, q, &d, c->ctx->catalog, q->fields.p != NULL,
						 &c->problem)) < 0)) {
		handler_fail(c);
		return;
	}
	if (engine == 0) {
		return; /* another engine's answer */
	}
	handler_count_decision(c, &d, c->ctx->catalog);
	answer_write(&c->w, &d, c->ctx->catalog, mask);
}

void handler_splits_get(struct handler_call *c)
{
	answer_one(c, &c->q);
}

void handler_reserve_get(struct handler_call *c)
{
	struct query q = c->q;

	q.reserve = true;
	answer_one(c, &q);
}

static void write_batch(struct handler_call *c, const cJSON *queries, unsigned mask)
{
	size_t count = (size_t)cJSON_GetArraySize(queries), failures = 0;
	const cJSON *item;

	answer_batch_begin(&c->w, count, FIELDS_ANSWER_BYTES(mask));
	cJSON_ArrayForEach(item, queries) {
		struct query q;
		struct decision d;
		struct problem p;
		int engine = 1;

		const struct catalog *cat = c->ctx->catalog;

		/* a query may name its own catalog; the batch's (or the default) otherwise */
		if (query_from_json(item, DECIDE_FIELDS | HANDLER_CATALOG_FIELD, &q, &p) != 0 ||
		    (q.catalog.p != NULL &&
		     (cat = revision_named_catalog(c->ctx, q.catalog, &p)) == NULL) ||
		    decide_run(cat, &q, &d, &p) != 0 ||
		    (q.engine.p != NULL &&
		     (engine = engines_answer(c->ctx, &c->w, &q, &d, cat, mask != FIELDS_ALL, &p)) < 0)) {
			failures++;
			answer_batch_error(&c->w, &p);
			continue;
		}
		if (engine == 0) {
			continue; /* another engine's answer */
		}
		handler_count_decision(c, &d, cat);
		answer_write(&c->w, &d, cat, mask);
	}
	answer_batch_end(&c->w, failures, c->ctx->catalog);
}

/* A batch's "revision" or "catalog" beside its queries: absent, or a
 * string (a digest to pin, a catalog's name: `what`) of at most `max` bytes. */
static int batch_string(const cJSON *root, const char *key, const char *what, size_t max,
			struct slice *out, struct problem *p)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, key);

	*out = (struct slice){NULL, 0};
	if (r == NULL) {
		return 0;
	}
	if (!cJSON_IsString(r) || strlen(r->valuestring) > max) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, key, NULL, "%s must be %s string, not %s",
				   key, what, cJSON_IsString(r) ? "a string that long" : jsonin_type_name(r));
	}
	*out = (struct slice){r->valuestring, strlen(r->valuestring)};
	return 0;
}

/* {"queries": [...]}: 1..max_batch queries, and beside them only a
 * "revision" to pin, a "catalog" to answer from (each query may name its
 * own) and "fields" (a string: which members each answer keeps). */
static void post_batch(struct handler_call *c, const cJSON *root, const cJSON *queries)
{
	static const char *const batch_fields[] = {"queries", "revision", "fields", "catalog"};
	const char *bad;
	int n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "fields");
	unsigned mask = FIELDS_ALL;
	struct slice revision, catalog;
	enum jsonin_keys keys = jsonin_check_keys(root, batch_fields, 4, &bad);

	if (keys == JSONIN_KEYS_DUPLICATE) {
		problem_set(&c->problem, PROBLEM_REPEATED_PARAMETER, bad, NULL,
			    "%s is given more than once", bad);
		handler_fail(c);
	} else if (keys != JSONIN_KEYS_OK) {
		problem_set(&c->problem, PROBLEM_UNKNOWN_PARAMETER, bad, NULL,
			    "a batch body has only \"queries\", \"revision\", \"catalog\" and \"fields\"; "
			    "\"%s\" is not allowed beside them",
			    bad);
		handler_fail(c);
	} else if (batch_string(root, "revision", "a catalog digest", CATALOG_DIGEST_LEN * 4,
				&revision, &c->problem) != 0 ||
		   batch_string(root, "catalog", "a catalog name", CATALOG_NAME_MAX * 4, &catalog,
				&c->problem) != 0 ||
		   revision_choose(c, catalog, revision, &c->problem) != 0) {
		handler_fail(c);
	} else if (fields != NULL && !cJSON_IsString(fields)) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, "fields", NULL,
			    "fields must be a string, not %s", jsonin_type_name(fields));
		handler_fail(c);
	} else if (fields != NULL &&
		   fields_parse((struct slice){fields->valuestring, strlen(fields->valuestring)},
				"fields", &mask, &c->problem) != 0) {
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
		write_batch(c, queries, mask);
	}
}

void handler_splits_post(struct handler_call *c)
{
	char why[160];
	struct jsonin_arena arena = {0};
	const cJSON *root, *queries;
	struct query q;

	if (!handler_json_body(c, "POST /v1/splits")) {
		return;
	}
	/* the common shape without a tree; anything else through cJSON */
	if (!c->ctx->batch_tree_only && batchfast_answer(c)) {
		return;
	}
	root = jsonin_parse_in(&arena, c->req->body, c->req->body_len, why, sizeof(why));
	queries = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "queries") : NULL;
	if (root == NULL) {
		problem_set(&c->problem, PROBLEM_MALFORMED_JSON, NULL, NULL, "%s", why);
		handler_fail(c);
	} else if (queries != NULL) {
		post_batch(c, root, queries);
	} else if (query_from_json(root, DECIDE_FIELDS | HANDLER_PIN_FIELD, &q, &c->problem) != 0 ||
		   revision_choose(c, q.catalog, q.revision, &c->problem) != 0) {
		handler_fail(c); /* one decision, with the same fields as the query string */
	} else {
		answer_one(c, &q);
	}
	/* a failed parse may still have taken arena blocks */
	jsonin_arena_cleanup(&arena);
}

