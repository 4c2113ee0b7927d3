use crate::{Answer, Batch};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_batch_flashmla — the second implementation of FlashMLA's dense
// decode schedule over a mixed batch: each request's split count, the
// largest, num_sm_parts, and the lse_accum + out_accum bytes the host
// allocates. Written from the upstream source alone (not from
// policy/flashmla.c), for `make engines-check-batch-flashmla`. The upstream
// is Copyright (c) 2025 DeepSeek, MIT License.
//
// Upstream: deepseek-ai/FlashMLA @ 9241ae3ef9bac614dd25e45e507e089f888280e0
//
// flash_mla_with_kvcache (flash_mla/flash_mla_interface.py 53-173) asserts
// num_splits is None (107) and, with no indices, calls dense_decode_fwd =
// dense_attn_decode_interface (csrc/api/dense_decode.h 13-225), which:
//   TORCH_CHECKs head_size_k 576 or 512 (60), head_size_v 512 (61),
//   page_block_size 64 (67), batch_size > 0 (68), h_q % h_k == 0 (69);
//   num_sm_parts = max(num_sms / h_k / ceil_div(s_q * h_q / h_k, 64), 1) (78);
//   runs get_mla_metadata_kernel with block_size_n 64,
//   fixed_overhead_num_blocks 5, topk -1 (101-113);
//   allocates lse_accum [b + num_sm_parts, h_k, q_seq_per_hk] and out_accum
//   [..., head_size_v] floats (164-166);
//   runs the SM90 kernel, which FLASH_ASSERTs d == 576 and d_v == 512
//   (csrc/sm90/decode/dense/splitkv_mla.cuh 1277-1278), and the combine,
//   whose MLA_NUM_SPLITS_SWITCH on num_sm_parts has cases up to 160 and
//   FLASH_ASSERT(false) above (csrc/smxx/decode/combine/combine.cu 165-192).
//
// get_mla_metadata_kernel (csrc/smxx/decode/get_decoding_sched_meta/
// get_decoding_sched_meta.cu 11-107) is emulated as it runs: one warp, lane
// l handles requests l, l + 32, ...; the lanes' sums meet in a butterfly of
// shuffles; lane 0 walks the SM parts, filling DecodingSchedMeta
// (csrc/params.h 10-16) and num_splits_shared, a prefix sum whose steps are
// the requests' split counts.
//
// Types as upstream: every quantity is a C++ int, here i32 with checked
// arithmetic: an overflow (undefined upstream) is a refusal, as the port
// refuses those batches. cutlass::ceil_div(int, int) = (a + b - 1) / b.
// Inputs above i32::MAX cannot be the ints upstream reads: refused.
// The engine contract (policy/engine.h) refuses a zero count among those
// read, a zero or over-long length, and more than 4096 sequences.

const MAX_SEQS: usize = 4096;

#[derive(Clone, Copy, Default, Debug)]
struct DecodingSchedMeta {
    begin_req_idx: i32,
    end_req_idx: i32,
    #[allow(dead_code)] // kept as upstream fills it; no count reads it
    begin_block_idx: i32,
    end_block_idx: i32,
    begin_split_idx: i32,
    is_first_req_splitted: i32,
    is_last_req_splitted: i32,
}

fn int(v: u32, what: &'static str) -> Result<i32, &'static str> {
    i32::try_from(v).map_err(|_| what)
}

fn add(a: i32, b: i32) -> Result<i32, &'static str> {
    a.checked_add(b).ok_or("int overflow")
}

fn cutlass_ceil_div(a: i32, b: i32) -> Result<i32, &'static str> {
    Ok(add(add(a, b)?, -1)? / b)
}

struct SchedOut {
    num_splits: Vec<i32>,
    metas: Vec<DecodingSchedMeta>,
}

