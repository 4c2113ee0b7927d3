use crate::{Answer, Batch};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_batch_vllm_triton — the second implementation of vLLM V1's
// TRITON_ATTN decode launch over a mixed batch: 2D or 3D kernel, the
// segments each sequence runs, and the segment scratch the metadata builder
// allocates. Written from the upstream source alone (not from
// policy/vllm_triton.c), for `make engines-check-batch-vllm_triton`. The
// upstream is Copyright contributors to the vLLM project, Apache-2.0.
//
// Upstream: vllm-project/vllm @ 81be2e09aebfd1c45b3ed9f73d2850da8a72984c
//
// The configuration (vllm/config/vllm.py _set_cudagraph_sizes, 1849-1967):
//   under a cudagraph_mode other than NONE, max_cudagraph_capture_size None
//   becomes min(max_num_seqs * (1 + num_speculative_tokens) * 2, 512) (512:
//   max_num_seqs is 256 or more by default, arg_utils.py 2553-2620), then
//   min(max_num_batched_tokens, that) (8192 or more: no change); the
//   "balanced" list is [i for i in [1, 2, 4] if i <= max] +
//   range(8, min(max + 1, 256), 8) + range(256, max + 1, 16), sorted.
//
// The builder (triton_attn.py TritonAttentionMetadataBuilder.__init__,
// 104-175): decode_cudagraph_enabled for FULL_AND_PIECEWISE,
// FULL_DECODE_ONLY, FULL; seq_threshold_3D = MIN_LAUNCH_GRID_SIZE_2D (128)
// // num_heads_kv, then min(capture_sizes, key=lambda x: abs(x - t)) under
// those modes; softmax_segm_output float32 (t, num_heads_q, 16,
// next_power_of_2(headdim)), softmax_segm_max and _expsum float32 (t,
// num_heads_q, 16).
//
// The launch (triton_unified_attention.py unified_attention, 1036-1082):
//   use_3d = not (buffers None or max_seqlen_q > 1 or num_seqs >
//   seq_threshold_3D or is_batch_invariant); grid (q_blocks, kv_heads,
//   num_par_softmax_segments) with TILE_SIZE_DECODE (16 for a 2-byte query,
//   _get_tile_size 784-799), else (q_blocks, kv_heads) with
//   TILE_SIZE_PREFILL (32). kernel_unified_attention (322-327): program
//   segm_idx returns when segm_idx * tiles_per_segment * TILE_SIZE >=
//   seq_len, tiles_per_segment = cdiv_fn(seq_len, NUM_SEGMENTS_PER_SEQ *
//   TILE_SIZE), all in Triton int32 (seq_lens is an int32 tensor). This
//   oracle counts the programs that do not return, and checks
//   reduce_segments' act_num_segments (718-726) against the count.
//   compute_tile_loop_bounds (helpers 142-195): decode, causal: prefix
//   min(context_len + (BLOCK_M - 1) // num_queries_per_kv + 1, seq_len),
//   num_tiles = cdiv_fn(prefix, TILE_SIZE), in int32.
//
// Refused, as the backend refuses or cannot run: head_size < 32
// (supports_head_size 385-387), block_size % 16 != 0 (get_kv_cache_shape
// 329-330), num_q_heads % num_kv_heads != 0, a num_splits argument (none
// exists), an int32 sum that wraps in the kernels, a scratch past u64.
//
// Python ints are unbounded: held in u64/i64/u128 here where they could
// grow; Triton's int32 is i32 with wrapping sums, and a batch in which the
// GPU's wrapped value differs from the exact one is refused.

const MIN_LAUNCH_GRID_SIZE_2D: u64 = 128;
const NUM_PAR_SOFTMAX_SEGMENTS: i32 = 16;

pub const CG_FULL_AND_PIECEWISE: u32 = 0;
pub const CG_NONE: u32 = 1;
pub const CG_PIECEWISE: u32 = 2;
pub const CG_FULL_DECODE_ONLY: u32 = 3;
pub const CG_FULL: u32 = 4;

