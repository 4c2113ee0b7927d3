/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 AND BSD-3-Clause */
/*
 * vllm_v1 — vLLM V1's FLASH_ATTN backend for one paged decode step over a
 * mixed batch, ported: which FlashAttention it runs (FA3 on compute
 * capability 9.x, FA2 elsewhere, FA4 on 10.x refused), the num_splits
 * vLLM passes it (max_num_splits, fixed under full CUDA graphs), the batch
 * as a full graph pads it, and what the FlashAttention of vLLM's fork then
 * splits each sequence into and allocates for the split.
 *
 * Where it came from
 *   vllm-project/vllm at 81be2e09aebfd1c45b3ed9f73d2850da8a72984c
 *   (Apache-2.0, "Copyright contributors to the vLLM project"), read at
 *   that commit in the fork MatthewBonanni/vllm:
 *     vllm/v1/attention/backends/flash_attn.py
 *       139-150  get_kv_cache_shape (block_size % 16 != 0 raises)
 *       176-183  supports_head_size (a multiple of 8, at most 256 here)
 *       339-364  FlashAttentionMetadataBuilder._cudagraph_support (FA3
 *                ALWAYS, FA2 UNIFORM_BATCH: a decode batch is uniform)
 *       395-396  max_num_splits = 0, aot_schedule = (FA version == 3)
 *       412-438  use_full_cuda_graph = cudagraph_mode.has_full_cudagraphs();
 *                max_cudagraph_size; with FA3 and full graphs
 *                max_num_splits = flash_attn_max_num_splits_for_cuda_graph
 *       479-570  build(): aot_schedule off under VLLM_BATCH_INVARIANT;
 *                max_num_splits kept only when num_actual_tokens <=
 *                max_cudagraph_size (521-531), 1 under batch invariance
 *                (533-534); schedule() -> get_scheduler_metadata with
 *                max_seqlen_q = max_query_len, max_seqlen_k = max_seq_len,
 *                page_size = block_size, causal, window (-1, -1),
 *                num_splits = max_num_splits (536-562; 663-670 the call)
 *       874-1110 forward(): flash_attn_varlen_func(q[:num_actual_tokens],
 *                cu_seqlens_q, max_seqlen_q, seqused_k, max_seqlen_k,
 *                block_table, scheduler_metadata, num_splits =
 *                max_num_splits)
 *     vllm/v1/attention/backends/fa_utils.py 140-280 get_flash_attn_version
 *       (9.x and FA3 built: 3; 10.x: 4; else 2; FA4 under
 *       VLLM_BATCH_INVARIANT: 2, 235-241)
 *     vllm/platforms/cuda.py 83-164 (_get_backend_priorities: FLASH_ATTN
 *       first except on 10.x, where FLASHINFER is; this port answers for
 *       FLASH_ATTN wherever it is chosen)
 *     vllm/config/attention.py 46 (flash_attn_max_num_splits_for_cuda_graph
 *       = 32); vllm/config/compilation.py 53-63, 600-705 (CUDAGraphMode,
 *       FULL_AND_PIECEWISE the V1 default); vllm/config/vllm.py 1805-1940
 *       (_set_cudagraph_sizes: [1, 2, 4] + range(8, min(max + 1, 256), 8)
 *       + range(256, max + 1, 16); the max the largest of them)
 *     vllm/v1/worker/gpu_model_runner.py 2293-2450
 *       (_build_attention_metadata: seq_lens[num_reqs:] are 0 (2204), the
 *       padded num_reqs and num_tokens under a full graph, and max_seq_len
 *       = max_model_len when capturing, 2325-2330), 4295-4390 (pad_attn
 *       = the runtime mode is FULL)
 *     vllm/model_executor/layers/batch_invariant.py (read: it changes no
 *       attention argument; VLLM_BATCH_INVARIANT does, through the files
 *       above)
 *   vllm-project/flash-attention at f3e1a4f74c99145c0717709860bf765de1703779
 *   (BSD-3-Clause), the FlashAttention vLLM builds
 *   (cmake/external_projects/vllm_flash_attn.cmake):
 *     hopper/heuristics.h    10-14 use_one_mma_wg, 16-24 should_pack_gqa,
 *                            32-66 num_splits_heuristic
 *     hopper/tile_size.h     10-93 tile_size_fwd_sm90 (its element_size 2
 *                            half, 13-52, with use_one_mma_wg)
 *     hopper/flash_api.cpp   39 PREPARE_VARLEN_MAX_BATCHES_1CTA,
 *                            464-474 get_pagedkv_tma, 476-496 get_pack_gqa,
 *                            498-533 get_num_splits, 554-571
 *                            round_up_headdim, 584-726
 *                            mha_fwd_get_scheduler_metadata (the causal
 *                            rule for max_seqlen_q == 1, 641-646; 668
 *                            num_splits), 737-1313 mha_fwd (seqlen_k =
 *                            max_seqlen_k 835; 868-873 the same causal
 *                            rule; 933 alignment; 1059 num_splits, 1070
 *                            b > 992 -> 1, 1092 the scheduler metadata
 *                            given; 1180-1192 out_accum and
 *                            softmax_lse_accum, the varlen-q shapes 1190)
 *     hopper/flash_prepare_scheduler.cu 43-210
 *                            prepare_varlen_num_blocks_kernel (81-95 and
 *                            127-130 num_m_blocks; 97-121 num_n_blocks;
 *                            143-164 the split), 214-250
 *                            prepare_varlen_num_blocks
 *     csrc/flash_attn/flash_api.cpp 307-341 num_splits_heuristic,
 *                            343-370 set_params_splitkv, 563-838
 *                            mha_varlen_fwd (block size % 16 at 637, the
 *                            causal drop 639, the GQA swap 646-652, head
 *                            size checks 657-659, head_size_rounded 704,
 *                            set_params_splitkv only when swapped and the
 *                            paged branch otherwise, 756-765)
 *
 * Reuse of policy/fa3.c and policy/fa2.c (Dao-AILab at 0251105a): none,
 * and why. The fork differs where the split is decided:
 *   - tile_size_fwd_sm90 takes use_one_mma_wg (heuristics.h 10-14: sm90,
 *     head_dim exactly 64 or 128, not local, group <= 64): a 64-row tile
 *     ({64, 128} at head_dim 128 causal, {64, 192} at 64); otherwise, at
 *     head_dim 128, {128, 128 or 160} where Dao has {128, 128 or 176}; at
 *     96 {192, 128 or 144}; at 64 non-causal 192 or 160; at 192 with
 *     head_dim_v > 128 96 not 112. kBlockM sets num_m_blocks and
 *     kBlockN every num_n_blocks, so the counts differ.
 *   - mha_fwd reads max_seqlen_k (vLLM's max_seq_len, exact) where Dao's
 *     fa3 port takes the page table's width (rounded up to a page).
 *   - vLLM passes causal=True, and both the fork and Dao keep is_causal
 *     for a query of one token only at 64 < head_dim <= 128 with a page
 *     table; fa3_launch_batch fixes causal=False.
 *   - The prepare kernel's split (143-161) is the same formula as Dao's;
 *     it is ported here again (its inputs, kBlockM and kBlockN, differ).
 *   - FA2: vLLM calls mha_varlen_fwd (block table, block size % 16), not
 *     mha_fwd_kvcache (page % 256) which fa2_launch_batch ports, and
 *     splits only under the GQA swap. num_splits_heuristic and
 *     set_params_splitkv are the same lines as Dao's (diffed), ported
 *     again here because fa2.c's take mha_fwd_kvcache's seqlen_k.
 *   So policy/vllm_v1.c calls no other port; the FA3 and FA2 pieces in it
 *   keep fa3.c's and fa2.c's structure, to diff by eye.
 *
 * The branches of upstream this port fixes, and why
 *   - A decode step: one query token per sequence (max_query_len 1,
 *     num_actual_tokens = num_seqs), causal (a decoder), no sliding
 *     window, no cascade (common_prefix_len 0), no DCP, no spec decode
 *     (fast_build false), no ALiBi, no sinks, bf16 KV (no fp8 cache), no
 *     soft cap, head_size_v = head_size, sm_margin 0.
 *   - FA version (fa_utils.py): compute_capability major 9 -> FA3; 10 ->
 *     FA4 (refused: not ported) unless batch_invariant, which makes it FA2,
 *     or head_dim above 128 and not 256, which FA4 does not hold (FA2);
 *     any other major from 8 (8.x, 11.x, 12.x) -> FA2 (step 1 gives FA4
 *     only to major 10; the brief's "12.x FA4" is not what the code
 *     says); below 8 refused (is_fa_version_supported(2) is false there
 *     and the assert fails). No flash_attn_version override.
 *   - CUDA graphs: use_full_cuda_graph is FULL_AND_PIECEWISE or
 *     FULL_DECODE_ONLY. A decode batch of num_seqs <= the largest capture
 *     size then replays a FULL graph (FA3 ALWAYS, FA2 UNIFORM_BATCH: a
 *     decode batch is uniform), padded to the smallest capture size >=
 *     num_seqs: the padded sequences have seq_len 0 and query length 0 or
 *     1, so 0 KV blocks, which adds nothing to total_blocks; they are not
 *     reported. The largest capture size is max_capture_size's largest
 *     member of the list above (vllm.py, the list's last element), with
 *     max_num_batched_tokens taken as above it (its default is), and
 *     max_num_seqs as at least the padded size (cudagraph_dispatcher.py
 *     206-230 keys decode FULL graphs only up to max_num_seqs; a batch
 *     padded past it, possible only when max_num_seqs is not itself a
 *     capture size, would run PIECEWISE, unpadded, still with
 *     max_num_splits 32: not modelled).
 *   - FA3 (aot_schedule): max_num_splits = 32 when use_full_cuda_graph and
 *     num_seqs <= the largest capture size (under FULL_AND_PIECEWISE this
 *     holds whether or not the step replays a graph: build() reads the
 *     config, not the step's mode), else 0 (get_num_splits). The AOT
 *     get_scheduler_metadata and mha_fwd see the same arguments, so
 *     mha_fwd's params.num_splits and the metadata's per-batch split are
 *     one computation here. batch_invariant: no AOT, num_splits = 1, so
 *     every sequence 1 and no scratch.
 *   - FA2: vLLM's max_num_splits stays 0 (only the FA3 branch sets 32), so
 *     set_params_splitkv's heuristic decides, on the host, once per call:
 *     every sequence gets that count (one grid; a split past a short
 *     sequence's own blocks returns at once, launched and counted, as
 *     fa2.h says). Under a full graph the
 *     count is the one the capture ran: batch = the capture size, and
 *     max_seqlen_k = max_model_len (gpu_model_runner.py 2325-2328), which
 *     the replay bakes in whatever the batch's lengths: max_model_len is
 *     then required (0 refused) where the count reads it (the GQA swap,
 *     no batch invariance), and below the longest sequence refused.
 *     Eager (NONE, PIECEWISE, or above the capture sizes): the batch's own
 *     size and longest length. batch_invariant: num_splits = 1.
 *   - FA2 splits only when seqlenq_ngroups_swapped (num_q_heads >
 *     num_kv_heads here); MHA takes the paged branch, num_splits 0 or 1,
 *     one split and no scratch.
 *
 * Deliberate differences
 *   - The FA3 split's float quotient is IEEE single division here; the
 *     prepare kernel is built with --use_fast_math (as fa3.h says): where
 *     the quotient is within 2 ulp of a whole number the GPU may move
 *     blocks_per_sm by one; the term blocks_per_sm_near_whole says so.
 *   - ceilf by hand (no libm), as fa3.c and fa2.c.
 *   - Upstream's int intermediates (seqlen_k * (d + dv) * 2, the sum of
 *     blocks, batch * heads * m_blocks) that would overflow are refused.
 *   - s->num_splits != 0 is refused: vLLM has no such argument (its
 *     max_num_splits comes from the config, fixed at 32 here).
 *   - The batch's own refusals (engine.h).
 *
 * What workspace_bytes counts: the split-K scratch of one attention
 * layer's launch, in bytes: FA3 out_accum (num_splits x num_q_heads x
 * total_q x head_dim float32) + softmax_lse_accum (num_splits x
 * num_q_heads x total_q float32) when params.num_splits > 1, total_q the
 * padded token count under a full graph; FA2 softmax_lse_accum
 * (num_splits x batch x num_kv_heads x ngroups) + out_accum (the same x
 * head_size_rounded) float32 when num_splits > 1, batch and num_splits the
 * capture's under a full graph. Each layer allocates its own from
 * PyTorch's caching allocator (or the graph's pool) and frees it when the
 * call returns, so layers reuse one block: not multiplied by layers. The
 * scheduler metadata (int32, 1 + round_up(b, 4) * 4) is not counted.
 *
 * Its scratch is not monotone in the batch size: a full graph fixes FA3's
 * 32 splits and pads the batch, eager FA3 multiplies the longest's count
 * by the batch up to 992 sequences (1 split past it), and eager FA2's
 * heuristic falls as the batch grows (policy/reserve.c searches them).
 *
 * What it never does: allocate, perform I/O or keep state; pure and
 * thread-safe, writes only the caller's by_seq.
 *
 * Licenses: vLLM's code is Apache-2.0 (LICENSE at that commit; its files
 * "SPDX-FileCopyrightText: Copyright contributors to the vLLM project").
 * The fork's FlashAttention, whose FA3 and FA2 pieces vllm_v1.c ports, is
 * BSD-3-Clause (its hopper/ files "Copyright (c) 2024, Jay Shah, Ganesh
 * Bikshandi, Ying Zhang, Vijay Thakkar, Pradeep Ramani, Tri Dao.", csrc/
 * "Copyright (c) 2024, Tri Dao."); LICENSE at that commit, whose notice a
 * port keeps:
 *
 * BSD 3-Clause License
 *
 * Copyright (c) 2022, the respective contributors, as shown by the AUTHORS file.
 * All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without
 * modification, are permitted provided that the following conditions are met:
 *
 * * Redistributions of source code must retain the above copyright notice, this
 *   list of conditions and the following disclaimer.
 *
 * * Redistributions in binary form must reproduce the above copyright notice,
 *   this list of conditions and the following disclaimer in the documentation
 *   and/or other materials provided with the distribution.
 *
 * * Neither the name of the copyright holder nor the names of its
 *   contributors may be used to endorse or promote products derived from
 *   this software without specific prior written permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
 * AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 * IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
 * DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
 * FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
 * DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
 * SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
 * CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
 * OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 * OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
 *
 * (The AUTHORS file at that commit: Tri Dao, trid@cs.stanford.edu.)
 */
