use crate::{Answer, BatchAnswer, Shape};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_fa3 — the second implementation of FlashAttention-3's (hopper/)
// paged-decode split choice and split-K scratch, written from the upstream
// source alone (not from policy/fa3.c), for `make engines-check-fa3`.
//
// Upstream: Dao-AILab/flash-attention @ 0251105a2fb19d2957484b7f023cd8c115286ced:
//   hopper/heuristics.h            num_splits_heuristic, lines 19-59
//                                  (should_pack_gqa 9-17)
//   hopper/tile_size.h             tile_size_fwd_sm90, lines 9-54
//   hopper/flash_api.cpp           set_params_fprop 50-168 (is_causal,
//                                  is_local, num_sm: 146-163), get_pagedkv_tma
//                                  415-424, get_pack_gqa 426-440,
//                                  get_num_splits 442-471, get_max_headdim
//                                  473-490, round_up_headdim 492-509, mha_fwd
//                                  672-1198 (checks 757-856, causal 796-805,
//                                  num_splits 977-985, accumulators 1092-1113)
//   hopper/flash_fwd_launch_template.h  run_flash_fwd 28-199 (the tile of
//                                  line 40 and the prepare call 163-166) and
//                                  run_mha_fwd_ 201-226; flash_api.cpp
//                                  run_mha_fwd 367-385 (PackGQA, line 377)
//                                  and run_mha_fwd_constexpr 255-365 (kHeadDim)
//   hopper/flash_prepare_scheduler.cu  prepare_varlen_num_blocks_kernel
//                                  42-215 (lanes and blocks 79-128, the
//                                  per-batch split 140-161, the sort and
//                                  its stores 163-213) and its host
//                                  launcher 219-250
//   hopper/static_switch.h         NUM_WARP_SWITCH 183-204
//   hopper/tile_scheduler.hpp      VarlenDynamicPersistentTileScheduler:
//                                  the actual batch of a virtual one
//                                  (561-570), its split count (623-632)
//   hopper/flash_api.cpp           varlen_sort_batches (993)
// (hopper/flash_api_stable.cpp, which setup.py builds for torch >= 2.9, has
// the same get_pagedkv_tma, get_pack_gqa, get_num_splits, round_up_headdim
// and the same checks and accumulator shapes.)
//
// The fixed setting (issue 44): arch sm90 (params.arch = 90), sm_margin 0,
// one decode step, q of shape (num_seqs, 1, num_q_heads, head_dim) (not
// varlen in q), bf16, v's head size = head_dim, a page_table (paged KV) and
// seqused_k = cache_seqlens (seq_len for every sequence; for launch_batch,
// a mixed batch's own lengths), so is_varlen is true and the per-batch
// split of the prepare kernel is what launches, sequence by sequence. No
// k_new, no leftpad, no rotary, no kv_batch_idx, no q_v, no softcap, window
// (-1, -1), attention_chunk 0, no scheduler_metadata given (so mha_fwd's own
// launch runs the prepare kernel), pack_gqa not given, causal = false (the
// Python default; causal = true would be kept only for 64 < d <= 128 with a
// paged cache (lines 799-803), and changes no output here: see the test
// causal_changes_nothing).
//
// One reading of ours: the page_table is exactly as wide as the longest
// sequence needs, max_num_pages_per_seq = ceil(seq_len / page_size), so the
// host's seqlen_k = max_num_pages_per_seq * page_size (line 768) is seq_len
// rounded up to whole pages, while the prepare kernel reads seq_len itself
// from seqused_k. For a mixed batch, seq_len here is the longest length.
//
// Types as upstream: sizes are int (i32), the host heuristic's waves float
// (f32) with the 0.8f compare float and the 0.85 compare double; the
// prepare kernel's blocks_per_sm is float with the 1.1f margin. That kernel
// is compiled with --use_fast_math (hopper/setup.py:668), under which nvcc
// may compute its one division `/ float(num_sm)` approximately (a GPU can
// then round it differently, most visibly where the quotient is a whole
// number and ceilf moves by one). That is out of scope: this port uses IEEE
// division, as the C port does, and launch_batch says where the quotient
// is within 2 ulp of a whole number (the floats 2 steps below and above it
// have different ceilings), which the C port's answer says too (the
// brief's rule). Over the swept shapes no int overflows
// (size_one_kv_head <= 201,023 * 512 * 2 < 2^28; the float blocks_per_sm <=
// 992 * 2,513 * 1.1 * 64 < 2^28). Torch sizes are int64: the scratch is u64.

