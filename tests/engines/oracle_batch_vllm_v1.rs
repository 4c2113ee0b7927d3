use crate::{Answer, Batch};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_batch_vllm_v1 — the second implementation of vLLM V1's
// FLASH_ATTN decode step over a mixed batch: the FA version, vLLM's
// max_num_splits and padded batch, and what vLLM's FlashAttention then
// splits each sequence into and allocates. Written from the upstream
// source alone (not from policy/vllm_v1.c), for
// `make engines-check-batch-vllm_v1`. vLLM is Apache-2.0 ("Copyright
// contributors to the vLLM project"); its FlashAttention fork is
// BSD-3-Clause (Tri Dao and contributors).
//
// Upstream: vllm-project/vllm @ 81be2e09aebfd1c45b3ed9f73d2850da8a72984c,
// vllm-project/flash-attention @ f3e1a4f74c99145c0717709860bf765de1703779.
//
// The step, as vLLM runs it for a decode batch (one query token each):
//  - gpu_model_runner.py: under a FULL graph (pad_attn) the batch is padded
//    to a capture size, seq_lens[num_reqs:] = 0; max_seq_len is the real
//    sequences' longest, or max_model_len when the graph is captured.
//  - fa_utils.get_flash_attn_version: 9.x -> 3, 10.x -> 4, else 2; 4 under
//    VLLM_BATCH_INVARIANT -> 2; 4 with head_size > 128 and not 256 -> 2.
//  - FlashAttentionMetadataBuilder: max_num_splits = 32 when FA3 and
//    cudagraph_mode has full graphs and num_actual_tokens <= the largest
//    capture size, else 0; 1 under batch invariance. FA3 schedules ahead
//    of time (get_scheduler_metadata) unless batch-invariant.
//  - vllm/config/vllm.py _set_cudagraph_sizes: the capture-size list.
//  - FA3 (hopper/): mha_fwd_get_scheduler_metadata / mha_fwd with
//    cu_seqlens_q, seqused_k, max_seqlen_q 1, max_seqlen_k, a page table
//    (page_size = block size), causal=True, window (-1, -1): the causal
//    rule for one query token, use_one_mma_wg, tile_size_fwd_sm90,
//    get_pagedkv_tma, get_num_splits, get_pack_gqa, then
//    prepare_varlen_num_blocks_kernel, emulated warp by warp (31
//    batches a warp, lane 31 idle; the warps' sums meet in shared memory);
//    out_accum / softmax_lse_accum for params.num_splits > 1.
//  - FA2 (csrc/flash_attn/flash_api.cpp): mha_varlen_fwd, the GQA swap,
//    set_params_splitkv and num_splits_heuristic; under a full graph the
//    count the capture computed (batch = capture size, max_seqlen_k =
//    max_model_len).
//
// Types as upstream: C++ ints are i32 with checked arithmetic (an overflow,
// undefined upstream, is a refusal, as the port refuses); floats are f32,
// a double literal makes an f64 compare. Python ints are unbounded (u64
// here, never near their limits). The engine contract (policy/engine.h)
// refuses a zero count, a zero or over-long length and more than 4096
// sequences; vLLM's backend refuses block sizes not a multiple of 16 and
// head sizes not a multiple of 8 or above 256 (get_kv_cache_shape,
// supports_head_size); an FA2 full graph needs max_model_len where its
// count reads it (the port's contract: vllm_v1.h).

type R<T> = Result<T, &'static str>;

const MAX_SEQS: usize = 4096;
const PREPARE_VARLEN_MAX_BATCHES_1CTA: i32 = 992;

fn int(v: u32, what: &'static str) -> R<i32> {
    i32::try_from(v).map_err(|_| what)
}
fn add(a: i32, b: i32) -> R<i32> {
    a.checked_add(b).ok_or("int overflow (add)")
}
fn mul(a: i32, b: i32) -> R<i32> {
    a.checked_mul(b).ok_or("int overflow (mul)")
}

// ---- vLLM, Python ----------------------------------------------------

