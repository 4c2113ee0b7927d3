/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The pure request handler, end to end without a socket: every endpoint,
 * the seed's worked numbers, every class of bad input, and a sweep that
 * checks each answer against the policy core.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "splitk.h"

TestSuite(api, .init = load_default_catalog, .fini = free_default_catalog);

/* ------------------------------------------------- the seed's numbers */

Test(api, hopper_qwen_auto_eleven_splits)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(a.content_type, "application/json");
	cr_assert_str_eq(str(a.json, "target"), "hopper");
	cr_assert_str_eq(str(a.json, "policy"), "auto");
	cr_assert_str_eq(str(a.json, "source"), "declared");
	cr_assert_eq(num(a.json, "num_splits"), 11);
	cr_assert_eq(num(a.json, "workspace_slots"), 4224);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(a.json, "workspace_bytes")));
	answer_free(&a);
}

Test(api, gb10_legacy_one_split_48_slots)
{
	struct answer a = get("/v1/splits?target=gb10&model=qwen3.8-27b&max_batch_size=16");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "policy"), "legacy");
	cr_assert_eq(num(a.json, "num_splits"), 1);
	cr_assert_eq(num(a.json, "workspace_slots"), 48);
	answer_free(&a);
}

Test(api, override_four_comes_from_override)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&override=4");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "policy"), "4");
	cr_assert_str_eq(str(a.json, "source"), "override");
	cr_assert_eq(num(a.json, "num_splits"), 4);
	cr_assert_eq(num(a.json, "workspace_slots"), 16 * 24 * 4);
	answer_free(&a);
}

Test(api, override_typo_keeps_declaration_and_warns)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&override=atuo");
	const cJSON *warnings;

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "policy"), "auto");
	cr_assert_str_eq(str(a.json, "source"), "declared");
	cr_assert_eq(num(a.json, "num_splits"), 11);
	warnings = cJSON_GetObjectItem(a.json, "warnings");
	cr_assert(cJSON_IsArray(warnings));
	cr_assert(strstr(cJSON_GetArrayItem(warnings, 0)->valuestring, "does not parse") != NULL);
	cr_assert(strstr(cJSON_GetArrayItem(warnings, 0)->valuestring, "did you mean \"auto\"") != NULL);
	answer_free(&a);
}

Test(api, empty_override_is_set_and_ignored)
{
	struct answer a = get("/v1/splits?target=gb10&num_q_heads=8&head_dim=128&override=");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "policy"), "legacy");
	cr_assert_str_eq(str(a.json, "override"), "");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a.json, "warnings")), 1);
	answer_free(&a);
}

Test(api, override_with_unicode_space_parses_like_rust)
{
	/* U+3000 IDEOGRAPHIC SPACE around 8, percent-encoded */
	struct answer a = get("/v1/splits?target=gb10&num_q_heads=8&override=%E3%80%808%E3%80%80");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "policy"), "8");
	cr_assert_str_eq(str(a.json, "source"), "override");
	answer_free(&a);
}

/* issue 9: the engine reads a declaration that does not parse as legacy
 * (parse(declared).unwrap_or(Legacy)); so does splitkd, and says so. */
Test(api, declared_typo_reads_as_legacy_and_warns)
{
	static const char *const bodies[] = {
		"/v1/splits?target=h100&model=qwen3-8b&declared=atuo",
		"{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"declared\":\"atuo\"}",
	};

	for (size_t i = 0; i < 2; i++) {
		struct answer a = i == 0 ? get(bodies[i]) : post("/v1/splits", bodies[i]);
		const cJSON *warnings = cJSON_GetObjectItem(a.json, "warnings");
		const char *w0;

		cr_assert_eq(a.status, 200, "%s", a.body);
		cr_assert_str_eq(str(a.json, "declared"), "legacy");
		cr_assert_str_eq(str(a.json, "policy"), "legacy");
		cr_assert_str_eq(str(a.json, "source"), "declared");
		/* hopper's 132 SMs over qwen3-8b's 32 heads, one stream: legacy's 4 */
		cr_assert_eq(num(a.json, "num_splits"), splitk_legacy_splits(132, 32, 1));
		cr_assert_eq(cJSON_GetArraySize(warnings), 1, "%s", a.body);
		w0 = cJSON_GetArrayItem(warnings, 0)->valuestring;
		cr_assert(strstr(w0, "declared \"atuo\" does not parse") != NULL, "%s", w0);
		cr_assert(strstr(w0, "did you mean \"auto\"") != NULL, "%s", w0);
		answer_free(&a);
	}
}

Test(api, declared_typo_is_still_overridden)
{
	struct answer a = get("/v1/splits?sm_count=132&num_q_heads=24&declared=%20&override=4&explain");
	const cJSON *pols = cJSON_GetObjectItem(cJSON_GetObjectItem(a.json, "explain"), "policies");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "policy"), "4");
	cr_assert_str_eq(str(a.json, "source"), "override");
	cr_assert_str_eq(str(cJSON_GetObjectItem(pols, "declared"), "policy"), "legacy");
	cr_assert(strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(a.json, "warnings"), 0)->valuestring,
			 "declared \" \" does not parse") != NULL,
		  "%s", a.body);
	answer_free(&a);
}

Test(api, override_not_utf8_is_ignored_and_echoed_safely)
{
	struct answer a = get("/v1/splits?target=h100&num_q_heads=8&override=4%FF");

	cr_assert_eq(a.status, 200);
	cr_assert_not_null(a.json, "answer must stay valid JSON: %s", a.body);
	cr_assert_str_eq(str(a.json, "source"), "declared");
	cr_assert_str_eq(str(a.json, "override"), "4\xef\xbf\xbd");
	answer_free(&a);
}