/// hopper/tile_size.h:9-54: {kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap}.
#[allow(clippy::too_many_arguments)]
fn tile_size_fwd_sm90(
    headdim: i32,
    headdim_v: i32,
    is_causal: bool,
    is_local: bool,
    element_size: i32,
    v_colmajor: bool,
    paged_kv_non_tma: bool,
    softcap: bool,
) -> (i32, i32, bool, bool) {
    if element_size == 2 {
        if headdim <= 64 {
            if headdim_v == 512 {
                (64, 64, false, false)
            } else if headdim_v == 256 {
                (128, 96, true, false)
            } else {
                // "Switch to tile size 192 x 192 for now"
                let use_block_n_128 = is_causal || is_local || paged_kv_non_tma;
                (192, if use_block_n_128 { 128 } else { 192 }, use_block_n_128, true)
            }
        } else if headdim <= 96 {
            (192, if is_local || paged_kv_non_tma { 128 } else { 144 }, false, true)
        } else if headdim <= 128 {
            let use_block_n_128 = is_causal || is_local || paged_kv_non_tma;
            (128, if use_block_n_128 { 128 } else { 176 }, true, true)
        } else if headdim <= 192 {
            let n = if paged_kv_non_tma || is_local {
                96
            } else if headdim_v <= 128 {
                128
            } else {
                112
            };
            (128, n, true, true)
        } else {
            (128, if is_local { 64 } else { 80 }, true, true)
        }
    } else if headdim <= 64 {
        (192, 160, true, true)
    } else if headdim <= 96 {
        (192, 128, true, true)
    } else if headdim <= 128 {
        let n = if paged_kv_non_tma {
            160
        } else if v_colmajor || (softcap && is_local) {
            192
        } else {
            224
        };
        (128, n, true, true)
    } else if headdim <= 192 {
        (128, if (paged_kv_non_tma || softcap) && is_local { 128 } else { 160 }, true, true)
    } else {
        (128, if is_local { 64 } else { 128 }, true, !paged_kv_non_tma)
    }
}

/// hopper/heuristics.h:9-17.
fn should_pack_gqa(varlen_q: bool, seqlen_q: i32, qhead_per_khead: i32, block_m: i32) -> bool {
    if varlen_q {
        return true;
    }
    let round_up = |a: i32, b: i32| (a + b - 1) / b * b;
    let nopack_gqa_efficiency = seqlen_q as f32 / round_up(seqlen_q, block_m) as f32;
    let pack_gqa_efficiency =
        (seqlen_q * qhead_per_khead) as f32 / round_up(seqlen_q * qhead_per_khead, block_m) as f32;
    // `nopack < 0.9 * pack`: 0.9 is a double literal
    (nopack_gqa_efficiency as f64) < 0.9f64 * pack_gqa_efficiency as f64
}

/// hopper/heuristics.h:25-59, `num_splits_heuristic` (no eligibility test,
/// unlike FA2's; an L2 branch and a num_n_blocks <= 4 floor instead).
fn num_splits_heuristic(
    total_mblocks: i32,
    num_sms: i32,
    num_n_blocks: i32,
    num_m_blocks: i32,
    size_one_kv_head: i32,
    is_causal_or_local: bool,
    max_splits: i32,
) -> i32 {
    // line 29: float compare
    if total_mblocks as f32 >= 0.8f32 * num_sms as f32 {
        let size_l2: i32 = 50 * 1024 * 1024;
        // lines 32-37; with one decode row block (num_m_blocks == 1) and
        // num_SMs >= 1 the split branch is never taken here
        if size_one_kv_head > size_l2 && num_m_blocks >= num_sms * 2 && !is_causal_or_local {
            return ((size_one_kv_head + size_l2 - 1) / size_l2).min(max_splits);
        } else {
            return 1;
        }
    }
    // line 40
    if num_n_blocks <= 4 {
        return 1;
    }
    let max_splits = max_splits.min(num_sms).min(num_n_blocks);
    let mut max_efficiency: f32 = 0.0;
    let mut efficiency: Vec<f32> = Vec::with_capacity(max_splits.max(0) as usize);
    for num_splits in 1..=max_splits {
        // `float(total_mblocks * num_splits) / num_SMs`
        let n_waves: f32 = (total_mblocks * num_splits) as f32 / num_sms as f32;
        // float or double ceil overload: the same float quotient (53 >= 2*24+2)
        let eff: f32 = n_waves / n_waves.ceil();
        if eff > max_efficiency {
            max_efficiency = eff;
        }
        efficiency.push(eff);
    }
    // line 53: 0.85 is a double literal
    for num_splits in 1..=max_splits {
        if efficiency[(num_splits - 1) as usize] as f64 >= 0.85f64 * max_efficiency as f64 {
            return num_splits;
        }
    }
    1
}

/// flash_api.cpp:492-509 (no hdim disabled in the default build).
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

