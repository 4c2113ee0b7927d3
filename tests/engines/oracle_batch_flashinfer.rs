use crate::{Answer, Batch};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_batch_flashinfer — the second implementation of FlashInfer's two
// batch decode plans over a mixed batch (issue 49): the chunks each
// request's KV is cut into, the largest, and the float workspace the plan
// carves for the split. Written from the upstream source alone (not from
// policy/flashinfer.c), for `make engines-check-batch-flashinfer` (the
// CUDA-core plan) and `engines-check-batch-flashinfer-tc` (the tensor-core
// plan). The upstream is Copyright (c) 2023 by FlashInfer team, Apache-2.0.
//
// Upstream: flashinfer-ai/flashinfer @ fb28d7242b3506a2348265962041acc1fb56cca4
//
// BatchDecodeWithPagedKVCacheWrapper._plan_impl (flashinfer/decode.py
// 1417-1777) takes indptr (int32, in pages), last_page_len and the
// options; fixed_split_size None becomes -1 (1543-1544) and is a
// ValueError off the tensor-core path (1539-1542).
//
//   use_tensor_cores=False -> csrc/batch_decode.cu BatchDecodeWithPagedKVCachePlan
//     (39-81: DISPATCH_GQA_GROUP_SIZE at 63) -> scheduler.cuh DecodePlan
//     (510-525) -> DecodePlanImpl (424-508) with
//     BatchDecodeWithPagedKVCacheWorkEstimationDispatched (148-210) and
//     PartitionPagedKVCacheBinarySearchMinNumPagePerBatch (73-99),
//     DecodeSplitKVIndptr (348-364). disable_split_kv is not passed.
//
//   use_tensor_cores=True (backend "auto" -> "fa2" for bf16, 1676-1692) ->
//     csrc/batch_prefill.cu BatchPrefillWithKVCachePlan (48-75; reads
//     kv_indptr, not kv_len_arr; kv_dtype_bytes = sizeof(DTypeKV) = 2) ->
//     scheduler.cuh PrefillPlan (897-915) -> PrefillPlanImpl (764-894) ->
//     PrefillSplitQOKVIndptr (545-683) with PrefillBinarySearchKVChunkSize
//     (101-130) and utils.cuh FA2DetermineCtaTileQ (408-486). Arguments
//     from decode.py 1714-1733: qo_indptr = arange(batch_size + 1),
//     total_num_rows = batch_size, head_dim qk = vo, causal false (q_len
//     1), window_left -1, num_colocated_ctas 0, uniform_q_len 0.
//
//   The run: a plan with split_kv hands the kernel tmp_v and merges with
//   VariableLengthMergeStates (decode.cuh 816-819, prefill.cuh 4518), whose
//   DISPATCH_HEAD_DIM (cascade.cuh 703, utils.cuh 197-224) has 64, 128,
//   256, 512 only: such a launch with another head dim fails; one without
//   split_kv never merges.
//
// The GPU: the CUDA-core plan asks the occupancy query (blocks_per_sm, an
// input, 0 = not given = refused) and the SM count; the tensor-core plan
// the SM count alone (num_blocks_per_sm = 2, 788), and in
// FA2DetermineCtaTileQ the compute capability and the opt-in shared
// memory per block. This oracle takes those two as an H100's (9.0, 232448
// bytes) — policy/flashinfer.c takes the least of any bf16 part (99 KB);
// no answer should differ, and the sweep checks that.
//
// Types as upstream: uint32_t is u32 with C's wrapping, IdType is i32,
// int is i32, int64_t is i64, size_t is u64. No floating point reaches
// either plan.

type IdType = i32;

const H100_COMPUTE_CAPABILITY_MAJOR: u32 = 9;
const H100_MAX_SMEM_PER_BLOCK_OPTIN: i32 = 232448;

// utils.cuh 341-344, ceil_div<T1, T2>: (x + y - 1) / y in the usual
// arithmetic conversions, returned as T1.
fn ceil_div_id_u32(x: IdType, y: u32) -> IdType {
    // int32 + uint32: unsigned
    ((x as u32).wrapping_add(y).wrapping_sub(1) / y) as IdType
}
fn ceil_div_u32(x: u32, y: u32) -> u32 {
    x.wrapping_add(y).wrapping_sub(1) / y
}
fn ceil_div_i64(x: i64, y: i64) -> i64 {
    (x + y - 1) / y
}

