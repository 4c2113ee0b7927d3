/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * vllm_triton — a port of vLLM V1's TRITON_ATTN backend's choice, for one
 * decode step over a mixed batch, between its 2D unified-attention kernel
 * (each sequence's KV in one program: no split) and its 3D kernel (each
 * sequence's KV cut into up to NUM_PAR_SOFTMAX_SEGMENTS = 16 segments,
 * merged by reduce_segments), and of the split-K scratch the metadata
 * builder allocates for the 3D kernel (softmax_segm_output, _max, _expsum).
 *
 * Where it came from
 *   Repository  vllm-project/vllm
 *   Commit      81be2e09aebfd1c45b3ed9f73d2850da8a72984c (read in the fork
 *               MatthewBonanni/vllm, whose main carries that commit)
 *   Ported, line ranges at that commit:
 *     vllm/v1/attention/backends/triton_attn.py
 *        55-56   MIN_LAUNCH_GRID_SIZE_2D = 128, NUM_PAR_SOFTMAX_SEGMENTS = 16
 *       104-175  TritonAttentionMetadataBuilder.__init__: decode_cudagraph_enabled
 *                (124-131: FULL_AND_PIECEWISE, FULL_DECODE_ONLY, FULL),
 *                seq_threshold_3D = MIN_LAUNCH_GRID_SIZE_2D // num_heads_kv (139),
 *                snapped to the nearest capture size under those modes
 *                (142-152), the three float32 scratch tensors (154-175)
 *       289-297  get_supported_kernel_block_sizes / supports_block_size:
 *                MultipleOf(16); 329-330 "Block size must be a multiple of 16."
 *       385-387  supports_head_size: head_size >= 32
 *     vllm/v1/attention/ops/triton_unified_attention.py
 *        34      is_batch_invariant = envs.VLLM_BATCH_INVARIANT (read at import)
 *       322-327  kernel_unified_attention, 3D: tiles_per_segment =
 *                cdiv_fn(seq_len, NUM_SEGMENTS_PER_SEQ * TILE_SIZE); a segment
 *                with segm_idx * tiles_per_segment * TILE_SIZE >= seq_len returns
 *       718-726  reduce_segments: act_num_segments = cdiv_fn(seq_len,
 *                tiles_per_segment * TILE_SIZE), the segments it merges
 *       784-799  _get_tile_size: decode 16 for a 2-byte query, prefill 32
 *       925-935  num_queries_per_kv, BLOCK_M, BLOCK_Q
 *       978-983  TILE_SIZE_PREFILL / TILE_SIZE_DECODE
 *      1036-1082 use_3d, NUM_SEGMENTS_PER_SEQ (16 or 1), the grids and tiles
 *     vllm/v1/attention/ops/triton_attention_helpers.py
 *        22-24   cdiv_fn: (x + y - 1) // y
 *       142-195  compute_tile_loop_bounds: a decode row's prefix is seq_len,
 *                num_tiles = cdiv_fn(seq_len, TILE_SIZE)
 *     vllm/config/vllm.py
 *      1805-1967 _set_cudagraph_sizes: the default capture sizes [1, 2, 4],
 *                8..248 by 8, 256..max by 16, ascending (1852-1911)
 *     vllm/config/compilation.py
 *        53-75   CUDAGraphMode; 1106-1131 post_init_cudagraph_sizes (sorted)
 *     vllm/utils/math_utils.py 15-17  next_power_of_2
 *   Read for what reaches the choice and what does not:
 *     vllm/engine/arg_utils.py 2553-2620 (max_num_seqs defaults: 256 or
 *       more everywhere, so max_cudagraph_capture_size = min(2 * max_num_seqs,
 *       512) = 512); vllm/config/compilation.py 1380-1420 (this backend's
 *       AttentionCGSupport.ALWAYS, triton_attn.py 102, keeps every mode as
 *       asked); vllm/config/vllm.py 1440-1453 (enforce_eager: mode NONE);
 *       vllm/model_executor/layers/batch_invariant.py 902-993 (batch
 *       invariance swaps matmuls and NCCL settings; for this backend it acts
 *       only through is_batch_invariant above); vllm/v1/attention/backend.py
 *       606-626 (AttentionCGSupport); vllm/v1/worker/gpu_model_runner.py
 *       780-782 (seq_lens is an int32 tensor: the kernels' seq_len is
 *       int32), 2299-2446 (under a full CUDA graph the attention metadata
 *       holds num_reqs_padded sequences, the capture size the batch is
 *       padded to), 7113-7130 and vllm/v1/worker/utils.py 229-275 (one
 *       metadata builder per attention group, num_ubatches of them under
 *       micro-batching: each holds its own scratch).
 *
 * The rule, as upstream runs it for a decode batch of num_seqs sequences
 *   seq_threshold_3D = 128 // num_kv_heads (Python's int floor division);
 *   under FULL_AND_PIECEWISE, FULL_DECODE_ONLY or FULL the capture size
 *   nearest to it (Python's min with key abs(x - t) over the ascending list:
 *   on a tie the smaller). The 3D kernel runs when num_seqs <=
 *   seq_threshold_3D and batch invariance is off; sequence i then runs
 *   cdiv(seq_lens[i], cdiv(seq_lens[i], 16 * 16) * 16) segments, never
 *   more than 16: 16 for every length above 3600 and every multiple of 256,
 *   fewer for some shorter ones (100 tokens run 7, 257 run 9, 513 run 11).
 *   Otherwise the 2D kernel: 1 each.
 *   The scratch is allocated once, by the metadata builder, whatever the
 *   batch: float32 [seq_threshold_3D, num_q_heads, 16, next_power_of_2(
 *   head_dim)] plus two float32 [seq_threshold_3D, num_q_heads, 16], that is
 *   64 * seq_threshold_3D * num_q_heads * (next_power_of_2(head_dim) + 2)
 *   bytes.
 *
 * Branches of upstream this port fixes, and why
 *   - Decode only: one query token per sequence (max_seqlen_q == 1). A batch
 *     with a prefill runs the 2D kernel whatever its size (use_3d's
 *     max_seqlen_q > 1); engine_batch has no query lengths.
 *   - A bf16 (or fp16) query: element_size 2, so TILE_SIZE_DECODE = 16. An
 *     fp8 query would take 32, as would Gemma 3's sliding window of 1024;
 *     no sliding window, chunked attention, INT4 KV (its own kernel),
 *     tensor descriptors (XPU only) or cascade (use_cascade_attention is
 *     False for this backend) here. The 2D kernel's tile (TILE_SIZE_PREFILL,
 *     32) changes no split; it only bounds its int32 arithmetic below.
 *   - Every 3D buffer is given (the builder always allocates them), so
 *     use_3d is decided by num_seqs, the threshold and batch invariance.
 *   - Under a full CUDA graph the kernel sees num_reqs_padded, the capture
 *     size the batch is padded to, not num_seqs. The threshold is itself a
 *     capture size, so num_reqs_padded <= seq_threshold_3D exactly when
 *     num_seqs <= seq_threshold_3D (upstream's comment at 146-148 says this
 *     is why it snaps); the port compares num_seqs.
 *   - The default capture sizes of the "balanced" performance mode, with
 *     max_num_batched_tokens at least max_capture_size (8192 or more by
 *     default), so it neither lowers the largest size nor is appended to
 *     the list; no sequence parallelism (update_sizes_for_sequence_
 *     parallelism), no user list of capture sizes. Only sizes up to 255 can
 *     be nearest a threshold of at most 128 (1 is always in the list), so
 *     every max_capture_size of 255 or more, the default 512 among them,
 *     gives the same answer.
 *   - compute_capability is not read: this backend's split reads none
 *     (tuned_large_head, 941-955, needs max_seqlen_q > 1;
 *     TritonAttentionImpl.__init__, triton_attn.py 517-539, reads it only
 *     to reject an fp8 KV cache below SM89 and a bf16 one below SM80, a
 *     dtype question this port does not take).
 *     Neither are the SM count, an occupancy figure nor max_model_len: no
 *     quantity of the choice or of the scratch is sized by them.
 *
 * Deliberate differences
 *   - Refused where upstream would fail before a launch: head_dim below 32
 *     (supports_head_size, the backend is not selected), a page_size that is
 *     not a multiple of 16 (get_kv_cache_shape raises), num_q_heads not a
 *     multiple of num_kv_heads (every port refuses it; upstream's // would
 *     truncate); a cudagraph_mode outside the enum. max_capture_size 0
 *     is not refused (upstream asserts at least 1): 0 means "not set"
 *     (None), the default.
 *   - Refused where upstream's own types cannot hold the batch: a sequence
 *     whose kernel arithmetic, in Triton's int32, wraps. On the 3D path
 *     seq_len + 255 (cdiv_fn by 16 * 16) and seq_len + tiles_per_segment *
 *     16 - 1 (reduce_segments' cdiv_fn) must stay at most 2147483647; on
 *     the 2D path seq_len + 31 (cdiv_fn by TILE_SIZE_PREFILL, 32) must. A
 *     wrapped sum would give a negative tile count, which upstream does not
 *     check. A scratch above 2^64 - 1 bytes (torch.empty would fail) is
 *     refused naming head_dim.
 *   - shape.num_splits != 0 is refused: this backend takes no split
 *     argument. shape.sm_count, blocks_per_sm and cuda_graph are not read
 *     (the CUDA-graph mode is vllm_triton_options.cudagraph_mode).
 *   - Not modelled: Triton's own limits at compile time (a tensor of
 *     BLOCK_M * next_power_of_2(head_dim) elements must fit its maximum).
 *   No floating point reaches the choice: every quantity is a Python int
 *   (unbounded: held here in uint32_t/uint64_t, which every bound above
 *   keeps exact) or a Triton int32 (bounded as above).
 *
 * License of the upstream: Apache License 2.0 (LICENSE at that commit).
 *   triton_attn.py, triton_unified_attention.py, triton_attention_helpers.py,
 *   vllm.py, compilation.py: "SPDX-License-Identifier: Apache-2.0 /
 *   SPDX-FileCopyrightText: Copyright contributors to the vLLM project";
 *   triton_unified_attention.py's authors: Burkhard Ringlein, Jan van
 *   Lunteren, Chih-Chieh Yang, Thomas Parnell (IBM).
 *   This file and vllm_triton.c are a port (a derivative work) of those
 *   files, modified: rewritten in C for one mixed decode batch, as above.
 *   Licensed under the Apache License, Version 2.0 (the "License"); you
 *   may not use these files except in compliance with the License. You may
 *   obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 *   Unless required by applicable law or agreed to in writing, software
 *   distributed under the License is distributed on an "AS IS" BASIS,
 *   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *   implied. See the License for the specific language governing
 *   permissions and limitations under the License.
 *
 * Its scratch is one fixed buffer: the same for every answered batch
 * (policy/reserve.c answers it as such, issue 51).
 *
 * Pure as engine.h promises: no allocation, no I/O, no state; thread-safe.
 */