// vllm.py _set_cudagraph_sizes (performance_mode default, sizes not given,
// max_num_batched_tokens above the max).
fn cudagraph_capture_sizes(max_cudagraph_capture_size: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> =
        [1u64, 2, 4].iter().cloned().filter(|&i| i <= max_cudagraph_capture_size).collect();
    if max_cudagraph_capture_size >= 8 {
        let mut i = 8;
        while i < std::cmp::min(max_cudagraph_capture_size + 1, 256) {
            sizes.push(i);
            i += 8;
        }
    }
    if max_cudagraph_capture_size >= 256 {
        let mut i = 256;
        while i < max_cudagraph_capture_size + 1 {
            sizes.push(i);
            i += 16;
        }
    }
    sizes.sort();
    sizes.dedup();
    sizes
}

fn get_flash_attn_version(major: u32, batch_invariant: bool, head_size: u32) -> R<u32> {
    // is_fa_version_supported: FA2 >= 8, FA3 == 9, FA4 == 10
    let mut fa_version = if major == 9 {
        3
    } else if major == 10 {
        4
    } else {
        2
    };
    if batch_invariant && fa_version == 4 {
        fa_version = 2;
    }
    if fa_version == 4 && major >= 10 && head_size > 128 && head_size != 256 {
        fa_version = 2;
    }
    if fa_version == 2 && major < 8 {
        return Err("FA2 needs compute capability 8 or later");
    }
    if fa_version == 4 {
        return Err("FA4 is not ported");
    }
    Ok(fa_version)
}

// ---- FA3, hopper/ ------------------------------------------------------

#[derive(Clone, Default)]
struct Params {
    b: i32,
    seqlen_q: i32,
    seqlen_k: i32,
    h: i32,
    h_k: i32,
    d: i32,
    dv: i32,
    d_rounded: i32,
    dv_rounded: i32,
    is_causal: bool,
    is_local: bool,
    arch: i32,
    num_sm: i32,
    page_size: i32,
    page_table: bool,
    pagedkv_tma: bool,
    num_splits: i32,
    pack_gqa: bool,
    num_splits_dynamic_ptr: bool,
    cu_seqlens_q: bool,
    #[allow(dead_code)] // set as upstream sets it; the split reads no more of it
    seqused_k: bool,
}

fn round_up_headdim(head_size: i32) -> i32 {
    if head_size <= 64 {
        64
    } else if head_size <= 96 {
        96
    } else if head_size <= 128 {
        128
    } else if head_size <= 192 {
        192
    } else {
        256
    }
}

fn use_one_mma_wg(p: &Params) -> bool {
    p.arch >= 90 && (p.d == 128 || p.d == 64) && !p.is_local && p.seqlen_q * (p.h / p.h_k) <= 64
}

// {kBlockM, kBlockN}, element_size 2
fn tile_size_fwd_sm90(
    headdim: i32,
    headdim_v: i32,
    is_causal: bool,
    is_local: bool,
    paged_kv_non_tma: bool,
    one_mma_wg: bool,
) -> (i32, i32) {
    if headdim <= 64 {
        if headdim_v == 512 {
            (64, 64)
        } else if headdim_v == 256 {
            (128, 96)
        } else if one_mma_wg {
            (64, 192)
        } else {
            (192, if is_causal { 128 } else if is_local || paged_kv_non_tma { 160 } else { 192 })
        }
    } else if headdim <= 96 {
        (192, if is_local || paged_kv_non_tma { 128 } else { 144 })
    } else if headdim <= 128 {
        let n128 = is_causal || is_local || paged_kv_non_tma;
        if one_mma_wg {
            (64, if n128 { 128 } else { 176 })
        } else {
            (128, if n128 { 128 } else { 160 })
        }
    } else if headdim <= 192 {
        (128, if paged_kv_non_tma || is_local { 96 } else if headdim_v <= 128 { 128 } else { 96 })
    } else {
        (128, if is_local { 64 } else { 80 })
    }
}

