/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The other engines through the API (engines.c, handler_engines.c): the
 * issue's worked example on an H100 with Llama-3.1-8B, the comparison's
 * verdicts, the seed's answer untouched by engine=seed and by the other
 * engines' inputs, and every way a query for an engine is refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "engines.h"
#include "helpers.h"

TestSuite(engines, .init = load_default_catalog, .fini = free_default_catalog);

#define EXAMPLE "target=h100&model=llama-3.1-8b&seq_len=8192&page_size=256"

static struct answer ask(const char *engine, unsigned num_seqs)
{
	char uri[256];

	snprintf(uri, sizeof(uri), "/v1/splits?" EXAMPLE "&engine=%s&num_seqs=%u", engine, num_seqs);
	return get(uri);
}

/* H100 (132 SMs), 32 q / 8 kv heads, d 128, 8,192 tokens, pages of 256. */
Test(engines, the_worked_example_fa2_32_4_1_and_fa3_13_2_1_under_15)
{
	static const struct {
		const char *engine;
		unsigned num_seqs, num_splits, bound;
	} cases[] = {
		{"fa2", 1, 32, 32}, {"fa2", 8, 4, 4}, {"fa2", 64, 1, 1},
		{"fa3", 1, 13, 15}, {"fa3", 8, 2, 15}, {"fa3", 64, 1, 15},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = ask(cases[i].engine, cases[i].num_seqs);

		cr_assert_eq(a.status, 200, "%s", a.body);
		cr_assert_str_eq(str(a.json, "engine"), cases[i].engine);
		cr_assert_str_eq(str(a.json, "target"), "hopper");
		cr_assert_eq(num(a.json, "sm_count"), 132);
		cr_assert_eq(num(a.json, "num_kv_heads"), 8, "the model's, by default");
		cr_assert_eq(num(a.json, "num_seqs"), cases[i].num_seqs);
		cr_assert_eq(num(a.json, "num_splits"), cases[i].num_splits, "%s at %u: %s",
			     cases[i].engine, cases[i].num_seqs, a.body);
		cr_assert_eq(num(a.json, "num_splits_bound"), cases[i].bound, "%s", a.body);
		cr_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(a.json, "terms")));
		answer_free(&a);
	}
}

/* FA2's scratch is its out_accum and softmax_lse_accum (float) at the
 * rounded head size, after the GQA swap (seqlen_q 4, 8 heads): none at
 * one split. FA3's is sized by the host bound, 15. */
Test(engines, the_scratch_is_each_engines_own)
{
	struct answer fa2 = ask("fa2", 1), fa2_64 = ask("fa2", 64), fa3 = ask("fa3", 8);

	cr_assert_eq(num(fa2.json, "workspace_bytes"), 32.0 * 8 * 4 * (128 + 1) * 4);
	cr_assert_eq(num(fa2_64.json, "workspace_bytes"), 0);
	cr_assert_eq(num(fa3.json, "workspace_bytes"), 15.0 * 8 * 32 * (128 + 1) * 4);
	answer_free(&fa2);
	answer_free(&fa2_64);
	answer_free(&fa3);
}

/* engine=seed, and the other engines' inputs beside it, leave the seed's
 * answer as it is without them, byte for byte. */
Test(engines, the_seed_answers_as_before_and_reads_none_of_the_new_inputs)
{
	struct answer plain = get("/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8");
	const char *with[] = {
		"/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8&engine=seed",
		"/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8&engine=atlas",
		"/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8&engine=ATLAS&cudagraph_mode=none"
		"&deterministic=true&max_model_len=9&head_dim_v=512&compute_capability=80",
		"/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8&engine=seed&seq_len=8192"
		"&page_size=256&num_kv_heads=4&blocks_per_sm=3&cuda_graph=true",
		"/v1/splits?target=h100&model=llama-3.1-8b&num_seqs=8&seq_len=1",
	};

	cr_assert_eq(plain.status, 200);
	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
		struct answer a = get(with[i]);

		cr_assert_eq(a.status, 200, "%s", a.body);
		cr_assert_str_eq(a.body, plain.body, "%s", with[i]);
		cr_assert_str_eq(a.etag, plain.etag);
		answer_free(&a);
	}
	answer_free(&plain);
}

