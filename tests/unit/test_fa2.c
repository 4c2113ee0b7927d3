/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Unit tests for policy/fa2's mixed batch (fa2_launch_batch): the issue's
 * worked example, where FlashAttention-2 gives every sequence one count
 * from the batch size and the longest sequence, its promise to equal
 * fa2_launch wherever every length is the same (over a sweep), and the
 * batch's own refusals. The expected counts are worked by hand from
 * upstream's arithmetic in the comments, not from the port.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "fa2.h"

/* H100 (132 SMs), Llama-3.1-8B's 32 query and 8 KV heads of 128, bf16. */
static struct engine_shape h100_llama(uint32_t page_size)
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

/*
 * The worked example of fa3's test, on FlashAttention-2. Its paged cache
 * takes only blocks of a multiple of 256 tokens, so pages of 16 are
 * refused; with pages of 256 the block table of 32 pages is seqlen_k
 * 8,192 whatever the shorter sequences hold. The swap makes seqlen_q 4
 * groups and num_heads 8, one row block: batch_nheads_mblocks = 8 x
 * num_seqs against num_SMs 264, and 64 KV blocks of 128.
 *   1 sequence:   8 < 211.2; 32 splits: 256/264 = 0.970 is the best
 *                 efficiency (as 64's 512/528), and no eligible count
 *                 below 32 reaches 0.85 of it (22: 176/264 = 0.667)
 *   8 sequences:  64 < 211.2; 4 splits: 256/264 = 0.970 again
 *   64:           512 >= 211.2, 1 split
 * Every sequence gets that one count, long or short.
 */
struct worked {
	const char *name;
	uint32_t num_seqs;
	uint32_t lens[64];
	uint32_t splits;
};

Test(fa2_batch, the_worked_example_32_4_1_4_for_every_sequence)
{
	static struct worked cases[] = {
		{"alone", 1, {8192}, 32},
		{"beside 3 x 512 and 4 x 100", 8, {8192, 512, 512, 512, 100, 100, 100, 100}, 4},
		{"beside 63 x 100", 64, {8192}, 1},
		{"beside 7 x 8192", 8, {8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192}, 4},
	};
	for (uint32_t i = 1; i < 64; i++) {
		cases[2].lens[i] = 100;
	}
	struct engine_shape const s = h100_llama(256), s16 = h100_llama(16);

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct worked const *w = &cases[c];
		struct engine_batch const b = {w->lens, w->num_seqs};
		uint32_t by_seq[64];
		struct engine_answer const a = fa2_launch_batch(&s, &b, by_seq);

		cr_assert_eq(a.status, ENGINE_OK, "%s: %s", w->name, a.refused);
		cr_assert_eq(a.num_splits, w->splits, "%s: %u", w->name, a.num_splits);
		cr_assert_eq(a.num_splits_bound, w->splits, "%s", w->name);
		for (uint32_t i = 0; i < w->num_seqs; i++) {
			cr_assert_eq(by_seq[i], w->splits, "%s, sequence %u: %u", w->name, i, by_seq[i]);
		}
		/* softmax_lse_accum + out_accum, float32: splits x num_seqs x 8
		 * heads x 4 rows x (1 + 128) */
		uint64_t const want =
			w->splits > 1 ? (uint64_t)w->splits * w->num_seqs * 8 * 4 * (1 + 128) * 4 : 0;
		cr_assert_eq(a.workspace_bytes, want, "%s", w->name);

		struct engine_answer const r = fa2_launch_batch(&s16, &b, by_seq);
		cr_assert_eq(r.status, ENGINE_REFUSED, "%s", w->name);
		cr_assert_str_eq(r.refused_input, "page_size");
	}
}

/* The block table is as wide as the longest sequence: 8,193 tokens in
 * pages of 256 are 33 pages, seqlen_k 8,448, 66 KV blocks; one sequence
 * or three, the count is the batch size's and the longest's. */
Test(fa2_batch, the_longest_sequence_sizes_the_block_table)
{
	struct engine_shape s = h100_llama(256);
	uint32_t const lens[] = {100, 8193, 7};
	struct engine_batch const b = {lens, 3};
	uint32_t by_seq[3];
	struct engine_answer const a = fa2_launch_batch(&s, &b, by_seq);

	s.num_seqs = 3;
	s.seq_len = 8193;
	struct engine_answer const u = fa2_launch(&s);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits, u.num_splits);
	cr_assert_eq(a.workspace_bytes, u.workspace_bytes);
	for (unsigned i = 0; i < a.n_terms; i++) {
		cr_assert_str_eq(a.terms[i].name, u.terms[i].name);
		cr_assert_eq(a.terms[i].value, u.terms[i].value, "%s", a.terms[i].name);
	}
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(by_seq[i], u.num_splits);
	}
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
 * fa2_launch's for num_seqs sequences of L, exactly (status, counts,
 * scratch, terms; a refusal's reason, its input renamed from seq_len to
 * seq_lens), and every by_seq entry is its count.
 */
