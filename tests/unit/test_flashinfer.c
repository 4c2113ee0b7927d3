/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/flashinfer over a mixed batch (issue 49), the core alone: the
 * tensor-core plan's worked numbers on an H100 (and the page size that
 * gives them), fixed_split_size and disable_split_kv, the CUDA-core plan
 * over the same batch, the head_dim refused only where the launch splits,
 * the batch's own refusals, and flashinfer_launch_batch equal to
 * flashinfer_launch over a sweep of uniform batches.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "flashinfer.h"

#define MIXED_N 8
static const uint32_t mixed[MIXED_N] = {8192, 512, 512, 512, 100, 100, 100, 100};

/* H100 (132 SMs), 32 q / 8 kv heads, head_dim 128 (bf16): Llama-3.1-8B. */
static struct engine_shape h100(uint32_t page_size)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.sm_count = 132;
	s.num_q_heads = 32;
	s.num_kv_heads = 8;
	s.head_dim = 128;
	s.page_size = page_size;
	s.blocks_per_sm = 2;
	return s;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct flashinfer_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return flashinfer_launch_batch(s, &b, o, by_seq);
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

static const struct flashinfer_options tc = {true, 0, false};

/* Pages of 16: 264 CTAs (2 a SM, the plan's constant) over 8 KV heads
 * leave 33 tiles; 512 pages alone take chunks of 16 (32 of them), and in
 * the batch the 33 tiles are shared: chunks of 23 pages give 23 + 3 * 2 +
 * 4 * 1 = 33. */
Test(flashinfer_batch, tensor_cores_pages_of_16_split_8192_32_alone_23_in_the_batch)
{
	const struct engine_shape s = h100(16);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, 1, &tc, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 32);
	cr_assert_eq(by_seq[0], 32);
	cr_assert_eq(term(&a, "cta_tile_q"), 16);
	cr_assert_eq(term(&a, "max_batch_size_if_split"), 33);
	cr_assert_eq(term(&a, "kv_chunk_size"), 16 * 16); /* tokens */
	/* tmp_v 32 heads * 32 tiles * 16 rows * 128 * 4, tmp_s without 128 */
	cr_assert_eq(a.workspace_bytes, 8388608u + 65536u);

	a = run(&s, mixed, MIXED_N, &tc, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 23);
	const uint32_t want[MIXED_N] = {23, 2, 2, 2, 1, 1, 1, 1};
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(term(&a, "new_batch_size"), 33);
	cr_assert_eq(a.workspace_bytes, 32u * 33 * 16 * 128 * 4 + 32u * 33 * 16 * 4);
}

/* Pages of one token give 33 alone (chunks of 249 pages: the plan's lower
 * bound is 128 / page_size pages), and 23 in the batch too (chunks of 357):
 * the 32 alone is pages of 16. */
Test(flashinfer_batch, tensor_cores_pages_of_1_split_8192_33_alone_23_in_the_batch)
{
	const struct engine_shape s = h100(1);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, 1, &tc, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, 33);
	cr_assert_eq(term(&a, "kv_chunk_size"), 249);
	a = run(&s, mixed, MIXED_N, &tc, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, 23);
	cr_assert_eq(term(&a, "kv_chunk_size"), 357);
}

/* SGLang's deterministic mode: fixed_split_size 2048 pages of one token
 * cuts 8,192 tokens in 4 in every batch, whatever else it holds. */
