/* SPDX-License-Identifier: AGPL-3.0-only AND MIT */
/*
 * flashmla — FlashMLA's dense decode schedule at
 * deepseek-ai/FlashMLA@9241ae3ef9bac614dd25e45e507e089f888280e0 over one
 * mixed batch. Where each piece comes from, what is fixed and what differs:
 * flashmla.h. The names are upstream's; every upstream int is an int32_t
 * here, computed only after the checks that keep it from overflowing.
 *
 * Copyright (c) 2025 DeepSeek (the upstream; MIT License).
 */
#include "flashmla.h"

#define FLASHMLA_INT32_MAX 2147483647

/* csrc/sm90/decode/dense/config.h, and dense_decode.h 103-104. */
enum {
	HEAD_DIM_K = 576,
	HEAD_DIM_V = 512,
	PAGE_BLOCK_SIZE = 64,
	BLOCK_SIZE_N = 64,
	FIXED_OVERHEAD_NUM_BLOCKS = 5,
	/* combine.cu 179-183: the switch's last case */
	MLA_MAX_NUM_SPLITS = 160,
};

/* cutlass::ceil_div(int a, int b), fast_math.h. Its a + b may pass
 * INT32_MAX where a + b - 1 does not (a GPU's int wraps and comes back):
 * summed in 64 bits, the same quotient without C's undefined overflow
 * (UBSan's find at the edge the sweep probes). */
static int32_t ceil_div(int32_t a, int32_t b)
{
	return (int32_t)(((int64_t)a + b - 1) / b);
}

static int32_t max_int(int32_t a, int32_t b)
{
	return a > b ? a : b;
}

/* combine.cu 165-185, MLA_NUM_SPLITS_SWITCH: the template's MAX_SPLITS
 * for num_sm_parts <= 160 (the caller has refused more). */
static uint32_t mla_num_splits_switch(int32_t num_splits)
{
	if (num_splits <= 32) {
		return 32;
	} else if (num_splits <= 64) {
		return 64;
	} else if (num_splits <= 96) {
		return 96;
	} else if (num_splits <= 128) {
		return 128;
	}
	return 160;
}

/*
 * get_decoding_sched_meta.cu 44-50, dense (topk == -1): the blocks a
 * request of cur_s_k tokens spans, first_token_idx being 0.
 */
static int32_t request_num_blocks(int32_t cur_s_k, int32_t block_size_n)
{
	int32_t first_token_idx = 0;
	int32_t last_token_idx = max_int(cur_s_k - 1, 0);
	int32_t cur_first_block_idx = first_token_idx / block_size_n;
	int32_t cur_last_block_idx = last_token_idx / block_size_n;

	return cur_last_block_idx - cur_first_block_idx + 1;
}

/*
 * get_decoding_sched_meta.cu 61-100, thread 0's walk: each of the
 * num_sm_parts parts takes payload blocks' worth of requests in order,
 * cutting a request where the payload runs out. Writes each request's
 * split count (num_splits_shared[i + 1] - num_splits_shared[i] upstream,
 * which is now_n_split_idx + 1 when it completes) to by_seq and returns
 * cum_num_splits (num_splits[batch_size]); -1 where upstream's closing
 * FLASH_DEVICE_ASSERT would trap (it cannot: flashmla.h).
 */
static int32_t schedule(const struct engine_batch *b, int32_t num_sm_parts, int32_t payload,
			uint32_t *by_seq)
{
	const int32_t batch_size = (int32_t)b->num_seqs;
	const int32_t fixed_overhead_num_blocks = FIXED_OVERHEAD_NUM_BLOCKS;
	int32_t now_req_idx = 0, now_block = 0, now_n_split_idx = 0, cum_num_splits = 0;

	for (int32_t i = 0; i < num_sm_parts; ++i) {
		int32_t remain_payload = payload;
		while (now_req_idx < batch_size) {
			int32_t num_blocks = request_num_blocks(
				(int32_t)b->seq_lens[now_req_idx], BLOCK_SIZE_N);
			int32_t now_remain_blocks = num_blocks - now_block;
			if (remain_payload >= now_remain_blocks + fixed_overhead_num_blocks) {
				cum_num_splits += now_n_split_idx + 1;
				by_seq[now_req_idx] = (uint32_t)(now_n_split_idx + 1);
				remain_payload -= now_remain_blocks + fixed_overhead_num_blocks;
				++now_req_idx;
				now_block = 0;
				now_n_split_idx = 0;
			} else {
				if (remain_payload - fixed_overhead_num_blocks > 0) {
					now_block += remain_payload - fixed_overhead_num_blocks;
					++now_n_split_idx;
					remain_payload = 0;
				}
				break;
			}
		}
	}
	if (!(now_req_idx == batch_size && now_block == 0 && now_n_split_idx == 0)) {
		return -1;
	}
	return cum_num_splits;
}