#ifndef VLLM_V1_H
#define VLLM_V1_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What vllm_v1_launch_batch reads of the shape (the batch stands for
 * num_seqs and seq_len). The SM count is multiProcessorCount, which a
 * catalog knows; no input is one only a running GPU knows. */
#define VLLM_V1_READS                                                                      \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |                 \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE | \
	 ENGINE_IN_NUM_SPLITS)
#define VLLM_V1_GPU_READS 0u

#define VLLM_V1_TITLE "vLLM V1 (FLASH_ATTN)"
#define VLLM_V1_REPO "vllm-project/vllm"
#define VLLM_V1_COMMIT "81be2e09aebfd1c45b3ed9f73d2850da8a72984c"
#define VLLM_V1_FA_REPO "vllm-project/flash-attention"
#define VLLM_V1_FA_COMMIT "f3e1a4f74c99145c0717709860bf765de1703779"
#define VLLM_V1_FILES                                                                  \
	"vllm/v1/attention/backends/flash_attn.py vllm/v1/attention/backends/fa_utils.py " \
	"vllm/platforms/cuda.py vllm/config/vllm.py vllm/config/compilation.py "         \
	"vllm/v1/worker/gpu_model_runner.py hopper/flash_api.cpp hopper/heuristics.h "   \
	"hopper/tile_size.h hopper/flash_prepare_scheduler.cu csrc/flash_attn/flash_api.cpp"
