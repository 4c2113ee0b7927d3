/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * trtllm — a port of TensorRT-LLM's generation-phase (decode) attention
 * choice on its XQA path: whether a step runs XQA or falls back to the
 * masked-MHA kernel, XQA's multi-block count (one count a launch, from the
 * batch's longest sequence and its size), and the multi-block scratch the
 * XQA kernel carves for that launch.
 *
 * Where it came from
 *   Repository  NVIDIA/TensorRT-LLM, each file at its own commit (the
 *               repository is pinned file by file):
 *     cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/
 *       decoderXQAConstants.h @ 12453212b69bd44c8e7cc7ce46644230e5c84d17
 *          27-30  kMinHistoryTokensPerBlock 128, kEnableMinBlockFactor 4.0f,
 *                 kTargetWaveFactor 8
 *          40-45  getXqaMaxNumSubSeq: 6000 (500 for MLA, not this path)
 *       decoderXQAImplCommon.h @ 12453212b69bd44c8e7cc7ce46644230e5c84d17
 *          computeMultiBlockCount (ported whole, but its
 *          TRTLLM_XQA_BLOCKS_PER_SEQUENCE override, see below)
 *       decoderXQAImplJIT/decoderXQAImplJIT.cpp @ 000a01de66f0eab4ab05640711f0253f50f5209c
 *          DecoderXQAImplJIT::supportConfig, mayHavePerfGain, shouldUse
 *          (forConfigurePlugin = false), runImpl (multi_block =
 *          computeMultiBlockCount(xqaParams, batch_size, SM count) when
 *          multi_block_mode; the HMMA grid {multi_block, nbKVHeads,
 *          batch_size})
 *       decoderXQAImplJIT/kernelUtils.cpp @ 029e0a7cffd69744257868ef76866bd2d27b2232
 *          supportConfigCommon, supportConfigQGMMA, supportConfigHMMA
 *       decoderXQARunner.cpp @ 02947a22cda407113b0c188207e54b385b049d37
 *          DecoderXQARunner::getImplFromXQAParams (the JIT impl unless
 *          TRTLLM_ENABLE_XQA_JIT says otherwise), shouldUse
 *       decoderMaskedMultiheadAttentionLaunch.h @ 05316d3313360012536ace46c781518f5afae75e
 *          mmha_launch_kernel_ex, multi_block_grid_setup (read for the
 *          refusal: the fallback's count needs occupancy queries)
 *     cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention.h
 *       @ 0ab9d17a59c284d2de36889832fe9fc7c8697604
 *          estimate_min_multi_block_count (read, as above)
 *     cpp/tensorrt_llm/kernels/xqaDispatcher.cpp @ 026da036caab5c0332938663c99a90886621cb0f
 *          XqaDispatcher::XqaDispatcher (trtllm-gen on the SM100 family,
 *          DecoderXQARunner elsewhere), shouldUse, getWorkspaceSize and
 *          getWorkspaceAlignment (the reserve, below)
 *     cpp/tensorrt_llm/common/attentionOp.cpp @ 00dbe288d2a76e0ad79107e4ef0907d614744c89
 *          AttentionOp::convertMMHAParamsToXQAParams (multi_block_mode =
 *          getEnvForceDeterministicAttention() ? false : mMultiBlockMode),
 *          enqueueGeneration ("Try XQA optimization first", else the MMHA
 *          dispatch), getWorkspaceSizeForGeneration
 *     cpp/tensorrt_llm/common/envUtils.cpp @ 02734d9e111c8dc242a0e0f413275d2b2578803e
 *          getEnvForceDeterministic (FORCE_DETERMINISTIC=1),
 *          getEnvForceDeterministicAttention, forceXQAKernels (true under
 *          either), getEnvXqaBlocksPerSequence
 *     cpp/kernels/xqa/mha.cu @ 0c7471e0e78181656cfed83d698678b5c0571ff3
 *          kernel_mha_impl: nbSubSeqPerSeq = gridDim.x for every request;
 *          the sequence's tiles of ctaTile.x tokens dealt round-robin to its
 *          sub-sequences (seqIterInit = idxSubSeqInSeq, stride
 *          nbSubSeqPerSeq); the multi-block scratch segments (rowMax,
 *          rowSum, the partial output tiles) and the merge over all
 *          nbSubSeqPerSeq of them.
 *   Read beside them, at the commits the file index holds (not pinned;
 *   each says the same in every version it holds): attentionOp.h
 *   (mMultiBlockMode = true, mEnableXQA = true), cpp/kernels/xqa/mha.h
 *   @ 38bb4a2 (headElems: the head padded to 64, 128 or 256),
 *   mha_components.cuh (ThrdRegRowMaxT = Vec<float, divUp(tileM,
 *   warp_size)>) and xqa's utils.cuh (MemSegmenter::newSeg aligns a
 *   segment to sizeof(T)): the scratch's sizes below lean on these.
 *   Line ranges are given where they could be counted (the constants);
 *   the larger files were read through a file index that answers by
 *   character offset, and the repository's snapshot is too large to fetch
 *   whole, so the others are cited by function.
 *
 * What the launch is
 *   enqueueGeneration converts the step's parameters to XQAParams and asks
 *   XqaDispatcher::shouldUse; on a GPU outside the SM100 family that is
 *   DecoderXQARunner -> the JIT impl -> supportConfig (QGMMA, HMMA) and,
 *   unless XQA is forced, mayHavePerfGain. If it answers yes, one XQA
 *   launch runs the whole batch with one multi_block count (grid.x) for
 *   every request: computeMultiBlockCount from max_past_kv_length (the
 *   batch's longest KV) and batch_size. If no, the step falls back to the
 *   masked-MHA kernel (MMHA), refused here (below).
 *
 * Branches of upstream this port fixes, and why
 *   - bf16 activations and bf16 KV cache (no int8/fp8 KV quantisation):
 *     supportConfigQGMMA needs an E4M3 KV cache, so the JIT compiles the
 *     HMMA kernel, mha.cu (its grid {multi_block, nbKVHeads, batch_size});
 *     convertMMHAParamsToXQAParams leaves multi_block_mode alone for bf16.
 *   - A GPU that runs XQA through DecoderXQARunner: compute capability 8.x,
 *     9.0 or 12.x (an H100 in the worked numbers). On the SM100 family
 *     (B200, GB200) XqaDispatcher runs trtllm-gen kernels instead: not
 *     ported. The compute capability is no input: the caller says which
 *     GPU it asks about by asking this port.
 *   - Paged KV cache (tokens_per_block = shape.page_size), beam width 1,
 *     one query token a request (no speculative decoding, no Medusa), RoPE
 *     (GPT-NeoX/GPTJ/LongRoPE/mRoPE: supportConfigCommon refuses any
 *     other position embedding), causal mask, self-attention, no
 *     StreamingLLM sink tokens, no position shift, no context parallelism,
 *     no sliding window (the cyclic attention window holds every
 *     sequence: max_past_kv_length + 1 <= cyclic_attention_window_size, as
 *     supportConfigHMMA's inference-time check needs).
 *   - mEnableXQA and mMultiBlockMode true (attentionOp.h's defaults; a
 *     runtime_perf_knobs[0] of 0 would turn multi-block off, not
 *     modelled but as deterministic does); FORCE_MULTI_BLOCK_MODE
 *     unset; TRTLLM_FORCE_XQA and TRTLLM_ENABLE_XQA_JIT unset (the JIT
 *     impl); TRTLLM_XQA_BLOCKS_PER_SEQUENCE unset (a user's fixed count,
 *     computeMultiBlockCount's first branch: not ported, so num_splits
 *     must be 0).
 *   - FORCE_DETERMINISTIC=1 (or FORCE_ATTENTION_KERNEL_DETERMINISTIC=1) is
 *     the option deterministic: multi_block_mode false, so multi_block is
 *     1 (no computeMultiBlockCount), and forceXQAKernels() true, so
 *     mayHavePerfGain answers true at once: no short batch falls back to
 *     MMHA then (a config XQA does not support still does).
 *   - max_past_kv_length is the largest of the batch's seq_lens: upstream
 *     takes the max of host_past_key_value_lengths, the KV lengths with
 *     this step's token, which is what engine_batch's seq_lens hold.
 *
 * Arithmetic, type for type
 *   mayHavePerfGain: int multi_block_count = max(1, history_length /
 *     kMinHistoryTokensPerBlock), int block_count = num_kv_heads *
 *     batch_size * multi_block_count, then float(block_count) * 4.0f >=
 *     float(SM count): in float, as upstream (block_count above 2^24
 *     rounds there as it does upstream).
 *   computeMultiBlockCount: int history_length / 128; std::round(std::sqrt(
 *     multi_block_count * 8.F)) in float (the float overloads: sqrtf then
 *     roundf, half away from zero), cast to int; wave_count in double
 *     ((double)batch_size * num_kv_heads * multi_block_count / (double)SM
 *     count, left to right); adj_factor = wave_count / 8.0 in double;
 *     floor(multi_block_count / adj_factor) back into an int; then
 *     max(min(count, 6000 / batch_size), 1) with int division.
 *   The policy core may not call libm, so sqrtf and roundf are done by
 *   hand, exactly: the argument multi_block_count * 8.F is a whole number
 *   below 2^27 that float holds exactly, and whether roundf(sqrtf(N))
 *   rounds up is a comparison of N against the square of the float
 *   midpoint just below k + 0.5 (trtllm.c), in integers. floor of the
 *   non-negative quotient is its truncation. The unit test checks the hand
 *   version against libm's sqrtf/roundf for every argument this port can
 *   form; the Rust oracle uses f32::sqrt and f32::round.
 *
 * Deliberate differences
 *   - Refused where upstream runs the masked-MHA kernel: its count
 *     (mmha_launch_kernel_ex, multi_block_grid_setup) needs
 *     cudaOccupancyMaxActiveBlocksPerMultiprocessor for
 *     masked_multihead_attention_kernel at its thread-block size (with no
 *     dynamic shared memory, and again at the tuned block size with it)
 *     and cudaDevAttrMaxSharedMemoryPerBlockOptin
 *     (estimate_min_multi_block_count): GPU figures no input here holds.
 *     That is every launch XQA does not take: num_q_heads == num_kv_heads
 *     (plain MHA), a GQA group above 32, head_dim not a multiple of 16 or
 *     outside 16..256, page_size outside 16, 32, 64, 128, and, unless
 *     deterministic, a batch too small for XQA to pay (mayHavePerfGain:
 *     num_kv_heads * num_seqs * max(1, longest / 128) * 4 < sm_count).
 *   - num_q_heads % num_kv_heads != 0 is refused (supportConfigCommon
 *     would send it to MMHA; every port refuses it).
 *   - num_kv_heads above 65535 is refused: it is the XQA grid's y
 *     dimension, which CUDA caps at 65535 (the launch would fail).
 *   - Refused where upstream's int or uint32_t would overflow: sm_count
 *     above INT32_MAX (int mMultiProcessorCount), mayHavePerfGain's int
 *     block_count above INT32_MAX, and a scratch whose end passes the
 *     kernel's uint32_t segment offsets (4 GiB).
 *   - shape.num_splits != 0 is refused: XQA takes no split argument; its
 *     only override is the environment variable
 *     TRTLLM_XQA_BLOCKS_PER_SEQUENCE, not modelled.
 *   - blocks_per_sm and cuda_graph are not read (XQA asks no occupancy
 *     query; a CUDA graph does not change the count).
 *
 * What by_seq says
 *   Every request of the launch is split into multi_block sub-sequences
 *   (gridDim.x): mha.cu deals the request's tiles of ctaTile.x tokens to
 *   them round-robin, and the last CTA merges all nbSubSeqPerSeq partial
 *   results (mergeRowMax over nbSubSeqPerSeq), so a request shorter than
 *   multi_block tiles leaves some sub-sequences empty but still merges
 *   them. by_seq[i] is multi_block for every i; num_splits too.
 *   num_splits_bound = num_splits: the bound upstream keeps,
 *   batch_size * multi_block <= 6000 (getXqaMaxNumSubSeq), is applied
 *   inside computeMultiBlockCount, so the count is already within it.
 *
 * workspace_bytes: what it counts
 *   The multi-block scratch one XQA launch (one attention layer's
 *   generation step) writes, as kernel_mha_impl carves it with its
 *   MemSegmenter (each segment aligned to its element's size), over
 *   nbSubSeq = multi_block * num_kv_heads * batch_size sub-sequences:
 *     rowMax   nbSubSeq * sizeof(SMemWarpRowMax), = 128 * ceil(warpTile.y
 *              / 32) bytes, warpTile.y = roundUp(GQA group, 16);
 *     rowSum   the same;
 *     partial  nbSubSeq * gemm1WarpsPerGrp * nbValidRows * 128 bytes =
 *              nbSubSeq * headElems * group * 2 (bf16), headElems = 64, 128
 *              or 256 (head_dim rounded up to one of them, mha.h),
 *              aligned to its own size.
 *   0 when multi_block is 1 (the kernel is not in multi-block mode). Not
 *   counted: the semaphores (a separate buffer of uint32_t, one a request
 *   and KV head), the workspace's fixed head (cu_seqlens,
 *   rotary inv_freq, tokens info, the Q scratch), and the masked-MHA
 *   path's partial buffers. Every layer's launch uses the same scratch in
 *   turn (one workspace for the attention op), so a model needs this once,
 *   not once a layer.
 *
 * What TensorRT-LLM reserves (for a later "reserve")
 *   Yes: it sizes the workspace once, whatever the batch
 *   (AttentionOp::getWorkspaceSizeForGeneration: the larger of the
 *   masked-MHA path's buffers and the XQA ones, for max_num_seq and
 *   max_num_tokens). XqaDispatcher::getWorkspaceSize's multi-block part,
 *   with A = roundUp(2 * 4 (kMaxBeamWidth) * group * head_dim, 128): after
 *   its RoPE and output-conversion buffers (2 * head_dim * num_q_heads *
 *   max_num_tokens bytes each, 128-aligned; xqaMlaCgaXBufSize *
 *   max_num_tokens more), rounded up to A, it adds roundUp(x, A) of each
 *   of 4 * 3000 (semaphores), 4 * roundUp(group, 32) * 6000 (rowMax),
 *   the same (rowSum) and A * 6000 (partial outputs), plus A. That figure
 *   is fixed per model and max_num_tokens; a launch uses the part
 *   workspace_bytes says. Once multi_block > 1 the wave limit keeps
 *   nbSubSeq = multi_block * num_kv_heads * batch_size at or below
 *   8 * sm_count (floor(count / adj_factor) <= 8 * SMs / (batch *
 *   heads)), so the 6000 reserved row slots hold every launch up to 750
 *   SMs. (Not a function here yet.)
 *
 * GPU values it reads
 *   sm_count (getMultiProcessorCount, cudaDevAttrMultiProcessorCount):
 *   required, never guessed. No occupancy figure: a launch that would need
 *   one is refused.
 *
 * License of the upstream: Apache License 2.0 (the repository's LICENSE;
 *   each file's header): "Copyright (c) 2020-2023, NVIDIA CORPORATION.
 *   All rights reserved." (decoderXQA*, kernelUtils.cpp), "Copyright (c)
 *   2020-2024" (xqaDispatcher.cpp), "Copyright (c) 1993-2022 NVIDIA
 *   CORPORATION & AFFILIATES" (attentionOp.cpp), "Copyright (c) 2022-2026
 *   NVIDIA CORPORATION & AFFILIATES" (envUtils.cpp). This file and
 *   trtllm.c are a port (a derivative work) of the Apache-2.0 files above,
 *   modified: rewritten in C for one mixed decode batch, as above.
 *   cpp/kernels/xqa/mha.cu at 0c7471e carries "SPDX-License-Identifier:
 *   NVIDIA TensorRT Source Code License Agreement" in its header: it was
 *   only read, for the facts stated above (how the grid splits a request
 *   and which scratch segments it writes); none of its code is ported.
 *   Licensed under the Apache License, Version 2.0 (the "License"); you
 *   may not use these files except in compliance with the License. You may
 *   obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 *   Unless required by applicable law or agreed to in writing, software
 *   distributed under the License is distributed on an "AS IS" BASIS,
 *   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *   implied. See the License for the specific language governing
 *   permissions and limitations under the License.
 *
 * Its scratch is not monotone: multi_block grows with the longest / 128
 * and is cut back by the batch's waves and 6000 / batch_size
 * (policy/reserve.c searches every size and longest / 128, issue 51).
 *
 * Pure as engine.h promises: no allocation, no I/O, no state, no libm.
 */
#ifndef TRTLLM_H
#define TRTLLM_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every input the choice reads (the batch stands for num_seqs and
 * seq_len). num_splits is not among them: a non-zero value is refused,
 * never read as a choice. */
#define TRTLLM_READS                                                             \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |       \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN |       \
	 ENGINE_IN_PAGE_SIZE)
/* Nothing the caller must ask the GPU at run time beyond its SM count (a
 * launch that would need an occupancy figure is refused). */
#define TRTLLM_GPU_READS 0u

#define TRTLLM_TITLE "TensorRT-LLM XQA generation attention"
#define TRTLLM_REPO "NVIDIA/TensorRT-LLM"
/* Pinned file by file: TRTLLM_FILES names each with its commit; these are
 * the commits, in the files' order. */
#define TRTLLM_COMMIT                                                            \
	"12453212b69bd44c8e7cc7ce46644230e5c84d17 000a01de66f0eab4ab05640711f0253f50f5209c " \
	"029e0a7cffd69744257868ef76866bd2d27b2232 02947a22cda407113b0c188207e54b385b049d37 " \
	"026da036caab5c0332938663c99a90886621cb0f 00dbe288d2a76e0ad79107e4ef0907d614744c89 " \
	"02734d9e111c8dc242a0e0f413275d2b2578803e 0c7471e0e78181656cfed83d698678b5c0571ff3"
#define TRTLLM_FILES                                                             \
	"cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"              \
	"decoderXQAConstants.h@12453212b69bd44c8e7cc7ce46644230e5c84d17 "        \
	"cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"              \
	"decoderXQAImplCommon.h@12453212b69bd44c8e7cc7ce46644230e5c84d17 "       \
	"cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"              \
	"decoderXQAImplJIT/decoderXQAImplJIT.cpp@000a01de66f0eab4ab05640711f0253f50f5209c " \
	"cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"              \
	"decoderXQAImplJIT/kernelUtils.cpp@029e0a7cffd69744257868ef76866bd2d27b2232 " \
	"cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"              \
	"decoderXQARunner.cpp@02947a22cda407113b0c188207e54b385b049d37 "         \
	"cpp/tensorrt_llm/kernels/xqaDispatcher.cpp@026da036caab5c0332938663c99a90886621cb0f " \
	"cpp/tensorrt_llm/common/attentionOp.cpp@00dbe288d2a76e0ad79107e4ef0907d614744c89 " \
	"cpp/tensorrt_llm/common/envUtils.cpp@02734d9e111c8dc242a0e0f413275d2b2578803e " \
	"cpp/kernels/xqa/mha.cu@0c7471e0e78181656cfed83d698678b5c0571ff3"
#define TRTLLM_FUNCTIONS                                                         \
	"computeMultiBlockCount DecoderXQAImplJIT::mayHavePerfGain "             \
	"DecoderXQAImplJIT::shouldUse DecoderXQAImplJIT::runImpl "               \
	"supportConfigCommon supportConfigHMMA supportConfigQGMMA "              \
	"AttentionOp::convertMMHAParamsToXQAParams kernel_mha_impl"

/* The runtime's own choices. */
struct trtllm_options {
	/* FORCE_DETERMINISTIC=1 (or FORCE_ATTENTION_KERNEL_DETERMINISTIC=1):
	 * no multi-block (one block a sequence), and XQA forced (no
	 * perf-gain fallback to the masked-MHA kernel). Default false. */
	bool deterministic;
};

/*
 * One generation-phase attention launch of one layer over the mixed batch
 * b (engine.h's engine_batch, read in place of s->num_seqs and
 * s->seq_len, which are ignored), with the runtime options o (NULL: the
 * upstream defaults, deterministic false).
 *
 * Reads s->sm_count, num_q_heads, num_kv_heads, head_dim and page_size
 * (tokens per KV block); s->num_splits must be 0; blocks_per_sm and
 * cuda_graph are not read.
 *
 * OK (the launch runs XQA): writes by_seq[i] (an array of b->num_seqs the
 * caller owns) = multi_block, the sub-sequences every request is split
 * into; num_splits = num_splits_bound = multi_block (1 when
 * deterministic, or when the count comes out 1); workspace_bytes = the
 * multi-block scratch the kernel writes for this launch, in bytes, of one
 * layer's launch (layers share it in turn), 0 when multi_block is 1; terms
 * under upstream's names ("max_past_kv_length", "block_count",
 * "multi_block_count", "nbSubSeq", ...).
 *
 * Refused (a static reason and the input to change): a count of 0 or a
 * batch out of engine.h's bounds; a launch TensorRT-LLM would hand to its
 * masked-MHA kernel (the reason names the GPU figures that kernel's count
 * needs: occupancy of masked_multihead_attention_kernel and the opt-in
 * shared memory per block); num_splits != 0; an overflow of upstream's
 * int/uint32_t or of CUDA's grid. by_seq is not written.
 *
 * Pure and thread-safe; b, its seq_lens and by_seq are only read/written
 * during the call. With every length equal, every by_seq is the same and
 * the answer depends on the length and the count only (upstream reads
 * nothing else of the batch).
 */
struct engine_answer trtllm_launch_batch(const struct engine_shape *s,
					 const struct engine_batch *b,
					 const struct trtllm_options *o, uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* TRTLLM_H */
