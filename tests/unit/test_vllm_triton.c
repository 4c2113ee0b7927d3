/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/vllm_triton, the core alone: vLLM V1 TRITON_ATTN's worked numbers
 * for Llama-3.1-8B on an H100 (the 3D kernel at 8 sequences, the 2D one at
 * 17), the threshold under each CUDA-graph mode, batch invariance, the
 * refusals, and what upstream implies of equal and mixed lengths: on the
 * 3D kernel a sequence's segments depend on its own length alone.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "vllm_triton.h"

#define MIXED_N 8
static const uint32_t mixed[MIXED_N] = {8192, 512, 512, 512, 100, 100, 100, 100};

/* Llama-3.1-8B: 32 q / 8 kv heads, head_dim 128, pages of 16. No GPU value
 * is read, so the H100's 132 SMs appear only as noise. */
static struct engine_shape llama_8b(void)
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

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct vllm_triton_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return vllm_triton_launch_batch(s, &b, o, by_seq);
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

/* 64 * seq_threshold_3D * num_q_heads * (next_power_of_2(head_dim) + 2):
 * softmax_segm_output [16, 32, 16, 128] floats plus _max and _expsum
 * [16, 32, 16] floats each. */
#define LLAMA_SCRATCH (16u * 32u * 16u * 128u * 4u + 2u * 16u * 32u * 16u * 4u)

/* 8 sequences <= 128 // 8 = 16 (a capture size already): the 3D kernel.
 * 8192 and 512 tokens fill 16 segments (tiles_per_segment 32 and 2); 100
 * tokens take tiles_per_segment = cdiv(100, 256) = 1, so segments of one
 * 16-token tile: cdiv(100, 16) = 7 of them run, the other 9 return. */
Test(vllm_triton, llama_8b_h100_mixed_batch_runs_3d_16_16_16_16_7_7_7_7)
{
	const struct engine_shape s = llama_8b();
	uint32_t by_seq[MIXED_N];

	const struct engine_answer a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	const uint32_t want[MIXED_N] = {16, 16, 16, 16, 7, 7, 7, 7};
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 16);
	cr_assert_eq(a.num_splits_bound, 16);
	cr_assert_eq(a.workspace_bytes, LLAMA_SCRATCH);
	cr_assert_eq(a.workspace_bytes, 4259840u);
	cr_assert_eq(term(&a, "seq_threshold_3D"), 16);
	cr_assert_eq(term(&a, "use_3d"), 1);
	cr_assert_eq(term(&a, "NUM_SEGMENTS_PER_SEQ"), 16);
	cr_assert_eq(term(&a, "TILE_SIZE"), 16);
	cr_assert_eq(term(&a, "tiles_per_segment"), 32);
	cr_assert_eq(term(&a, "headdim_padded"), 128);
}

/* 16 sequences still run 3D; 17 (or more) the 2D kernel, one program
 * each; the scratch stays allocated, the same bytes. */
