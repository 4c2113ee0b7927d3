#[allow(unused_imports)] // BatchAnswer: launch_batch, read by harness_batch.rs
use crate::{Answer, BatchAnswer, Shape};

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

// ---------------------------------------------------------------------------
// A mixed batch (make engines-check-batch-vllm, harness_batch.rs).
//
// paged_attn.py forward_decode reads one length, max_seq_len (the decode
// metadata's max_decode_seq_len: the batch's longest), for use_v1 and
// max_num_partitions, so the launch and its scratch are launch()'s for
// num_seqs sequences of the longest. The kernels read each sequence's own
// seq_lens[seq_idx] (csrc/attention/attention_kernels.cuh, read at the
// stored 04d1abd3918b1f88c86088d1647d2facda91dc5a):
//   paged_attention_kernel, PARTITION_SIZE > 0 (v2):
//     if (USE_PARTITIONING && partition_idx * PARTITION_SIZE >= seq_len) return;
//   paged_attention_v2_reduce_kernel:
//     const int num_partitions = DIVIDE_ROUND_UP(seq_len, PARTITION_SIZE);
//     if (num_partitions == 1) { copy tmp_out to out; return; }
//     ... merges partitions 0..num_partitions
// so a sequence's attention is split into the partitions that do work,
// DIVIDE_ROUND_UP(seq_len, 512) of them; v1 (PARTITION_SIZE 0) runs one
// CTA over the whole sequence: 1.

/// Sequences of one v2 launch get different counts.
#[allow(dead_code)] // read by harness_batch.rs
pub const SPLITS_PER_SEQUENCE: bool = true;

/// The partitions of the v2 grid's z (0..max_num_partitions) that do work
/// for a sequence of seq_len tokens (the kernel's early return), in the
/// kernel's int arithmetic; the reduce kernel merges as many.
// In i64, not the kernel's int: past 2^31 - 512 tokens its + 511 would
// overflow, but a grid z above 65535 (65535 * 512 tokens) fails at launch
// long before; like launch(), the arithmetic is answered as written.
fn partitions_with_work(seq_len: i64, max_num_partitions: i64) -> i64 {
    const PARTITION_SIZE: i64 = 512;
    let num_partitions = (seq_len + PARTITION_SIZE - 1) / PARTITION_SIZE; // reduce kernel
    // the early return: partition num_partitions - 1 works, num_partitions does not
    debug_assert!(num_partitions >= 1 && num_partitions <= max_num_partitions);
    debug_assert!((num_partitions - 1) * PARTITION_SIZE < seq_len);
    debug_assert!(num_partitions == max_num_partitions || num_partitions * PARTITION_SIZE >= seq_len);
    num_partitions
}