#ifndef VLLM_TRITON_H
#define VLLM_TRITON_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every input the choice reads: the batch (in place of num_seqs and
 * seq_len), the heads, head_dim (the scratch's size) and page_size (only
 * checked: a multiple of 16). num_splits is not among them: a non-zero
 * value is refused, never read as a choice. */
#define VLLM_TRITON_READS                                                        \
	(ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS |   \
	 ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE)
/* Nothing only a GPU knows: no SM count, no occupancy figure. */
#define VLLM_TRITON_GPU_READS 0u

#define VLLM_TRITON_TITLE "vLLM V1 TRITON_ATTN unified attention"
#define VLLM_TRITON_REPO "vllm-project/vllm"
#define VLLM_TRITON_COMMIT "81be2e09aebfd1c45b3ed9f73d2850da8a72984c"
#define VLLM_TRITON_FILES                                                        \
	"vllm/v1/attention/backends/triton_attn.py "                             \
	"vllm/v1/attention/ops/triton_unified_attention.py "                     \
	"vllm/v1/attention/ops/triton_attention_helpers.py "                     \
	"vllm/config/vllm.py vllm/config/compilation.py"
#define VLLM_TRITON_FUNCTIONS                                                    \
	"TritonAttentionMetadataBuilder.__init__ unified_attention "             \
	"kernel_unified_attention reduce_segments _get_tile_size "               \
	"VllmConfig._set_cudagraph_sizes"