Test(engines, refusals_say_what_to_change)
{
	static const struct {
		const char *uri;
		int status;
		const char *slug, *param;
	} cases[] = {
		{"/v1/splits?" EXAMPLE "&engine=fa", 404, "unknown-engine", "engine"},
		{"/v1/splits?target=h100&model=llama-3.1-8b&engine=fa2", 400, "missing-parameter",
		 "seq_len"},
		{"/v1/splits?" EXAMPLE "&engine=flashinfer", 400, "missing-parameter", "blocks_per_sm"},
		{"/v1/splits?target=h100&model=qwen3.8-27b&engine=fa3&seq_len=9", 400,
		 "missing-parameter", "num_kv_heads"},
		/* FA2's paged KV takes pages of a multiple of 256 */
		{"/v1/splits?target=h100&model=llama-3.1-8b&seq_len=9&engine=fa2&page_size=16", 422,
		 "unsupported-shape", "page_size"},
		/* vLLM V0's kernels are built for blocks of 8, 16 and 32 */
		{"/v1/splits?" EXAMPLE "&engine=vllm-v0", 422, "unsupported-shape", "page_size"},
		/* V1's FlashAttention takes pages of a multiple of 16 */
		{"/v1/splits?target=h100&model=llama-3.1-8b&seq_len=9&engine=vllm&page_size=8", 422,
		 "unsupported-shape", "page_size"},
		{"/v1/splits?" EXAMPLE "&engine=vllm&cudagraph_mode=ful", 400, "invalid-parameter",
		 "cudagraph_mode"},
		/* a target the catalog gives no compute capability, and none given */
		{"/v1/splits?sm_count=132&num_q_heads=32&num_kv_heads=8&head_dim=128&seq_len=9"
		 "&engine=vllm",
		 400, "missing-parameter", "compute_capability"},
		/* Blackwell's FA4 is not ported */
		{"/v1/splits?target=b200&model=llama-3.1-8b&seq_len=9&engine=vllm", 422,
		 "unsupported-shape", "compute_capability"},
		{"/v1/splits?target=h100&model=llama-3.1-8b&seq_len=9&engine=flashmla", 422,
		 "unsupported-shape", "head_dim"},
		{"/v1/splits?" EXAMPLE "&engine=fa2&num_kv_heads=5", 422, "unsupported-shape", NULL},
		{"/v1/splits?" EXAMPLE "&engine=fa2&fields=num_splits", 400, "invalid-parameter",
		 "fields"},
		{"/v1/splits?target=h100&model=llama-3.1-8b&engine=fa2&seq_len=0", 400,
		 "invalid-parameter", "seq_len"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = get(cases[i].uri);

		assert_problem(&a, cases[i].status, cases[i].slug, cases[i].param);
		answer_free(&a);
	}
}

Test(engines, an_unknown_engine_suggests_the_nearest)
{
	struct answer a = get("/v1/splits?" EXAMPLE "&engine=flashinfr");

	assert_problem(&a, 404, "unknown-engine", "engine");
	cr_assert_str_eq(str(a.json, "suggestion"), "flashinfer");
	answer_free(&a);
}

/* A batch asks each query of its own engine, through the fast reader and
 * through cJSON (a query that names a catalog takes the tree). */
Test(engines, a_batch_asks_each_query_of_its_engine)
{
	const char *bodies[] = {
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"engine\":\"fa2\","
		"\"seq_len\":8192,\"page_size\":256,\"num_seqs\":8},"
		"{\"target\":\"h100\",\"model\":\"llama-3.1-8b\"},"
		"{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"engine\":\"vllm-v0\",\"seq_len\":8192,"
		"\"page_size\":256}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"engine\":\"fa2\","
		"\"seq_len\":8192,\"page_size\":256,\"num_seqs\":8,\"catalog\":\"default\"},"
		"{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"catalog\":\"default\"},"
		"{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"engine\":\"vllm-v0\",\"seq_len\":8192,"
		"\"page_size\":256}]}",
	};

	for (size_t b = 0; b < 2; b++) {
		struct answer a = post("/v1/splits", bodies[b]);
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(a.json, "results");

		cr_assert_eq(a.status, 200, "%s", a.body);
		cr_assert_eq(num(a.json, "failures"), 1, "%s", a.body);
		cr_assert_str_eq(str(cJSON_GetArrayItem(r, 0), "engine"), "fa2");
		cr_assert_eq(num(cJSON_GetArrayItem(r, 0), "num_splits"), 4);
		cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(r, 1), "engine"));
		cr_assert_eq(num(cJSON_GetArrayItem(r, 1), "num_splits"), 9, "the seed's auto");
		cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(r, 2), "error"));
		answer_free(&a);
	}
}

static const cJSON *entry(const cJSON *cmp, const char *engine)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cmp, "engines"))
	{
		if (strcmp(str(e, "engine"), engine) == 0) {
			return e;
		}
	}
	cr_assert_fail("no %s in the comparison", engine);
	return NULL;
}

static bool invariant(const cJSON *e)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "batch_invariant"));
}

