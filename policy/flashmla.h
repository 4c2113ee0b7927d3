/* SPDX-License-Identifier: AGPL-3.0-only AND MIT */
/*
 * flashmla — a port of FlashMLA's dense MLA decode schedule (DeepSeek-V3
 * style: 576-wide K, 512-wide V, pages of 64) over one mixed decode batch:
 * how many splits each sequence's KV is cut into by the metadata kernel,
 * which spreads the batch's blocks over num_sm_parts SM parts, and the
 * float accumulators (softmax_lseaccum + out_accum) the host allocates for
 * that launch.
 *
 * Where it came from
 *   Repository  deepseek-ai/FlashMLA
 *   Commit      9241ae3ef9bac614dd25e45e507e089f888280e0
 *   Ported, line ranges at that commit:
 *     csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu
 *        11-107  get_mla_metadata_kernel: each request's blocks (29-55),
 *                the warp's sum of them (56-58), payload (62), the greedy
 *                walk over the SM parts that cuts requests (64-100) and
 *                num_splits, the running sum of each request's split
 *                count (77-78, written out 104-106)
 *       109-114  run_get_decoding_sched_meta_kernel (b * 5 + 1 ints of
 *                shared memory)
 *     csrc/api/dense_decode.h
 *        13-225  dense_attn_decode_interface: its checks (60-61, 67-69),
 *                num_q_heads_per_hk and q_seq_per_hk (73-74), num_sm_parts
 *                (78), the metadata kernel's arguments (101-113:
 *                block_size_n 64, fixed_overhead_num_blocks 5, topk -1),
 *                total_num_splits, lse_accum and out_accum (164-171)
 *     csrc/params.h
 *        10-17   DecodingSchedMeta; 19-61 DenseAttnDecodeParams
 *                (total_num_splits, softmax_lseaccum_ptr, oaccum_ptr);
 *       127-143  GetDecodeSchedMetaParams
 *     csrc/smxx/decode/combine/combine.cu
 *        36-43   a request with one split is not merged; more are, up to
 *                MAX_SPLITS; 165-185 MLA_NUM_SPLITS_SWITCH (32, 64, 96,
 *                128, 160, else FLASH_ASSERT(false)); 188-192 the combine
 *                asserts d_v == 512 and switches on num_sm_parts
 *     cutlass::ceil_div(int a, int b) = (a + b - 1) / b
 *       (NVIDIA/cutlass include/cutlass/fast_math.h; read at 082a375c, the
 *       stored copy; FlashMLA pins the submodule at 147f5673)
 *   Read for what reaches the schedule and what is refused:
 *     flash_mla/flash_mla_interface.py 37-50 (get_mla_metadata takes no
 *       argument any more and returns an empty FlashMLASchedMeta: the
 *       schedule is made on the first flash_mla_with_kvcache call, 115-135,
 *       and may be reused while the shapes and cache_seqlens stay, 80) and
 *       53-173 (flash_mla_with_kvcache: num_splits must be None, 107; the
 *       dense path, 161-170);
 *     csrc/api/api.cpp 11 (dense_decode_fwd is dense_attn_decode_interface);
 *     csrc/api/common.h 21-41 (Arch: num_sms = multiProcessorCount;
 *       is_sm90a);
 *     csrc/sm90/decode/dense/splitkv_mla.cuh 1242-1244 (a split writes
 *       accumulator row num_splits[batch_idx] + n_split_idx), 1276-1278
 *       (FLASH_ASSERT d == HEAD_DIM_K, d_v == HEAD_DIM_V), 1339-1344 (grid
 *       num_m_block x h_k x num_sm_parts); csrc/sm90/decode/dense/config.h
 *       (HEAD_DIM_K 576, HEAD_DIM_V 512, PAGE_BLOCK_SIZE 64);
 *     csrc/utils.h 17-32 (FLASH_ASSERT exits the process; FLASH_DEVICE_ASSERT
 *       traps).
 *
 * Branches of upstream this port fixes, and why
 *   - The dense decode (flash_mla_with_kvcache without indices): the
 *     DeepSeek-V3 decode the issue asks for. Not the sparse decode
 *     (indices, topk: DeepSeek-V3.2, sparse_decode.h), not the prefill.
 *     So topk == -1 in the metadata kernel: each request's cur_s_k is its
 *     cache_seqlens entry (31-33).
 *   - An SM90a part (Hopper): dense_attn_decode_interface refuses any
 *     other (26-29); the compute capability is no input here, the caller
 *     answers for a Hopper part.
 *   - bf16 (or fp16) Q and KV: the dtype reaches no count.
 *   - Every first_token_idx is 0 (45-47), so a request of L tokens has
 *     num_blocks = (L - 1) / 64 + 1 blocks: L >= 1 here (engine_batch), so
 *     the kernel's empty-request corrections (93-94) never apply.
 *   - The warp's 32 lanes each sum a stride of requests and a butterfly of
 *     shuffles adds the 32 sums: without overflow an int sum in any order,
 *     so one loop here (and an overflow is refused, below).
 *   - causal changes nothing the schedule reads (the metadata kernel is not
 *     given it; seqlen_q 1 turns it off, 71).
 *   - The GPU figure: num_sms (Arch, cudaDeviceProp.multiProcessorCount) is
 *     shape.sm_count; num_sm_parts = max(sm_count / num_kv_heads /
 *     ceil_div(seqlen_q * num_q_heads / num_kv_heads, 64), 1), in int, as
 *     upstream. No occupancy figure is read: FLASHMLA_GPU_READS is 0.
 *
 * What it answers
 *   by_seq[i]: request i's split count, num_splits[i + 1] - num_splits[i]
 *     (the SM parts its blocks land on; 1 = written straight to the output,
 *     not merged). Equal lengths do not give equal counts: the parts cut
 *     the batch's blocks where they fall (8 x 8,192 on an H100: 8, 9, 9, 8,
 *     8, 9, 9, 8), so there is no uniform-launch equivalence to promise;
 *     they differ by one at most (a part carries payload - 5 blocks of a
 *     request it does not finish; tests/unit/test_flashmla.c sweeps it).
 *   num_splits: the largest by_seq.
 *   num_splits_bound: num_sm_parts, the most splits any one request can
 *     have (each of its splits is a different part), on which the combine
 *     kernel's MLA_NUM_SPLITS_SWITCH sizes MAX_SPLITS.
 *   workspace_bytes: lse_accum + out_accum as dense_attn_decode_interface
 *     allocates them (164-166): total_num_splits = batch_size +
 *     num_sm_parts rows of num_kv_heads x q_seq_per_hk floats, and of as
 *     many rows of head_dim_v floats; in bytes (4 a float), for one
 *     attention layer's launch. The numel, not what PyTorch's caching
 *     allocator rounds it to. Each layer's call allocates its own pair
 *     (torch::empty) and drops it when it returns, so layers, which run one
 *     after another, reuse the same memory through the caching allocator:
 *     the figure is not multiplied by the layers. It is an upper bound the
 *     schedule fills up to "cum_num_splits" rows. Not counted: out and lse
 *     (the outputs), the tile_scheduler_metadata (num_sm_parts x 32 bytes)
 *     and num_splits ((batch_size + 1) x 4 bytes) tensors: terms give the
 *     sizes they follow from.
 *   Terms: num_q_heads_per_hk, q_seq_per_hk, num_sm_parts, block_size_n,
 *     fixed_overhead_num_blocks, total_num_blocks, payload, cum_num_splits
 *     (num_splits[batch_size], the rows used), total_num_splits (the rows
 *     allocated), MAX_SPLITS (the combine's template bound).
 *
 * Deliberate differences
 *   - Refused where upstream raises (TORCH_CHECK) or exits (FLASH_ASSERT):
 *     head_dim other than 576 (the interface lets 512 through, 60, but the
 *     SM90 kernel asserts d == 576, 1277); head_dim_v other than 512 (61;
 *     its message says 576, a typo upstream); page_size other than 64 (67);
 *     an empty batch (68); num_q_heads % num_kv_heads != 0 (69);
 *     num_sm_parts above 160 (the combine switch has no case: 161 SMs or
 *     more with one KV head and up to 64 q heads, 322 with 128); a non-zero
 *     shape.num_splits (interface.py 107: num_splits must be None).
 *   - Refused where upstream's int would overflow (undefined, never a
 *     launch worth answering): sm_count, num_q_heads, num_kv_heads or
 *     seqlen_q above INT32_MAX, seqlen_q * num_q_heads above INT32_MAX,
 *     and a batch whose total_num_blocks (each request's blocks plus 5)
 *     or ceil_div's total_num_blocks + num_sm_parts - 1 or payload exceed
 *     INT32_MAX (64 sequences of 2^31 - 1 tokens reach it).
 *   - A length of 0 is refused (engine_batch's bound; upstream would give
 *     the request one block and correct its end), as is more than
 *     ENGINE_MAX_SEQS sequences. Upstream's shared memory, b * 5 + 1 ints,
 *     fits an H100's 227 KB up to 11,622 sequences, so no refusal for it
 *     is reachable below that bound.
 *   - FLASH_DEVICE_ASSERT(now_req_idx == batch_size ...) (100) cannot
 *     fail: a part takes at least payload - 5 = ceil(total / parts) of the
 *     total_num_blocks it accounts (a part that ends mid-request spends
 *     all it has but fixed_overhead_num_blocks), so the parts take it all.
 *     The port keeps the check and would refuse, by_seq partly written.
 *   No floating point reaches the schedule: every quantity is an int.
 *
 * License of the upstream: MIT (LICENSE at that commit).
 *   Copyright (c) 2025 DeepSeek
 *   This file and flashmla.c are a port (a derivative work) of the files
 *   above, rewritten in C for one decode batch.
 *   Permission is hereby granted, free of charge, to any person obtaining
 *   a copy of this software and associated documentation files (the
 *   "Software"), to deal in the Software without restriction, including
 *   without limitation the rights to use, copy, modify, merge, publish,
 *   distribute, sublicense, and/or sell copies of the Software, and to
 *   permit persons to whom the Software is furnished to do so, subject to
 *   the following conditions: The above copyright notice and this
 *   permission notice shall be included in all copies or substantial
 *   portions of the Software.
 *   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
 *   EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 *   MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
 *   IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
 *   CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
 *   TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
 *   SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 *
 * Its scratch is monotone in the batch size and reads no length
 * (policy/reserve.c, issue 51).
 *
 * Pure as engine.h promises: no allocation, no I/O, no state; thread-safe.
 */
