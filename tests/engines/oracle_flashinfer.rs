use crate::{Answer, Shape};

// SPDX-License-Identifier: AGPL-3.0-only
//
// oracle_flashinfer — the second implementation of FlashInfer's batch
// decode plan on the CUDA-core (non tensor-core) path: the number of KV
// chunks each request is split into and the float workspace the plan
// carves for the split (tmp_v + tmp_s). Written from the upstream source
// alone (not from policy/flashinfer.c), for `make engines-check-flashinfer`.
// The upstream is Copyright (c) 2023 by FlashInfer team, Apache-2.0.
//
// Upstream: flashinfer-ai/flashinfer @ fb28d7242b3506a2348265962041acc1fb56cca4
//   include/flashinfer/attention/scheduler.cuh
//     PartitionPagedKVCacheBinarySearchMinNumPagePerBatch     lines 73-99
//     BatchDecodeWithPagedKVCacheWorkEstimationDispatched     lines 148-211
//       (gdy = num_kv_heads 167, max_grid_size 182, the no-split branch
//        183-190, the binary search 191-199 with its lower bound
//        max(128 / page_size, 1U), split_kv 200-206)
//     DecodeSplitKVIndptr                                     lines 348-364
//     DecodePlanImpl                                          lines 424-508
//       (padded_batch_size 443-445, tmp_v / tmp_s 480-489, the float
//        workspace it returns 501)
//   include/flashinfer/allocator.h  AlignedAllocator::aligned_alloc_offset
//     lines 76-95 (counting mode; the 16-byte padding), num_allocated_bytes 97-99
//   include/flashinfer/utils.cuh
//     DISPATCH_GQA_GROUP_SIZE lines 142-165: group sizes 1, 2, 3, 4, 6, 8
//     DISPATCH_HEAD_DIM       lines 197-224: head dims 64, 128, 256, 512
//     ceil_div                lines 341-344
//   csrc/batch_decode.cu  BatchDecodeWithPagedKVCachePlan lines 39-81
//     (DISPATCH_GQA_GROUP_SIZE(num_qo_heads / num_kv_heads) at 63; the run
//      side carves tmp_v / tmp_s only when plan_info.split_kv, 230-232)
//   include/flashinfer/attention/decode.cuh
//     BatchDecodeWithPagedKVCacheDispatched lines 743-830: a split launch
//     merges with VariableLengthMergeStates (817), which is
//   include/flashinfer/attention/cascade.cuh lines 691-741: DISPATCH_HEAD_DIM
//     (703), so a split-K launch exists only for head dims 64/128/256/512.
//
// Head dims: the CUDA-core batch decode module is JIT-built with HEAD_DIM
// as a compile-time constant (flashinfer/jit/attention/modules.py
// gen_batch_decode_module 917-960, csrc/batch_decode_customize_config.jinja),
// so no head-dim switch stands in front of the decode kernel itself; the
// only dispatch on the path is DISPATCH_HEAD_DIM in the split merge
// (cascade.cuh 703), which has cases 64, 128, 256 and 512 and
// FLASHINFER_ERRORs on any other. The run reaches the merge only when the
// plan's split_kv is set (batch_decode.cu 230-232 hands the kernel tmp_v;
// decode.cuh 816-819 merges), so a shape is refused for its head dim only
// when its plan splits; one that does not split runs for any head dim.
//
// The fixed setting (issue 44): one decode step (qo_len 1), bf16 q/kv/o,
// IdType int32 (CHECK_INPUT_TYPE(indptr, dl_int32), batch_decode.cu 45),
// every request holding ceil(seq_len / page_size) pages, no window, no
// softcap, pos encoding NONE, head_dim_qk == head_dim_vo. blocks_per_sm is
// what cudaOccupancyMaxActiveBlocksPerMultiprocessor returns at run time
// (scheduler.cuh 180-181): a required input, 0 = not given = refused.
//
// Types as upstream: uint32_t is u32 with C's wrapping, IdType is i32,
// int is i32, size_t is u64.