Test(api, override_clamp_warns)
{
	struct answer a = get("/v1/splits?target=gb10&num_q_heads=8&override=99");

	cr_assert_eq(a.status, 200);
	cr_assert_eq(num(a.json, "num_splits"), 16);
	cr_assert(strstr(a.body, "clamped to 16") != NULL, "%s", a.body);
	answer_free(&a);
}

Test(api, explicit_numbers_override_the_catalog)
{
	struct answer a = get("/v1/splits?target=h100&sm_count=148&model=llama-3.1-8b&num_q_heads=24"
			      "&head_dim=64&declared=legacy");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "sm_count"), 148);
	cr_assert_eq(num(a.json, "num_q_heads"), 24);
	cr_assert_eq(num(a.json, "head_dim"), 64);
	cr_assert_str_eq(str(a.json, "declared"), "legacy");
	cr_assert_eq(num(a.json, "num_splits"), 6); /* 148 / 24 */
	answer_free(&a);
}

Test(api, workspace_bytes_is_exact_past_2_to_the_64)
{
	/* slots saturate at 2^32-1 and head_dim+2 is 2^32+1: 2^66-ish bytes */
	struct answer a = get("/v1/splits?sm_count=132&num_q_heads=4294967295&head_dim=4294967295"
			      "&max_batch_size=4294967295&declared=auto");
	const char *p = strstr(a.body, "\"workspace_bytes\":");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_not_null(p);
	/* (2^32-1) * (2^32+1) * 4 = (2^64 - 1) * 4 = 73786976294838206460 */
	cr_assert(strncmp(p + strlen("\"workspace_bytes\":"), "73786976294838206460,", 21) == 0, "%s", p);
	cr_assert(strstr(a.body, "saturated") != NULL);
	answer_free(&a);
}

Test(api, sweep_agrees_with_the_core)
{
	static const char *const declared[] = {"legacy", "auto", "3", "16"};
	char uri[256];

	for (size_t d = 0; d < 4; d++) {
		for (uint32_t sm = 1; sm <= 200; sm += 19) {
			for (uint32_t h = 1; h <= 130; h += 13) {
				for (uint32_t mb = 1; mb <= 64; mb *= 4) {
					uint32_t seqs = mb + 3, rows = mb * 2;
					struct splitk_policy pol;
					struct answer a;

					snprintf(uri, sizeof(uri),
						 "/v1/splits?sm_count=%u&num_q_heads=%u&head_dim=128&max_batch_size=%u"
						 "&num_seqs=%u&max_rows=%u&declared=%s",
						 sm, h, mb, seqs, rows, declared[d]);
					a = get(uri);
					cr_assert(splitk_parse(declared[d], strlen(declared[d]), &pol));
					cr_assert_eq(a.status, 200, "%s", a.body);
					cr_assert_eq(num(a.json, "num_splits"),
						     splitk_num_splits(pol, sm, h, splitk_split_ref_seqs(seqs, mb)),
						     "%s", uri);
					cr_assert_eq(num(a.json, "workspace_slots"),
						     splitk_workspace_slots(pol, sm, h, rows,
									    splitk_split_ref_seqs(seqs, mb)));
					cr_assert_eq(num(a.json, "workspace_bytes"),
						     (double)splitk_workspace_slots(pol, sm, h, rows,
										    splitk_split_ref_seqs(seqs, mb)) *
							     130.0 * 4.0);
					answer_free(&a);
				}
			}
		}
	}
}

Test(api, explain_reports_rule_occupancy_and_invariance)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&explain=true");
	const cJSON *e = cJSON_GetObjectItem(a.json, "explain");
	const cJSON *ss, *pols;

	cr_assert_eq(a.status, 200);
	cr_assert_not_null(e);
	cr_assert(strstr(str(e, "rule"), "ceil(2 * 132 / 24)") != NULL, "%s", str(e, "rule"));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "clamped")));
	ss = cJSON_GetObjectItem(e, "single_stream");
	cr_assert_eq(num(ss, "ctas"), 24 * 11);
	cr_assert_eq(num(ss, "waves"), 2.0);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "co_batch_invariant")));
	pols = cJSON_GetObjectItem(e, "policies");
	cr_assert_eq(num(cJSON_GetObjectItem(pols, "legacy"), "num_splits"), 1);
	cr_assert_eq(num(cJSON_GetObjectItem(pols, "auto"), "num_splits"), 11);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(pols, "override")));
	answer_free(&a);
}

Test(api, explain_finds_legacy_moving_past_max_batch)
{
	/* legacy reads num_seqs once it passes max_batch_size: 132/(8*1)=16, 132/(8*4)=4 */
	struct answer a = get("/v1/splits?target=h100&num_q_heads=8&max_rows=4&declared=legacy&explain");
	const cJSON *e = cJSON_GetObjectItem(a.json, "explain");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "co_batch_invariant")), "%s", a.body);
	answer_free(&a);
}

Test(api, explain_auto_clamp_fires_for_few_heads)
{
	struct answer a = get("/v1/splits?target=h100&num_q_heads=8&explain=1");

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(a.json, "explain"), "clamped")));
	answer_free(&a);
}

/* issue 9: explain's numbers are the core's. In 64 bits 2 * 4294967295 /
 * 3e9 rounds up to 3; the core saturates 2 * sm_count at u32 and gets 2. */
