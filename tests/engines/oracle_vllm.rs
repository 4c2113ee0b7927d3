use crate::{Answer, Shape};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_vllm — the second implementation of vLLM's paged attention v1/v2
// choice for one decode step and v2's split-K scratch, written from the
// upstream source alone (not from policy/vllm.c), for
// `make engines-check-vllm`. The upstream is Copyright (c) 2023 the vLLM
// team (and, for the kernels, NVIDIA), Apache-2.0.
//
// Upstream, two commits (issue 44):
//   vllm-project/vllm @ 5da3a322a03e030fc0cfb8c164402600d1bfbd0e
//     vllm/attention/ops/paged_attn.py
//       _PARTITION_SIZE = 512                           line 10
//       PagedAttention.forward_decode                   lines 81-182
//         block_size, num_seqs, num_heads, head_size    lines 109-110
//         max_num_partitions                            lines 111-112
//         use_v1                                        lines 120-121
//         v2: assert _PARTITION_SIZE % block_size == 0  line 147
//             tmp_output (output.dtype)                 lines 148-152
//             exp_sums (float32)                        lines 153-157
//             max_logits = empty_like(exp_sums)         line 158
//   vllm-project/vllm @ cc17020a31f79ed0ac6cc662df2b14d8dcc82624
//     csrc/attention/paged_attention_v2.cu
//       paged_attention_v2_launcher                     lines 49-137
//         max_num_partitions = DIVIDE_ROUND_UP(max_seq_len, PARTITION_SIZE)  line 88
//         switch (head_size): 32, 64, 80, 96, 112, 120, 128, 192, 256;
//           default TORCH_CHECK(false, "Unsupported head size")  lines 102-136
//       CALL_V2_LAUNCHER_BLOCK_SIZE: block sizes 8, 16, 32;
//           default TORCH_CHECK(false, "Unsupported block size") lines 155-171
//
// The v1 path (paged_attention_v1.cu) dispatches the same head sizes and
// block sizes (read at 03f861174cf622c3c2c418fc6b048c30167bda49, the
// stored version; cc17020's v1 file was not available to read): so the
// head-size and block-size refusals below stand for v1 and v2 alike.
//
// Not ported, said here: at 5da3a322 the backend that calls forward_decode
// (vllm/attention/backends/xformers.py XFormersImpl.__init__) also refuses
// head sizes outside PagedAttention.get_supported_head_sizes()
// (paged_attn.py 32-34: 64, 80, 96, 112, 128, 192, 256), which leaves out
// 32 and 120; issue 44 takes the kernel dispatch (v2.cu, above) as the
// set, so 32 and 120 are answered here.
//
// The fixed setting (issue 44): one decode step, query (num_seqs,
// num_q_heads, head_size) bf16, every sequence at seq_len tokens, so
// max_seq_len = seq_len; no blocksparse (blocksparse_vert_stride 0),
// no alibi. Python ints are unbounded: i64 here (no shape swept comes
// near); the C++ launcher's `int` is i32.

// paged_attn.py line 10 (= PARTITION_SIZE in paged_attention_v2_launcher)
const _PARTITION_SIZE: i64 = 512;

// paged_attention_v2.cu 102-136 (v1.cu's switch is the same)
fn head_size_dispatched(head_size: i64) -> bool {
    matches!(head_size, 32 | 64 | 80 | 96 | 112 | 120 | 128 | 192 | 256)
}

// paged_attention_v2.cu 155-171, CALL_V2_LAUNCHER_BLOCK_SIZE (v1's the same)
fn block_size_dispatched(block_size: i64) -> bool {
    matches!(block_size, 8 | 16 | 32)
}

pub fn launch(s: &Shape) -> Result<Answer, &'static str> {
    // Counts that must be at least 1 (issue 44).
    if let Some(why) = crate::zero_count(s, false) {
        return Err(why);
    }
    // forward_decode has no split-count argument.
    if s.num_splits != 0 {
        return Err("vLLM's paged attention has no num_splits argument");
    }
    // xformers.py XFormersImpl.__init__: assert num_heads % num_kv_heads == 0
    if s.num_q_heads % s.num_kv_heads != 0 {
        return Err("num_q_heads must be a multiple of num_kv_heads");
    }

    // forward_decode, paged_attn.py 108-121
    let block_size: i64 = s.page_size as i64; // value_cache.shape[3]
    let num_seqs: i64 = s.num_seqs as i64;
    let num_heads: i64 = s.num_q_heads as i64;
    let head_size: i64 = s.head_dim as i64;
    let max_seq_len: i64 = s.seq_len as i64;
    // Python //: floor division, both operands positive
    let max_num_partitions: i64 = (max_seq_len + _PARTITION_SIZE - 1) / _PARTITION_SIZE;
    // For context len > 8192, use V2 kernel to avoid shared memory shortage.
    let use_v1: bool = max_seq_len <= 8192 && (max_num_partitions == 1 || num_seqs * num_heads > 512);

    if use_v1 {
        // ops.paged_attention_v1 (paged_attn.py 123-144): the launcher's
        // block-size and head-size switches
        if !block_size_dispatched(block_size) {
            return Err("unsupported block size (8, 16, 32)");
        }
        if !head_size_dispatched(head_size) {
            return Err("unsupported head size (32, 64, 80, 96, 112, 120, 128, 192, 256)");
        }
        // v1: one pass over the whole sequence, no scratch
        return Ok(Answer { num_splits: 1, num_splits_bound: 1, workspace_bytes: 0 });
    }

    // Run PagedAttention V2 (paged_attn.py 145-182).
    if _PARTITION_SIZE % block_size != 0 {
        // line 147: assert _PARTITION_SIZE % block_size == 0
        return Err("unsupported block size (8, 16, 32)");
    }
    // tmp_output: (num_seqs, num_heads, max_num_partitions, head_size), output.dtype = bf16
    let tmp_output_numel: i64 = num_seqs * num_heads * max_num_partitions * head_size;
    // exp_sums: (num_seqs, num_heads, max_num_partitions), float32; max_logits the same
    let exp_sums_numel: i64 = num_seqs * num_heads * max_num_partitions;
    let max_logits_numel: i64 = exp_sums_numel;
    // ops.paged_attention_v2 -> CALL_V2_LAUNCHER_BLOCK_SIZE, then the launcher
    if !block_size_dispatched(block_size) {
        return Err("unsupported block size (8, 16, 32)");
    }
    if !head_size_dispatched(head_size) {
        return Err("unsupported head size (32, 64, 80, 96, 112, 120, 128, 192, 256)");
    }
    // paged_attention_v2.cu 88: int max_num_partitions = DIVIDE_ROUND_UP(max_seq_len, PARTITION_SIZE)
    // (the launcher's `int max_seq_len`; grid z = max_num_partitions, line 93)
    let launcher_max_seq_len: i32 = max_seq_len as i32;
    let launched_partitions: i32 = launcher_max_seq_len.wrapping_add(512 - 1) / 512;
    debug_assert_eq!(launched_partitions as i64, max_num_partitions);

    let workspace_bytes: u64 =
        tmp_output_numel as u64 * 2 + exp_sums_numel as u64 * 4 + max_logits_numel as u64 * 4;
    Ok(Answer {
        num_splits: launched_partitions as u32,
        num_splits_bound: launched_partitions as u32,
        workspace_bytes,
    })
}
