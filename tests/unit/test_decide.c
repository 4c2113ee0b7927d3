/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Decisions under a catalog that states the rule's constants
 * (splitk_target_waves 4, max_decode_splits 32; b200 declaring "24"),
 * through the pure request handler: every route that decides — GET and
 * POST /v1/splits, explain, /v1/matrix, /v1/policy, OFREP single and
 * bulk, the diff — answers with the catalog's constants, each number
 * checked against the core called with them (and shown to differ from
 * the seed's where it should), and the listings say what they were.
 */
#include <stdio.h>
#include <stdlib.h>

#include "diff.h"
#include "helpers.h"
#include "splitk.h"

#define POL_AUTO ((struct splitk_policy){SPLITK_AUTO, 0})

static const struct splitk_constants k4_32 = {4, 32};

/* The embedded catalog with the constants stated and b200 pinned at 24,
 * which the seed's cap would clamp to 16. */
static void load_catalog_at_4_32(void)
{
	cJSON *doc = cJSON_ParseWithLength(embedded_catalog_json, embedded_catalog_json_len);
	cJSON *targets = cJSON_GetObjectItemCaseSensitive(doc, "targets"), *t;
	char *text, err[512];

	cJSON_AddItemToObject(doc, "splitk_target_waves", cJSON_CreateNumber(4));
	cJSON_AddItemToObject(doc, "max_decode_splits", cJSON_CreateNumber(32));
	cJSON_ArrayForEach(t, targets) {
		if (strcmp(cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring, "b200") == 0) {
			cJSON_ReplaceItemInObjectCaseSensitive(t, "attn_decode_splitk", cJSON_CreateString("24"));
		}
	}
	text = cJSON_PrintUnformatted(doc);
	test_catalog = catalog_load(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(test_catalog, "%s", err);
	cr_assert_eq(test_catalog->constants.target_waves, 4);
	cr_assert_eq(test_catalog->constants.max_decode_splits, 32);
	free(text);
	cJSON_Delete(doc);
}

TestSuite(constants, .init = load_catalog_at_4_32, .fini = free_default_catalog);

/* A decision's numbers are the core's at the catalog's constants, for the
 * inputs it echoes. */
static void assert_decision_at(const cJSON *d, struct splitk_constants k)
{
	struct splitk_policy pol;
	uint32_t sm = (uint32_t)num(d, "sm_count"), heads = (uint32_t)num(d, "num_q_heads");
	uint32_t ref = splitk_split_ref_seqs((uint32_t)num(d, "num_seqs"),
					     (uint32_t)num(d, "max_batch_size"));
	const char *label = str(d, "policy");

	cr_assert(splitk_parse_requested_with(k, label, strlen(label), &pol, &(uint32_t){0}), "%s", label);
	cr_assert_eq(num(d, "num_splits"), splitk_num_splits_with(k, pol, sm, heads, ref));
	cr_assert_eq(num(d, "workspace_slots"),
		     splitk_workspace_slots_with(k, pol, sm, heads, (uint32_t)num(d, "max_rows"), ref));
}

Test(constants, get_splits_uses_the_catalogs_constants)
{
	struct answer a = get("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16");

	cr_assert_eq(a.status, 200, "%s", a.body);
	assert_decision_at(a.json, k4_32);
	/* ceil(4 * 132 / 24) = 22, past the seed's 16; the seed's rule says 11 */
	cr_assert_eq(num(a.json, "num_splits"), 22);
	cr_assert_eq(num(a.json, "workspace_slots"), 16 * 24 * 22);
	cr_assert_neq(num(a.json, "num_splits"), splitk_num_splits(POL_AUTO, 132, 24, 16));
	answer_free(&a);
}

Test(constants, declared_and_override_counts_clamp_to_the_catalogs_cap)
{
	struct answer b200 = get("/v1/splits?target=b200&model=qwen3.8-27b");
	struct answer declared = get("/v1/splits?sm_count=132&num_q_heads=24&declared=99");
	struct answer over = get("/v1/splits?target=h100&model=qwen3.8-27b&override=40");
	struct answer within = get("/v1/splits?target=h100&model=qwen3.8-27b&override=30");

	cr_assert_str_eq(str(b200.json, "policy"), "24", "%s", b200.body);
	cr_assert_eq(num(b200.json, "num_splits"), 24);
	cr_assert_str_eq(str(declared.json, "policy"), "32", "%s", declared.body);
	cr_assert_eq(num(declared.json, "num_splits"), 32);
	cr_assert_str_eq(str(over.json, "policy"), "32", "%s", over.body);
	cr_assert_not_null(strstr(over.body, "override 40 is clamped to 32"), "%s", over.body);
	cr_assert_str_eq(str(within.json, "policy"), "30");
	cr_assert_null(strstr(within.body, "clamped"), "%s", within.body); /* 30 is within 32 */
	answer_free(&b200);
	answer_free(&declared);
	answer_free(&over);
	answer_free(&within);
}

Test(constants, explain_writes_the_rule_with_the_catalogs_numbers)
{
	struct answer a = get("/v1/splits?target=h100&model=llama-3.1-8b&explain=1");
	struct answer p = get("/v1/splits?target=h100&model=llama-3.1-8b&override=99&explain=1");
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(a.json, "explain");

	cr_assert_str_eq(str(x, "rule"),
			 "auto: clamp(ceil(4 * sm_count / num_q_heads), 1, 32) = "
			 "clamp(ceil(4 * 132 / 32), 1, 32) = clamp(17, 1, 32) = 17");
	cr_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(p.json, "explain"), "rule"),
			 "pinned: clamp(99, 1, 32) = 32");
	assert_decision_at(a.json, k4_32);
	answer_free(&a);
	answer_free(&p);
}