fn should_pack_gqa(varlen_q: bool, seqlen_q: i32, qhead_per_khead: i32, block_m: i32) -> R<bool> {
    if varlen_q {
        return Ok(true);
    }
    let round_up = |a: i32, b: i32| -> R<i32> { Ok(add(a, b - 1)? / b * b) };
    let nopack = seqlen_q as f32 / round_up(seqlen_q, block_m)? as f32;
    let sq = mul(seqlen_q, qhead_per_khead)?;
    let pack = sq as f32 / round_up(sq, block_m)? as f32;
    Ok((nopack as f64) < 0.9 * pack as f64)
}

fn fa3_num_splits_heuristic(
    total_mblocks: i32,
    num_sms: i32,
    num_n_blocks: i32,
    num_m_blocks: i32,
    size_one_kv_head: i32,
    is_causal_or_local: bool,
    max_splits: i32,
) -> R<i32> {
    if total_mblocks as f32 >= 0.8f32 * num_sms as f32 {
        let size_l2: i32 = 50 * 1024 * 1024;
        if size_one_kv_head > size_l2 && num_m_blocks >= mul(num_sms, 2)? && !is_causal_or_local {
            return Ok(std::cmp::min(add(size_one_kv_head, size_l2 - 1)? / size_l2, max_splits));
        } else {
            return Ok(1);
        }
    }
    if num_n_blocks <= 4 {
        return Ok(1);
    }
    let max_splits = *[max_splits, num_sms, num_n_blocks].iter().min().unwrap();
    let mut max_efficiency = 0f32;
    let mut efficiency: Vec<f32> = Vec::with_capacity(max_splits.max(0) as usize);
    for num_splits in 1..=max_splits {
        let n_waves = mul(total_mblocks, num_splits)? as f32 / num_sms as f32;
        let eff = n_waves / n_waves.ceil();
        if eff > max_efficiency {
            max_efficiency = eff;
        }
        efficiency.push(eff);
    }
    for num_splits in 1..=max_splits {
        if efficiency[(num_splits - 1) as usize] as f64 >= 0.85 * max_efficiency as f64 {
            return Ok(num_splits);
        }
    }
    Ok(1)
}

fn get_pagedkv_tma(p: &Params) -> bool {
    if p.arch < 90 || !p.page_table || p.is_local {
        return false;
    }
    let (bm, bn) = tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local, false,
                                      use_one_mma_wg(p));
    p.page_size % bn == 0 && p.seqlen_q * (p.h / p.h_k) > bm
}

fn get_pack_gqa(p: &Params) -> R<bool> {
    if p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1 {
        return Ok(true);
    }
    let packgqa_override =
        p.arch >= 90 && (p.h / p.h_k) == 8 && p.is_local && p.d == 64 && p.dv == p.d;
    if packgqa_override {
        return Ok(true);
    }
    if p.h == p.h_k {
        return Ok(false);
    }
    let (bm, _) = tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local,
                                     p.page_table && !p.pagedkv_tma, use_one_mma_wg(p));
    should_pack_gqa(p.cu_seqlens_q, p.seqlen_q, p.h / p.h_k, bm)
}

fn get_num_splits(p: &Params) -> R<i32> {
    let (bm, bn) = tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local,
                                      p.page_table && !p.pagedkv_tma, use_one_mma_wg(p));
    let seqlen_q_packgqa = mul(p.seqlen_q, p.h / p.h_k)?;
    let seqlen_k_loaded = p.seqlen_k; // not local
    let num_n_blocks = add(seqlen_k_loaded, bn - 1)? / bn;
    let num_m_blocks = add(seqlen_q_packgqa, bm - 1)? / bm;
    let size_one_kv_head = mul(mul(p.seqlen_k, add(p.d, p.dv)?)?, 2)?;
    let total_mblocks = mul(mul(if p.num_splits_dynamic_ptr { 1 } else { p.b }, p.h_k)?,
                            num_m_blocks)?;
    fa3_num_splits_heuristic(total_mblocks, p.num_sm, num_n_blocks, num_m_blocks,
                             size_one_kv_head, p.is_causal || p.is_local, 128)
}