Test(vllm_triton, seventeen_sequences_run_2d_one_split_each)
{
	const struct engine_shape s = llama_8b();
	static uint32_t lens[1200], by_seq[1200];

	for (uint32_t i = 0; i < 1200; i++) {
		lens[i] = i < MIXED_N ? mixed[i] : 1000 + 7 * i;
	}
	struct engine_answer a = run(&s, lens, 16, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(term(&a, "use_3d"), 1);
	cr_assert_eq(a.num_splits, 16);
	const uint32_t ns[] = {17, 18, 64, 1200};
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		a = run(&s, lens, ns[k], NULL, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(term(&a, "use_3d"), 0);
		cr_assert_eq(term(&a, "TILE_SIZE"), 32);
		cr_assert_eq(a.num_splits, 1);
		cr_assert_eq(a.num_splits_bound, 1);
		cr_assert_eq(a.workspace_bytes, LLAMA_SCRATCH);
		for (uint32_t i = 0; i < ns[k]; i++) {
			cr_assert_eq(by_seq[i], 1, "n %u, sequence %u", ns[k], i);
		}
	}
}

/* The threshold: 128 // num_kv_heads without a full CUDA graph; under
 * FULL_AND_PIECEWISE, FULL_DECODE_ONLY and FULL the nearest capture size
 * (1, 2, 4, 8, 16, 24, ...), the smaller on a tie. */
Test(vllm_triton, the_threshold_under_each_cudagraph_mode)
{
	static const struct {
		uint32_t kv, max_capture, eager, graph;
	} cases[] = {
		{1, 0, 128, 128}, {3, 0, 42, 40},  {5, 0, 25, 24},   {6, 0, 21, 24},
		{7, 0, 18, 16},   {8, 0, 16, 16},  {10, 0, 12, 8},   {20, 0, 6, 4},
		{40, 0, 3, 2},    {128, 0, 1, 1},  {129, 0, 0, 1},   {1, 5, 128, 4},
		{1, 100, 128, 96}, {1, 255, 128, 128}, {3, 41, 42, 40}, {2, 1, 64, 1},
	};
	static const enum vllm_triton_cudagraph_mode full[] = {
		VLLM_TRITON_CG_FULL_AND_PIECEWISE, VLLM_TRITON_CG_FULL_DECODE_ONLY, VLLM_TRITON_CG_FULL};
	static const enum vllm_triton_cudagraph_mode eager[] = {VLLM_TRITON_CG_NONE,
								 VLLM_TRITON_CG_PIECEWISE};
	uint32_t by_seq[1];
	const uint32_t one[1] = {5000};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct engine_shape s = llama_8b();
		s.num_kv_heads = cases[i].kv;
		s.num_q_heads = cases[i].kv * 2;
		for (int m = 0; m < 3; m++) {
			const struct vllm_triton_options o = {full[m], cases[i].max_capture, false};
			const struct engine_answer a = run(&s, one, 1, &o, by_seq);
			cr_assert_eq(a.status, ENGINE_OK);
			cr_assert_eq(term(&a, "seq_threshold_3D"), cases[i].graph, "kv %u", cases[i].kv);
		}
		for (int m = 0; m < 2; m++) {
			const struct vllm_triton_options o = {eager[m], cases[i].max_capture, false};
			const struct engine_answer a = run(&s, one, 1, &o, by_seq);
			cr_assert_eq(a.status, ENGINE_OK);
			cr_assert_eq(term(&a, "seq_threshold_3D"), cases[i].eager, "kv %u", cases[i].kv);
			/* past 128 KV heads nothing is allocated and 3D never runs */
			cr_assert_eq(term(&a, "use_3d"), cases[i].eager >= 1);
			cr_assert_eq(a.workspace_bytes, 64ull * cases[i].eager * s.num_q_heads * 130);
		}
	}
}

/* 7 KV heads, 17 sequences: 128 // 7 = 18 runs them 3D without a full
 * graph; under one the threshold snaps to 16 and they run 2D. */
