/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * sglang — a port of SGLang's triton attention backend's decode split:
 * how many KV splits (num_kv_splits) each sequence of one mixed decode
 * batch gets, what its attention is really cut into by the two-stage
 * decode kernel, and the attn_logits / attn_lse float scratch the backend
 * allocates for the split.
 *
 * Where it came from
 *   Repository  sgl-project/sglang, each file at its own commit:
 *   python/sglang/srt/layers/attention/triton_backend.py
 *     @ 00858422264b0552a4c0a21a9949c3986d0dec97
 *       159-212  TritonAttnBackend.__init__: max_context_len (159),
 *                device_core_count (161), static_kv_splits from
 *                SGLANG_TRITON_DECODE_ATTN_STATIC_KV_SPLITS (162-164),
 *                max_kv_splits = --triton-attention-num-kv-splits (165),
 *                the MLA cap (166-181, not ported, see below),
 *                enable_deterministic (192-194), split_tile_size from
 *                SGLANG_TRITON_DECODE_SPLIT_TILE_SIZE (default 256) and
 *                static_kv_splits = False when deterministic, else
 *                --triton-attention-split-tile-size (197-207), and
 *                max_kv_splits = ceil(max_context_len / split_tile_size)
 *                whenever a tile size is set (209-212)
 *       255-305  get_num_kv_splits: num_group (264), the static fill
 *                (271-275), the deterministic ceil(len / tile) (277-288),
 *                SCHEDULE_SEQ and the metadata kernel (290-305)
 *     and, by name (its line numbers not counted here):
 *       init_forward_metadata, decode branch: attn_logits (bs, num_head,
 *         max_kv_splits, v_head_dim) and attn_lse (bs, num_head,
 *         max_kv_splits), float32, then get_num_kv_splits over seq_lens;
 *       init_cuda_graph_state: cuda_graph_attn_logits / _lse, the same
 *         shapes over max_num_tokens rows, allocated once;
 *       _apply_cuda_graph_metadata: get_num_kv_splits over seq_lens[:bs],
 *         bs the captured (padded) batch size;
 *       get_cuda_graph_seq_len_fill_value: 1 (the padding rows' length);
 *       the kv_indptr buffer: int32 (__init__ 222-227).
 *   python/sglang/srt/layers/attention/triton_ops/metadata.py
 *     @ bdd1bcdf4715964dddaa81acc590bd3b74a45acc
 *        12-60   get_num_kv_splits_triton, all of it: max_seq_len and
 *                min_seq_len (27-30), the 0.8 rule (31-32),
 *                max_kv_splits_1 / kv_chunk_size_1 (33-34), ext_seq_len
 *                and ext_device_core_count in float32 (37-40), block_h,
 *                num_kv_group and token_grid (41-47), max_kv_splits_2 /
 *                kv_chunk_size_2 (48-51), num_kv_splits (53-55)
 *   python/sglang/srt/layers/attention/triton_ops/decode_attention.py
 *     @ 03cd2ec4af85b66be8ef025238bc73c165416bdb
 *        35      _MIN_BLOCK_KV = 32
 *     and, by name: _fwd_kernel_stage1 / _fwd_grouped_kernel_stage1
 *       (kv_len_per_split = cdiv(cdiv(seq_len, kv_splits), MIN_BLOCK_KV) *
 *       MIN_BLOCK_KV; split split_kv_id runs only when split_kv_end >
 *       split_kv_start), _decode_att_m_fwd / _decode_grouped_att_m_fwd
 *       (grid (batch, heads, MAX_KV_SPLITS = max_kv_splits)),
 *       _fwd_kernel_stage2 (merges the same non-empty splits, split ids
 *       0..MAX_KV_SPLITS-1), decode_attention_fwd (asserts max_kv_splits
 *       == attn_logits.shape[2]).
 *   python/sglang/srt/server_args.py
 *     @ 001067fffe33427bee0ed2f007fb7551a1d76b44
 *       by name: the fields triton_attention_num_kv_splits (default 8),
 *       triton_attention_split_tile_size (default None),
 *       enable_deterministic_inference (default False), context_length
 *       (None: the model's config) and page_size (read: not used here).
 *       Deterministic inference also turns the radix cache off for every
 *       backend but FA3, which changes no split.
 *
 * What a sequence's split count is here
 *   by_seq[i] is the number of splits of sequence i that hold KV: the
 *   kernel launches max_kv_splits programs per (sequence, head), and
 *   split s runs (and stage 2 merges it) only when s * kv_len_per_split <
 *   seq_len, so the count is min(ceil(seq_len / kv_len_per_split),
 *   max_kv_splits). It equals the metadata's num_kv_splits except where
 *   rounding the chunk up to 32 tokens leaves splits empty (a 100-token
 *   sequence given 8 splits runs 4 of 32 tokens). The largest
 *   num_kv_splits of the real sequences is the term "num_kv_splits".
 *
 * Branches of upstream this port fixes, and why
 *   - Plain decode (forward_mode decode, no speculative tokens): num_group
 *     = num_kv_splits.shape[0] // num_seq = 1. Target-verify and draft
 *     extend run the extend kernel, which has no KV split.
 *   - Full attention on every layer: no sliding window (its
 *     window_num_kv_splits are another call over window lengths), no
 *     second SWA v_head_dim, no hybrid linear layers.
 *   - Not MLA: _mla_decode_kv_splits_cap raises max_kv_splits for MLA
 *     models only, and the shape has no MLA.
 *   - v_head_dim = head_dim, num_head = num_q_heads and num_kv_head =
 *     num_kv_heads (the shape's heads are those after tensor parallelism).
 *   - device_core_count is the shape's sm_count, required (0 is refused):
 *     upstream's device_core_count <= 0 branch (a device that reports no
 *     cores: the static fill) is reached here through static_kv_splits,
 *     which gives the same answer.
 *   - The eager path reads seq_lens as int64 (the forward batch's: the
 *     scheduler builds them with dtype=torch.int64, schedule_batch.py, read
 *     at another commit than these), so the metadata kernel's length
 *     arithmetic is 64-bit; a CUDA-graph replay reads the graph runner's
 *     int32 seq_lens buffer, so there it is 32-bit. Triton's int scalar
 *     arguments (num_seq, num_head, max_kv_splits, device_core_count) are
 *     int32 at every value this port takes.
 *   - Page size is not read: the triton backend's kv_indices are token
 *     slots (req_to_token), whatever --page-size is, and the split
 *     arithmetic counts tokens.
 *
 * CUDA graphs (shape cuda_graph, with options cuda_graph_bs and
 * cuda_graph_max_bs)
 *   A replay pads the batch to the captured size cuda_graph_bs; its
 *   padding rows have seq_len 1 (get_cuda_graph_seq_len_fill_value) and
 *   take part in get_num_kv_splits over seq_lens[:bs]: they lower
 *   min_seq_len to 1 and count in num_seq and token_grid. by_seq covers
 *   the real rows only. The scratch is the graph's, allocated once for
 *   cuda_graph_max_bs rows (max_num_tokens = max_bs for plain decode).
 *   Which captured size a batch pads to (the runner's cuda_graph_bs list)
 *   is the caller's to give: it is a server setting, not a rule.
 *
 * Float arithmetic
 *   ext_seq_len = float32(max_seq_len) / 64.0 and ext_device_core_count =
 *   int32(device_core_count * max(log2(ext_seq_len), 1.0)) are float32,
 *   as the Triton kernel computes them (int * fp32 is fp32; the cast
 *   truncates). log2 is this port's own (no libm in policy/): log2 of a
 *   float evaluated in double and rounded to float, the correctly rounded
 *   float log2 but for values within about 1e-16 of a rounding midpoint.
 *   The GPU's log2 may be an approximation (Triton lowers tl.log2 to the
 *   hardware's lg2 or libdevice's, by version); the answers can differ
 *   from it only where device_core_count * log2 lands within a few float
 *   ulps of an integer.
 *
 * Deliberate differences
 *   - Refused where upstream's own int32 arithmetic would wrap (the port
 *     does not emulate a wrap), exactly where it would: the batch's tokens
 *     above INT32_MAX (the int32 kv_indptr; padding rows count); in the
 *     decode kernel, seq_len + num_kv_splits - 1, cdiv(seq_len,
 *     num_kv_splits) + 31 and kv_len_per_split * max_kv_splits (the end
 *     of the last split id the grid runs) above INT32_MAX; in the
 *     metadata kernel, token_grid + ext_device_core_count - 1 above
 *     INT32_MAX, and under a CUDA graph (int32 seq_lens) max_seq_len * 8
 *     or min_seq_len * 10 above it (every other sum there is at most
 *     2 * max_seq_len); under a graph with deterministic on, seq_len +
 *     tile - 1 above it. max_kv_splits or a tile above INT32_MAX is
 *     refused (the int32 num_kv_splits tensor cannot hold the fill).
 *   - Input bounds no GPU or model reaches: sm_count above 16,777,216
 *     (float32(device_core_count) would round) and num_q_heads above
 *     1,048,576 (so the heads stay an int32 argument).
 *   - num_q_heads % num_kv_heads != 0 is refused (upstream would take the
 *     truncated quotient as its group); every port refuses it.
 *   - shape.num_splits != 0 is refused: the backend takes no split
 *     argument (its split settings are the options below).
 *   - A sequence longer than max_model_len, when given, is refused: SGLang
 *     admits no request past the context length, and a deterministic
 *     split count past ceil(context / tile) would overrun the scratch.
 *   - Not modelled: torch.empty failing for want of memory.
 *
 * What workspace_bytes counts
 *   attn_logits + attn_lse, float32: rows * num_q_heads * max_kv_splits *
 *   (head_dim + 1) * 4 bytes, rows = num_seqs (eager: allocated by
 *   init_forward_metadata for this batch) or cuda_graph_max_bs (a graph:
 *   allocated once by init_cuda_graph_state). It is one forward step's
 *   scratch, and every attention layer of the step shares it (all of
 *   them read forward_metadata.attn_logits); it is not per layer.
 *
 * License of the upstream: Apache License 2.0 (LICENSE at those
 *   commits). decode_attention.py: "Copyright 2023-2024 SGLang Team";
 *   triton_backend.py, metadata.py and server_args.py carry no notice of
 *   their own and are the SGLang Team's under the repository's license.
 *   This file and sglang.c are a port (a derivative work) of those files,
 *   modified: rewritten in C for one mixed decode batch, as above.
 *   Licensed under the Apache License, Version 2.0 (the "License"); you
 *   may not use these files except in compliance with the License. You may
 *   obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 *   Unless required by applicable law or agreed to in writing, software
 *   distributed under the License is distributed on an "AS IS" BASIS,
 *   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *   implied. See the License for the specific language governing
 *   permissions and limitations under the License.
 *
 * Its scratch is monotone in the batch size and reads no length (eager);
 * under a CUDA graph it is the graph's one buffer (policy/reserve.c).
 *
 * Pure as engine.h promises: no allocation, no I/O, no state.
 */
#ifndef SGLANG_H
#define SGLANG_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every input the backend reads (through the batch for num_seqs and
 * seq_len). page_size is not among them, nor blocks_per_sm; num_splits
 * is refused when non-zero, never read as a choice. cuda_graph says
 * whether the launch is a graph replay (its sizes are options). */