/// The Flash_fwd_params fields the split choice reads.
struct Params {
    b: i32,
    h: i32,
    h_k: i32,
    seqlen_q: i32,
    seqlen_k: i32,
    seqlen_knew: i32,
    d: i32,
    dv: i32,
    d_rounded: i32,
    dv_rounded: i32,
    is_causal: bool,
    is_local: bool,
    is_e4m3: bool,
    softcap: f32,
    arch: i32,
    num_sm: i32,
    page_table: bool,
    page_size: i32,
    pagedkv_tma: bool,
    leftpad_k: bool,
    knew_ptr: bool,
    // (cu_seqlens_k and seqused_k only pick the sm8x tile in
    // get_num_splits: arch 90 never reads it)
    cu_seqlens_q: bool,
    seqused_q: bool,
    num_splits_dynamic_ptr: bool,
    num_splits: i32,
    pack_gqa: bool,
    window_size_left: i32,
    window_size_right: i32,
}

impl Params {
    fn element_size(&self) -> i32 {
        if self.is_e4m3 {
            1
        } else {
            2
        }
    }
}

/// flash_api.cpp:415-424.
fn get_pagedkv_tma(params: &Params) -> bool {
    if params.arch < 90 || !params.page_table || params.leftpad_k || params.knew_ptr {
        return false;
    }
    let (k_block_m, k_block_n, _, _) = tile_size_fwd_sm90(
        params.d_rounded,
        params.dv_rounded,
        params.is_causal,
        params.is_local,
        params.element_size(),
        false,
        false,
        params.softcap > 0.0,
    );
    // "when seqlen_q <= kBlockM, we're not compute bound, and somehow using
    // TMA is slower": a decode row of <= 8 packed heads never takes TMA here
    params.page_size % k_block_n == 0 && params.seqlen_q * (params.h / params.h_k) > k_block_m
}

/// flash_api.cpp:426-440.
fn get_pack_gqa(params: &Params) -> bool {
    if params.arch < 90 || (params.page_table && !params.pagedkv_tma) || params.num_splits > 1 {
        return true;
    }
    if params.h == params.h_k {
        return false;
    }
    let (k_block_m, _, _, _) = tile_size_fwd_sm90(
        params.d_rounded,
        params.dv_rounded,
        params.is_causal,
        params.is_local,
        params.element_size(),
        false,
        params.page_table && !params.pagedkv_tma,
        params.softcap > 0.0,
    );
    should_pack_gqa(params.cu_seqlens_q || params.seqused_q, params.seqlen_q, params.h / params.h_k, k_block_m)
}

/// flash_api.cpp:442-471 (arch >= 90, so the sm8x tile is not read).
fn get_num_splits(params: &Params) -> i32 {
    let (k_block_m, k_block_n, _, _) = tile_size_fwd_sm90(
        params.d_rounded,
        params.dv_rounded,
        params.is_causal,
        params.is_local,
        params.element_size(),
        false,
        params.page_table && !params.pagedkv_tma,
        params.softcap > 0.0,
    );
    let seqlen_q_packgqa = params.seqlen_q * (params.h / params.h_k);
    let seqlen_k_loaded = if !params.is_local {
        params.seqlen_k
    } else {
        0.max(params.seqlen_k.min(params.window_size_right + params.window_size_left + 1 + k_block_m))
    };
    let num_n_blocks = (seqlen_k_loaded + k_block_n - 1) / k_block_n;
    let num_m_blocks = (seqlen_q_packgqa + k_block_m - 1) / k_block_m;
    let size_one_kv_head = params.seqlen_k * (params.d + params.dv) * params.element_size();
    // line 468: varlen "pretending that batch = 1"
    let total_mblocks = (if params.num_splits_dynamic_ptr { 1 } else { params.b }) * params.h_k * num_m_blocks;
    num_splits_heuristic(
        total_mblocks,
        params.num_sm,
        num_n_blocks,
        num_m_blocks,
        size_one_kv_head,
        params.is_causal || params.is_local,
        128,
    )
}

/// What the prepare kernel leaves for the attention kernel's tile scheduler
/// and what it formed on the way.
struct Prepared {
    /// num_splits_dynamic_ptr, indexed by the virtual (sorted) batch
    num_splits_dynamic: Vec<i32>,
    /// varlen_batch_idx_ptr: virtual batch -> actual batch
    varlen_batch_idx: Vec<i32>,
    /// the float quotient of line 156, where the kernel formed it
    quotient: Option<f32>,
}

