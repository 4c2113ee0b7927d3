/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fields: an answer cut down to some members is the whole answer with the
 * others left out — every member exactly as the whole answer has it, in
 * its order, the whole answer a writer call per member (reference.h) —
 * over a sweep of decisions; and every way to get the list wrong
 * is a 400 with the reason (and a "did you mean" for a near miss).
 */
#include <stdio.h>
#include <stdlib.h>

#include "answer.h"
#include "decide.h"
#include "fields.h"
#include "helpers.h"
#include "reference.h"

TestSuite(fields, .init = load_default_catalog, .fini = free_default_catalog);

/* The queries of the sweep: catalog pairs, numbers alone, explain, a
 * typo'd override (warnings), a pinned override, a known head_dim. */
static const char *const sweep[] = {
	"target=h100&model=qwen3.8-27b&max_batch_size=16",
	"target=gb10&model=qwen3.8-27b&max_batch_size=16&num_seqs=4",
	"target=b200&model=llama-3.1-70b&head_dim=128&max_batch_size=64&explain=1",
	"sm_count=132&num_q_heads=24&override=atuo&max_rows=2&max_batch_size=8",
	"sm_count=4294967295&num_q_heads=3000000000&head_dim=4294967295&override=99",
	"target=a100&num_q_heads=40&declared=legacy&explain=true",
};

static char *written(const char *params, unsigned mask, bool whole)
{
	struct query q;
	struct problem p;
	struct decision d;
	struct jsonw w;
	char scratch[512];
	char *out;
	size_t len;

	cr_assert_eq(query_parse(params, strlen(params), scratch, DECIDE_FIELDS, &q, &p), 0, "%s: %s",
		     params, p.detail);
	cr_assert_eq(decide_run(test_catalog, &q, &d, &p), 0, "%s: %s", params, p.detail);
	jsonw_init(&w, 0);
	if (whole) {
		reference_write(&w, &d, test_catalog, FIELDS_ALL);
	} else {
		answer_write(&w, &d, test_catalog, mask);
	}
	out = jsonw_take(&w, &len);
	cr_assert_not_null(out);
	return out;
}

Test(fields, all_members_are_the_whole_answer_byte_for_byte)
{
	for (size_t i = 0; i < sizeof(sweep) / sizeof(sweep[0]); i++) {
		char *whole = written(sweep[i], 0, true), *all = written(sweep[i], FIELDS_ALL, false);

		cr_assert_str_eq(all, whole, "%s", sweep[i]);
		free(whole);
		free(all);
	}
}

/* Each member alone, and each pair of neighbours, is `{"name":<the whole
 * answer's text for it>}`: the text is found in the whole answer as it is. */
Test(fields, each_member_is_cut_from_the_whole_answer_as_it_stands)
{
	for (size_t i = 0; i < sizeof(sweep) / sizeof(sweep[0]); i++) {
		char *whole = written(sweep[i], 0, true);
		cJSON *full = cJSON_Parse(whole);

		cr_assert_not_null(full);
		for (int m = 0; m < FM_COUNT; m++) {
			for (int pair = 0; pair < 2; pair++) {
				unsigned mask = FIELDS_BIT(m) | (pair && m + 1 < FM_COUNT ? FIELDS_BIT(m + 1) : 0);
				char *cut = written(sweep[i], mask, false);
				size_t len = strlen(cut);
				cJSON *j = cJSON_Parse(cut);
				int n = 0;

				cr_assert_not_null(j, "%s", cut);
				cr_assert(cut[0] == '{' && cut[len - 1] == '}');
				/* the members inside the braces appear in the whole answer as they are */
				cut[len - 1] = '\0';
				cr_assert(len == 2 || strstr(whole, cut + 1) != NULL, "%s: %s is not in %s", sweep[i],
					  cut + 1, whole);
				for (cJSON *e = j->child; e != NULL; e = e->next, n++) {
					cr_assert(cJSON_Compare(e, cJSON_GetObjectItemCaseSensitive(full, e->string), true));
				}
				/* explain is there only when asked for; every other member always */
				for (int k = 0; k < FM_COUNT; k++) {
					bool want = (mask & FIELDS_BIT(k)) &&
						    cJSON_HasObjectItem(full, fields_name((enum fields_member)k));

					cr_assert_eq(cJSON_HasObjectItem(j, fields_name((enum fields_member)k)), want,
						     "%s, mask %x: %s", sweep[i], mask, fields_name((enum fields_member)k));
				}
				cJSON_Delete(j);
				free(cut);
			}
		}
		cJSON_Delete(full);
		free(whole);
	}
}

