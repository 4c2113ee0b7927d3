// SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0
//
// The second implementation of TensorRT-LLM's generation-phase XQA choice
// over a mixed batch, written from the upstream sources (NVIDIA/TensorRT-LLM,
// each file at the commit shared/ENGINES-PINS.md names), not from policy/trtllm.c:
//
//   AttentionOp::enqueueGeneration / convertMMHAParamsToXQAParams
//     (attentionOp.cpp @ 00dbe288): multi_block_mode =
//     getEnvForceDeterministicAttention() ? false : mMultiBlockMode (true);
//     XQA if mXqaDispatcher->shouldUse, else the masked-MHA kernel.
//   XqaDispatcher::shouldUse (xqaDispatcher.cpp @ 026da036) ->
//     DecoderXQARunner::shouldUse (decoderXQARunner.cpp @ 02947a22, the JIT
//     impl) -> DecoderXQAImplJIT::shouldUse(forConfigurePlugin = false)
//     (decoderXQAImplJIT.cpp @ 000a01de): supportConfig (QGMMA || HMMA ||
//     MLA, kernelUtils.cpp @ 029e0a7c) then mayHavePerfGain.
//   DecoderXQAImplJIT::runImpl: multi_block = computeMultiBlockCount(...)
//     when multi_block_mode (decoderXQAImplCommon.h @ 12453212, constants
//     from decoderXQAConstants.h @ 12453212).
//   forceXQAKernels (envUtils.cpp @ 02734d9e): TRTLLM_FORCE_XQA or the
//     deterministic-attention switch.
//   cpp/kernels/xqa/mha.cu @ 0c7471e kernel_mha_impl: every request split
//     into gridDim.x sub-sequences; the multi-block scratch segments.
//
// The fixed setting: bf16 with a bf16 KV cache, paged, beam 1, one query
// token, RoPE, causal, no window, no sinks, SM 8.x/9.0/12.x (XQA through
// DecoderXQARunner), no environment override but the deterministic one.
// Where upstream's int or uint32_t would overflow, or CUDA's grid would
// not launch, the batch is refused, as the port documents it does.
//
// The float steps are done in f32 and f64, as the C++ does them:
// std::sqrt and std::round on a float are f32::sqrt (correctly rounded)
// and f32::round (half away from zero).

use crate::{Answer, Batch};

const K_MIN_HISTORY_TOKENS_PER_BLOCK: i32 = 128;
const K_ENABLE_MIN_BLOCK_FACTOR: f32 = 4.0;
const K_TARGET_WAVE_FACTOR: i32 = 8;
const K_XQA_MAX_NUM_SUB_SEQ: i32 = 6000;

const MAX_SEQS: usize = 4096;
const MAX_SEQ_LEN: u32 = 2147483647;

struct XqaParams {
    num_q_heads: i64,
    num_kv_heads: i64,
    head_size: u32,
    tokens_per_block: u32,
    beam_width: u32,
    batch_size: i32,
    max_past_kv_length: i32,
    multi_block_mode: bool,
}

// kernelUtils.cpp: supportConfigCommon, for what varies here.
fn support_config_common(p: &XqaParams) -> bool {
    if p.num_kv_heads != 0 && p.num_q_heads % p.num_kv_heads != 0 {
        return false;
    }
    let is_vanilla_mha = p.num_kv_heads == 0 || p.num_q_heads == p.num_kv_heads;
    if is_vanilla_mha && p.beam_width == 1 {
        return false;
    }
    if is_vanilla_mha && p.head_size <= 128 {
        return false;
    }
    true
}

// kernelUtils.cpp: supportConfigHMMA (SM >= 80, bf16, bf16 KV, beam 1,
// a window that holds every sequence).
fn support_config_hmma(p: &XqaParams) -> bool {
    if !support_config_common(p) {
        return false;
    }
    if p.head_size % 16 != 0 || p.head_size < 16 || p.head_size > 256 {
        return false;
    }
    let head_grp_size = if p.num_kv_heads == 0 { 1 } else { p.num_q_heads / p.num_kv_heads };
    if head_grp_size * p.beam_width as i64 > 32 {
        return false;
    }
    if ![16u32, 32, 64, 128].contains(&p.tokens_per_block) {
        return false;
    }
    true
}

// supportConfigQGMMA needs an E4M3 KV cache: false for bf16. MLA: false.
fn support_config(p: &XqaParams) -> bool {
    let qgmma = false;
    let mla = false;
    qgmma || support_config_hmma(p) || mla
}