/// prepare_varlen_num_blocks (flash_prepare_scheduler.cu 219-250) and its
/// kernel (42-215), run lane by lane: every CTA, every warp of
/// NUM_WARP_SWITCH's NumWarps, every lane, with seqused_k(batch_idx) the
/// device array seqused_k (cache_seqlens). Sort is params.varlen_sort_batches
/// (flash_api.cpp:993: !is_local, true here); head_swizzle is false, so
/// num_nheads_in_l2_ptr is null and get_nheads_in_l2 never runs.
///
/// The int arithmetic is done in i64, and where upstream's int would
/// overflow (undefined behaviour there) this returns Err: the brief's rule
/// (refuse what upstream's int arithmetic cannot hold); a sweep of real
/// sizes never comes near it.
fn prepare_varlen_num_blocks(
    params: &Params,
    packgqa: bool,
    block_m: i32,
    block_n: i32,
    seqused_k: &dyn Fn(i32) -> i32,
) -> Result<Prepared, &'static str> {
    const OVERFLOW: &str = "an int of the prepare kernel would overflow";
    let ceil_div = |a: i64, b: i64| (a + b - 1) / b;
    // host, lines 221-223
    let qhead_per_khead = ceil_div(params.h as i64, params.h_k as i64) as i32;
    let num_warps = ceil_div(params.b as i64, 31) as i32;
    let num_ctas = ceil_div(params.b as i64, 31 * 32) as i32;
    // static_switch.h:183-204
    let num_warps_switched: i32 = match num_warps {
        n if n <= 1 => 1,
        n if n <= 2 => 2,
        n if n <= 4 => 4,
        n if n <= 8 => 8,
        n if n <= 16 => 16,
        _ => 32,
    };
    // the kernel's arguments (lines 233-236)
    let seqlen_q_static = params.seqlen_q;
    let seqlen_k_new_static = params.seqlen_knew;
    let num_batch = params.b;
    let num_head = if !packgqa { params.h } else { params.h_k };
    let num_sm = params.num_sm;
    let num_splits_static = params.num_splits;
    let sort = true; // varlen_sort_batches = !is_local
    let is_causal = params.is_causal;

    let mut out = Prepared {
        num_splits_dynamic: vec![0; num_batch.max(0) as usize],
        varlen_batch_idx: vec![0; num_batch.max(0) as usize],
        quotient: None,
    };
    // line 60 onwards, one CTA at a time (gridDim.x = num_ctas)
    let k_num_batch_per_warp = 31; // cutlass::NumThreadsPerWarp - 1
    let block_dim_x = num_warps_switched * 32;
    for block_idx in 0..num_ctas {
        let mut total_blocks_smem: i64 = 0;
        // lines 79-128: every thread's lane, batch_idx and blocks
        let mut num_m_blocks = [0i64; 1024];
        let mut num_n_blocks = [0i64; 1024];
        let mut batch_idx = [0i32; 1024];
        for thread in 0..block_dim_x {
            let lane = thread % 32;
            let warp_idx = thread / 32;
            let batch_cta_idx_offset = block_idx * 992;
            let bidb_start = batch_cta_idx_offset + k_num_batch_per_warp * warp_idx;
            let b = lane + bidb_start;
            let valid = b < num_batch && lane < k_num_batch_per_warp;
            // get_num_m_blocks (81-95): no seqused_q, no cu_seqlens_q
            let mut seqlen_m = seqlen_q_static as i64;
            if packgqa {
                seqlen_m *= qhead_per_khead as i64;
            }
            // get_num_n_blocks (97-121): no leftpad_k, seqused_k given, no
            // cu_seqlens_k_new
            let leftpad_k = 0i64;
            let seqlen_n = if b < num_batch { seqused_k(b) as i64 } else { 0 } - leftpad_k + seqlen_k_new_static as i64;
            let t = thread as usize;
            batch_idx[t] = b;
            // blockm_divmod.div(seqlen + divisor - 1)
            num_m_blocks[t] = if valid { (seqlen_m + block_m as i64 - 1) / block_m as i64 } else { 0 };
            num_n_blocks[t] = if valid { (seqlen_n + block_n as i64 - 1) / block_n as i64 } else { 0 };
            if seqlen_m + block_m as i64 - 1 > i32::MAX as i64 || seqlen_n + block_n as i64 - 1 > i32::MAX as i64 {
                return Err(OVERFLOW);
            }
        }
        // lines 140-161
        let mut num_splits_dynamic = [0i64; 1024];
        if num_ctas > 1 || num_splits_static == 1 {
            num_splits_dynamic[..block_dim_x as usize].iter_mut().for_each(|d| *d = 1);
        } else {
            // 146-152: each warp's shuffle-down sum, lane 0's into shared memory
            for warp in 0..num_warps_switched as usize {
                let mut total_blocks = [0i64; 32];
                for (lane, t) in total_blocks.iter_mut().enumerate() {
                    *t = num_m_blocks[warp * 32 + lane] * num_n_blocks[warp * 32 + lane];
                }
                let mut i = 16;
                while i >= 1 {
                    // __shfl_down_sync: a lane whose source is past 31 keeps its own
                    let before = total_blocks;
                    for lane in 0..32 {
                        total_blocks[lane] += if lane + i < 32 { before[lane + i] } else { before[lane] };
                    }
                    i /= 2;
                }
                if total_blocks[0] > i32::MAX as i64 {
                    return Err(OVERFLOW);
                }
                total_blocks_smem += total_blocks[0]; // atomicAdd, lane 0
            }
            // 153-154
            if total_blocks_smem > i32::MAX as i64 {
                return Err(OVERFLOW);
            }
            let total_blocks = total_blocks_smem as i32;
            // 156: float, left to right; IEEE division (the file's head)
            let quotient: f32 = total_blocks as f32 * 1.1f32 * num_head as f32 / num_sm as f32;
            let ceiled = quotient.ceil();
            if ceiled >= 2147483648.0f32 {
                return Err(OVERFLOW); // static_cast<int> undefined
            }
            let blocks_per_sm = ceiled as i64;
            out.quotient = Some(quotient);
            for t in 0..block_dim_x as usize {
                // 158
                if num_n_blocks[t] + blocks_per_sm - 1 > i32::MAX as i64 {
                    return Err(OVERFLOW);
                }
                num_splits_dynamic[t] =
                    ((num_n_blocks[t] + blocks_per_sm - 1) / blocks_per_sm).min(num_splits_static as i64).max(1);
                // 160: cutlass::ceil_div
                num_n_blocks[t] = (num_n_blocks[t] + num_splits_dynamic[t] - 1) / num_splits_dynamic[t];
            }
        }
        if sort {
            // 163-171: lane 31 and the slots past the batch sort last
            let mut batch_coords: Vec<(i64, i64, i64, i32)> = (0..block_dim_x as usize)
                .map(|t| {
                    let lane = t as i32 % 32;
                    let x = if lane == k_num_batch_per_warp || batch_idx[t] >= num_batch {
                        i32::MIN as i64
                    } else if is_causal {
                        num_n_blocks[t] * block_n as i64 - num_m_blocks[t] * block_m as i64
                    } else {
                        num_n_blocks[t]
                    };
                    (x, num_m_blocks[t], num_splits_dynamic[t], batch_idx[t])
                })
                .collect();
            // 179: BlockMergeSort, descending by x (stable)
            batch_coords.sort_by(|l, r| r.0.cmp(&l.0));
            // 197-204
            for thread in 0..block_dim_x {
                let b = block_idx * 992 + thread;
                if b < num_batch && thread < 992 {
                    let c = batch_coords[thread as usize];
                    out.num_splits_dynamic[b as usize] = c.2 as i32;
                    out.varlen_batch_idx[b as usize] = c.3;
                }
            }
        } else {
            // 206-212
            for t in 0..block_dim_x as usize {
                let lane = t as i32 % 32;
                let b = batch_idx[t];
                if b < num_batch && lane < k_num_batch_per_warp {
                    out.num_splits_dynamic[b as usize] = num_splits_dynamic[t] as i32;
                    out.varlen_batch_idx[b as usize] = b;
                }
            }
        }
    }
    Ok(out)
}

