/* SPDX-License-Identifier: AGPL-3.0-only AND BSD-3-Clause */
/*
 * fa3 — FlashAttention-3's (hopper/) split choice for one paged decode
 * launch on sm90, ported: the host heuristic's upper bound, which sizes the
 * split-K accumulators, and the per-batch split the prepare kernel computes
 * for this batch, which is the split the attention kernel runs: for a batch
 * of equal lengths (fa3_launch) or of mixed ones (fa3_launch_batch), where
 * each sequence gets its own split from one quotient of the whole batch.
 *
 * Where it came from: Dao-AILab/flash-attention at commit
 * 0251105a2fb19d2957484b7f023cd8c115286ced, directory hopper/ (each file
 * "Copyright (c) 2024, Jay Shah, Ganesh Bikshandi, Ying Zhang, Vijay
 * Thakkar, Pradeep Ramani, Tri Dao."):
 *   heuristics.h                should_pack_gqa            lines    9-17
 *                               num_splits_heuristic       lines   19-59
 *   tile_size.h                 tile_size_fwd_sm90         lines    9-54
 *                               (its element_size == 2 half, 13-40)
 *   flash_api.cpp               PREPARE_VARLEN_MAX_BATCHES_1CTA  line 42
 *                               set_params_fprop           lines   50-168
 *                               run_mha_fwd_constexpr      lines  255-365
 *                               (the bf16 dispatch, 258-293)
 *                               run_mha_fwd                lines  367-385
 *                               get_pagedkv_tma            lines  415-424
 *                               get_pack_gqa               lines  426-440
 *                               get_num_splits             lines  442-471
 *                               get_max_headdim            lines  473-490
 *                               round_up_headdim           lines  492-509
 *                               mha_fwd                    lines  672-1198,
 *                               of which the port uses 759-781 (sizes, the
 *                               head size and head-count checks), 796-805
 *                               (window and causal), 834-839 (seqused_k:
 *                               one int length a sequence), 849 (is_varlen),
 *                               854-856 (alignment), 878-881 (rounding),
 *                               895-926 (params), 977-985 (pagedkv_tma,
 *                               num_splits, pack_gqa), 990-1002 (the
 *                               scheduler metadata's size; 993
 *                               varlen_sort_batches), 1092-1104
 *                               (out_accum, softmax_lse_accum), 1167-1169.
 *   flash_prepare_scheduler.cu  prepare_varlen_num_blocks_kernel lines 42-215
 *                               (60, 79-128 and 140-161 form the split:
 *                               the lanes 123-128, each sequence's blocks
 *                               97-121, the block's int sum 146-154, the
 *                               batch's quotient 156, each sequence's
 *                               split 158; 163-213 store it, sorted or
 *                               not)
 *                               prepare_varlen_num_blocks  lines  219-250
 * Read to fix the branches below, not ported: flash_fwd_launch_template.h
 * run_flash_fwd (28-199: kBlockM/kBlockN from the kernel's template at
 * 40-43, the prepare call at 163-166) and run_mha_fwd_ (201-226);
 * static_switch.h NUM_WARP_SWITCH (183-204); tile_scheduler.hpp (112,
 * 630: the kernel reads num_splits_dynamic per batch; 561-570: with Sort
 * it maps the virtual batch back through varlen_batch_idx, so a sequence
 * runs the count formed from its own length); paged_kv.h and
 * mainloop_fwd_sm90_tma_gmma_ws.hpp 535-538 (only the TMA path asks
 * page_size % kBlockN == 0, and get_pagedkv_tma takes it only then);
 * flash_attn_interface.py flash_attn_with_kvcache (942-1104: the Python
 * entry, whose defaults causal=False, window_size=(-1, -1), softcap=0,
 * num_splits=0, pack_gqa=None, sm_margin=0 this setting is, and which
 * passes cache_seqlens as seqused_k); setup.py (51-72: every head size and
 * feature built by default; 647-668: flash_prepare_scheduler.cu built with
 * --use_fast_math; torch >= 2.9 builds flash_api_stable.cpp instead of
 * flash_api.cpp, whose get_pagedkv_tma, get_pack_gqa, get_num_splits and
 * round_up_headdim are the same lines at 480-575, and whose mha_fwd,
 * 741-1270, differs only in its tensor API).
 *
 * The branches of upstream this port fixes, and why:
 *  - page_table given (paged_KV): seqlen_k = max_num_pages_per_seq *
 *    page_size (768); no cu_seqlens_k (refused with a page table), no
 *    kv_batch_idx, no leftpad_k. page_size is not checked by upstream
 *    (the Python docstring: "page_block_size can be arbitrary"), so no
 *    page size is refused.
 *  - seqused_k given (cache_seqlens: seq_len for every sequence, or a
 *    mixed batch's seq_lens), no cu_seqlens_q, no seqused_q: is_varlen
 *    (849), so use_prepare_varlen,
 *    num_splits_dynamic_ptr is set before get_num_splits (980), whose
 *    total_mblocks then pretends batch = 1 (468): the host count is only an
 *    upper bound. The prepare kernel runs (run_flash_fwd 163) and the
 *    per-batch split it writes is what the kernel launches.
 *  - A mixed batch: the page table is as wide as its longest sequence
 *    needs, so the host's seqlen_k (768), and with it get_num_splits' bound
 *    (num_splits_static), the TMA choice and the scratch, are those of
 *    the longest sequence; the prepare kernel sums every sequence's
 *    num_m_blocks * num_n_blocks (146-154) into one quotient, blocks_per_sm
 *    (156), and gives each sequence min(ceil(its num_n_blocks /
 *    blocks_per_sm), num_splits_static), at least 1 (158). A short
 *    sequence beside long ones therefore gets fewer splits, and a long one
 *    fewer than it would alone (13 alone, 11, 8 or 2 in the worked
 *    example, tests/unit/test_fa3.c).
 *  - varlen_sort_batches = !is_local (993) is true, so the kernel sorts
 *    (Sort, 163-204); the sort carries each sequence's split with its
 *    index and changes no value (tile_scheduler.hpp 561-570).
 *  - seqlen_q = 1, window (-1, -1), no attention_chunk, causal = False:
 *    is_causal and is_local are false (799-805, 148-149). (A caller that
 *    passes causal=True keeps is_causal for 64 < head_dim <= 128 with a
 *    paged cache, 801; that changes only kBlockN on the TMA path, i.e.
 *    more than 128 query heads per KV head, and the heuristic's L2 branch,
 *    which needs num_m_blocks >= 2 * SMs: not ported.)
 *  - bf16, no softcap, no q_v, no k_new/v_new, no rotary, no descale, no
 *    out_, no scheduler_metadata, no pack_gqa argument: head_size % 8
 *    (854-856), element_size 2, seqlen_knew = 0, knew_ptr null, and
 *    get_pack_gqa decides pack_gqa.
 *  - head_size_v == head_size: dv_rounded = d_rounded (879), and the bf16
 *    dispatch instantiates kHeadDim = kHeadDimV = round_up_headdim(d)
 *    (for 128 < d <= 192, dv > 128 takes 192 x 192 at 288); the host's
 *    tile_size_fwd_sm90(d_rounded, ...) and the kernel's therefore agree.
 *  - sm90 (arch 90): tile_size_fwd_sm90, not sm8x; PackGQA = pack_gqa ||
 *    PagedKVNonTMA || Split (377). get_pagedkv_tma (423) is true only when
 *    page_size % kBlockN == 0 and the group (h / h_k) exceeds kBlockM
 *    (192 for d <= 96, else 128); otherwise the paged KV is loaded without
 *    TMA, which packs GQA and takes the smaller kBlockN.
 *  - num_splits is the caller's argument: 0 runs get_num_splits; N > 0 is
 *    params.num_splits as it is (983), the bound the prepare kernel never
 *    exceeds, so the per-batch split still moves with the batch; N > 256
 *    is refused (1095).
 *  - batch size: up to 992 (PREPARE_VARLEN_MAX_BATCHES_1CTA, 31 batches
 *    per warp, 32 warps) the prepare kernel is one CTA and sums
 *    num_m_blocks * num_n_blocks over the whole batch; above it, or when
 *    num_splits is 1, num_splits_dynamic is 1 for every batch (141-144).
 *
 * Deliberate differences, each also commented where it stands:
 *  - Shapes, not tensors. The page table is taken as exactly as wide as
 *    seq_len needs, max_num_pages_per_seq = ceil(seq_len / page_size). The
 *    host heuristic reads the table's capacity (seqlen_k), the prepare
 *    kernel reads cache_seqlens (seq_len): a caller whose page table is
 *    wider (allocated for the model's maximum length, say) gets upstream's
 *    bound for that wider seqlen_k, not this one.
 *  - The per-batch split's one division, float(total_blocks) * 1.1f *
 *    float(num_head) / float(num_sm) (flash_prepare_scheduler.cu 156), is
 *    IEEE single-precision division here. Upstream builds that file with
 *    --use_fast_math, where a GPU divides approximately (within 2 ulp), so
 *    where the quotient is a whole number, or within an ulp or two of one,
 *    ceilf on the GPU may land one higher or lower than here.
 *  - ceilf and ceil are written by hand (no libm). Whichever overload the
 *    host build resolves ceil(n_waves) to (std::ceil(float), or
 *    ::ceil(double) with the quotient rounded back to float), the result is
 *    the same float: the ceiling of a float is a float, and a double
 *    quotient of two floats rounded to float equals the float quotient
 *    (53 >= 2 * 24 + 2 bits).
 *  - at::cuda::getCurrentDeviceProperties()->multiProcessorCount -
 *    sm_margin is s->sm_count (sm_margin 0).
 *  - The prepare kernel's lanes, warp shuffles, block-wide atomicAdd and
 *    merge sort become two loops over the batch in its order: one sums
 *    num_m_blocks * num_n_blocks, one forms each num_splits_dynamic. The
 *    sum is of ints and each split reads only its own lane and the
 *    batch's one quotient, so the order changes nothing; no float is
 *    accumulated. For equal lengths the second loop forms its one value
 *    once.
 *  - Where the blocks_per_sm quotient is within 2 ulp of a whole number
 *    (a float 2 steps below it and one 2 steps above it have different
 *    ceilings), a GPU's approximate division may move blocks_per_sm by
 *    one, and with it the splits: fa3_launch_batch says so in its term
 *    blocks_per_sm_near_whole (1). fa3_launch has no such term: its 16
 *    terms fill ENGINE_TERMS_MAX already.
 *  - The batch's own refusals (engine.h): no sequence, more than
 *    ENGINE_MAX_SEQS, a length of 0 or beyond ENGINE_MAX_SEQ_LEN. A
 *    length of 0 upstream would get 0 blocks and 1 split.
 *  - A zero count is refused (engine.h), where upstream would divide by
 *    zero or launch nothing.
 *  - Upstream does its arithmetic in int; a shape where one of its int
 *    intermediates would overflow (undefined behaviour there: a seqlen_k *
 *    (d + dv) * 2 past 2^31, about two million tokens at head_dim 256) is
 *    refused here instead.
 *  - std::vector<float> efficiency is a float[128] (max_splits <= 128).
 *  - The tensors mha_fwd allocates become their byte count.
 *
 * Its scratch is monotone in the batch size and the longest sequence:
 * get_num_splits reads the longest alone (batch = 1) and never falls as it
 * grows, and the scratch is that count times the batch (policy/reserve.c
 * has the proof, issue 51).
 *
 * What it never does: allocate, perform I/O or keep state; fa3_launch and
 * fa3_launch_batch are pure functions of their arguments (the latter
 * writes only the caller's by_seq) and thread-safe.
 *
 * Upstream's license (LICENSE at that commit), whose notice a port keeps:
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
#ifndef FA3_H
#define FA3_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What fa3_launch reads. The SM count is the device's multiProcessorCount,
 * which the catalog knows; no input is one only a running GPU knows. */
