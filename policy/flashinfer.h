/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * flashinfer — a port of FlashInfer's batch decode plan on its CUDA-core
 * (non tensor-core) path: how many KV chunks each request is split into,
 * and the tmp_v / tmp_s float workspace the plan carves for the split;
 * and (issue 49) of both decode plans over a mixed batch, the CUDA-core
 * one and the tensor-core one (the prefill plan), in
 * flashinfer_launch_batch: notes on that below the CUDA-core ones.
 *
 * Where it came from
 *   Repository  flashinfer-ai/flashinfer
 *   Commit      fb28d7242b3506a2348265962041acc1fb56cca4
 *   Ported, line ranges at that commit:
 *     include/flashinfer/attention/scheduler.cuh
 *        60-99   PartitionPagedKVCacheBinarySearchMinNumPagePerBatch
 *       148-210  BatchDecodeWithPagedKVCacheWorkEstimationDispatched
 *       348-364  DecodeSplitKVIndptr (num_chunks_kv)
 *       424-508  DecodePlanImpl (padded_batch_size 440-445, split_kv, the
 *                float allocator's batch_decode_tmp_v / batch_decode_tmp_s
 *                480-501), called by DecodePlan 510-525
 *     include/flashinfer/allocator.h
 *        33-100  AlignedAllocator::aligned_alloc_offset / num_allocated_bytes
 *     include/flashinfer/utils.cuh
 *       142-165  DISPATCH_GQA_GROUP_SIZE (1, 2, 3, 4, 6, 8)
 *       196-224  DISPATCH_HEAD_DIM (64, 128, 256, 512)
 *       341-344  ceil_div
 *   Read for what reaches the plan and what is refused:
 *     csrc/batch_decode.cu 39-81 (BatchDecodeWithPagedKVCachePlan: indptr
 *       must be int32, head_dim_qk == head_dim_vo, the GQA dispatch at 63);
 *     include/flashinfer/attention/decode.cuh 743-829
 *       (BatchDecodeWithPagedKVCacheDispatched: the run dispatches the same
 *       group sizes, 760, and a split launch merges through
 *       VariableLengthMergeStates, 816-819);
 *     include/flashinfer/attention/cascade.cuh 692-742
 *       (VariableLengthMergeStates dispatches DISPATCH_HEAD_DIM, 703);
 *     flashinfer/decode.py 1417-1777 (BatchDecodeWithPagedKVCacheWrapper.
 *       _plan_impl: fixed_split_size raises on this path, 1539-1542; the
 *       CUDA-core plan call, 1737-1768);
 *     flashinfer/utils.py 786-796 (the float workspace buffer is checked
 *       16-byte aligned);
 *     flashinfer/aot.py 1051 (the head dims built ahead of time: 64, 128, 256).
 *
 * Branches of upstream this port fixes, and why
 *   - The CUDA-core decode (use_tensor_cores=False, backend "auto"/"fa2"),
 *     not the tensor-core (prefill-plan) path, trtllm-gen or cute-dsl, nor
 *     the MLA work estimations (scheduler.cuh 212-336): issue 44 asks for
 *     this one.
 *   - One query token per request, no RoPE in the kernel, no sliding
 *     window, no soft cap, bf16 Q/KV/O, IdType int32: the fixed setting.
 *     None of them changes the plan's arithmetic here; the dtype and the
 *     compute capability (DISPATCH_COMPUTE_CAP_DECODE_NUM_STAGES_SMEM) only
 *     reach it through the occupancy query, whose answer is an input.
 *   - Every request has num_pages = ceil(seq_len / page_size) pages (the
 *     last holding the rest), so each loop over the requests is one
 *     request's term times num_seqs, in the same uint32_t arithmetic (an
 *     unsigned sum of equal terms wraps exactly as their product does);
 *     the max over the requests is that one request's value.
 *   - MATERIALIZE = true (DecodePlan, not DecodePlanWorkspaceSize): the
 *     float allocator runs on the caller's buffer, which decode.py checks
 *     16-byte aligned, so its offsets are those of counting mode from 0.
 *   - num_blocks_per_sm, which upstream asks
 *     cudaOccupancyMaxActiveBlocksPerMultiprocessor (scheduler.cuh 180),
 *     and num_sm (cudaDevAttrMultiProcessorCount, 179) are inputs:
 *     shape.blocks_per_sm (required: 0 is refused, it is a run-time GPU
 *     value to give, never guessed) and shape.sm_count.
 *
 * Deliberate differences
 *   - Refused where upstream fails: a launch that splits (split_kv) with
 *     head_dim outside DISPATCH_HEAD_DIM (64, 128, 256, 512). The JIT
 *     compiles the decode kernel for the head_dim it is given, but a split
 *     launch merges its chunks through VariableLengthMergeStates, which
 *     dispatches only those sizes and raises "Unsupported head_dim"
 *     otherwise; a launch that does not split never reaches the merge and
 *     is answered for any head_dim, as upstream runs it. (Until issue 49
 *     this port refused those sizes whether or not the launch split.) GQA
 *     group sizes outside DISPATCH_GQA_GROUP_SIZE (1, 2, 3, 4, 6, 8) are
 *     refused as upstream raises for them.
 *   - num_q_heads % num_kv_heads != 0 is refused (upstream would dispatch
 *     the truncated quotient); every port of issue 44 refuses it.
 *   - shape.num_splits != 0 is refused: this path takes no split argument
 *     (fixed_split_size raises a ValueError for it, decode.py 1539-1542).
 *   - Refused where upstream's own types cannot hold the shape: the int32
 *     page indptr (num_seqs * num_pages above INT32_MAX) and the int
 *     num_blocks_per_sm * num_sm (above INT32_MAX, an overflow upstream
 *     does not define; the occupancy query never returns such a count).
 *   - Not modelled: the workspace buffers' capacity ("Buffer overflow ...
 *     Increase the workspace buffer size"): their sizes are the caller's
 *     and no input here; workspace_bytes is what the float buffer must
 *     hold. The int workspace (request_indices, kv_tile_indices, o_indptr,
 *     block_valid_mask) is not counted, as issue 44 asks for tmp_v + tmp_s.
 *   - The plan's tmp_v is sized with sizeof(float) even though the run
 *     writes DTypeO into it; the port keeps the plan's size, as upstream.
 *
 * A mixed batch (flashinfer_launch_batch, issue 49)
 *   Both paths read request i's pages, ceil(seq_lens[i] / page_size), as
 *   its kv_indptr step; every loop over the requests above is a loop again
 *   (the uniform port's products are its sums), so each request's chunk
 *   count comes from the whole batch: the CUDA-core binary search sums
 *   ceil(pages_i / chunk) over all requests, and so does the tensor-core
 *   one. by_seq[i] is request i's num_chunks_kv (1 where the plan does not
 *   split), num_splits the largest.
 *
 *   The tensor-core path (use_tensor_cores=True; vLLM's and SGLang's)
 *   Ported, line ranges at the same commit:
 *     include/flashinfer/attention/scheduler.cuh
 *       101-130  PrefillBinarySearchKVChunkSize
 *       545-683  PrefillSplitQOKVIndptr (step 2: min_kv_chunk_size, cta_tile_q,
 *                total_num_tiles_q, the kv_chunk_size choice: disabled,
 *                fixed_split_size or the search; step 3: the tiles,
 *                new_batch_size, padded_batch_size and its FLASHINFER_CHECK)
 *       764-894  PrefillPlanImpl (num_blocks_per_sm = 2 and max_grid_size
 *                788-791; batch_prefill_tmp_v / tmp_s 855-864)
 *     include/flashinfer/utils.cuh
 *       408-486  FA2DetermineCtaTileQ
 *   Read: flashinfer/decode.py 1670-1737 (the plan call: qo_indptr is
 *     arange, total_num_rows = batch_size, head_dim as qk and vo,
 *     fixed_split_size None -> -1, num_colocated_ctas 0, uniform_q_len 0;
 *     backend "auto" is "fa2" for bf16); csrc/batch_prefill.cu 48-75 (the
 *     plan reads kv_indptr, in pages, never kv_len_arr; kv_dtype_bytes =
 *     sizeof(DTypeKV) = 2) and 343-366 (tmp_v only when split_kv);
 *     include/flashinfer/attention/prefill.cuh 4512-4521 (a split launch
 *     merges through VariableLengthMergeStates, DISPATCH_HEAD_DIM).
 *   GPU values it reads: the SM count (cudaDevAttrMultiProcessorCount,
 *     shape.sm_count). No occupancy figure: num_blocks_per_sm is the
 *     constant 2, so blocks_per_sm is not read (0 is fine).
 *     FA2DetermineCtaTileQ also asks the compute capability (8 or later:
 *     bf16 runs on nothing earlier, so fixed) and, for one query row a
 *     request under a GQA group of at most 16, the opt-in shared memory
 *     per block (cudaDevAttrMaxSharedMemoryPerBlockOptin): it picks 16
 *     rows when 16 * head_dim * 2 + 2 * head_dim * 16 * 4 * 2 (= 288 *
 *     head_dim bytes) fits, else 64. That fits every sm80+ part (99 KB at
 *     the least) for head_dim up to 352; for 353..511 it depends on the
 *     GPU, but no answer does: 16 and 64 rows both hold the packed query
 *     in one tile, so the search and the chunks are the same, and only
 *     tmp_v / tmp_s and the CUDA graph's padded batch change, which a
 *     launch reads only when it splits, and a split launch at such a
 *     head_dim is refused by the merge. This port uses 99 KB; the Rust
 *     oracle uses an H100's 227 KB, and the batch sweep finds them equal.
 *   Fixed as for the CUDA-core path (one query row, no window, bf16,
 *     int32 indices); plus backend fa2 (decode.py picks fa3 only for fp8).
 *   Deliberate differences:
 *     - fixed_split_size above INT32_MAX is refused (the plan's int32_t
 *       parameter would wrap it), as is 2 * sm_count above INT32_MAX (the
 *       int max_grid_size).
 *     - shape.num_splits != 0 is refused: this path's split argument is
 *       the option fixed_split_size, in pages.
 *     - The FLASHINFER_CHECK new_batch_size <= padded_batch_size (a CUDA
 *       graph with a fixed_split_size whose chunks outnumber the padded
 *       batch) is a refusal naming fixed_split_size.
 *     - No group-size dispatch on this path (the prefill kernel packs the
 *       group into query rows); num_q_heads % num_kv_heads != 0 is refused
 *       as PrefillPlanImpl raises (776-781).
 *     - kv_chunk_size as a term is in tokens (step 4 multiplies it by
 *       page_size) and left out when split_kv is disabled (INT64_MAX
 *       times page_size overflows upstream).
 *     - A head_dim the JIT cannot build a prefill kernel for (upstream's
 *       own comment: head_dim_vo 257..511 fails a static_assert) is not
 *       refused when the launch does not split: the plan answers before
 *       the build, and this port answers what the plan chooses.
 *   The CUDA-core path over a batch refuses a fixed_split_size (decode.py
 *   1539-1542 raises) and ignores disable_split_kv, which decode.py never
 *   hands the CUDA-core plan (1752-1768).
 *   No floating point reaches either plan: every quantity is an integer
 *   (the tensor-core search in int64_t, the CUDA-core one in uint32_t).
 *
 * License of the upstream: Apache License 2.0 (LICENSE at that commit).
 *   scheduler.cuh, allocator.h, utils.cuh: "Copyright (c) 2023 by
 *   FlashInfer team." NOTICE: "FlashInfer / Copyright 2025-2026 NVIDIA /
 *   Copyright 2023-2026 FlashInfer community (https://flashinfer.ai/)".
 *   This file and flashinfer.c are a port (a derivative work) of those
 *   files, modified: rewritten in C for one uniform or mixed batch, as
 *   above.
 *   Licensed under the Apache License, Version 2.0 (the "License"); you
 *   may not use these files except in compliance with the License. You may
 *   obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 *   Unless required by applicable law or agreed to in writing, software
 *   distributed under the License is distributed on an "AS IS" BASIS,
 *   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *   implied. See the License for the specific language governing
 *   permissions and limitations under the License.
 *
 * Its scratch is monotone in the batch size and every length only with a
 * fixed_split_size on the tensor-core path; under a CUDA graph the
 * CUDA-core plan holds one buffer whatever the batch and the tensor-core
 * plan one that grows with the batch size; without a graph both depend on
 * the mix and are bounded by max_grid_size (policy/reserve.c, issue 51).
 *
 * Pure as engine.h promises: no allocation, no I/O, no state.
 */
#ifndef FLASHINFER_H
#define FLASHINFER_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every input the plan reads. num_splits is not among them: a non-zero
 * value is refused, never read as a choice. */
#define FLASHINFER_READS                                                         \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |       \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN |       \
	 ENGINE_IN_PAGE_SIZE | ENGINE_IN_BLOCKS_PER_SM | ENGINE_IN_CUDA_GRAPH |  \
	 ENGINE_IN_TENSOR_CORES | ENGINE_IN_FIXED_SPLIT_SIZE | ENGINE_IN_DISABLE_SPLIT_KV)