/// The split count the attention kernel runs for each actual batch
/// (sequence), in the batch's order: tile_scheduler.hpp's
/// VarlenDynamicPersistentTileScheduler reads num_splits_dynamic_ptr at the
/// virtual batch (630; 1 without Split, 626-627) and runs it for the
/// actual batch varlen_batch_idx_ptr names (561-570).
fn splits_by_sequence(prepared: &Prepared, split: bool) -> Vec<u32> {
    let mut by_seq = vec![0u32; prepared.num_splits_dynamic.len()];
    for (virtual_batch, &actual) in prepared.varlen_batch_idx.iter().enumerate() {
        by_seq[actual as usize] = if split { prepared.num_splits_dynamic[virtual_batch] as u32 } else { 1 };
    }
    by_seq
}

/// mha_fwd (flash_api.cpp:672-1198) for the fixed paged decode, with its
/// `causal` argument made explicit for the test that it changes nothing.
fn mha_fwd(s: &Shape, cache_seqlens: Option<&[u32]>, causal: bool) -> Result<BatchAnswer, &'static str> {
    // engine.h / brief: a count that must be >= 1 and is 0 is refused.
    // (Upstream: num_heads % 0 would trap at line 781; the rest are
    // tensors of no size.) blocks_per_sm and cuda_graph are FlashInfer's.
    if let Some(why) = crate::zero_count(s, true) {
        return Err(why);
    }

    // lines 757-771: torch sizes (int64) taken as int; q is not varlen
    let batch_size = s.num_seqs as i32;
    let seqlen_q: i32 = 1;
    let total_q = batch_size * 1;
    let num_heads = s.num_q_heads as i32;
    let head_size = s.head_dim as i32;
    let head_size_v = head_size;
    let page_size = s.page_size as i32; // any page size (interface: "can be arbitrary")
    // cache_seqlens: one length per sequence, or seq_len for every one
    let seq_len = match cache_seqlens {
        Some(lens) => *lens.iter().max().expect("a batch has a sequence") as i32,
        None => s.seq_len as i32,
    };
    let max_num_pages_per_seq = (seq_len + page_size - 1) / page_size; // our reading
    let seqlen_k = max_num_pages_per_seq * page_size;
    let total_k = batch_size * page_size; // `batch_size * k.size(1)`
    let num_heads_k = s.num_kv_heads as i32;

    // lines 779-781
    let max_headdim = 256; // get_max_headdim, lines 473-490
    if head_size > max_headdim {
        return Err("FlashAttention forward only supports head dimension at most 256");
    }
    if num_heads % num_heads_k != 0 {
        return Err("Number of heads in key/value must divide number of heads in query");
    }
    // lines 782-793: head_size_v == head_size, nothing to check

    // lines 796-805
    let mut is_causal = causal;
    let mut window_size_left: i32 = -1;
    let mut window_size_right: i32 = -1;
    let attention_chunk: i32 = 0;
    let paged_kv = true;
    if window_size_left >= seqlen_k - 1 {
        window_size_left = -1;
    }
    if window_size_right >= seqlen_q - 1 {
        window_size_right = -1;
    }
    if seqlen_q == 1 && window_size_left == -1 && window_size_right == -1 && attention_chunk == 0 {
        // "Special case of hdim 128 where we want causal to have kBlockN=128"
        if (head_size <= 64 || head_size > 128) || !paged_kv {
            is_causal = false;
        }
    }
    if is_causal {
        window_size_right = 0;
    }

    // line 849: seqused_k given
    let is_varlen = true;
    // lines 854-856: bf16
    let alignment = 8;
    if head_size % alignment != 0 {
        return Err("head_size should be a multiple of 8");
    }

    // lines 878-879
    let head_size_rounded = round_up_headdim(head_size);
    let head_size_v_rounded = head_size_rounded;

    // set_params_fprop, lines 146-163
    let params_is_causal = window_size_left < 0 && window_size_right == 0 && attention_chunk == 0;
    let params_is_local = (window_size_left >= 0 || window_size_right >= 0 || attention_chunk >= 1) && !params_is_causal;
    if window_size_left < 0 {
        window_size_left = seqlen_k - 1;
    }
    if window_size_right < 0 {
        window_size_right = seqlen_q - 1;
    }
    let mut params = Params {
        b: batch_size,
        h: num_heads,
        h_k: num_heads_k,
        seqlen_q,
        seqlen_k,
        seqlen_knew: 0,
        d: head_size,
        dv: head_size_v,
        d_rounded: head_size_rounded,
        dv_rounded: head_size_v_rounded,
        is_causal: params_is_causal,
        is_local: params_is_local,
        is_e4m3: false,
        softcap: 0.0,
        arch: 90,
        num_sm: s.sm_count as i32 - 0, // multiProcessorCount - sm_margin
        page_table: paged_kv,
        page_size,
        pagedkv_tma: false,
        leftpad_k: false,
        knew_ptr: false,
        cu_seqlens_q: false,
        seqused_q: false,
        num_splits_dynamic_ptr: false,
        num_splits: 0,
        pack_gqa: false,
        window_size_left,
        window_size_right,
    };

    // lines 977-985
    let use_prepare_varlen = is_varlen;
    // "Temporarily set num_splits_dynamic_ptr to 1 since get_num_splits checks it"
    params.num_splits_dynamic_ptr = use_prepare_varlen;
    params.pagedkv_tma = get_pagedkv_tma(&params);
    let num_splits = s.num_splits as i64; // int64_t num_splits
    params.num_splits = if num_splits <= 0 { get_num_splits(&params) } else { num_splits as i32 };
    params.pack_gqa = get_pack_gqa(&params);

    // lines 1092-1113: the accumulators, q not varlen
    let mut workspace_bytes: u64 = 0;
    if params.num_splits > 1 {
        if params.num_splits > 256 {
            return Err("num_splits > 256 not supported");
        }
        let rows = params.num_splits as u64 * batch_size as u64 * num_heads as u64 * seqlen_q as u64;
        let out_accum = rows * head_size_v as u64 * 4; // {num_splits, b, h, seqlen_q, head_size_v} float
        let softmax_lse_accum = rows * 4; // {num_splits, b, h, seqlen_q} float
        workspace_bytes = out_accum + softmax_lse_accum;
    }

    // lines 1167-1168: total_q > 0, total_k > 0, num_heads_k > 0: run_mha_fwd
    debug_assert!(total_q > 0 && total_k > 0 && num_heads_k > 0);
    // run_mha_fwd (367-385): TORCH_CHECK(num_splits >= 1) holds (>= 1 here);
    // Split = num_splits > 1; PagedKVNonTMA = page_table && !pagedkv_tma
    let split = params.num_splits > 1;
    let paged_kv_non_tma = params.page_table && !params.pagedkv_tma;
    // "Always enable PackGQA for Sm8x or PagedKVNonTMA or Split"
    let pack_gqa = params.pack_gqa || params.arch < 90 || paged_kv_non_tma || split;
    // run_mha_fwd_constexpr (255-365), bf16, dv == d: kHeadDim = kHeadDimV
    // = 64, 96, 128, 192 or 256 by params.d, which is d_rounded
    let k_head_dim = round_up_headdim(params.d);
    // run_flash_fwd, lines 40-42 (Arch 90, V_colmajor false for bf16)
    let (k_block_m, k_block_n, _, _) = tile_size_fwd_sm90(
        k_head_dim,
        k_head_dim,
        params.is_causal,
        params.is_local,
        2,
        false,
        paged_kv_non_tma,
        false,
    );
    // lines 163-166: Varlen and no scheduler_metadata
    let seqused_k = |b: i32| match cache_seqlens {
        Some(lens) => lens[b as usize] as i32,
        None => seq_len,
    };
    let prepared = prepare_varlen_num_blocks(&params, pack_gqa, k_block_m, k_block_n, &seqused_k)?;
    let by_seq = splits_by_sequence(&prepared, split);
    // what the launch runs: every sequence's count, the largest of them
    let num_splits_dynamic = by_seq.iter().copied().max().unwrap_or(0);
    // within 2 ulp of a whole number: the floats 2 steps below and above
    // have different ceilings (the GPU's --use_fast_math division is
    // within 2 ulp)
    let near_whole = prepared.quotient.is_some_and(|q| {
        f32::from_bits(q.to_bits() - 2).ceil() != f32::from_bits(q.to_bits() + 2).ceil()
    });

    Ok(BatchAnswer {
        answer: Answer { num_splits: num_splits_dynamic, num_splits_bound: params.num_splits as u32, workspace_bytes },
        by_seq,
        near_whole,
    })
}

