/* SPDX-License-Identifier: AGPL-3.0-only AND BSD-3-Clause */
/*
 * fa2 — FlashAttention-2's paged-decode split choice (see fa2.h for where
 * each line comes from, the branches fixed, the differences and upstream's
 * notice). The functions keep upstream's names, order and types: int stays
 * int, float stays float, the double 0.85 stays a double.
 */
#include <float.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "fa2.h"

/* The float waves must be rounded to float at every step, as on the host
 * that runs upstream's heuristic (x86-64 and aarch64 evaluate float as
 * float). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "fa2.c needs FLT_EVAL_METHOD 0: float arithmetic in float"
#endif

/*
 * ceil(x) for 0 < x < 2^31, exact: the integer part of a float that size
 * is a float, and so is the next integer. Upstream calls ceil from <cmath>;
 * see fa2.h for why either overload gives this float quotient below.
 */
static float ceil_positive(float x)
{
	float c = (float)(int)x;

	return c < x ? c + 1.0f : c;
}

static int ceildiv(int a, int b)
{
	return (a + b - 1) / b;
}

/* upstream's is_split_eligible lambda, which captures num_n_blocks */
static int is_split_eligible(int num_n_blocks, int num_splits)
{
	return num_splits == 1 ||
	       ceildiv(num_n_blocks, num_splits) != ceildiv(num_n_blocks, num_splits - 1);
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/*
 * flash_api.cpp 275-315, line for line:
 *
 * Find the number of splits that maximizes the occupancy. For example, if we have
 * batch * n_heads = 48 and we have 108 SMs, having 2 splits (efficiency = 0.89) is
 * better than having 3 splits (efficiency = 0.67). However, we also don't want too many
 * splits as that would incur more HBM reads/writes.
 * So we find the best efficiency, then find the smallest number of splits that gets 85%
 * of the best efficiency.
 *
 * The one caller passes max_splits 128, so efficiency[] (a std::vector
 * reserved to max_splits upstream) holds every entry. fa2_launch bounds
 * num_SMs * 128 by INT_MAX, so batch_nheads_mblocks * num_splits, formed only
 * when batch_nheads_mblocks < 0.8f * num_SMs, stays an int as upstream's.
 */
static int num_splits_heuristic(int batch_nheads_mblocks, int num_SMs, int num_n_blocks,
				int max_splits)
{
	float efficiency[128];

	// If we have enough to almost fill the SMs, then just use 1 split
	if (batch_nheads_mblocks >= 0.8f * num_SMs) {
		return 1;
	}
	max_splits = min_int(max_splits, min_int(num_SMs, num_n_blocks)); /* std::min({...}) */
	float max_efficiency = 0.f;
	// Some splits are not eligible. For example, if we have 64 blocks and choose 11 splits,
	// we'll have 6 * 10 + 4 blocks. If we choose 12 splits, we'll have 6 * 11 + (-2) blocks
	// (i.e. it's 11 splits anyway).
	// So we check if the number of blocks per split is the same as the previous num_splits.
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		if (!is_split_eligible(num_n_blocks, num_splits)) {
			efficiency[num_splits - 1] = 0.f; /* push_back(0.f) */
		} else {
			float n_waves = (float)(batch_nheads_mblocks * num_splits) / num_SMs;
			float eff = n_waves / ceil_positive(n_waves);
			if (eff > max_efficiency) {
				max_efficiency = eff;
			}
			efficiency[num_splits - 1] = eff; /* push_back(eff) */
		}
	}
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		if (!is_split_eligible(num_n_blocks, num_splits)) {
			continue;
		}
		/* a double compare: the float efficiency and max_efficiency are
		 * widened to double and 0.85 is the double literal. At num_SMs
		 * 216, 9 row blocks, 97 KV blocks, 17 splits' 153/216 and 0.85 of
		 * 20 splits' 180/216 are equal on paper: this double compare
		 * finds the float 153/216 below and answers 20, a float 0.85f
		 * product rounds onto it and would answer 17. */
		if (efficiency[num_splits - 1] >= 0.85 * max_efficiency) {
			return num_splits;
		}
	}
	return 1;
}