#define SGLANG_READS                                                             \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |       \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN |       \
	 ENGINE_IN_CUDA_GRAPH)
/* What only the GPU knows: its multiprocessor count (get_device_core_count,
 * cudaDevAttrMultiProcessorCount). */
#define SGLANG_GPU_READS (ENGINE_IN_SM_COUNT)

#define SGLANG_TITLE "SGLang triton attention decode"
#define SGLANG_REPO "sgl-project/sglang"
/* Pinned file by file: triton_backend.py, metadata.py, decode_attention.py,
 * server_args.py, in that order. */
#define SGLANG_COMMIT                                                            \
	"00858422264b0552a4c0a21a9949c3986d0dec97 bdd1bcdf4715964dddaa81acc590bd3b74a45acc " \
	"03cd2ec4af85b66be8ef025238bc73c165416bdb 001067fffe33427bee0ed2f007fb7551a1d76b44"
#define SGLANG_FILES                                                             \
	"python/sglang/srt/layers/attention/triton_backend.py "                  \
	"python/sglang/srt/layers/attention/triton_ops/metadata.py "             \
	"python/sglang/srt/layers/attention/triton_ops/decode_attention.py "     \
	"python/sglang/srt/server_args.py"
#define SGLANG_FUNCTIONS                                                         \
	"TritonAttnBackend.__init__ TritonAttnBackend.get_num_kv_splits "        \
	"get_num_kv_splits_triton TritonAttnBackend.init_forward_metadata "      \
	"TritonAttnBackend.init_cuda_graph_state _fwd_kernel_stage1 _fwd_kernel_stage2"