// vllm/utils/math_utils.py next_power_of_2: 1 << (n - 1).bit_length()
fn next_power_of_2(n: u64) -> u64 {
    if n < 1 {
        return 1;
    }
    let bit_length = 64 - (n - 1).leading_zeros();
    1u64 << bit_length
}

// _set_cudagraph_sizes' default list. Sizes past 4096 are left out: a
// threshold is at most 128 and 1 is always in the list (distance at most
// 127), so no size above 255 can be the nearest; the list would otherwise
// hold up to 2^28 entries for a max of 2^32 - 1.
fn capture_sizes(max_capture_size: u64) -> Vec<u64> {
    let mut v: Vec<u64> = [1u64, 2, 4].iter().cloned().filter(|&i| i <= max_capture_size).collect();
    let cap = max_capture_size.min(4096);
    if max_capture_size >= 8 {
        let mut x = 8;
        while x < (cap + 1).min(256) {
            v.push(x);
            x += 8;
        }
    }
    if max_capture_size >= 256 {
        let mut x = 256;
        while x < cap + 1 {
            v.push(x);
            x += 16;
        }
    }
    v.sort();
    v.dedup();
    v
}

// Python's min(iterable, key=...): the first element whose key is least.
fn python_min_by_abs(list: &[u64], t: u64) -> u64 {
    let mut best = list[0];
    let mut best_key = (best as i128 - t as i128).abs();
    for &x in &list[1..] {
        let key = (x as i128 - t as i128).abs();
        if key < best_key {
            best = x;
            best_key = key;
        }
    }
    best
}

// cdiv_fn: (x + y - 1) // y, evaluated as Triton does on int32 tensors:
// two's-complement wrapping sums (arith.addi carries no overflow flag) and a
// truncating signed division (arith.divsi).
fn cdiv_triton(x: i32, y: i32) -> i32 {
    x.wrapping_add(y).wrapping_sub(1) / y
}

// The same, as the Python it is written in means it (exact, floor).
fn cdiv_exact(x: i64, y: i64) -> i64 {
    (x + y - 1).div_euclid(y)
}

// The programs of one sequence's 3D launch that run (do not return early),
// counted as the GPU counts them; None when a wrapped int32 sum makes the
// GPU's count or tiles differ from the exact ones (refused).
fn segments_3d(seq_len: u32) -> Option<(u32, i32)> {
    const TILE_SIZE: i32 = 16; // TILE_SIZE_DECODE
    let exact_len = seq_len as i64;
    let seq_len = i32::try_from(seq_len).ok()?;
    let tiles_per_segment = cdiv_triton(seq_len, NUM_PAR_SOFTMAX_SEGMENTS * TILE_SIZE);
    let exact_tps = cdiv_exact(exact_len, (NUM_PAR_SOFTMAX_SEGMENTS * TILE_SIZE) as i64);
    if tiles_per_segment as i64 != exact_tps {
        return None;
    }
    let mut running = 0u32;
    for segm_idx in 0..NUM_PAR_SOFTMAX_SEGMENTS {
        let start = segm_idx.wrapping_mul(tiles_per_segment).wrapping_mul(TILE_SIZE);
        if start as i64 != segm_idx as i64 * exact_tps * TILE_SIZE as i64 {
            return None;
        }
        if start >= seq_len {
            continue;
        }
        running += 1;
    }
    // reduce_segments merges act_num_segments of them
    let act_num_segments = cdiv_triton(seq_len, tiles_per_segment.wrapping_mul(TILE_SIZE));
    if act_num_segments as i64 != cdiv_exact(exact_len, exact_tps * TILE_SIZE as i64) {
        return None;
    }
    assert_eq!(act_num_segments as u32, running, "reduce_segments and the kernel disagree");
    Some((running, tiles_per_segment))
}

