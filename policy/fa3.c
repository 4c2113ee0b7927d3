/* SPDX-License-Identifier: AGPL-3.0-only AND BSD-3-Clause */
/*
 * fa3 — FlashAttention-3's (hopper/) split choice for one paged decode
 * launch, ported. Where each piece came from, the branches this port fixes
 * and every deliberate difference: fa3.h. Line numbers below are those of
 * Dao-AILab/flash-attention at 0251105a2fb19d2957484b7f023cd8c115286ced.
 */
#include "fa3.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* The fields of Flash_fwd_params (hopper/flash.h) the split choice reads,
 * as mha_fwd sets them for this setting. The pointers upstream tests for
 * null are booleans here: only whether they are given is ever read. */
struct fwd_params {
	int b, h, h_k, d, dv, d_rounded, dv_rounded;
	int seqlen_q, seqlen_k, seqlen_knew;
	int page_size, num_sm, num_splits, arch;
	bool is_causal, is_local, is_e4m3, pack_gqa, pagedkv_tma;
	float softcap;
	bool page_table, leftpad_k, knew_ptr;
	bool cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k;
	bool num_splits_dynamic_ptr;
};

struct tile_size {
	int kBlockM;
	int kBlockN;
};

/* Upstream computes in int; these say where an int it forms would overflow
 * (undefined behaviour there), so the shape is refused instead (fa3.h).
 * Every value checked is non-negative. */
static bool fits_int(int64_t v)
{
	return v <= INT_MAX;
}

/* ceilf(x) for the finite x >= 0 it is called on, by hand (no libm): a
 * float at or above 2^23 is already a whole number; below it, the float
 * truncated to an int is exact, and is x's ceiling unless x had a
 * fraction. */
static float ceil_nonneg(float x)
{
	if (x >= 8388608.0f) {
		return x;
	}
	float t = (float)(int32_t)x;
	return t < x ? t + 1.0f : t;
}

/* hopper/tile_size.h 9-54, tile_size_fwd_sm90: only its element_size == 2
 * half (13-40; bf16), and only {kBlockM, kBlockN} of the tuple it returns
 * (MmaPV_is_RS and IntraWGOverlap choose no split). v_colmajor and softcap
 * are read only by the element_size == 1 half, so they are not taken. */
static struct tile_size tile_size_fwd_sm90(int headdim, int headdim_v, bool is_causal,
					   bool is_local, bool paged_kv_non_TMA)
{
	if (headdim <= 64) {
		if (headdim_v == 512) {
			return (struct tile_size){64, 64};
		} else if (headdim_v == 256) {
			return (struct tile_size){128, 96};
		} else {
			/* Switch to tile size 192 x 192 for now */
			bool const use_blockN_128 = is_causal || is_local || paged_kv_non_TMA;
			return (struct tile_size){192, use_blockN_128 ? 128 : 192};
		}
	} else if (headdim <= 96) {
		return (struct tile_size){192, is_local || paged_kv_non_TMA ? 128 : 144};
	} else if (headdim <= 128) {
		bool const use_blockN_128 = is_causal || is_local || paged_kv_non_TMA;
		return (struct tile_size){128, use_blockN_128 ? 128 : 176};
	} else if (headdim <= 192) {
		return (struct tile_size){
			128, paged_kv_non_TMA || is_local ? 96 : (headdim_v <= 128 ? 128 : 112)};
	} else {
		return (struct tile_size){128, is_local ? 64 : 80};
	}
}

/* hopper/heuristics.h 9-17 */
static bool should_pack_gqa(bool varlen_q, int seqlen_q, int qhead_per_khead, int blockM)
{
	/* If varlen, we don't actually know seqlen_q but only max_seqlen_q. */
	if (varlen_q) {
		return true;
	}
	/* round_up, the lambda at 13. seqlen_q * qhead_per_khead is the group
	 * size here (seqlen_q = 1); fa3_launch has checked that it fits an int
	 * with blockM - 1 added. */
	int const nopack_round = (seqlen_q + blockM - 1) / blockM * blockM;
	int const pack_round = (seqlen_q * qhead_per_khead + blockM - 1) / blockM * blockM;
	float nopack_gqa_efficiency = (float)seqlen_q / (float)nopack_round;
	float pack_gqa_efficiency = (float)(seqlen_q * qhead_per_khead) / (float)pack_round;
	/* 0.9 is a double: the compare is in double, as upstream's. */
	return nopack_gqa_efficiency < 0.9 * pack_gqa_efficiency;
}