#define FA3_READS                                                                          \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |                 \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE | \
	 ENGINE_IN_NUM_SPLITS)
#define FA3_GPU_READS 0u

#define FA3_TITLE "FlashAttention-3"
#define FA3_REPO "Dao-AILab/flash-attention"
#define FA3_COMMIT "0251105a2fb19d2957484b7f023cd8c115286ced"
#define FA3_FILES                                                      \
	"hopper/flash_api.cpp hopper/heuristics.h hopper/tile_size.h " \
	"hopper/flash_prepare_scheduler.cu"
#define FA3_FUNCTIONS                                                                        \
	"mha_fwd get_pagedkv_tma get_num_splits get_pack_gqa round_up_headdim "              \
	"num_splits_heuristic should_pack_gqa tile_size_fwd_sm90 prepare_varlen_num_blocks " \
	"prepare_varlen_num_blocks_kernel"

/*
 * What mha_fwd would launch for *s on sm90: num_splits = the per-batch
 * num_splits_dynamic the prepare kernel writes (every sequence's, they are
 * equal), num_splits_bound = params.num_splits (get_num_splits' count, or
 * the caller's num_splits), workspace_bytes = out_accum + softmax_lse_accum
 * (float32, sized by num_splits_bound, allocated only when it is above 1;
 * 0 otherwise), and its intermediates under upstream's names: kBlockM,
 * kBlockN (the kernel's tile), pagedkv_tma, pack_gqa (the kernel's
 * PackGQA), seqlen_k (the page table's capacity); when the heuristic ran,
 * get_num_splits.num_m_blocks, get_num_splits.num_n_blocks (its blocks of
 * seqlen_k), total_mblocks, size_one_kv_head; then num_splits_static,
 * num_ctas (the prepare kernel's gridDim.x), num_m_blocks, num_n_blocks
 * (the prepare kernel's, of seq_len), total_blocks and blocks_per_sm (when
 * it formed them), num_splits_dynamic.
 *
 * Refuses (status ENGINE_REFUSED, refused and refused_input static) a zero
 * count, head_dim above 256 or not a multiple of 8, num_q_heads %
 * num_kv_heads != 0, num_splits above 256, and a shape beyond upstream's
 * int arithmetic. Never fails otherwise.
 */
