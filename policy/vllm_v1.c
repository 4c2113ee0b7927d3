/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 AND BSD-3-Clause */
/*
 * vllm_v1 — vLLM V1's FLASH_ATTN decode step, ported. Where each piece
 * came from, the branches fixed and every deliberate difference:
 * vllm_v1.h. "flash_attn.py" lines are vllm-project/vllm at 81be2e09;
 * "hopper/" and "csrc/" lines are vllm-project/flash-attention at f3e1a4f7.
 */
#include "vllm_v1.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* hopper/flash_api.cpp 39 */
#define PREPARE_VARLEN_MAX_BATCHES_1CTA 992
/* vllm/config/attention.py 46: flash_attn_max_num_splits_for_cuda_graph */
#define MAX_NUM_SPLITS_FOR_CUDA_GRAPH 32
/* vllm/config/vllm.py: min(max_num_seqs * 2, 512) at its default */
#define DEFAULT_MAX_CAPTURE_SIZE 512u

static bool fits_int(int64_t v)
{
	return v <= INT_MAX;
}

/* ceilf(x) for finite x >= 0, by hand (no libm), as fa3.c's. */
static float ceil_nonneg(float x)
{
	if (x >= 8388608.0f) {
		return x;
	}
	float t = (float)(int32_t)x;
	return t < x ? t + 1.0f : t;
}

/* The float n ulps from x (x > 0, finite), for the near-whole test. */
static float ulp_step(float x, int n)
{
	union {
		float f;
		uint32_t u;
	} v;
	v.f = x;
	v.u = (uint32_t)((int32_t)v.u + n);
	return v.f;
}

/* ---- FA3, hopper/ of the fork ---------------------------------------- */

struct tile_size {
	int kBlockM;
	int kBlockN;
};

/* hopper/tile_size.h 10-52, tile_size_fwd_sm90, element_size == 2 (bf16):
 * only {kBlockM, kBlockN}. */
static struct tile_size tile_size_fwd_sm90(int headdim, int headdim_v, bool is_causal,
					   bool is_local, bool paged_kv_non_TMA, bool use_one_mma_wg)
{
	if (headdim <= 64) {
		if (headdim_v == 512) {
			return (struct tile_size){64, 64};
		} else if (headdim_v == 256) {
			return (struct tile_size){128, 96};
		} else {
			if (use_one_mma_wg) {
				return (struct tile_size){64, 192};
			} else {
				return (struct tile_size){
					192, is_causal ? 128 : is_local || paged_kv_non_TMA ? 160 : 192};
			}
		}
	} else if (headdim <= 96) {
		return (struct tile_size){192, is_local || paged_kv_non_TMA ? 128 : 144};
	} else if (headdim <= 128) {
		if (use_one_mma_wg) {
			return (struct tile_size){
				64, is_causal || is_local || paged_kv_non_TMA ? 128 : 176};
		} else {
			return (struct tile_size){
				128, is_causal || is_local || paged_kv_non_TMA ? 128 : 160};
		}
	} else if (headdim <= 192) {
		return (struct tile_size){
			128, paged_kv_non_TMA || is_local ? 96 : (headdim_v <= 128 ? 128 : 96)};
	} else {
		return (struct tile_size){128, is_local ? 64 : 80};
	}
}

/* hopper/flash_api.cpp 554-571 (every head size built) */
static int round_up_headdim(int head_size)
{
	if (head_size <= 64) {
		return 64;
	}
	if (head_size <= 96) {
		return 96;
	}
	if (head_size <= 128) {
		return 128;
	}
	if (head_size <= 192) {
		return 192;
	}
	return 256;
}

/* hopper/heuristics.h num_splits_heuristic. Returns 0 where an int it
 * forms would overflow (upstream never returns 0). */