// prepare_varlen_num_blocks + its kernel: each batch's num_splits_dynamic
// (1 for all when the kernel does not form it).
fn prepare_varlen_num_blocks(p: &Params, q_lens: &[i32], k_lens: &[i32], packgqa: bool,
                             block_m: i32, block_n: i32) -> R<Vec<i32>> {
    let qhead_per_khead = add(p.h, p.h_k - 1)? / p.h_k;
    let num_ctas = add(p.b, 31 * 32 - 1)? / (31 * 32);
    let num_head = if !packgqa { p.h } else { p.h_k };
    let num_splits_static = p.num_splits;
    let mut out = vec![1i32; p.b as usize];
    // every lane forms its num_m_blocks and num_n_blocks before the branch
    let mut m_blocks = vec![0i32; p.b as usize];
    let mut n_blocks = vec![0i32; p.b as usize];
    for i in 0..p.b as usize {
        let sq = q_lens[i];
        let packed = mul(sq, if packgqa { qhead_per_khead } else { 1 })?;
        m_blocks[i] = add(packed, block_m - 1)? / block_m;
        n_blocks[i] = add(k_lens[i], block_n - 1)? / block_n;
    }
    if num_ctas > 1 || num_splits_static == 1 {
        return Ok(out);
    }
    // warps of 31 batches; the lane sums meet per warp (shuffles), then
    // across warps (atomicAdd into shared memory)
    let mut total_blocks_smem: i64 = 0;
    let num_warps = (p.b + 30) / 31;
    for w in 0..num_warps {
        let mut warp_sum: i64 = 0;
        for lane in 0..31 {
            let idx = (lane + 31 * w) as usize;
            if idx < p.b as usize {
                warp_sum += mul(m_blocks[idx], n_blocks[idx])? as i64;
            }
        }
        total_blocks_smem += warp_sum;
    }
    let total_blocks = i32::try_from(total_blocks_smem).map_err(|_| "int overflow (sum)")?;
    let f = ((total_blocks as f32 * 1.1f32 * num_head as f32) / num_sm_f(p)).ceil();
    if f >= 2147483648.0f32 {
        return Err("int overflow (blocks_per_sm)");
    }
    let blocks_per_sm = f as i32;
    for i in 0..p.b as usize {
        let want = add(n_blocks[i], blocks_per_sm - 1)? / blocks_per_sm;
        out[i] = std::cmp::max(std::cmp::min(want, num_splits_static), 1);
    }
    Ok(out)
}

fn num_sm_f(p: &Params) -> f32 {
    p.num_sm as f32
}

struct Fa3Out {
    by_seq: Vec<i32>,
    num_splits: i32,
    workspace: u64,
}