Test(fields, get_answers_only_the_members_asked_for_in_the_answers_order)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"
			      "&fields=workspace_bytes%2Cnum_splits");
	struct answer b = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"
			      "&fields=num_splits,workspace_bytes");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(a.body, "{\"num_splits\":11,\"workspace_bytes\":null}");
	cr_assert_str_eq(b.body, a.body);
	cr_assert_str_eq(a.etag, b.etag);
	answer_free(&a);
	answer_free(&b);
}

Test(fields, a_bad_list_is_a_400_with_the_reason)
{
	static const struct {
		const char *fields, *detail, *suggestion;
	} cases[] = {
		{"num_split", "fields: \"num_split\" is no member of the answer; did you mean \"num_splits\"?",
		 "num_splits"},
		{"num_splits,worksapce_bytes", "did you mean \"workspace_bytes\"?", "workspace_bytes"},
		{"NUM_SPLITS", "did you mean \"num_splits\"?", "num_splits"},
		{"bogus", "fields: \"bogus\" is no member of the answer (see /openapi.json", NULL},
		{"", "fields must name at least one member", NULL},
		{"num_splits,", "fields has an empty name", NULL},
		{",num_splits", "fields has an empty name", NULL},
		{"num_splits,,policy", "fields has an empty name", NULL},
		{"policy,num_splits,policy", "fields names \"policy\" more than once", NULL},
		{"num_splits%20", "\"num_splits \" is no member of the answer; did you mean \"num_splits\"?", "num_splits"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char uri[160];
		struct answer a;

		snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=qwen3-8b&fields=%s", cases[i].fields);
		a = get(uri);
		assert_problem(&a, 400, "invalid-parameter", "fields");
		cr_assert_not_null(strstr(str(a.json, "detail"), cases[i].detail), "%s: %s", uri, a.body);
		if (cases[i].suggestion != NULL) {
			cr_assert_str_eq(str(a.json, "suggestion"), cases[i].suggestion, "%s", a.body);
		} else {
			cr_assert_null(cJSON_GetObjectItem(a.json, "suggestion"), "%s", a.body);
		}
		answer_free(&a);
	}
}

Test(fields, a_batch_cuts_every_decision_and_leaves_errors_whole)
{
	const char *with = "{\"fields\":\"source,num_splits\",\"queries\":[{\"target\":\"h100\",\"model\":"
			   "\"qwen3.8-27b\",\"max_batch_size\":16},{\"target\":\"hoper\",\"model\":\"qwen3-8b\"},"
			   "{\"target\":\"gb10\",\"model\":\"qwen3-8b\",\"override\":\"4\"}]}";
	const char *without = "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
			      "{\"target\":\"hoper\",\"model\":\"qwen3-8b\"},"
			      "{\"target\":\"gb10\",\"model\":\"qwen3-8b\",\"override\":\"4\"}]}";
	struct answer a = post("/v1/splits", with), b = post("/v1/splits", without);
	const cJSON *ra = cJSON_GetObjectItem(a.json, "results"), *rb = cJSON_GetObjectItem(b.json, "results");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "failures"), 1);
	cr_assert_str_eq(str(a.json, "catalog"), str(b.json, "catalog"));
	cr_assert_eq(cJSON_GetArraySize(ra), 3);
	for (int i = 0; i < 3; i++) {
		const cJSON *x = cJSON_GetArrayItem(ra, i), *y = cJSON_GetArrayItem(rb, i);

		if (cJSON_HasObjectItem(y, "error")) {
			cr_assert(cJSON_Compare(x, y, true), "an error result changed: %s", a.body);
			continue;
		}
		cr_assert_eq(cJSON_GetArraySize(x), 2, "%s", a.body);
		cr_assert_str_eq(x->child->string, "source");
		cr_assert(cJSON_Compare(cJSON_GetObjectItem(x, "source"), cJSON_GetObjectItem(y, "source"), true));
		cr_assert(cJSON_Compare(cJSON_GetObjectItem(x, "num_splits"), cJSON_GetObjectItem(y, "num_splits"), true));
	}
	cr_assert_lt(strlen(a.body), strlen(b.body) / 2);
	answer_free(&a);
	answer_free(&b);
}

Test(fields, a_batch_refuses_a_bad_list_whole)
{
	static const char *const bodies[] = {
		"{\"fields\":\"num_split\",\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
		"{\"fields\":[\"num_splits\"],\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
		"{\"fields\":\"\",\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		struct answer a = post("/v1/splits", bodies[i]);

		assert_problem(&a, 400, "invalid-parameter", "fields");
		answer_free(&a);
	}
}

/* A one-decision body takes the inputs alone, as a batch's queries do. */
Test(fields, a_one_decision_body_has_no_fields)
{
	struct answer a = post("/v1/splits", "{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"fields\":\"policy\"}");

	assert_problem(&a, 400, "unknown-parameter", NULL);
	answer_free(&a);
}