static int fa3_num_splits_heuristic(int total_mblocks, int num_SMs, int num_n_blocks,
				    int num_m_blocks, int size_one_kv_head, bool is_causal_or_local,
				    int max_splits)
{
	if (total_mblocks >= 0.8f * num_SMs) {
		int const size_l2 = 50 * 1024 * 1024;
		if (size_one_kv_head > size_l2 && !fits_int((int64_t)num_SMs * 2)) {
			return 0;
		}
		if (size_one_kv_head > size_l2 && num_m_blocks >= num_SMs * 2 && !is_causal_or_local) {
			if (!fits_int((int64_t)size_one_kv_head + size_l2 - 1)) {
				return 0;
			}
			int const l2_splits = (size_one_kv_head + size_l2 - 1) / size_l2;
			return l2_splits < max_splits ? l2_splits : max_splits;
		} else {
			return 1;
		}
	}
	if (num_n_blocks <= 4) {
		return 1;
	}
	if (num_SMs < max_splits) {
		max_splits = num_SMs;
	}
	if (num_n_blocks < max_splits) {
		max_splits = num_n_blocks;
	}
	if (!fits_int((int64_t)total_mblocks * max_splits)) {
		return 0;
	}
	float max_efficiency = 0.f;
	float efficiency[128];
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		float n_waves = (float)(total_mblocks * num_splits) / num_SMs;
		float eff = n_waves / ceil_nonneg(n_waves);
		if (eff > max_efficiency) {
			max_efficiency = eff;
		}
		efficiency[num_splits - 1] = eff;
	}
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		/* 0.85 is a double: the compare is in double. */
		if (efficiency[num_splits - 1] >= 0.85 * max_efficiency) {
			return num_splits;
		}
	}
	return 1;
}

/* The batch, read once: its size, longest length. */
struct batch_view {
	const uint32_t *lens;
	int n;          /* sequences given */
	int max_len;    /* the longest */
};