/* hopper/heuristics.h 19-59. Returns 0 (which upstream never returns) where
 * one of its int expressions would overflow. */
static int num_splits_heuristic(int total_mblocks, int num_SMs, int num_n_blocks, int num_m_blocks,
				int size_one_kv_head, bool is_causal_or_local, int max_splits)
{
	/* If we have enough to almost fill the SMs, then just use 1 split,
	 * unless a head of KV does not fit in L2 (assumed 50 MB). */
	if (total_mblocks >= 0.8f * num_SMs) {
		int const size_l2 = 50 * 1024 * 1024;
		/* Only split if there are enough queries to go over the KV at
		 * least twice; don't split if causal. */
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
	/* If num_n_blocks is too small, use 1 split. */
	if (num_n_blocks <= 4) {
		return 1;
	}
	/* std::min({max_splits, num_SMs, num_n_blocks}) */
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
	/* std::vector<float> efficiency, reserve(max_splits): max_splits is at
	 * most the 128 get_num_splits passes. */
	float efficiency[128];
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		float n_waves = (float)(total_mblocks * num_splits) / num_SMs;
		/* ceil by hand; whichever overload upstream's ceil resolves to,
		 * the quotient is this float (fa3.h). */
		float eff = n_waves / ceil_nonneg(n_waves);
		if (eff > max_efficiency) {
			max_efficiency = eff;
		}
		efficiency[num_splits - 1] = eff;
	}
	for (int num_splits = 1; num_splits <= max_splits; num_splits++) {
		/* 0.85 is a double: the compare is in double, as upstream's. */
		if (efficiency[num_splits - 1] >= 0.85 * max_efficiency) {
			return num_splits;
		}
	}
	return 1;
}

/* hopper/flash_api.cpp 415-424 */
static bool get_pagedkv_tma(const struct fwd_params *params)
{
	if (params->arch < 90 || !params->page_table || params->leftpad_k || params->knew_ptr) {
		return false;
	}
	/* This needs to match the kernel configs */
	struct tile_size const t = tile_size_fwd_sm90(params->d_rounded, params->dv_rounded,
						      params->is_causal, params->is_local,
						      false /*paged_kv_non_TMA*/);
	int const kBlockM = t.kBlockM;
	int const kBlockN = t.kBlockN;
	/* Heuristic: when seqlen_q <= kBlockM, we're not compute bound, and
	 * somehow using TMA is slower, at least for MLA. */
	return params->page_size % kBlockN == 0 && params->seqlen_q * (params->h / params->h_k) > kBlockM;
}

/* hopper/flash_api.cpp 426-440 (FLASHATTENTION_DISABLE_PACKGQA unset, as
 * setup.py builds by default) */
static bool get_pack_gqa(const struct fwd_params *params)
{
	/* Always enable PackGQA for Sm8x or PagedKVNonTMA or Split. */
	if (params->arch < 90 || (params->page_table && !params->pagedkv_tma) || params->num_splits > 1) {
		return true;
	}
	if (params->h == params->h_k) {
		return false;
	}
	struct tile_size const t = tile_size_fwd_sm90(params->d_rounded, params->dv_rounded,
						      params->is_causal, params->is_local,
						      params->page_table && !params->pagedkv_tma);
	int const kBlockM = t.kBlockM;
	return should_pack_gqa(params->cu_seqlens_q || params->seqused_q, params->seqlen_q,
			       params->h / params->h_k, kBlockM);
}

/* What get_num_splits formed, for the answer's terms. */
struct num_splits_terms {
	int num_n_blocks, num_m_blocks, size_one_kv_head, total_mblocks;
};

/* hopper/flash_api.cpp 442-471, sm90 only (params->arch is 90, so the
 * tile_size_fwd_sm8x call at 453 chooses nothing). Returns 0 where an int
 * would overflow. */