// get_mla_metadata_kernel, dense (params.topk == -1)
#[allow(unused_assignments)] // remain_payload = 0 before the break, as upstream
fn get_mla_metadata_kernel(
    seqlens_k: &[i32],
    block_size_n: i32,
    fixed_overhead_num_blocks: i32,
    num_sm_parts: i32,
) -> Result<SchedOut, &'static str> {
    let batch_size = seqlens_k.len() as i32;
    let bs = seqlens_k.len();
    let mut num_blocks_shared = vec![0i32; bs];
    let mut num_splits_shared = vec![0i32; bs + 1];
    let mut seqlens_k_shared = vec![0i32; bs];
    let mut first_block_idx_shared = vec![0i32; bs + 1];
    let mut last_block_idx_shared = vec![0i32; bs];

    let mut lane_total = [0i32; 32];
    for lane in 0..32usize {
        let mut i = lane;
        while i < bs {
            let cur_s_k = seqlens_k[i];
            seqlens_k_shared[i] = cur_s_k;
            let first_token_idx = 0;
            let last_token_idx = std::cmp::max(cur_s_k - 1, 0);
            let cur_first_block_idx = first_token_idx / block_size_n;
            let cur_last_block_idx = last_token_idx / block_size_n;
            let num_blocks = cur_last_block_idx - cur_first_block_idx + 1;
            lane_total[lane] = add(lane_total[lane], add(num_blocks, fixed_overhead_num_blocks)?)?;
            num_blocks_shared[i] = num_blocks;
            first_block_idx_shared[i] = cur_first_block_idx;
            last_block_idx_shared[i] = cur_last_block_idx;
            i += 32;
        }
    }
    // __shfl_xor_sync butterfly: every lane ends with the sum
    let mut offset = 16;
    while offset >= 1 {
        let before = lane_total;
        for lane in 0..32usize {
            lane_total[lane] = add(before[lane], before[lane ^ offset])?;
        }
        offset /= 2;
    }
    let total_num_blocks = lane_total[0];

    let payload = add(cutlass_ceil_div(total_num_blocks, num_sm_parts)?, fixed_overhead_num_blocks)?;
    let (mut now_req_idx, mut now_block, mut now_n_split_idx, mut cum_num_splits) = (0i32, 0i32, 0i32, 0i32);
    num_splits_shared[0] = 0;
    let mut metas = Vec::with_capacity(num_sm_parts as usize);
    for _i in 0..num_sm_parts {
        let mut cur = DecodingSchedMeta {
            begin_req_idx: now_req_idx,
            // once every request is placed, upstream reads one past
            // first_block_idx_shared (the next array's first int); the
            // parts left take nothing, and no count reads it
            begin_block_idx: now_block + first_block_idx_shared[now_req_idx as usize],
            begin_split_idx: now_n_split_idx,
            is_first_req_splitted: (now_block != 0) as i32,
            ..Default::default()
        };
        let mut remain_payload = payload;
        while now_req_idx < batch_size {
            let num_blocks = num_blocks_shared[now_req_idx as usize];
            let now_remain_blocks = num_blocks - now_block;
            if remain_payload >= add(now_remain_blocks, fixed_overhead_num_blocks)? {
                cum_num_splits = add(cum_num_splits, now_n_split_idx + 1)?;
                num_splits_shared[now_req_idx as usize + 1] = cum_num_splits;
                remain_payload -= now_remain_blocks + fixed_overhead_num_blocks;
                now_req_idx += 1;
                now_block = 0;
                now_n_split_idx = 0;
            } else {
                if remain_payload - fixed_overhead_num_blocks > 0 {
                    now_block += remain_payload - fixed_overhead_num_blocks;
                    now_n_split_idx += 1;
                    remain_payload = 0;
                }
                break;
            }
        }
        cur.end_req_idx = if now_block > 0 { now_req_idx } else { now_req_idx - 1 };
        cur.end_block_idx = if now_block > 0 {
            now_block + first_block_idx_shared[now_req_idx as usize]
        } else if seqlens_k_shared[(now_req_idx - 1) as usize] == 0 {
            0
        } else {
            last_block_idx_shared[(now_req_idx - 1) as usize] + 1
        };
        let e = cur.end_req_idx as usize;
        cur.is_last_req_splitted =
            (cur.end_block_idx != last_block_idx_shared[e] + 1 && seqlens_k_shared[e] != 0) as i32;
        if cur.begin_req_idx == cur.end_req_idx {
            let either = (cur.is_first_req_splitted != 0 || cur.is_last_req_splitted != 0) as i32;
            cur.is_first_req_splitted = either;
            cur.is_last_req_splitted = either;
        }
        metas.push(cur);
    }
    // FLASH_DEVICE_ASSERT: traps the kernel
    if !(now_req_idx == batch_size && now_block == 0 && now_n_split_idx == 0) {
        return Err("device assert");
    }
    Ok(SchedOut { num_splits: num_splits_shared, metas })
}