Test(api, explain_auto_uses_the_cores_saturated_product)
{
	struct answer a = get("/v1/splits?sm_count=4294967295&num_q_heads=3000000000&declared=auto&explain=1");
	const cJSON *e = cJSON_GetObjectItem(a.json, "explain");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "num_splits"), 2);
	cr_assert(strstr(str(e, "rule"), "clamp(2, 1, 16) = 2") != NULL, "%s", str(e, "rule"));
	cr_assert(strstr(str(e, "rule"), "clamp(3") == NULL, "%s", str(e, "rule"));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "clamped")));
	answer_free(&a);
}

/* issue 9: a pinned override that was clamped says so, as its warning does. */
Test(api, explain_pinned_clamp_agrees_with_the_warning)
{
	struct answer a = get("/v1/splits?target=h100&num_q_heads=8&override=99&explain=1");
	const cJSON *e = cJSON_GetObjectItem(a.json, "explain");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(e, "rule"), "pinned: clamp(99, 1, 16) = 16");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "clamped")));
	cr_assert(strstr(a.body, "override 99 is clamped to 16") != NULL, "%s", a.body);
	answer_free(&a);
}

/* Over a sweep with the edges in it: the rule ends in clamp(X, 1, 16) = Y
 * (auto and pinned) with Y the answer's num_splits and the core's clamp
 * of X, and "clamped" is whether X and Y differ; legacy ends in its count. */
Test(api, explain_rule_agrees_with_the_answer_over_a_sweep)
{
	static const char *const sms[] = {"1", "48", "132", "2147483648", "4294967295"};
	static const char *const heads[] = {"1", "8", "24", "3000000000", "4294967295"};
	static const char *const policies[] = {"declared=auto", "declared=legacy", "override=0",
					       "override=99", "override=4294967295", "declared=7"};
	char uri[256];

	for (size_t i = 0; i < 5; i++) {
		for (size_t j = 0; j < 5; j++) {
			for (size_t k = 0; k < 6; k++) {
				struct answer a;
				const cJSON *e;
				const char *rule, *last;
				unsigned x = 0, y = 0;
				bool has_clamp;

				snprintf(uri, sizeof(uri), "/v1/splits?sm_count=%s&num_q_heads=%s&%s&explain",
					 sms[i], heads[j], policies[k]);
				a = get(uri);
				cr_assert_eq(a.status, 200, "%s: %s", uri, a.body);
				e = cJSON_GetObjectItem(a.json, "explain");
				rule = str(e, "rule");
				last = rule;
				for (const char *p = rule; (p = strstr(p, "clamp(")) != NULL; p++) {
					last = p;
				}
				has_clamp = sscanf(last, "clamp(%u, 1, 16) = %u", &x, &y) == 2;
				if (strncmp(rule, "legacy", 6) == 0) {
					cr_assert_not(has_clamp, "%s: %s", uri, rule);
					cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "clamped")));
					answer_free(&a);
					continue;
				}
				cr_assert(has_clamp, "%s: %s", uri, rule);
				cr_assert_eq(y, num(a.json, "num_splits"), "%s: %s", uri, rule);
				cr_assert_eq(y, x < 1 ? 1 : x > 16 ? 16 : x, "%s: %s", uri, rule);
				cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(e, "clamped")), x != y, "%s: %s", uri,
					     rule);
				answer_free(&a);
			}
		}
	}
}

/* ------------------------------------------------------------ POST */

Test(api, post_single_equals_get)
{
	struct answer g = get("/v1/splits?target=b200&model=gemma-2-9b&max_batch_size=8&override=auto");
	struct answer p = post("/v1/splits", "{\"target\":\"b200\",\"model\":\"gemma-2-9b\","
					     "\"max_batch_size\":8,\"override\":\"auto\"}");

	cr_assert_eq(p.status, 200, "%s", p.body);
	cr_assert_str_eq(p.body, g.body);
	answer_free(&g);
	answer_free(&p);
}

Test(api, post_batch_keeps_order_and_counts_failures)
{
	struct answer a = post("/v1/splits",
			       "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
			       "{\"target\":\"nope\",\"model\":\"qwen3-8b\"},"
			       "{\"target\":\"gb10\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
			       "{\"target\":\"gb10\",\"num_q_heads\":\"8\"}]}");
	const cJSON *r = cJSON_GetObjectItem(a.json, "results");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "count"), 4);
	cr_assert_eq(num(a.json, "failures"), 2);
	cr_assert_eq(num(cJSON_GetArrayItem(r, 0), "num_splits"), 11);
	cr_assert_eq(num(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 1), "error"), "status"), 404);
	cr_assert_eq(num(cJSON_GetArrayItem(r, 2), "workspace_slots"), 48);
	cr_assert_str_eq(str(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 3), "error"), "param"),
			 "num_q_heads");
	answer_free(&a);
}

Test(api, post_batch_of_1024_passes_and_1025_is_too_large)
{
	size_t cap = 64 * 1100;
	char *body = malloc(cap);
	size_t n;
	struct answer a;

	for (int count = 1024; count <= 1025; count++) {
		n = (size_t)snprintf(body, cap, "{\"queries\":[");
		for (int i = 0; i < count; i++) {
			n += (size_t)snprintf(body + n, cap - n, "%s{\"sm_count\":%d,\"num_q_heads\":8}",
					      i ? "," : "", i + 1);
		}
		snprintf(body + n, cap - n, "]}");
		a = post("/v1/splits", body);
		if (count == 1024) {
			cr_assert_eq(a.status, 200);
			cr_assert_eq(num(a.json, "count"), 1024);
			cr_assert_eq(num(a.json, "failures"), 0);
		} else {
			assert_problem(&a, 413, "payload-too-large", "queries");
		}
		answer_free(&a);
	}
	free(body);
}

struct bad_body {
	const char *body;
	int status;
	const char *slug;
	const char *param;
};