/* The comparison for the worked example: the seed holds still on Hopper
 * (auto), every other engine moves; each count is the one /v1/splits
 * answers at that co-batch. */
Test(engines, the_comparison_of_the_worked_example)
{
	struct answer a = get("/v1/compare?" EXAMPLE "&max_batch_size=64&blocks_per_sm=2");
	const char *names[] = {"fa2", "fa3", "flashinfer"};

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert(invariant(entry(a.json, "atlas")), "%s", a.body);
	cr_assert_str_eq(str(entry(a.json, "atlas"), "policy"), "auto");
	for (size_t i = 0; i < 3; i++) {
		const cJSON *e = entry(a.json, names[i]);
		const cJSON *by = cJSON_GetObjectItemCaseSensitive(e, "num_splits_by_num_seqs");
		unsigned at[] = {1, 8, 64};

		cr_assert(!invariant(e), "%s holds still: %s", names[i], a.body);
		cr_assert_eq(cJSON_GetArraySize(by), 64);
		cr_assert_gt(num(e, "distinct"), 1);
		for (size_t k = 0; k < 3; k++) {
			char uri[256];

			snprintf(uri, sizeof(uri),
				 "/v1/splits?" EXAMPLE "&engine=%s&num_seqs=%u&blocks_per_sm=2",
				 names[i], at[k]);
			struct answer one = get(uri);

			cr_assert_eq(cJSON_GetArrayItem(by, (int)at[k] - 1)->valuedouble,
				     num(one.json, "num_splits"), "%s at %u", names[i], at[k]);
			answer_free(&one);
		}
	}
	/* FA2 held at the seed's count for this target and model (auto: 9) */
	const cJSON *fa2 = cJSON_GetObjectItemCaseSensitive(entry(a.json, "fa2"), "invariant");
	cr_assert_str_eq(str(fa2, "setting"), "num_splits=9");
	cr_assert(invariant(fa2));
	const cJSON *fa3 = cJSON_GetObjectItemCaseSensitive(entry(a.json, "fa3"), "invariant");
	cr_assert_str_eq(str(fa3, "setting"), "num_splits=1");
	cr_assert(invariant(fa3));
	cr_assert_eq(num(fa3, "max_workspace_bytes"), 0);
	/* FlashInfer has no knob on this path; vLLM refuses pages of 256 */
	cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(entry(a.json, "flashinfer"),
							       "invariant")));
	cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(entry(a.json, "vllm-v0"), "problem"));
	answer_free(&a);
}

/* A legacy target's seed moves with the co-batch, and the comparison says
 * so, with auto as the setting that holds it still. */
Test(engines, a_legacy_target_moves_and_auto_holds_it)
{
	struct answer a = get("/v1/compare?target=a100&model=llama-3.1-8b&seq_len=100&max_batch_size=4");
	const cJSON *seed = entry(a.json, "atlas");
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(seed, "num_splits_by_num_seqs");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(seed, "policy"), "legacy");
	cr_assert(!invariant(seed), "%s", a.body);
	cr_assert_eq(cJSON_GetArrayItem(by, 0)->valuedouble, 108 / 32);
	cr_assert_eq(cJSON_GetArrayItem(by, 1)->valuedouble, 1);
	cr_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(seed, "invariant"), "setting"),
			 "override=auto");
	answer_free(&a);
}

Test(engines, the_listing_names_each_upstream_and_what_it_reads)
{
	struct answer a = get("/v1/engines");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(a.json, "engines");
	const cJSON *e;
	int n = 0;

	cr_assert_eq(a.status, 200);
	cJSON_ArrayForEach(e, list)
	{
		bool seed = strcmp(str(e, "name"), "atlas") == 0;

		n++;
		cr_assert_eq(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "repository")), seed);
		cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "commits")) == 0,
			     seed);
		cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "reads_seq_len")), !seed);
		cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "reads")), 0);
	}
	cr_assert_eq(n, 10);
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
						    cJSON_GetArrayItem(list, 3), "gpu_reads"),
					    0)
				 ->valuestring,
			 "blocks_per_sm");
	answer_free(&a);
}

Test(engines, ofrep_answers_the_engine_a_context_names)
{
	struct answer a = post("/ofrep/v1/evaluate/flags/num_splits",
			       "{\"context\":{\"target\":\"h100\",\"model\":\"llama-3.1-8b\","
			       "\"engine\":\"fa3\",\"seq_len\":8192,\"page_size\":256,\"num_seqs\":8}}");
	struct answer slots = post("/ofrep/v1/evaluate/flags/workspace_slots",
				   "{\"context\":{\"target\":\"h100\",\"model\":\"llama-3.1-8b\","
				   "\"engine\":\"fa3\",\"seq_len\":8192}}");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "value"), 2);
	cr_assert_str_eq(str(a.json, "variant"), "fa3");
	cr_assert_str_eq(str(slots.json, "errorCode"), "INVALID_CONTEXT", "%s", slots.body);
	answer_free(&a);
	answer_free(&slots);
}