// mha_fwd_get_scheduler_metadata, then mha_fwd (which reuses the metadata
// with the same arguments, or forms it itself when none is given).
fn fa3(b: &Batch, batch_size: i32, seq_lens: &[i32], max_seqlen_k: i32, num_splits: i32,
       total_q: u64) -> R<Fa3Out> {
    let num_heads = int(b.num_q_heads, "num_q_heads")?;
    let num_heads_k = int(b.num_kv_heads, "num_kv_heads")?;
    let headdim = int(b.head_dim, "head_dim")?;
    if num_heads % num_heads_k != 0 {
        return Err("heads");
    }
    let max_seqlen_q = 1;
    let mut p = Params {
        b: batch_size,
        seqlen_q: max_seqlen_q,
        seqlen_k: max_seqlen_k,
        h: num_heads,
        h_k: num_heads_k,
        d: headdim,
        dv: headdim,
        d_rounded: round_up_headdim(headdim),
        ..Default::default()
    };
    p.dv_rounded = p.d_rounded;
    p.cu_seqlens_q = true;
    p.seqused_k = true;
    let (mut wl, mut wr) = (-1i32, -1i32);
    let mut is_causal = true; // vLLM: causal for a decoder
    if wl >= max_seqlen_k - 1 {
        wl = -1;
    }
    if wr >= max_seqlen_q - 1 {
        wr = -1;
    }
    let page_size_given = true;
    if max_seqlen_q == 1 && wl == -1 && wr == -1 {
        if (headdim <= 64 || headdim > 128) || !page_size_given {
            is_causal = false;
        }
    }
    if is_causal {
        wr = 0;
    }
    p.is_causal = wl < 0 && wr == 0;
    p.is_local = (wl >= 0 || wr >= 0) && !p.is_causal;
    p.arch = 90;
    p.num_sm = int(b.sm_count, "sm_count")?;
    p.page_size = int(b.page_size, "page_size")?;
    p.page_table = true;
    p.num_splits_dynamic_ptr = true;
    p.pagedkv_tma = get_pagedkv_tma(&p);
    p.num_splits = if num_splits <= 0 { get_num_splits(&p)? } else { num_splits };
    p.pack_gqa = get_pack_gqa(&p)?;
    p.pack_gqa |= p.num_splits > 1;
    // mha_fwd: a batch past one prepare CTA runs one split
    let use_dynamic_split = p.b <= PREPARE_VARLEN_MAX_BATCHES_1CTA && p.num_splits > 1;
    if p.b > PREPARE_VARLEN_MAX_BATCHES_1CTA {
        p.num_splits = 1;
    }
    if p.num_splits > 256 {
        return Err("num_splits > 256");
    }
    let (bm, bn) = tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local,
                                      p.page_table && !p.pagedkv_tma, use_one_mma_wg(&p));
    let q_lens: Vec<i32> = (0..batch_size as usize)
        .map(|i| if i < seq_lens.len() { 1 } else { 0 })
        .collect();
    let mut k_lens = seq_lens.to_vec();
    k_lens.resize(batch_size as usize, 0);
    let dynamic = prepare_varlen_num_blocks(&p, &q_lens, &k_lens, p.pack_gqa, bm, bn)?;
    // the kernel reads num_splits_dynamic when the pointer is set, else
    // params.num_splits (1 here: use_dynamic_split is false only then)
    let by_seq: Vec<i32> = (0..seq_lens.len())
        .map(|i| if use_dynamic_split { dynamic[i] } else { p.num_splits })
        .collect();
    let mut workspace = 0u64;
    if p.num_splits > 1 {
        let ns = p.num_splits as u64;
        let h = num_heads as u64;
        let dv = p.dv as u64;
        workspace = ns * h * total_q * dv * 4 + ns * h * total_q * 4;
    }
    Ok(Fa3Out { by_seq, num_splits: p.num_splits, workspace })
}

// ---- FA2, csrc/flash_attn/flash_api.cpp --------------------------------

fn fa2_num_splits_heuristic(batch_nheads_mblocks: i32, num_sms: i32, num_n_blocks: i32,
                            max_splits: i32) -> R<i32> {
    if batch_nheads_mblocks as f32 >= 0.8f32 * num_sms as f32 {
        return Ok(1);
    }
    let max_splits = *[max_splits, num_sms, num_n_blocks].iter().min().unwrap();
    let mut max_efficiency = 0f32;
    let mut efficiency: Vec<f32> = Vec::new();
    let ceildiv = |a: i32, b: i32| (a + b - 1) / b;
    let eligible =
        |s: i32| s == 1 || ceildiv(num_n_blocks, s) != ceildiv(num_n_blocks, s - 1);
    for num_splits in 1..=max_splits {
        if !eligible(num_splits) {
            efficiency.push(0f32);
        } else {
            let n_waves = mul(batch_nheads_mblocks, num_splits)? as f32 / num_sms as f32;
            let eff = n_waves / n_waves.ceil();
            if eff > max_efficiency {
                max_efficiency = eff;
            }
            efficiency.push(eff);
        }
    }
    for num_splits in 1..=max_splits {
        if !eligible(num_splits) {
            continue;
        }
        if efficiency[(num_splits - 1) as usize] as f64 >= 0.85 * max_efficiency as f64 {
            return Ok(num_splits);
        }
    }
    Ok(1)
}

