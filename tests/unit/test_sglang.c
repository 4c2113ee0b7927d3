/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/sglang, the core alone: the worked numbers on an H100 (the
 * dynamic split and the deterministic tile over the same mixed batch),
 * what a CUDA graph's padding rows change, the static fill, the splits
 * the 32-token rounding leaves empty, equal lengths, and the refusals.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sglang.h"

#define MIXED_N 8
static const uint32_t mixed[MIXED_N] = {8192, 512, 512, 512, 100, 100, 100, 100};

/* H100 (132 SMs), 32 q / 8 kv heads, head_dim 128 (bf16): Llama-3.1-8B. */
static struct engine_shape h100(void)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.sm_count = 132;
	s.num_q_heads = 32;
	s.num_kv_heads = 8;
	s.head_dim = 128;
	s.page_size = 1;
	return s;
}

static struct sglang_options defaults(void)
{
	const struct sglang_options o = {8, 0, false, 0, false, 0, 0, 0};

	return o;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct sglang_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return sglang_launch_batch(s, &b, o, by_seq);
}

static uint64_t term(const struct engine_answer *a, const char *name)
{
	for (unsigned i = 0; i < a->n_terms; i++) {
		if (strcmp(a->terms[i].name, name) == 0) {
			return a->terms[i].value;
		}
	}
	cr_assert_fail("no term %s", name);
	return 0;
}

/* The default: max 8192 and min 100 give max_kv_splits_1 = 8, chunks of
 * 1024; the core count (132 * log2(8192 / 64) = 924 over a token_grid of
 * 8 sequences * 8 head blocks) allows 15, capped at 8: chunks of 1024 too.
 * 8192 splits in 8, the rest run whole. */
Test(sglang_batch, worked_numbers_default_8_1_1_1_1_1_1_1)
{
	const struct engine_shape s = h100();
	uint32_t by_seq[MIXED_N];

	const struct engine_answer a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	const uint32_t want[MIXED_N] = {8, 1, 1, 1, 1, 1, 1, 1};
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 8);
	cr_assert_eq(a.num_splits_bound, 8);
	cr_assert_eq(term(&a, "max_kv_splits_1"), 8);
	cr_assert_eq(term(&a, "kv_chunk_size_1"), 1024);
	cr_assert_eq(term(&a, "ext_device_core_count"), 924);
	cr_assert_eq(term(&a, "token_grid"), 64);
	cr_assert_eq(term(&a, "max_kv_splits_2"), 8);
	cr_assert_eq(term(&a, "kv_chunk_size_2"), 1024);
	/* attn_logits 8 * 32 * 8 * 128 floats, attn_lse 8 * 32 * 8 */
	cr_assert_eq(term(&a, "attn_logits_bytes"), 1048576);
	cr_assert_eq(term(&a, "attn_lse_bytes"), 8192);
	cr_assert_eq(a.workspace_bytes, 1048576u + 8192u);

	/* NULL options are the defaults */
	const struct sglang_options o = defaults();
	uint32_t again[MIXED_N];
	const struct engine_answer b = run(&s, mixed, MIXED_N, &o, again);
	cr_assert_eq(b.workspace_bytes, a.workspace_bytes);
	cr_assert_eq(memcmp(by_seq, again, sizeof by_seq), 0);
}

/* --enable-deterministic-inference: ceil(len / 256) each, and a scratch of
 * ceil(131072 / 256) = 512 splits a row. */
Test(sglang_batch, worked_numbers_deterministic_ceil_len_over_256)
{
	const struct engine_shape s = h100();
	struct sglang_options o = defaults();
	uint32_t by_seq[MIXED_N];

	o.deterministic = true;
	o.max_model_len = 131072;
	const struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], (mixed[i] + 255) / 256, "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(by_seq[0], 32);
	cr_assert_eq(by_seq[1], 2);
	cr_assert_eq(a.num_splits, 32);
	cr_assert_eq(a.num_splits_bound, 512);
	cr_assert_eq(term(&a, "split_tile_size"), 256);
	cr_assert_eq(a.workspace_bytes, 8ull * 32 * 512 * 129 * 4);

	/* the same sequence splits the same in any batch: batch invariance */
	for (uint32_t n = 1; n <= MIXED_N; n++) {
		const struct engine_answer b = run(&s, mixed, n, &o, by_seq);
		cr_assert_eq(b.status, ENGINE_OK);
		cr_assert_eq(by_seq[0], 32);
	}
	/* the environment's tile */
	o.deterministic_tile = 1024;
	const struct engine_answer c = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(by_seq[0], 8);
	cr_assert_eq(c.num_splits_bound, 128);
	/* no context length, no scratch size: refused */
	o.max_model_len = 0;
	const struct engine_answer d = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(d.status, ENGINE_REFUSED);
	cr_assert_str_eq(d.refused_input, "max_model_len");
}