// decoderXQAImplJIT.cpp: mayHavePerfGain. None where its int block_count
// overflows (refused).
fn may_have_perf_gain(p: &XqaParams, force_xqa: bool, multiprocessor_count: i32) -> Option<bool> {
    if force_xqa {
        return Some(true);
    }
    let num_kv_heads = p.num_kv_heads as i32;
    let batch_size = p.batch_size;
    let mut multi_block_count: i32 = 1;
    if p.multi_block_mode {
        let history_length = p.max_past_kv_length;
        multi_block_count = std::cmp::max(1, history_length / K_MIN_HISTORY_TOKENS_PER_BLOCK);
    }
    let block_count = (num_kv_heads as i64)
        .checked_mul(batch_size as i64)?
        .checked_mul(multi_block_count as i64)?;
    let block_count: i32 = i32::try_from(block_count).ok()?;
    Some(block_count as f32 * K_ENABLE_MIN_BLOCK_FACTOR >= multiprocessor_count as f32)
}

// decoderXQAImplCommon.h: computeMultiBlockCount, no user override.
fn compute_multi_block_count(p: &XqaParams, batch_size: i32, multiprocessor_count: i32) -> i32 {
    let num_kv_heads = p.num_kv_heads as i32;
    let history_length = p.max_past_kv_length;
    let max_nb_sub_seq = K_XQA_MAX_NUM_SUB_SEQ;

    let mut multi_block_count = history_length / K_MIN_HISTORY_TOKENS_PER_BLOCK;
    let capped = ((multi_block_count as f32 * 8.0f32).sqrt()).round() as i32;
    multi_block_count = std::cmp::min(multi_block_count, capped);
    multi_block_count = std::cmp::max(multi_block_count, 1);
    let wave_count = batch_size as f64 * num_kv_heads as f64 * multi_block_count as f64
        / multiprocessor_count as f64;
    let adj_factor = wave_count / K_TARGET_WAVE_FACTOR as f64;
    if adj_factor > 1.0 {
        multi_block_count = (multi_block_count as f64 / adj_factor).floor() as i32;
    }
    multi_block_count = std::cmp::max(multi_block_count, 1);
    multi_block_count =
        std::cmp::max(std::cmp::min(multi_block_count, max_nb_sub_seq / batch_size), 1);
    assert!(multi_block_count >= 1);
    assert!(multi_block_count == 1 || batch_size * multi_block_count <= max_nb_sub_seq);
    multi_block_count
}

// xqa/utils.cuh Segmenter: each segment rounded up to its alignment (the
// MemSegmenter passes sizeof(T)), offsets in uint32_t: None past 4 GiB.
struct Segmenter {
    next: u64,
}

impl Segmenter {
    fn new_seg(&mut self, elem: u64, count: u64) -> Option<()> {
        let offset = (self.next + elem - 1) / elem * elem;
        self.next = offset + elem * count;
        if self.next > u32::MAX as u64 {
            return None;
        }
        Some(())
    }
}

// mha.cu kernel_mha_impl's multi-block scratch for headGrpSize rows of a
// head of head_size (mha.h pads it to headElems 64, 128 or 256).
fn multi_block_scratch(head_grp_size: u64, head_size: u32, nb_sub_seq: u64) -> Option<u64> {
    const WARP_SIZE: u64 = 32;
    const QUAD_PER_WARP: u64 = WARP_SIZE / 4;
    let beam_width = 1u64;
    let nb_valid_rows = head_grp_size * beam_width;
    let warp_tile = (64u64, (nb_valid_rows + 15) / 16 * 16);
    // SMemWarpRowMax: float data[ThrdRegRowMax::size][quadPerWarp][4],
    // ThrdRegRowMax = Vec<float, divUp(warpTile.y, warp_size)>
    let thrd_reg_row_max = (warp_tile.1 + WARP_SIZE - 1) / WARP_SIZE;
    let smem_warp_row_max = 4 * thrd_reg_row_max * QUAD_PER_WARP * 4;
    let head_elems: u64 = if head_size <= 64 {
        64
    } else if head_size <= 128 {
        128
    } else {
        256
    };
    let grain_bytes = 16u64;
    let input_elem_size = 2u64; // bf16
    let gemm1_warps_per_grp = head_elems / warp_tile.0;
    let xsmem_cols = input_elem_size * warp_tile.0 / grain_bytes;
    // Array2D<LdGrain, nbValidRows, XSmemBuffer::cols>, gemm1WarpsPerGrp of them
    let scratch_buf = grain_bytes * nb_valid_rows * xsmem_cols;
    let per_sub_seq = scratch_buf * gemm1_warps_per_grp;
    let mut seg = Segmenter { next: 0 };
    seg.new_seg(smem_warp_row_max, nb_sub_seq)?; // rowMaxBuffers
    seg.new_seg(smem_warp_row_max, nb_sub_seq)?; // rowSumBuffers
    seg.new_seg(per_sub_seq, nb_sub_seq)?; // scratchBuffers
    Some(seg.next)
}