/* Every term a port names is written as it stands (engines.c): plain
 * printable ASCII with no quote or backslash, within the bound the
 * answer's room is sized by. Over a sweep of shapes, answered or not. */
Test(engines, every_term_name_is_plain_and_within_its_bound)
{
	unsigned seen = 0;

	for (int id = 1; id < ENGINES_COUNT; id++) {
		for (uint32_t i = 0; i < 20000; i++) {
			struct engine_shape s = {
				.sm_count = 1 + i % 300, .num_seqs = 1 + (i * 7) % 1200,
				.num_kv_heads = 1 + i % 8, .head_dim = 64u << (i % 3),
				.seq_len = 1 + (i * 104729u) % 200000, .page_size = 16u << (i % 5),
				.blocks_per_sm = 1 + i % 4, .cuda_graph = i % 2,
			};
			s.num_q_heads = s.num_kv_heads * (1 + (i / 8) % 8);
			struct engine_answer a = engines_launch((enum engines_id)id, &s);

			for (unsigned t = 0; t < a.n_terms; t++) {
				const char *n = a.terms[t].name;

				cr_assert_leq(strlen(n), ENGINES_TERM_NAME_MAX, "%s", n);
				for (const char *c = n; *c != '\0'; c++) {
					cr_assert(*c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\',
						  "%s: term \"%s\"", engines_info((enum engines_id)id)->name, n);
				}
				seen++;
			}
		}
	}
	cr_assert_gt(seen, 100000);
}

/* The seed's explain says it reads none of the other engines' inputs, and
 * only when one is given: without them explain is as it was. */
Test(engines, the_seeds_explain_names_the_inputs_it_does_not_read)
{
	struct answer with = get("/v1/splits?target=h100&model=llama-3.1-8b&explain=1&seq_len=100"
				 "&cuda_graph=1");
	struct answer without = get("/v1/splits?target=h100&model=llama-3.1-8b&explain=1");
	const cJSON *unread = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(with.json, "explain"), "unread");
	const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(unread, "inputs");

	cr_assert_eq(with.status, 200, "%s", with.body);
	cr_assert_eq(cJSON_GetArraySize(inputs), 2, "%s", with.body);
	cr_assert_str_eq(cJSON_GetArrayItem(inputs, 0)->valuestring, "seq_len");
	cr_assert_str_eq(cJSON_GetArrayItem(inputs, 1)->valuestring, "cuda_graph");
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(without.json, "explain"), "unread"));
	cr_assert_eq(num(with.json, "num_splits"), num(without.json, "num_splits"));
	answer_free(&with);
	answer_free(&without);
}

/* FA2 keeps upstream's types: its efficiency is float and the 0.85 it is
 * compared with a double. 108 SMs (num_SMs 216), 9 heads (9 row blocks),
 * d 64 and 24,832 tokens (97 KV blocks of 256): the double compare
 * refuses 17 splits (float(153/216) = 0.708333313 is below 0.85 * the
 * float 0.833333313 = 0.708333316) and takes 20; with 0.85f it would round
 * down to 0.708333313 and take 17. */
Test(engines, fa2s_085_is_a_double)
{
	struct answer a = get("/v1/splits?sm_count=108&num_q_heads=9&num_kv_heads=9&head_dim=64"
			      "&engine=fa2&seq_len=24832&page_size=256");
	const cJSON *terms = cJSON_GetObjectItemCaseSensitive(a.json, "terms");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(terms, "num_SMs"), 216);
	cr_assert_eq(num(terms, "batch_nheads_mblocks"), 9);
	cr_assert_eq(num(terms, "num_n_blocks"), 97);
	cr_assert_eq(num(a.json, "num_splits"), 20, "%s", a.body);
	answer_free(&a);
}

/* The comparison's seed is asked with the override it was given, says it,
 * and carries the seed's warnings (a spelling that does not parse). */