Test(constants, a_batch_decides_each_query_at_the_catalogs_constants)
{
	struct answer a = post("/v1/splits", "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\"},"
					     "{\"target\":\"b200\",\"model\":\"gemma-2-9b\",\"override\":\"auto\"},"
					     "{\"sm_count\":132,\"num_q_heads\":1}]}");
	const cJSON *r;
	size_t n = 0;

	cr_assert_eq(a.status, 200, "%s", a.body);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(a.json, "results")) {
		assert_decision_at(r, k4_32);
		n++;
	}
	cr_assert_eq(n, 3);
	answer_free(&a);
}

Test(constants, every_matrix_cell_is_the_core_at_the_catalogs_constants)
{
	struct answer a = get("/v1/matrix?max_batch_size=16");
	const cJSON *cell;
	size_t n = 0;

	cr_assert_eq(a.status, 200);
	cJSON_ArrayForEach(cell, cJSON_GetObjectItemCaseSensitive(a.json, "cells")) {
		const struct catalog_target *t = catalog_find_target(test_catalog, str(cell, "target"),
								      strlen(str(cell, "target")));
		const struct catalog_model *m = catalog_find_model(test_catalog, str(cell, "model"),
								    strlen(str(cell, "model")));

		cr_assert_eq(num(cell, "num_splits"),
			     splitk_num_splits_with(k4_32, t->declared_policy, t->sm_count, m->num_q_heads, 16));
		cr_assert_eq(num(cell, "workspace_slots"),
			     splitk_workspace_slots_with(k4_32, t->declared_policy, t->sm_count,
							 m->num_q_heads, 16, 16));
		n++;
	}
	cr_assert_eq(n, test_catalog->num_targets * test_catalog->num_models);
	answer_free(&a);
}