static int get_num_splits(const struct fwd_params *params, struct num_splits_terms *out)
{
	struct tile_size const t = tile_size_fwd_sm90(params->d_rounded, params->dv_rounded,
						      params->is_causal, params->is_local,
						      params->page_table && !params->pagedkv_tma);
	int const kBlockM = t.kBlockM;
	int const kBlockN = t.kBlockN;
	int seqlen_q_packgqa = params->seqlen_q * (params->h / params->h_k);
	/* If is_local, we're not going to load all of seqlen_k (never here:
	 * no window, so the local branch at 460 is not ported). */
	int const seqlen_k_loaded = params->seqlen_k;
	if (!fits_int((int64_t)seqlen_k_loaded + kBlockN - 1) ||
	    !fits_int((int64_t)seqlen_q_packgqa + kBlockM - 1) ||
	    !fits_int((int64_t)params->seqlen_k * (params->d + params->dv) * 2)) {
		return 0;
	}
	int const num_n_blocks = (seqlen_k_loaded + kBlockN - 1) / kBlockN;
	int const num_m_blocks = (seqlen_q_packgqa + kBlockM - 1) / kBlockM;
	int const size_one_kv_head =
		params->seqlen_k * (params->d + params->dv) * (params->is_e4m3 ? 1 : 2);
	/* If varlen, we use dynamic split, so this heuristic just needs to get
	 * an upper bound on num_splits: pretend batch = 1. */
	if (!fits_int((int64_t)(params->num_splits_dynamic_ptr ? 1 : params->b) * params->h_k *
		      num_m_blocks)) {
		return 0;
	}
	int total_mblocks = (params->num_splits_dynamic_ptr ? 1 : params->b) * params->h_k * num_m_blocks;
	out->num_n_blocks = num_n_blocks;
	out->num_m_blocks = num_m_blocks;
	out->size_one_kv_head = size_one_kv_head;
	out->total_mblocks = total_mblocks;
	return num_splits_heuristic(total_mblocks, params->num_sm, num_n_blocks, num_m_blocks,
				    size_one_kv_head, params->is_causal || params->is_local, 128);
}

/* What the prepare kernel formed, for the answer's terms. */
struct prepare_terms {
	int num_ctas, num_m_blocks, num_n_blocks, total_blocks, blocks_per_sm;
	bool computed; /* total_blocks and blocks_per_sm were formed */
	/* blocks_per_sm's quotient is within 2 ulp of a whole number: a GPU
	 * dividing with --use_fast_math may take its ceilf one off (fa3.h) */
	bool near_whole;
};

/* What the prepare kernel reads as seqused_k (cache_seqlens): a mixed
 * batch's lengths, or, with lens NULL, every sequence seq_len tokens. */
struct seqused_k {
	const uint32_t *lens; /* NULL: every sequence holds seq_len */
	int seq_len;          /* the shape's seq_len: the longest length */
	/* what a refusal for a length beyond upstream's int arithmetic says,
	 * and the input it names ("seq_len" or "seq_lens") */
	const char *overflow, *input;
};

/* seqused_k[batch_idx], for batch_idx < num_batch (get_num_n_blocks, 101);
 * every length is at most seq_len, which fits an int. */
static int seqused_k_at(const struct seqused_k *seqused_k, int batch_idx)
{
	return seqused_k->lens != NULL ? (int)seqused_k->lens[batch_idx] : seqused_k->seq_len;
}

/* The float d ulp steps from x > 0 (the next float up for d = 1): the bits
 * of a positive float count up with its value. */
static float ulp_step(float x, int d)
{
	union {
		float f;
		uint32_t u;
	} v;

	v.f = x;
	v.u = (uint32_t)((int64_t)v.u + d);
	return v.f;
}

/* hopper/flash_prepare_scheduler.cu: prepare_varlen_num_blocks (219-250)
 * and the part of prepare_varlen_num_blocks_kernel (42-215) that forms
 * num_splits_dynamic (60, 79-128, 140-161), for a batch whose sequence
 * batch_idx has seqused_k[batch_idx] tokens of KV and seqlen_q_static = 1
 * query (no seqused_q, no cu_seqlens_q/k/k_new, no leftpad_k, no new KV).
 *
 * The kernel gives each batch entry one lane (31 a warp, lane 31 idle;
 * 992 a CTA, 124-126), and every lane forms its num_m_blocks and
 * num_n_blocks. With one CTA the warp shuffles and the shared-memory
 * atomicAdd (146-154) sum num_m_blocks * num_n_blocks over the batch into
 * an int; the lanes past num_batch and lane 31 add 0. The sum is of ints,
 * so the order the warps add in changes nothing: the loop below adds in
 * batch order. One float quotient (156) then gives blocks_per_sm for the
 * whole batch, and each lane its own num_splits_dynamic from its own
 * num_n_blocks (158). The sort (163-204, varlen_sort_batches) moves each
 * lane's (num_n_blocks, num_m_blocks, num_splits_dynamic, batch_idx)
 * together and stores varlen_batch_idx beside it, so the tile scheduler
 * still gives sequence batch_idx its own count; num_nheads_in_l2 (130-138,
 * 200) is only written when head_swizzle (causal or local), never here.
 *
 * Writes sequence i's num_splits_dynamic to num_splits_dynamic_ptr[i] when
 * that is not NULL (a mixed batch, at most ENGINE_MAX_SEQS), and returns
 * the largest; returns 0, writing nothing, where an int would overflow. */