type IdType = i32;

// utils.cuh 341-344: template <T1, T2> T1 ceil_div(const T1 x, const T2 y)
// { return (x + y - 1) / y; } with T1 = IdType (int32_t), T2 = uint32_t:
// the sum and the division are unsigned (usual conversions), the result
// converted back to T1.
fn ceil_div_id_u32(x: IdType, y: u32) -> IdType {
    ((x as u32).wrapping_add(y).wrapping_sub(1) / y) as IdType
}

// T1 = T2 = uint32_t (DecodeSplitKVIndptr 352-353)
fn ceil_div_u32(x: u32, y: u32) -> u32 {
    x.wrapping_add(y).wrapping_sub(1) / y
}

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
        // max(high, elem): CUDA's host max(unsigned int, int) compares as
        // unsigned; elem is a page count, never negative here
        high = std::cmp::max(high, elem as u32);
    }
    let mut new_batch_size: u32;
    while low < high {
        let mid: u32 = (low.wrapping_add(high)) / 2;
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

// What BatchDecodeWithPagedKVCacheWorkEstimationDispatched hands back
// (its reference parameters), scheduler.cuh 150-153.
struct WorkEstimation {
    split_kv: bool,
    max_grid_size: u32,
    max_num_pages_per_batch: u32,
    new_batch_size: u32,
    gdy: u32,
}

// scheduler.cuh 148-211, for GROUP_SIZE = group_size (already dispatched).
// The kernel's launch shape (vec_size, bdx, bdy, bdz, smem_size 159-172)
// only feeds the occupancy query, whose answer is the blocks_per_sm input.
fn work_estimation_dispatched(
    group_size: u32,
    batch_size: u32,
    kv_indptr_h: &[IdType],
    num_qo_heads: u32,
    page_size: u32,
    enable_cuda_graph: bool,
    num_blocks_per_sm: i32,
    num_sm: i32,
) -> WorkEstimation {
    let num_kv_heads: u32 = num_qo_heads / group_size; // 166
    let gdy: u32 = num_kv_heads; // 167
    // 182: max_grid_size = num_blocks_per_sm * num_sm (int * int into uint32_t)
    let max_grid_size: u32 = num_blocks_per_sm.wrapping_mul(num_sm) as u32;
    let split_kv: bool;
    let mut max_num_pages_per_batch: u32;
    let new_batch_size: u32;
    if batch_size.wrapping_mul(gdy) >= max_grid_size {
        // 183-190
        split_kv = false;
        max_num_pages_per_batch = 1;
        for batch_idx in 0..batch_size as usize {
            max_num_pages_per_batch = std::cmp::max(
                max_num_pages_per_batch,
                (kv_indptr_h[batch_idx + 1].wrapping_sub(kv_indptr_h[batch_idx])) as u32,
            );
        }
        new_batch_size = batch_size;
    } else {
        // 191-207
        let mut num_pages: Vec<IdType> = vec![0; batch_size as usize];
        for batch_idx in 0..batch_size as usize {
            num_pages[batch_idx] = kv_indptr_h[batch_idx + 1].wrapping_sub(kv_indptr_h[batch_idx]);
        }
        // std::max(128 / page_size, 1U): 128 / page_size is unsigned division
        let lb: u32 = std::cmp::max(128u32 / page_size, 1u32);
        let (m, n) = partition_paged_kv_cache_binary_search_min_num_page_per_batch(
            max_grid_size,
            gdy,
            &num_pages,
            lb,
        );
        max_num_pages_per_batch = m;
        new_batch_size = n;
        if new_batch_size == batch_size && !enable_cuda_graph {
            // do not use partition-kv kernel for short sequence, when not using CUDAGraph
            split_kv = false;
        } else {
            // when using CUDAGraph, we always use partition-kv kernel
            split_kv = true;
        }
    }
    WorkEstimation { split_kv, max_grid_size, max_num_pages_per_batch, new_batch_size, gdy }
}

// scheduler.cuh 348-364: the KV chunks of each request (o_indptr's steps)
fn decode_split_kv_indptr(indptr_h: &[IdType], batch_size: u32, kv_chunk_size: u32) -> Vec<u32> {
    let mut num_chunks = Vec::with_capacity(batch_size as usize);
    for batch_idx in 0..batch_size as usize {
        let num_chunks_kv: u32 = ceil_div_u32(
            std::cmp::max((indptr_h[batch_idx + 1].wrapping_sub(indptr_h[batch_idx])) as u32, 1u32),
            kv_chunk_size,
        );
        num_chunks.push(num_chunks_kv);
    }
    num_chunks
}

// allocator.h 46-52 and 76-99, counting mode (DecodePlanImpl's float
// allocator starts at offset 0; MATERIALIZE on a buffer the Python side
// checks is aligned gives the same offsets)
struct AlignedAllocator {
    allocated_space: u64,
}

impl AlignedAllocator {
    fn aligned_alloc_offset(&mut self, size: u64, alignment: u64) -> u64 {
        let mut padding: u64 = 0;
        if alignment > 1 {
            padding = (alignment - (self.allocated_space % alignment)) % alignment;
        }
        let result = self.allocated_space + padding;
        self.allocated_space = result + size;
        result
    }
    fn num_allocated_bytes(&self) -> u64 {
        self.allocated_space
    }
}

pub fn launch(s: &Shape) -> Result<Answer, &'static str> {
    // Counts that must be at least 1 (issue 44: a zero count is refused).
    if let Some(why) = crate::zero_count(s, true) {
        return Err(why);
    }
    // The occupancy query's answer (scheduler.cuh 180-181), never guessed.
    if s.blocks_per_sm == 0 {
        return Err("blocks_per_sm is a run-time GPU value: give it");
    }
    // BatchDecodeWithPagedKVCacheWrapper.plan on the CUDA-core path has no
    // split-count argument (fixed_split_size is refused off the tensor-core
    // path, flashinfer/decode.py 1539-1542).
    if s.num_splits != 0 {
        return Err("the CUDA-core decode has no num_splits argument");
    }
    if s.num_q_heads % s.num_kv_heads != 0 {
        return Err("num_q_heads must be a multiple of num_kv_heads");
    }

    // batch_decode.cu 39-43: int64_t arguments passed on as uint32_t
    let batch_size: u32 = s.num_seqs;
    let num_qo_heads: u32 = s.num_q_heads;
    let num_kv_heads: u32 = s.num_kv_heads;
    let page_size: u32 = s.page_size;
    let enable_cuda_graph: bool = s.cuda_graph;

    // utils.cuh 142-165, DISPATCH_GQA_GROUP_SIZE(num_qo_heads / num_kv_heads)
    let group_size: u32 = num_qo_heads / num_kv_heads;
    match group_size {
        1 | 2 | 3 | 4 | 6 | 8 => {}
        _ => return Err("no CUDA-core decode kernel for this GQA group size (1, 2, 3, 4, 6, 8)"),
    }
    let head_dim: u32 = s.head_dim;

    // The int32 indptr of the paged cache: request i holds pages
    // [indptr[i], indptr[i+1]), ceil(seq_len / page_size) of them.
    let pages_per_request: u64 = (s.seq_len as u64 + page_size as u64 - 1) / page_size as u64;
    let total_pages: u64 = pages_per_request * batch_size as u64;
    if total_pages > i32::MAX as u64 {
        return Err("the page count does not fit the int32 indptr");
    }
    let mut indptr_h: Vec<IdType> = Vec::with_capacity(batch_size as usize + 1);
    for i in 0..=batch_size as u64 {
        indptr_h.push((i * pages_per_request) as IdType);
    }

    // DecodePlanImpl, scheduler.cuh 424-508
    let w = work_estimation_dispatched(
        group_size,
        batch_size,
        &indptr_h,
        num_qo_heads,
        page_size,
        enable_cuda_graph,
        s.blocks_per_sm as i32,
        s.sm_count as i32,
    );
    let split_kv = w.split_kv;
    let kv_chunk_size_in_pages = w.max_num_pages_per_batch;
    // 443-444: size_t padded_batch_size = (enable_cuda_graph) ?
    //   (split_kv ? max_grid_size / gdy : batch_size) : new_batch_size;
    let padded_batch_size: u64 = if enable_cuda_graph {
        if split_kv {
            (w.max_grid_size / w.gdy) as u64
        } else {
            batch_size as u64
        }
    } else {
        w.new_batch_size as u64
    };
    let num_chunks = decode_split_kv_indptr(&indptr_h, batch_size, kv_chunk_size_in_pages);
    // Every request has the same pages, so the same chunk count.
    let num_chunks_kv = num_chunks[0];
    debug_assert!(num_chunks.iter().all(|&c| c == num_chunks_kv));

    // 479-489: the float workspace holds tmp_v then tmp_s, only when split_kv
    let mut float_allocator = AlignedAllocator { allocated_space: 0 };
    if split_kv {
        let _v_offset = float_allocator.aligned_alloc_offset(
            num_qo_heads as u64 * padded_batch_size * head_dim as u64 * 4, // sizeof(float)
            16,
        );
        let _s_offset = float_allocator.aligned_alloc_offset(
            num_qo_heads as u64 * padded_batch_size * 4, // sizeof(float)
            16,
        );
    }
    // 501
    let float_workspace_size_out: u64 = float_allocator.num_allocated_bytes();

    // The run (batch_decode.cu 230-232, decode.cuh 816-819): a split plan
    // merges through VariableLengthMergeStates, whose DISPATCH_HEAD_DIM
    // (cascade.cuh 703, utils.cuh 197-224) has 64, 128, 256 and 512 only.
    if split_kv && !matches!(head_dim, 64 | 128 | 256 | 512) {
        return Err("a split launch merges for head dims 64, 128, 256, 512 only");
    }

    // The launch runs DecodeSplitKVIndptr's chunks; without split_kv it
    // runs one chunk per request (the chunk is then the whole request).
    let num_splits: u32 = if split_kv { num_chunks_kv } else { 1 };
    Ok(Answer { num_splits, num_splits_bound: num_splits, workspace_bytes: float_workspace_size_out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(seqs: u32, d: u32, len: u32, graph: bool) -> Shape {
        let mut s = crate::test_shape(132, seqs, 32, 8, d, len, 16, 0);
        s.blocks_per_sm = 2;
        s.cuda_graph = graph;
        s
    }

    // H100, 32 q / 8 kv heads, pages of 16: one 8,192-token request splits
    // (264 CTAs for 8 KV heads: 33 chunks of the 512 pages at most, 16
    // pages each gives 32), 64 requests fill the grid and do not.
    #[test]
    fn head_dim_refused_only_where_the_launch_splits() {
        let split = launch(&shape(1, 128, 8192, false)).unwrap();
        assert_eq!(split.num_splits, 32);
        assert!(launch(&shape(1, 80, 8192, false)).is_err());
        let whole = launch(&shape(64, 80, 8192, false)).unwrap();
        assert_eq!((whole.num_splits, whole.workspace_bytes), (1, 0));
        // cuda graph: split_kv whenever the batch leaves the grid room,
        // even at one chunk a request, so the merge runs and refuses 80
        assert!(launch(&shape(2, 80, 16, true)).is_err());
        assert_eq!(launch(&shape(2, 80, 16, false)).unwrap().num_splits, 1);
    }
}