/* What only the GPU knows: cudaOccupancyMaxActiveBlocksPerMultiprocessor. */
#define FLASHINFER_GPU_READS (ENGINE_IN_BLOCKS_PER_SM)

#define FLASHINFER_TITLE "FlashInfer batch decode"
#define FLASHINFER_REPO "flashinfer-ai/flashinfer"
#define FLASHINFER_COMMIT "fb28d7242b3506a2348265962041acc1fb56cca4"
#define FLASHINFER_FILES                                                         \
	"include/flashinfer/attention/scheduler.cuh include/flashinfer/allocator.h " \
	"include/flashinfer/utils.cuh"
#define FLASHINFER_FUNCTIONS                                                     \
	"DecodePlan DecodePlanImpl BatchDecodeWithPagedKVCacheWorkEstimationDispatched " \
	"PartitionPagedKVCacheBinarySearchMinNumPagePerBatch DecodeSplitKVIndptr "   \
	"AlignedAllocator::aligned_alloc_offset"
/* The tensor-core path's (flashinfer_launch_batch with tensor_cores). */
#define FLASHINFER_TC_FUNCTIONS                                                  \
	"PrefillPlan PrefillPlanImpl PrefillSplitQOKVIndptr "                    \
	"PrefillBinarySearchKVChunkSize FA2DetermineCtaTileQ "                   \
	"AlignedAllocator::aligned_alloc_offset"

