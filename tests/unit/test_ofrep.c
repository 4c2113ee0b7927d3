/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The OFREP adapter through the pure request handler: every flag against
 * GET /v1/splits for the same inputs (the answer splitkd itself gives, not
 * numbers written here), the context's leniency and its limits, every
 * failure with the words /v1/splits uses, the bulk ETag and 304, and the
 * HTTP-level refusals. docs/ofrep-design.md is the contract.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

TestSuite(ofrep, .init = load_default_catalog, .fini = free_default_catalog);

#define SINGLE "/ofrep/v1/evaluate/flags/"
#define BULK "/ofrep/v1/evaluate/flags"
#define SEED "\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16"
#define SEED_QUERY "target=h100&model=qwen3.8-27b&max_batch_size=16"

static const char *const flags[] = {"num_splits", "workspace_slots", "workspace_bytes", "policy",
				    "policy_source"};

static struct answer eval(const char *key, const char *body)
{
	char uri[256];

	snprintf(uri, sizeof(uri), SINGLE "%s", key);
	return post(uri, body);
}

/* {"context": {<members>}} */
static struct answer eval_ctx(const char *key, const char *members)
{
	char body[2048];

	snprintf(body, sizeof(body), "{\"context\":{%s}}", members);
	return key != NULL ? eval(key, body) : post(BULK, body);
}

static struct answer splits(const char *query)
{
	char uri[1024];

	snprintf(uri, sizeof(uri), "/v1/splits?%s", query);
	return get(uri);
}

static const cJSON *member(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* An OFREP failure: status, application/json, code, and key (NULL: none). */
static void assert_failure(const struct answer *a, int status, const char *code, const char *key)
{
	cr_assert_eq(a->status, status, "status %d, want %d: %s", a->status, status, a->body);
	cr_assert_str_eq(a->content_type, "application/json");
	cr_assert_not_null(a->json, "%s", a->body);
	cr_assert_str_eq(str(a->json, "errorCode"), code, "%s", a->body);
	cr_assert_gt(strlen(str(a->json, "errorDetails")), 0);
	cr_assert(cJSON_IsObject(member(a->json, "metadata")), "%s", a->body);
	if (key != NULL) {
		cr_assert_str_eq(str(a->json, "key"), key, "%s", a->body);
	} else {
		cr_assert_null(member(a->json, "key"), "%s", a->body);
	}
}

/* An OFREP failure carries the problem /v1/splits answers: its detail as
 * errorDetails, its type, param and suggestion in metadata. */
static void assert_same_problem(const cJSON *failure, const cJSON *problem)
{
	const cJSON *m = member(failure, "metadata");
	static const char *const both[] = {"param", "suggestion"};

	cr_assert_str_eq(str(failure, "errorCode"), "INVALID_CONTEXT");
	cr_assert_str_eq(str(failure, "errorDetails"), str(problem, "detail"));
	cr_assert_str_eq(str(m, "problem"), str(problem, "type"));
	for (size_t i = 0; i < 2; i++) {
		const cJSON *want = member(problem, both[i]);

		if (want == NULL) {
			cr_assert_null(member(m, both[i]), "%s", both[i]);
		} else {
			cr_assert_str_eq(str(m, both[i]), want->valuestring);
		}
	}
}

/* "; "-joined warnings of a decision; for a flag other than
 * workspace_bytes, without the null workspace_bytes warning (it says
 * nothing about that flag). */
static void joined_warnings(const cJSON *decision, const char *key, char *out, size_t cap)
{
	const cJSON *w;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(w, member(decision, "warnings")) {
		if (strcmp(key, "workspace_bytes") != 0 &&
		    strncmp(w->valuestring, "workspace_bytes is null", 23) == 0) {
			continue;
		}
		n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "; " : "", w->valuestring);
	}
}