Test(api, post_bad_bodies)
{
	static const struct bad_body cases[] = {
		{"", 400, "malformed-json", NULL},
		{"{", 400, "malformed-json", NULL},
		{"{\"target\":\"h100\"} {}", 400, "malformed-json", NULL},
		{"{\"target\":\"h100\",}", 400, "malformed-json", NULL},
		{"{\"target\":\"h1\\u000000\",\"num_q_heads\":8}", 400, "malformed-json", NULL},
		{"{\"target\":\"h100\x01\"}", 400, "malformed-json", NULL},
		{"{\"target\":\"\xff\"}", 400, "malformed-json", NULL},
		{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 400,
		 "malformed-json", NULL},
		{"[]", 400, "invalid-parameter", NULL},
		{"\"h100\"", 400, "invalid-parameter", NULL},
		{"{\"target\":132,\"num_q_heads\":8}", 400, "invalid-parameter", "target"},
		{"{\"target\":\"h100\",\"num_q_heads\":8.5}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":0}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":-8}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":4294967296}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":1e400}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":null}", 400, "invalid-parameter", "num_q_heads"},
		{"{\"target\":\"h100\",\"num_q_heads\":8,\"explain\":\"yes\"}", 400, "invalid-parameter", "explain"},
		{"{\"target\":\"h100\",\"num_q_heads\":8,\"targte\":1}", 400, "unknown-parameter", "targte"},
		{"{\"target\":\"h100\",\"target\":\"gb10\",\"num_q_heads\":8}", 400, "repeated-parameter", "target"},
		{"{\"queries\":[]}", 400, "invalid-parameter", "queries"},
		{"{\"queries\":{}}", 400, "invalid-parameter", "queries"},
		{"{\"queries\":[{}],\"explain\":true}", 400, "unknown-parameter", "explain"},
		{"{\"target\":\"h100\",\"model\":\"nope\"}", 404, "unknown-model", "model"},
		{"{\"num_q_heads\":8}", 400, "missing-parameter", "target"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = call_full("POST", "/v1/splits", "application/json", cases[i].body,
					    strlen(cases[i].body), false);

		assert_problem(&a, cases[i].status, cases[i].slug, cases[i].param);
		answer_free(&a);
	}
}

Test(api, post_content_type)
{
	const char *body = "{\"sm_count\":132,\"num_q_heads\":24}";
	static const char *const good[] = {"application/json", "Application/JSON",
					   "application/json; charset=utf-8", " application/json ;x=y"};
	static const char *const bad[] = {"text/plain", "application/jsonx", "application/x-www-form-urlencoded",
					  "", "json"};

	for (size_t i = 0; i < 4; i++) {
		struct answer a = call_full("POST", "/v1/splits", good[i], body, strlen(body), false);

		cr_assert_eq(a.status, 200, "%s: %s", good[i], a.body);
		answer_free(&a);
	}
	for (size_t i = 0; i < 5; i++) {
		struct answer a = call_full("POST", "/v1/splits", bad[i], body, strlen(body), false);

		assert_problem(&a, 415, "unsupported-media-type", NULL);
		answer_free(&a);
	}
	{
		struct answer a = call_full("POST", "/v1/splits", NULL, body, strlen(body), false);

		assert_problem(&a, 415, "unsupported-media-type", NULL);
		answer_free(&a);
	}
}

/* ---------------------------------------------------- bad query strings */

struct bad_query {
	const char *uri;
	int status;
	const char *slug;
	const char *param;
	const char *suggestion;
};