static int prepare_varlen_num_blocks(const struct fwd_params *params, bool packgqa, int blockM,
				     int blockN, const struct seqused_k *seqused_k,
				     uint32_t *num_splits_dynamic_ptr, struct prepare_terms *out)
{
	/* Host side, 221-236 */
	if (!fits_int((int64_t)params->h + params->h_k - 1) ||
	    !fits_int((int64_t)params->b + 31 * 32 - 1)) {
		return 0;
	}
	int qhead_per_khead = (params->h + params->h_k - 1) / params->h_k; /* cutlass::ceil_div */
	int num_ctas = (params->b + 31 * 32 - 1) / (31 * 32);                /* gridDim.x */
	int num_batch = params->b;
	int num_head = !packgqa ? params->h : params->h_k;
	int num_sm = params->num_sm;
	int num_splits_static = params->num_splits;

	/* Kernel, get_num_m_blocks (81-95): seqlen = seqlen_q_static, the
	 * same for every batch entry */
	int seqlen_q = params->seqlen_q;
	if (packgqa) {
		seqlen_q *= qhead_per_khead;
	}
	/* get_num_n_blocks (97-121): seqused_k[batch_idx], minus leftpad_k
	 * (0), plus seqlen_new (seqlen_k_new_static = params.seqlen_knew =
	 * 0). The longest is seq_len: checked once for every entry. */
	if (!fits_int((int64_t)seqlen_q + blockM - 1) ||
	    !fits_int((int64_t)seqused_k->seq_len - 0 + params->seqlen_knew + blockN - 1)) {
		return 0;
	}
	int num_m_blocks = (seqlen_q + blockM - 1) / blockM; /* blockm_divmod.div */
	out->num_ctas = num_ctas;
	out->num_m_blocks = num_m_blocks;
	/* the longest sequence's, for the uniform answer's term */
	out->num_n_blocks = (seqused_k->seq_len - 0 + params->seqlen_knew + blockN - 1) / blockN;
	out->computed = false;
	out->near_whole = false;

	if (num_ctas > 1 || num_splits_static == 1) {
		/* set num splits for all batches to 1 (note that user expects
		 * num_splits_static to mean upper bound on splits); for batch
		 * size > 992, GPU occupancy is not expected to be an issue */
		for (int batch_idx = 0; num_splits_dynamic_ptr != NULL && batch_idx < num_batch; batch_idx++) {
			num_splits_dynamic_ptr[batch_idx] = 1;
		}
		return 1;
	}

	/* 146-154: the block's sum, in 64 bits so that an int overflow
	 * upstream (undefined there) is seen and refused. */
	int64_t sum = 0;
	int max_n_blocks = 0;
	for (int batch_idx = 0; batch_idx < num_batch; batch_idx++) {
		int const seqlen = seqused_k_at(seqused_k, batch_idx) - 0 + params->seqlen_knew;
		int const num_n_blocks = (seqlen + blockN - 1) / blockN;
		sum += (int64_t)num_m_blocks * num_n_blocks;
		if (num_n_blocks > max_n_blocks) {
			max_n_blocks = num_n_blocks;
		}
	}
	if (!fits_int(sum)) {
		return 0;
	}
	int total_blocks = (int)sum;
	/* 10% margin. Upstream builds this with --use_fast_math, where the
	 * division is approximate; here it is IEEE (fa3.h), and a quotient
	 * within 2 ulp of a whole number is said so in the answer: there the
	 * GPU's ceilf may land one higher or lower. */
	float const quotient = (float)total_blocks * 1.1f * (float)num_head / (float)num_sm;
	float const per_sm = ceil_nonneg(quotient);
	if (per_sm >= 2147483648.0f) {
		return 0; /* static_cast<int> of it would be undefined */
	}
	int blocks_per_sm = (int)per_sm;
	if (!fits_int((int64_t)max_n_blocks + blocks_per_sm - 1)) {
		return 0;
	}
	out->total_blocks = total_blocks;
	out->blocks_per_sm = blocks_per_sm;
	out->computed = true;
	out->near_whole = ceil_nonneg(ulp_step(quotient, -2)) != ceil_nonneg(ulp_step(quotient, 2));

	/* 158, each batch entry from its own num_n_blocks:
	 * std::max(std::min((num_n_blocks + blocks_per_sm - 1) /
	 * blocks_per_sm, num_splits_static), 1). An equal-length batch forms
	 * one value num_batch times: it is formed once. */
	int largest = 0;
	int const entries = seqused_k->lens != NULL ? num_batch : 1;
	for (int batch_idx = 0; batch_idx < entries; batch_idx++) {
		int const seqlen = seqused_k_at(seqused_k, batch_idx) - 0 + params->seqlen_knew;
		int const num_n_blocks = (seqlen + blockN - 1) / blockN;
		int const wanted = (num_n_blocks + blocks_per_sm - 1) / blocks_per_sm;
		int num_splits_dynamic = wanted < num_splits_static ? wanted : num_splits_static;
		if (num_splits_dynamic < 1) {
			num_splits_dynamic = 1;
		}
		if (num_splits_dynamic_ptr != NULL) {
			num_splits_dynamic_ptr[batch_idx] = (uint32_t)num_splits_dynamic;
		}
		if (num_splits_dynamic > largest) {
			largest = num_splits_dynamic;
		}
	}
	return largest;
}

