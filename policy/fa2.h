/* SPDX-License-Identifier: AGPL-3.0-only AND BSD-3-Clause */
/*
 * fa2 — FlashAttention-2's split choice for one paged decode launch, ported:
 * for a batch of equal lengths (fa2_launch) or of mixed ones
 * (fa2_launch_batch), where one count, from the block table's width (the
 * longest sequence) and the batch size, is every sequence's.
 *
 * Where it came from: Dao-AILab/flash-attention at commit
 * 0251105a2fb19d2957484b7f023cd8c115286ced, file
 * csrc/flash_attn/flash_api.cpp ("Copyright (c) 2024, Tri Dao."):
 *   num_splits_heuristic   lines  275-315 (its comment 275-280)
 *   set_params_splitkv     lines  317-347
 *   mha_fwd_kvcache        lines 1243-1532, of which the port uses
 *                          1295-1311 (sizes and the checks on them),
 *                          1313-1325 (causal off, the GQA swap),
 *                          1363-1365 (head size rounding),
 *                          1427-1450 (seqlens_k; the block table's
 *                          capacity check on its max, 1440-1447),
 *                          1496-1500 (the set_params_splitkv call).
 * Read to fix the branches below, not ported: run_mha_fwd (flash_api.cpp
 * 261-273), run_mha_fwd_splitkv_dispatch and run_flash_splitkv_fwd
 * (csrc/flash_attn/src/flash_fwd_launch_template.h 102-192), HEADDIM_SWITCH
 * (csrc/flash_attn/src/static_switch.h 90-111) and flash_attn_with_kvcache
 * (flash_attn/flash_attn_interface.py 1485-1618), the Python entry whose
 * defaults (window_size=(-1, -1), num_splits=0, no alibi) this setting is;
 * and, for a mixed batch, run_flash_splitkv_fwd's grid (the same
 * flash_fwd_launch_template.h, 107: num_splits split blocks for every
 * sequence) and compute_attn_1rowblock_splitkv (csrc/flash_attn/src/
 * flash_fwd_kernel.h 506-545: each split takes n_blocks_per_split of the
 * table's seqlen_k, 535, capped by its own sequence's blocks, 539).
 *
 * The branches of upstream this port fixes, and why:
 *  - block_table given (paged_KV): page_block_size % 256 == 0 is checked
 *    (1305), seqlen_k = max_num_blocks_per_seq * page_block_size (1306),
 *    no cache_batch_idx and no leftpad_k (both refused with a paged cache).
 *  - seqlen_q == 1 with no alibi: is_causal becomes false (1314), so
 *    window_size_right stays -1 (1315 does nothing).
 *  - no sliding window (window_size_left = window_size_right = -1, the
 *    Python default): the clamps at 1327-1328 do nothing, and
 *    seqlenq_ngroups_swapped (1319) reduces to
 *    num_heads > num_heads_k && head_size_og % 8 == 0. When it holds, the
 *    query is seen as (batch, ngroups, num_heads_k, d): seqlen_q = ngroups,
 *    num_heads = num_heads_k (1320-1325), and every size after that uses them.
 *  - no new K/V appended (k_, v_ absent: the step's token is already in the
 *    cache, so seq_len counts it), no rotary, no out_: seqlen_knew = 0.
 *  - seqlens_k given (cache_seqlens: seq_len for every sequence, or a
 *    mixed batch's seq_lens): the capacity check at 1443 applies to their
 *    max; it holds by construction (below).
 *  - A mixed batch: seqlen_k (1306) is the block table's width, as wide
 *    as the longest sequence needs, and set_params_splitkv (1498-1500)
 *    reads it and batch_size, never a sequence's own length: one
 *    num_splits for the launch, whose grid gives every sequence that many
 *    split blocks (flash_fwd_launch_template.h 107), so each by_seq entry
 *    is num_splits. A split whose share of the table's blocks lies past a
 *    short sequence's own blocks returns at once, writing 0 and -inf for
 *    the combine (flash_fwd_kernel.h 539-545): it is launched, and
 *    counted, but reads no KV.
 *  - dropout 0 (mha_fwd_kvcache passes 0.f at 1500): set_params_splitkv
 *    always takes its split-KV branch (332) and checks num_splits <= 128
 *    (343).
 *  - bf16 (fp16 would choose the same): the dtype checks pass; the type
 *    changes no size here (softmax_lse_accum and out_accum are float32).
 *  - softcap 0, no alibi: neither reaches the split choice.
 *  - an sm80-or-newer GPU (1271): there is no arch input; the port answers
 *    as on Ampere or newer (every target of the embedded catalog is).
 *  - num_splits is the caller's argument: 0 runs the heuristic (333-336),
 *    N > 0 is taken as it is (328), launched as it is (the grid has N
 *    split blocks even when N exceeds num_n_blocks), and refused above 128.
 *
 * Deliberate differences, each also commented where it stands:
 *  - Shapes, not tensors. The block table is taken as exactly as wide as
 *    seq_len needs, max_num_blocks_per_seq = ceil(seq_len / page_size): the
 *    narrowest table the capacity check accepts. The heuristic reads the
 *    table's capacity (seqlen_k), not cache_seqlens, so a caller whose block
 *    table is wider (say, allocated for the model's maximum length) gets
 *    the split count of that wider seqlen_k from upstream, not this one.
 *  - get_num_sm(get_current_device()) is s->sm_count.
 *  - A zero count is refused (engine.h), where upstream would divide by
 *    zero (num_heads_k) or check something else first.
 *  - Upstream does its arithmetic in int; a shape whose int intermediates
 *    would overflow (a size far beyond any real model) is refused here
 *    instead of wrapping. No shape a GPU can hold is refused for it.
 *  - The caller's num_splits is a uint32_t here and an int upstream: a
 *    value above 128 is refused either way (pybind11 refuses one above
 *    INT_MAX before the call, set_params_splitkv the rest).
 *  - ceil(n_waves) is written by hand (no libm). Whichever overload the
 *    upstream build resolves (std::ceil(float), or ::ceil(double) with the
 *    quotient rounded back to float), the result is the same float: the
 *    ceiling of a float is a float, and a double quotient of two floats
 *    rounded to float equals the float quotient (53 >= 2 * 24 + 2 bits).
 *  - std::vector<float> efficiency is a float[128] (max_splits <= 128).
 *  - The two tensors set_params_splitkv allocates become their byte count.
 *
 *  - The batch's own refusals (engine.h): no sequence, more than
 *    ENGINE_MAX_SEQS, a NULL seq_lens, a length of 0 or beyond
 *    ENGINE_MAX_SEQ_LEN.
 *
 * Its scratch is not monotone in the batch: the heuristic's count drops to
 * 1 as the batch grows and moves either way with num_n_blocks (the
 * eligibility test); it is monotone in the batch size only when num_splits
 * is given (policy/reserve.c searches the rest, issue 51).
 *
 * What it never does: allocate, perform I/O or keep state; fa2_launch and
 * fa2_launch_batch are pure functions of their arguments (the latter
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
#ifndef FA2_H
#define FA2_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What fa2_launch reads. The SM count is the device's, which the catalog
 * knows; no input is one only a running GPU knows. */