/* --triton-attention-num-kv-splits's default; SGLANG_TRITON_DECODE_SPLIT_
 * TILE_SIZE's (the deterministic tile). */
#define SGLANG_DEFAULT_MAX_KV_SPLITS 8u
#define SGLANG_DEFAULT_DETERMINISTIC_TILE 256u
/* The most sm_count taken: float32 holds every count up to it exactly. */
#define SGLANG_MAX_SM_COUNT 16777216u
/* The most num_q_heads taken (no model comes near): it keeps the heads an
 * int32 kernel argument and every product of them in range. */
#define SGLANG_MAX_HEADS 1048576u

/* The server's settings the backend reads. A NULL options pointer means
 * all the defaults: {8, 0, false, 0, false, 0, 0, 0}. */
struct sglang_options {
	/* --triton-attention-num-kv-splits: the most splits (8). 0 is
	 * refused (upstream would divide by it). Replaced by ceil(
	 * max_model_len / tile) whenever a tile size is set. */
	uint32_t max_kv_splits;
	/* --triton-attention-split-tile-size, read when not deterministic:
	 * 0 = None (the default). Set, it only resizes max_kv_splits (to
	 * ceil(max_model_len / split_tile_size)); the split stays dynamic. */
	uint32_t split_tile_size;
	/* --enable-deterministic-inference (false): every sequence gets
	 * ceil(seq_len / tile) splits, tile = deterministic_tile. */
	bool deterministic;
	/* SGLANG_TRITON_DECODE_SPLIT_TILE_SIZE, read when deterministic:
	 * 0 = its default, 256. */
	uint32_t deterministic_tile;
	/* SGLANG_TRITON_DECODE_ATTN_STATIC_KV_SPLITS (false): every sequence
	 * gets max_kv_splits; ignored when deterministic, as upstream. */
	bool static_kv_splits;
	/* The model's context length (model_config.context_len): sizes
	 * max_kv_splits whenever a tile size is set (deterministic, or
	 * split_tile_size), which refuse 0; 0 = not given otherwise. When
	 * given, a longer sequence is refused. */
	uint32_t max_model_len;
	/* With shape.cuda_graph: the captured batch size this batch is
	 * padded to (at least its sequences, at most ENGINE_MAX_SEQS);
	 * required then, refused non-zero without cuda_graph. */
	uint32_t cuda_graph_bs;
	/* With shape.cuda_graph: the largest captured batch size, which
	 * sizes the graph's scratch; 0 = cuda_graph_bs. */
	uint32_t cuda_graph_max_bs;
};

