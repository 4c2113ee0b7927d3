/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * vllm — a port of vLLM's paged attention v1/v2 decode choice: whether one
 * decode launch runs the single-pass v1 kernel or the partitioned v2 kernel,
 * how many partitions (KV splits) v2 runs, and the split-K scratch v2
 * allocates for them.
 *
 * Where it came from (read at exactly these commits):
 *
 *   vllm-project/vllm @ 5da3a322a03e030fc0cfb8c164402600d1bfbd0e
 *     vllm/attention/ops/paged_attn.py
 *       line 10       _PARTITION_SIZE = 512
 *       lines 81-182  PagedAttention.forward_decode: lines 108-112 take
 *                     block_size, num_seqs, num_heads, head_size and
 *                     max_num_partitions; lines 120-121 the use_v1 rule;
 *                     lines 123-144 the v1 call; lines 145-158 v2's
 *                     assert _PARTITION_SIZE % block_size == 0 and its
 *                     tmp_output / exp_sums / max_logits allocation;
 *                     lines 159-181 the v2 call.
 *
 *   vllm-project/vllm @ cc17020a31f79ed0ac6cc662df2b14d8dcc82624
 *     csrc/attention/paged_attention_v2.cu
 *       lines 49-137  paged_attention_v2_launcher: PARTITION_SIZE = 512
 *                     (line 51), max_num_partitions = DIVIDE_ROUND_UP(
 *                     max_seq_len, PARTITION_SIZE) (line 88), the grid
 *                     (num_heads, num_seqs, max_num_partitions) (line 93),
 *                     and the head_size switch (lines 102-136: 32, 64, 80,
 *                     96, 112, 120, 128, 192, 256, else TORCH_CHECK
 *                     "Unsupported head size").
 *       lines 155-171 CALL_V2_LAUNCHER_BLOCK_SIZE: the block_size switch
 *                     (8, 16, 32, else TORCH_CHECK "Unsupported block
 *                     size").
 *       lines 173-198 paged_attention_v2: is_block_sparse and
 *                     DISPATCH_BY_KV_CACHE_DTYPE into the block_size switch.
 *     csrc/attention/paged_attention_v1.cu is not stored at this commit;
 *     the version read (03f861174cf622c3c2c418fc6b048c30167bda49,
 *     paged_attention_v1_launcher and CALL_V1_LAUNCHER_BLOCK_SIZE) has the
 *     same head_size and block_size switches as v2 above, so v1 and v2
 *     take the same shapes and one dispatch check serves both.
 *
 *   vllm-project/vllm @ 04d1abd3918b1f88c86088d1647d2facda91dc5a (the
 *   stored version; not stored at cc17020)
 *     csrc/attention/attention_kernels.cuh, for vllm_launch_batch only:
 *       paged_attention_kernel's early return for a partition past a
 *       sequence's own seq_len, and paged_attention_v2_reduce_kernel's
 *       num_partitions = DIVIDE_ROUND_UP(seq_len, PARTITION_SIZE): what
 *       each sequence's attention is split into (see vllm_launch_batch).
 *
 *   Neither forward_decode nor either kernel checks num_heads against
 *   num_kv_heads (the kernels divide, num_queries_per_kv = num_heads /
 *   num_kv_heads); the backend that calls forward_decode does, in
 *   vllm/attention/backends/xformers.py XFormersImpl.__init__ @ 5da3a32
 *   (assert self.num_heads % self.num_kv_heads == 0). So does this port.
 *
 * Branches this port fixes, and why:
 *   - paged_attn.py lines 100-106, the block-sparse branch, is not taken:
 *     blocksparse_vert_stride keeps its default 0 (dense attention), so
 *     is_block_sparse is false in the kernels too (v2.cu line 195). It
 *     decides no split either way.
 *   - No alibi: alibi_slopes is None (forward_decode passes it through;
 *     it decides no split).
 *   - No fp8 KV cache: kv_cache_dtype "auto" with a bf16 query, so
 *     DISPATCH_BY_KV_CACHE_DTYPE picks CACHE_T = T = bf16; it decides no
 *     split, but it sizes tmp_output: output = torch.empty_like(query)
 *     (line 108) is bf16, so tmp_output (dtype=output.dtype) is 2 bytes an
 *     element; exp_sums and max_logits are torch.float32, 4 bytes.
 *   - CUDA, not ROCm: WARP_SIZE is 32 (v2.cu lines 22-26), which sizes
 *     only the kernels' shared memory, never the partitions. A ROCm
 *     backend's own custom paged attention, where one exists, does not go
 *     through forward_decode and is not this port.
 *   - max_seq_len = seq_len: every sequence holds seq_len tokens, so the
 *     decode metadata's max_decode_seq_len is seq_len (vllm_launch_batch:
 *     the batch's longest, max(seq_lens)). This is the eager call. Under
 *     a replayed CUDA graph, vLLM's model runner captured forward_decode
 *     with max_decode_seq_len = max_seq_len_to_capture and a
 *     padded batch (read at a stored model_runner.py, not at the pinned
 *     commit), so a graph decides v1/v2 by those instead; this port does
 *     not model that, and does not read cuda_graph.
 *   - Which attention backend vLLM selects is not this port: it answers
 *     for a decode that reaches PagedAttention.forward_decode (the XFormers
 *     backend on CUDA, for one).
 *
 * Deliberate differences:
 *   - Python's integers do not overflow; the port computes in uint64_t,
 *     which holds every quantity exactly for every 32-bit input except the
 *     scratch sizes of absurd shapes. A v2 scratch whose tensors, or
 *     their sum, exceed INT64_MAX bytes is refused: PyTorch refuses one
 *     such torch.empty ("Storage size calculation overflowed"), and no
 *     device holds the sum, so upstream fails there too, but in PyTorch or
 *     the allocator rather than in vLLM.
 *   - The kernels hold num_seqs, num_heads and max_seq_len in C++ int and
 *     launch a grid whose y and z are at most 65535 (num_seqs,
 *     max_num_partitions); shapes past those limits fail at launch upstream
 *     and are not modelled here (the port answers them as Python computes).
 *     So are a mixed batch's per-sequence counts: the kernels'
 *     DIVIDE_ROUND_UP(seq_len, PARTITION_SIZE) in int would overflow past
 *     2^31 - 512 tokens, far beyond the 65535 * 512 the grid allows, and
 *     vllm_launch_batch computes it in uint64_t.
 *   - vLLM has no num_splits argument: a non-zero shape.num_splits is
 *     refused. It is looked at only for that, so VLLM_READS leaves it out.
 *     sm_count, blocks_per_sm and cuda_graph are not read at all (the
 *     v1/v2 choice does not know the device).
 *   - The head sizes accepted are the kernels' (v2.cu lines 102-136),
 *     including 32 and 120, though paged_attn.py's get_supported_head_sizes
 *     (lines 32-34: 64, 80, 96, 112, 128, 192, 256), which the XFormers
 *     backend enforces at construction, lists fewer.
 *
 * Answer: num_splits = max_num_partitions for v2, 1 for v1;
 * num_splits_bound = num_splits; workspace_bytes = tmp_output.nbytes +
 * exp_sums.nbytes + max_logits.nbytes for v2, 0 for v1. Terms carry the
 * upstream's names (max_seq_len, _PARTITION_SIZE, max_num_partitions,
 * "num_seqs * num_heads", use_v1, PARTITION_SIZE, tmp_output.nbytes, ...).
 *
 * vLLM is licensed under the Apache License, Version 2.0; its LICENSE
 * carries no copyright line of its own, and paged_attention_v2.cu says
 * "Copyright (c) 2023, The vLLM team." and "Copyright (c) 2020-2023,
 * NVIDIA CORPORATION. All rights reserved." (the kernels are adapted from
 * FasterTransformer). This file is written here from a reading of that
 * code and contains none of it.
 *
 * Its scratch is monotone in the longest sequence at a fixed num_seqs, not
 * in num_seqs: v1, with none, takes over past 512 sequence-heads up to
 * 8192 tokens (policy/reserve.c searches the sizes, issue 51).
 *
 * Pure: no allocation, no I/O, no state (engine.h).
 */