Test(fa2_batch, equal_lengths_answer_as_fa2_launch)
{
	static uint32_t lens[ENGINE_MAX_SEQS], by_seq[ENGINE_MAX_SEQS];
	static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56};
	static const uint32_t pages[] = {256, 512, 768, 1024, 16, 128};
	uint64_t state = 49;
	unsigned answered = 0, refused = 0, split = 0;

	for (int n = 0; n < 20000; n++) {
		struct engine_shape s;

		memset(&s, 0, sizeof s);
		s.sm_count = n % 3 ? sms[next(&state) % 10] : between(&state, 1, 300);
		s.num_seqs = between(&state, 1, n % 50 ? (n % 2 ? 1200 : 16) : ENGINE_MAX_SEQS);
		s.num_kv_heads = between(&state, 1, 16);
		s.num_q_heads = s.num_kv_heads * between(&state, 1, 8) + (n % 97 == 0);
		s.head_dim = n % 4 ? 8 * between(&state, 1, 33) : between(&state, 1, 264);
		s.seq_len = next(&state) % 2 ? between(&state, 1, 200000) : between(&state, 1, 4096);
		s.page_size = pages[next(&state) % 6];
		s.num_splits = n % 8 == 0 ? between(&state, 1, 150) : 0;
		for (uint32_t i = 0; i < s.num_seqs; i++) {
			lens[i] = s.seq_len;
			by_seq[i] = 0;
		}
		struct engine_batch const b = {lens, s.num_seqs};
		struct engine_answer const u = fa2_launch(&s);
		struct engine_answer const a = fa2_launch_batch(&s, &b, by_seq);

		cr_assert_eq(a.status, u.status, "shape %d", n);
		cr_assert_eq(a.num_splits, u.num_splits, "shape %d", n);
		cr_assert_eq(a.num_splits_bound, u.num_splits_bound, "shape %d", n);
		cr_assert_eq(a.workspace_bytes, u.workspace_bytes, "shape %d", n);
		cr_assert_eq(a.n_terms, u.n_terms, "shape %d", n);
		for (unsigned i = 0; i < a.n_terms; i++) {
			cr_assert_eq(a.terms[i].value, u.terms[i].value, "shape %d, %s", n, a.terms[i].name);
		}
		if (u.status != ENGINE_OK) {
			refused++;
			bool const len = strcmp(u.refused_input, "seq_len") == 0;
			cr_assert_str_eq(a.refused_input, len ? "seq_lens" : u.refused_input, "shape %d", n);
			cr_assert_str_eq(a.refused, u.refused, "shape %d", n);
			cr_assert_eq(by_seq[0], 0, "a refusal writes nothing");
			continue;
		}
		answered++;
		split += u.num_splits > 1;
		for (uint32_t i = 0; i < s.num_seqs; i++) {
			cr_assert_eq(by_seq[i], u.num_splits, "shape %d, sequence %u", n, i);
		}
	}
	cr_assert_gt(answered, 5000);
	cr_assert_gt(refused, 1000);
	cr_assert_gt(split, 1000);
}

Test(fa2_batch, the_batchs_own_refusals)
{
	struct engine_shape s = h100_llama(256);
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
		struct engine_answer const a = fa2_launch_batch(&s, &cases[c].b, by_seq);

		cr_assert_eq(a.status, ENGINE_REFUSED, "%s", cases[c].name);
		cr_assert_str_eq(a.refused_input, cases[c].input, "%s", cases[c].name);
		cr_assert_eq(a.num_splits, 0);
		cr_assert_eq(a.workspace_bytes, 0);
	}
	lens[1] = ENGINE_MAX_SEQ_LEN + 1u;
	struct engine_batch const too_long = {lens, 3};
	struct engine_answer a = fa2_launch_batch(&s, &too_long, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");
	/* beyond upstream's int seqlen_k + block_n, named after seq_lens */
	lens[1] = ENGINE_MAX_SEQ_LEN - 100;
	a = fa2_launch_batch(&s, &too_long, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED);
	cr_assert_str_eq(a.refused_input, "seq_lens");

	lens[1] = 512;
	struct engine_batch const fine = {lens, 3};
	s.num_kv_heads = 5;
	a = fa2_launch_batch(&s, &fine, by_seq);
	cr_assert_str_eq(a.refused_input, "num_kv_heads");
	s.num_kv_heads = 8;
	s.num_splits = 129;
	a = fa2_launch_batch(&s, &fine, by_seq);
	cr_assert_str_eq(a.refused_input, "num_splits");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(by_seq[i], 7, "a refusal writes nothing to by_seq");
	}
	s.num_splits = 0;
	a = fa2_launch_batch(&s, &fine, NULL);
	cr_assert_eq(a.status, ENGINE_OK, "by_seq may be NULL");
}
