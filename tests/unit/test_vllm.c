/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/vllm over a mixed batch, the core alone: the worked batch
 * [8192, 512, 100] on 32 q heads (v2, partitions 16/1/1, worked by hand
 * from paged_attn.py and attention_kernels.cuh), the edges of v1 and v2
 * (8,192 and 8,193 tokens, 512 heads and 513), the batch's own refusals,
 * and vllm_launch_batch equal to vllm_launch over a sweep of uniform
 * batches.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "vllm.h"

/* 32 q / 8 kv heads, head_dim 128, pages of 16: Llama-3.1-8B. */
static struct engine_shape llama(uint32_t page_size)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.num_q_heads = 32;
	s.num_kv_heads = 8;
	s.head_dim = 128;
	s.page_size = page_size;
	return s;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return vllm_launch_batch(s, &b, by_seq);
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

/* max_seq_len 8192 (not above 8192), max_num_partitions 16, and 3 * 32 =
 * 96 heads (not above 512): v2 over 16 partitions. 512 and 100 tokens do
 * work in partition 0 only (the kernel returns in the others, the reduce
 * kernel copies). Scratch: tmp_output 3 x 32 x 16 x 128 bf16 = 393,216
 * bytes, exp_sums and max_logits 3 x 32 x 16 float32 = 6,144 each. */
Test(vllm_batch, v2_8192_512_100_splits_16_1_1)
{
	static const uint32_t lens[] = {8192, 512, 100};
	uint32_t by_seq[3] = {0, 0, 0};
	const struct engine_shape s = llama(16);

	struct engine_answer a = run(&s, lens, 3, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused ? a.refused : "");
	cr_assert_eq(term(&a, "use_v1"), 0);
	cr_assert_eq(term(&a, "max_seq_len"), 8192);
	cr_assert_eq(term(&a, "max_num_partitions"), 16);
	cr_assert_eq(term(&a, "num_seqs * num_heads"), 96);
	cr_assert(by_seq[0] == 16 && by_seq[1] == 1 && by_seq[2] == 1, "%u %u %u", by_seq[0],
		  by_seq[1], by_seq[2]);
	cr_assert_eq(a.num_splits, 16);
	cr_assert_eq(a.num_splits_bound, 16);
	cr_assert_eq(term(&a, "tmp_output.nbytes"), 393216);
	cr_assert_eq(term(&a, "exp_sums.nbytes"), 6144);
	cr_assert_eq(term(&a, "max_logits.nbytes"), 6144);
	cr_assert_eq(a.workspace_bytes, 405504);
}

/* The edges: past 8,192 tokens v2 whatever the batch; at 8,192 v1 once
 * num_seqs * num_heads is above 512 (17 x 32 = 544), v2 at 512 (16 x 32);
 * v1 when the longest fits one partition; a partition's edge. */
Test(vllm_batch, the_edges_of_v1_and_v2)
{
	static uint32_t lens[17], by_seq[17];
	const struct engine_shape s = llama(16);

	static const uint32_t past[] = {100, 8193};
	struct engine_answer a = run(&s, past, 2, by_seq);
	cr_assert(a.status == ENGINE_OK && by_seq[0] == 1 && by_seq[1] == 17);
	cr_assert_eq(a.num_splits, 17);

	for (uint32_t i = 0; i < 17; i++) {
		lens[i] = i == 0 ? 8192 : 100;
	}
	a = run(&s, lens, 17, by_seq);
	cr_assert(a.status == ENGINE_OK && term(&a, "use_v1") == 1);
	cr_assert(a.num_splits == 1 && a.workspace_bytes == 0);
	for (uint32_t i = 0; i < 17; i++) {
		cr_assert_eq(by_seq[i], 1);
	}
	a = run(&s, lens, 16, by_seq);
	cr_assert(a.status == ENGINE_OK && term(&a, "use_v1") == 0 && a.num_splits == 16);
	cr_assert_eq(by_seq[0], 16);
	for (uint32_t i = 1; i < 16; i++) {
		cr_assert_eq(by_seq[i], 1);
	}

	static const uint32_t one[] = {512, 1, 300};
	a = run(&s, one, 3, by_seq);
	cr_assert(a.status == ENGINE_OK && term(&a, "use_v1") == 1);
	cr_assert(by_seq[0] == 1 && by_seq[1] == 1 && by_seq[2] == 1 && a.workspace_bytes == 0);

	/* 2^31 - 512 tokens: 4,194,303 partitions, a grid z upstream cannot
	 * launch (vllm.h), answered as the arithmetic gives */
	static const uint32_t longest[] = {2147483136u, 1};
	a = run(&s, longest, 2, by_seq);
	cr_assert(a.status == ENGINE_OK && a.num_splits == 4194303);
	cr_assert(by_seq[0] == 4194303 && by_seq[1] == 1);
	cr_assert_eq(a.workspace_bytes, 2ull * 32 * 4194303 * (128 * 2 + 4 + 4));

	static const uint32_t edge[] = {513, 1024, 1025, 1};
	a = run(&s, edge, 4, by_seq);
	cr_assert(a.status == ENGINE_OK && a.num_splits == 3);
	cr_assert(by_seq[0] == 2 && by_seq[1] == 2 && by_seq[2] == 3 && by_seq[3] == 1);
}