#ifndef VLLM_H
#define VLLM_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VLLM_READS (ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS | \
		    ENGINE_IN_HEAD_DIM | ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE)
#define VLLM_GPU_READS 0u
#define VLLM_TITLE "vLLM V0 paged attention v1/v2 (removed upstream)"
#define VLLM_REPO "vllm-project/vllm"
#define VLLM_COMMIT \
	"5da3a322a03e030fc0cfb8c164402600d1bfbd0e cc17020a31f79ed0ac6cc662df2b14d8dcc82624"
#define VLLM_FILES "vllm/attention/ops/paged_attn.py csrc/attention/paged_attention_v2.cu"
#define VLLM_FUNCTIONS \
	"PagedAttention.forward_decode paged_attention_v2_launcher paged_attention_v2"

/* The launch vLLM's forward_decode makes for shape *s (see above). */
struct engine_answer vllm_launch(const struct engine_shape *s);

/*
 * The launch forward_decode makes for the mixed batch *b, whose sequence
 * i holds b->seq_lens[i] tokens of KV; b is read in place of s->num_seqs
 * and s->seq_len (ignored). Reads no GPU value (VLLM_GPU_READS is 0) and
 * takes no options: this port has none.
 *
 * Upstream decides from the longest alone: max_seq_len (the metadata's
 * max_decode_seq_len) = max(seq_lens) sizes max_num_partitions and, with
 * num_seqs * num_heads, use_v1; so the answer (num_splits,
 * num_splits_bound, workspace_bytes, status, terms) is vllm_launch's for
 * b->num_seqs sequences of the longest length. The v2 grid has
 * max_num_partitions partitions for every sequence, but each sequence's
 * own are fewer: paged_attention_kernel (attention_kernels.cuh, read at
 * vllm-project/vllm 04d1abd3918b1f88c86088d1647d2facda91dc5a, the stored
 * version; cc17020's own copy was not stored, and v2.cu at cc17020 calls
 * the same paged_attention_v2_kernel / paged_attention_v2_reduce_kernel
 * with the same arguments) opens with
 *     if (USE_PARTITIONING && partition_idx * PARTITION_SIZE >= seq_len)
 *       return;  // "No work to do. Terminate the thread block."
 * (seq_len = seq_lens[seq_idx]), writing nothing, and
 * paged_attention_v2_reduce_kernel (same file) merges num_partitions =
 * DIVIDE_ROUND_UP(seq_len, PARTITION_SIZE) partitions of that sequence,
 * only copying tmp_out when that is 1; the partitions past it hold
 * nothing and are never read. So by_seq[i], what sequence i's attention
 * is split into in this launch, is:
 *   v2: ceil(seq_lens[i] / 512), from 1 to num_splits;
 *   v1: 1 (one CTA per head and sequence, no partitioning).
 * num_splits is the largest by_seq (the longest's), num_splits_bound =
 * num_splits. workspace_bytes counts v2's tmp_output (num_seqs, num_heads,
 * max_num_partitions, head_size; bf16) + exp_sums + max_logits (num_seqs,
 * num_heads, max_num_partitions; float32), in bytes, for one attention
 * layer's call: forward_decode allocates them afresh (torch.empty) on
 * every call and drops them when it returns, so layers share no buffer
 * but never hold theirs at once (PyTorch's caching allocator hands the
 * same memory to the next layer); sized by the longest sequence, the
 * partitions past a shorter one's length left unwritten. 0 for v1.
 *
 * With every length equal to L the answer and every by_seq[i] are
 * vllm_launch's for num_seqs sequences of L, exactly.
 *
 * by_seq: the caller's, b->num_seqs long; written only when the answer
 * is OK. Refuses as vllm_launch does (num_splits not 0, a zero count, a
 * group that does not divide, an unsupported block or head size, a
 * scratch past 2^63-1 bytes), a length naming seq_lens where vllm_launch
 * names seq_len; and also a NULL b or by_seq, no sequence (num_seqs),
 * more than ENGINE_MAX_SEQS, a NULL seq_lens, or a length of 0 or beyond
 * ENGINE_MAX_SEQ_LEN (seq_lens). Pure and thread-safe.
 */
struct engine_answer vllm_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				       uint32_t *by_seq);

#ifdef __cplusplus
}
#endif

#endif /* VLLM_H */