/* NUM_PAR_SOFTMAX_SEGMENTS (triton_attn.py 56): the most segments a
 * sequence runs, and num_splits_bound of a 3D launch. */
#define VLLM_TRITON_NUM_PAR_SOFTMAX_SEGMENTS 16u

/* CompilationConfig.cudagraph_mode. The zero value is upstream's default,
 * FULL_AND_PIECEWISE, so a zeroed options struct is the defaults. */
enum vllm_triton_cudagraph_mode {
	VLLM_TRITON_CG_FULL_AND_PIECEWISE = 0,
	VLLM_TRITON_CG_NONE = 1,             /* also what enforce_eager sets */
	VLLM_TRITON_CG_PIECEWISE = 2,
	VLLM_TRITON_CG_FULL_DECODE_ONLY = 3,
	VLLM_TRITON_CG_FULL = 4,
};

/* vLLM's configuration as it reaches this backend; all zero (or o NULL)
 * is upstream's default. */
struct vllm_triton_options {
	/* FULL_AND_PIECEWISE, FULL_DECODE_ONLY and FULL snap the threshold to
	 * a capture size; NONE and PIECEWISE do not. Another value is refused
	 * (input "cudagraph_mode"). */
	enum vllm_triton_cudagraph_mode cudagraph_mode;
	/* compilation_config.max_cudagraph_capture_size: the default capture
	 * sizes are built up to it. 0 = not set (None): min(2 * max_num_seqs,
	 * 512) = 512 with every max_num_seqs default. Read only under the
	 * three full modes. */
	uint32_t max_capture_size;
	/* VLLM_BATCH_INVARIANT=1: the 2D kernel always (use_3d's fourth
	 * condition); the scratch is still allocated. */
	bool batch_invariant;
};