#ifndef FLASHMLA_H
#define FLASHMLA_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every input the schedule reads (num_seqs and seq_len through the batch).
 * num_splits is not among them: a non-zero value is refused. blocks_per_sm
 * and cuda_graph are ignored: no occupancy query, and a captured launch
 * schedules the same way on the device. */
#define FLASHMLA_READS                                                           \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |       \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN |       \
	 ENGINE_IN_PAGE_SIZE)
/* Nothing the caller must ask the GPU at run time beyond its SM count. */
#define FLASHMLA_GPU_READS 0u

#define FLASHMLA_TITLE "FlashMLA dense decode"
#define FLASHMLA_REPO "deepseek-ai/FlashMLA"
#define FLASHMLA_COMMIT "9241ae3ef9bac614dd25e45e507e089f888280e0"
#define FLASHMLA_FILES                                                           \
	"csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu "   \
	"csrc/api/dense_decode.h csrc/params.h csrc/smxx/decode/combine/combine.cu"
#define FLASHMLA_FUNCTIONS                                                       \
	"get_mla_metadata_kernel run_get_decoding_sched_meta_kernel "            \
	"dense_attn_decode_interface run_flash_mla_combine_kernel"

/* The caller's choices that engine_shape has no member for. */
struct flashmla_options {
	/* head_dim_v, V's head size (flash_mla_with_kvcache's argument);
	 * 0 = 512, the only size upstream runs (DeepSeek-V3's); any other is
	 * refused. */
	uint32_t head_dim_v;
	/* seqlen_q, query tokens per sequence this step (q.shape[1]: 1 for
	 * plain decode, 2 with one MTP draft token); 0 = 1. It enters
	 * num_sm_parts and the accumulators' rows. */
	uint32_t seqlen_q;
};

/*
 * One dense FlashMLA decode launch over the mixed batch b (engine.h's
 * engine_batch, read in place of s->num_seqs and s->seq_len, which are
 * ignored), with the options o (NULL: head_dim_v 512, seqlen_q 1).
 *
 * OK: writes by_seq[i] (an array of b->num_seqs the caller owns) with the
 * splits sequence i's KV is cut into (1 = not split); num_splits = the
 * largest; num_splits_bound = num_sm_parts; workspace_bytes = lse_accum +
 * out_accum in bytes for this launch of one layer (see above); terms
 * under upstream's names. Refused: a static reason and the input to
 * change ("head_dim", "head_dim_v", "page_size", "seq_lens", "num_seqs",
 * "num_q_heads", "sm_count", "seqlen_q", "num_splits", ...); by_seq is not
 * written (but for the schedule's own assert, which cannot fail).
 * Pure and thread-safe; b, its seq_lens and by_seq are only read/written
 * during the call.
 */
struct engine_answer flashmla_launch_batch(const struct engine_shape *s,
					   const struct engine_batch *b,
					   const struct flashmla_options *o, uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* FLASHMLA_H */
