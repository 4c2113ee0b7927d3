/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * flashinfer — a port of FlashInfer's batch decode plan on its CUDA-core
 * (non tensor-core) path: how many KV chunks each request is split into,
 * and the tmp_v / tmp_s float workspace the plan carves for the split.
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
 * License of the upstream: Apache License 2.0 (LICENSE at that commit).
 *   scheduler.cuh, allocator.h, utils.cuh: "Copyright (c) 2023 by
 *   FlashInfer team." NOTICE: "FlashInfer / Copyright 2025-2026 NVIDIA /
 *   Copyright 2023-2026 FlashInfer community (https://flashinfer.ai/)".
 *   This file and flashinfer.c are a port (a derivative work) of those
 *   files, modified: rewritten in C for one uniform batch, as above.
 *   Licensed under the Apache License, Version 2.0 (the "License"); you
 *   may not use these files except in compliance with the License. You may
 *   obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 *   Unless required by applicable law or agreed to in writing, software
 *   distributed under the License is distributed on an "AS IS" BASIS,
 *   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *   implied. See the License for the specific language governing
 *   permissions and limitations under the License.
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
	 ENGINE_IN_PAGE_SIZE | ENGINE_IN_BLOCKS_PER_SM | ENGINE_IN_CUDA_GRAPH)
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

/* One CUDA-core batch decode plan for s: num_splits = num_chunks_kv when
 * split_kv, else 1 (num_splits_bound the same); workspace_bytes = the
 * float allocator's num_allocated_bytes (batch_decode_tmp_v +
 * batch_decode_tmp_s), 0 when split_kv is false. */
struct engine_answer flashinfer_launch(const struct engine_shape *s);

#ifdef __cplusplus
}
#endif

#endif /* FLASHINFER_H */