/// forward_decode over a mixed batch: s.num_seqs and s.seq_len are not
/// read; seq_lens is a batch engine.h accepts (harness_batch.rs checks).
#[allow(dead_code)] // read by harness_batch.rs and the tests
pub fn launch_batch(s: &Shape, seq_lens: &[u32]) -> Result<BatchAnswer, &'static str> {
    let max_seq_len: u32 = seq_lens.iter().copied().max().unwrap_or(0);
    let batch = Shape { num_seqs: seq_lens.len() as u32, seq_len: max_seq_len, ..*s };
    let answer = launch(&batch)?;
    // use_v1 as forward_decode decides it (launch's answer says 1 split and
    // no scratch for v1; v2 with one partition is v1 by the rule anyway)
    let max_num_partitions: i64 = (max_seq_len as i64 + _PARTITION_SIZE - 1) / _PARTITION_SIZE;
    let num_seqs_x_heads: i64 = seq_lens.len() as i64 * s.num_q_heads as i64;
    let use_v1 = max_seq_len <= 8192 && (max_num_partitions == 1 || num_seqs_x_heads > 512);
    let by_seq: Vec<u32> = if use_v1 {
        vec![1; seq_lens.len()]
    } else {
        seq_lens.iter().map(|&l| partitions_with_work(l as i64, max_num_partitions) as u32).collect()
    };
    Ok(BatchAnswer { answer, by_seq, near_whole: false })
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    fn shape(q: u32, kv: u32, d: u32, page: u32) -> Shape {
        Shape {
            sm_count: 0,
            num_seqs: 0,
            num_q_heads: q,
            num_kv_heads: kv,
            head_dim: d,
            seq_len: 0,
            page_size: page,
            blocks_per_sm: 0,
            cuda_graph: false,
            num_splits: 0,
        }
    }

    #[test]
    fn worked_example_8192_512_100() {
        // 32 q heads: max_seq_len 8192 <= 8192, max_num_partitions 16, but
        // 3 * 32 = 96 <= 512: v2, 16 partitions; 512 and 100 tokens do work
        // in partition 0 only.
        let a = launch_batch(&shape(32, 8, 128, 16), &[8192, 512, 100]).unwrap();
        assert_eq!(a.by_seq, vec![16, 1, 1]);
        assert_eq!(a.answer.num_splits, 16);
        assert_eq!(a.answer.num_splits_bound, 16);
        // tmp_output 3 x 32 x 16 x 128 bf16 + exp_sums and max_logits 3 x 32 x 16 f32
        assert_eq!(a.answer.workspace_bytes, 3 * 32 * 16 * 128 * 2 + 2 * 3 * 32 * 16 * 4);
        assert_eq!(a.answer.workspace_bytes, 405_504);
    }

    #[test]
    fn worked_example_v1_and_v2_edges() {
        let s = shape(32, 8, 128, 16);
        // 8,193 tokens: past 8192, v2 whatever the batch; 17 partitions
        assert_eq!(launch_batch(&s, &[100, 8193]).unwrap().by_seq, vec![1, 17]);
        // 17 x 32 = 544 > 512 heads: v1, one split each
        let mut lens = vec![100u32; 17];
        lens[0] = 8192;
        let a = launch_batch(&s, &lens).unwrap();
        assert!(a.by_seq.iter().all(|&x| x == 1));
        assert_eq!((a.answer.num_splits, a.answer.workspace_bytes), (1, 0));
        // 16 x 32 = 512, not above it: v2
        let a = launch_batch(&s, &lens[..16]).unwrap();
        assert_eq!(a.by_seq[0], 16);
        assert!(a.by_seq[1..].iter().all(|&x| x == 1));
        // all within one partition: v1
        assert_eq!(launch_batch(&s, &[512, 1, 300]).unwrap().by_seq, vec![1, 1, 1]);
        // 513 and 1024 tokens: 2 partitions each, 1025: 3
        assert_eq!(launch_batch(&s, &[513, 1024, 1025, 1]).unwrap().by_seq, vec![2, 2, 3, 1]);
        // 2^31 - 512 tokens, the longest whose + 511 fits an int: 4,194,303
        // partitions (a grid z upstream cannot launch; answered as the
        // arithmetic gives)
        let a = launch_batch(&s, &[2_147_483_136, 1]).unwrap();
        assert_eq!(a.by_seq, vec![4_194_303, 1]);
        assert_eq!(a.answer.num_splits, 4_194_303);
        // refused as launch() refuses: block size 64
        assert!(launch_batch(&shape(32, 8, 128, 64), &[8192, 512, 100]).is_err());
    }

    #[test]
    fn equal_lengths_are_launch() {
        for &(q, kv, d, page) in &[(32, 8, 128, 16), (64, 8, 80, 8), (8, 1, 256, 32), (40, 40, 112, 16)] {
            for n in [1u32, 2, 3, 16, 17, 64, 200] {
                for len in [1u32, 511, 512, 513, 4096, 8192, 8193, 65536, 200_000] {
                    let lens = vec![len; n as usize];
                    let a = launch_batch(&shape(q, kv, d, page), &lens).unwrap();
                    let mut u = shape(q, kv, d, page);
                    u.num_seqs = n;
                    u.seq_len = len;
                    let b = launch(&u).unwrap();
                    assert_eq!(a.answer, b);
                    assert!(a.by_seq.iter().all(|&x| x == b.num_splits));
                }
            }
        }
    }
}