pub fn launch(s: &Shape) -> Result<Answer, &'static str> {
    mha_fwd(s, None, false).map(|b| b.answer)
}

/// FA3 gives each sequence of a batch its own count (harness_batch.rs
/// expects some batches to have different counts).
#[allow(dead_code)] // read by harness_batch.rs
pub const SPLITS_PER_SEQUENCE: bool = true;

/// mha_fwd for a mixed batch: cache_seqlens = seq_lens (seqused_k), the
/// page table as wide as the longest needs. s.num_seqs and s.seq_len are
/// not read; seq_lens is a batch engine.h accepts (1..=4096 lengths of
/// 1..=2^31 - 1, harness_batch.rs checks).
#[allow(dead_code)] // read by harness_batch.rs and the tests
pub fn launch_batch(s: &Shape, seq_lens: &[u32]) -> Result<BatchAnswer, &'static str> {
    let batch = Shape {
        num_seqs: seq_lens.len() as u32,
        seq_len: seq_lens.iter().copied().max().unwrap_or(0),
        ..*s
    };
    mha_fwd(&batch, Some(seq_lens), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_shape as shape;

    #[test]
    fn worked_example_h100_llama8b() {
        // 132 SMs, 32 q / 8 kv heads, d 128, 8,192 tokens, pages of 256
        let at = |seqs| launch(&shape(132, seqs, 32, 8, 128, 8192, 256, 0)).unwrap();
        for (seqs, want) in [(1, 13), (8, 2), (64, 1)] {
            let a = at(seqs);
            assert_eq!(a.num_splits, want, "at {} sequences", seqs);
            assert_eq!(a.num_splits_bound, 15);
            // out_accum + softmax_lse_accum: 15 x seqs x 32 heads x 1 x (128 + 1) floats
            assert_eq!(a.workspace_bytes, 15 * seqs as u64 * 32 * (128 + 1) * 4);
        }
    }

    #[test]
    fn worked_example_mixed_batches() {
        // 132 SMs, 32 q / 8 kv heads, d 128, pages of 16: one 8,192-token
        // sequence alone, beside 3 x 512 and 4 x 100, beside 63 x 100,
        // beside 7 x 8,192. Pages of 16 take the non-TMA tile, 128 x 128;
        // 64 KV blocks for the long one, bound 15 from the page table.
        let s = shape(132, 1, 32, 8, 128, 0, 16, 0);
        let mut beside_63 = vec![100u32; 64];
        beside_63[0] = 8192;
        let cases: [(&[u32], u32, u32); 4] = [
            (&[8192], 13, 0),
            (&[8192, 512, 512, 512, 100, 100, 100, 100], 11, 1),
            (&beside_63, 8, 1),
            (&[8192; 8], 2, 2),
        ];
        for (lens, long, short) in cases {
            let a = launch_batch(&s, lens).unwrap();
            assert_eq!(a.by_seq[0], long, "{:?}", &lens[..lens.len().min(8)]);
            assert!(a.by_seq[1..].iter().all(|&x| x == short), "{:?}", a.by_seq);
            assert_eq!(a.answer.num_splits, long);
            assert_eq!(a.answer.num_splits_bound, 15);
            assert_eq!(a.answer.workspace_bytes, 15 * lens.len() as u64 * 32 * (128 + 1) * 4);
            assert!(!a.near_whole);
        }
    }

    #[test]
    fn mixed_batch_quotient_near_whole() {
        // 11 SMs, 1 head, 1,280 tokens: 10 blocks, float(10) * 1.1f is the
        // float 11, and 11 / 11 is exactly 1
        let a = launch_batch(&shape(11, 1, 1, 1, 128, 0, 16, 0), &[1280]).unwrap();
        assert!(a.near_whole);
        let b = launch_batch(&shape(11, 1, 1, 1, 128, 0, 16, 0), &[1280, 128]).unwrap();
        assert!(!b.near_whole);
    }

    #[test]
    fn equal_lengths_as_launch() {
        // a batch of equal lengths answers as launch, every sequence alike
        for (seqs, len, page) in [(1, 8192, 16), (8, 8192, 256), (992, 3000, 16), (993, 100000, 1), (64, 1, 7)] {
            let lens = vec![len; seqs as usize];
            let a = launch_batch(&shape(132, 0, 32, 8, 128, 0, page, 0), &lens).unwrap();
            let u = launch(&shape(132, seqs, 32, 8, 128, len, page, 0)).unwrap();
            assert_eq!(a.answer, u);
            assert!(a.by_seq.iter().all(|&x| x == u.num_splits));
        }
    }

    #[test]
    fn more_than_one_cta() {
        // 992 batches fit one CTA; 993 take two and every batch gets 1
        let a = launch(&shape(132, 992, 8, 8, 64, 200000, 16, 0)).unwrap();
        let b = launch(&shape(132, 993, 8, 8, 64, 200000, 16, 0)).unwrap();
        assert_eq!(b.num_splits, 1);
        assert_eq!(a.num_splits_bound, b.num_splits_bound);
        // a fixed num_splits is only the bound; 1 is the invariant setting
        let c = launch(&shape(132, 1, 32, 8, 128, 8192, 256, 1)).unwrap();
        assert_eq!((c.num_splits, c.num_splits_bound, c.workspace_bytes), (1, 1, 0));
        let d = launch(&shape(132, 1, 32, 8, 128, 8192, 256, 4)).unwrap();
        assert_eq!((d.num_splits, d.num_splits_bound), (4, 4));
    }

    #[test]
    fn refusals() {
        assert!(launch(&shape(132, 1, 32, 8, 100, 8192, 256, 0)).is_err()); // not a multiple of 8
        assert!(launch(&shape(132, 1, 32, 8, 264, 8192, 256, 0)).is_err());
        assert!(launch(&shape(132, 1, 33, 8, 128, 8192, 256, 0)).is_err());
        assert!(launch(&shape(132, 1, 32, 8, 128, 8192, 3, 0)).is_ok()); // any page size
        assert!(launch(&shape(132, 1, 32, 8, 40, 8192, 1, 0)).is_ok());
    }

    #[test]
    fn causal_changes_nothing() {
        // splitmix64 over a spread of shapes: causal = true gives the same
        let mut z: u64 = 7;
        let mut next = || {
            z = z.wrapping_add(0x9e3779b97f4a7c15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
            x ^ (x >> 31)
        };
        for _ in 0..20000 {
            let kv = 1 + (next() % 16) as u32;
            let s = shape(
                1 + (next() % 300) as u32,
                1 + (next() % 1200) as u32,
                kv * (1 + (next() % 8) as u32),
                kv,
                8 * (1 + (next() % 32) as u32),
                1 + (next() % 200000) as u32,
                1 + (next() % 1024) as u32,
                0,
            );
            assert_eq!(mha_fwd(&s, None, true), mha_fwd(&s, None, false));
        }
    }
}