/* One flag of an OFREP answer against the /v1/splits decision. */
static void assert_flag_is_decision(const cJSON *f, const char *key, const cJSON *d)
{
	const cJSON *m = member(f, "metadata"), *bytes = member(d, "workspace_bytes");
	char warnings[4096];

	cr_assert_str_eq(str(f, "key"), key);
	if (strcmp(key, "workspace_bytes") == 0 &&
	    (cJSON_IsNull(bytes) || bytes->valuedouble > 9007199254740991.0)) {
		cr_assert_str_eq(str(f, "errorCode"), cJSON_IsNull(bytes) ? "INVALID_CONTEXT" : "GENERAL");
	} else if (strcmp(key, "policy") == 0 || strcmp(key, "policy_source") == 0) {
		cr_assert_str_eq(str(f, "value"), str(d, key[6] == '\0' ? "policy" : "source"));
	} else {
		cr_assert_eq(num(f, "value"), num(d, key), "%s", key);
	}
	if (member(f, "value") != NULL) {
		cr_assert_str_eq(str(f, "reason"), "TARGETING_MATCH");
		cr_assert_str_eq(str(f, "variant"), str(d, "policy"));
	}
	cr_assert_str_eq(str(m, "source"), str(d, "source"));
	cr_assert_str_eq(str(m, "catalog"), str(d, "catalog"));
	cr_assert_eq(member(m, "target") != NULL, cJSON_IsString(member(d, "target")));
	if (cJSON_IsString(member(d, "target"))) {
		cr_assert_str_eq(str(m, "target"), str(d, "target"));
	}
	if (cJSON_IsString(member(d, "model"))) {
		cr_assert_str_eq(str(m, "model"), str(d, "model"));
	}
	joined_warnings(d, key, warnings, sizeof(warnings));
	cr_assert_str_eq(str(m, "warnings"), warnings, "%s", key);
	if (strcmp(key, "workspace_bytes") != 0) {
		cr_assert_null(strstr(str(m, "warnings"), "workspace_bytes is null"), "%s: %s", key, str(m, "warnings"));
	}
}

/* ------------------------------------------------------- every flag */

Test(ofrep, the_seed_example)
{
	struct answer n = eval_ctx("num_splits", SEED), s = eval_ctx("workspace_slots", SEED);

	cr_assert_eq(n.status, 200, "%s", n.body);
	cr_assert_str_eq(n.content_type, "application/json");
	cr_assert_eq(num(n.json, "value"), 11);
	cr_assert_eq(num(s.json, "value"), 4224);
	cr_assert_str_eq(str(n.json, "variant"), "auto");
	cr_assert_str_eq(str(member(n.json, "metadata"), "target"), "hopper");
	cr_assert_str_eq(n.etag, "", "a single-flag answer carries no ETag");
	answer_free(&n);
	answer_free(&s);
}

/* Over the catalog: the bulk answer is the /v1/splits decision, flag by
 * flag, and each single-flag answer is the bulk answer's element. */
Test(ofrep, every_flag_is_the_decision_of_get_splits)
{
	static const char *const models[] = {"qwen3.8-27b", "llama-3.1-70b", "gemma-2-9b"};
	static const char *const overrides[] = {"", "4", "atuo"};
	static const unsigned batches[] = {1, 16, 64};

	for (size_t t = 0; t < test_catalog->num_targets; t++) {
		for (size_t i = 0; i < 3 * 3 * 3; i++) {
			const char *target = test_catalog->targets[t].names.name, *model = models[i % 3];
			const char *override = overrides[i / 3 % 3];
			unsigned mb = batches[i / 9];
			char q[256], ctx[256];
			struct answer d, all;

			snprintf(q, sizeof(q), "target=%s&model=%s&max_batch_size=%u%s%s", target, model, mb,
				 *override ? "&override=" : "", override);
			snprintf(ctx, sizeof(ctx), "\"target\":\"%s\",\"model\":\"%s\",\"max_batch_size\":%u%s%s%s",
				 target, model, mb, *override ? ",\"override\":\"" : "", override,
				 *override ? "\"" : "");
			d = splits(q);
			all = eval_ctx(NULL, ctx);
			cr_assert_eq(all.status, 200, "%s", all.body);
			cr_assert_eq(cJSON_GetArraySize(member(all.json, "flags")), 5);
			for (int f = 0; f < 5; f++) {
				const cJSON *el = cJSON_GetArrayItem(member(all.json, "flags"), f);
				struct answer one = eval_ctx(flags[f], ctx);

				assert_flag_is_decision(el, flags[f], d.json);
				cr_assert(cJSON_Compare(one.json, el, true), "%s: %s", flags[f], one.body);
				cr_assert_eq(one.status, member(el, "value") ? 200 : 400);
				answer_free(&one);
			}
			cr_assert_str_eq(str(member(all.json, "metadata"), "catalog"), str(d.json, "catalog"));
			answer_free(&d);
			answer_free(&all);
		}
	}
}

/* ------------------------------------------------------ the context */

/* The same question, however its numbers are written, is the same bytes. */
static void assert_all_same(const char *key, const char *const *contexts, size_t n)
{
	struct answer first = eval_ctx(key, contexts[0]);

	cr_assert_eq(first.status, 200, "%s", first.body);
	for (size_t i = 1; i < n; i++) {
		struct answer a = eval_ctx(key, contexts[i]);

		cr_assert_str_eq(a.body, first.body, "{%s}", contexts[i]);
		answer_free(&a);
	}
	answer_free(&first);
}

