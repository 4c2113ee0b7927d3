/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "batchfast.h"
#include "decide.h"
#include "embedded.h"
#include "fields.h"
#include "jsonin.h"
#include "quote.h"

int handler_fail(struct handler_call *c)
{
	c->failed = true;
	return -1;
}

void handler_count_decision(const struct handler_call *c, const struct decision *d)
{
	if (c->ctx->on_decision != NULL) {
		c->ctx->on_decision(c->ctx->on_decision_cls, d->target ? d->target->names.name : NULL,
				    d->res.resolved.policy.kind);
	}
}

/* One decision, answered, or its problem. */
static void answer_one(struct handler_call *c, const struct query *q)
{
	struct decision d;
	unsigned mask = FIELDS_ALL;

	if ((q->fields.p != NULL && fields_parse(q->fields, "fields", &mask, &c->problem) != 0) ||
	    decide_run(c->ctx->catalog, q, &d, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	handler_count_decision(c, &d);
	if (mask == FIELDS_ALL) {
		decide_write(&c->w, &d, c->ctx->catalog);
	} else {
		fields_write(&c->w, &d, c->ctx->catalog, mask);
	}
}

void handler_splits_get(struct handler_call *c)
{
	answer_one(c, &c->q);
}

bool handler_is_json(const char *ct)
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

static void write_batch(struct handler_call *c, const cJSON *queries, unsigned mask)
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
		handler_count_decision(c, &d);
		if (mask == FIELDS_ALL) {
			decide_write(&c->w, &d, c->ctx->catalog);
		} else {
			fields_write(&c->w, &d, c->ctx->catalog, mask);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_kv_u64(&c->w, "failures", failures);
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

/* {"queries": [...]}: 1..max_batch queries, and beside them only "fields"
 * (a string: which members each answer keeps). */
static void post_batch(struct handler_call *c, const cJSON *root, const cJSON *queries)
{
	static const char *const batch_fields[] = {"queries", "fields"};
	const char *bad;
	int n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "fields");
	unsigned mask = FIELDS_ALL;

	if (jsonin_check_keys(root, batch_fields, 2, &bad) != JSONIN_KEYS_OK) {
		problem_set(&c->problem, PROBLEM_UNKNOWN_PARAMETER, bad, NULL,
			    "a batch body has only \"queries\" and \"fields\"; \"%s\" is not allowed "
			    "beside them",
			    bad);
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
	} else if (query_from_json(root, DECIDE_FIELDS, &q, &c->problem) != 0) {
		handler_fail(c); /* one decision, with the same fields as the query string */
	} else {
		answer_one(c, &q);
	}
	/* a failed parse may still have taken arena blocks */
	jsonin_arena_cleanup(&arena);
}

/* GET /v1/targets and /v1/models: the digest and every entry of a kind. */
static void get_list(struct handler_call *c, bool targets)
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

void handler_targets(struct handler_call *c)
{
	get_list(c, true);
}

void handler_models(struct handler_call *c)
{
	get_list(c, false);
}

/* GET /v1/targets/{name} and /v1/models/{name}: one entry. */
static void get_entry(struct handler_call *c, enum catalog_kind kind)
{
	const struct catalog *cat = c->ctx->catalog;
	long i = decide_find(cat, kind, NULL, c->name, &c->problem);

	if (i < 0) {
		handler_fail(c);
	} else if (kind == CATALOG_TARGETS) {
		catalog_write_target(&c->w, &cat->targets[i]);
	} else {
		catalog_write_model(&c->w, &cat->models[i]);
	}
}

void handler_target(struct handler_call *c)
{
	get_entry(c, CATALOG_TARGETS);
}

void handler_model(struct handler_call *c)
{
	get_entry(c, CATALOG_MODELS);
}

void handler_catalog(struct handler_call *c)
{

	catalog_write(&c->w, c->ctx->catalog, true);
}

void handler_policy(struct handler_call *c)
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
		handler_fail(c);
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

/* One cell of the matrix: a catalog pair under the query's shape. */
static void write_cell(struct handler_call *c, const struct catalog_target *t,
		       const struct catalog_model *m, struct decide_shape shape)
{
	struct decision d;
	char label[SPLITK_LABEL_MAX];

	decide_pair(t, m, shape, c->q.override, &d);
	splitk_label(d.res.resolved.policy, label);
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "target", t->names.name);
	jsonw_kv_str(&c->w, "model", m->names.name);
	jsonw_kv_str(&c->w, "policy", label);
	jsonw_kv_str(&c->w, "source", d.res.resolved.from_override ? "override" : "declared");
	jsonw_kv_u64(&c->w, "num_splits", d.num_splits);
	jsonw_kv_u64(&c->w, "workspace_slots", d.workspace_slots);
	decide_write_bytes(&c->w, "workspace_bytes", d.workspace_bytes);
	jsonw_object_end(&c->w);
}

void handler_matrix(struct handler_call *c)
{
	const struct catalog *cat = c->ctx->catalog;
	const struct query *q = &c->q;
	struct decide_shape shape = decide_shape_of(q);
	struct splitk_policy ignored;

	jsonw_object_begin(&c->w);
	jsonw_kv_u64(&c->w, "max_batch_size", shape.max_batch_size);
	jsonw_kv_u64(&c->w, "num_seqs", shape.num_seqs);
	jsonw_kv_u64(&c->w, "max_rows", shape.max_rows);
	jsonw_key(&c->w, "override");
	if (q->override.p != NULL) {
		jsonw_strn(&c->w, q->override.p, q->override.len);
	} else {
		jsonw_null(&c->w);
	}
	jsonw_key(&c->w, "warnings");
	jsonw_array_begin(&c->w);
	if (q->override.p != NULL && !splitk_parse(q->override.p, q->override.len, &ignored)) {
		char msg[320];

		decide_unparsed(msg, sizeof(msg), "override", q->override,
				"it is ignored and each target's declared policy stands",
				decide_suggest_spelling(q->override));
		jsonw_str(&c->w, msg);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_str(&c->w, "catalog", cat->digest);
	jsonw_key(&c->w, "cells");
	jsonw_array_begin(&c->w);
	for (size_t t = 0; t < cat->num_targets; t++) {
		for (size_t m = 0; m < cat->num_models; m++) {
			write_cell(c, &cat->targets[t], &cat->models[m], shape);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

void handler_healthz(struct handler_call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", "ok");
	jsonw_object_end(&c->w);
}

void handler_readyz(struct handler_call *c)
{

	c->status = c->ctx->draining ? 503 : 200;
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", c->ctx->draining ? "draining" : "ready");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

void handler_version(struct handler_call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "name", "splitkd");
	jsonw_kv_str(&c->w, "version", c->ctx->version ? c->ctx->version : "unknown");
	jsonw_kv_str(&c->w, "build", c->ctx->build ? c->ctx->build : "unknown");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

void handler_openapi(struct handler_call *c)
{

	c->body = (struct slice){embedded_openapi_json, embedded_openapi_json_len};
}

void handler_problem_type(struct handler_call *c)
{

	if (!problem_write_type(&c->w, c->name.p, c->name.len)) {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL, "no such problem type");
		handler_fail(c);
	}
}