/* The reason for a shape refused because one of upstream's int
 * intermediates would overflow there (fa3.h). */
static const char overflow_reason[] =
	"an int intermediate of FlashAttention-3 would overflow for this shape; give a shorter seq_len "
	"(or fewer num_seqs or heads)";
static const char batch_overflow_reason[] =
	"an int intermediate of FlashAttention-3 would overflow for this batch; give shorter seq_lens "
	"(or fewer sequences or heads)";

/* hopper/flash_api.cpp 492-509, every head size built (setup.py's default) */
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
	if (head_size <= 256) {
		return 256;
	}
	return 256;
}

/* mha_fwd for *s, whose sequences hold seqused_k's lengths (seq_len the
 * longest); writes each one's num_splits_dynamic to by_seq unless it is
 * NULL or the answer is refused. */
static struct engine_answer launch(const struct engine_shape *s, const struct seqused_k *seqused_k,
				   uint32_t *by_seq)
{
	struct engine_zero zero;

	if (engine_zero_count(s, FA3_READS, &zero)) {
		return engine_refused(zero.reason, zero.input);
	}
	/* Upstream's sizes are int (pybind11 refuses an argument above its
	 * range before mha_fwd runs). */
	if (s->sm_count > INT_MAX) {
		return engine_refused("sm_count is beyond FlashAttention-3's int range", "sm_count");
	}
	if (s->num_seqs > INT_MAX) {
		return engine_refused("num_seqs is beyond FlashAttention-3's int range", "num_seqs");
	}
	if (s->num_q_heads > INT_MAX) {
		return engine_refused("num_q_heads is beyond FlashAttention-3's int range", "num_q_heads");
	}
	if (s->num_kv_heads > INT_MAX) {
		return engine_refused("num_kv_heads is beyond FlashAttention-3's int range", "num_kv_heads");
	}
	if (s->seq_len > INT_MAX) {
		return engine_refused(seqused_k->overflow, seqused_k->input);
	}
	if (s->page_size > INT_MAX) {
		return engine_refused("page_size is beyond FlashAttention-3's int range", "page_size");
	}

	/* mha_fwd, 759-771: q is (b, 1, h, d); k and v are (num_pages,
	 * page_size, h_k, d); the page table is (b, max_num_pages_per_seq),
	 * as narrow as seq_len allows (fa3.h). */
	int const batch_size = (int)s->num_seqs;
	int seqlen_q = 1;
	int num_heads = (int)s->num_q_heads;
	/* 779-780 (get_max_headdim, 473-490: 256 with every head size
	 * built), checked before the conversion to int. */
	int const max_headdim = 256;
	if (s->head_dim > (uint32_t)max_headdim) {
		return engine_refused("FlashAttention-3's forward only supports head dimension at most 256; "
				      "give a head_dim of 256 or less",
				      "head_dim");
	}
	int const head_size = (int)s->head_dim;
	int const head_size_v = head_size;
	int const page_size = (int)s->page_size;
	int const max_num_pages_per_seq = (int)((s->seq_len + (uint64_t)s->page_size - 1) / s->page_size);
	if (!fits_int((int64_t)max_num_pages_per_seq * page_size)) {
		return engine_refused(seqused_k->overflow, seqused_k->input);
	}
	int const seqlen_k = max_num_pages_per_seq * page_size;
	/* total_k = batch_size * k.size(1), an int that gates the launch at
	 * 1167: beyond int it would wrap. */
	if (!fits_int((int64_t)batch_size * page_size)) {
		return engine_refused("num_seqs * page_size is beyond FlashAttention-3's int total_k; "
				      "give fewer num_seqs",
				      "num_seqs");
	}
	int const num_heads_k = (int)s->num_kv_heads;

	/* 781 */
	if (num_heads % num_heads_k != 0) {
		return engine_refused("FlashAttention-3 needs num_q_heads to be a multiple of num_kv_heads",
				      "num_kv_heads");
	}
	/* The group, seqlen_q * (h / h_k), is rounded up to kBlockM (at most
	 * 192) in int at three places (should_pack_gqa, get_num_splits, the
	 * prepare kernel): one check for all of them. */
	if (!fits_int((int64_t)(num_heads / num_heads_k) + 192 - 1)) {
		return engine_refused("num_q_heads / num_kv_heads is beyond FlashAttention-3's int arithmetic; "
				      "give fewer query heads per KV head",
				      "num_q_heads");
	}
	/* 782-792: head_size_v == head_size, so the different-V checks do not
	 * apply. */

	/* 796-805: no window (-1, -1), no attention_chunk, seqlen_q == 1:
	 * causal = false is kept (the caller's, flash_attn_with_kvcache's
	 * default), so window_size_right stays -1. */
	bool const is_causal = false;

	/* 849: seqused_k (cache_seqlens) is given, so this is varlen. */
	bool const is_varlen = true;

	/* 854-856: bf16 */
	int const alignment = 8;
	if (head_size % alignment != 0) {
		return engine_refused("FlashAttention-3 needs head_dim to be a multiple of 8 for bf16",
				      "head_dim");
	}

	/* 878-881 */
	int const head_size_rounded = round_up_headdim(head_size);
	int const head_size_v_rounded = head_size_rounded; /* head_size_v == head_size */
	if (!fits_int((int64_t)seqlen_k + 127)) {
		return engine_refused(seqused_k->overflow, seqused_k->input); /* seqlen_k_rounded */
	}

	/* 895-926: set_params_fprop (50-168) and what follows */
	struct fwd_params params = {0};
	params.b = batch_size;
	params.h = num_heads;
	params.h_k = num_heads_k;
	params.seqlen_q = seqlen_q;
	params.seqlen_k = seqlen_k;
	params.d = head_size;
	params.d_rounded = head_size_rounded;
	params.dv = head_size_v;
	params.dv_rounded = head_size_v_rounded;
	params.seqused_k = true;
	params.is_e4m3 = false;
	/* 148-149: window_size_left < 0 and window_size_right == -1 (not 0,
	 * since is_causal is false), no attention_chunk */
	params.is_causal = is_causal;
	params.is_local = false;
	params.softcap = 0.f;
	params.arch = 90;                  /* sm90 (163: major * 10 + minor) */
	params.num_sm = (int)s->sm_count; /* multiProcessorCount - sm_margin (0) */
	params.page_table = true;
	params.page_size = page_size;
	params.seqlen_knew = 0; /* no k_new (929-975 not taken) */

	/* 977-985 */
	bool const use_prepare_varlen = is_varlen;
	/* Temporarily set num_splits_dynamic_ptr since get_num_splits checks it */
	params.num_splits_dynamic_ptr = use_prepare_varlen;
	params.pagedkv_tma = get_pagedkv_tma(&params);
	struct num_splits_terms heuristic = {0};
	bool const from_heuristic = s->num_splits == 0;
	if (!from_heuristic && s->num_splits > 256) {
		/* 1095 (a value above INT_MAX fails run_mha_fwd's num_splits >= 1
		 * check at 371 after its int conversion instead) */
		return engine_refused("FlashAttention-3 does not support num_splits > 256; give 256 or fewer, "
				      "or 0 for its heuristic",
				      "num_splits");
	}
	if (from_heuristic) {
		params.num_splits = get_num_splits(&params, &heuristic);
		if (params.num_splits == 0) {
			return engine_refused(seqused_k->overflow, seqused_k->input);
		}
	} else {
		params.num_splits = (int)s->num_splits;
	}
	/* Always enable PackGQA for Split, and get_pack_gqa requires
	 * params.num_splits to decide (pack_gqa argument not given) */
	params.pack_gqa = get_pack_gqa(&params);

	/* 995-1002: the scheduler metadata's int size, b_rounded * 3 + 1
	 * (varlen_sort_batches, no head_swizzle, scheduler_needs_semaphore) */
	if (!fits_int(((int64_t)batch_size + 3) / 4 * 4 * 3 + 1)) {
		return engine_refused("num_seqs is beyond FlashAttention-3's int scheduler metadata; "
				      "give fewer num_seqs",
				      "num_seqs");
	}

	/* 1092-1104: not varlen_q, so out_accum is (num_splits, batch_size,
	 * num_heads, seqlen_q, head_size_v) and softmax_lse_accum
	 * (num_splits, batch_size, num_heads, seqlen_q), both float32, only
	 * when num_splits > 1. head_size_v is the head size itself, not
	 * rounded. At most 256 * 2^31 * 2^31 * 257 * 4 bytes would not fit;
	 * the count is formed so that it never wraps. */
	uint64_t workspace_bytes = 0;
	if (params.num_splits > 1) {
		uint64_t const rows = (uint64_t)params.num_splits * (uint64_t)batch_size * (uint64_t)num_heads *
				      (uint64_t)seqlen_q;
		uint64_t const per_row = ((uint64_t)head_size_v + 1) * 4;
		if (rows > UINT64_MAX / per_row) {
			return engine_refused("the split-K scratch would exceed 2^64 bytes; "
					      "give fewer num_seqs",
					      "num_seqs");
		}
		workspace_bytes = rows * per_row;
	}

	/* run_mha_fwd (367-385) and run_mha_fwd_ (flash_fwd_launch_template.h
	 * 201-226) fix the kernel's template: Split = num_splits > 1,
	 * PagedKVNonTMA = page_table && !pagedkv_tma, PackGQA = pack_gqa ||
	 * PagedKVNonTMA || Split (377; on sm90), and the bf16 head-size
	 * dispatch of run_mha_fwd_constexpr (258-293) instantiates kHeadDim =
	 * kHeadDimV = head_size_rounded (for 128 < d <= 192, dv = d > 128
	 * takes 192 x 192 at 288). run_flash_fwd (28-199) takes kBlockM and
	 * kBlockN from tile_size_fwd_sm90 of that template (40-43) and hands
	 * them to prepare_varlen_num_blocks (163-166; Varlen, no scheduler
	 * metadata given). */
	bool const Split = params.num_splits > 1;
	bool const PagedKVNonTMA = params.page_table && !params.pagedkv_tma;
	bool const PackGQA = params.pack_gqa || params.arch < 90 || PagedKVNonTMA || Split;
	struct tile_size const kBlockMN = tile_size_fwd_sm90(head_size_rounded, head_size_v_rounded,
							     params.is_causal, params.is_local, PagedKVNonTMA);
	/* Last, as upstream launches it after every check and allocation
	 * above: by_seq is written only by an answer that is not refused. */
	struct prepare_terms prep = {0};
	int const num_splits_dynamic =
		prepare_varlen_num_blocks(&params, PackGQA, kBlockMN.kBlockM, kBlockMN.kBlockN,
					  seqused_k, by_seq, &prep);
	if (num_splits_dynamic == 0) {
		return engine_refused(seqused_k->overflow, seqused_k->input);
	}

	struct engine_answer a = {0};
	a.status = ENGINE_OK;
	a.num_splits = (uint32_t)num_splits_dynamic;
	a.num_splits_bound = (uint32_t)params.num_splits;
	a.workspace_bytes = workspace_bytes;
	engine_term(&a, "kBlockM", (uint64_t)kBlockMN.kBlockM);
	engine_term(&a, "kBlockN", (uint64_t)kBlockMN.kBlockN);
	engine_term(&a, "pagedkv_tma", params.pagedkv_tma);
	engine_term(&a, "pack_gqa", PackGQA);
	engine_term(&a, "seqlen_k", (uint64_t)seqlen_k);
	if (from_heuristic) {
		engine_term(&a, "get_num_splits.num_m_blocks", (uint64_t)heuristic.num_m_blocks);
		engine_term(&a, "get_num_splits.num_n_blocks", (uint64_t)heuristic.num_n_blocks);
		engine_term(&a, "total_mblocks", (uint64_t)heuristic.total_mblocks);
		engine_term(&a, "size_one_kv_head", (uint64_t)heuristic.size_one_kv_head);
	}
	engine_term(&a, "num_splits_static", (uint64_t)params.num_splits);
	engine_term(&a, "num_ctas", (uint64_t)prep.num_ctas);
	engine_term(&a, "num_m_blocks", (uint64_t)prep.num_m_blocks);
	/* A mixed batch has a num_n_blocks and a num_splits_dynamic per
	 * sequence (the latter in by_seq, its largest in num_splits): its
	 * terms name the quotient instead, within ENGINE_TERMS_MAX. */
	if (seqused_k->lens == NULL) {
		engine_term(&a, "num_n_blocks", (uint64_t)prep.num_n_blocks);
	}
	if (prep.computed) {
		engine_term(&a, "total_blocks", (uint64_t)prep.total_blocks);
		engine_term(&a, "blocks_per_sm", (uint64_t)prep.blocks_per_sm);
		if (seqused_k->lens != NULL) {
			engine_term(&a, "blocks_per_sm_near_whole", prep.near_whole);
		}
	}
	if (seqused_k->lens == NULL) {
		engine_term(&a, "num_splits_dynamic", (uint64_t)num_splits_dynamic);
	}
	return a;
}