/* What set_params_splitkv leaves in params and allocates. */
struct splitkv {
	int block_n;
	int num_n_blocks;
	int num_m_blocks;
	int num_splits; /* params.num_splits */
	uint64_t softmax_lse_accum_bytes;
	uint64_t out_accum_bytes;
};

/*
 * flash_api.cpp 317-347. p_dropout is 0 on this path (mha_fwd_kvcache
 * passes 0.f), so its `if (p_dropout == 0.0f)` always holds and the
 * parameter is gone. The tensors become their sizes in bytes (float32, 4
 * bytes an element). Returns 0, or -1 where upstream's TORCH_CHECK
 * (num_splits <= 128) throws.
 */
static int set_params_splitkv(struct splitkv *params, const int batch_size, const int num_heads,
			      const int head_size, const int max_seqlen_k, const int max_seqlen_q,
			      const int head_size_rounded, const int num_splits, const int num_sm)
{
	// This needs to match with run_mha_fwd_splitkv_dispatch
	const int block_n = head_size <= 64 ? 256 : (head_size <= 128 ? 128 : 64);
	const int num_n_blocks = (max_seqlen_k + block_n - 1) / block_n;
	// Technically kBlockM = 64 only for the splitKV kernels, not the standard kernel.
	// In any case we don't expect seqlen_q to be larger than 64 for inference.
	const int num_m_blocks = (max_seqlen_q + 64 - 1) / 64;

	params->block_n = block_n;
	params->num_n_blocks = num_n_blocks;
	params->num_m_blocks = num_m_blocks;
	params->num_splits = num_splits;
	params->softmax_lse_accum_bytes = 0;
	params->out_accum_bytes = 0;

	if (num_splits < 1) {
		// We multiply number of SMs by 2 to hard-code the fact that we're using 128 threads per block.
		params->num_splits = num_splits_heuristic(batch_size * num_heads * num_m_blocks, num_sm * 2,
							  num_n_blocks, 128);
	}
	if (params->num_splits > 1) {
		/* softmax_lse_accum {num_splits, batch_size, num_heads, max_seqlen_q},
		 * out_accum {..., head_size_rounded}, both at::kFloat. Within
		 * 2^54 for num_splits <= 128; a larger (refused) num_splits may
		 * wrap these unsigned sizes, which are then never read. */
		uint64_t rows = (uint64_t)params->num_splits * (uint64_t)batch_size * (uint64_t)num_heads *
				(uint64_t)max_seqlen_q;
		params->softmax_lse_accum_bytes = rows * 4u;
		params->out_accum_bytes = rows * (uint64_t)head_size_rounded * 4u;
	}
	if (!(params->num_splits <= 128)) {
		return -1; /* TORCH_CHECK: "num_splits > 128 not supported" */
	}
	return 0;
}

static int round_multiple(int x, int m)
{
	return (x + m - 1) / m * m;
}

/*
 * The input that takes one of upstream's int intermediates past INT_MAX,
 * or NULL (a deliberate difference: upstream would wrap, this refuses).
 * Each bound covers every int formed from that input:
 *  - sm_count: num_sm * 2, and in the heuristic batch_nheads_mblocks *
 *    num_splits < num_SMs * 128;
 *  - num_seqs * num_q_heads: batch_size * num_heads * num_m_blocks, which is
 *    at most that with or without the swap, and seqlen_q + 63;
 *  - seq_len: seqlen_k = max_num_blocks_per_seq * page_block_size
 *    <= seq_len + page_size - 1, plus block_n - 1 <= 255.
 */
static const char *beyond_int(const struct engine_shape *s, const char *seq_len_input)
{
	if (s->sm_count > INT_MAX / 2 / 128) {
		return "sm_count";
	}
	if (s->num_q_heads > INT_MAX - 63) {
		return "num_q_heads";
	}
	if (s->num_kv_heads > INT_MAX) {
		return "num_kv_heads";
	}
	if ((uint64_t)s->num_seqs * s->num_q_heads > INT_MAX) {
		return "num_seqs";
	}
	if (s->page_size > INT_MAX || (uint64_t)s->seq_len + s->page_size - 1 + 255 > INT_MAX) {
		return seq_len_input;
	}
	return NULL;
}

/* mha_fwd_kvcache's part, answering into *a (an OK answer with no terms on
 * entry); seq_len is the longest sequence's, and a refusal for it names
 * seq_len_input ("seq_len", or a mixed batch's "seq_lens"). */