/* 64 sequences of 1,000: within the 0.8 rule, so max_kv_splits_1 = 1; the
 * cores (132 * log2(15.625) = 523) over 64 * 8 head blocks give 2 splits.
 * Padded by a CUDA graph to 72 rows, the padding rows' length 1 is the
 * minimum: max_kv_splits_1 = 8, and every sequence splits in 8. */
Test(sglang_batch, cuda_graph_padding_rows_count)
{
	struct engine_shape s = h100();
	struct sglang_options o = defaults();
	uint32_t lens[64], by_seq[64];

	for (uint32_t i = 0; i < 64; i++) {
		lens[i] = 1000;
	}
	struct engine_answer a = run(&s, lens, 64, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(term(&a, "ext_device_core_count"), 523);
	cr_assert_eq(term(&a, "max_kv_splits_1"), 1);
	cr_assert_eq(a.num_splits, 2);
	for (uint32_t i = 0; i < 64; i++) {
		cr_assert_eq(by_seq[i], 2);
	}

	s.cuda_graph = true;
	o.cuda_graph_bs = 72;
	o.cuda_graph_max_bs = 160;
	a = run(&s, lens, 64, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(term(&a, "min_seq_len"), 1);
	cr_assert_eq(term(&a, "max_kv_splits_1"), 8);
	cr_assert_eq(term(&a, "bs"), 72);
	for (uint32_t i = 0; i < 64; i++) {
		cr_assert_eq(by_seq[i], 8);
	}
	/* the graph's scratch: 160 rows, allocated once */
	cr_assert_eq(a.workspace_bytes, 160ull * 32 * 8 * 129 * 4);

	/* the graph needs its padded size, at least the batch */
	o.cuda_graph_bs = 63;
	a = run(&s, lens, 64, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "cuda_graph_bs");
	s.cuda_graph = false;
	a = run(&s, lens, 64, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "cuda_graph_bs");
}

/* The kernel rounds a split up to 32 tokens: the static fill's 8 splits
 * of a 100-token sequence are 4 of 32 tokens and 4 empty ones, and its 1-
 * token sequence runs whole. num_kv_splits is the metadata's 8. */
Test(sglang_batch, static_fill_and_the_splits_rounding_leaves_empty)
{
	const struct engine_shape s = h100();
	struct sglang_options o = defaults();
	const uint32_t lens[3] = {100, 1, 8192};
	uint32_t by_seq[MIXED_N]; /* the last run is the mixed batch's */

	o.static_kv_splits = true;
	const struct engine_answer a = run(&s, lens, 3, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(by_seq[0], 4);
	cr_assert_eq(by_seq[1], 1);
	cr_assert_eq(by_seq[2], 8);
	cr_assert_eq(term(&a, "num_kv_splits"), 8);

	/* a lone 100-token sequence: the cores allow 8, the kernel runs 4 */
	const struct engine_answer b = run(&s, lens, 1, NULL, by_seq);
	cr_assert_eq(term(&b, "max_kv_splits_2"), 8);
	cr_assert_eq(term(&b, "num_kv_splits"), 8);
	cr_assert_eq(by_seq[0], 4);
	cr_assert_eq(b.num_splits, 4);

	/* split_tile_size without deterministic only widens max_kv_splits */
	o.static_kv_splits = false;
	o.split_tile_size = 1024;
	o.max_model_len = 131072;
	const struct engine_answer c = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(c.status, ENGINE_OK);
	cr_assert_eq(c.num_splits_bound, 128);
	cr_assert_eq(term(&c, "max_kv_splits_1"), 82); /* cdiv(8192, 100) */
}

/* Equal lengths: the 0.8 rule makes min = max, so max_kv_splits_1 = 1 and
 * the split is the core count's alone; every sequence gets the same. So do
 * lengths within a quarter of the longest, for the first chunk size. */
Test(sglang_batch, equal_lengths_split_alike_by_the_core_count)
{
	const struct engine_shape s = h100();
	static uint32_t lens[1200], by_seq[1200];
	const uint32_t ns[] = {1, 2, 7, 8, 33, 64, 255, 256, 257, 1200};
	const uint32_t ls[] = {1, 31, 32, 33, 64, 100, 1000, 4096, 8192, 65536, 200000};

	for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++) {
		for (size_t y = 0; y < sizeof ls / sizeof ls[0]; y++) {
			for (uint32_t i = 0; i < ns[x]; i++) {
				lens[i] = ls[y];
			}
			const struct engine_answer a = run(&s, lens, ns[x], NULL, by_seq);
			cr_assert_eq(a.status, ENGINE_OK);
			cr_assert_eq(term(&a, "max_kv_splits_1"), 1);
			cr_assert_eq(term(&a, "kv_chunk_size_1"), ls[y]);
			for (uint32_t i = 0; i < ns[x]; i++) {
				cr_assert_eq(by_seq[i], a.num_splits, "n %u len %u", ns[x], ls[y]);
			}
			const uint64_t k2 = term(&a, "max_kv_splits_2");
			cr_assert(a.num_splits >= 1 && a.num_splits <= k2);
			/* the core-count split, less what 32-token rounding empties */
			const uint64_t len = ls[y], chunk = (len + k2 - 1) / k2;
			const uint64_t kv = (len + chunk - 1) / chunk;
			const uint64_t per = ((len + kv - 1) / kv + 31) / 32 * 32;
			cr_assert_eq(term(&a, "num_kv_splits"), kv);
			cr_assert_eq(a.num_splits, (len + per - 1) / per);
		}
	}
	/* 1000 and 1200: 1200 * 8 < 1000 * 10, the minimum is taken as 1200 */
	const uint32_t near[2] = {1000, 1200};
	const struct engine_answer a = run(&s, near, 2, NULL, by_seq);
	cr_assert_eq(term(&a, "min_seq_len"), 1200);
	cr_assert_eq(term(&a, "max_kv_splits_1"), 1);
}

Test(sglang_batch, refusals_name_the_input_and_leave_by_seq_alone)
{
	struct engine_shape s = h100();
	struct sglang_options o = defaults();
	uint32_t by_seq[MIXED_N] = {77, 77, 77, 77, 77, 77, 77, 77};
	uint32_t lens[MIXED_N];
	struct engine_answer a;

	memcpy(lens, mixed, sizeof lens);
	lens[3] = 0;
	a = run(&s, lens, MIXED_N, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");
	a = run(&s, mixed, 0, NULL, by_seq);
	cr_assert_str_eq(a.refused_input, "num_seqs");

	s.num_splits = 4;
	a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_str_eq(a.refused_input, "num_splits");
	s.num_splits = 0;

	s.sm_count = 0;
	a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_str_eq(a.refused_input, "sm_count");
	s.sm_count = 132;

	s.num_kv_heads = 5;
	a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_str_eq(a.refused_input, "num_kv_heads");
	s.num_kv_heads = 8;

	o.max_kv_splits = 0;
	a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_str_eq(a.refused_input, "max_kv_splits");
	o.max_kv_splits = 8;

	o.max_model_len = 4096;
	a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");

	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], 77);
	}
	cr_assert_not_null(a.refused);
}

/* A CUDA graph's seq_lens are int32: min_seq_len * 10 wraps from
 * 214,748,365 tokens and max_seq_len * 8 from 268,435,456, where an eager
 * launch (int64 seq_lens) answers. A padding row of 1 keeps the minimum's
 * product small. */
Test(sglang_batch, int32_wraps_of_a_graph_are_refused_exactly_where_they_happen)
{
	struct engine_shape s = h100();
	struct sglang_options o = defaults();
	uint32_t lens[1] = {250000000}, by_seq[1];
	struct engine_answer a;

	a = run(&s, lens, 1, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	s.cuda_graph = true;
	o.cuda_graph_bs = 1;
	a = run(&s, lens, 1, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED); /* 250M * 10 */
	cr_assert_str_eq(a.refused_input, "seq_lens");
	o.cuda_graph_bs = 2; /* a padding row: min 1, max * 8 = 2e9 fits */
	a = run(&s, lens, 1, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(by_seq[0], 8);
	lens[0] = 268435456;
	a = run(&s, lens, 1, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED); /* max * 8 = 2^31 */
	s.cuda_graph = false;
	o.cuda_graph_bs = 0;
	a = run(&s, lens, 1, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
}