#define VLLM_V1_FUNCTIONS                                                                   \
	"get_flash_attn_version FlashAttentionMetadataBuilder.build _set_cudagraph_sizes "  \
	"mha_fwd_get_scheduler_metadata mha_fwd get_pagedkv_tma get_pack_gqa get_num_splits " \
	"num_splits_heuristic use_one_mma_wg tile_size_fwd_sm90 "                            \
	"prepare_varlen_num_blocks_kernel mha_varlen_fwd set_params_splitkv"

/* vLLM's CompilationConfig.cudagraph_mode. */
enum vllm_v1_cudagraph_mode {
	VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE = 0, /* the V1 default */
	VLLM_V1_CUDAGRAPH_NONE = 1,
	VLLM_V1_CUDAGRAPH_PIECEWISE = 2,
	VLLM_V1_CUDAGRAPH_FULL_DECODE_ONLY = 3,
};

/* vLLM's settings that reach the split. Zeroed, it is the upstream
 * defaults except compute_capability, which is required. */
struct vllm_v1_options {
	/* major * 10 + minor (90 for 9.0). Required: 0 is refused. */
	uint32_t compute_capability;
	enum vllm_v1_cudagraph_mode cudagraph_mode;
	/* max_cudagraph_capture_size; 0 = vLLM's default 512 (its
	 * min(max_num_seqs * 2, 512) with max_num_seqs >= 256). */
	uint32_t max_capture_size;
	/* VLLM_BATCH_INVARIANT=1 */
	bool batch_invariant;
	/* The model's max_model_len: what an FA2 full graph was captured
	 * with. Read only on the FA2 path under a full graph (compute
	 * capability not 9.x, cudagraph_mode FULL_AND_PIECEWISE or
	 * FULL_DECODE_ONLY, num_seqs <= the largest capture size) with more
	 * query heads than KV heads and no batch invariance: there 0 is
	 * refused. Elsewhere under such a graph 0 is fine (the capture ran 1
	 * split) and a value given is still checked; ignored otherwise. */
	uint32_t max_model_len;
};

