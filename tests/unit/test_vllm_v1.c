/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/vllm_v1, the core alone: the H100 worked numbers (Llama-3.1-8B,
 * pages of 16, default settings) and batch invariance over the same
 * batch, what equal lengths imply (one split for all; FA2 one count for
 * every sequence; FA3's scratch sized by the padded batch), the FA
 * version by compute capability, FA2's full graph and max_model_len, and
 * the refusals.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "vllm_v1.h"

#define MIXED_N 8
static const uint32_t mixed[MIXED_N] = {8192, 512, 512, 512, 100, 100, 100, 100};

/* H100 (132 SMs), 32 q / 8 kv heads, head_dim 128 (bf16), pages of 16. */
static struct engine_shape h100(void)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.sm_count = 132;
	s.num_q_heads = 32;
	s.num_kv_heads = 8;
	s.head_dim = 128;
	s.page_size = 16;
	return s;
}

static struct vllm_v1_options opts(uint32_t cc)
{
	struct vllm_v1_options o;

	memset(&o, 0, sizeof o);
	o.compute_capability = cc;
	return o;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct vllm_v1_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return vllm_v1_launch_batch(s, &b, o, by_seq);
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

/* FA3, full graphs (max_num_splits 32), the batch of 8 a capture size.
 * Tile 64 x 128 (one MMA warpgroup, causal kept at head_dim 128), the
 * GQA group of 4 packed: one m-block each, 64 + 3 * 4 + 4 * 1 = 80
 * blocks; ceilf(80 * 1.1 * 8 / 132) = ceilf(5.33) = 6 blocks a SM; 8192
 * tokens are 64 blocks: ceil(64 / 6) = 11 splits, the rest 1. */
Test(vllm_v1, h100_worked_numbers_11_then_ones)
{
	const struct engine_shape s = h100();
	const struct vllm_v1_options o = opts(90);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	const uint32_t want[MIXED_N] = {11, 1, 1, 1, 1, 1, 1, 1};
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 11);
	cr_assert_eq(a.num_splits_bound, 32);
	cr_assert_eq(term(&a, "fa_version"), 3);
	cr_assert_eq(term(&a, "kBlockM"), 64);
	cr_assert_eq(term(&a, "kBlockN"), 128);
	cr_assert_eq(term(&a, "total_blocks"), 80);
	cr_assert_eq(term(&a, "blocks_per_sm"), 6);
	cr_assert_eq(term(&a, "num_tokens_padded"), 8);
	/* 32 splits x 32 heads x 8 tokens x (128 + 1) floats */
	cr_assert_eq(a.workspace_bytes, 32u * 32u * 8u * 129u * 4u);
}

Test(vllm_v1, h100_batch_invariant_one_split_each_no_scratch)
{
	const struct engine_shape s = h100();
	struct vllm_v1_options o = opts(90);
	uint32_t by_seq[MIXED_N];

	o.batch_invariant = true;
	struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], 1, "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 1);
	cr_assert_eq(a.workspace_bytes, 0);
}

/* Without full graphs the host heuristic bounds the split (15 for 8192
 * tokens alone on 132 SMs), and the per-sequence split is the same 11. */
Test(vllm_v1, h100_eager_heuristic_bound)
{
	const struct engine_shape s = h100();
	struct vllm_v1_options o = opts(90);
	uint32_t by_seq[MIXED_N];

	o.cudagraph_mode = VLLM_V1_CUDAGRAPH_NONE;
	struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(by_seq[0], 11);
	cr_assert_eq(a.num_splits_bound, 15);
	cr_assert_eq(term(&a, "max_num_splits"), 0);
	cr_assert_eq(a.workspace_bytes, 15u * 32u * 8u * 129u * 4u);
}

/* Equal lengths: every sequence gets one count; FA3's scratch is sized by
 * the padded batch under full graphs; above the largest capture size
 * (512) max_num_splits is 0 and nothing is padded. */