Test(engines, the_comparison_echoes_the_override_and_the_seeds_warnings)
{
	struct answer typo = get("/v1/compare?target=h100&model=llama-3.1-8b&seq_len=100"
				 "&max_batch_size=2&override=atuo");
	struct answer four = get("/v1/compare?target=a100&model=llama-3.1-8b&seq_len=100"
				 "&max_batch_size=2&override=4");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(entry(typo.json, "atlas"), "warnings");

	cr_assert_eq(typo.status, 200, "%s", typo.body);
	cr_assert_str_eq(str(typo.json, "override"), "atuo");
	cr_assert_eq(cJSON_GetArraySize(w), 1, "%s", typo.body);
	cr_assert_not_null(strstr(cJSON_GetArrayItem(w, 0)->valuestring, "\"atuo\" does not parse"));
	cr_assert_str_eq(str(entry(four.json, "atlas"), "policy"), "4");
	cr_assert(invariant(entry(four.json, "atlas")), "a pinned count holds still: %s", four.body);
	answer_free(&typo);
	answer_free(&four);
}

/* A refusal's param is an input's name, as the table spells it
 * (policy/engine_inputs.h): the page marks the control of that name and
 * a client changes the parameter of that name. Swept over shapes every
 * port refuses in its own ways (zeros, odd pages, wide heads, a fixed
 * num_splits, no blocks_per_sm), with a generator of the test's own. */
Test(engines, every_refusal_names_an_input_of_the_table)
{
#define TABLE_NAME(a, e, name, kind, from, bounds, zero, about) #name,
	static const char *const names[] = {ENGINE_INPUTS(TABLE_NAME, ~)};
#undef TABLE_NAME
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned refused = 0;

	for (unsigned i = 0; i < 50000; i++) {
		struct engine_shape s;
		uint32_t r[10];

		for (unsigned k = 0; k < 10; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			r[k] = (uint32_t)(x >> 32);
		}
		memset(&s, 0, sizeof(s));
		s.sm_count = r[0] % 200;
		s.num_seqs = r[1] % 600;
		s.num_kv_heads = r[2] % 9;
		s.num_q_heads = s.num_kv_heads * (r[3] % 9) + (r[3] % 23 == 0);
		s.head_dim = (r[4] % 10) * 32;
		s.seq_len = r[5] % 300000;
		s.page_size = 1u << (r[6] % 11);
		s.blocks_per_sm = r[7] % 4;
		s.cuda_graph = r[8] & 1;
		s.num_splits = r[9] % 5 == 0 ? r[9] % 300 : 0;
		for (int id = ENGINES_SEED + 1; id < ENGINES_COUNT; id++) {
			struct engine_answer a = engines_launch((enum engines_id)id, &s);
			bool known = false;

			if (a.status != ENGINE_REFUSED) {
				continue;
			}
			refused++;
			cr_assert_not_null(a.refused_input, "%s: a refusal names no input",
					   engines_info((enum engines_id)id)->name);
			for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
				known = known || strcmp(names[n], a.refused_input) == 0;
			}
			cr_assert(known, "%s refuses naming \"%s\", no input of engine_inputs.h (%s)",
				  engines_info((enum engines_id)id)->name, a.refused_input, a.refused);
		}
	}
	cr_assert_gt(refused, 1000, "the sweep refused only %u shapes", refused);
}

/* The engines fleets run today, on the mixed batch: Llama-3.1-8B
 * on H100 (pages of 16 for vLLM, each engine's own default otherwise). */
#define MIXED "target=h100&model=llama-3.1-8b&seq_lens=8192,512,512,512,100,100,100,100"

static void assert_by_seq(const char *uri, const unsigned *want, int n)
{
	struct answer a = get(uri);
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(a.json, "num_splits_by_seq");

	cr_assert_eq(a.status, 200, "%s: %s", uri, a.body);
	cr_assert_eq(cJSON_GetArraySize(by), n, "%s", a.body);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(cJSON_GetArrayItem(by, i)->valuedouble, want[i], "%s: sequence %d: %s",
			     uri, i, a.body);
	}
	cr_assert_gt(num(a.json, "workspace_bytes"), 0, "%s", a.body);
	answer_free(&a);
}

Test(engines, todays_engines_split_the_worked_batch_as_upstream_does)
{
	static const unsigned vllm[] = {11, 1, 1, 1, 1, 1, 1, 1};
	static const unsigned sglang[] = {8, 1, 1, 1, 1, 1, 1, 1};
	static const unsigned trtllm[] = {16, 16, 16, 16, 16, 16, 16, 16};
	static const unsigned triton[] = {16, 16, 16, 16, 7, 7, 7, 7};
	static const unsigned flashmla[] = {8, 9, 9, 8, 8, 9, 9, 8};

	assert_by_seq("/v1/splits?" MIXED "&engine=vllm", vllm, 8);
	assert_by_seq("/v1/splits?" MIXED "&engine=sglang", sglang, 8);
	assert_by_seq("/v1/splits?" MIXED "&engine=trtllm", trtllm, 8);
	assert_by_seq("/v1/splits?" MIXED "&engine=vllm-triton", triton, 8);
	assert_by_seq("/v1/splits?target=h100&model=deepseek-v3&engine=flashmla"
		      "&seq_lens=8192,8192,8192,8192,8192,8192,8192,8192",
		      flashmla, 8);
}