Test(api, bad_queries)
{
	static const struct bad_query cases[] = {
		{"/v1/splits?targt=h100&model=qwen3-8b", 400, "unknown-parameter", "targt", "target"},
		{"/v1/splits?Target=h100&model=qwen3-8b", 400, "unknown-parameter", "Target", "target"},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch=16", 400, "unknown-parameter", "max_batch", "max_batch_size"},
		{"/v1/splits?target=h100&model=qwen3-8b&max_b=16", 400, "unknown-parameter", "max_b", NULL},
		{"/v1/splits?target=h100&target=gb10&model=qwen3-8b", 400, "repeated-parameter", "target", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=0", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=-1", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=%2B4", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=016", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=1.5", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=4294967296", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=+16", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&max_batch_size=16%00", 400, "invalid-parameter", "max_batch_size", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&sm_count=0x84", 400, "invalid-parameter", "sm_count", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&explain=maybe", 400, "invalid-parameter", "explain", NULL},
		{"/v1/splits?model=qwen3-8b", 400, "missing-parameter", "target", NULL},
		{"/v1/splits?target=h100", 400, "missing-parameter", "model", NULL},
		{"/v1/splits", 400, "missing-parameter", "target", NULL},
		{"/v1/splits?target=h10&model=qwen3-8b", 404, "unknown-target", "target", "h100"},
		{"/v1/splits?target=hoper&model=qwen3-8b", 404, "unknown-target", "target", "hopper"},
		{"/v1/splits?target=tpu&model=qwen3-8b", 404, "unknown-target", "target", NULL},
		{"/v1/splits?target=h100&model=qwen3-8", 404, "unknown-model", "model", "qwen3-8b"},
		{"/v1/splits?target=h100&model=%FF", 404, "unknown-model", "model", NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&override=%zz", 400, "malformed-query", NULL, NULL},
		{"/v1/splits?target=h100&model=qwen3-8b&override=%4", 400, "malformed-query", NULL, NULL},
		{"/v1/targets?verbose=1", 400, "unknown-parameter", "verbose", NULL},
		{"/v1/policy", 400, "missing-parameter", "spelling", NULL},
		{"/v1/matrix?target=h100", 400, "unknown-parameter", "target", NULL},
		{"/v1/targets/tpu", 404, "unknown-target", NULL, NULL},
		{"/v1/models/nope", 404, "unknown-model", NULL, NULL},
		{"/v1/nothing", 404, "not-found", NULL, NULL},
		{"/v1/split", 404, "not-found", NULL, "/v1/splits"},
		{"/v1/event", 404, "not-found", NULL, "/v1/events"},
		{"/metric", 404, "not-found", NULL, "/metrics"},
		{"/V1/Targets", 404, "not-found", NULL, "/v1/targets"},
		{"/v1/splits/", 404, "not-found", NULL, NULL},
		{"/v1/targets/", 404, "not-found", NULL, NULL},
		{"/v1/targets/h100/x", 404, "not-found", NULL, NULL},
		{"/problems/nope", 404, "not-found", NULL, NULL},
		{"/ui/", 404, "not-found", NULL, NULL},
		{"/ui/app.js/", 404, "not-found", NULL, NULL},
		{"/?x=1", 400, "unknown-parameter", "x", NULL},
		{"/ui?x=1", 400, "unknown-parameter", "x", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = get(cases[i].uri);

		assert_problem(&a, cases[i].status, cases[i].slug, cases[i].param);
		if (cases[i].suggestion != NULL) {
			cr_assert_str_eq(str(a.json, "suggestion"), cases[i].suggestion, "%s", cases[i].uri);
		}
		answer_free(&a);
	}
	/* nothing near: no suggestion, the plain pointer to the routes */
	struct answer far = get("/v1/nothing");

	cr_assert_null(cJSON_GetObjectItem(far.json, "suggestion"), "%s", far.body);
	cr_assert_str_eq(str(far.json, "detail"), "no resource at this path (GET /openapi.json lists the routes)");
	answer_free(&far);
	far = get("/v1/split?x=1");
	cr_assert_str_eq(str(far.json, "detail"),
			 "no resource at \"/v1/split\"; did you mean \"/v1/splits\"? (GET /openapi.json lists the routes)");
	answer_free(&far);
}

Test(api, too_many_parameters_and_too_long_uri)
{
	char uri[API_DEFAULT_MAX_URI + 64];
	size_t n = (size_t)snprintf(uri, sizeof(uri), "/v1/splits?");
	struct answer a;

	for (int i = 0; i < 33; i++) {
		n += (size_t)snprintf(uri + n, sizeof(uri) - n, "x%d=1&", i);
	}
	a = get(uri);
	assert_problem(&a, 400, "malformed-query", NULL);
	answer_free(&a);

	memset(uri, 'a', sizeof(uri) - 1);
	memcpy(uri, "/v1/splits?override=", 20);
	uri[API_DEFAULT_MAX_URI + 1] = '\0';
	a = get(uri);
	assert_problem(&a, 414, "uri-too-long", NULL);
	answer_free(&a);
}

Test(api, long_values_are_refused)
{
	char uri[1024];
	int n = snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=qwen3-8b&override=");
	struct answer a;

	memset(uri + n, 'x', 300);
	uri[n + 300] = '\0';
	a = get(uri);
	assert_problem(&a, 400, "invalid-parameter", "override");
	answer_free(&a);
}

Test(api, wrong_method_is_405_with_allow)
{
	static const char *const methods[] = {"PUT", "DELETE", "PATCH", "OPTIONS", "BREW"};

	for (size_t i = 0; i < 5; i++) {
		struct answer a = call_full(methods[i], "/v1/targets", NULL, NULL, 0, false);
		struct answer b = call_full(methods[i], "/v1/splits", NULL, NULL, 0, false);

		assert_problem(&a, 405, "method-not-allowed", NULL);
		cr_assert_str_eq(a.allow, "GET, HEAD");
		assert_problem(&b, 405, "method-not-allowed", NULL);
		cr_assert_str_eq(b.allow, "GET, HEAD, POST");
		answer_free(&a);
		answer_free(&b);
	}
	{
		struct answer a = call_full("POST", "/v1/targets", "application/json", "{}", 2, false);

		assert_problem(&a, 405, "method-not-allowed", NULL);
		answer_free(&a);
	}
}

Test(api, head_is_answered_as_get)
{
	struct answer h = call_full("HEAD", "/v1/targets", NULL, NULL, 0, false);
	struct answer g = get("/v1/targets");

	cr_assert_eq(h.status, 200);
	cr_assert_str_eq(h.body, g.body); /* the server drops the body, not the api */
	answer_free(&h);
	answer_free(&g);
}

/* ------------------------------------------------------- other routes */

Test(api, targets_and_models)
{
	struct answer t = get("/v1/targets");
	struct answer m = get("/v1/models");
	struct answer one = get("/v1/targets/H100");
	struct answer alias = get("/v1/models/LLAMA3.1-8B");
	struct answer enc = get("/v1/targets/h100%2Dpcie");

	cr_assert_eq(t.status, 200);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t.json, "targets")), 8);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m.json, "models")), 13);
	cr_assert_str_eq(str(one.json, "name"), "hopper");
	cr_assert_eq(num(one.json, "sm_count"), 132);
	cr_assert_str_eq(str(one.json, "attn_decode_splitk"), "auto");
	cr_assert_str_eq(str(alias.json, "name"), "llama-3.1-8b");
	cr_assert_eq(num(alias.json, "head_dim"), 128);
	cr_assert_str_eq(str(enc.json, "name"), "h100-pcie");
	answer_free(&t);
	answer_free(&m);
	answer_free(&one);
	answer_free(&alias);
	answer_free(&enc);
}