static void fa3(struct engine_answer *a, const struct engine_shape *s,
		const struct batch_view *bv, int num_tokens_padded, int max_num_splits,
		uint32_t *by_seq)
{
	int const h = (int)s->num_q_heads, h_k = (int)s->num_kv_heads;
	int const d = (int)s->head_dim, dv = d;
	int const d_rounded = round_up_headdim(d), dv_rounded = d_rounded;
	int const num_sm = (int)s->sm_count;
	int const page_size = (int)s->page_size;
	int const b = num_tokens_padded; /* one query token each, padded */
	int const seqlen_q = 1;          /* max_seqlen_q = max_query_len */
	int const seqlen_k = bv->max_len;

	/* flash_api.cpp 641-646 (and mha_fwd 868-873): a query of one token,
	 * no window: causal stays only for 64 < d <= 128 with a page table. */
	bool is_causal = true;
	if (d <= 64 || d > 128) {
		is_causal = false;
	}
	bool const is_local = false;
	engine_term(a, "is_causal", is_causal);

	/* heuristics.h use_one_mma_wg: arch >= 90 (sm90 here) */
	bool const one_wg = (d == 128 || d == 64) && !is_local && seqlen_q * (h / h_k) <= 64;
	engine_term(a, "use_one_mma_wg", one_wg);

	/* get_pagedkv_tma (464-474): page table, no leftpad, no new KV */
	struct tile_size t = tile_size_fwd_sm90(d_rounded, dv_rounded, is_causal, is_local, false,
						one_wg);
	bool const pagedkv_tma = page_size % t.kBlockN == 0 && seqlen_q * (h / h_k) > t.kBlockM;
	engine_term(a, "pagedkv_tma", pagedkv_tma);

	/* The kernel's tile, as get_num_splits and the prepare call take it. */
	t = tile_size_fwd_sm90(d_rounded, dv_rounded, is_causal, is_local, !pagedkv_tma, one_wg);
	engine_term(a, "kBlockM", (uint64_t)t.kBlockM);
	engine_term(a, "kBlockN", (uint64_t)t.kBlockN);

	/* The prepare kernel forms seqlen + kBlockN - 1 for every sequence
	 * and seqlen_q * qhead_per_khead + kBlockM - 1, in int. */
	if (!fits_int((int64_t)seqlen_k + t.kBlockN - 1)) {
		engine_refuse(a, "seq_lens beyond FlashAttention-3's int arithmetic "
				 "(a length + kBlockN - 1 past 2^31)", "seq_lens");
		return;
	}
	if (!fits_int((int64_t)seqlen_q * ((h + h_k - 1) / h_k) + t.kBlockM - 1)) {
		engine_refuse(a, "num_q_heads / num_kv_heads beyond FlashAttention-3's int "
				 "arithmetic", "num_q_heads");
		return;
	}

	int num_splits = max_num_splits;
	if (num_splits <= 0) {
		/* get_num_splits (498-533), varlen, num_splits_dynamic_ptr set */
		int const seqlen_q_packgqa = seqlen_q * (h / h_k);
		int const num_n_blocks = (seqlen_k + t.kBlockN - 1) / t.kBlockN;
		int const num_m_blocks = (seqlen_q_packgqa + t.kBlockM - 1) / t.kBlockM;
		int64_t const one_head = (int64_t)seqlen_k * (d + dv) * 2;
		if (!fits_int(one_head) || !fits_int((int64_t)h_k * num_m_blocks)) {
			engine_refuse(a, "seq_lens beyond FlashAttention-3's int arithmetic "
					 "(seqlen_k * (d + dv) * 2 past 2^31)", "seq_lens");
			return;
		}
		int const total_mblocks = 1 * h_k * num_m_blocks;
		num_splits = fa3_num_splits_heuristic(total_mblocks, num_sm, num_n_blocks,
						      num_m_blocks, (int)one_head, is_causal || is_local,
						      128);
		if (num_splits == 0) {
			engine_refuse(a, "shape beyond FlashAttention-3's int arithmetic",
				      "seq_lens");
			return;
		}
	}

	/* get_pack_gqa (476-496), FLASHATTENTION_DISABLE_PACKGQA unset; then
	 * |= num_splits > 1 */
	bool pack_gqa;
	if (!pagedkv_tma || num_splits > 1) {
		pack_gqa = true;
	} else if (h == h_k) {
		pack_gqa = false;
	} else {
		/* should_pack_gqa(varlen_q = cu_seqlens_q given) is true */
		pack_gqa = true;
	}
	pack_gqa = pack_gqa || num_splits > 1;

	/* mha_fwd 1070: a batch past one CTA of the prepare kernel runs
	 * one split. */
	if (b > PREPARE_VARLEN_MAX_BATCHES_1CTA) {
		num_splits = 1;
	}
	engine_term(a, "params.num_splits", (uint64_t)num_splits);
	engine_term(a, "pack_gqa", pack_gqa);

	/* prepare_varlen_num_blocks: num_m_blocks from cu_seqlens_q (1 token),
	 * packed; num_head = h_k when packed. Padded sequences: 0 KV blocks. */
	int const qhead_per_khead = (h + h_k - 1) / h_k;
	int const num_head = !pack_gqa ? h : h_k;
	int const num_m_blocks = (seqlen_q * (pack_gqa ? qhead_per_khead : 1) + t.kBlockM - 1) /
				 t.kBlockM;
	engine_term(a, "num_m_blocks", (uint64_t)num_m_blocks);
	int const num_ctas = (b + 31 * 32 - 1) / (31 * 32);

	int largest = 1;
	if (num_ctas > 1 || num_splits == 1) {
		for (int i = 0; by_seq && i < bv->n; i++) {
			by_seq[i] = 1;
		}
	} else {
		int64_t total = 0;
		for (int i = 0; i < bv->n; i++) {
			int const n_blocks = ((int)bv->lens[i] + t.kBlockN - 1) / t.kBlockN;
			total += (int64_t)num_m_blocks * n_blocks;
		}
		if (!fits_int(total)) {
			engine_refuse(a, "seq_lens beyond the prepare kernel's int sum of blocks",
				      "seq_lens");
			return;
		}
		int const total_blocks = (int)total;
		float const quotient = (float)total_blocks * 1.1f * (float)num_head / (float)num_sm;
		float const per_sm = ceil_nonneg(quotient);
		if (per_sm >= 2147483648.0f) {
			engine_refuse(a, "seq_lens beyond the prepare kernel's int blocks_per_sm",
				      "seq_lens");
			return;
		}
		int const blocks_per_sm = (int)per_sm;
		engine_term(a, "total_blocks", (uint64_t)total_blocks);
		engine_term(a, "blocks_per_sm", (uint64_t)blocks_per_sm);
		engine_term(a, "blocks_per_sm_near_whole",
			    ceil_nonneg(ulp_step(quotient, -2)) != ceil_nonneg(ulp_step(quotient, 2)));
		for (int i = 0; i < bv->n; i++) {
			int const n_blocks = ((int)bv->lens[i] + t.kBlockN - 1) / t.kBlockN;
			if (!fits_int((int64_t)n_blocks + blocks_per_sm - 1)) {
				engine_refuse(a, "seq_lens beyond the prepare kernel's int arithmetic",
					      "seq_lens");
				return;
			}
			int const wanted = (n_blocks + blocks_per_sm - 1) / blocks_per_sm;
			int split = wanted < num_splits ? wanted : num_splits;
			if (split < 1) {
				split = 1;
			}
			if (split > largest) {
				largest = split;
			}
			if (by_seq) {
				by_seq[i] = (uint32_t)split;
			}
		}
	}
	a->num_splits = (uint32_t)largest;
	a->num_splits_bound = (uint32_t)num_splits;
	if (num_splits > 1) {
		/* mha_fwd 1180-1192, varlen q: out_accum {num_splits, h, total_q,
		 * dv} + softmax_lse_accum {num_splits, h, total_q}, float32 */
		uint64_t const rows = (uint64_t)num_splits * (uint64_t)h * (uint64_t)b;
		a->workspace_bytes = rows * (uint64_t)dv * 4u + rows * 4u;
	}
}