/* vLLM V1 picks its FlashAttention by the target's compute capability,
 * from the catalog unless the query says: FA3 on Hopper, FA2 on Ampere,
 * and under VLLM_BATCH_INVARIANT=1 one split. */
Test(engines, vllm_takes_the_compute_capability_from_the_catalog)
{
	struct answer h100 = get("/v1/splits?" MIXED "&engine=vllm");
	struct answer a100 = get("/v1/splits?target=a100&model=llama-3.1-8b&seq_len=8192&engine=vllm");
	struct answer as80 = get("/v1/splits?" MIXED "&engine=vllm&compute_capability=80");
	struct answer inv = get("/v1/splits?" MIXED "&engine=vllm&batch_invariant=true");

	cr_assert_eq(num(h100.json, "compute_capability"), 90, "%s", h100.body);
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(h100.json, "terms"), "fa_version"), 3);
	cr_assert_eq(a100.status, 200, "%s", a100.body);
	cr_assert_eq(num(a100.json, "compute_capability"), 80);
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(a100.json, "terms"), "fa_version"), 2);
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(as80.json, "terms"), "fa_version"), 2,
		     "%s", as80.body);
	cr_assert_eq(inv.status, 200, "%s", inv.body);
	cr_assert_eq(num(inv.json, "num_splits"), 1, "%s", inv.body);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(inv.json, "batch_invariant")));
	answer_free(&h100);
	answer_free(&a100);
	answer_free(&as80);
	answer_free(&inv);
}

/* An input the engine does not read is a warning in its answer, as the
 * seed warns; an answer that needs none has no warnings member. */
Test(engines, an_input_the_engine_does_not_read_is_a_warning)
{
	struct answer quiet = get("/v1/splits?" MIXED "&engine=fa3");
	struct answer loud = get("/v1/splits?" MIXED "&engine=fa3&deterministic=true&head_dim_v=512");
	struct answer v0 = get("/v1/splits?" MIXED "&engine=vllm-v0");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(loud.json, "warnings");

	cr_assert_eq(quiet.status, 200, "%s", quiet.body);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(quiet.json, "warnings"), "%s", quiet.body);
	cr_assert_eq(cJSON_GetArraySize(w), 2, "%s", loud.body);
	cr_assert(strstr(cJSON_GetArrayItem(w, 0)->valuestring, "deterministic is not read by fa3"));
	cr_assert(strstr(cJSON_GetArrayItem(w, 1)->valuestring, "head_dim_v is not read by fa3"));
	/* the answer itself is the same */
	cr_assert_eq(num(loud.json, "num_splits"), num(quiet.json, "num_splits"));
	cr_assert(strstr(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v0.json, "warnings"),
					    0)->valuestring,
			 "removed"),
		  "%s", v0.body);
	answer_free(&quiet);
	answer_free(&loud);
	answer_free(&v0);
}

/* With no page_size each engine takes its own: every engine but FlashMLA
 * (an MLA kernel: head_dim 576 only) answers Llama-3.1-8B on Hopper, and
 * each one that moves names the setting that holds it still. */
Test(engines, one_comparison_shows_every_engine_with_its_own_defaults)
{
	struct answer a = get("/v1/compare?target=h100&model=llama-3.1-8b&seq_len=4096"
			      "&max_batch_size=8&blocks_per_sm=2");
	struct answer m = get("/v1/compare?" MIXED "&blocks_per_sm=2");
	static const struct {
		const char *engine, *setting;
	} held[] = {
		{"fa3", "num_splits=1"},
		{"vllm", "batch_invariant=true"},
		{"sglang", "deterministic=true"},
		{"trtllm", "deterministic=true"},
	};
	const cJSON *e;
	int answered = 0;

	cr_assert_eq(a.status, 200, "%s", a.body);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(a.json, "engines"))
	{
		bool refused = cJSON_GetObjectItemCaseSensitive(e, "problem") != NULL;

		cr_assert_eq(refused, strcmp(str(e, "engine"), "flashmla") == 0, "%s",
			     str(e, "engine"));
		answered += !refused;
	}
	cr_assert_eq(answered, 9);
	cr_assert_eq(m.status, 200, "%s", m.body);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		const cJSON *x = entry(m.json, held[i].engine);
		const cJSON *inv = cJSON_GetObjectItemCaseSensitive(x, "invariant");

		cr_assert(!invariant(x), "%s holds still: %s", held[i].engine, m.body);
		cr_assert_str_eq(str(inv, "setting"), held[i].setting);
		cr_assert(invariant(inv), "%s: %s", held[i].engine, m.body);
	}
	/* TensorRT-LLM's lone short requests go to masked MHA: unknown alone */
	cr_assert(cJSON_IsNull(cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(entry(m.json, "trtllm"), "alone_by_seq"), 7)));
	answer_free(&a);
	answer_free(&m);
}