// mha_varlen_fwd for a decode batch: (num_splits, workspace bytes).
fn fa2(b: &Batch, batch_size: i32, max_seqlen_k: i32, num_splits: i32) -> R<(i32, u64)> {
    let mut num_heads = int(b.num_q_heads, "num_q_heads")?;
    let num_heads_k = int(b.num_kv_heads, "num_kv_heads")?;
    let head_size = int(b.head_dim, "head_dim")?;
    let page_block_size = int(b.page_size, "page_size")?;
    if page_block_size % 16 != 0 {
        return Err("block size");
    }
    let mut max_seqlen_q = 1;
    let (wl, wr) = (-1, -1);
    let swapped = max_seqlen_q == 1 && num_heads > num_heads_k && wl < 0 && wr < 0
        && head_size % 8 == 0;
    let ngroups = num_heads / num_heads_k;
    if swapped {
        max_seqlen_q = ngroups;
        num_heads = num_heads_k;
    }
    if head_size > 256 || head_size % 8 != 0 || num_heads % num_heads_k != 0 {
        return Err("head size");
    }
    let m = if head_size <= 128 { 32 } else { 64 };
    let head_size_rounded = add(head_size, m - 1)? / m * m;
    if swapped {
        // set_params_splitkv
        let block_n = if head_size <= 64 { 256 } else if head_size <= 128 { 128 } else { 64 };
        let num_n_blocks = add(max_seqlen_k, block_n - 1)? / block_n;
        let num_m_blocks = add(max_seqlen_q, 64 - 1)? / 64;
        let mut splits = num_splits;
        if num_splits < 1 {
            let num_sm = int(b.sm_count, "sm_count")?;
            splits = fa2_num_splits_heuristic(mul(mul(batch_size, num_heads)?, num_m_blocks)?,
                                              mul(num_sm, 2)?, num_n_blocks, 128)?;
        }
        let mut ws = 0u64;
        if splits > 1 {
            let rows = splits as u64 * batch_size as u64 * num_heads as u64 * max_seqlen_q as u64;
            ws = rows * 4 + rows * head_size_rounded as u64 * 4;
        }
        if splits > 128 {
            return Err("num_splits > 128");
        }
        Ok((splits, ws))
    } else {
        if num_splits > 1 {
            return Err("num_splits > 1 with varlen paged KV");
        }
        // params.num_splits 0 or 1: one split
        Ok((std::cmp::max(num_splits, 1), 0))
    }
}

// ---- the step ----------------------------------------------------------