struct engine_answer fa3_launch(const struct engine_shape *s);

/*
 * What mha_fwd would launch on sm90 for *s over the mixed batch *b, whose
 * sequence i holds b->seq_lens[i] tokens of KV: b is read in place of
 * s->num_seqs and s->seq_len (which are ignored), the page table taken as
 * wide as the longest sequence needs. Writes sequence i's own
 * num_splits_dynamic to by_seq[i] for i < b->num_seqs (by_seq: the
 * caller's, b->num_seqs long; NULL when only the answer is wanted) and
 * answers num_splits = the largest of them, num_splits_bound and
 * workspace_bytes as fa3_launch (the host's bound for the longest
 * sequence, and the scratch it sizes for b->num_seqs sequences), and the
 * terms of fa3_launch less num_n_blocks and num_splits_dynamic (one per
 * sequence), plus blocks_per_sm_near_whole (fa3.h) where blocks_per_sm
 * was formed. With every length equal to L, the answer's status,
 * num_splits, num_splits_bound and workspace_bytes, and every by_seq
 * entry, are fa3_launch's for b->num_seqs sequences of L.
 *
 * Refuses as fa3_launch does, a length naming seq_lens where fa3_launch
 * names seq_len, and also no sequence, more than ENGINE_MAX_SEQS, a NULL
 * seq_lens, or a length of 0 or beyond ENGINE_MAX_SEQ_LEN. A refused
 * answer writes nothing to by_seq.
 */
struct engine_answer fa3_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				      uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* FA3_H */