/* ---- FA2, csrc/flash_attn/flash_api.cpp of the fork ------------------- */

static int ceildiv(int a, int b)
{
	return (a + b - 1) / b;
}

static bool is_split_eligible(int num_n_blocks, int num_splits)
{
	return num_splits == 1 ||
	       ceildiv(num_n_blocks, num_splits) != ceildiv(num_n_blocks, num_splits - 1);
}

/* csrc/flash_attn/flash_api.cpp 307-341. Returns 0 (upstream never does)
 * where batch_nheads_mblocks * num_splits would overflow its int. */
static int fa2_num_splits_heuristic(int batch_nheads_mblocks, int num_SMs, int num_n_blocks,
				    int max_splits)
{
	if (batch_nheads_mblocks >= 0.8f * num_SMs) {
		return 1;
	}
	if (num_SMs < max_splits) {
		max_splits = num_SMs;
	}
	if (num_n_blocks < max_splits) {
		max_splits = num_n_blocks;
	}
	float max_efficiency = 0.f;
	float efficiency[128];
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		if (is_split_eligible(num_n_blocks, num_splits) &&
		    !fits_int((int64_t)batch_nheads_mblocks * num_splits)) {
			return 0;
		}
		if (!is_split_eligible(num_n_blocks, num_splits)) {
			efficiency[num_splits - 1] = 0.f;
		} else {
			float n_waves = (float)(batch_nheads_mblocks * num_splits) / num_SMs;
			float eff = n_waves / ceil_nonneg(n_waves);
			if (eff > max_efficiency) {
				max_efficiency = eff;
			}
			efficiency[num_splits - 1] = eff;
		}
	}
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		if (!is_split_eligible(num_n_blocks, num_splits)) {
			continue;
		}
		if (efficiency[num_splits - 1] >= 0.85 * max_efficiency) {
			return num_splits;
		}
	}
	return 1;
}

static void fa2(struct engine_answer *a, const struct engine_shape *s, const struct batch_view *bv,
		int batch_size, int max_seqlen_k, int num_splits_arg, uint32_t *by_seq)
{
	int const h = (int)s->num_q_heads, h_k = (int)s->num_kv_heads;
	int const head_size = (int)s->head_dim;
	/* mha_varlen_fwd 639-652: max_seqlen_q == 1, no ALiBi, window -1/-1,
	 * dropout 0; head_size % 8 == 0 was checked. */
	bool const swapped = h > h_k;
	engine_term(a, "seqlenq_ngroups_swapped", swapped);
	engine_term(a, "batch_size", (uint64_t)batch_size);
	int num_splits = 1;
	if (swapped) {
		int const max_seqlen_q = h / h_k;
		int const num_heads = h_k;
		int const block_n = head_size <= 64 ? 256 : (head_size <= 128 ? 128 : 64);
		if (!fits_int((int64_t)max_seqlen_k + block_n - 1)) {
			engine_refuse(a, "seq_lens beyond FlashAttention-2's int arithmetic "
					 "(max_seqlen_k + block_n - 1 past 2^31)", "seq_lens");
			return;
		}
		int const num_n_blocks = (max_seqlen_k + block_n - 1) / block_n;
		int const num_m_blocks = (max_seqlen_q + 64 - 1) / 64;
		engine_term(a, "block_n", (uint64_t)block_n);
		engine_term(a, "num_n_blocks", (uint64_t)num_n_blocks);
		engine_term(a, "num_m_blocks", (uint64_t)num_m_blocks);
		num_splits = num_splits_arg;
		if (num_splits < 1) {
			int64_t const bnm = (int64_t)batch_size * num_heads * num_m_blocks;
			if (!fits_int(bnm) || !fits_int((int64_t)s->sm_count * 2)) {
				engine_refuse(a, "shape beyond FlashAttention-2's int arithmetic",
					      "num_kv_heads");
				return;
			}
			num_splits = fa2_num_splits_heuristic((int)bnm, (int)s->sm_count * 2,
							      num_n_blocks, 128);
			if (num_splits == 0) {
				engine_refuse(a, "shape beyond FlashAttention-2's int arithmetic",
					      "num_kv_heads");
				return;
			}
		}
		if (num_splits > 1) {
			int const head_size_rounded =
				(head_size + (head_size <= 128 ? 32 : 64) - 1) /
				(head_size <= 128 ? 32 : 64) * (head_size <= 128 ? 32 : 64);
			uint64_t const rows = (uint64_t)num_splits * (uint64_t)batch_size *
					      (uint64_t)num_heads * (uint64_t)max_seqlen_q;
			a->workspace_bytes = rows * 4u + rows * (uint64_t)head_size_rounded * 4u;
		}
	}
	/* else the paged branch: params.num_splits = num_splits (0 or 1), one
	 * split, no accumulators (762-765). */
	engine_term(a, "params.num_splits", (uint64_t)num_splits);
	a->num_splits = (uint32_t)num_splits;
	a->num_splits_bound = (uint32_t)num_splits;
	for (int i = 0; by_seq && i < bv->n; i++) {
		by_seq[i] = (uint32_t)num_splits;
	}
}