Test(ofrep, numbers_as_json_numbers_or_decimal_strings)
{
	static const char *const batch[] = {
		SEED,
		"\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":\"16\"",
		"\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16.0",
		"\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":1.6e1",
	};
	static const char *const numbers[] = {
		"\"sm_count\":132,\"num_q_heads\":24,\"head_dim\":128,\"num_seqs\":3,\"max_rows\":32",
		"\"sm_count\":\"132\",\"num_q_heads\":\"24\",\"head_dim\":\"128\",\"num_seqs\":\"3\","
		"\"max_rows\":\"32\"",
	};
	static const char *const spellings[] = {
		SEED ",\"override\":\"4\",\"declared\":\"0\"",
		SEED ",\"override\":4,\"declared\":0",
		SEED ",\"override\":4.0,\"declared\":\"0\"",
	};

	assert_all_same(NULL, batch, 4);
	assert_all_same(NULL, numbers, 2);
	assert_all_same(NULL, spellings, 3);
}

Test(ofrep, targeting_key_foreign_keys_and_nulls_change_nothing)
{
	static const char *const contexts[] = {
		SEED,
		SEED ",\"targetingKey\":\"node-17\"",
		SEED ",\"targetingKey\":17",
		SEED ",\"targetingKey\":{\"a\":[1,2]}",
		SEED ",\"region\":\"eu-west\",\"cluster\":{\"gpus\":8},\"user\":null,\"tags\":[1]",
		SEED ",\"override\":null,\"head_dim\":null,\"declared\":null,\"explain\":null",
		"\"targetingKey\":\"x\"," SEED,
	};

	assert_all_same(NULL, contexts, sizeof(contexts) / sizeof(contexts[0]));
	assert_all_same("num_splits", contexts, sizeof(contexts) / sizeof(contexts[0]));
}

Test(ofrep, members_beside_context_are_ignored_and_null_context_is_empty)
{
	struct answer a = post(BULK, "{\"context\":{" SEED "},\"flags\":[1],\"v\":2}");
	struct answer b = post(BULK, "{\"context\":{" SEED "}}");
	struct answer empty[] = {post(SINGLE "policy", "{\"context\":null}"),
				 post(SINGLE "policy", "{}"),
				 post(SINGLE "policy", "{\"context\":{}}"),
				 call_full("POST", SINGLE "policy", NULL, NULL, 0, false),
				 call_full("POST", SINGLE "policy", "text/plain", NULL, 0, false)};
	struct answer none = splits("");

	cr_assert_str_eq(a.body, b.body);
	for (size_t i = 0; i < 5; i++) {
		assert_failure(&empty[i], 400, "INVALID_CONTEXT", "policy");
		assert_same_problem(empty[i].json, none.json); /* no target: as GET /v1/splits */
		answer_free(&empty[i]);
	}
	answer_free(&a);
	answer_free(&b);
	answer_free(&none);
}

/* A bad value: INVALID_CONTEXT naming the key; for a string, the very
 * words GET /v1/splits uses for the same text in a query string. */