Test(api, every_target_but_hopper_declares_legacy)
{
	for (size_t i = 0; i < test_catalog->num_targets; i++) {
		const struct catalog_target *t = &test_catalog->targets[i];

		cr_assert_eq(t->declared_policy.kind,
			     strcmp(t->names.name, "hopper") == 0 ? SPLITK_AUTO : SPLITK_LEGACY, "%s", t->names.name);
	}
}

Test(api, catalog_and_version_share_the_digest)
{
	struct answer c = get("/v1/catalog");
	struct answer v = get("/version");
	struct answer r = get("/readyz");

	cr_assert_eq(c.status, 200);
	cr_assert_str_eq(str(c.json, "digest"), test_catalog->digest);
	cr_assert_str_eq(str(v.json, "catalog"), test_catalog->digest);
	cr_assert_str_eq(str(r.json, "catalog"), test_catalog->digest);
	cr_assert_str_eq(str(v.json, "name"), "splitkd");
	answer_free(&c);
	answer_free(&v);
	answer_free(&r);
}

Test(api, health_and_readiness)
{
	struct answer h = get("/healthz");
	struct answer r = get("/readyz");
	struct answer d = call_full("GET", "/readyz", NULL, NULL, 0, true);

	cr_assert_eq(h.status, 200);
	cr_assert_str_eq(str(h.json, "status"), "ok");
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(str(r.json, "status"), "ready");
	cr_assert_eq(d.status, 503);
	cr_assert_str_eq(str(d.json, "status"), "draining");
	answer_free(&h);
	answer_free(&r);
	answer_free(&d);
}

struct policy_case {
	const char *query;
	bool parses;
	const char *policy;
	bool clamped;
};

Test(api, policy_spellings)
{
	static const struct policy_case cases[] = {
		{"auto", true, "auto", false},
		{"LEGACY", true, "legacy", false},
		{"%20%208%09", true, "8", false},
		{"off", true, "1", true},
		{"99", true, "16", true},
		{"%2B4", true, "4", false},
		{"+4", true, "4", false}, /* form encoding: '+' is a space */
		{"atuo", false, NULL, false},
		{"-1", false, NULL, false},
		{"4294967296", false, NULL, false},
		{"", false, NULL, false},
	};
	char uri[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a;

		snprintf(uri, sizeof(uri), "/v1/policy?spelling=%s", cases[i].query);
		a = get(uri);
		cr_assert_eq(a.status, 200, "%s", a.body);
		cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(a.json, "parses")), cases[i].parses, "%s", uri);
		if (cases[i].policy != NULL) {
			cr_assert_str_eq(str(a.json, "policy"), cases[i].policy, "%s", uri);
		} else {
			cr_assert(cJSON_IsNull(cJSON_GetObjectItem(a.json, "policy")));
		}
		cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(a.json, "clamped")), cases[i].clamped, "%s", uri);
		answer_free(&a);
	}
}

Test(api, matrix_cells_equal_single_decisions)
{
	struct answer m = get("/v1/matrix?max_batch_size=16&override=atuo");
	const cJSON *cells = cJSON_GetObjectItem(m.json, "cells"), *cell;
	char uri[256];

	cr_assert_eq(m.status, 200, "%s", m.body);
	cr_assert_eq(cJSON_GetArraySize(cells), 8 * 13);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m.json, "warnings")), 1);
	cJSON_ArrayForEach(cell, cells) {
		struct answer one;

		snprintf(uri, sizeof(uri), "/v1/splits?target=%s&model=%s&max_batch_size=16&override=atuo",
			 str(cell, "target"), str(cell, "model"));
		one = get(uri);
		cr_assert_eq(num(cell, "num_splits"), num(one.json, "num_splits"), "%s", uri);
		cr_assert_eq(num(cell, "workspace_slots"), num(one.json, "workspace_slots"), "%s", uri);
		cr_assert_str_eq(str(cell, "policy"), str(one.json, "policy"));
		answer_free(&one);
	}
	answer_free(&m);
}

Test(api, problem_types_are_served)
{
	struct answer a = get("/problems/unknown-target");

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(str(a.json, "type"), "/problems/unknown-target");
	cr_assert_eq(num(a.json, "status"), 404);
	answer_free(&a);
}

/* Every route in the router is in api/openapi.json, with its methods, and
 * every path there is a route (/metrics included: the server renders it). */
Test(api, openapi_matches_the_router)
{
	struct answer a = get("/openapi.json");
	const cJSON *paths, *p;
	const char *methods;
	size_t i;

	cr_assert_eq(a.status, 200);
	cr_assert_not_null(a.json, "openapi.json is not JSON");
	cr_assert(strncmp(str(a.json, "openapi"), "3.", 2) == 0);
	paths = cJSON_GetObjectItem(a.json, "paths");
	for (i = 0; api_route_path(i, &methods) != NULL; i++) {
		const char *route = api_route_path(i, &methods);
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(paths, route);

		cr_assert_not_null(item, "route %s is not in openapi.json", route);
		/* both ways: an operation is described iff the router takes it */
		cr_assert_eq(cJSON_GetObjectItem(item, "get") != NULL, strstr(methods, "GET") != NULL,
			     "%s: get (router: %s)", route, methods);
		cr_assert_eq(cJSON_GetObjectItem(item, "head") != NULL, strstr(methods, "HEAD") != NULL,
			     "%s: head (router: %s)", route, methods);
		cr_assert_eq(cJSON_GetObjectItem(item, "post") != NULL, strstr(methods, "POST") != NULL,
			     "%s: post (router: %s)", route, methods);
		cr_assert_eq(cJSON_GetArraySize(item),
			     (strstr(methods, "GET") ? 1 : 0) + (strstr(methods, "HEAD") ? 1 : 0) +
				     (strstr(methods, "POST") ? 1 : 0),
			     "%s: operations the router does not take", route);
	}
	cJSON_ArrayForEach(p, paths) {
		bool found = false;

		for (i = 0; !found && api_route_path(i, &methods) != NULL; i++) {
			found = strcmp(api_route_path(i, &methods), p->string) == 0;
		}
		cr_assert(found, "openapi.json has %s, the router does not", p->string);
	}
	answer_free(&a);
}