/*
 * What one decode step of vLLM V1's FLASH_ATTN backend launches for the
 * mixed batch *b (sequence i holds b->seq_lens[i] tokens of KV, this
 * step's included) of the model *s (num_q_heads, num_kv_heads, head_dim;
 * page_size = vLLM's block size, 16 by default; sm_count the GPU's), under
 * *o (NULL: all defaults, which leaves compute_capability 0 and so
 * refuses). s->num_seqs and s->seq_len are ignored.
 *
 * Writes sequence i's split count (what its attention is split into in
 * this launch) to by_seq[i], i < b->num_seqs (by_seq: the caller's,
 * b->num_seqs long, or NULL). Answers num_splits = the largest of them,
 * num_splits_bound = params.num_splits (FA3: the bound that sizes the
 * scratch, 32 under full graphs; FA2: num_splits), workspace_bytes (above)
 * and the terms: fa_version, use_full_cuda_graph, num_tokens_padded,
 * max_num_splits, max_seqlen_k; FA3: is_causal,
 * use_one_mma_wg, kBlockM, kBlockN, pagedkv_tma, params.num_splits,
 * pack_gqa, num_m_blocks, total_blocks, blocks_per_sm,
 * blocks_per_sm_near_whole (the last three when formed); FA2:
 * seqlenq_ngroups_swapped, batch_size, block_n, num_n_blocks,
 * num_m_blocks, params.num_splits.
 *
 * Refuses (ENGINE_REFUSED, static reason and input) a zero count, the
 * batch's own refusals (engine.h, naming seq_lens / num_seqs), num_splits
 * != 0, num_q_heads % num_kv_heads != 0, head_dim not a multiple of 8 or
 * above 256, page_size not a multiple of 16, compute_capability 0, below
 * 80, or 10.x without batch_invariant (FA4), a cudagraph_mode out of the
 * enum, max_model_len where required and 0 or below the longest sequence,
 * and a shape past upstream's int arithmetic. A refusal writes nothing to
 * by_seq.
 */
struct engine_answer vllm_v1_launch_batch(const struct engine_shape *s,
					  const struct engine_batch *b,
					  const struct vllm_v1_options *o, uint32_t *by_seq);

/* vLLM's _set_cudagraph_sizes (vllm/config/vllm.py): the largest of the
 * default capture sizes (1, 2, 4, then steps of 8 to 256, then of 16) no
 * more than max (>= 1): the batch a full graph pads to at most, which
 * policy/reserve.c reads too. */
uint32_t vllm_v1_largest_capture_size(uint32_t max);

#ifdef __cplusplus
}
#endif

#endif /* VLLM_V1_H */