// compute_tile_loop_bounds for one causal decode row (query_len 1,
// q_block_local_idx 0): whether its int32 prefix and num_tiles are exact.
fn tile_loop_exact(seq_len: i32, num_queries_per_kv: u32, tile_size: i32) -> bool {
    let block_m: u32 =
        if num_queries_per_kv <= 16 { 16 } else { num_queries_per_kv.next_power_of_two() };
    let context_len = seq_len - 1;
    let add = ((block_m - 1) / num_queries_per_kv) as i32;
    let prefix = context_len.wrapping_add(add).wrapping_add(1);
    let exact_prefix = context_len as i64 + add as i64 + 1;
    if prefix as i64 != exact_prefix {
        return false;
    }
    let prefix = prefix.min(seq_len);
    cdiv_triton(prefix, tile_size) as i64 == cdiv_exact(prefix as i64, tile_size as i64)
}

// The 3D kernel's tile loop of one decode row (TILE_SIZE_DECODE 16).
fn fits_tiles_3d(seq_len: u32, num_queries_per_kv: u32) -> bool {
    match i32::try_from(seq_len) {
        Ok(l) => tile_loop_exact(l, num_queries_per_kv, 16),
        Err(_) => false,
    }
}

// The 2D kernel's tile loop of one decode row (TILE_SIZE_PREFILL 32).
fn fits_2d(seq_len: u32, num_queries_per_kv: u32) -> bool {
    match i32::try_from(seq_len) {
        Ok(l) => tile_loop_exact(l, num_queries_per_kv, 32),
        Err(_) => false,
    }
}