Test(vllm_v1, equal_lengths_one_count_and_padded_scratch)
{
	static uint32_t lens[600], by_seq[600];
	const struct engine_shape s = h100();
	const uint32_t lengths[] = {1, 15, 16, 127, 128, 129, 1000, 4096, 32768, 200000};

	for (unsigned k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
		for (uint32_t n = 1; n <= 600; n += (n < 20 ? 1 : 37)) {
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = lengths[k];
			}
			for (uint32_t cc = 80; cc <= 90; cc += 10) {
				struct vllm_v1_options o = opts(cc);
				o.max_model_len = 200000;
				struct engine_answer a = run(&s, lens, n, &o, by_seq);
				cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
				for (uint32_t i = 0; i < n; i++) {
					cr_assert_eq(by_seq[i], a.num_splits, "L %u n %u cc %u",
						     lengths[k], n, cc);
				}
				uint64_t padded = term(&a, "num_tokens_padded");
				cr_assert(padded >= n);
				if (cc == 90 && n <= 512) {
					cr_assert_eq(a.num_splits_bound, 32);
					cr_assert_eq(a.workspace_bytes, 32u * 32u * padded * 129u * 4u);
				}
				if (n > 512) {
					cr_assert_eq(padded, n);
					cr_assert_eq(term(&a, "max_num_splits"), 0);
				}
			}
		}
	}
}

/* The capture sizes: 1, 2, 4, then steps of 8 to 248, then of 16. */
Test(vllm_v1, padded_to_capture_sizes)
{
	static uint32_t lens[512];
	const struct engine_shape s = h100();
	const struct vllm_v1_options o = opts(90);
	const uint32_t n[] = {1, 2, 3, 5, 9, 249, 255, 256, 257, 511, 512};
	const uint32_t want[] = {1, 2, 4, 8, 16, 256, 256, 256, 272, 512, 512};

	for (uint32_t i = 0; i < 512; i++) {
		lens[i] = 1000;
	}
	for (unsigned k = 0; k < sizeof(n) / sizeof(n[0]); k++) {
		struct engine_answer a = run(&s, lens, n[k], &o, NULL);
		cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
		cr_assert_eq(term(&a, "num_tokens_padded"), want[k], "n %u", n[k]);
	}
}

/* FA2 (8.x, 12.x, 10.x under batch invariance): one count for all, from
 * the capture (batch 8, max_model_len) under a full graph. */
Test(vllm_v1, fa2_full_graph_bakes_the_capture)
{
	const struct engine_shape s = h100();
	struct vllm_v1_options o = opts(80);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "max_model_len");

	o.max_model_len = 4096; /* below the longest, 8192 */
	a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);

	o.max_model_len = 131072;
	a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(term(&a, "fa_version"), 2);
	cr_assert_eq(term(&a, "max_seqlen_k"), 131072);
	/* 8 x 8 x 1 = 64 blocks on 2 x 132: 4 splits are the first at 85% */
	cr_assert_eq(a.num_splits, 4);
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], 4);
	}
	/* 4 splits x 8 batch x 8 kv heads x 4 groups x (1 + 128) floats */
	cr_assert_eq(a.workspace_bytes, 4u * 8u * 8u * 4u * 129u * 4u);

	o.compute_capability = 120;
	struct engine_answer b = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(term(&b, "fa_version"), 2);
	cr_assert_eq(b.num_splits, 4);

	o.cudagraph_mode = VLLM_V1_CUDAGRAPH_PIECEWISE;
	o.max_model_len = 0; /* not read eagerly */
	b = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(b.status, ENGINE_OK, "%s", b.refused);
	cr_assert_eq(term(&b, "max_seqlen_k"), 8192);
}

Test(vllm_v1, fa4_refused_unless_batch_invariant)
{
	const struct engine_shape s = h100();
	struct vllm_v1_options o = opts(100);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "compute_capability");

	o.batch_invariant = true;
	a = run(&s, mixed, MIXED_N, &o, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(term(&a, "fa_version"), 2);
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], 1);
	}
	cr_assert_eq(a.workspace_bytes, 0);
}

Test(vllm_v1, refusals)
{
	struct engine_shape s = h100();
	struct vllm_v1_options o = opts(90);
	const uint32_t zero[2] = {5, 0};

	cr_assert_str_eq(run(&s, mixed, MIXED_N, NULL, NULL).refused_input, "compute_capability");
	o.compute_capability = 75;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "compute_capability");
	o.compute_capability = 90;
	cr_assert_str_eq(run(&s, zero, 2, &o, NULL).refused_input, "seq_lens");
	cr_assert_str_eq(run(&s, mixed, 0, &o, NULL).refused_input, "num_seqs");
	s.page_size = 8;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "page_size");
	s = h100();
	s.head_dim = 100;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "head_dim");
	s = h100();
	s.num_kv_heads = 5;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "num_kv_heads");
	s = h100();
	s.num_splits = 4;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "num_splits");
	s = h100();
	s.sm_count = 0;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, &o, NULL).refused_input, "sm_count");
}
