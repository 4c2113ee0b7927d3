/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/flashmla, the core alone: FlashMLA's dense decode schedule on an
 * H100 worked by hand (8 x 8,192 split 8, 9, 9, 8, 8, 9, 9, 8; a lone long
 * sequence over every part; one long beside short ones; seqlen_q 2), the
 * accumulators it sizes, its refusals and their edges, and what the walk
 * implies over a sweep: the splits fit the accumulators' rows, no sequence
 * has more than num_sm_parts, and equal lengths differ by one at most.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "flashmla.h"

/* DeepSeek-V3's decode on an H100 (132 SMs): 128 q heads over 1 KV head,
 * head_dim 576 (K) / 512 (V), pages of 64. */
static struct engine_shape h100(void)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.sm_count = 132;
	s.num_q_heads = 128;
	s.num_kv_heads = 1;
	s.head_dim = 576;
	s.page_size = 64;
	return s;
}

static struct engine_answer run(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
				const struct flashmla_options *o, uint32_t *by_seq)
{
	const struct engine_batch b = {lens, n};

	return flashmla_launch_batch(s, &b, o, by_seq);
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

/* lse_accum + out_accum: rows x h_k x q_seq_per_hk floats, and 512 times
 * as many, 4 bytes each */
static uint64_t accum_bytes(uint64_t rows, uint64_t q_seq_per_hk)
{
	return rows * q_seq_per_hk * 4 + rows * q_seq_per_hk * 512 * 4;
}

/* 66 parts (132 SMs / 1 KV head / ceil(128 / 64)); each request has
 * 8,192 / 64 = 128 blocks, so 8 x (128 + 5) = 1,064, payload
 * ceil(1,064 / 66) + 5 = 22: a part carries 17 blocks of a request it
 * does not finish. Request 0 takes 7 parts of 17 and ends in the 8th
 * (9 blocks + 5), which has 8 left: 3 blocks of request 1, which then
 * needs 7 more parts and 6 blocks of a 9th, and so on. */
Test(flashmla_batch, h100_eight_of_8192_split_8_9_9_8_8_9_9_8)
{
	const struct engine_shape s = h100();
	const uint32_t lens[8] = {8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192};
	const uint32_t want[8] = {8, 9, 9, 8, 8, 9, 9, 8};
	uint32_t by_seq[8];

	const struct engine_answer a = run(&s, lens, 8, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 9);
	cr_assert_eq(a.num_splits_bound, 66);
	cr_assert_eq(term(&a, "num_sm_parts"), 66);
	cr_assert_eq(term(&a, "q_seq_per_hk"), 128);
	cr_assert_eq(term(&a, "total_num_blocks"), 1064);
	cr_assert_eq(term(&a, "payload"), 22);
	cr_assert_eq(term(&a, "cum_num_splits"), 68);
	cr_assert_eq(term(&a, "total_num_splits"), 74);
	cr_assert_eq(term(&a, "MAX_SPLITS"), 96);
	/* 8 + 66 rows */
	cr_assert_eq(a.workspace_bytes, accum_bytes(74, 128));
	cr_assert_eq(a.workspace_bytes, 19436544u);

	/* NULL is the defaults, and so are zeros and the values themselves */
	const struct flashmla_options zeros = {0, 0}, given = {512, 1};
	uint32_t again[8];
	const struct flashmla_options *opts[2] = {&zeros, &given};
	for (int k = 0; k < 2; k++) {
		const struct engine_answer b = run(&s, lens, 8, opts[k], again);
		cr_assert_eq(b.status, ENGINE_OK);
		cr_assert_eq(b.num_splits, a.num_splits);
		cr_assert_eq(b.workspace_bytes, a.workspace_bytes);
		cr_assert_eq(memcmp(again, by_seq, sizeof by_seq), 0);
	}
}

/* 200,000 tokens: 3,125 blocks; payload ceil(3,130 / 66) + 5 = 53, 48 a
 * part: 65 parts of 48 and the last 5 in the 66th. */
Test(flashmla_batch, a_lone_long_sequence_spreads_over_every_part)
{
	const struct engine_shape s = h100();
	const uint32_t lens[1] = {200000};
	uint32_t by_seq[1];

	const struct engine_answer a = run(&s, lens, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(by_seq[0], 66);
	cr_assert_eq(a.num_splits, 66);
	cr_assert_eq(term(&a, "payload"), 53);
	cr_assert_eq(a.workspace_bytes, accum_bytes(1 + 66, 128));
}

/* 3,125 + 5 + 7 x (1 + 5) = 3,172 blocks, payload 49 + 5: the long one
 * takes 63 parts of 49 and ends in the 64th (38 + 5), whose 11 left take
 * one short request whole; the other six fit the 65th. */
Test(flashmla_batch, one_long_beside_short_ones)
{
	const struct engine_shape s = h100();
	const uint32_t lens[8] = {200000, 64, 64, 64, 64, 64, 64, 64};
	const uint32_t want[8] = {64, 1, 1, 1, 1, 1, 1, 1};
	uint32_t by_seq[8];

	const struct engine_answer a = run(&s, lens, 8, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(term(&a, "payload"), 54);
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(by_seq[i], want[i], "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits, 64);
	cr_assert_eq(term(&a, "cum_num_splits"), 71);
}

/* seqlen_q 2 (one MTP draft token): q_seq_per_hk 256, so 132 / 4 = 33
 * parts, payload ceil(1,064 / 33) + 5 = 38, 33 a part: each request takes
 * 3 parts of 33 and ends in a 4th (29 + 5), whose 4 left start nothing. */
Test(flashmla_batch, seqlen_q_2_halves_the_parts_and_doubles_the_rows)
{
	const struct engine_shape s = h100();
	const uint32_t lens[8] = {8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192};
	const struct flashmla_options mtp = {512, 2};
	uint32_t by_seq[8];

	const struct engine_answer a = run(&s, lens, 8, &mtp, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(term(&a, "num_sm_parts"), 33);
	cr_assert_eq(term(&a, "payload"), 38);
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(by_seq[i], 4, "sequence %u: %u", i, by_seq[i]);
	}
	cr_assert_eq(a.num_splits_bound, 33);
	cr_assert_eq(a.workspace_bytes, accum_bytes(8 + 33, 256));
}

static void refused(const struct engine_shape *s, const uint32_t *lens, uint32_t n,
		    const struct flashmla_options *o, const char *input)
{
	uint32_t by_seq[80];

	const struct engine_answer a = run(s, lens, n, o, by_seq);
	cr_assert_eq(a.status, ENGINE_REFUSED, "not refused (%s)", input);
	cr_assert_str_eq(a.refused_input, input);
	cr_assert_eq(a.num_splits, 0);
	cr_assert_eq(a.workspace_bytes, 0);
}

Test(flashmla_batch, refusals_name_the_input)
{
	const uint32_t lens[2] = {100, 0};
	struct engine_shape s = h100();

	s.head_dim = 512; /* the interface lets it through; the SM90 kernel asserts 576 */
	refused(&s, lens, 1, NULL, "head_dim");
	s = h100();
	refused(&s, lens, 1, &(const struct flashmla_options){576, 1}, "head_dim_v");
	s.page_size = 16;
	refused(&s, lens, 1, NULL, "page_size");
	s = h100();
	s.num_splits = 2;
	refused(&s, lens, 1, NULL, "num_splits");
	s = h100();
	s.num_kv_heads = 3;
	refused(&s, lens, 1, NULL, "num_q_heads");
	s = h100();
	refused(&s, lens, 0, NULL, "num_seqs");
	refused(&s, lens, 2, NULL, "seq_lens");
	s.sm_count = 0;
	refused(&s, lens, 1, NULL, "sm_count");
	s = h100();
	refused(&s, lens, 1, &(const struct flashmla_options){0, 0x40000000u}, "seqlen_q");
}

/* num_sm_parts 160 is the combine's last case; 161 has none. */
Test(flashmla_batch, more_than_160_parts_is_refused)
{
	struct engine_shape s = h100();
	const uint32_t lens[1] = {100000};
	uint32_t by_seq[1];

	s.sm_count = 321; /* 321 / 2 = 160 */
	const struct engine_answer a = run(&s, lens, 1, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK);
	cr_assert_eq(a.num_splits_bound, 160);
	cr_assert_eq(term(&a, "MAX_SPLITS"), 160);
	s.sm_count = 322;
	refused(&s, lens, 1, NULL, "sm_count");
	s.num_q_heads = 64; /* 161 SMs, one part each */
	s.sm_count = 161;
	refused(&s, lens, 1, NULL, "sm_count");
}

/* ceil_div(total_num_blocks, 66) adds 65 in an int: 64 requests of
 * 33,554,425 blocks (+ 5) and one of 57 (+ 5) make 2,147,483,582, which
 * it takes; one block more overflows. */
Test(flashmla_batch, the_int_total_of_blocks_refused_at_its_edge)
{
	const struct engine_shape s = h100();
	static uint32_t lens[65], by_seq[65];

	for (int i = 0; i < 64; i++) {
		lens[i] = 33554425u * 64;
	}
	lens[64] = 57 * 64;
	const struct engine_answer a = run(&s, lens, 65, NULL, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
	cr_assert_eq(term(&a, "total_num_blocks"), 2147483582u);
	lens[64] = 57 * 64 + 1;
	refused(&s, lens, 65, NULL, "seq_lens");
}

/*
 * Over a sweep of equal-length batches (DeepSeek-V3 shapes, 1..160 parts,
 * 1..300 sequences, 1..200,000 tokens): what the walk implies. Every part
 * boundary cuts one request at most, so the splits fit the b +
 * num_sm_parts rows upstream allocates; a request's splits are distinct
 * parts; and a part carries payload - 5 blocks of a request it does not
 * finish, so equal requests differ by one split at most (by position, as
 * 8, 9, 9, 8 shows: equal lengths are not equal counts).
 */
Test(flashmla_batch, equal_lengths_fit_the_rows_and_differ_by_one_at_most)
{
	static uint32_t lens[300], by_seq[300];
	const uint32_t heads[4] = {128, 64, 32, 16};
	unsigned answered = 0;

	for (uint32_t sm = 1; sm <= 160; sm += 7) {
		for (int h = 0; h < 4; h++) {
			for (uint32_t n = 1; n <= 300; n += 13) {
				for (uint32_t len = 1; len <= 200000; len = len * 3 + 11) {
					struct engine_shape s = h100();
					s.sm_count = sm;
					s.num_q_heads = heads[h];
					for (uint32_t i = 0; i < n; i++) {
						lens[i] = len;
					}
					const struct engine_answer a = run(&s, lens, n, NULL, by_seq);
					cr_assert_eq(a.status, ENGINE_OK, "%s", a.refused);
					answered++;
					uint32_t least = by_seq[0], most = by_seq[0];
					uint64_t sum = 0;
					for (uint32_t i = 0; i < n; i++) {
						least = by_seq[i] < least ? by_seq[i] : least;
						most = by_seq[i] > most ? by_seq[i] : most;
						sum += by_seq[i];
					}
					cr_assert_eq(sum, term(&a, "cum_num_splits"));
					cr_assert_leq(sum, n + a.num_splits_bound - 1);
					cr_assert_leq(most, a.num_splits_bound);
					cr_assert_eq(most, a.num_splits);
					cr_assert_leq(most - least, 1, "sm %u heads %u n %u len %u",
						      sm, heads[h], n, len);
				}
			}
		}
	}
	cr_assert_gt(answered, 10000);
}