Test(ofrep, bad_values_name_their_key)
{
	static const struct {
		const char *member, *param, *query; /* query: the same mistake in GET, or NULL */
	} cases[] = {
		{"\"max_batch_size\":\"sixteen\"", "max_batch_size", "max_batch_size=sixteen"},
		{"\"max_batch_size\":\"016\"", "max_batch_size", "max_batch_size=016"},
		{"\"max_batch_size\":\"+16\"", "max_batch_size", "max_batch_size=%2B16"},
		{"\"max_batch_size\":\" 16\"", "max_batch_size", "max_batch_size=%2016"},
		{"\"max_batch_size\":\"4294967296\"", "max_batch_size", "max_batch_size=4294967296"},
		{"\"max_batch_size\":\"\"", "max_batch_size", "max_batch_size="},
		{"\"max_batch_size\":0", "max_batch_size", NULL},
		{"\"max_batch_size\":16.5", "max_batch_size", NULL},
		{"\"max_batch_size\":-1", "max_batch_size", NULL},
		{"\"max_batch_size\":4294967296", "max_batch_size", NULL},
		{"\"max_batch_size\":true", "max_batch_size", NULL},
		{"\"max_batch_size\":[16]", "max_batch_size", NULL},
		{"\"sm_count\":{}", "sm_count", NULL},
		{"\"model\":7", "model", NULL},
		{"\"override\":-1", "override", NULL},
		{"\"override\":1.5", "override", NULL},
		{"\"declared\":9007199254740992", "declared", NULL},
		{"\"declared\":false", "declared", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ctx[512], q[128];
		struct answer a, g;

		snprintf(ctx, sizeof(ctx), "\"target\":\"h100\",\"num_q_heads\":8,%s", cases[i].member);
		a = eval_ctx("num_splits", ctx);
		assert_failure(&a, 400, "INVALID_CONTEXT", "num_splits");
		cr_assert_str_eq(str(member(a.json, "metadata"), "param"), cases[i].param, "%s", a.body);
		cr_assert_str_eq(str(member(a.json, "metadata"), "problem"), "/problems/invalid-parameter");
		if (cases[i].query != NULL) {
			snprintf(q, sizeof(q), "target=h100&num_q_heads=8&%s", cases[i].query);
			g = splits(q);
			assert_same_problem(a.json, g.json);
			answer_free(&g);
		} else {
			cr_assert(strstr(str(a.json, "errorDetails"), cases[i].param) != NULL, "%s", a.body);
		}
		answer_free(&a);
	}
}

Test(ofrep, long_values_are_refused_as_in_a_query_string)
{
	char ctx[512], q[512], o[258];
	struct answer a, g;

	memset(o, 'o', 257);
	o[257] = '\0';
	snprintf(ctx, sizeof(ctx), "\"target\":\"h100\",\"num_q_heads\":8,\"override\":\"%s\"", o);
	snprintf(q, sizeof(q), "target=h100&num_q_heads=8&override=%s", o);
	a = eval_ctx("policy", ctx);
	g = splits(q);
	assert_failure(&a, 400, "INVALID_CONTEXT", "policy");
	assert_same_problem(a.json, g.json);
	cr_assert_not_null(strstr(str(a.json, "errorDetails"), "longer than 256 bytes"));
	answer_free(&a);
	answer_free(&g);
}

/* The same mistake, the same words: errorDetails is the problem+json
 * detail of GET /v1/splits, with its type, param and did-you-mean. */
Test(ofrep, failures_carry_the_problem_get_splits_answers)
{
	static const struct {
		const char *context, *query;
	} cases[] = {
		{"\"target\":\"hoper\",\"model\":\"qwen3.8-27b\"", "target=hoper&model=qwen3.8-27b"},
		{"\"target\":\"tpu\",\"model\":\"qwen3.8-27b\"", "target=tpu&model=qwen3.8-27b"},
		{"\"target\":\"h100\",\"model\":\"qwen3.8-72b\"", "target=h100&model=qwen3.8-72b"},
		{"\"model\":\"qwen3.8-27b\"", "model=qwen3.8-27b"},
		{"\"target\":\"h100\"", "target=h100"},
		{"\"target\":\"h100\",\"target\":\"gb10\",\"model\":\"qwen3-8b\"",
		 "target=h100&target=gb10&model=qwen3-8b"},
		{"\"target\":null,\"target\":\"gb10\",\"model\":\"qwen3-8b\"",
		 "target=&target=gb10&model=qwen3-8b"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer g = splits(cases[i].query), all = eval_ctx(NULL, cases[i].context);

		cr_assert(g.status == 400 || g.status == 404, "%s", g.body);
		for (int f = 0; f < 5; f++) {
			struct answer a = eval_ctx(flags[f], cases[i].context);

			/* single: 400 (an OFREP 404 means no such flag); bulk: 200,
			 * every flag the same failure */
			assert_failure(&a, 400, "INVALID_CONTEXT", flags[f]);
			assert_same_problem(a.json, g.json);
			cr_assert(cJSON_Compare(a.json, cJSON_GetArrayItem(member(all.json, "flags"), f), true));
			answer_free(&a);
		}
		cr_assert_eq(all.status, 200, "%s", all.body);
		answer_free(&g);
		answer_free(&all);
	}
}

Test(ofrep, a_key_spelt_another_way_is_refused_with_a_did_you_mean)
{
	static const struct {
		const char *key, *field;
	} cases[] = {
		{"maxBatchSize", "max_batch_size"}, {"MAX-BATCH-SIZE", "max_batch_size"},
		{"smCount", "sm_count"},	    {"headDim", "head_dim"},
		{"Target", "target"},		    {"num-q-heads", "num_q_heads"},
		{"_override_", "override"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ctx[256], want[256];
		struct answer a, all;

		snprintf(ctx, sizeof(ctx), SEED ",\"%s\":16", cases[i].key);
		snprintf(want, sizeof(want), "unknown context key \"%s\"; did you mean \"%s\"?", cases[i].key,
			 cases[i].field);
		a = eval_ctx("num_splits", ctx);
		all = eval_ctx(NULL, ctx);
		assert_failure(&a, 400, "INVALID_CONTEXT", "num_splits");
		cr_assert_str_eq(str(a.json, "errorDetails"), want);
		cr_assert_str_eq(str(member(a.json, "metadata"), "param"), cases[i].key);
		cr_assert_str_eq(str(member(a.json, "metadata"), "suggestion"), cases[i].field);
		cr_assert_str_eq(str(member(a.json, "metadata"), "problem"), "/problems/unknown-parameter");
		cr_assert_eq(all.status, 200);
		cr_assert_str_eq(str(cJSON_GetArrayItem(member(all.json, "flags"), 3), "errorDetails"), want);
		answer_free(&a);
		answer_free(&all);
	}
}

Test(ofrep, a_near_miss_key_is_ignored_with_a_warning)
{
	struct answer plain = eval_ctx("num_splits", SEED);
	struct answer near = eval_ctx("num_splits", SEED ",\"max_bach_size\":3,\"mode\":\"x\",\"region\":1");
	struct answer many = eval_ctx("num_splits", SEED ",\"targt\":1,\"mdel\":1,\"hed_dim\":1,"
						    "\"max_row\":1,\"num_seq\":1");
	const char *pw = str(member(plain.json, "metadata"), "warnings");
	const char *nw = str(member(near.json, "metadata"), "warnings");
	char want[1024];

	cr_assert_eq(near.status, 200, "%s", near.body);
	cr_assert_eq(num(near.json, "value"), num(plain.json, "value"));
	snprintf(want, sizeof(want),
		 "%s%scontext key \"max_bach_size\" is not an input and is ignored; did you mean "
		 "\"max_batch_size\"?; context key \"mode\" is not an input and is ignored; did you mean "
		 "\"model\"?",
		 pw, pw[0] != '\0' ? "; " : "");
	cr_assert_str_eq(nw, want, "region is no near miss: no word about it");
	/* the first four near misses are reported, the fifth only ignored */
	cr_assert_not_null(strstr(str(member(many.json, "metadata"), "warnings"), "\"max_row\""));
	cr_assert_null(strstr(str(member(many.json, "metadata"), "warnings"), "\"num_seq\""));
	answer_free(&plain);
	answer_free(&near);
	answer_free(&many);
}

Test(ofrep, explain_is_refused)
{
	static const char *const contexts[] = {SEED ",\"explain\":true", SEED ",\"explain\":false",
					       SEED ",\"Explain\":1"};

	for (size_t i = 0; i < 3; i++) {
		struct answer a = eval_ctx("policy", contexts[i]);

		assert_failure(&a, 400, "INVALID_CONTEXT", "policy");
		cr_assert(strstr(str(a.json, "errorDetails"), "GET /v1/splits?explain=1") != NULL, "%s",
			  a.body);
		answer_free(&a);
	}
}

/* --------------------------------------------------- workspace_bytes */

/* Either side of 2^53 - 1: the exact value while a JSON number carries
 * it, else GENERAL with the exact count; never a rounded number. */
Test(ofrep, workspace_bytes_is_exact_or_an_error_never_rounded)
{
	/* 335544320 slots (GET says), so 2^53 - 1 bytes falls near head_dim 6710886 */
	const char *base = "target=h100&num_q_heads=64&max_rows=1048576";
	bool saw_value = false, saw_error = false;

	for (unsigned h = 6710880; h <= 6710892; h++) {
		char q[256], ctx[256], digits[64];
		struct answer g, a;
		const char *p;

		snprintf(q, sizeof(q), "%s&head_dim=%u", base, h);
		snprintf(ctx, sizeof(ctx),
			 "\"target\":\"h100\",\"num_q_heads\":64,\"max_rows\":1048576,\"head_dim\":%u", h);
		g = splits(q);
		a = eval_ctx("workspace_bytes", ctx);
		p = strstr(g.body, "\"workspace_bytes\":") + strlen("\"workspace_bytes\":");
		snprintf(digits, sizeof(digits), "%.*s", (int)strspn(p, "0123456789"), p);
		if (strlen(digits) < 16 || (strlen(digits) == 16 && strcmp(digits, "9007199254740991") <= 0)) {
			saw_value = true;
			cr_assert_eq(a.status, 200, "%s", a.body);
			cr_assert_not_null(strstr(a.body, "\"value\":"), "%s", a.body);
			p = strstr(a.body, "\"value\":") + 8;
			cr_assert(strncmp(p, digits, strlen(digits)) == 0 && p[strlen(digits)] == ',',
				  "%s vs %s", a.body, digits);
		} else {
			saw_error = true;
			assert_failure(&a, 400, "GENERAL", "workspace_bytes");
			cr_assert_not_null(strstr(str(a.json, "errorDetails"), digits), "%s", a.body);
			cr_assert_str_eq(str(member(a.json, "metadata"), "source"), "declared");
		}
		answer_free(&g);
		answer_free(&a);
	}
	cr_assert(saw_value && saw_error, "the sweep crosses 2^53 - 1");
}

Test(ofrep, workspace_bytes_past_2_to_the_64_and_unknown)
{
	struct answer big = eval_ctx("workspace_bytes",
				     "\"sm_count\":132,\"num_q_heads\":4294967295,\"head_dim\":4294967295,"
				     "\"max_batch_size\":4294967295,\"declared\":\"auto\"");
	struct answer none = eval_ctx("workspace_bytes", SEED), g = splits(SEED_QUERY);
	const cJSON *w = cJSON_GetArrayItem(member(g.json, "warnings"), 0);

	assert_failure(&big, 400, "GENERAL", "workspace_bytes");
	cr_assert_not_null(strstr(str(big.json, "errorDetails"), "workspace_bytes is 73786976294838206460, over "
								  "9007199254740991 (2^53 - 1)"),
			   "%s", big.body);
	assert_failure(&none, 400, "INVALID_CONTEXT", "workspace_bytes");
	cr_assert(strncmp(w->valuestring, "workspace_bytes is null", 23) == 0, "%s", g.body);
	cr_assert_str_eq(str(none.json, "errorDetails"), w->valuestring);
	/* a failure after the decision carries the decision's metadata */
	cr_assert_str_eq(str(member(none.json, "metadata"), "model"), "qwen3.8-27b");
	answer_free(&big);
	answer_free(&none);
	answer_free(&g);
}

/* -------------------------------------------------------- flag keys */

Test(ofrep, an_unknown_flag_is_404_with_a_did_you_mean_whatever_the_body)
{
	static const struct {
		const char *key, *near;
	} cases[] = {{"num_split", "num_splits"},
		     {"numSplits", "num_splits"},
		     {"NUM_SPLITS", "num_splits"},
		     {"policy_sorce", "policy_source"},
		     {"colour", NULL}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = eval(cases[i].key, "{\"context\":"); /* not even JSON */
		const char *d;

		assert_failure(&a, 404, "FLAG_NOT_FOUND", cases[i].key);
		d = str(a.json, "errorDetails");
		cr_assert_not_null(strstr(d, "(flags: num_splits, workspace_slots, workspace_bytes, policy, "
					     "policy_source)"),
				   "%s", d);
		if (cases[i].near != NULL) {
			cr_assert_not_null(strstr(d, cases[i].near), "%s", d);
			cr_assert_str_eq(str(member(a.json, "metadata"), "suggestion"), cases[i].near);
		} else {
			cr_assert_null(strstr(d, "did you mean"), "%s", d);
		}
		answer_free(&a);
	}
}

Test(ofrep, keys_are_percent_decoded_and_an_empty_key_is_no_route)
{
	struct answer a = eval("num%5Fsplits", "{\"context\":{" SEED "}}");
	struct answer empty = post(SINGLE, "{}"), bad = eval("%zz", "{}");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "key"), "num_splits");
	assert_problem(&empty, 404, "not-found", NULL);
	assert_problem(&bad, 404, "not-found", NULL);
	answer_free(&a);
	answer_free(&empty);
	answer_free(&bad);
}

/* ------------------------------------------------------------ bodies */

/* Not strict JSON: PARSE_ERROR whose details are jsonin's reason, the
 * detail POST /v1/splits gives for the same bytes. */
Test(ofrep, bad_json_is_parse_error_with_the_malformed_json_detail)
{
	static const struct {
		const char *body;
		size_t len;
	} cases[] = {
		{"{\"context\":", 11},
		{"{\"context\":{}} x", 16},
		{"{\"context\":{\"target\":\"h\0\"}}", 26},
		{"{\"context\":{\"target\":\"\xff\"}}", 26},
		{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 66},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *b = cases[i].body;
		size_t n = cases[i].len;
		struct answer p = call_full("POST", "/v1/splits", "application/json", b, n, false);
		struct answer one = call_full("POST", SINGLE "policy", "application/json", b, n, false);
		struct answer all = call_cond("POST", BULK, "application/json", b, n, false, "*");

		assert_problem(&p, 400, "malformed-json", NULL);
		assert_failure(&one, 400, "PARSE_ERROR", "policy");
		assert_failure(&all, 400, "PARSE_ERROR", NULL);
		cr_assert_str_eq(str(one.json, "errorDetails"), str(p.json, "detail"));
		cr_assert_str_eq(str(all.json, "errorDetails"), str(p.json, "detail"));
		cr_assert_str_eq(str(member(all.json, "metadata"), "problem"), "/problems/malformed-json");
		cr_assert_str_eq(all.etag, "", "a 400 is never tagged nor 304");
		answer_free(&p);
		answer_free(&one);
		answer_free(&all);
	}
}

Test(ofrep, a_body_or_context_that_is_no_object_fails_the_whole_request)
{
	static const struct {
		const char *body, *details;
	} cases[] = {
		{"[1]", "the body must be a JSON object {\"context\": {...}}, not array"},
		{"\"h100\"", "the body must be a JSON object {\"context\": {...}}, not string"},
		{"{\"context\":\"h100\"}", "context must be a JSON object, not string"},
		{"{\"context\":[]}", "context must be a JSON object, not array"},
		{"{\"context\":{},\"context\":{}}", "context is given more than once"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer one = post(SINGLE "num_splits", cases[i].body), all = post(BULK, cases[i].body);

		assert_failure(&one, 400, "INVALID_CONTEXT", "num_splits");
		assert_failure(&all, 400, "INVALID_CONTEXT", NULL);
		cr_assert_str_eq(str(one.json, "errorDetails"), cases[i].details);
		cr_assert_str_eq(str(all.json, "errorDetails"), cases[i].details);
		answer_free(&one);
		answer_free(&all);
	}
}

/* ------------------------------------------------------ bulk and 304 */

Test(ofrep, bulk_answers_carry_an_etag_and_match_if_none_match)
{
	const char *body = "{\"context\":{" SEED "}}";
	const char *other = "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":8}}";
	/* the tag covers the answer, not the question: same flags, same tag */
	const char *same_answer = "{\"context\":{" SEED ",\"region\":\"eu\"}}";
	const char *bad = "{\"context\":{\"target\":\"hoper\"}}";
	struct answer a = post(BULK, body), b;
	struct answer same = call_cond("POST", BULK, "application/json", body, strlen(body), false, a.etag);
	struct answer diff = call_cond("POST", BULK, "application/json", other, strlen(other), false, a.etag);
	struct answer e1 = post(BULK, bad);
	struct answer e2 = call_cond("POST", BULK, "application/json", bad, strlen(bad), false, e1.etag);
	struct answer one = call_cond("POST", SINGLE "policy", "application/json", body, strlen(body),
				      false, "*");

	cr_assert_eq(a.status, 200);
	cr_assert_eq(strlen(a.etag), 18, "%s", a.etag);
	cr_assert_eq(same.status, 304);
	cr_assert_str_eq(same.etag, a.etag);
	cr_assert_str_eq(same.body, a.body, "a 304 keeps the 200's bytes for their length");
	cr_assert_eq(diff.status, 200, "another answer, another tag");
	cr_assert_str_neq(diff.etag, a.etag);
	b = call_cond("POST", BULK, "application/json", same_answer, strlen(same_answer), false, a.etag);
	cr_assert_eq(b.status, 304);
	answer_free(&b);
	/* per-flag failures are an answer like any other: tagged, and 304 */
	cr_assert_eq(e1.status, 200);
	cr_assert_neq(e1.etag[0], '\0');
	cr_assert_eq(e2.status, 304);
	cr_assert_eq(one.status, 200, "a single-flag answer ignores If-None-Match");
	cr_assert_str_eq(one.etag, "");
	b = post(BULK, body);
	cr_assert_str_eq(b.etag, a.etag, "the same question, the same tag");
	answer_free(&a);
	answer_free(&b);
	answer_free(&same);
	answer_free(&diff);
	answer_free(&e1);
	answer_free(&e2);
	answer_free(&one);
}