struct engine_answer fa3_launch(const struct engine_shape *s)
{
	struct seqused_k const every = {NULL, (int)(s->seq_len <= INT_MAX ? s->seq_len : 0),
					overflow_reason, "seq_len"};

	return launch(s, &every, NULL);
}

/* The shape of *b: *s with b's num_seqs and, as seq_len, its longest
 * length, which sizes the page table (fa3.h); the batch's own refusals
 * first, in engine_shape's order, named after seq_lens. Returns false
 * with *refusal filled when the batch is refused. */
static bool batch_shape(const struct engine_shape *s, const struct engine_batch *b,
			struct engine_shape *out, struct engine_answer *refusal)
{
	unsigned const before_seq_len = ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |
					ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM;
	struct engine_zero zero;
	uint32_t longest = 0;
	bool a_zero = false;

	*out = *s;
	out->num_seqs = b->num_seqs;
	if (engine_zero_count(out, FA3_READS & before_seq_len, &zero)) {
		*refusal = engine_refused(zero.reason, zero.input);
		return false;
	}
	if (b->num_seqs > ENGINE_MAX_SEQS) {
		*refusal = engine_refused("a mixed batch holds at most 4096 sequences; give fewer",
					  "num_seqs");
		return false;
	}
	if (b->seq_lens == NULL) {
		*refusal = engine_refused("a mixed batch needs its seq_lens", "seq_lens");
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
		*refusal = engine_refused("every one of seq_lens must be at least 1", "seq_lens");
		return false;
	}
	if (longest > ENGINE_MAX_SEQ_LEN) {
		*refusal = engine_refused("a sequence of seq_lens is longer than 2^31 - 1 tokens, "
					  "beyond FlashAttention-3's int lengths",
					  "seq_lens");
		return false;
	}
	out->seq_len = longest;
	return true;
}

struct engine_answer fa3_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				      uint32_t *by_seq)
{
	struct engine_shape batch;
	struct engine_answer refusal;

	if (!batch_shape(s, b, &batch, &refusal)) {
		return refusal;
	}
	struct seqused_k const seqused_k = {b->seq_lens, (int)batch.seq_len, batch_overflow_reason,
					    "seq_lens"};
	return launch(&batch, &seqused_k, by_seq);
}