Test(engines, the_listing_gives_each_engine_its_defaults_and_sources)
{
	struct answer a = get("/v1/engines");
	const cJSON *e;
	static const struct {
		const char *name;
		unsigned page_size;
	} want[] = {{"fa2", 256}, {"vllm", 16}, {"sglang", 1}, {"trtllm", 32}, {"flashmla", 64}};
	size_t found = 0;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(a.json, "engines"))
	{
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			if (strcmp(str(e, "name"), want[i].name) == 0) {
				cr_assert_eq(num(e, "page_size"), want[i].page_size, "%s",
					     want[i].name);
				cr_assert_gt(cJSON_GetArraySize(
						     cJSON_GetObjectItemCaseSensitive(e, "files")),
					     0);
				cr_assert_gt(cJSON_GetArraySize(
						     cJSON_GetObjectItemCaseSensitive(e, "functions")),
					     0);
				found++;
			}
		}
	}
	cr_assert_eq(found, sizeof(want) / sizeof(want[0]));
	answer_free(&a);
}

/* The reserve (issue 51): for every engine, the batch GET /v1/reserve
 * names gives exactly the bytes it reports when asked of /v1/splits. */
static double reserve_checked(const char *base, const char *engine_and_settings)
{
	char uri[512];
	struct answer r, s;
	const cJSON *lens;
	const cJSON *x;
	size_t len;
	char *q;
	double bytes;

	snprintf(uri, sizeof(uri), "/v1/reserve?%s&%s", base, engine_and_settings);
	r = get(uri);
	cr_assert_eq(r.status, 200, "%s: %s", uri, r.body);
	lens = cJSON_GetObjectItemCaseSensitive(r.json, "seq_lens");
	cr_assert_gt(cJSON_GetArraySize(lens), 0, "%s", r.body);
	cr_assert_leq(cJSON_GetArraySize(lens), num(r.json, "max_batch_size"));
	cr_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.json, "layers_multiply")));
	q = malloc(65536);
	len = (size_t)snprintf(q, 65536, "/v1/splits?%s&%s&seq_lens=", base, engine_and_settings);
	cJSON_ArrayForEach(x, lens)
	{
		cr_assert_leq(x->valuedouble, num(r.json, "max_model_len"));
		len += (size_t)snprintf(q + len, 65536 - len, "%s%.0f", x == lens->child ? "" : ",",
					x->valuedouble);
	}
	/* the engine/max_batch_size/max_model_len in base are read as they are */
	s = get(q);
	cr_assert_eq(s.status, 200, "%s: %s", q, s.body);
	cr_assert_eq(num(s.json, "workspace_bytes"), num(r.json, "workspace_bytes"),
		     "%s: the witness gives %.0f, the reserve says %.0f", engine_and_settings,
		     num(s.json, "workspace_bytes"), num(r.json, "workspace_bytes"));
	bytes = num(r.json, "workspace_bytes");
	free(q);
	answer_free(&r);
	answer_free(&s);
	return bytes;
}

Test(engines, each_reserve_names_a_batch_that_reaches_it)
{
	static const char *const llama[] = {
		"engine=fa2",
		"engine=fa3",
		"engine=flashinfer&blocks_per_sm=2",
		"engine=flashinfer&tensor_cores=1",
		"engine=vllm",
		"engine=vllm&cudagraph_mode=none",
		"engine=vllm&batch_invariant=1",
		"engine=vllm-v0",
		"engine=vllm-triton",
		"engine=sglang",
		"engine=sglang&deterministic=1",
		"engine=trtllm",
		"engine=trtllm&deterministic=1",
	};

	for (size_t i = 0; i < sizeof(llama) / sizeof(llama[0]); i++) {
		reserve_checked("target=h100&model=llama-3.1-8b&max_batch_size=64&max_model_len=32768",
				llama[i]);
	}
	reserve_checked("target=a100&model=llama-3.1-8b&max_batch_size=16&max_model_len=8192",
			"engine=vllm");
	reserve_checked("target=h100&model=deepseek-v3&max_batch_size=64&max_model_len=32768",
			"engine=flashmla");
}

/* No batch within the bounds takes more than the reserve: the unit test
 * of the core samples 100,000 a setting (test_reserve); here, through the
 * API, a few shapes that are not the witness. */
