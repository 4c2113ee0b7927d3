/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * trtllm — TensorRT-LLM's generation-phase XQA choice (NVIDIA/TensorRT-LLM,
 * pinned file by file) for one mixed decode batch. Where each function
 * comes from, what is fixed and what differs: trtllm.h. Each function
 * below keeps the upstream's name in its comment, its variable names and
 * its arithmetic types (int stays int, float stays float, double stays
 * double; an int that upstream could overflow is refused before it is
 * formed).
 *
 * Copyright (c) 2020-2024, NVIDIA CORPORATION (the upstream; Apache
 * License 2.0).
 */
#include "trtllm.h"

#define TRTLLM_INT32_MAX 2147483647

/* decoderXQAConstants.h 27-30 and 40-45 */
static const int kMinHistoryTokensPerBlock = 128;
static const float kEnableMinBlockFactor = 4.0f;
static const int kTargetWaveFactor = 8;
static const int kXQA_MAX_NUM_SUB_SEQ = 6000; /* getXqaMaxNumSubSeq(isMLA = false) */

/* CUDA's limit on gridDim.y and gridDim.z; XQA's HMMA grid is
 * {multi_block, nbKVHeads, batch_size}. */
#define TRTLLM_GRID_YZ_MAX 65535u

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* floor(sqrt(n)) for n < 2^32, by Newton's method on integers. */
static uint64_t isqrt_u64(uint64_t n)
{
	if (n < 2) {
		return n;
	}
	uint64_t x = n, y = (x + 1) / 2;
	while (y < x) {
		x = y;
		y = (x + n / x) / 2;
	}
	return x;
}

/*
 * (int)std::round(std::sqrt(N)) for the float N = multi_block_count * 8.F
 * (decoderXQAImplCommon.h, computeMultiBlockCount), without libm.
 * multi_block_count is history_length / 128 with history_length an int, so
 * N = 8 * multi_block_count < 2^27: a whole number float holds exactly
 * (multi_block_count < 2^24 converts exactly, and * 8 is exact).
 *
 * With k = floor(sqrt(N)), the true root is in [k, k + 1). std::sqrt
 * rounds it to the nearest float s, and std::round gives k + 1 when
 * s >= k + 0.5, else k (s can reach k + 1 only from above k + 0.5). k + 0.5
 * is a float (k < 2^23) and not a power of two (k >= 1), so the floats
 * below it are spaced u = 2^(E - 23) with E = floor(log2 k), and the root
 * rounds to k + 0.5 or above exactly when it is at or above the midpoint
 * m = k + 0.5 - u / 2 (N is an integer and m^2 is not, so no tie). With
 * M = m * 2^(25 - E) = k * 2^(25 - E) + 2^(24 - E) - 2, an integer, that
 * is N * 2^(2 * (25 - E)) >= M^2, all below 2^52 here.
 */
static int round_sqrt_8x(int multi_block_count)
{
	const uint64_t N = (uint64_t)multi_block_count * 8u;
	const uint64_t k = isqrt_u64(N);
	if (k == 0) {
		return 0; /* N == 0: sqrt 0, round 0 */
	}
	unsigned E = 0;
	while ((k >> (E + 1)) != 0) {
		E++;
	}
	const unsigned shift = 25 - E;
	const uint64_t M = (k << shift) + ((uint64_t)1 << (shift - 1)) - 2;
	const bool up = (N << (2 * shift)) >= M * M;
	return (int)(up ? k + 1 : k);
}

/*
 * decoderXQAImplCommon.h, computeMultiBlockCount(xqaParams, batch_size,
 * multiprocessor_count), without its TRTLLM_XQA_BLOCKS_PER_SEQUENCE
 * override (trtllm.h). The TLLM_CHECKs at its end hold by construction
 * (count >= 1; count == 1 or batch_size * count <= maxNbSubSeq).
 */
static int compute_multi_block_count(int num_kv_heads, int history_length, int batch_size,
				     int multiprocessor_count, int *after_sqrt)
{
	int multi_block_count = 1;
	const int32_t maxNbSubSeq = kXQA_MAX_NUM_SUB_SEQ;

	multi_block_count = history_length / kMinHistoryTokensPerBlock;
	/* avoid using too many blocks for one sequence, otherwise the final
	 * reduction may dominate */
	multi_block_count = min_int(multi_block_count, round_sqrt_8x(multi_block_count));
	multi_block_count = max_int(multi_block_count, 1);
	*after_sqrt = multi_block_count;
	/* adjust to kTargetWaveFactor, as already initialized using
	 * kMinHistoryTokensPerBlock, only need to decrease */
	double wave_count = (double)batch_size * num_kv_heads * multi_block_count /
			    (double)multiprocessor_count;
	double adj_factor = wave_count / (double)kTargetWaveFactor;
	if (adj_factor > 1.0) {
		/* floor of a non-negative quotient below multi_block_count: its
		 * truncation, which the conversion to int makes */
		multi_block_count = (int)(multi_block_count / adj_factor);
	}
	multi_block_count = max_int(multi_block_count, 1);

	/* Add limitation due to reserved workspace size. */
	multi_block_count = max_int(min_int(multi_block_count, maxNbSubSeq / batch_size), 1);
	return multi_block_count;
}