Test(constants, policy_clamps_to_the_catalogs_cap_and_says_so)
{
	struct answer a = get("/v1/policy?spelling=99"), b = get("/v1/policy?spelling=24");

	cr_assert_eq(num(a.json, "pinned"), 32);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.json, "clamped")));
	cr_assert_str_eq(str(a.json, "note"),
			 "a pinned count, clamped to 1..32; 0/off/false/no mean 1 (no split-K)");
	cr_assert_eq(num(b.json, "pinned"), 24);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(b.json, "clamped")));
	answer_free(&a);
	answer_free(&b);
}

Test(constants, ofrep_single_and_bulk_answer_the_catalogs_count)
{
	static const char body[] =
		"{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16}}";
	struct answer one = post("/ofrep/v1/evaluate/flags/num_splits", body);
	struct answer all = post("/ofrep/v1/evaluate/flags", body);
	const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(all.json, "flags"), 0);

	cr_assert_eq(one.status, 200, "%s", one.body);
	cr_assert_eq(num(one.json, "value"), splitk_num_splits_with(k4_32, POL_AUTO, 132, 24, 16));
	cr_assert_eq(num(one.json, "value"), 22);
	cr_assert_str_eq(str(first, "key"), "num_splits");
	cr_assert_eq(num(first, "value"), 22);
	answer_free(&one);
	answer_free(&all);
}

Test(constants, the_catalog_and_targets_listings_say_what_the_rule_used)
{
	struct answer t = get("/v1/targets"), c = get("/v1/catalog"), m = get("/v1/models");

	cr_assert_eq(num(t.json, "splitk_target_waves"), 4);
	cr_assert_eq(num(t.json, "max_decode_splits"), 32);
	cr_assert_eq(num(c.json, "splitk_target_waves"), 4);
	cr_assert_eq(num(c.json, "max_decode_splits"), 32);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(m.json, "max_decode_splits"));
	answer_free(&t);
	answer_free(&c);
	answer_free(&m);
}

/* At the seed's constants the listings carry neither member: the bytes of
 * before (tests/unit/golden holds them whole). */
Test(constants, the_seeds_catalog_lists_no_constants)
{
	struct catalog *at_4_32 = test_catalog;
	struct answer t, c;

	load_default_catalog();
	t = get("/v1/targets");
	c = get("/v1/catalog");
	cr_assert_null(strstr(t.body, "max_decode_splits"), "%s", t.body);
	cr_assert_null(strstr(c.body, "splitk_target_waves"));
	answer_free(&t);
	answer_free(&c);
	free_default_catalog();
	test_catalog = at_4_32;
}

/* The diff from the seed's constants to these lists both and every cell
 * they move, each side the core at its catalog's constants. */
Test(constants, the_diff_lists_the_constants_and_the_cells_they_move)
{
	char err[256];
	struct catalog *seed = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	struct jsonw w;
	cJSON *j, *cell;
	size_t hopper = 0;

	cr_assert_not_null(seed);
	jsonw_init(&w, 0);
	diff_write(&w, seed, test_catalog, (struct decide_shape){16, 1, 16}, (struct slice){NULL, 0});
	j = cJSON_ParseWithLength(w.buf, w.len);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "constants")), 2, "%.*s",
		     (int)w.len, w.buf);
	cJSON_ArrayForEach(cell, cJSON_GetObjectItemCaseSensitive(j, "cells")) {
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(cell, "from");
		const cJSON *to = cJSON_GetObjectItemCaseSensitive(cell, "to");
		const struct catalog_model *m = catalog_find_model(seed, str(cell, "model"),
								    strlen(str(cell, "model")));

		if (strcmp(str(cell, "target"), "hopper") != 0) {
			continue;
		}
		cr_assert_eq(num(from, "num_splits"), splitk_num_splits(POL_AUTO, 132, m->num_q_heads, 16));
		cr_assert_eq(num(to, "num_splits"), splitk_num_splits_with(k4_32, POL_AUTO, 132,
									    m->num_q_heads, 16));
		hopper++;
	}
	cr_assert_gt(hopper, 0);
	cJSON_Delete(j);
	jsonw_cleanup(&w);
	catalog_free(seed);
}