/* --------------------------------------------------- conditional GET */

Test(api, etag_and_if_none_match)
{
	const char *uri = "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16";
	struct answer a = get(uri);
	struct answer same = call_cond("GET", uri, NULL, NULL, 0, false, a.etag);
	struct answer head = call_cond("HEAD", uri, NULL, NULL, 0, false, a.etag);
	struct answer listed = call_cond("GET", uri, NULL, NULL, 0, false, "\"x\", W/\"y\"");
	char weak[40], list[80];
	struct answer w, l, star, stale, other;

	cr_assert_eq(a.status, 200);
	cr_assert_eq(strlen(a.etag), 18, "%s", a.etag);
	cr_assert_eq(a.etag[0], '"');
	cr_assert_eq(same.status, 304);
	/* the 200's bytes, kept so the server can announce their length */
	cr_assert_str_eq(same.body, a.body);
	cr_assert_str_eq(same.etag, a.etag);
	cr_assert_eq(head.status, 304);
	cr_assert_eq(listed.status, 200);
	snprintf(weak, sizeof(weak), "W/%s", a.etag);
	w = call_cond("GET", uri, NULL, NULL, 0, false, weak);
	cr_assert_eq(w.status, 304, "a weak match is a match for If-None-Match");
	snprintf(list, sizeof(list), "\"aaaa\" , %s", a.etag);
	l = call_cond("GET", uri, NULL, NULL, 0, false, list);
	cr_assert_eq(l.status, 304);
	star = call_cond("GET", uri, NULL, NULL, 0, false, "*");
	cr_assert_eq(star.status, 304);
	stale = call_cond("GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=8", NULL,
			  NULL, 0, false, a.etag);
	cr_assert_eq(stale.status, 200, "another answer, another tag");
	cr_assert_str_neq(stale.etag, a.etag);
	other = call_cond("GET", "/v1/splits?target=nope&model=qwen3-8b", NULL, NULL, 0, false, "*");
	cr_assert_eq(other.status, 404, "errors are never 304");
	cr_assert_str_eq(other.etag, "");
	answer_free(&a);
	answer_free(&same);
	answer_free(&head);
	answer_free(&listed);
	answer_free(&w);
	answer_free(&l);
	answer_free(&star);
	answer_free(&stale);
	answer_free(&other);
}

Test(api, malformed_if_none_match_answers_in_full)
{
	static const char *const headers[] = {"\"unterminated", "W/", "", ",,,", "W/\""};

	for (size_t i = 0; i < 5; i++) {
		struct answer a = call_cond("GET", "/healthz", NULL, NULL, 0, false, headers[i]);

		cr_assert_eq(a.status, 200, "%s", headers[i]);
		answer_free(&a);
	}
}

static unsigned decisions_seen;

static void on_decision(void *cls, const char *catalog, const char *target, enum splitk_kind kind)
{
	(void)cls;
	(void)catalog;
	(void)target;
	(void)kind;
	decisions_seen++;
}

Test(api, decisions_are_reported_once_each)
{
	struct api_context ctx = {.catalog = test_catalog, .on_decision = on_decision};
	const char *body = "{\"queries\":[{\"sm_count\":1,\"num_q_heads\":1},{\"target\":\"x\"},"
			   "{\"target\":\"gb10\",\"num_q_heads\":1}]}";
	struct api_request req = {.method = "POST", .uri = "/v1/splits", .uri_len = 10,
				  .content_type = "application/json", .body = body,
				  .body_len = strlen(body)};
	struct api_response resp;

	decisions_seen = 0;
	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 200);
	cr_assert_eq(decisions_seen, 2, "a failed query is not a decision");
	api_response_cleanup(&resp);
}

/* Found by fuzz_api (its invariant was wrong, not the port): the legacy
 * rule is the seed's uncapped sm_count / ctas, so it can pass 16. */
Test(api, legacy_is_not_capped_at_sixteen)
{
	struct answer a = get("/v1/splits?sm_count=580&num_q_heads=24&declared=legacy");

	cr_assert_eq(a.status, 200);
	cr_assert_eq(num(a.json, "num_splits"), 24); /* 580 / 24 */
	cr_assert_eq(splitk_legacy_splits(580, 24, 1), 24);
	cr_assert_eq(num(a.json, "workspace_slots"), 580); /* legacy's old arena */
	answer_free(&a);
}

/* ---------------------------------------------------------- limits */

/* One call with the limits a server passes (issue 9: the handler checked a
 * compiled-in 1 MiB whatever --max-body said). */
static struct answer call_limited(const struct api_limits *limits, const char *method,
				  const char *uri, const char *body, size_t body_len)
{
	struct api_context ctx = {.catalog = test_catalog, .limits = limits};
	struct api_request req = {.method = method, .uri = uri, .uri_len = strlen(uri),
				  .content_type = "application/json", .body = body ? body : "",
				  .body_len = body_len};

	return call_ctx(&ctx, &req);
}