/* The refusals for a launch TensorRT-LLM hands to the masked-MHA kernel:
 * why XQA does not take it, and the GPU figures the fallback's count
 * would need. */
#define TRTLLM_MMHA_NEEDS                                                          \
	"; TensorRT-LLM then runs its masked-MHA kernel, whose block count needs "    \
	"cudaOccupancyMaxActiveBlocksPerMultiprocessor for "                          \
	"masked_multihead_attention_kernel and the GPU's opt-in shared memory per "   \
	"block (cudaDevAttrMaxSharedMemoryPerBlockOptin), which this port does not take"

/*
 * kernelUtils.cpp, supportConfigCommon and supportConfigHMMA
 * (forConfigurePlugin = false) for the fixed setting (trtllm.h): bf16, a
 * bf16 KV cache (so supportConfigQGMMA, which needs E4M3, is false), beam
 * 1, paged, RoPE, causal, no window. Returns NULL when XQA takes the
 * config, else the refusal's reason, with *input the input to change.
 */
static const char *support_config(const struct engine_shape *s, const char **input)
{
	const uint32_t head_size = s->head_dim;
	const uint32_t beam_width = 1;

	/* supportConfigCommon: is_vanilla_mha && beam_width == 1 */
	if (s->num_q_heads == s->num_kv_heads) {
		*input = "num_kv_heads";
		return "XQA does not run plain multi-head attention (num_q_heads == num_kv_heads, "
		       "supportConfigCommon)" TRTLLM_MMHA_NEEDS;
	}
	/* supportConfigHMMA */
	if (head_size % 16 != 0 || head_size < 16 || head_size > 256) {
		*input = "head_dim";
		return "XQA takes head_dim 16..256 in steps of 16 only (supportConfigHMMA)" TRTLLM_MMHA_NEEDS;
	}
	const uint32_t head_grp_size = s->num_q_heads / s->num_kv_heads;
	if (head_grp_size * beam_width > 32) {
		*input = "num_kv_heads";
		return "XQA takes GQA groups (num_q_heads / num_kv_heads) of at most 32 "
		       "(supportConfigHMMA)" TRTLLM_MMHA_NEEDS;
	}
	if (!(s->page_size == 16 || s->page_size == 32 || s->page_size == 64 ||
	      s->page_size == 128)) {
		*input = "page_size";
		return "XQA takes KV blocks (page_size, tokens_per_block) of 16, 32, 64 or 128 tokens "
		       "only (supportConfigHMMA)" TRTLLM_MMHA_NEEDS;
	}
	return NULL;
}

/* mha.h: the head padded to 64, 128 or 256 elements (not MLA). */
static uint64_t head_elems(uint32_t validElemsPerHead)
{
	return validElemsPerHead <= 64 ? 64 : (validElemsPerHead <= 128 ? 128 : 256);
}

static uint64_t round_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b * b;
}