pub fn launch(b: &Batch) -> Result<Answer, &'static str> {
    // the counts and the batch's bounds
    if b.sm_count == 0 || b.seq_lens.is_empty() || b.num_q_heads == 0 || b.num_kv_heads == 0
        || b.head_dim == 0
    {
        return Err("a count is 0");
    }
    if b.seq_lens.len() > MAX_SEQS || b.seq_lens.iter().any(|&l| l == 0 || l > MAX_SEQ_LEN) {
        return Err("batch bounds");
    }
    if b.page_size == 0 {
        return Err("page_size 0");
    }
    if b.num_splits != 0 {
        return Err("XQA takes no split argument");
    }
    if b.num_q_heads % b.num_kv_heads != 0 {
        return Err("num_q_heads % num_kv_heads");
    }
    // int mMultiProcessorCount
    let multiprocessor_count = i32::try_from(b.sm_count).map_err(|_| "sm_count above int")?;

    let p = XqaParams {
        num_q_heads: b.num_q_heads as i64,
        num_kv_heads: b.num_kv_heads as i64,
        head_size: b.head_dim,
        tokens_per_block: b.page_size,
        beam_width: 1,
        batch_size: b.seq_lens.len() as i32,
        max_past_kv_length: *b.seq_lens.iter().max().unwrap() as i32,
        multi_block_mode: !b.deterministic,
    };
    let force_xqa = b.deterministic;

    if !support_config(&p) {
        return Err("masked-MHA kernel: config XQA does not take");
    }
    // the HMMA grid {multi_block, nbKVHeads, batch_size}: y at most 65535
    if b.num_kv_heads > 65535 {
        return Err("grid y");
    }
    match may_have_perf_gain(&p, force_xqa, multiprocessor_count) {
        None => return Err("block_count overflows int"),
        Some(false) => return Err("masked-MHA kernel: no perf gain"),
        Some(true) => {}
    }

    let multi_block: u32 = if p.multi_block_mode {
        compute_multi_block_count(&p, p.batch_size, multiprocessor_count) as u32
    } else {
        1
    };
    let is_multi_block = multi_block != 1;
    let workspace_bytes = if is_multi_block {
        let nb_seq = b.num_kv_heads as u64 * b.seq_lens.len() as u64;
        let nb_sub_seq = multi_block as u64 * nb_seq;
        let head_grp_size = (b.num_q_heads / b.num_kv_heads) as u64;
        multi_block_scratch(head_grp_size, b.head_dim, nb_sub_seq).ok_or("scratch past u32")?
    } else {
        0
    };
    Ok(Answer {
        num_splits: multi_block,
        num_splits_bound: multi_block,
        workspace_bytes,
        by_seq: vec![multi_block; b.seq_lens.len()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h100;

    const MIXED: [u32; 8] = [8192, 512, 512, 512, 100, 100, 100, 100];

    #[test]
    fn llama_8b_h100_mixed_batch_is_16_each() {
        for page in [16u32, 32, 64, 128] {
            let a = launch(&h100(page, &MIXED, false)).unwrap();
            assert_eq!(a.num_splits, 16);
            assert_eq!(a.by_seq, vec![16u32; 8]);
            // 1024 sub-sequences: 128 + 128 bytes of row max/sum, 4 rows x 128 bf16
            assert_eq!(a.workspace_bytes, 1024 * 256 + 1024 * 1024);
        }
    }

    #[test]
    fn deterministic_is_1_each() {
        let a = launch(&h100(32, &MIXED, true)).unwrap();
        assert_eq!(a.num_splits, 1);
        assert_eq!(a.by_seq, vec![1u32; 8]);
        assert_eq!(a.workspace_bytes, 0);
    }

    #[test]
    fn a_short_single_request_runs_mmha_unless_deterministic() {
        assert!(launch(&h100(32, &[100], false)).is_err());
        assert_eq!(launch(&h100(32, &[100], true)).unwrap().by_seq, vec![1]);
        assert_eq!(launch(&h100(32, &[8192], false)).unwrap().num_splits, 23);
    }

    #[test]
    fn the_sqrt_cap_rounds_as_float() {
        // 8 * 7 = 56: sqrt 7.48 -> 7; 8 * 32 = 256 -> 16; 8 * 2 = 16 -> 4
        for (blocks, want) in [(7i32, 7i32), (32, 16), (2, 2), (100, 28)] {
            let mut b = h100(32, &[(blocks * 128) as u32], false);
            b.num_kv_heads = 1;
            b.num_q_heads = 2;
            b.sm_count = 4 * blocks as u32;
            assert_eq!(launch(&b).unwrap().num_splits, want as u32, "{} blocks", blocks);
        }
    }

    #[test]
    fn configs_xqa_does_not_take() {
        let mut b = h100(32, &MIXED, false);
        b.num_q_heads = 8;
        assert!(launch(&b).is_err());
        let mut b = h100(8, &MIXED, false);
        assert!(launch(&b).is_err());
        b.page_size = 16;
        b.head_dim = 72;
        assert!(launch(&b).is_err());
    }
}