/* The batch's bounds (engine_batch) and dense_decode.h 68. */
static bool batch_refused(const struct engine_batch *b, struct engine_answer *a)
{
	if (b->num_seqs == 0) {
		engine_refuse(a, "the batch must hold at least one sequence "
				 "(FlashMLA: batch size must be positive)", "num_seqs");
		return true;
	}
	if (b->num_seqs > ENGINE_MAX_SEQS) {
		engine_refuse(a, "a batch holds at most 4096 sequences", "num_seqs");
		return true;
	}
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		if (b->seq_lens[i] == 0 || b->seq_lens[i] > ENGINE_MAX_SEQ_LEN) {
			engine_refuse(a, "every sequence length must be 1 to 2147483647 tokens",
				      "seq_lens");
			return true;
		}
	}
	return false;
}

/* The shape's checks, dense_decode.h 60-69, plus the int ranges. */
static bool shape_refused(const struct engine_shape *s, uint32_t head_dim_v, uint32_t seqlen_q,
			  struct engine_answer *a)
{
	struct engine_zero z;

	if (engine_zero_count(s, FLASHMLA_READS & ~(ENGINE_IN_NUM_SEQS | ENGINE_IN_SEQ_LEN), &z)) {
		engine_refuse(a, z.reason, z.input);
		return true;
	}
	if (s->num_splits != 0) {
		engine_refuse(a, "FlashMLA takes no split count (num_splits must be None): "
				 "give num_splits 0", "num_splits");
		return true;
	}
	/* 60 lets 512 through, but the SM90 kernel asserts d == 576 (1277) */
	if (s->head_dim != HEAD_DIM_K) {
		engine_refuse(a, "FlashMLA's dense decode runs head_dim 576 only (K: 512 of "
				 "latent plus 64 of RoPE)", "head_dim");
		return true;
	}
	if (head_dim_v != HEAD_DIM_V) {
		engine_refuse(a, "FlashMLA's dense decode runs head_dim_v 512 only", "head_dim_v");
		return true;
	}
	if (s->page_size != PAGE_BLOCK_SIZE) {
		engine_refuse(a, "FlashMLA's page_block_size must be 64", "page_size");
		return true;
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		engine_refuse(a, "num_kv_heads must divide num_q_heads", "num_q_heads");
		return true;
	}
	if (s->sm_count > FLASHMLA_INT32_MAX) {
		engine_refuse(a, "sm_count must be at most 2147483647 (an int upstream)",
			      "sm_count");
		return true;
	}
	if (s->num_q_heads > FLASHMLA_INT32_MAX) {
		engine_refuse(a, "num_q_heads must be at most 2147483647 (an int upstream)",
			      "num_q_heads");
		return true;
	}
	if (seqlen_q > FLASHMLA_INT32_MAX ||
	    (uint64_t)seqlen_q * s->num_q_heads > FLASHMLA_INT32_MAX) {
		engine_refuse(a, "seqlen_q * num_q_heads must be at most 2147483647 (an int "
				 "upstream): fewer query tokens or heads", "seqlen_q");
		return true;
	}
	return false;
}