#define FA2_READS                                                                          \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS |                 \
	 ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE | \
	 ENGINE_IN_NUM_SPLITS)
#define FA2_GPU_READS 0u

#define FA2_TITLE "FlashAttention-2"
#define FA2_REPO "Dao-AILab/flash-attention"
#define FA2_COMMIT "0251105a2fb19d2957484b7f023cd8c115286ced"
#define FA2_FILES "csrc/flash_attn/flash_api.cpp"
#define FA2_FUNCTIONS "num_splits_heuristic set_params_splitkv mha_fwd_kvcache"

/*
 * What mha_fwd_kvcache would launch for *s: num_splits (= num_splits_bound),
 * workspace_bytes (softmax_lse_accum + out_accum, float32, allocated only
 * when num_splits > 1; 0 otherwise) and its intermediates under upstream's
 * names: seqlenq_ngroups_swapped, ngroups (num_heads / num_heads_k, which
 * upstream names only when it swaps), seqlen_q and num_heads (after the
 * swap), head_size (rounded to 8), head_size_rounded,
 * max_num_blocks_per_seq, seqlen_k, block_n, num_n_blocks, num_m_blocks,
 * num_SMs (the heuristic's: twice the SM count), batch_nheads_mblocks,
 * softmax_lse_accum_bytes, out_accum_bytes.
 *
 * Refuses (status ENGINE_REFUSED, refused and refused_input static) a zero
 * count, page_size not a multiple of 256, head_dim above 256,
 * num_q_heads % num_kv_heads != 0, num_splits above 128, and a shape beyond
 * upstream's int arithmetic. Never fails otherwise.
 */
struct engine_answer fa2_launch(const struct engine_shape *s);

/*
 * What mha_fwd_kvcache would launch for *s over the mixed batch *b, whose
 * sequence i holds b->seq_lens[i] tokens of KV: b is read in place of
 * s->num_seqs and s->seq_len (which are ignored), the block table taken
 * as wide as the longest sequence needs. The answer is fa2_launch's for
 * b->num_seqs sequences of the longest length (its counts, scratch and
 * terms: upstream reads no other length), and every by_seq[i], i <
 * b->num_seqs, is its num_splits (by_seq: the caller's, b->num_seqs
 * long; NULL when only the answer is wanted). With every length equal,
 * that is fa2_launch's answer for them, exactly.
 *
 * Refuses as fa2_launch does, a length naming seq_lens where fa2_launch
 * names seq_len, and also no sequence, more than ENGINE_MAX_SEQS, a NULL
 * seq_lens, or a length of 0 or beyond ENGINE_MAX_SEQ_LEN. A refused
 * answer writes nothing to by_seq.
 */
struct engine_answer fa2_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				      uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* FA2_H */