static void launch(struct engine_answer *a, const struct engine_shape *s, const char *seq_len_input)
{
	struct engine_zero zero;

	if (engine_zero_count(s, FA2_READS, &zero)) {
		engine_refuse(a, zero.reason, zero.input);
		return;
	}
	/* upstream's num_splits is an int: pybind11 refuses a larger Python int
	 * before mha_fwd_kvcache runs (129..INT_MAX are refused at 343) */
	if (s->num_splits > INT_MAX) {
		engine_refuse(a, "num_splits > 128 not supported (FlashAttention-2 takes num_splits 0..128)",
			      "num_splits");
		return;
	}
	const char *too_large = beyond_int(s, seq_len_input);
	if (too_large != NULL) {
		engine_refuse(a, "the shape is beyond FlashAttention-2's int arithmetic", too_large);
		return;
	}

	/* 1297-1300: q is (batch_size, seqlen_q = 1, num_heads, head_size_og) */
	const int batch_size = (int)s->num_seqs;
	int seqlen_q = 1;
	int num_heads = (int)s->num_q_heads;
	const int head_size_og = (int)s->head_dim;

	/* 1302-1306. The block table is exactly as wide as seq_len, the
	 * longest sequence, needs (the narrowest the capacity check at 1443,
	 * on seqlens_k.max(), accepts; fa2.h says why this is a choice):
	 * max_seqlen_k = seq_len <= max_num_blocks_per_seq * page_block_size
	 * holds by construction. */
	const int page_block_size = (int)s->page_size;
	const int max_num_blocks_per_seq = (int)(((uint64_t)s->seq_len + s->page_size - 1) / s->page_size);
	if (page_block_size % 256 != 0) {
		engine_refuse(a, "Paged KV cache block size must be divisible by 256 "
			      "(page_size 256, 512, 768, ...)",
			      "page_size");
		return;
	}
	const int seqlen_k = max_num_blocks_per_seq * page_block_size;
	const int num_heads_k = (int)s->num_kv_heads;
	/* 1309 is the num_seqs check above */
	if (head_size_og > 256) {
		engine_refuse(a, "FlashAttention forward only supports head dimension at most 256", "head_dim");
		return;
	}
	if (num_heads % num_heads_k != 0) {
		engine_refuse(a, "Number of heads in key/value must divide number of heads in query",
			      "num_kv_heads");
		return;
	}

	/* 1313-1315: seqlen_q == 1 and no alibi, so is_causal = false and
	 * window_size_right stays -1; window_size_left is -1 (no window) */
	// Faster to transpose q from (b, 1, (nheads_kv ngroups), d)
	// to (b, ngroups, nheads_kv, d) in this case
	const int seqlenq_ngroups_swapped =
		seqlen_q == 1 && num_heads > num_heads_k && head_size_og % 8 == 0;
	const int ngroups = num_heads / num_heads_k; /* upstream forms it inside the if */
	if (seqlenq_ngroups_swapped) {
		seqlen_q = ngroups;
		num_heads = num_heads_k;
	}

	/* 1363-1365 */
	const int head_size = round_multiple(head_size_og, 8);
	const int head_size_rounded = round_multiple(head_size, head_size <= 128 ? 32 : 64);

	/* 1498-1500 */
	struct splitkv params;
	if (set_params_splitkv(&params, batch_size, num_heads, head_size, seqlen_k, seqlen_q,
			       head_size_rounded, (int)s->num_splits, (int)s->sm_count) != 0) {
		/* the caller's num_splits: the heuristic answers at most 128 */
		engine_refuse(a, "num_splits > 128 not supported (FlashAttention-2 takes num_splits 0..128)",
			      "num_splits");
		return;
	}

	a->num_splits = (uint32_t)params.num_splits;
	a->num_splits_bound = a->num_splits;
	a->workspace_bytes = params.softmax_lse_accum_bytes + params.out_accum_bytes;
	engine_term(a, "seqlenq_ngroups_swapped", (uint64_t)seqlenq_ngroups_swapped);
	engine_term(a, "ngroups", (uint64_t)ngroups);
	engine_term(a, "seqlen_q", (uint64_t)seqlen_q);
	engine_term(a, "num_heads", (uint64_t)num_heads);
	engine_term(a, "head_size", (uint64_t)head_size);
	engine_term(a, "head_size_rounded", (uint64_t)head_size_rounded);
	engine_term(a, "max_num_blocks_per_seq", (uint64_t)max_num_blocks_per_seq);
	engine_term(a, "seqlen_k", (uint64_t)seqlen_k);
	engine_term(a, "block_n", (uint64_t)params.block_n);
	engine_term(a, "num_n_blocks", (uint64_t)params.num_n_blocks);
	engine_term(a, "num_m_blocks", (uint64_t)params.num_m_blocks);
	engine_term(a, "num_SMs", (uint64_t)s->sm_count * 2u);
	engine_term(a, "batch_nheads_mblocks",
	     (uint64_t)batch_size * (uint64_t)num_heads * (uint64_t)params.num_m_blocks);
	engine_term(a, "softmax_lse_accum_bytes", params.softmax_lse_accum_bytes);
	engine_term(a, "out_accum_bytes", params.out_accum_bytes);
}