/* The batch's own refusals, and vllm_launch's, naming seq_lens where it
 * names seq_len; a refused answer writes nothing to by_seq. */
Test(vllm_batch, refusals)
{
	static const uint32_t mixed[] = {8192, 512, 100};
	static const uint32_t zero[] = {8192, 0, 100};
	static const uint32_t too_long[] = {2147483648u};
	uint32_t by_seq[3] = {77, 77, 77};
	const struct engine_shape s = llama(16);
	struct engine_shape t;

	struct {
		const uint32_t *lens;
		uint32_t n;
		const char *input;
	} const cases[] = {
		{mixed, 0, "num_seqs"},
		{zero, 3, "seq_lens"},
		{too_long, 1, "seq_lens"},
		{mixed, ENGINE_MAX_SEQS + 1, "seq_lens"},
		{NULL, 2, "seq_lens"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct engine_answer a = run(&s, cases[i].lens, cases[i].n, by_seq);
		cr_assert_eq(a.status, ENGINE_REFUSED, "case %zu", i);
		cr_assert_str_eq(a.refused_input, cases[i].input, "case %zu", i);
	}
	struct engine_answer a = vllm_launch_batch(&s, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);

	t = llama(64); /* v2 asserts 512 % block_size; no kernel for 64 */
	a = run(&t, mixed, 3, by_seq);
	cr_assert(a.status == ENGINE_REFUSED && strcmp(a.refused_input, "page_size") == 0);
	t = llama(16);
	t.head_dim = 160;
	a = run(&t, mixed, 3, by_seq);
	cr_assert(a.status == ENGINE_REFUSED && strcmp(a.refused_input, "head_dim") == 0);
	t = llama(16);
	t.num_kv_heads = 5;
	a = run(&t, mixed, 3, by_seq);
	cr_assert(a.status == ENGINE_REFUSED && strcmp(a.refused_input, "num_kv_heads") == 0);
	t = llama(16);
	t.num_splits = 4;
	a = run(&t, mixed, 3, by_seq);
	cr_assert(a.status == ENGINE_REFUSED && strcmp(a.refused_input, "num_splits") == 0);
	cr_assert(by_seq[0] == 77 && by_seq[1] == 77 && by_seq[2] == 77);
}

/* splitmix64, for the sweep below */
static uint64_t next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* With every length equal, the batch answer is vllm_launch's: counts,
 * bytes, every term, the refused input (seq_lens for seq_len), and every
 * by_seq is its num_splits. */
Test(vllm_batch, a_uniform_batch_answers_as_vllm_launch)
{
	static uint32_t lens[1200], by_seq[1200];
	static const uint32_t dims[] = {32, 64, 80, 96, 112, 120, 128, 160, 192, 256};
	static const uint32_t pages[] = {1, 8, 16, 32, 64};
	uint64_t state = 44;
	unsigned ok = 0, refused = 0, v2 = 0;

	for (unsigned k = 0; k < 20000; k++) {
		struct engine_shape s;
		memset(&s, 0, sizeof s);
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
							     : next(&state) % 10000);
		s.page_size = pages[next(&state) % (sizeof pages / sizeof pages[0])];
		s.num_splits = next(&state) % 20 == 0 ? 3 : 0;
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = s.seq_len;
		}
		const struct engine_answer u = vllm_launch(&s);
		const struct engine_answer b = run(&s, lens, n, by_seq);
		cr_assert_eq(b.status, u.status, "shape %u", k);
		if (u.status != ENGINE_OK) {
			const char *input = strcmp(u.refused_input, "seq_len") == 0 ? "seq_lens"
										   : u.refused_input;
			cr_assert_str_eq(b.refused_input, input, "shape %u: %s / %s", k, b.refused,
					 u.refused);
			refused++;
			continue;
		}
		ok++;
		v2 += u.num_splits > 1;
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
	/* the sweep reaches both answers, and v2 */
	cr_assert(ok > 1000 && refused > 1000 && v2 > 500, "%u answered (%u v2), %u refused", ok,
		  v2, refused);
}
