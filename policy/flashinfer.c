/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * flashinfer — FlashInfer's CUDA-core batch decode plan at
 * flashinfer-ai/flashinfer@fb28d7242b3506a2348265962041acc1fb56cca4, for one
 * batch of requests that all hold seq_len tokens. Where each function comes
 * from, what is fixed and what differs: flashinfer.h. Each function below
 * keeps the upstream's name in its comment, its variable names and its
 * integer types (uint32_t stays uint32_t and wraps where upstream's does;
 * IdType is int32_t; the allocator's sizes are size_t, here uint64_t).
 *
 * Copyright (c) 2023 by FlashInfer team (the upstream; Apache License 2.0).
 */
#include "flashinfer.h"

#define FLASHINFER_INT32_MAX 2147483647u

/* IdType of the CUDA-core plan: torch.int32 (batch_decode.cu 45). */
typedef int32_t IdType;

/* utils.cuh 341-344: ceil_div<T1, T2>(x, y) = (x + y - 1) / y, returning
 * T1. Upstream calls it with T1 = IdType, T2 = uint32_t; int32_t + uint32_t
 * is computed in unsigned int in C++ and in C alike, then returned as T1. */
static IdType ceil_div(const IdType x, const uint32_t y)
{
	return (IdType)((x + y - 1) / y);
}

/* The CUDA max(unsigned int, int) of scheduler.cuh 79 and std::max. */
static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* The same template with T1 = T2 = uint32_t (DecodeSplitKVIndptr, 354). */
static uint32_t ceil_div_u32(const uint32_t x, const uint32_t y)
{
	return (x + y - 1) / y;
}

static IdType max_id(IdType a, IdType b)
{
	return a > b ? a : b;
}

/*
 * scheduler.cuh 60-99, PartitionPagedKVCacheBinarySearchMinNumPagePerBatch,
 * for batch_size requests of num_pages pages each (every elem of upstream's
 * num_pages vector is num_pages). Returns low (max_num_pages_per_batch) and
 * writes *new_batch_size_out.
 *
 * Deliberate difference: upstream sums ceil_div(elem, mid) over the
 * requests in a uint32_t; for batch_size equal terms that sum is
 * batch_size * ceil_div(num_pages, mid) in uint32_t arithmetic, wrapping
 * alike (mod 2^32), so the loop is the product here.
 */
static uint32_t partition_paged_kv_cache_binary_search_min_num_page_per_batch(
	const uint32_t max_grid_size, const uint32_t gdy, const uint32_t batch_size,
	const IdType num_pages, const uint32_t min_num_pages_per_batch,
	uint32_t *new_batch_size_out)
{
	uint32_t low = min_num_pages_per_batch, high = 0;
	/* for (elem : num_pages) high = max(high, elem); */
	if (batch_size > 0) {
		high = max_u32(high, (uint32_t)num_pages);
	}
	uint32_t new_batch_size;
	while (low < high) {
		uint32_t mid = (low + high) / 2;
		new_batch_size = 0;
		/* for (elem : num_pages) new_batch_size += ceil_div(elem, mid); */
		new_batch_size += batch_size * (uint32_t)ceil_div(num_pages, mid);
		if (new_batch_size * gdy > max_grid_size) {
			low = mid + 1;
		} else {
			high = mid;
		}
	}
	new_batch_size = 0;
	/* for (elem : num_pages) new_batch_size += ceil_div(std::max(elem, 1), low); */
	new_batch_size += batch_size * (uint32_t)ceil_div(max_id(num_pages, 1), low);
	*new_batch_size_out = new_batch_size;
	return low;
}

/*
 * scheduler.cuh 148-210, BatchDecodeWithPagedKVCacheWorkEstimationDispatched
 * <GROUP_SIZE, HEAD_DIM, ...>. The kernel's shape (vec_size, bdx, bdy, bdz,
 * tile_size_per_bdx, smem_size, NUM_STAGES_SMEM) only feeds the occupancy
 * query; its answer, num_blocks_per_sm, is an input here, as is num_sm.
 */
struct work_estimation {
	bool split_kv;
	uint32_t max_grid_size;
	uint32_t max_num_pages_per_batch;
	uint32_t new_batch_size;
	uint32_t gdy;
	uint32_t min_num_pages_per_batch; /* the argument passed at 199 */
};

static struct work_estimation batch_decode_with_paged_kv_cache_work_estimation_dispatched(
	const uint32_t GROUP_SIZE, uint32_t batch_size, const IdType num_pages,
	const uint32_t num_qo_heads, const uint32_t page_size, bool enable_cuda_graph,
	const int num_blocks_per_sm, const int num_sm)
{
	struct work_estimation w = {0};
	const uint32_t num_kv_heads = num_qo_heads / GROUP_SIZE;
	w.gdy = num_kv_heads;
	w.max_grid_size = (uint32_t)(num_blocks_per_sm * num_sm);
	w.min_num_pages_per_batch = max_u32(128 / page_size, 1U);
	if (batch_size * w.gdy >= w.max_grid_size) {
		w.split_kv = false;
		w.max_num_pages_per_batch = 1;
		/* for (batch_idx) max_num_pages_per_batch = std::max<uint32_t>(...,
		 * kv_indptr_h[batch_idx + 1] - kv_indptr_h[batch_idx]); */
		if (batch_size > 0) {
			w.max_num_pages_per_batch = max_u32(w.max_num_pages_per_batch,
							    (uint32_t)num_pages);
		}
		w.new_batch_size = batch_size;
	} else {
		/* compute max_num_pages_per_batch and new_batch_size */
		w.max_num_pages_per_batch =
			partition_paged_kv_cache_binary_search_min_num_page_per_batch(
				w.max_grid_size, w.gdy, batch_size, num_pages,
				w.min_num_pages_per_batch, &w.new_batch_size);
		if (w.new_batch_size == batch_size && !enable_cuda_graph) {
			/* do not use partition-kv kernel for short sequence, when not using CUDAGraph */
			w.split_kv = false;
		} else {
			/* when using CUDAGraph, we always use partition-kv kernel */
			w.split_kv = true;
		}
	}
	return w;
}

/*
 * allocator.h 76-95 and 97-99, AlignedAllocator::aligned_alloc_offset in
 * counting mode and num_allocated_bytes. DecodePlan runs it on the float
 * buffer itself (MATERIALIZE), whose base decode.py checks 16-byte aligned
 * (utils.py 786-796), so std::align lands on the offsets counted from 0.
 * The capacity check is not modelled (flashinfer.h).
 */
struct aligned_allocator {
	uint64_t allocated_space;
};

static uint64_t aligned_alloc_offset(struct aligned_allocator *a, uint64_t size,
				     uint64_t alignment)
{
	uint64_t padding = 0;
	if (alignment > 1) {
		padding = (alignment - (a->allocated_space % alignment)) % alignment;
	}
	const uint64_t result = a->allocated_space + padding;
	a->allocated_space = result + size;
	return result;
}

/* utils.cuh 142-165, DISPATCH_GQA_GROUP_SIZE: 0 where it raises. */
static uint32_t dispatch_gqa_group_size(uint32_t group_size)
{
	if (group_size == 1 || group_size == 2 || group_size == 3 || group_size == 4 ||
	    group_size == 6 || group_size == 8) {
		return group_size;
	}
	return 0;
}

/* utils.cuh 196-224, DISPATCH_HEAD_DIM, as VariableLengthMergeStates
 * (cascade.cuh 703) applies it to a split launch. */
#define FLASHINFER_MERGE_HEAD_DIM                                                  \
	"FlashInfer merges a split launch's chunks (VariableLengthMergeStates) for "  \
	"head_dim 64, 128, 256 and 512 only (DISPATCH_HEAD_DIM); this launch splits"
static bool dispatch_head_dim(uint32_t head_dim)
{
	return head_dim == 64 || head_dim == 128 || head_dim == 256 || head_dim == 512;
}

struct engine_answer flashinfer_launch(const struct engine_shape *s)
{
	struct engine_zero zero;

	if (engine_zero_count(s, FLASHINFER_READS & ~ENGINE_IN_BLOCKS_PER_SM, &zero)) {
		return engine_refused(zero.reason, zero.input);
	}
	if (s->blocks_per_sm == 0) {
		return engine_refused("blocks_per_sm is a run-time GPU value FlashInfer asks "
				      "cudaOccupancyMaxActiveBlocksPerMultiprocessor for its decode kernel "
				      "(scheduler.cuh 180); give it, it is never guessed",
				      "blocks_per_sm");
	}
	if (s->num_splits != 0) {
		return engine_refused("FlashInfer's CUDA-core batch decode takes no num_splits argument at "
				      "fb28d72 (fixed_split_size raises on this path); give 0",
				      "num_splits");
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		return engine_refused("num_q_heads must be a multiple of num_kv_heads", "num_kv_heads");
	}
	/* batch_decode.cu 63: DISPATCH_GQA_GROUP_SIZE(num_qo_heads / num_kv_heads) */
	const uint32_t GROUP_SIZE = dispatch_gqa_group_size(s->num_q_heads / s->num_kv_heads);
	if (GROUP_SIZE == 0) {
		return engine_refused("FlashInfer's CUDA-core decode has kernels for GQA group sizes "
				      "(num_q_heads / num_kv_heads) 1, 2, 3, 4, 6 and 8 only",
				      "num_kv_heads");
	}
	if ((uint64_t)s->blocks_per_sm * s->sm_count > FLASHINFER_INT32_MAX) {
		return engine_refused("blocks_per_sm * sm_count must fit FlashInfer's int max_grid_size",
				      "blocks_per_sm");
	}
	/* The page table: ceil(seq_len / page_size) pages a request, the last
	 * holding the rest; indptr is int32 (batch_decode.cu 45), and the plan
	 * reads nothing of seq_len but those pages. */
	const uint64_t pages = ((uint64_t)s->seq_len + s->page_size - 1) / s->page_size;
	if ((uint64_t)s->num_seqs * pages > FLASHINFER_INT32_MAX) {
		return engine_refused("num_seqs * ceil(seq_len / page_size) pages must fit FlashInfer's "
				      "int32 page indptr",
				      "seq_len");
	}
	const IdType num_pages = (IdType)pages;

	/* scheduler.cuh 424-508, DecodePlanImpl<MATERIALIZE = true, HEAD_DIM>. */
	const uint32_t HEAD_DIM = s->head_dim;
	const uint32_t batch_size = s->num_seqs;
	const uint32_t num_qo_heads = s->num_q_heads;
	const uint32_t page_size = s->page_size;
	const bool enable_cuda_graph = s->cuda_graph;

	struct work_estimation w = batch_decode_with_paged_kv_cache_work_estimation_dispatched(
		GROUP_SIZE, batch_size, num_pages, num_qo_heads, page_size, enable_cuda_graph,
		(int)s->blocks_per_sm, (int)s->sm_count);
	const bool split_kv = w.split_kv;
	const uint32_t max_grid_size = w.max_grid_size;
	const uint32_t kv_chunk_size_in_pages = w.max_num_pages_per_batch;
	const uint32_t new_batch_size = w.new_batch_size;
	const uint32_t gdy = w.gdy;

	uint64_t padded_batch_size; /* size_t */
	padded_batch_size =
		(enable_cuda_graph) ? (split_kv ? max_grid_size / gdy : batch_size) : new_batch_size;

	/* scheduler.cuh 348-364, DecodeSplitKVIndptr: every request has
	 * num_chunks_kv chunks of kv_chunk_size_in_pages pages. */
	const uint32_t num_chunks_kv =
		ceil_div_u32(max_u32((uint32_t)num_pages, 1U), kv_chunk_size_in_pages);

	struct aligned_allocator float_allocator = {0};
	uint64_t tmp_v = 0, tmp_s = 0;
	if (split_kv) {
		tmp_v = (uint64_t)num_qo_heads * padded_batch_size * HEAD_DIM * sizeof(float);
		tmp_s = (uint64_t)num_qo_heads * padded_batch_size * sizeof(float);
		(void)aligned_alloc_offset(&float_allocator, tmp_v, 16); /* batch_decode_tmp_v */
		(void)aligned_alloc_offset(&float_allocator, tmp_s, 16); /* batch_decode_tmp_s */
	}
	const uint64_t float_workspace_size_out = float_allocator.allocated_space;

	/* A split launch merges its chunks through VariableLengthMergeStates
	 * (decode.cuh 816-819), which dispatches DISPATCH_HEAD_DIM (cascade.cuh
	 * 703) and raises for any other head_dim; a launch that does not split
	 * never reaches it, and the decode kernel itself is JIT-built for the
	 * head_dim it is given. */
	if (split_kv && !dispatch_head_dim(HEAD_DIM)) {
		return engine_refused(FLASHINFER_MERGE_HEAD_DIM, "head_dim");
	}

	struct engine_answer a = {0};
	a.status = ENGINE_OK;
	/* The chunks each request is split into: the kernel's grid is
	 * (padded_batch_size, num_kv_heads), one CTA a chunk. */
	a.num_splits = split_kv ? num_chunks_kv : 1;
	a.num_splits_bound = a.num_splits;
	a.workspace_bytes = float_workspace_size_out;
	engine_term(&a, "GROUP_SIZE", GROUP_SIZE);
	engine_term(&a, "num_blocks_per_sm", s->blocks_per_sm);
	engine_term(&a, "num_sm", s->sm_count);
	engine_term(&a, "max_grid_size", max_grid_size);
	engine_term(&a, "gdy", gdy);
	engine_term(&a, "num_pages", (uint64_t)num_pages);
	engine_term(&a, "min_num_pages_per_batch", w.min_num_pages_per_batch);
	engine_term(&a, "max_num_pages_per_batch", kv_chunk_size_in_pages);
	engine_term(&a, "new_batch_size", new_batch_size);
	engine_term(&a, "split_kv", split_kv);
	engine_term(&a, "padded_batch_size", padded_batch_size);
	/* kv_chunk_size_ptr_h[0] = kv_chunk_size_in_pages * page_size, in
	 * tokens (shown unwrapped here; upstream stores it as IdType) */
	engine_term(&a, "kv_chunk_size", (uint64_t)kv_chunk_size_in_pages * page_size);
	engine_term(&a, "num_chunks_kv", num_chunks_kv);
	engine_term(&a, "batch_decode_tmp_v", tmp_v);
	engine_term(&a, "batch_decode_tmp_s", tmp_s);
	return a;
}