pub fn launch(b: &Batch) -> R<Answer> {
    let n = b.seq_lens.len();
    if b.sm_count == 0 || b.num_q_heads == 0 || b.num_kv_heads == 0 || b.head_dim == 0
        || b.page_size == 0
    {
        return Err("zero count");
    }
    if n == 0 || n > MAX_SEQS {
        return Err("num_seqs");
    }
    if b.seq_lens.iter().any(|&l| l == 0 || l > i32::MAX as u32) {
        return Err("seq_lens");
    }
    if b.num_splits != 0 {
        return Err("vLLM has no num_splits argument");
    }
    // supports_head_size, get_kv_cache_shape; Flash's int inputs
    if b.head_dim % 8 != 0 || b.head_dim > 256 || b.page_size % 16 != 0 {
        return Err("backend");
    }
    int(b.sm_count, "sm_count")?;
    int(b.num_q_heads, "num_q_heads")?;
    int(b.page_size, "page_size")?;
    if b.num_q_heads % b.num_kv_heads != 0 {
        return Err("heads");
    }
    let (cc, mode, capture, bi, mml) = if b.options_given {
        (b.compute_capability, b.cudagraph_mode, b.max_capture_size, b.batch_invariant,
         b.max_model_len)
    } else {
        (0, 0, 0, false, 0)
    };
    if cc == 0 {
        return Err("compute_capability required");
    }
    // 0 FULL_AND_PIECEWISE, 1 NONE, 2 PIECEWISE, 3 FULL_DECODE_ONLY
    if mode > 3 {
        return Err("cudagraph_mode");
    }
    let fa_version = get_flash_attn_version(cc / 10, bi, b.head_dim)?;
    let has_full_cudagraphs = mode == 0 || mode == 3;
    let max_cudagraph_size: u64 = if mode == 1 {
        0
    } else {
        let max = if capture == 0 { 512 } else { capture as u64 };
        *cudagraph_capture_sizes(max).last().unwrap()
    };
    let num_tokens = n as u64;
    let full = has_full_cudagraphs && num_tokens <= max_cudagraph_size;
    let padded: u64 = if full {
        *cudagraph_capture_sizes(max_cudagraph_size).iter().find(|&&s| s >= num_tokens).unwrap()
    } else {
        num_tokens
    };
    let lens: Vec<i32> = b.seq_lens.iter().map(|&l| l as i32).collect();
    let max_seq_len = *lens.iter().max().unwrap();

    if fa_version == 3 {
        let aot_schedule = true;
        let builder_max_num_splits = if has_full_cudagraphs && aot_schedule { 32 } else { 0 };
        let mut max_num_splits = 0;
        if has_full_cudagraphs && num_tokens <= max_cudagraph_size {
            max_num_splits = builder_max_num_splits;
        }
        if bi {
            max_num_splits = 1;
        }
        let r = fa3(b, padded as i32, &lens, max_seq_len, max_num_splits, padded)?;
        let by_seq: Vec<u32> = r.by_seq.iter().map(|&x| x as u32).collect();
        return Ok(Answer {
            num_splits: *by_seq.iter().max().unwrap(),
            num_splits_bound: r.num_splits as u32,
            workspace_bytes: r.workspace,
            by_seq,
        });
    }

    // FA2: the builder's max_num_splits stays 0 (set only with AOT)
    let max_num_splits = if bi { 1 } else { 0 };
    let mut max_seqlen_k = max_seq_len;
    if full {
        // the graph replayed was captured with max_seq_len = max_model_len
        let reads = max_num_splits == 0 && b.num_q_heads > b.num_kv_heads;
        if mml == 0 {
            if reads {
                return Err("max_model_len required");
            }
        } else {
            let m = int(mml, "max_model_len")?;
            if m < max_seq_len {
                return Err("max_model_len below the longest sequence");
            }
            max_seqlen_k = m;
        }
    }
    let (splits, ws) = fa2(b, padded as i32, max_seqlen_k, max_num_splits)?;
    Ok(Answer {
        num_splits: splits as u32,
        num_splits_bound: splits as u32,
        workspace_bytes: ws,
        by_seq: vec![splits as u32; n],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llama_h100;

    const MIXED: [u32; 8] = [8192, 512, 512, 512, 100, 100, 100, 100];

    #[test]
    fn h100_default_11_then_ones() {
        let a = launch(&llama_h100(&MIXED)).unwrap();
        assert_eq!(a.by_seq, vec![11, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(a.num_splits, 11);
        assert_eq!(a.num_splits_bound, 32);
        assert_eq!(a.workspace_bytes, 32 * 32 * 8 * 128 * 4 + 32 * 32 * 8 * 4);
    }

    #[test]
    fn h100_batch_invariant_ones() {
        let mut b = llama_h100(&MIXED);
        b.batch_invariant = true;
        let a = launch(&b).unwrap();
        assert_eq!(a.by_seq, vec![1; 8]);
        assert_eq!(a.workspace_bytes, 0);
    }

    #[test]
    fn capture_sizes() {
        let s = cudagraph_capture_sizes(512);
        assert_eq!(&s[..5], &[1, 2, 4, 8, 16]);
        assert_eq!(s[s.len() - 2..], [496, 512]);
        assert_eq!(*cudagraph_capture_sizes(300).last().unwrap(), 288);
        assert_eq!(*cudagraph_capture_sizes(7).last().unwrap(), 4);
    }

    #[test]
    fn fa2_and_fa4() {
        let mut b = llama_h100(&MIXED);
        b.compute_capability = 100;
        assert!(launch(&b).is_err());
        b.batch_invariant = true;
        assert_eq!(launch(&b).unwrap().by_seq, vec![1; 8]);
        b.compute_capability = 80;
        b.batch_invariant = false;
        assert!(launch(&b).is_err()); // max_model_len needed
        b.max_model_len = 131072;
        let a = launch(&b).unwrap();
        assert_eq!(a.by_seq, vec![4; 8]);
    }
}