// allocator.h 76-99 in counting mode
struct AlignedAllocator {
    allocated_space: u64,
}
impl AlignedAllocator {
    fn aligned_alloc_offset(&mut self, size: u64, alignment: u64) -> u64 {
        let mut padding = 0u64;
        if alignment > 1 {
            padding = (alignment - (self.allocated_space % alignment)) % alignment;
        }
        let result = self.allocated_space + padding;
        self.allocated_space = result.wrapping_add(size);
        result
    }
}

fn merge_has_head_dim(head_dim: u32) -> bool {
    matches!(head_dim, 64 | 128 | 256 | 512)
}

// ------------------------------------------------------------ the checks
// What every batch must satisfy before either plan: the brief's counts
// (at least 1) and engine.h's batch bounds (1..4096 sequences of
// 1..INT32_MAX tokens).
fn batch_checks(b: &Batch) -> Result<(), &'static str> {
    if b.sm_count == 0 {
        return Err("sm_count");
    }
    if b.seq_lens.is_empty() || b.seq_lens.len() > 4096 {
        return Err("num_seqs");
    }
    if b.num_q_heads == 0 || b.num_kv_heads == 0 || b.head_dim == 0 || b.page_size == 0 {
        return Err("a count is 0");
    }
    if b.seq_lens.iter().any(|&l| l == 0 || l > i32::MAX as u32) {
        return Err("seq_len");
    }
    Ok(())
}

// The host page table the caller builds: request i holds ceil(len / page)
// pages; kv_indptr is int32 (batch_decode.cu 45, batch_prefill.cu: IdType).
fn kv_indptr(b: &Batch) -> Result<Vec<IdType>, &'static str> {
    let mut indptr: Vec<IdType> = vec![0];
    let mut total: u64 = 0;
    for &len in &b.seq_lens {
        total += (len as u64 + b.page_size as u64 - 1) / b.page_size as u64;
        if total > i32::MAX as u64 {
            return Err("pages overflow the int32 indptr");
        }
        indptr.push(total as IdType);
    }
    Ok(indptr)
}