pub fn launch(b: &Batch) -> Result<Answer, &'static str> {
    let n = b.seq_lens.len();
    if n == 0 {
        return Err("num_seqs");
    }
    if b.num_q_heads == 0 || b.num_kv_heads == 0 || b.head_dim == 0 {
        return Err("zero count");
    }
    if n > 4096 {
        return Err("seq_lens");
    }
    if b.seq_lens.iter().any(|&l| l == 0 || l > i32::MAX as u32) {
        return Err("seq_lens");
    }
    if b.page_size == 0 || b.num_splits != 0 {
        return Err("page_size or num_splits");
    }
    if b.num_q_heads % b.num_kv_heads != 0 {
        return Err("num_kv_heads");
    }
    if b.head_dim < 32 {
        return Err("head_dim");
    }
    if b.page_size % 16 != 0 {
        return Err("page_size");
    }
    if b.cudagraph_mode > CG_FULL {
        return Err("cudagraph_mode");
    }

    // TritonAttentionMetadataBuilder.__init__
    let num_heads_q = b.num_q_heads as u64;
    let num_heads_kv = b.num_kv_heads as u64;
    let decode_cudagraph_enabled = match b.cudagraph_mode {
        CG_FULL_AND_PIECEWISE | CG_FULL_DECODE_ONLY | CG_FULL => true,
        CG_NONE | CG_PIECEWISE => false,
        _ => unreachable!(),
    };
    let mut seq_threshold_3d = MIN_LAUNCH_GRID_SIZE_2D / num_heads_kv;
    if decode_cudagraph_enabled {
        // None: min(max_num_seqs * 2, 512), then min(max_num_batched_tokens, it)
        let max = if b.max_capture_size == 0 {
            (256u64 * 2).min(512).min(8192)
        } else {
            b.max_capture_size as u64
        };
        let sizes = capture_sizes(max);
        assert!(!sizes.is_empty(), "CUDA Graphs enabled but no capture sizes specified.");
        seq_threshold_3d = python_min_by_abs(&sizes, seq_threshold_3d);
    }
    let headdim_padded = next_power_of_2(b.head_dim as u64) as u128;
    let segs = NUM_PAR_SOFTMAX_SEGMENTS as u128;
    let t = seq_threshold_3d as u128;
    let h = num_heads_q as u128;
    let output = t * h * segs * headdim_padded * 4;
    let max = t * h * segs * 4;
    let expsum = t * h * segs * 4;
    let total = output + max + expsum;
    if total > u64::MAX as u128 {
        return Err("head_dim");
    }

    // unified_attention, a decode batch (max_seqlen_q == 1)
    let num_seqs = n as u64;
    let use_3d = !(num_seqs > seq_threshold_3d || b.batch_invariant);
    let num_queries_per_kv = b.num_q_heads / b.num_kv_heads;
    let mut by_seq = Vec::with_capacity(n);
    for &l in &b.seq_lens {
        if use_3d {
            match segments_3d(l) {
                Some((running, _)) if fits_tiles_3d(l, num_queries_per_kv) => by_seq.push(running),
                _ => return Err("seq_lens"),
            }
        } else {
            if !fits_2d(l, num_queries_per_kv) {
                return Err("seq_lens");
            }
            by_seq.push(1);
        }
    }
    let num_splits = *by_seq.iter().max().unwrap();
    Ok(Answer {
        num_splits,
        num_splits_bound: if use_3d { NUM_PAR_SOFTMAX_SEGMENTS as u32 } else { 1 },
        workspace_bytes: total as u64,
        by_seq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h100;

    const MIXED: [u32; 8] = [8192, 512, 512, 512, 100, 100, 100, 100];

    #[test]
    fn llama_8b_h100_mixed_batch_runs_3d_16_16_16_16_7_7_7_7() {
        let a = launch(&h100(&MIXED)).unwrap();
        assert_eq!(a.by_seq, vec![16, 16, 16, 16, 7, 7, 7, 7]);
        assert_eq!(a.num_splits, 16);
        assert_eq!(a.num_splits_bound, 16);
        // 16 rows * 32 heads * 16 segments * (128 + 2) floats
        assert_eq!(a.workspace_bytes, 16 * 32 * 16 * 130 * 4);
        assert_eq!(a.workspace_bytes, 4_259_840);
    }

    #[test]
    fn seventeen_sequences_run_2d_one_each_same_scratch() {
        let lens: Vec<u32> = MIXED.iter().cloned().chain(std::iter::repeat(1000).take(9)).collect();
        let a = launch(&h100(&lens)).unwrap();
        assert_eq!(a.by_seq, vec![1; 17]);
        assert_eq!((a.num_splits, a.num_splits_bound, a.workspace_bytes), (1, 1, 4_259_840));
        let mut b = h100(&lens[..16]);
        assert_eq!(launch(&b).unwrap().num_splits_bound, 16);
        b.batch_invariant = true;
        assert_eq!(launch(&b).unwrap().by_seq, vec![1; 16]);
    }

    #[test]
    fn the_threshold_snaps_to_capture_sizes_only_under_full_graphs() {
        // 7 KV heads: 128 // 7 = 18; capture sizes ... 16, 24: 16
        let mut b = h100(&[300; 17]);
        b.num_q_heads = 28;
        b.num_kv_heads = 7;
        assert_eq!(launch(&b).unwrap().num_splits, 1);
        b.cudagraph_mode = CG_PIECEWISE;
        assert_eq!(launch(&b).unwrap().by_seq, vec![10; 17]);
        // 10 KV heads: 12 lies between 8 and 16 alike: Python's min keeps 8
        assert_eq!(python_min_by_abs(&capture_sizes(512), 12), 8);
        assert_eq!(python_min_by_abs(&capture_sizes(512), 21), 24);
        assert_eq!(python_min_by_abs(&capture_sizes(5), 128), 4);
    }

    #[test]
    fn short_sequences_run_fewer_segments() {
        assert_eq!(segments_3d(1).unwrap().0, 1);
        assert_eq!(segments_3d(256).unwrap().0, 16);
        assert_eq!(segments_3d(257).unwrap().0, 9);
        assert_eq!(segments_3d(100).unwrap().0, 7);
        assert!(segments_3d(i32::MAX as u32).is_none());
        // 2021161072 + 16 * 7895161 - 1 is i32::MAX: exact; one more wraps
        assert_eq!(segments_3d(2021161072).unwrap().0, 16);
        assert!(segments_3d(2021161073).is_none());
        assert!(fits_2d(i32::MAX as u32 - 31, 1) && !fits_2d(i32::MAX as u32 - 30, 1));
    }
}
