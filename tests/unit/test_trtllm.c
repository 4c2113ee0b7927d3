/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/trtllm, the core alone: TensorRT-LLM's XQA multi-block count on
 * the worked numbers (Llama-3.1-8B on an H100), FORCE_DETERMINISTIC,
 * the short batch that falls back to the masked-MHA kernel (refused), the
 * configs XQA does not take, the count's float steps against libm's sqrtf
 * and roundf for every count the port can form, and what upstream implies
 * of a batch: only its longest length and its size are read.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "trtllm.h"

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
	return s;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct trtllm_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return trtllm_launch_batch(s, &b, o, by_seq);
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

static const struct trtllm_options deterministic = {true};

/* 8192 tokens: 64 blocks of 128, capped by round(sqrt(64 * 8)) = 23; the
 * wave 8 * 8 * 23 / 132 = 11.15 is 1.39 times the target of 8, so
 * floor(23 / 1.39) = 16 for every request. Scratch: 16 * 8 * 8 = 1024
 * sub-sequences of 128 + 128 bytes (row max, row sum) and 4 rows of 128
 * bf16 (1024 bytes). */
Test(trtllm_batch, llama_8b_h100_mixed_batch_splits_16_each)
{
	const uint32_t pages[] = {16, 32, 64, 128};
	uint32_t by_seq[MIXED_N];

	for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
		const struct engine_shape s = h100(pages[p]);
		memset(by_seq, 0, sizeof by_seq);
		const struct engine_answer a = run(&s, mixed, MIXED_N, NULL, by_seq);
		cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
		cr_assert_eq(a.num_splits, 16);
		cr_assert_eq(a.num_splits_bound, 16);
		for (uint32_t i = 0; i < MIXED_N; i++) {
			cr_assert_eq(by_seq[i], 16, "sequence %u: %u", i, by_seq[i]);
		}
		cr_assert_eq(term(&a, "max_past_kv_length"), 8192);
		cr_assert_eq(term(&a, "block_count"), 8 * 8 * 64);
		cr_assert_eq(term(&a, "multi_block_count"), 23);
		cr_assert_eq(term(&a, "nbSubSeq"), 1024);
		cr_assert_eq(a.workspace_bytes, 1024u * (128 + 128) + 1024u * 1024);
	}
}

/* FORCE_DETERMINISTIC=1: no multi-block, one block a sequence, no scratch. */
Test(trtllm_batch, deterministic_is_one_block_each)
{
	const struct engine_shape s = h100(32);
	uint32_t by_seq[MIXED_N];

	const struct engine_answer a = run(&s, mixed, MIXED_N, &deterministic, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 1);
	cr_assert_eq(a.num_splits_bound, 1);
	for (uint32_t i = 0; i < MIXED_N; i++) {
		cr_assert_eq(by_seq[i], 1);
	}
	cr_assert_eq(a.workspace_bytes, 0);
	cr_assert_eq(term(&a, "multi_block_mode"), 0);
}

/* Alone, 8192 tokens keep the 23 the sqrt cap gives (a wave of 1.39). */
Test(trtllm_batch, the_long_request_alone_splits_23)
{
	const struct engine_shape s = h100(32);
	uint32_t by_seq[1];

	const struct engine_answer a = run(&s, mixed, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 23);
	cr_assert_eq(by_seq[0], 23);
}

/* One request of 100 tokens: 8 KV heads * 1 block * 4 < 132 SMs, so
 * TensorRT-LLM runs the masked-MHA kernel, whose count needs occupancy
 * figures: refused, naming them. Deterministic forces XQA: one block. */