static size_t decisions_seen;

static void on_decision(void *cls, const char *catalog, const char *target, enum splitk_kind kind)
{
	(void)cls;
	(void)catalog;
	(void)target;
	(void)kind;
	decisions_seen++;
}

static size_t decisions_for(const char *uri, const char *body, const char *if_none_match,
			    int want_status)
{
	struct api_context ctx = {.catalog = test_catalog, .on_decision = on_decision};
	struct api_request req = {.method = "POST", .uri = uri, .uri_len = strlen(uri),
				  .content_type = "application/json", .if_none_match = if_none_match,
				  .body = body, .body_len = strlen(body)};
	struct api_response resp;

	decisions_seen = 0;
	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, want_status, "%s %s: %d", uri, body, resp.status);
	api_response_cleanup(&resp);
	return decisions_seen;
}

/* A decision is counted once per request that reached one: a bulk
 * request once, not five times; a 304 too, since the decision was made. */
Test(ofrep, decisions_are_counted_once_per_request)
{
	const char *ok = "{\"context\":{" SEED "}}", *bad = "{\"context\":{\"target\":\"hoper\"}}";

	cr_assert_eq(decisions_for(SINGLE "num_splits", ok, NULL, 200), 1);
	cr_assert_eq(decisions_for(SINGLE "workspace_bytes", ok, NULL, 400), 1);
	cr_assert_eq(decisions_for(BULK, ok, NULL, 200), 1);
	cr_assert_eq(decisions_for(BULK, ok, "*", 304), 1);
	cr_assert_eq(decisions_for(BULK, bad, NULL, 200), 0);
	cr_assert_eq(decisions_for(SINGLE "num_splits", bad, NULL, 400), 0);
	cr_assert_eq(decisions_for(SINGLE "num_split", ok, NULL, 404), 0);
	cr_assert_eq(decisions_for(BULK, "{", NULL, 400), 0);
}

