/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Unit tests for policy/fa3's mixed batch (fa3_launch_batch): the issue's
 * worked example, its promise to equal fa3_launch wherever every length is
 * the same (over a sweep), the batch's own refusals, and the quotient it
 * says is near a whole number. The expected counts are worked by hand from
 * upstream's arithmetic in the comments, not from the port.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "fa3.h"

/* H100 (132 SMs), Llama-3.1-8B's 32 query and 8 KV heads of 128, bf16,
 * pages of 16 tokens. */
static struct engine_shape h100_llama(void)
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

static bool has_term(const struct engine_answer *a, const char *name)
{
	for (unsigned i = 0; i < a->n_terms; i++) {
		if (strcmp(a->terms[i].name, name) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * The worked example. Pages of 16 are not a multiple of kBlockN 176, so
 * the paged KV is loaded without TMA: kBlockM = kBlockN = 128, PackGQA,
 * num_head = 8 KV heads, one row block a sequence. The host bound, from
 * the longest sequence (64 blocks of 8,192) as if alone, is 15. Then
 * blocks_per_sm = ceilf(total_blocks * 1.1f * 8 / 132):
 *   alone:                   64 blocks        -> 4.27 -> 5,  ceil(64 / 5)  = 13
 *   + 3 x 512 + 4 x 100:     64 + 12 + 4 = 80 -> 5.33 -> 6,  ceil(64 / 6)  = 11
 *   + 63 x 100:              64 + 63 = 127    -> 8.47 -> 9,  ceil(64 / 9)  = 8
 *   + 7 x 8,192:             8 x 64 = 512     -> 34.1 -> 35, ceil(64 / 35) = 2
 * and every short sequence (1 or 4 blocks) 1 split.
 */
struct worked {
	const char *name;
	uint32_t num_seqs;
	uint32_t lens[64];
	uint32_t long_splits, short_splits;
	uint64_t total_blocks, blocks_per_sm;
};

Test(fa3_batch, the_worked_example_13_11_8_2)
{
	static struct worked cases[] = {
		{"alone", 1, {8192}, 13, 0, 64, 5},
		{"beside 3 x 512 and 4 x 100", 8, {8192, 512, 512, 512, 100, 100, 100, 100}, 11, 1, 80, 6},
		{"beside 63 x 100", 64, {8192}, 8, 1, 127, 9},
		{"beside 7 x 8192", 8, {8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192}, 2, 2, 512, 35},
	};
	for (uint32_t i = 1; i < 64; i++) {
		cases[2].lens[i] = 100;
	}
	struct engine_shape const s = h100_llama();

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct worked const *w = &cases[c];
		struct engine_batch const b = {w->lens, w->num_seqs};
		uint32_t by_seq[64];
		struct engine_answer const a = fa3_launch_batch(&s, &b, by_seq);

		cr_assert_eq(a.status, ENGINE_OK, "%s: %s", w->name, a.refused);
		cr_assert_eq(by_seq[0], w->long_splits, "%s: %u", w->name, by_seq[0]);
		cr_assert_eq(a.num_splits, w->long_splits, "%s", w->name);
		for (uint32_t i = 1; i < w->num_seqs; i++) {
			cr_assert_eq(by_seq[i], w->short_splits, "%s, sequence %u: %u", w->name, i, by_seq[i]);
		}
		cr_assert_eq(a.num_splits_bound, 15, "%s", w->name);
		/* out_accum and softmax_lse_accum, float32, sized by the bound:
		 * 15 x num_seqs x 32 heads x (128 + 1) */
		cr_assert_eq(a.workspace_bytes, 15ull * w->num_seqs * 32 * (128 + 1) * 4, "%s", w->name);
		cr_assert_eq(term(&a, "seqlen_k"), 8192);
		cr_assert_eq(term(&a, "kBlockN"), 128);
		cr_assert_eq(term(&a, "total_blocks"), w->total_blocks, "%s", w->name);
		cr_assert_eq(term(&a, "blocks_per_sm"), w->blocks_per_sm, "%s", w->name);
		cr_assert_eq(term(&a, "blocks_per_sm_near_whole"), 0, "%s", w->name);
		cr_assert(!has_term(&a, "num_splits_dynamic"), "one per sequence: by_seq");
	}
}

/* The page table is as wide as the longest sequence: 8,193 tokens in
 * pages of 16 are 513 pages, seqlen_k 8,208, 65 blocks of 128. */
Test(fa3_batch, the_longest_sequence_sizes_the_page_table)
{
	struct engine_shape const s = h100_llama();
	uint32_t const lens[] = {100, 8193, 7};
	struct engine_batch const b = {lens, 3};
	uint32_t by_seq[3];
	struct engine_answer const a = fa3_launch_batch(&s, &b, by_seq);

	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(term(&a, "seqlen_k"), 8208);
	cr_assert_eq(term(&a, "get_num_splits.num_n_blocks"), 65);
	/* 65 + 1 + 1 = 67 blocks -> ceilf(67 * 1.1f * 8 / 132) = ceilf(4.47) = 5 */
	cr_assert_eq(term(&a, "blocks_per_sm"), 5);
	cr_assert_eq(by_seq[0], 1);
	cr_assert_eq(by_seq[1], 13); /* ceil(65 / 5) */
	cr_assert_eq(by_seq[2], 1);
	cr_assert_eq(a.num_splits, 13);
}

/* splitmix64, for the sweep */
static uint64_t next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t between(uint64_t *state, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(next(state) % ((uint64_t)hi - lo + 1));
}

/*
 * engine.h's promise: with every length L, the batch's answer is
 * fa3_launch's for num_seqs sequences of L, exactly (status, counts,
 * scratch; a refusal's reason, its input renamed from seq_len to
 * seq_lens), and so is every by_seq entry. Over batches of 1 to 1,200
 * (the one-CTA edge at 992/993 included) and a few up to ENGINE_MAX_SEQS,
 * the catalog's and random SM counts, GQA groups (some that do not divide),
 * every head size class, pages of 1 to 1,024 and a fixed num_splits in one
 * shape of eight.
 */
Test(fa3_batch, equal_lengths_answer_as_fa3_launch)
{
	static uint32_t lens[ENGINE_MAX_SEQS], by_seq[ENGINE_MAX_SEQS];
	static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56};
	static const uint32_t seqs[] = {1, 2, 31, 32, 991, 992, 993, 1200, 4096};
	uint64_t state = 49;
	unsigned answered = 0, refused = 0, split = 0;

	for (int n = 0; n < 20000; n++) {
		struct engine_shape s;

		memset(&s, 0, sizeof s);
		s.sm_count = n % 3 ? sms[next(&state) % 10] : between(&state, 1, 300);
		s.num_seqs = n % 5 ? between(&state, 1, n % 50 ? 1200 : ENGINE_MAX_SEQS) : seqs[next(&state) % 9];
		s.num_kv_heads = between(&state, 1, 16);
		s.num_q_heads = s.num_kv_heads * between(&state, 1, 8) + (n % 97 == 0);
		s.head_dim = 8 * between(&state, 1, 34); /* 264 is refused */
		s.seq_len = next(&state) % 2 ? between(&state, 1, 200000) : between(&state, 1, 4096);
		s.page_size = between(&state, 1, 1024);
		s.num_splits = n % 8 == 0 ? between(&state, 1, 300) : 0;
		for (uint32_t i = 0; i < s.num_seqs; i++) {
			lens[i] = s.seq_len;
			by_seq[i] = 0;
		}
		struct engine_batch const b = {lens, s.num_seqs};
		struct engine_answer const u = fa3_launch(&s);
		struct engine_answer const a = fa3_launch_batch(&s, &b, by_seq);

		cr_assert_eq(a.status, u.status, "shape %d", n);
		cr_assert_eq(a.num_splits, u.num_splits, "shape %d", n);
		cr_assert_eq(a.num_splits_bound, u.num_splits_bound, "shape %d", n);
		cr_assert_eq(a.workspace_bytes, u.workspace_bytes, "shape %d", n);
		if (u.status != ENGINE_OK) {
			refused++;
			bool const len = strcmp(u.refused_input, "seq_len") == 0;
			cr_assert_str_eq(a.refused_input, len ? "seq_lens" : u.refused_input, "shape %d", n);
			if (!len) {
				cr_assert_str_eq(a.refused, u.refused, "shape %d", n);
			}
			cr_assert_eq(by_seq[0], 0, "a refusal writes nothing");
			continue;
		}
		answered++;
		split += u.num_splits > 1;
		for (uint32_t i = 0; i < s.num_seqs; i++) {
			cr_assert_eq(by_seq[i], u.num_splits, "shape %d, sequence %u", n, i);
		}
	}
	/* the sweep reached each kind of answer */
	cr_assert_gt(answered, 10000);
	cr_assert_gt(refused, 100);
	cr_assert_gt(split, 1000);
}

Test(fa3_batch, the_batchs_own_refusals)
{
	struct engine_shape s = h100_llama();
	uint32_t lens[] = {8192, 0, 100};
	uint32_t by_seq[3] = {7, 7, 7};
	struct {
		const char *name;
		struct engine_batch b;
		const char *input;
	} const cases[] = {
		{"no sequence", {lens, 0}, "num_seqs"},
		{"more than ENGINE_MAX_SEQS", {lens, ENGINE_MAX_SEQS + 1}, "num_seqs"},
		{"no seq_lens", {NULL, 3}, "seq_lens"},
		{"a length of 0", {lens, 3}, "seq_lens"},
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct engine_answer const a = fa3_launch_batch(&s, &cases[c].b, by_seq);

		cr_assert_eq(a.status, ENGINE_REFUSED, "%s", cases[c].name);
		cr_assert_str_eq(a.refused_input, cases[c].input, "%s", cases[c].name);
		cr_assert_eq(a.num_splits, 0);
		cr_assert_eq(a.workspace_bytes, 0);
	}
	lens[1] = ENGINE_MAX_SEQ_LEN + 1u;
	struct engine_batch const too_long = {lens, 3};
	struct engine_answer a = fa3_launch_batch(&s, &too_long, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");

	/* the shape's own refusals, as fa3_launch's */
	lens[1] = 512;
	struct engine_batch const fine = {lens, 3};
	s.head_dim = 100;
	a = fa3_launch_batch(&s, &fine, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "head_dim");
	s.head_dim = 128;
	s.sm_count = 0;
	a = fa3_launch_batch(&s, &fine, by_seq);
	cr_assert_str_eq(a.refused_input, "sm_count");
	s.sm_count = 132;
	s.num_splits = 257;
	a = fa3_launch_batch(&s, &fine, by_seq);
	cr_assert_str_eq(a.refused_input, "num_splits");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(by_seq[i], 7, "a refusal writes nothing to by_seq");
	}

	/* Upstream's int sum of blocks (146-154) would overflow: 992
	 * sequences of 2e9 tokens are 15.6 million blocks of 128 each (with
	 * num_splits given, get_num_splits' own int size_one_kv_head is not
	 * formed). With 993 the prepare kernel forms no sum and every
	 * sequence gets 1. */
	static uint32_t longs[993], longs_by_seq[993];
	for (int i = 0; i < 993; i++) {
		longs[i] = 2000000000u;
	}
	s.num_splits = 2;
	struct engine_batch const one_cta = {longs, 992}, two_ctas = {longs, 993};
	a = fa3_launch_batch(&s, &one_cta, longs_by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");
	a = fa3_launch_batch(&s, &two_ctas, longs_by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(a.num_splits, 1);
	cr_assert_eq(a.num_splits_bound, 2);
	cr_assert_eq(longs_by_seq[0], 1);
	cr_assert_eq(longs_by_seq[992], 1);
}

/*
 * 1,280 tokens in pages of 16, one query and one KV head on 11 SMs: 10
 * blocks of 128, and float(10) * 1.1f = 11.0000002 rounds to the float 11,
 * so the quotient 11 * 1 / 11 is exactly 1: a GPU dividing approximately
 * may land on either side of it, which the answer says. Beside a sequence
 * of 128 tokens it is 12.1 / 11 = 1.1, far from a whole number.
 */
Test(fa3_batch, says_when_the_quotient_is_near_a_whole_number)
{
	struct engine_shape s = h100_llama();
	s.sm_count = 11;
	s.num_q_heads = 1;
	s.num_kv_heads = 1;
	uint32_t const lens[] = {1280, 128};
	struct engine_batch one = {lens, 1}, two = {lens, 2};
	struct engine_answer const a = fa3_launch_batch(&s, &one, NULL);
	struct engine_answer const b = fa3_launch_batch(&s, &two, NULL);

	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_gt(a.num_splits_bound, 1);
	cr_assert_eq(term(&a, "total_blocks"), 10);
	cr_assert_eq(term(&a, "blocks_per_sm"), 1);
	cr_assert_eq(term(&a, "blocks_per_sm_near_whole"), 1);
	cr_assert_eq(b.status, ENGINE_OK, "%s", b.refused);
	cr_assert_eq(term(&b, "total_blocks"), 11);
	cr_assert_eq(term(&b, "blocks_per_sm"), 2);
	cr_assert_eq(term(&b, "blocks_per_sm_near_whole"), 0);
}