Test(flashinfer_batch, fixed_split_size_2048_pages_of_1_is_4_in_every_batch)
{
	struct engine_shape s = h100(1);
	const struct flashinfer_options fixed = {true, 2048, false};
	uint32_t lens[64], by_seq[64];

	for (uint32_t n = 1; n <= MIXED_N; n++) {
		struct engine_answer a = run(&s, mixed, n, &fixed, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(by_seq[0], 4, "batch of %u: %u", n, by_seq[0]);
		cr_assert_eq(a.num_splits, 4);
		for (uint32_t i = 1; i < n; i++) {
			cr_assert_eq(by_seq[i], 1);
		}
	}
	for (uint32_t i = 0; i < 64; i++) {
		lens[i] = 8192;
	}
	struct engine_answer a = run(&s, lens, 64, &fixed, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	for (uint32_t i = 0; i < 64; i++) {
		cr_assert_eq(by_seq[i], 4);
	}
	/* 256 tiles, padded_batch_size 33 wide: uncapped in a plain launch */
	cr_assert_eq(a.workspace_bytes, 32u * 256 * 16 * 128 * 4 + 32u * 256 * 16 * 4);
	/* under a CUDA graph the padded batch is max(33, 4 * 64 / 16 + 63) =
	 * 79 < 256 tiles: upstream's FLASHINFER_CHECK fails the plan */
	s.cuda_graph = true;
	a = run(&s, lens, 64, &fixed, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "fixed_split_size");
	a = run(&s, mixed, MIXED_N, &fixed, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, 4);
}

Test(flashinfer_batch, disable_split_kv_runs_every_sequence_whole)
{
	struct engine_shape s = h100(16);
	const struct flashinfer_options off = {true, 2048, true};
	uint32_t by_seq[MIXED_N];

	for (int graph = 0; graph < 2; graph++) {
		s.cuda_graph = graph;
		struct engine_answer a = run(&s, mixed, MIXED_N, &off, by_seq);
		cr_assert_eq(a.status, ENGINE_OK);
		cr_assert_eq(a.num_splits, 1);
		cr_assert_eq(a.workspace_bytes, 0);
		for (uint32_t i = 0; i < MIXED_N; i++) {
			cr_assert_eq(by_seq[i], 1);
		}
	}
}

/* The CUDA-core plan over the same batch, blocks_per_sm 2: the same 33
 * tiles (264 / 8) shared by one binary search over every request's pages
 * (the lower bound 128 / 16 = 8 pages), so the same 23 / 2 / 1 chunks;
 * tmp_v holds one row a tile. */
Test(flashinfer_batch, cuda_cores_share_the_grid_across_the_batch)
{
	const struct engine_shape s = h100(16);
	uint32_t by_seq[MIXED_N];

	struct engine_answer a = run(&s, mixed, MIXED_N, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 23);
	const uint32_t want[MIXED_N] = {23, 2, 2, 2, 1, 1, 1, 1};
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(term(&a, "new_batch_size"), 33);
	cr_assert_eq(a.workspace_bytes, 32u * 33 * 128 * 4 + 32u * 33 * 4);

	const struct flashinfer_options fixed = {false, 2048, false};
	a = run(&s, mixed, MIXED_N, &fixed, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "fixed_split_size");
}

/* head_dim 80: no merge for it (DISPATCH_HEAD_DIM), so refused where the
 * launch splits and answered where it does not, on both paths. */
Test(flashinfer_batch, head_dim_80_refused_only_where_the_launch_splits)
{
	struct engine_shape s = h100(16);
	uint32_t lens[64], by_seq[64];

	s.head_dim = 80;
	for (uint32_t i = 0; i < 64; i++) {
		lens[i] = 8192;
	}
	for (int path = 0; path < 2; path++) {
		const struct flashinfer_options o = {path == 1, 0, false};
		struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
		cr_assert_eq(a.status, ENGINE_REFUSED, "path %d", path);
		cr_assert_str_eq(a.refused_input, "head_dim");
		/* 64 requests x 8 KV heads fill 264 CTAs: no split */
		a = run(&s, lens, 64, &o, by_seq);
		cr_assert_eq(a.status, ENGINE_OK, "path %d: %s", path, a.refused);
		cr_assert_eq(a.num_splits, 1);
		cr_assert_eq(a.workspace_bytes, 0);
	}
	struct engine_answer u = flashinfer_launch(&(struct engine_shape){
		.sm_count = 132, .num_seqs = 64, .num_q_heads = 32, .num_kv_heads = 8,
		.head_dim = 80, .seq_len = 8192, .page_size = 16, .blocks_per_sm = 2});
	cr_assert_eq(u.status, ENGINE_OK);
	cr_assert_eq(u.num_splits, 1);
}

Test(flashinfer_batch, the_batch_is_refused_by_its_own_bounds_and_by_seq_left_alone)
{
	const struct engine_shape s = h100(16);
	const uint32_t with_zero[3] = {10, 0, 10};
	const uint32_t too_long[1] = {ENGINE_MAX_SEQ_LEN + 1u};
	uint32_t by_seq[3] = {77, 77, 77};
	const struct {
		const uint32_t *lens;
		uint32_t n;
		const char *input;
	} cases[] = {
		{mixed, 0, "num_seqs"},
		{with_zero, 3, "seq_lens"},
		{too_long, 1, "seq_lens"},
		{mixed, ENGINE_MAX_SEQS + 1, "seq_lens"},
		{NULL, 2, "seq_lens"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int path = 0; path < 2; path++) {
			const struct flashinfer_options o = {path == 1, 0, false};
			struct engine_answer a = run(&s, cases[i].lens, cases[i].n, &o, by_seq);
			cr_assert_eq(a.status, ENGINE_REFUSED, "case %zu", i);
			cr_assert_str_eq(a.refused_input, cases[i].input, "case %zu", i);
		}
	}
	cr_assert(by_seq[0] == 77 && by_seq[1] == 77 && by_seq[2] == 77);
	/* a batch whose pages overflow the int32 indptr */
	static uint32_t huge[4096];
	for (uint32_t i = 0; i < 4096; i++) {
		huge[i] = 1000000;
	}
	const struct engine_shape one = h100(1);
	struct engine_answer a = run(&one, huge, 4096, &tc, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");
	const struct flashinfer_options big = {true, 2147483648u, false};
	a = run(&s, mixed, 1, &big, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "fixed_split_size");
}

/* splitmix64, for the sweep below */
static uint64_t next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* With every length equal and the default options, the batch answer is
 * flashinfer_launch's: counts, bytes, every term, and the refused input. */
Test(flashinfer_batch, a_uniform_batch_answers_as_flashinfer_launch)
{
	static uint32_t lens[1200], by_seq[1200];
	static const uint32_t dims[] = {32, 64, 80, 96, 128, 192, 256, 512};
	static const uint32_t pages[] = {1, 2, 8, 16, 32, 64, 128, 256, 1024};
	uint64_t state = 49;
	unsigned ok = 0, refused = 0;

	for (unsigned k = 0; k < 20000; k++) {
		struct engine_shape s;
		memset(&s, 0, sizeof s);
		s.sm_count = (uint32_t)(next(&state) % 301);
		uint32_t n = (uint32_t)(next(&state) % 4 == 0 ? next(&state) % 1201
							    : 1 + next(&state) % 40);
		s.num_seqs = n;
		s.num_kv_heads = 1 + (uint32_t)(next(&state) % 16);
		s.num_q_heads = s.num_kv_heads * (1 + (uint32_t)(next(&state) % 9));
		if (next(&state) % 32 == 0) {
			s.num_q_heads += 1;
		}
		s.head_dim = dims[next(&state) % (sizeof dims / sizeof dims[0])];
		s.seq_len = (uint32_t)(next(&state) % 3 == 0 ? next(&state) % 200001
							     : next(&state) % 5000);
		s.page_size = pages[next(&state) % (sizeof pages / sizeof pages[0])];
		s.blocks_per_sm = (uint32_t)(next(&state) % 9);
		s.cuda_graph = next(&state) % 2;
		s.num_splits = next(&state) % 20 == 0 ? 3 : 0;
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = s.seq_len;
		}
		const struct engine_answer u = flashinfer_launch(&s);
		const struct engine_answer b = run(&s, lens, n, NULL, by_seq);
		cr_assert_eq(b.status, u.status, "shape %u", k);
		if (u.status != ENGINE_OK) {
			/* the batch names its lengths where the shape names seq_len */
			const char *input = strcmp(u.refused_input, "seq_len") == 0 ? "seq_lens"
										   : u.refused_input;
			cr_assert_str_eq(b.refused_input, input, "shape %u: %s / %s", k, b.refused,
					 u.refused);
			refused++;
			continue;
		}
		ok++;
		cr_assert_eq(b.num_splits, u.num_splits, "shape %u", k);
		cr_assert_eq(b.num_splits_bound, u.num_splits_bound, "shape %u", k);
		cr_assert_eq(b.workspace_bytes, u.workspace_bytes, "shape %u", k);
		cr_assert_eq(b.n_terms, u.n_terms, "shape %u", k);
		for (unsigned t = 0; t < u.n_terms; t++) {
			cr_assert_str_eq(b.terms[t].name, u.terms[t].name);
			cr_assert_eq(b.terms[t].value, u.terms[t].value, "shape %u, %s", k,
				     u.terms[t].name);
		}
		for (uint32_t i = 0; i < n; i++) {
			cr_assert_eq(by_seq[i], u.num_splits, "shape %u, sequence %u", k, i);
		}
	}
	/* the sweep reaches both answers */
	cr_assert(ok > 1000 && refused > 1000, "%u answered, %u refused", ok, refused);
}