/* -------------------------------------------------------------- HTTP */

Test(ofrep, post_only_routes_answer_405_with_allow_post)
{
	static const char *const methods[] = {"GET", "HEAD", "PUT", "DELETE", "post"};
	static const char *const uris[] = {SINGLE "num_splits", BULK};

	for (size_t m = 0; m < 5; m++) {
		for (size_t u = 0; u < 2; u++) {
			struct answer a = call_full(methods[m], uris[u], NULL, NULL, 0, false);

			assert_problem(&a, 405, "method-not-allowed", NULL);
			cr_assert_str_eq(a.allow, "POST");
			answer_free(&a);
		}
	}
}

Test(ofrep, http_refusals_stay_problem_json)
{
	static const struct api_limits small = {40, API_DEFAULT_MAX_URI, API_DEFAULT_MAX_BATCH};
	struct api_context ctx = {.catalog = test_catalog, .limits = &small};
	const char *body = "{\"context\":{" SEED "}}";
	struct api_request req = {.method = "POST", .uri = BULK, .uri_len = strlen(BULK),
				  .content_type = "application/json", .body = body,
				  .body_len = strlen(body)};
	struct api_response resp;
	struct answer plain = call_full("POST", SINGLE "policy", "text/plain", body, strlen(body), false);
	struct answer none = call_full("POST", BULK, NULL, body, strlen(body), false);
	struct answer charset = call_full("POST", SINGLE "policy", "Application/JSON; charset=utf-8", body,
					  strlen(body), false);
	struct answer query = post(BULK "?target=h100", body);

	assert_problem(&plain, 415, "unsupported-media-type", NULL);
	cr_assert_not_null(strstr(str(plain.json, "detail"), "not text/plain"));
	assert_problem(&none, 415, "unsupported-media-type", NULL);
	cr_assert_eq(charset.status, 200, "%s", charset.body);
	assert_problem(&query, 400, "unknown-parameter", "target");
	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 413);
	cr_assert_str_eq(resp.content_type, "application/problem+json");
	api_response_cleanup(&resp);
	answer_free(&plain);
	answer_free(&none);
	answer_free(&charset);
	answer_free(&query);
}