struct engine_answer fa2_launch(const struct engine_shape *s)
{
	/* Filled member by member, the terms only up to n_terms, and returned
	 * from one place: an initializer or a second return makes compilers
	 * (clang -O2) call memset and memcpy, which the pure core may not. */
	struct engine_answer a;

	engine_answer_init(&a);
	launch(&a, s, "seq_len");
	return a;
}

/* The shape of *b: *s with b's num_seqs and, as seq_len, its longest
 * length, which sizes the block table (fa2.h); the batch's own refusals
 * first, in engine_shape's order, named after seq_lens. Returns false
 * with *a refused when the batch is. */
static bool batch_shape(const struct engine_shape *s, const struct engine_batch *b,
			struct engine_shape *out, struct engine_answer *a)
{
	const unsigned before_seq_len = ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |
					ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM;
	struct engine_zero zero;
	uint32_t longest = 0;
	bool a_zero = false;

	/* Member by member, as fa2_launch fills its answer: a struct copy is
	 * a memcpy call for clang -O0, which the pure core may not make; one
	 * line a row of engine_inputs.h, so a new row is copied too. */
#define FA2_COPY_ROW(x, e, name, kind, from, bounds, zero, about) out->name = s->name;
	ENGINE_INPUTS(FA2_COPY_ROW, ~)
#undef FA2_COPY_ROW
	out->num_seqs = b->num_seqs;
	out->seq_len = 0; /* below: the longest length */
	if (engine_zero_count(out, FA2_READS & before_seq_len, &zero)) {
		engine_refuse(a, zero.reason, zero.input);
		return false;
	}
	if (b->num_seqs > ENGINE_MAX_SEQS) {
		engine_refuse(a, "a mixed batch holds at most 4096 sequences; give fewer", "num_seqs");
		return false;
	}
	if (b->seq_lens == NULL) {
		engine_refuse(a, "a mixed batch needs its seq_lens", "seq_lens");
		return false;
	}
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		if (b->seq_lens[i] == 0) {
			a_zero = true;
		}
		if (b->seq_lens[i] > longest) {
			longest = b->seq_lens[i];
		}
	}
	if (a_zero) {
		engine_refuse(a, "every one of seq_lens must be at least 1", "seq_lens");
		return false;
	}
	if (longest > ENGINE_MAX_SEQ_LEN) {
		engine_refuse(a, "a sequence of seq_lens is longer than 2^31 - 1 tokens, "
			      "beyond FlashAttention-2's int lengths",
			      "seq_lens");
		return false;
	}
	out->seq_len = longest;
	return true;
}

struct engine_answer fa2_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				      uint32_t *by_seq)
{
	/* As fa2_launch: one answer, filled in place, one return. */
	struct engine_answer a;
	struct engine_shape batch;

	engine_answer_init(&a);
	if (batch_shape(s, b, &batch, &a)) {
		launch(&a, &batch, "seq_lens");
	}
	/* One count for the whole launch: the grid has num_splits split
	 * blocks for every sequence (fa2.h). */
	for (uint32_t i = 0; a.status == ENGINE_OK && by_seq != NULL && i < b->num_seqs; i++) {
		by_seq[i] = a.num_splits;
	}
	return a;
}