/*
 * One decode step of SGLang's triton backend over the mixed batch b
 * (engine.h's engine_batch, read in place of s->num_seqs and s->seq_len,
 * which are ignored), with the server settings o (NULL: the defaults).
 *
 * Reads of s: sm_count (required, the GPU's multiprocessors), num_q_heads,
 * num_kv_heads, head_dim (as v_head_dim too), cuda_graph; num_splits must
 * be 0. page_size and blocks_per_sm are not read.
 *
 * OK: writes by_seq[i] (an array of b->num_seqs the caller owns) with the
 * splits of sequence i that hold KV in this launch (see "What a
 * sequence's split count is" above), 1 where it runs whole; num_splits =
 * the largest of them; num_splits_bound = max_kv_splits (the kernel's grid
 * of splits and the scratch's split axis); workspace_bytes = attn_logits +
 * attn_lse in bytes, one forward step's, shared by every layer; terms
 * under upstream's names ("max_kv_splits", "split_tile_size",
 * "max_seq_len", "min_seq_len", "max_kv_splits_1", "kv_chunk_size_1",
 * "ext_device_core_count", "token_grid", "max_kv_splits_2",
 * "kv_chunk_size_2", "num_kv_splits" (the largest of the real rows'),
 * "bs" (the rows the metadata sees), "attn_logits_bytes",
 * "attn_lse_bytes"), each where its path computes it. Refused (a static
 * reason and the input to change): by_seq is not written.
 *
 * With every length equal, every sequence's count is the same. Pure and
 * thread-safe; b, its seq_lens and by_seq are only read/written during
 * the call.
 */
struct engine_answer sglang_launch_batch(const struct engine_shape *s,
					 const struct engine_batch *b,
					 const struct sglang_options *o, uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* SGLANG_H */