/*
 * One decode launch of one attention layer over the mixed batch b
 * (engine.h's engine_batch, read in place of s->num_seqs and s->seq_len,
 * which are ignored), under the configuration o (NULL: the defaults).
 *
 * OK: writes by_seq[i] (an array of b->num_seqs the caller owns) with the
 * segments sequence i's KV runs in (1 on the 2D kernel); num_splits = the
 * largest; num_splits_bound = the kernel's NUM_SEGMENTS_PER_SEQ (16 for
 * the 3D kernel, 1 for the 2D); workspace_bytes = the scratch the metadata
 * builder holds for the 3D kernel, in bytes: 64 * seq_threshold_3D *
 * num_q_heads * (next_power_of_2(head_dim) + 2). That is what one
 * layer's launch uses, but it is not held per layer: it is allocated once
 * per metadata builder (one per attention group, i.e. per KV-cache group
 * for this backend; one per micro-batch under ubatching), whatever the
 * batch, and shared by every layer of the group. So it is the same for a
 * 2D launch (which leaves it unused), and 0 when seq_threshold_3D is 0
 * (more than 128 KV heads without a full CUDA graph: 3D never runs).
 * Terms, under upstream's names: seq_threshold_3D, use_3d (0 or 1),
 * NUM_SEGMENTS_PER_SEQ, TILE_SIZE (the launch's: 16 for 3D, 32 for 2D),
 * tiles_per_segment (the longest sequence's; 3D only), headdim_padded.
 * Refused (a static reason and the input to change): by_seq is not written.
 *
 * Pure and thread-safe; b, its seq_lens and by_seq are only read/written
 * during the call.
 */
struct engine_answer vllm_triton_launch_batch(const struct engine_shape *s,
					      const struct engine_batch *b,
					      const struct vllm_triton_options *o,
					      uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* VLLM_TRITON_H */