Test(vllm_triton, a_capture_size_can_move_a_batch_to_the_2d_kernel)
{
	struct engine_shape s = llama_8b();
	uint32_t lens[17], by_seq[17];

	s.num_kv_heads = 7;
	s.num_q_heads = 28;
	for (uint32_t i = 0; i < 17; i++) {
		lens[i] = 300;
	}
	const struct vllm_triton_options piecewise = {VLLM_TRITON_CG_PIECEWISE, 0, false};
	struct engine_answer a = run(&s, lens, 17, &piecewise, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	/* 300 tokens: tiles_per_segment 2, cdiv(300, 32) = 10 segments */
	cr_assert_eq(a.num_splits, 10);
	a = run(&s, lens, 17, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, 1);
}

/* VLLM_BATCH_INVARIANT: the 2D kernel whatever the batch; the builder
 * still allocates the scratch. */
Test(vllm_triton, batch_invariance_runs_the_2d_kernel_always)
{
	const struct engine_shape s = llama_8b();
	uint32_t by_seq[MIXED_N];

	for (int m = 0; m <= VLLM_TRITON_CG_FULL; m++) {
		const struct vllm_triton_options o = {(enum vllm_triton_cudagraph_mode)m, 0, true};
		const struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(a.num_splits, 1);
		cr_assert_eq(a.num_splits_bound, 1);
		cr_assert_eq(a.workspace_bytes, LLAMA_SCRATCH);
		for (uint32_t i = 0; i < MIXED_N; i++) {
			cr_assert_eq(by_seq[i], 1);
		}
	}
}

Test(vllm_triton, refusals_name_the_input_and_leave_by_seq_alone)
{
	const uint32_t with_zero[3] = {10, 0, 10};
	const uint32_t too_long[1] = {ENGINE_MAX_SEQ_LEN + 1u};
	/* 2021161073 + 16 * cdiv(2021161073, 256) - 1 = 2^31: wraps on 3D */
	const uint32_t wraps_3d[1] = {2021161073u};
	/* 2147483617 + 32 - 1 = 2^31: wraps on 2D */
	static uint32_t wraps_2d[17];
	uint32_t by_seq[17];
	const struct vllm_triton_options bad_mode = {(enum vllm_triton_cudagraph_mode)9, 0, false};
	struct {
		uint32_t q, kv, d, page, splits;
		const uint32_t *lens;
		uint32_t n;
		const struct vllm_triton_options *o;
		const char *input;
	} cases[] = {
		{32, 8, 128, 16, 0, mixed, 0, NULL, "num_seqs"},
		{0, 8, 128, 16, 0, mixed, 8, NULL, "num_q_heads"},
		{32, 0, 128, 16, 0, mixed, 8, NULL, "num_kv_heads"},
		{32, 8, 0, 16, 0, mixed, 8, NULL, "head_dim"},
		{32, 8, 128, 16, 0, with_zero, 3, NULL, "seq_lens"},
		{32, 8, 128, 16, 0, too_long, 1, NULL, "seq_lens"},
		{32, 8, 128, 16, 0, mixed, ENGINE_MAX_SEQS + 1, NULL, "seq_lens"},
		{32, 8, 128, 16, 0, NULL, 2, NULL, "seq_lens"},
		{32, 8, 128, 0, 0, mixed, 8, NULL, "page_size"},
		{32, 8, 128, 16, 2, mixed, 8, NULL, "num_splits"},
		{30, 8, 128, 16, 0, mixed, 8, NULL, "num_kv_heads"},
		{32, 8, 31, 16, 0, mixed, 8, NULL, "head_dim"},
		{32, 8, 128, 8, 0, mixed, 8, NULL, "page_size"},
		{32, 8, 128, 24, 0, mixed, 8, NULL, "page_size"},
		{32, 8, 128, 16, 0, mixed, 8, &bad_mode, "cudagraph_mode"},
		{32, 8, 128, 16, 0, wraps_3d, 1, NULL, "seq_lens"},
		{32, 8, 128, 16, 0, wraps_2d, 17, NULL, "seq_lens"},
		{0xffffffffu, 1, 0xffffffffu, 16, 0, mixed, 8, NULL, "head_dim"},
	};

	for (uint32_t i = 0; i < 17; i++) {
		wraps_2d[i] = i == 16 ? 2147483617u : 5;
	}
	for (uint32_t i = 0; i < 17; i++) {
		by_seq[i] = 77;
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct engine_shape s = llama_8b();
		s.num_q_heads = cases[i].q;
		s.num_kv_heads = cases[i].kv;
		s.head_dim = cases[i].d;
		s.page_size = cases[i].page;
		s.num_splits = cases[i].splits;
		const struct engine_answer a = run(&s, cases[i].lens, cases[i].n, cases[i].o, by_seq);
		cr_assert_eq(a.status, ENGINE_REFUSED, "case %zu", i);
		cr_assert_str_eq(a.refused_input, cases[i].input, "case %zu: %s", i, a.refused);
		cr_assert_eq(a.workspace_bytes, 0);
	}
	for (uint32_t i = 0; i < 17; i++) {
		cr_assert_eq(by_seq[i], 77);
	}
	/* one token shorter, each fits exactly: int32's largest value */
	const struct engine_shape s = llama_8b();
	const uint32_t fits_3d[1] = {2021161072u};
	struct engine_answer a = run(&s, fits_3d, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(by_seq[0], 16);
	wraps_2d[16] = 2147483616u;
	a = run(&s, wraps_2d, 17, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, 1);
	/* pages of 32 or 1024 are multiples of 16, and change nothing */
	for (uint32_t page = 32; page <= 1024; page *= 2) {
		struct engine_shape p = llama_8b();
		p.page_size = page;
		a = run(&p, mixed, MIXED_N, NULL, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(a.num_splits, 16);
		cr_assert_eq(by_seq[7], 7);
	}
}

/* What upstream implies on the 3D kernel: every sequence's segments are
 * cdiv(L, cdiv(L, 256) * 16) for its own length L, whatever its
 * neighbours; so a batch of equal lengths runs one count throughout, that
 * of a batch of one. Up to 256 tokens that is cdiv(L, 16); past it 9..16
 * (257 tokens: 9), and exactly 16 where L is a multiple of 256 or above
 * 3600. */
Test(vllm_triton, on_3d_a_sequences_segments_depend_on_its_length_alone)
{
	const struct engine_shape s = llama_8b();
	uint32_t lens[16], by_seq[16], alone[1];
	uint64_t state = 2026;

	for (uint32_t len = 1; len <= 70000; len += len < 2000 ? 1 : 97) {
		const uint32_t one[1] = {len};
		struct engine_answer a = run(&s, one, 1, NULL, alone);
		cr_assert_eq(a.status, ENGINE_OK);
		const uint32_t tps = (len + 255) / 256;
		cr_assert_eq(alone[0], (len + tps * 16 - 1) / (tps * 16), "%u tokens", len);
		if (len <= 256) {
			cr_assert_eq(alone[0], (len + 15) / 16, "%u tokens", len);
		} else {
			cr_assert(alone[0] >= 9 && alone[0] <= 16, "%u tokens: %u", len, alone[0]);
		}
		if (len % 256 == 0 || len > 3600) {
			cr_assert_eq(alone[0], 16, "%u tokens", len);
		}
		const uint32_t n = 1 + len % 16;
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = len;
		}
		a = run(&s, lens, n, NULL, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(a.num_splits, alone[0]);
		for (uint32_t i = 0; i < n; i++) {
			cr_assert_eq(by_seq[i], alone[0], "%u tokens x %u", len, n);
		}
	}
	cr_assert_eq(run(&s, (const uint32_t[]){257}, 1, NULL, alone).num_splits, 9);
	cr_assert_eq(run(&s, (const uint32_t[]){513}, 1, NULL, alone).num_splits, 11);
	cr_assert_eq(run(&s, (const uint32_t[]){3600}, 1, NULL, alone).num_splits, 15);
	/* mixed batches: each sequence as it runs alone */
	for (unsigned k = 0; k < 5000; k++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		const uint32_t n = 1 + (uint32_t)(state >> 60);
		for (uint32_t i = 0; i < n; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			lens[i] = 1 + (uint32_t)((state >> 33) % (state >> 63 ? 200000 : 600));
		}
		const struct engine_answer a = run(&s, lens, n, NULL, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		uint32_t most = 0;
		for (uint32_t i = 0; i < n; i++) {
			run(&s, &lens[i], 1, NULL, alone);
			cr_assert_eq(by_seq[i], alone[0], "batch %u, sequence %u", k, i);
			most = alone[0] > most ? alone[0] : most;
		}
		cr_assert_eq(a.num_splits, most);
		cr_assert_eq(a.workspace_bytes, LLAMA_SCRATCH);
	}
}

/* o NULL is the defaults, and so is a zeroed options struct. */
Test(vllm_triton, null_options_are_the_zeroed_defaults)
{
	const struct engine_shape s = llama_8b();
	struct vllm_triton_options zero;
	uint32_t x[MIXED_N], y[MIXED_N];

	memset(&zero, 0, sizeof zero);
	const struct engine_answer a = run(&s, mixed, MIXED_N, NULL, x);
	const struct engine_answer b = run(&s, mixed, MIXED_N, &zero, y);
	cr_assert_eq(a.num_splits, b.num_splits);
	cr_assert_eq(a.workspace_bytes, b.workspace_bytes);
	cr_assert_eq(memcmp(x, y, sizeof x), 0);
	cr_assert_eq(vllm_triton_launch_batch(&s, NULL, NULL, x).status, ENGINE_REFUSED);
	cr_assert_eq(VLLM_TRITON_GPU_READS, 0u);
	cr_assert_eq(VLLM_TRITON_READS & (ENGINE_IN_SM_COUNT | ENGINE_IN_BLOCKS_PER_SM |
					  ENGINE_IN_CUDA_GRAPH | ENGINE_IN_NUM_SPLITS),
		     0u);
}