Test(trtllm_batch, a_short_single_request_falls_back_to_mmha_and_is_refused)
{
	const struct engine_shape s = h100(32);
	const uint32_t one[1] = {100};
	uint32_t by_seq[1] = {77};

	struct engine_answer a = run(&s, one, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");
	cr_assert(strstr(a.refused, "cudaOccupancyMaxActiveBlocksPerMultiprocessor") != NULL);
	cr_assert(strstr(a.refused, "cudaDevAttrMaxSharedMemoryPerBlockOptin") != NULL);
	cr_assert_eq(by_seq[0], 77, "a refusal writes no by_seq");

	a = run(&s, one, 1, &deterministic, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(by_seq[0], 1);

	/* 33 blocks of 128 tokens: 8 * 33 * 4 = 1056 >= 132: XQA, and then
	 * round(sqrt(33 * 8)) = 16 caps nothing: 33 > 16, so 16; the wave
	 * 8 * 16 / 132 is below 8. */
	const uint32_t longer[1] = {33 * 128};
	a = run(&s, longer, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 16);
}

/* The configs supportConfigHMMA does not take go to the masked-MHA kernel
 * too; each names the input to change. */
Test(trtllm_batch, configs_xqa_does_not_take_are_refused_with_their_input)
{
	uint32_t by_seq[MIXED_N];
	struct {
		uint32_t q, kv, d, page;
		const char *input;
	} cases[] = {
		{32, 32, 128, 32, "num_kv_heads"}, /* plain MHA */
		{64 * 8, 8, 128, 32, "num_kv_heads"}, /* group 64 > 32 */
		{32, 8, 72, 32, "head_dim"},
		{32, 8, 512, 32, "head_dim"},
		{32, 8, 128, 8, "page_size"},
		{32, 8, 128, 256, "page_size"},
		{30, 8, 128, 32, "num_kv_heads"}, /* not a multiple */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct engine_shape s = h100(cases[c].page);
		s.num_q_heads = cases[c].q;
		s.num_kv_heads = cases[c].kv;
		s.head_dim = cases[c].d;
		for (int det = 0; det < 2; det++) {
			const struct trtllm_options o = {det != 0};
			const struct engine_answer a = run(&s, mixed, MIXED_N, &o, by_seq);
			cr_assert_eq(a.status, ENGINE_REFUSED, "case %zu", c);
			cr_assert_str_eq(a.refused_input, cases[c].input, "case %zu", c);
		}
	}
	/* group 32 and head_dim 16, 80, 256 are taken */
	struct engine_shape s = h100(64);
	s.num_q_heads = 32 * 8;
	s.head_dim = 80;
	cr_assert_eq(run(&s, mixed, MIXED_N, NULL, by_seq).status, ENGINE_OK);
	s.head_dim = 16;
	cr_assert_eq(run(&s, mixed, MIXED_N, NULL, by_seq).status, ENGINE_OK);
	s.head_dim = 256;
	cr_assert_eq(run(&s, mixed, MIXED_N, NULL, by_seq).status, ENGINE_OK);
	/* a num_splits argument XQA does not have */
	s = h100(32);
	s.num_splits = 4;
	cr_assert_str_eq(run(&s, mixed, MIXED_N, NULL, by_seq).refused_input, "num_splits");
}

/* The batch's own bounds, before anything else. */
Test(trtllm_batch, batch_bounds)
{
	const struct engine_shape s = h100(32);
	uint32_t by_seq[2];
	const uint32_t zero[2] = {5000, 0};

	cr_assert_str_eq(run(&s, zero, 0, NULL, by_seq).refused_input, "num_seqs");
	cr_assert_str_eq(run(&s, zero, 2, NULL, by_seq).refused_input, "seq_lens");
	cr_assert_str_eq(run(&s, NULL, 2, NULL, by_seq).refused_input, "seq_lens");
	struct engine_shape z = s;
	z.sm_count = 0;
	cr_assert_str_eq(run(&z, mixed, 2, NULL, by_seq).refused_input, "sm_count");
	z = s;
	z.page_size = 0;
	cr_assert_str_eq(run(&z, mixed, 2, NULL, by_seq).refused_input, "page_size");
}

/* The reserved workspace's limit: 6000 sub-sequences over the batch. With
 * SMs enough that the wave never binds, 1000 requests of 200,000 tokens
 * get 6000 / 1000 = 6 blocks each. */
Test(trtllm_batch, the_reserved_6000_sub_sequences_bind_a_large_batch)
{
	static uint32_t lens[1000], by_seq[1000];
	struct engine_shape s = h100(32);
	s.sm_count = 100000;

	for (uint32_t i = 0; i < 1000; i++) {
		lens[i] = 200000;
	}
	const struct engine_answer a = run(&s, lens, 1000, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 6);
	cr_assert_eq(by_seq[999], 6);
}

/*
 * The float steps against libm: for every count history_length / 128 an
 * int history can give (1 .. 2^24 - 1), one request on one KV head, with
 * SMs enough (4 a block) that XQA pays and the wave never binds, the
 * answer is max(min(c, (int)roundf(sqrtf(c * 8.F))), 1), then at most
 * 6000: upstream's std::round(std::sqrt(float)).
 */
Test(trtllm_batch, the_sqrt_cap_equals_libm_for_every_count)
{
	struct engine_shape s;
	uint32_t len[1], by_seq[1];

	memset(&s, 0, sizeof s);
	s.num_q_heads = 2;
	s.num_kv_heads = 1;
	s.head_dim = 128;
	s.page_size = 64;
	for (int c = 1; c < (1 << 24); c++) {
		len[0] = (uint32_t)c * 128u + (uint32_t)(c % 128);
		s.sm_count = 4u * (uint32_t)c;
		const struct engine_answer a = run(&s, len, 1, NULL, by_seq);
		int want = (int)roundf(sqrtf((float)c * 8.F));
		want = want < c ? want : c;
		want = want > 1 ? want : 1;
		want = want < 6000 ? want : 6000;
		if (a.status != ENGINE_OK || a.num_splits != (uint32_t)want) {
			cr_assert_fail("count %d: %s %u, libm %d", c, a.refused ? a.refused : "",
				       a.num_splits, want);
		}
	}
}

/* What upstream implies of a batch: it reads only the longest length and
 * the count. Over a sweep, a batch answers as the batch of the same size
 * whose every length is its longest, every request gets the same count,
 * and an equal-length batch's count never grows with the batch. */
Test(trtllm_batch, only_the_longest_and_the_count_matter)
{
	static uint32_t lens[512], same[512], by_a[512], by_b[512];
	const struct engine_shape s = h100(32);
	uint64_t state = 12345;

	for (uint32_t round = 0; round < 2000; round++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		const uint32_t n = 1 + (uint32_t)(state >> 33) % 512;
		uint32_t longest = 0;
		for (uint32_t i = 0; i < n; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			lens[i] = 1 + (uint32_t)(state >> 33) % 200000;
			longest = lens[i] > longest ? lens[i] : longest;
		}
		for (uint32_t i = 0; i < n; i++) {
			same[i] = longest;
		}
		for (int det = 0; det < 2; det++) {
			const struct trtllm_options o = {det != 0};
			const struct engine_answer a = run(&s, lens, n, &o, by_a);
			const struct engine_answer b = run(&s, same, n, &o, by_b);
			cr_assert_eq(a.status, b.status);
			if (a.status != ENGINE_OK) {
				continue;
			}
			cr_assert_eq(a.num_splits, b.num_splits);
			cr_assert_eq(a.workspace_bytes, b.workspace_bytes);
			for (uint32_t i = 0; i < n; i++) {
				cr_assert_eq(by_a[i], a.num_splits);
				cr_assert_eq(by_b[i], a.num_splits);
			}
		}
	}
	/* equal lengths: more requests never get more blocks each */
	for (uint32_t len = 128; len <= 200000; len = len * 3 / 2) {
		uint32_t prev = UINT32_MAX;
		for (uint32_t n = 1; n <= 512; n++) {
			for (uint32_t i = 0; i < n; i++) {
				same[i] = len;
			}
			const struct engine_answer a = run(&s, same, n, NULL, by_a);
			if (a.status != ENGINE_OK) {
				continue;
			}
			cr_assert_leq(a.num_splits, prev, "len %u n %u", len, n);
			prev = a.num_splits;
		}
	}
}