pub fn launch(b: &Batch) -> Result<Answer, &'static str> {
    // the engine contract's zero counts
    if b.sm_count == 0 || b.num_q_heads == 0 || b.num_kv_heads == 0 || b.head_dim == 0 || b.page_size == 0 {
        return Err("zero count");
    }
    // interface.py 107
    if b.num_splits != 0 {
        return Err("num_splits must be None");
    }
    let head_size_v = if b.head_dim_v == 0 { 512 } else { b.head_dim_v };
    let seqlen_q = if b.seqlen_q == 0 { 1 } else { b.seqlen_q };
    if b.seq_lens.is_empty() || b.seq_lens.len() > MAX_SEQS {
        return Err("num_seqs");
    }
    let mut seqlens_k = Vec::with_capacity(b.seq_lens.len());
    for &l in &b.seq_lens {
        if l == 0 {
            return Err("seq_lens");
        }
        seqlens_k.push(int(l, "seq_lens")?);
    }
    let batch_size = seqlens_k.len() as i32;
    let seqlen_q_ori = int(seqlen_q, "seqlen_q")?;
    let num_heads_q = int(b.num_q_heads, "num_q_heads")?;
    let num_heads_k = int(b.num_kv_heads, "num_kv_heads")?;
    let head_size_k = int(b.head_dim, "head_dim")?;
    let head_size_v = int(head_size_v, "head_dim_v")?;
    let page_block_size = int(b.page_size, "page_size")?;
    let num_sms = int(b.sm_count, "sm_count")?;

    if !(head_size_k == 576 || head_size_k == 512) {
        return Err("Only head_size_k == 576 or 512 is supported");
    }
    if head_size_v != 512 {
        return Err("Only head_size_v == 576 is supported");
    }
    if page_block_size != 64 {
        return Err("Currently page_block_size must be 64");
    }
    if batch_size <= 0 {
        return Err("batch size must be positive");
    }
    if num_heads_q % num_heads_k != 0 {
        return Err("Number of heads in key/value must divide number of heads in query");
    }
    let num_q_heads_per_hk = num_heads_q / num_heads_k;
    let q_seq_per_hk = seqlen_q_ori.checked_mul(num_q_heads_per_hk).ok_or("int overflow")?;
    let num_heads = num_heads_k;
    let s_q_h_q = seqlen_q_ori.checked_mul(num_heads_q).ok_or("int overflow")?;
    let num_sm_parts = std::cmp::max(num_sms / num_heads_k / cutlass_ceil_div(s_q_h_q / num_heads_k, 64)?, 1);

    let sched = get_mla_metadata_kernel(&seqlens_k, 64, 5, num_sm_parts)?;
    debug_assert_eq!(sched.metas.len(), num_sm_parts as usize);

    let total_num_splits = add(batch_size, num_sm_parts)?;
    let lse_accum_numel = total_num_splits as u64 * num_heads as u64 * q_seq_per_hk as u64;
    let out_accum_numel = lse_accum_numel * head_size_v as u64;

    // the SM90 kernel's FLASH_ASSERTs
    if head_size_k != 576 || head_size_v != 512 {
        return Err("FLASH_ASSERT d == HEAD_DIM_K");
    }
    // combine: MLA_NUM_SPLITS_SWITCH
    if num_sm_parts > 160 {
        return Err("FLASH_ASSERT(false) in MLA_NUM_SPLITS_SWITCH");
    }

    let by_seq: Vec<u32> =
        sched.num_splits.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
    // The same counts read off the parts, as the MLA kernel walks them
    // (splitkv_mla.cuh 1029: a part's first request starts at split
    // begin_split_idx, every other at 0): the parts that cover a request
    // are its splits.
    let mut covered = vec![0u32; by_seq.len()];
    for m in &sched.metas {
        for r in m.begin_req_idx..=m.end_req_idx {
            let n_split_idx = if r == m.begin_req_idx { m.begin_split_idx } else { 0 };
            if n_split_idx as u32 != covered[r as usize] {
                return Err("a part's begin_split_idx disagrees with the parts before it");
            }
            covered[r as usize] += 1;
        }
    }
    if covered != by_seq {
        return Err("the parts disagree with num_splits");
    }
    Ok(Answer {
        num_splits: *by_seq.iter().max().unwrap(),
        num_splits_bound: num_sm_parts as u32,
        workspace_bytes: (lse_accum_numel + out_accum_numel) * std::mem::size_of::<f32>() as u64,
        by_seq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsv3;

    #[test]
    fn h100_eight_of_8192_split_8_9_9_8_8_9_9_8() {
        let a = launch(&dsv3(132, 128, &[8192; 8])).unwrap();
        assert_eq!(a.by_seq, vec![8, 9, 9, 8, 8, 9, 9, 8]);
        assert_eq!(a.num_splits, 9);
        assert_eq!(a.num_splits_bound, 66);
        // 74 rows (8 + 66) of 128 floats, and of 128 x 512
        assert_eq!(a.workspace_bytes, 74 * 128 * 4 + 74 * 128 * 512 * 4);
    }

    #[test]
    fn one_short_sequence_is_not_split() {
        let a = launch(&dsv3(132, 128, &[1])).unwrap();
        assert_eq!(a.by_seq, vec![1]);
        assert_eq!(a.workspace_bytes, 67 * 128 * 4 * 513);
    }

    #[test]
    fn one_long_beside_short_ones() {
        // 66 parts; blocks 3125 + 5 + 7 * (1 + 5) = 3172, payload 49 + 5:
        // the long one takes 49 a part over 64 parts, then the rest
        let mut lens = vec![200000u32];
        lens.extend_from_slice(&[64; 7]);
        let a = launch(&dsv3(132, 128, &lens)).unwrap();
        let blocks: u32 = 3125;
        assert_eq!(a.by_seq[0], (blocks + 48) / 49);
        assert!(a.by_seq[1..].iter().all(|&x| x <= 2));
    }

    #[test]
    fn refusals() {
        let mut b = dsv3(132, 128, &[100]);
        b.head_dim = 512; // passes the interface, not the kernel
        assert!(launch(&b).is_err());
        let mut b = dsv3(132, 128, &[100]);
        b.page_size = 16;
        assert!(launch(&b).is_err());
        let mut b = dsv3(132, 128, &[100]);
        b.head_dim_v = 576;
        assert!(launch(&b).is_err());
        assert!(launch(&dsv3(322, 128, &[100])).is_err());
        assert!(launch(&dsv3(321, 128, &[100])).is_ok());
        assert!(launch(&dsv3(132, 128, &[])).is_err());
    }
}