// ------------------------------------------------------------ CUDA cores
// scheduler.cuh 73-99
fn partition_paged_kv_cache_binary_search_min_num_page_per_batch(
    max_grid_size: u32,
    gdy: u32,
    num_pages: &[IdType],
    min_num_pages_per_batch: u32,
) -> (u32, u32) {
    let mut low: u32 = min_num_pages_per_batch;
    let mut high: u32 = 0;
    for &elem in num_pages {
        high = std::cmp::max(high, elem as u32);
    }
    let mut new_batch_size: u32;
    while low < high {
        let mid = low.wrapping_add(high) / 2;
        new_batch_size = 0;
        for &elem in num_pages {
            new_batch_size = new_batch_size.wrapping_add(ceil_div_id_u32(elem, mid) as u32);
        }
        if new_batch_size.wrapping_mul(gdy) > max_grid_size {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    new_batch_size = 0;
    for &elem in num_pages {
        new_batch_size = new_batch_size.wrapping_add(ceil_div_id_u32(std::cmp::max(elem, 1), low) as u32);
    }
    (low, new_batch_size)
}

fn cuda_cores(b: &Batch) -> Result<Answer, &'static str> {
    if b.blocks_per_sm == 0 {
        return Err("blocks_per_sm is a run-time GPU value: give it");
    }
    if b.num_splits != 0 {
        return Err("no num_splits argument");
    }
    if b.fixed_split_size != 0 {
        return Err("fixed_split_size is only supported by tensor core decode");
    }
    if b.num_q_heads % b.num_kv_heads != 0 {
        return Err("num_q_heads must be a multiple of num_kv_heads");
    }
    let group_size = b.num_q_heads / b.num_kv_heads;
    if !matches!(group_size, 1 | 2 | 3 | 4 | 6 | 8) {
        return Err("DISPATCH_GQA_GROUP_SIZE");
    }
    // max_grid_size = num_blocks_per_sm * num_sm, two ints
    let grid = b.blocks_per_sm as u64 * b.sm_count as u64;
    if grid > i32::MAX as u64 {
        return Err("int max_grid_size");
    }
    let indptr_h = kv_indptr(b)?;
    let batch_size = b.seq_lens.len() as u32;
    let num_qo_heads = b.num_q_heads;
    let page_size = b.page_size;
    let enable_cuda_graph = b.cuda_graph;

    // BatchDecodeWithPagedKVCacheWorkEstimationDispatched
    let num_kv_heads = num_qo_heads / group_size;
    let gdy = num_kv_heads;
    let max_grid_size: u32 = (b.blocks_per_sm as i32).wrapping_mul(b.sm_count as i32) as u32;
    let split_kv: bool;
    let mut max_num_pages_per_batch: u32;
    let new_batch_size: u32;
    if batch_size.wrapping_mul(gdy) >= max_grid_size {
        split_kv = false;
        max_num_pages_per_batch = 1;
        for i in 0..batch_size as usize {
            max_num_pages_per_batch =
                std::cmp::max(max_num_pages_per_batch, (indptr_h[i + 1] - indptr_h[i]) as u32);
        }
        new_batch_size = batch_size;
    } else {
        let num_pages: Vec<IdType> = (0..batch_size as usize).map(|i| indptr_h[i + 1] - indptr_h[i]).collect();
        let (m, n) = partition_paged_kv_cache_binary_search_min_num_page_per_batch(
            max_grid_size,
            gdy,
            &num_pages,
            std::cmp::max(128u32 / page_size, 1u32),
        );
        max_num_pages_per_batch = m;
        new_batch_size = n;
        split_kv = !(new_batch_size == batch_size && !enable_cuda_graph);
    }

    // DecodePlanImpl
    let padded_batch_size: u64 = if enable_cuda_graph {
        if split_kv {
            (max_grid_size / gdy) as u64
        } else {
            batch_size as u64
        }
    } else {
        new_batch_size as u64
    };
    // DecodeSplitKVIndptr: o_indptr's steps are each request's chunks
    let kv_chunk_size = max_num_pages_per_batch;
    let mut o_indptr: Vec<IdType> = vec![0];
    for i in 0..batch_size as usize {
        let num_chunks_kv = ceil_div_u32(std::cmp::max((indptr_h[i + 1] - indptr_h[i]) as u32, 1), kv_chunk_size);
        o_indptr.push(o_indptr[i].wrapping_add(num_chunks_kv as IdType));
    }
    let mut float_allocator = AlignedAllocator { allocated_space: 0 };
    if split_kv {
        float_allocator.aligned_alloc_offset(
            (num_qo_heads as u64).wrapping_mul(padded_batch_size).wrapping_mul(b.head_dim as u64).wrapping_mul(4),
            16,
        );
        float_allocator.aligned_alloc_offset((num_qo_heads as u64).wrapping_mul(padded_batch_size).wrapping_mul(4), 16);
    }
    if split_kv && !merge_has_head_dim(b.head_dim) {
        return Err("the split merge has no kernel for this head dim");
    }
    // Without split_kv the kernel runs each request whole (one chunk).
    let by_seq: Vec<u32> = (0..batch_size as usize)
        .map(|i| if split_kv { (o_indptr[i + 1] - o_indptr[i]) as u32 } else { 1 })
        .collect();
    let num_splits = if split_kv {
        (0..batch_size as usize).map(|i| (o_indptr[i + 1] - o_indptr[i]) as u32).max().unwrap()
    } else {
        1
    };
    Ok(Answer { num_splits, num_splits_bound: num_splits, workspace_bytes: float_allocator.allocated_space, by_seq })
}

// ------------------------------------------------------------ tensor cores
// utils.cuh 408-486, on an H100 (see the top)
fn fa2_determine_cta_tile_q(avg_packed_qo_len: i64, head_dim: u32, head_dim_qk: u32, kv_dtype_bytes: u32) -> u32 {
    let qk = if head_dim_qk != 0 { head_dim_qk } else { head_dim };
    if head_dim >= 512 {
        if avg_packed_qo_len <= 32 {
            return 16;
        }
        return 32;
    }
    if qk >= 512 {
        return 16;
    }
    if avg_packed_qo_len > 64 && head_dim < 256 {
        128
    } else if H100_COMPUTE_CAPABILITY_MAJOR >= 8 {
        if avg_packed_qo_len > 16 {
            64
        } else {
            let max_smem_per_block_optin = H100_MAX_SMEM_PER_BLOCK_OPTIN;
            let q_tile_smem: u32 = 16 * qk * 2;
            let kv_step_smem_1x4: u32 = (qk + head_dim) * 16 * 4 * kv_dtype_bytes;
            if q_tile_smem + kv_step_smem_1x4 > max_smem_per_block_optin as u32 {
                64
            } else {
                16
            }
        }
    } else {
        64
    }
}

// scheduler.cuh 101-130
fn prefill_binary_search_kv_chunk_size(
    enable_cuda_graph: bool,
    max_batch_size_if_split: u32,
    packed_qo_len_arr: &[i64],
    kv_len_arr: &[i64],
    qo_chunk_size: u32,
    min_kv_chunk_size: u32,
) -> (bool, i64) {
    let batch_size = packed_qo_len_arr.len() as i64;
    let mut max_kv_len: i64 = 1;
    for &kv_len in kv_len_arr {
        max_kv_len = std::cmp::max(max_kv_len, kv_len);
    }
    let mut low: i64 = min_kv_chunk_size as i64;
    let mut high: i64 = max_kv_len;
    let min_kv_len: i64 = 1;
    while low < high {
        let mid = (low + high) / 2;
        let mut new_batch_size: i64 = 0;
        for i in 0..batch_size as usize {
            new_batch_size += ceil_div_i64(packed_qo_len_arr[i], qo_chunk_size as i64)
                * ceil_div_i64(std::cmp::max(kv_len_arr[i], min_kv_len), mid);
        }
        if new_batch_size > max_batch_size_if_split as i64 {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    (enable_cuda_graph || low < max_kv_len, low)
}

fn tensor_cores(b: &Batch) -> Result<Answer, &'static str> {
    if b.num_splits != 0 {
        return Err("the tensor-core plan's split argument is fixed_split_size");
    }
    // int32_t fixed_split_size (PrefillPlan's parameter)
    if b.fixed_split_size > i32::MAX as u32 {
        return Err("fixed_split_size does not fit int32_t");
    }
    // PrefillPlanImpl 776-781
    if b.num_q_heads % b.num_kv_heads != 0 {
        return Err("num_qo_heads should be divisible by num_kv_heads");
    }
    if 2 * b.sm_count as u64 > i32::MAX as u64 {
        return Err("int max_grid_size");
    }
    let kv_indptr_h = kv_indptr(b)?;
    let batch_size = b.seq_lens.len() as u32;
    let qo_indptr_h: Vec<IdType> = (0..=batch_size as IdType).collect();
    let total_num_rows: u32 = batch_size;
    let num_qo_heads = b.num_q_heads;
    let num_kv_heads = b.num_kv_heads;
    let head_dim_vo = b.head_dim;
    let head_dim_qk = b.head_dim;
    let page_size = b.page_size;
    let enable_cuda_graph = b.cuda_graph;
    let fixed_split_size: i32 = if b.fixed_split_size == 0 { -1 } else { b.fixed_split_size as i32 };
    let disable_split_kv = b.disable_split_kv;
    let kv_dtype_bytes: u32 = 2;

    // PrefillPlanImpl step 0
    let num_sm: i32 = b.sm_count as i32;
    let num_blocks_per_sm: i32 = 2;
    let num_colocated_ctas: i64 = 0;
    let available_ctas: i64 = num_blocks_per_sm as i64 * num_sm as i64 - num_colocated_ctas;
    let max_grid_size: i32 = std::cmp::max(0i64, available_ctas) as i32;
    let max_batch_size_if_split: u32 = (max_grid_size as u32) / num_kv_heads;

    // PrefillSplitQOKVIndptr (head_dim = head_dim_vo)
    let head_dim = head_dim_vo;
    let gqa_group_size: u32 = num_qo_heads / num_kv_heads;
    // step 1
    let mut packed_qo_len_arr: Vec<i64> = vec![0; batch_size as usize];
    let mut kv_len_arr: Vec<i64> = vec![0; batch_size as usize];
    for i in 0..batch_size as usize {
        packed_qo_len_arr[i] = (qo_indptr_h[i + 1] - qo_indptr_h[i]) as i64 * gqa_group_size as i64;
        kv_len_arr[i] = (kv_indptr_h[i + 1] - kv_indptr_h[i]) as i64;
    }
    // step 2
    let min_kv_chunk_size: u32 = std::cmp::max(128 / page_size, 1);
    let cta_tile_q: u32;
    let total_num_tiles_q: u32;
    if enable_cuda_graph {
        // uniform_q_len == 0
        let max_seq_len: u64 = total_num_rows.wrapping_sub(batch_size).wrapping_add(1) as u64;
        let max_qo_len: u64 = max_seq_len * gqa_group_size as u64;
        cta_tile_q = fa2_determine_cta_tile_q(max_qo_len as i64, head_dim, head_dim_qk, kv_dtype_bytes);
        total_num_tiles_q = ceil_div_u32(total_num_rows.wrapping_mul(gqa_group_size), cta_tile_q)
            .wrapping_add(batch_size)
            .wrapping_sub(1);
    } else {
        let mut sum_packed_qo_len: i64 = 0;
        for i in 0..batch_size as usize {
            sum_packed_qo_len += packed_qo_len_arr[i];
        }
        let avg_packed_qo_len: i64 = sum_packed_qo_len / batch_size as i64;
        cta_tile_q = fa2_determine_cta_tile_q(avg_packed_qo_len, head_dim, head_dim_qk, kv_dtype_bytes);
        let mut t: u32 = 0;
        for i in 0..batch_size as usize {
            // uint32_t += int64_t: computed in int64_t, stored modulo 2^32
            t = ((t as i64) + ceil_div_i64(packed_qo_len_arr[i], cta_tile_q as i64)) as u32;
        }
        total_num_tiles_q = t;
    }
    // window_left < 0: the effective kv lengths are the kv lengths
    let effective_kv_len_arr: Vec<i64> = kv_len_arr.clone();
    let mut split_kv = false;
    let kv_chunk_size: i64;
    if disable_split_kv {
        kv_chunk_size = i64::MAX;
    } else if !disable_split_kv && fixed_split_size > 0 {
        kv_chunk_size = fixed_split_size as i64;
    } else {
        let (s, k) = prefill_binary_search_kv_chunk_size(
            enable_cuda_graph,
            max_batch_size_if_split,
            &packed_qo_len_arr,
            &effective_kv_len_arr,
            cta_tile_q,
            min_kv_chunk_size,
        );
        split_kv = s;
        kv_chunk_size = k;
    }
    // step 3: upstream pushes one tile at a time and adds 1 to its uint32_t
    // new_batch_size; the count is num_tiles_q * num_chunks_kv a request
    let mut new_batch_size: u32 = 0;
    let mut chunks: Vec<u32> = Vec::with_capacity(batch_size as usize);
    for request_idx in 0..batch_size as usize {
        let packed_qo_len = packed_qo_len_arr[request_idx];
        let num_tiles_q: i64 = ceil_div_i64(packed_qo_len, cta_tile_q as i64);
        let kv_len: i64 = std::cmp::max(effective_kv_len_arr[request_idx] as i32, 1) as i64;
        let num_chunks_kv: i64 = if disable_split_kv { 1 } else { ceil_div_i64(kv_len, kv_chunk_size) };
        if fixed_split_size > 0 && !disable_split_kv {
            split_kv = split_kv || num_chunks_kv > 1;
        }
        new_batch_size = new_batch_size.wrapping_add((num_tiles_q as u64).wrapping_mul(num_chunks_kv as u64) as u32);
        chunks.push(num_chunks_kv as u32);
    }
    let padded_batch_size: u64 = if enable_cuda_graph {
        std::cmp::max(max_batch_size_if_split, total_num_tiles_q) as u64
    } else {
        new_batch_size as u64
    };
    if !(new_batch_size as u64 <= padded_batch_size) {
        return Err("new batch size should not exceed padded batch size");
    }

    // PrefillPlanImpl: the float workspace
    let mut float_allocator = AlignedAllocator { allocated_space: 0 };
    if split_kv {
        float_allocator.aligned_alloc_offset(
            (num_qo_heads as u64)
                .wrapping_mul(padded_batch_size)
                .wrapping_mul(cta_tile_q as u64)
                .wrapping_mul(head_dim_vo as u64)
                .wrapping_mul(4),
            16,
        );
        float_allocator.aligned_alloc_offset(
            (num_qo_heads as u64).wrapping_mul(padded_batch_size).wrapping_mul(cta_tile_q as u64).wrapping_mul(4),
            16,
        );
    }
    if split_kv && !merge_has_head_dim(head_dim_vo) {
        return Err("the split merge has no kernel for this head dim");
    }
    let num_splits = *chunks.iter().max().unwrap();
    Ok(Answer { num_splits, num_splits_bound: num_splits, workspace_bytes: float_allocator.allocated_space, by_seq: chunks })
}

pub fn launch(b: &Batch) -> Result<Answer, &'static str> {
    batch_checks(b)?;
    if b.tensor_cores {
        tensor_cores(b)
    } else {
        cuda_cores(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h100;

    const MIXED: [u32; 8] = [8192, 512, 512, 512, 100, 100, 100, 100];

    #[test]
    fn tensor_cores_pages_of_16_give_32_alone_and_23_in_the_batch() {
        assert_eq!(launch(&h100(16, &[8192], true)).unwrap().num_splits, 32);
        let a = launch(&h100(16, &MIXED, true)).unwrap();
        assert_eq!(a.by_seq, vec![23, 2, 2, 2, 1, 1, 1, 1]);
        // 33 tiles of 16 rows: tmp_v 32 * 33 * 16 * 128 * 4, tmp_s without 128
        assert_eq!(a.workspace_bytes, 32 * 33 * 16 * 128 * 4 + 32 * 33 * 16 * 4);
    }

    #[test]
    fn tensor_cores_pages_of_1_give_33_alone_and_23_in_the_batch() {
        assert_eq!(launch(&h100(1, &[8192], true)).unwrap().num_splits, 33);
        assert_eq!(launch(&h100(1, &MIXED, true)).unwrap().num_splits, 23);
    }

    #[test]
    fn fixed_split_size_2048_pages_of_1_is_4_in_every_batch() {
        for n in 1..=MIXED.len() {
            let mut b = h100(1, &MIXED[..n], true);
            b.fixed_split_size = 2048;
            let a = launch(&b).unwrap();
            assert_eq!(a.by_seq[0], 4);
            assert!(a.by_seq[1..].iter().all(|&c| c == 1));
        }
        let mut b = h100(1, &[8192; 64], true);
        b.fixed_split_size = 2048;
        assert!(launch(&b).unwrap().by_seq.iter().all(|&c| c == 4));
        b.cuda_graph = true; // 256 tiles, padded to max(33, 16 + 63)
        assert!(launch(&b).is_err());
    }

    #[test]
    fn cuda_cores_share_the_grid_the_same_way() {
        let a = launch(&h100(16, &MIXED, false)).unwrap();
        assert_eq!(a.by_seq, vec![23, 2, 2, 2, 1, 1, 1, 1]);
        assert_eq!(a.workspace_bytes, 32 * 33 * 128 * 4 + 32 * 33 * 4);
    }

    #[test]
    fn head_dim_80_is_refused_only_where_the_launch_splits() {
        for tc in [false, true] {
            let mut b = h100(16, &MIXED, tc);
            b.head_dim = 80;
            assert!(launch(&b).is_err());
            let mut b = h100(16, &[8192; 64], tc);
            b.head_dim = 80;
            assert_eq!(launch(&b).unwrap().workspace_bytes, 0);
        }
    }
}