Test(api, body_limit_is_the_servers_raised_or_lowered)
{
	static const struct api_limits raised = {4u << 20, API_DEFAULT_MAX_URI, API_DEFAULT_MAX_BATCH};
	static const struct api_limits lowered = {100, API_DEFAULT_MAX_URI, API_DEFAULT_MAX_BATCH};
	size_t len = 2u << 20; /* 2 MiB: over the default, under 4 MiB */
	char *body = malloc(len);
	const char *query = "{\"sm_count\":132,\"num_q_heads\":24,\"declared\":\"auto\"}";
	struct answer a;

	memset(body, ' ', len);
	memcpy(body, query, strlen(query));
	a = call_limited(&raised, "POST", "/v1/splits", body, len);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "num_splits"), 11);
	answer_free(&a);
	a = call_limited(NULL, "POST", "/v1/splits", body, len);
	assert_problem(&a, 413, "payload-too-large", NULL);
	cr_assert(strstr(str(a.json, "detail"), "over 1048576 bytes") != NULL, "%s", a.body);
	answer_free(&a);
	a = call_limited(&lowered, "POST", "/v1/splits", body, 101);
	assert_problem(&a, 413, "payload-too-large", NULL);
	cr_assert(strstr(str(a.json, "detail"), "over 100 bytes") != NULL, "%s", a.body);
	answer_free(&a);
	free(body);
}

Test(api, batch_and_uri_limits_are_the_servers)
{
	static const struct api_limits small = {API_DEFAULT_MAX_BODY, 30, 2};
	static const struct api_limits large = {API_DEFAULT_MAX_BODY, 20000, 3000};
	const char *three = "{\"queries\":[{\"sm_count\":1,\"num_q_heads\":1},"
			    "{\"sm_count\":2,\"num_q_heads\":1},{\"sm_count\":3,\"num_q_heads\":1}]}";
	char uri[12000];
	size_t n = (size_t)snprintf(uri, sizeof(uri), "/v1/targets/%%68%%31%%30%%30?");
	struct answer a;

	a = call_limited(&small, "POST", "/v1/splits", three, strlen(three));
	assert_problem(&a, 413, "payload-too-large", "queries");
	cr_assert(strstr(str(a.json, "detail"), "at most 2") != NULL, "%s", a.body);
	answer_free(&a);
	a = call_limited(&large, "POST", "/v1/splits", three, strlen(three));
	cr_assert_eq(a.status, 200, "%s", a.body);
	answer_free(&a);
	/* a target past the default 8192 (empty pairs are skipped), and past
	 * the stack's decoding space: the {name} is decoded after the query */
	memset(uri + n, '&', 10000);
	uri[n + 10000] = '\0';
	a = call_limited(&large, "GET", uri, NULL, 0);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "name"), "hopper");
	answer_free(&a);
	a = call_limited(NULL, "GET", uri, NULL, 0);
	assert_problem(&a, 414, "uri-too-long", NULL);
	answer_free(&a);
	a = call_limited(&small, "GET", "/v1/splits?target=h100&model=qwen3-8b", NULL, 0);
	assert_problem(&a, 414, "uri-too-long", NULL);
	cr_assert(strstr(str(a.json, "detail"), "the limit is 30") != NULL, "%s", a.body);
	answer_free(&a);
}

/* ------------------------------------------------- response headers */

Test(api, response_headers_hold_a_few_static_pairs)
{
	struct api_response resp = {0};

	for (int i = 0; i < API_MAX_HEADERS; i++) {
		cr_assert_eq(api_response_add_header(&resp, "X-Content-Type-Options", "nosniff"), 0);
	}
	cr_assert_eq(api_response_add_header(&resp, "Retry-After", "1"), -1);
	cr_assert_eq(resp.num_headers, API_MAX_HEADERS);
	cr_assert_str_eq(resp.headers[API_MAX_HEADERS - 1].name, "X-Content-Type-Options");
}

Test(api, openapi_is_served_from_the_embedded_bytes_with_a_tag)
{
	struct answer a = get("/openapi.json");
	struct answer again = call_cond("GET", "/openapi.json", NULL, NULL, 0, false, a.etag);

	cr_assert_eq(a.status, 200);
	cr_assert_eq(strlen(a.body), embedded_openapi_json_len);
	cr_assert_eq(memcmp(a.body, embedded_openapi_json, embedded_openapi_json_len), 0);
	cr_assert_eq(strlen(a.etag), 18);
	cr_assert_eq(again.status, 304);
	answer_free(&a);
	answer_free(&again);
}

/* limit=0 and before=0 are the query layer's 400 (a u32 is 1 or more), so
 * GET /v1/history never sees a zero of either: its own messages are for
 * a limit above its page. */
Test(api, history_zero_limit_and_before_are_the_query_layer_s)
{
	const char *cases[][2] = {
		{"/v1/history?limit=0", "{\"type\":\"/problems/invalid-parameter\",\"title\":\"Invalid parameter\",\"status\":400,\"detail\":\"limit must be a plain decimal integer from 1 to 4294967295 (no sign, no leading zero, no spaces)\",\"param\":\"limit\"}"},
		{"/v1/history?before=0", "{\"type\":\"/problems/invalid-parameter\",\"title\":\"Invalid parameter\",\"status\":400,\"detail\":\"before must be a plain decimal integer from 1 to 4294967295 (no sign, no leading zero, no spaces)\",\"param\":\"before\"}"},
		{"/v1/history?limit=1001", "{\"type\":\"/problems/invalid-parameter\",\"title\":\"Invalid parameter\",\"status\":400,\"detail\":\"limit must be from 1 to 100, not 1001\",\"param\":\"limit\"}"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = get(cases[i][0]);

		cr_assert_eq(a.status, 400, "%s: %d", cases[i][0], a.status);
		cr_assert_str_eq(a.body, cases[i][1], "%s", cases[i][0]);
		answer_free(&a);
	}
}