/* One CUDA-core batch decode plan for s: num_splits = num_chunks_kv when
 * split_kv, else 1 (num_splits_bound the same); workspace_bytes = the
 * float allocator's num_allocated_bytes (batch_decode_tmp_v +
 * batch_decode_tmp_s), 0 when split_kv is false. */
struct engine_answer flashinfer_launch(const struct engine_shape *s);

/* What the tensor-core path reads of the GPU: sm_count alone (its
 * num_blocks_per_sm is the constant 2, no occupancy query). cuda_graph is
 * read by both paths. */
#define FLASHINFER_TC_READS                                                      \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |       \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN |       \
	 ENGINE_IN_PAGE_SIZE | ENGINE_IN_CUDA_GRAPH | ENGINE_IN_TENSOR_CORES |   \
	 ENGINE_IN_FIXED_SPLIT_SIZE | ENGINE_IN_DISABLE_SPLIT_KV)
/* Nothing the caller must ask the GPU at run time beyond its SM count. */
#define FLASHINFER_TC_GPU_READS 0u

/* The wrapper's own choices, as BatchDecodeWithPagedKVCacheWrapper takes
 * them (flashinfer/decode.py). */
struct flashinfer_options {
	/* use_tensor_cores=True: the prefill plan (PrefillPlan), the path vLLM
	 * and SGLang use; false: the CUDA-core DecodePlan of flashinfer_launch */
	bool tensor_cores;
	/* plan(fixed_split_size=N): every request's KV cut in chunks of N
	 * pages (tensor cores only; SGLang's deterministic mode sets it);
	 * 0 = not set (None). Above INT32_MAX is refused: the plan takes an
	 * int32_t. Non-zero on the CUDA-core path is refused, as decode.py
	 * raises. */
	uint32_t fixed_split_size;
	/* plan(disable_split_kv=True): no split (tensor cores); the CUDA-core
	 * plan is never passed it (decode.py 1752-1768), so there it changes
	 * nothing, as upstream. */
	bool disable_split_kv;
};

/*
 * One decode launch over the mixed batch b (engine.h's engine_batch, read
 * in place of s->num_seqs and s->seq_len, which are ignored), on the path
 * and with the plan options o (NULL: the defaults, all false/0).
 *
 * OK: writes by_seq[i] (an array of b->num_seqs the caller owns) with the
 * chunks (splits) sequence i's KV is cut into in this launch, 1 where it
 * runs whole; num_splits (and num_splits_bound) = the largest of them;
 * workspace_bytes = the plan's float workspace (tmp_v + tmp_s, each
 * 16-byte aligned), 0 when the plan does not split; terms under upstream's
 * names (for "num_pages", "num_chunks_kv" and "max_kv_len": the longest
 * request's). Refused (a static reason and input): by_seq is not written.
 *
 * With every length equal to L and o NULL or all defaults, the answer is
 * flashinfer_launch's for num_seqs sequences of L (the same counts, bytes
 * and terms; a refusal names the same input, in words fit for a batch).
 * Pure and thread-safe; b, its seq_lens and by_seq are only read/written
 * during the call.
 */
struct engine_answer flashinfer_launch_batch(const struct engine_shape *s,
					     const struct engine_batch *b,
					     const struct flashinfer_options *o, uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* FLASHINFER_H */