/* ---- vLLM ------------------------------------------------------------- */

/* vllm/config/vllm.py _set_cudagraph_sizes: the largest capture size no
 * more than max (>= 1), and the smallest at least n (0 when none). */
uint32_t vllm_v1_largest_capture_size(uint32_t max)
{
	if (max >= 256) {
		return 256 + (max - 256) / 16 * 16;
	}
	if (max >= 8) {
		return max / 8 * 8;
	}
	return max >= 4 ? 4 : max >= 2 ? 2 : 1;
}

static uint32_t padded_capture_size(uint32_t n)
{
	if (n <= 2) {
		return n;
	}
	if (n <= 4) {
		return 4;
	}
	if (n <= 256) {
		return (n + 7) / 8 * 8;
	}
	return 256 + (n - 256 + 15) / 16 * 16;
}

struct engine_answer vllm_v1_launch_batch(const struct engine_shape *s,
					  const struct engine_batch *b,
					  const struct vllm_v1_options *o, uint32_t *by_seq)
{
	struct engine_answer a;
	struct engine_zero z;

	engine_answer_init(&a);
	if (engine_zero_count(s, VLLM_V1_READS & ~(unsigned)(ENGINE_IN_NUM_SEQS | ENGINE_IN_SEQ_LEN),
			      &z)) {
		return engine_refused(z.reason, z.input);
	}
	if (b == NULL || b->num_seqs == 0) {
		return engine_refused("num_seqs must be at least 1", "num_seqs");
	}
	if (b->num_seqs > ENGINE_MAX_SEQS) {
		return engine_refused("a batch holds at most 4096 sequences", "num_seqs");
	}
	if (b->seq_lens == NULL) {
		return engine_refused("seq_lens must be given", "seq_lens");
	}
	uint32_t max_len = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		uint32_t const l = b->seq_lens[i];
		if (l == 0) {
			return engine_refused("every seq_lens entry must be at least 1", "seq_lens");
		}
		if (l > ENGINE_MAX_SEQ_LEN) {
			return engine_refused("a seq_lens entry is beyond int32", "seq_lens");
		}
		if (l > max_len) {
			max_len = l;
		}
	}
	if (s->num_splits != 0) {
		return engine_refused("vLLM takes no num_splits argument: its max_num_splits "
				      "comes from its config; give 0",
				      "num_splits");
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		return engine_refused("num_q_heads must be a multiple of num_kv_heads",
				      "num_kv_heads");
	}
	if (s->head_dim % 8 != 0 || s->head_dim > 256) {
		return engine_refused("FLASH_ATTN supports head sizes that are multiples of 8 "
				      "up to 256",
				      "head_dim");
	}
	if (s->page_size % 16 != 0) {
		return engine_refused("FLASH_ATTN needs a block size that is a multiple of 16",
				      "page_size");
	}
	if (s->sm_count > INT_MAX || s->num_q_heads > INT_MAX || s->page_size > INT_MAX) {
		return engine_refused("shape beyond FlashAttention's int arithmetic", "sm_count");
	}

	uint32_t const cc = o ? o->compute_capability : 0;
	enum vllm_v1_cudagraph_mode const mode = o ? o->cudagraph_mode
						   : VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE;
	uint32_t const max_capture = o && o->max_capture_size ? o->max_capture_size
							     : DEFAULT_MAX_CAPTURE_SIZE;
	bool const batch_invariant = o ? o->batch_invariant : false;
	uint32_t const max_model_len = o ? o->max_model_len : 0;

	if (cc == 0) {
		return engine_refused("compute_capability is required (90 for 9.0): it picks "
				      "FlashAttention 2, 3 or 4",
				      "compute_capability");
	}
	if (cc < 80) {
		return engine_refused("vLLM's FlashAttention needs compute capability 8.0 or "
				      "later",
				      "compute_capability");
	}
	if (mode != VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE && mode != VLLM_V1_CUDAGRAPH_NONE &&
	    mode != VLLM_V1_CUDAGRAPH_PIECEWISE && mode != VLLM_V1_CUDAGRAPH_FULL_DECODE_ONLY) {
		return engine_refused("unknown cudagraph_mode", "cudagraph_mode");
	}
	uint32_t const major = cc / 10;
	int fa_version = major == 9 ? 3 : major == 10 ? 4 : 2;
	if (batch_invariant && fa_version == 4) {
		fa_version = 2; /* fa_utils.py 235-241 */
	}
	/* fa_utils.py 255-272: FA4 on 10.x holds head sizes up to 128, and 256
	 * (192 only with a value head of 128, which this shape has not). The
	 * layer's impl asks with its head_size (flash_attn.py 819-824); the
	 * builder asks without, sees 4, and so takes FA2's settings too
	 * (no AOT, max_num_splits 0). */
	if (fa_version == 4 && s->head_dim > 128 && s->head_dim != 256) {
		fa_version = 2;
	}
	if (fa_version == 4) {
		return engine_refused("compute capability 10.x runs FlashAttention 4 at this "
				      "head_dim, which is not ported; set batch_invariant (FA2) "
				      "or another compute_capability",
				      "compute_capability");
	}
	engine_term(&a, "fa_version", (uint64_t)fa_version);

	bool const use_full_cuda_graph = mode == VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE ||
					 mode == VLLM_V1_CUDAGRAPH_FULL_DECODE_ONLY;
	uint32_t const max_cudagraph_size = mode == VLLM_V1_CUDAGRAPH_NONE
						    ? 0
						    : vllm_v1_largest_capture_size(max_capture);
	uint32_t const num_tokens = b->num_seqs;
	bool const full = use_full_cuda_graph && num_tokens <= max_cudagraph_size;
	uint32_t const padded = full ? padded_capture_size(num_tokens) : num_tokens;
	engine_term(&a, "use_full_cuda_graph", use_full_cuda_graph);
	engine_term(&a, "num_tokens_padded", padded);

	struct batch_view bv = {b->seq_lens, (int)b->num_seqs, (int)max_len};

	if (fa_version == 3) {
		/* flash_attn.py 521-534 */
		int max_num_splits = full ? MAX_NUM_SPLITS_FOR_CUDA_GRAPH : 0;
		if (batch_invariant) {
			max_num_splits = 1;
		}
		engine_term(&a, "max_num_splits", (uint64_t)max_num_splits);
		engine_term(&a, "max_seqlen_k", max_len);
		fa3(&a, s, &bv, (int)padded, max_num_splits, by_seq);
		return a;
	}

	/* FA2: vLLM's max_num_splits stays 0 (flash_attn.py 395, 417-438). */
	int const max_num_splits = batch_invariant ? 1 : 0;
	engine_term(&a, "max_num_splits", (uint64_t)max_num_splits);
	uint32_t seqlen_k = max_len;
	if (full) {
		/* The replayed graph was captured with max_seq_len =
		 * max_model_len (gpu_model_runner.py 2325-2328). */
		/* Only the GQA swap's heuristic reads it: under batch
		 * invariance, or with as many KV heads as query heads, the
		 * capture ran 1 split whatever its length. */
		bool const read = !batch_invariant && s->num_q_heads > s->num_kv_heads;
		if (max_model_len == 0 && read) {
			return engine_refused("max_model_len is required for FA2 under a full CUDA "
					      "graph: the graph was captured with it",
					      "max_model_len");
		}
		if (max_model_len != 0 && (max_model_len < max_len || max_model_len > INT_MAX)) {
			return engine_refused("max_model_len must hold the longest sequence and fit an int",
					      "max_model_len");
		}
		if (max_model_len != 0) {
			seqlen_k = max_model_len;
		}
	}
	engine_term(&a, "max_seqlen_k", seqlen_k);
	fa2(&a, s, &bv, (int)padded, (int)seqlen_k, max_num_splits, by_seq);
	return a;
}