Test(engines, a_reserve_bounds_the_batches_within_it)
{
	const char *base = "target=h100&model=llama-3.1-8b&max_batch_size=8&max_model_len=4096";
	double fa3 = reserve_checked(base, "engine=fa3");
	double sglang = reserve_checked(base, "engine=sglang");
	static const char *const batches[] = {"4096", "1,4096", "4096,4096,4096", "100,200,4096,1",
					      "4096,4096,4096,4096,4096,4096,4096,4096"};

	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		char uri[256];
		struct answer a;

		snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=llama-3.1-8b&engine=fa3&seq_lens=%s",
			 batches[i]);
		a = get(uri);
		cr_assert_leq(num(a.json, "workspace_bytes"), fa3, "%s", a.body);
		answer_free(&a);
		snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=llama-3.1-8b&engine=sglang&seq_lens=%s",
			 batches[i]);
		a = get(uri);
		cr_assert_leq(num(a.json, "workspace_bytes"), sglang, "%s", a.body);
		answer_free(&a);
	}
}

Test(engines, a_reserve_with_bad_bounds_says_which)
{
	static const struct {
		const char *uri;
		int status;
		const char *slug, *param;
	} cases[] = {
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_model_len=100", 400,
		 "missing-parameter", "max_batch_size"},
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_batch_size=0&max_model_len=1",
		 400, "invalid-parameter", "max_batch_size"},
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_batch_size=4097"
		 "&max_model_len=1",
		 400, "invalid-parameter", "max_batch_size"},
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_batch_size=4"
		 "&max_model_len=2147483648",
		 400, "invalid-parameter", "max_model_len"},
		{"/v1/reserve?target=h100&model=qwen3.8-27b&num_kv_heads=8&head_dim=128&engine=fa3"
		 "&max_batch_size=4",
		 400, "missing-parameter", "max_model_len"},
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_batch_size=4"
		 "&seq_lens=9",
		 400, "invalid-parameter", "seq_lens"},
		{"/v1/compare?target=h100&model=llama-3.1-8b&seq_lens=100,200&max_model_len=150", 400,
		 "invalid-parameter", "max_model_len"},
		{"/v1/compare?target=h100&model=llama-3.1-8b&seq_lens=100,200&max_model_len=250"
		 "&max_batch_size=1",
		 400, "invalid-parameter", "max_batch_size"},
		/* a search past its cap says so, naming what to shrink */
		{"/v1/reserve?target=h100&model=llama-3.1-8b&engine=trtllm&max_batch_size=4096"
		 "&max_model_len=2147483647",
		 422, "unsupported-shape", "max_batch_size"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer a = get(cases[i].uri);

		assert_problem(&a, cases[i].status, cases[i].slug, cases[i].param);
		answer_free(&a);
	}
}

/* The comparison gives each engine's reserve where max_model_len is given,
 * each the same as GET /v1/reserve's; the seed's is its arena. */
Test(engines, the_comparison_gives_each_engines_reserve)
{
	struct answer c = get("/v1/compare?target=h100&model=llama-3.1-8b&seq_len=32768"
			      "&max_batch_size=64&max_model_len=32768&blocks_per_sm=2");
	struct answer plain = get("/v1/compare?target=h100&model=llama-3.1-8b&seq_len=32768"
				  "&max_batch_size=64&blocks_per_sm=2");
	static const char *const names[] = {"fa2", "fa3", "vllm", "sglang", "trtllm", "vllm-triton"};

	cr_assert_eq(c.status, 200, "%s", c.body);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(entry(plain.json, "fa3"), "reserve"),
		       "no max_model_len, no reserve");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char uri[256];
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(entry(c.json, names[i]), "reserve");
		struct answer one;

		snprintf(uri, sizeof(uri),
			 "/v1/reserve?target=h100&model=llama-3.1-8b&engine=%s&max_batch_size=64"
			 "&max_model_len=32768&blocks_per_sm=2",
			 names[i]);
		one = get(uri);
		cr_assert_eq(num(r, "workspace_bytes"), num(one.json, "workspace_bytes"), "%s",
			     names[i]);
		cr_assert_str_eq(str(r, "method"), str(one.json, "method"));
		answer_free(&one);
	}
	/* the seed's: its arena at max_rows = 64, as /v1/splits sizes it */
	struct answer seed = get("/v1/splits?target=h100&model=llama-3.1-8b&max_batch_size=64");
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(entry(c.json, "atlas"), "reserve"),
			 "workspace_bytes"),
		     num(seed.json, "workspace_bytes"));
	answer_free(&seed);
	answer_free(&c);
	answer_free(&plain);
}