Test(ofrep, configuration_is_a_tagged_get)
{
	struct answer a = get("/ofrep/v1/configuration");
	struct answer again = call_cond("GET", "/ofrep/v1/configuration", NULL, NULL, 0, false, a.etag);
	struct answer head = call_full("HEAD", "/ofrep/v1/configuration", NULL, NULL, 0, false);
	struct answer p = post("/ofrep/v1/configuration", "{}");
	const cJSON *caps = member(a.json, "capabilities");
	const cJSON *types = member(member(caps, "flagEvaluation"), "supportedTypes");
	const cJSON *poll = member(member(caps, "cacheInvalidation"), "polling");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(a.content_type, "application/json");
	cr_assert_str_eq(str(a.json, "name"), "splitkd");
	cr_assert_eq(cJSON_GetArraySize(types), 2);
	cr_assert_str_eq(cJSON_GetArrayItem(types, 0)->valuestring, "int");
	cr_assert_str_eq(cJSON_GetArrayItem(types, 1)->valuestring, "string");
	cr_assert(cJSON_IsTrue(member(poll, "enabled")));
	cr_assert_eq(num(poll, "minPollingIntervalMs"), 1000);
	cr_assert_eq(again.status, 304);
	cr_assert_eq(head.status, 200);
	cr_assert_str_eq(head.etag, a.etag);
	assert_problem(&p, 405, "method-not-allowed", NULL);
	cr_assert_str_eq(p.allow, "GET, HEAD");
	answer_free(&a);
	answer_free(&again);
	answer_free(&head);
	answer_free(&p);
}