struct engine_answer flashmla_launch_batch(const struct engine_shape *s,
					   const struct engine_batch *b,
					   const struct flashmla_options *o, uint32_t *by_seq)
{
	struct engine_answer a;
	const uint32_t head_dim_v = o && o->head_dim_v ? o->head_dim_v : HEAD_DIM_V;
	const uint32_t seqlen_q = o && o->seqlen_q ? o->seqlen_q : 1;

	engine_answer_init(&a);
	if (shape_refused(s, head_dim_v, seqlen_q, &a) || batch_refused(b, &a)) {
		return a;
	}

	/* dense_decode.h 55-78 */
	const int32_t batch_size = (int32_t)b->num_seqs;
	const int32_t seqlen_q_ori = (int32_t)seqlen_q;
	const int32_t num_heads_q = (int32_t)s->num_q_heads;
	const int32_t num_heads_k = (int32_t)s->num_kv_heads;
	const int32_t num_sms = (int32_t)s->sm_count;
	const int32_t num_q_heads_per_hk = num_heads_q / num_heads_k;
	const int32_t q_seq_per_hk = seqlen_q_ori * num_q_heads_per_hk;
	const int32_t num_sm_parts = max_int(
		num_sms / num_heads_k / ceil_div(seqlen_q_ori * num_heads_q / num_heads_k, 64), 1);
	engine_term(&a, "num_q_heads_per_hk", (uint64_t)num_q_heads_per_hk);
	engine_term(&a, "q_seq_per_hk", (uint64_t)q_seq_per_hk);
	engine_term(&a, "num_sm_parts", (uint64_t)num_sm_parts);

	/* get_decoding_sched_meta.cu 28-58: the int sum, checked in 64 bits */
	const int32_t block_size_n = BLOCK_SIZE_N;
	const int32_t fixed_overhead_num_blocks = FIXED_OVERHEAD_NUM_BLOCKS;
	int64_t total = 0;
	for (int32_t i = 0; i < batch_size; i++) {
		total += request_num_blocks((int32_t)b->seq_lens[i], block_size_n) +
			 fixed_overhead_num_blocks;
	}
	engine_term(&a, "block_size_n", (uint64_t)block_size_n);
	engine_term(&a, "fixed_overhead_num_blocks", (uint64_t)fixed_overhead_num_blocks);
	engine_term(&a, "total_num_blocks", (uint64_t)total);
	/* 62: ceil_div's a + b - 1, then + fixed_overhead_num_blocks, in int */
	if (total + num_sm_parts - 1 > FLASHMLA_INT32_MAX ||
	    (total + num_sm_parts - 1) / num_sm_parts + fixed_overhead_num_blocks >
		    FLASHMLA_INT32_MAX) {
		engine_refuse(&a, "the batch's blocks overflow FlashMLA's int total_num_blocks: "
				  "fewer or shorter sequences", "seq_lens");
		return a;
	}
	const int32_t total_num_blocks = (int32_t)total;
	const int32_t payload =
		ceil_div(total_num_blocks, num_sm_parts) + fixed_overhead_num_blocks;
	engine_term(&a, "payload", (uint64_t)payload);

	/* combine.cu 188-192: only after the MLA kernel, but a refusal either way */
	if (num_sm_parts > MLA_MAX_NUM_SPLITS) {
		engine_refuse(&a, "num_sm_parts (sm_count / num_kv_heads / ceil(seqlen_q * q heads "
				  "per KV head / 64)) above 160 has no FlashMLA combine kernel: "
				  "fewer SMs", "sm_count");
		return a;
	}

	const int32_t cum_num_splits = schedule(b, num_sm_parts, payload, by_seq);
	if (cum_num_splits < 0) {
		engine_refuse(&a, "FlashMLA's schedule left blocks unassigned (cannot happen)",
			      "seq_lens");
		return a;
	}
	engine_term(&a, "cum_num_splits", (uint64_t)cum_num_splits);

	/* dense_decode.h 164-166: [total_num_splits, num_heads, q_seq_per_hk] and
	 * [..., head_size_v] floats, num_heads being num_heads_k */
	const int32_t total_num_splits = batch_size + num_sm_parts;
	const uint64_t rows = (uint64_t)total_num_splits * (uint64_t)num_heads_k *
			      (uint64_t)q_seq_per_hk;
	engine_term(&a, "total_num_splits", (uint64_t)total_num_splits);
	engine_term(&a, "MAX_SPLITS", mla_num_splits_switch(num_sm_parts));

	uint32_t most = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		most = by_seq[i] > most ? by_seq[i] : most;
	}
	a.num_splits = most;
	a.num_splits_bound = (uint32_t)num_sm_parts;
	a.workspace_bytes = rows * 4u + rows * head_dim_v * 4u;
	return a;
}