struct engine_answer trtllm_launch_batch(const struct engine_shape *s,
					 const struct engine_batch *b,
					 const struct trtllm_options *o, uint32_t *by_seq)
{
	struct engine_zero zero;
	const struct trtllm_options defaults = {false};
	const char *input = NULL;
	const char *why = NULL;

	if (b == NULL || by_seq == NULL) {
		return engine_refused("the batch and its by_seq array must be given", "seq_lens");
	}
	if (engine_batch_refused(s, b,
				 ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS |
				 ENGINE_IN_HEAD_DIM | ENGINE_IN_PAGE_SIZE, &zero)) {
		return engine_refused(zero.reason, zero.input);
	}
	if (o == NULL) {
		o = &defaults;
	}
	if (s->num_splits != 0) {
		return engine_refused("TensorRT-LLM's XQA takes no num_splits argument (its only override "
				      "is the environment variable TRTLLM_XQA_BLOCKS_PER_SEQUENCE, not "
				      "modelled); give 0",
				      "num_splits");
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		return engine_refused("num_q_heads must be a multiple of num_kv_heads", "num_kv_heads");
	}
	if (s->sm_count > (uint32_t)TRTLLM_INT32_MAX) {
		return engine_refused("sm_count must fit TensorRT-LLM's int multiprocessor count",
				      "sm_count");
	}
	why = support_config(s, &input);
	if (why != NULL) {
		return engine_refused(why, input);
	}
	if (s->num_kv_heads > TRTLLM_GRID_YZ_MAX) {
		return engine_refused("num_kv_heads is the XQA grid's y dimension, which CUDA caps at 65535",
				      "num_kv_heads");
	}

	/* AttentionOp::convertMMHAParamsToXQAParams: the step's XQAParams */
	const int num_kv_heads = (int)s->num_kv_heads;
	const int batch_size = (int)b->num_seqs;
	const int multiprocessor_count = (int)s->sm_count;
	/* max of host_past_key_value_lengths: the KV lengths, this step's
	 * token included */
	uint32_t longest = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		longest = b->seq_lens[i] > longest ? b->seq_lens[i] : longest;
	}
	const int max_past_kv_length = (int)longest;
	/* getEnvForceDeterministicAttention() ? false : mMultiBlockMode (true) */
	const bool multi_block_mode = !o->deterministic;
	/* forceXQAKernels(): TRTLLM_FORCE_XQA || getEnvForceDeterministicAttention() */
	const bool mForceXQA = o->deterministic;

	/* DecoderXQAImplJIT::mayHavePerfGain */
	int64_t block_count64 = 0;
	if (!mForceXQA) {
		int multi_block_count = 1;
		if (multi_block_mode) {
			int history_length = max_past_kv_length;
			/* Always use at least 1 block regardless of history length */
			multi_block_count = max_int(1, history_length / kMinHistoryTokensPerBlock);
		}
		block_count64 = (int64_t)num_kv_heads * batch_size * multi_block_count;
		if (block_count64 > TRTLLM_INT32_MAX) {
			return engine_refused("num_kv_heads * num_seqs * (longest seq_len / 128) must fit "
					      "TensorRT-LLM's int block_count (mayHavePerfGain)",
					      "seq_lens");
		}
		const int block_count = (int)block_count64;
		if (!((float)block_count * kEnableMinBlockFactor >= (float)multiprocessor_count)) {
			return engine_refused("XQA would not pay for so few blocks (mayHavePerfGain: "
					      "num_kv_heads * num_seqs * max(1, longest seq_len / 128) * 4 "
					      "< sm_count); a longer or larger batch, or deterministic, runs "
					      "XQA" TRTLLM_MMHA_NEEDS,
					      "seq_lens");
		}
	}

	/* DecoderXQAImplJIT::runImpl: multi_block = 1, or computeMultiBlockCount */
	uint32_t multi_block = 1;
	int after_sqrt = 1;
	if (multi_block_mode) {
		multi_block = (uint32_t)compute_multi_block_count(num_kv_heads, max_past_kv_length,
								  batch_size, multiprocessor_count,
								  &after_sqrt);
	}

	/* mha.cu kernel_mha_impl, isMultiBlock (gridDim.x != 1): the scratch
	 * segments over nbSubSeq = nbSubSeqPerSeq * nbKHeads * batchSize. */
	const uint32_t group = s->num_q_heads / s->num_kv_heads; /* headGrpSize; nbValidRows */
	const uint64_t nbSubSeq = (uint64_t)multi_block * s->num_kv_heads * b->num_seqs;
	uint64_t scratch = 0;
	if (multi_block != 1) {
		const uint64_t warpTile_y = round_up(group, 16);
		const uint64_t row_bytes = 128 * ((warpTile_y + 31) / 32); /* SMemWarpRowMax */
		const uint64_t partial_bytes = 2 * group * head_elems(s->head_dim);
		uint64_t end = 0;
		end = round_up(end, row_bytes) + row_bytes * nbSubSeq;         /* rowMaxBuffers */
		end = round_up(end, row_bytes) + row_bytes * nbSubSeq;         /* rowSumBuffers */
		end = round_up(end, partial_bytes) + partial_bytes * nbSubSeq; /* scratchBuffers */
		if (end > 0xffffffffu) {
			return engine_refused("the multi-block scratch passes the XQA kernel's uint32_t "
					      "segment offsets (4 GiB)",
					      "seq_lens");
		}
		scratch = end;
	}

	for (uint32_t i = 0; i < b->num_seqs; i++) {
		by_seq[i] = multi_block;
	}

	struct engine_answer a;
	engine_answer_init(&a);
	a.num_splits = multi_block;
	a.num_splits_bound = multi_block;
	a.workspace_bytes = scratch;
	engine_term(&a, "batch_size", (uint64_t)batch_size);
	engine_term(&a, "num_kv_heads", (uint64_t)num_kv_heads);
	engine_term(&a, "multiprocessor_count", (uint64_t)multiprocessor_count);
	engine_term(&a, "max_past_kv_length", (uint64_t)max_past_kv_length);
	engine_term(&a, "multi_block_mode", multi_block_mode);
	if (!mForceXQA) {
		engine_term(&a, "block_count", (uint64_t)block_count64);
	}
	if (multi_block_mode) {
		/* computeMultiBlockCount's multi_block_count where the sqrt cap
		 * leaves it (history_length / 128, at most round(sqrt(8x)), at
		 * least 1), before the wave and workspace limits */
		engine_term(&a, "multi_block_count", (uint64_t)after_sqrt);
		engine_term(&a, "maxNbSubSeq", (uint64_t)kXQA_MAX_NUM_SUB_SEQ);
	}
	engine_term(&a, "multi_block", multi_block);
	engine_term(&a, "headGrpSize", group);
	engine_term(&a, "nbSubSeq", multi_block != 1 ? nbSubSeq : 0);
	return a;
}
