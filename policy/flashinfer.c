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

/* ------------------------------------------------------------------------
 * A mixed batch (issue 49): the same plans over each request's own pages.
 * ------------------------------------------------------------------------ */

/* Request i's pages: its kv_indptr step, ceil(seq_len / page_size) (the
 * last page holds the rest). Only called once the batch's total is known
 * to fit the int32 indptr. */
static IdType batch_num_pages(const struct engine_batch *b, uint32_t i, uint32_t page_size)
{
	return (IdType)(((uint64_t)b->seq_lens[i] + page_size - 1) / page_size);
}


/* Whether the batch's pages overflow the int32 kv_indptr (refused, *z
 * filled); writes the longest request's pages to *max_pages otherwise.
 * Asked after each path's own checks, where the uniform port asks it. */
static bool batch_pages_refused(const struct engine_shape *s, const struct engine_batch *b,
				struct engine_zero *z, uint64_t *max_pages)
{
	uint64_t total = 0, longest = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		const uint64_t pages = ((uint64_t)b->seq_lens[i] + s->page_size - 1) / s->page_size;
		total += pages;
		longest = pages > longest ? pages : longest;
	}
	if (total > FLASHINFER_INT32_MAX) {
		z->reason = "the batch's pages (the sum of ceil(seq_len / page_size)) must fit "
			    "FlashInfer's int32 page indptr";
		z->input = "seq_lens";
		return true;
	}
	*max_pages = longest;
	return false;
}

/*
 * scheduler.cuh 60-99, PartitionPagedKVCacheBinarySearchMinNumPagePerBatch
 * over the batch's num_pages vector (request i's element is
 * batch_num_pages(b, i)): the loops of upstream, unchanged.
 */
static uint32_t batch_partition_paged_kv_cache_binary_search_min_num_page_per_batch(
	const uint32_t max_grid_size, const uint32_t gdy, const struct engine_batch *b,
	const uint32_t page_size, const uint32_t min_num_pages_per_batch,
	uint32_t *new_batch_size_out)
{
	uint32_t low = min_num_pages_per_batch, high = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		high = max_u32(high, (uint32_t)batch_num_pages(b, i, page_size));
	}
	uint32_t new_batch_size;
	while (low < high) {
		uint32_t mid = (low + high) / 2;
		new_batch_size = 0;
		for (uint32_t i = 0; i < b->num_seqs; i++) {
			new_batch_size += (uint32_t)ceil_div(batch_num_pages(b, i, page_size), mid);
		}
		if (new_batch_size * gdy > max_grid_size) {
			low = mid + 1;
		} else {
			high = mid;
		}
	}
	new_batch_size = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		new_batch_size +=
			(uint32_t)ceil_div(max_id(batch_num_pages(b, i, page_size), 1), low);
	}
	*new_batch_size_out = new_batch_size;
	return low;
}

/* scheduler.cuh 148-210 over the batch: as
 * batch_decode_with_paged_kv_cache_work_estimation_dispatched above, each
 * loop over the requests a loop again. */
static struct work_estimation batch_work_estimation_dispatched(
	const uint32_t GROUP_SIZE, const struct engine_batch *b, const uint32_t num_qo_heads,
	const uint32_t page_size, bool enable_cuda_graph, const int num_blocks_per_sm,
	const int num_sm)
{
	struct work_estimation w = {0};
	const uint32_t batch_size = b->num_seqs;
	const uint32_t num_kv_heads = num_qo_heads / GROUP_SIZE;
	w.gdy = num_kv_heads;
	w.max_grid_size = (uint32_t)(num_blocks_per_sm * num_sm);
	w.min_num_pages_per_batch = max_u32(128 / page_size, 1U);
	if (batch_size * w.gdy >= w.max_grid_size) {
		w.split_kv = false;
		w.max_num_pages_per_batch = 1;
		for (uint32_t batch_idx = 0; batch_idx < batch_size; ++batch_idx) {
			w.max_num_pages_per_batch =
				max_u32(w.max_num_pages_per_batch,
					(uint32_t)batch_num_pages(b, batch_idx, page_size));
		}
		w.new_batch_size = batch_size;
	} else {
		w.max_num_pages_per_batch =
			batch_partition_paged_kv_cache_binary_search_min_num_page_per_batch(
				w.max_grid_size, w.gdy, b, page_size, w.min_num_pages_per_batch,
				&w.new_batch_size);
		/* do not use partition-kv kernel for short sequence, when not
		 * using CUDAGraph; when using it, always */
		w.split_kv = !(w.new_batch_size == batch_size && !enable_cuda_graph);
	}
	return w;
}

/* The CUDA-core path over a batch: DecodePlanImpl as flashinfer_launch
 * reads it, with DecodeSplitKVIndptr's num_chunks_kv per request. */
static struct engine_answer launch_batch_cuda_cores(const struct engine_shape *s,
						    const struct engine_batch *b,
						    const struct flashinfer_options *o, uint32_t *by_seq)
{
	struct engine_zero zero;
	uint64_t max_pages = 0;

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
	if (o->fixed_split_size != 0) {
		return engine_refused("fixed_split_size is only supported by FlashInfer's tensor-core "
				      "decode (decode.py 1539-1542 raises on the CUDA-core path)",
				      "fixed_split_size");
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		return engine_refused("num_q_heads must be a multiple of num_kv_heads", "num_kv_heads");
	}
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
	if (batch_pages_refused(s, b, &zero, &max_pages)) {
		return engine_refused(zero.reason, zero.input);
	}

	/* scheduler.cuh 424-508, DecodePlanImpl<MATERIALIZE = true, HEAD_DIM>. */
	const uint32_t HEAD_DIM = s->head_dim;
	const uint32_t batch_size = b->num_seqs;
	const uint32_t num_qo_heads = s->num_q_heads;
	const uint32_t page_size = s->page_size;
	const bool enable_cuda_graph = s->cuda_graph;

	struct work_estimation w = batch_work_estimation_dispatched(
		GROUP_SIZE, b, num_qo_heads, page_size, enable_cuda_graph, (int)s->blocks_per_sm,
		(int)s->sm_count);
	const bool split_kv = w.split_kv;
	const uint32_t max_grid_size = w.max_grid_size;
	const uint32_t kv_chunk_size_in_pages = w.max_num_pages_per_batch;
	const uint32_t new_batch_size = w.new_batch_size;
	const uint32_t gdy = w.gdy;

	const uint64_t padded_batch_size =
		(enable_cuda_graph) ? (split_kv ? max_grid_size / gdy : batch_size) : new_batch_size;

	struct aligned_allocator float_allocator = {0};
	uint64_t tmp_v = 0, tmp_s = 0;
	if (split_kv) {
		tmp_v = (uint64_t)num_qo_heads * padded_batch_size * HEAD_DIM * sizeof(float);
		tmp_s = (uint64_t)num_qo_heads * padded_batch_size * sizeof(float);
		(void)aligned_alloc_offset(&float_allocator, tmp_v, 16); /* batch_decode_tmp_v */
		(void)aligned_alloc_offset(&float_allocator, tmp_s, 16); /* batch_decode_tmp_s */
	}
	if (split_kv && !dispatch_head_dim(HEAD_DIM)) {
		return engine_refused(FLASHINFER_MERGE_HEAD_DIM, "head_dim");
	}

	/* scheduler.cuh 348-364, DecodeSplitKVIndptr: request i runs
	 * num_chunks_kv chunks of kv_chunk_size_in_pages pages; without
	 * split_kv the kernel runs each request whole. */
	uint32_t longest = 0;
	for (uint32_t batch_idx = 0; batch_idx < batch_size; batch_idx++) {
		const uint32_t num_chunks_kv = ceil_div_u32(
			max_u32((uint32_t)batch_num_pages(b, batch_idx, page_size), 1U),
			kv_chunk_size_in_pages);
		by_seq[batch_idx] = split_kv ? num_chunks_kv : 1;
		longest = max_u32(longest, num_chunks_kv);
	}

	struct engine_answer a;
	engine_answer_init(&a);
	a.num_splits = split_kv ? longest : 1;
	a.num_splits_bound = a.num_splits;
	a.workspace_bytes = float_allocator.allocated_space;
	engine_term(&a, "GROUP_SIZE", GROUP_SIZE);
	engine_term(&a, "num_blocks_per_sm", s->blocks_per_sm);
	engine_term(&a, "num_sm", s->sm_count);
	engine_term(&a, "max_grid_size", max_grid_size);
	engine_term(&a, "gdy", gdy);
	/* the longest request's, as for the most chunks below */
	engine_term(&a, "num_pages", max_pages);
	engine_term(&a, "min_num_pages_per_batch", w.min_num_pages_per_batch);
	engine_term(&a, "max_num_pages_per_batch", kv_chunk_size_in_pages);
	engine_term(&a, "new_batch_size", new_batch_size);
	engine_term(&a, "split_kv", split_kv);
	engine_term(&a, "padded_batch_size", padded_batch_size);
	engine_term(&a, "kv_chunk_size", (uint64_t)kv_chunk_size_in_pages * page_size);
	engine_term(&a, "num_chunks_kv", longest);
	engine_term(&a, "batch_decode_tmp_v", tmp_v);
	engine_term(&a, "batch_decode_tmp_s", tmp_s);
	return a;
}

/* The least opt-in shared memory per block (cudaDevAttrMaxSharedMemory
 * PerBlockOptin) of any part that runs bf16 (sm80 and later): 99 KB, on
 * sm86, sm89, sm120 and sm121. FA2DetermineCtaTileQ compares against the
 * GPU's own; why this figure never changes an answer: flashinfer.h. */
#define FLASHINFER_MIN_SMEM_OPTIN_BF16 101376u

/*
 * utils.cuh 408-486, FA2DetermineCtaTileQ(avg_packed_qo_len, head_dim,
 * head_dim_qk, kv_dtype_bytes) with head_dim_qk = head_dim (decode.py
 * passes head_dim twice) and kv_dtype_bytes = sizeof(bf16) = 2
 * (batch_prefill.cu 69). Compute capability 8 or later: bf16 runs on
 * nothing earlier.
 */
static uint32_t fa2_determine_cta_tile_q(int64_t avg_packed_qo_len, uint32_t head_dim,
					 uint32_t head_dim_qk, uint32_t kv_dtype_bytes)
{
	const uint32_t qk = head_dim_qk ? head_dim_qk : head_dim;
	if (head_dim >= 512) {
		if (avg_packed_qo_len <= 32) {
			return 16;
		}
		return 32;
	}
	if (qk >= 512) {
		return 16;
	}
	if (avg_packed_qo_len > 64 && head_dim < 256) {
		return 128;
	}
	/* compute_capacity.first >= 8 (Ampere or newer) */
	if (avg_packed_qo_len > 16) {
		return 64;
	}
	const uint32_t max_smem_per_block_optin = FLASHINFER_MIN_SMEM_OPTIN_BF16;
	const uint32_t q_tile_smem = 16 * qk * 2;
	const uint32_t kv_step_smem_1x4 = (qk + head_dim) * 16 * 4 * kv_dtype_bytes;
	if (q_tile_smem + kv_step_smem_1x4 > max_smem_per_block_optin) {
		return 64;
	}
	return 16;
}

/* utils.cuh 341-344, ceil_div with T1 = int64_t (the prefill plan's
 * lengths) and T2 = int64_t or uint32_t: signed 64-bit either way. */
static int64_t ceil_div_i64(const int64_t x, const int64_t y)
{
	return (x + y - 1) / y;
}

static int64_t max_i64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/*
 * scheduler.cuh 101-130, PrefillBinarySearchKVChunkSize, every request's
 * packed_qo_len the same (one query row times the GQA group) and its
 * kv_len its pages (the paged plan reads kv_indptr, in pages). Returns
 * low (kv_chunk_size, in pages) and writes the split_kv it returns.
 */
static int64_t prefill_binary_search_kv_chunk_size(const bool enable_cuda_graph,
						   const uint32_t max_batch_size_if_split,
						   const int64_t packed_qo_len,
						   const struct engine_batch *b, uint32_t page_size,
						   const uint32_t qo_chunk_size,
						   const uint32_t min_kv_chunk_size, bool *split_kv)
{
	const int64_t batch_size = b->num_seqs;
	int64_t max_kv_len = 1;
	for (uint32_t i = 0; i < b->num_seqs; ++i) {
		max_kv_len = max_i64(max_kv_len, batch_num_pages(b, i, page_size));
	}

	int64_t low = min_kv_chunk_size;
	int64_t high = max_kv_len;
	const int64_t min_kv_len = 1;
	while (low < high) {
		const int64_t mid = (low + high) / 2;
		int64_t new_batch_size = 0;
		for (uint32_t i = 0; i < batch_size; ++i) {
			new_batch_size +=
				ceil_div_i64(packed_qo_len, qo_chunk_size) *
				ceil_div_i64(max_i64(batch_num_pages(b, i, page_size), min_kv_len), mid);
		}
		if (new_batch_size > (int64_t)max_batch_size_if_split) {
			low = mid + 1;
		} else {
			high = mid;
		}
	}
	*split_kv = enable_cuda_graph || low < max_kv_len;
	return low;
}

/* The tensor-core path: decode.py's use_tensor_cores plan (1670-1737) is
 * the fa2 prefill plan, PrefillPlanImpl (scheduler.cuh 764-894) with
 * PrefillSplitQOKVIndptr (545-683) for one query row a request. */
static struct engine_answer launch_batch_tensor_cores(const struct engine_shape *s,
						      const struct engine_batch *b,
						      const struct flashinfer_options *o,
						      uint32_t *by_seq)
{
	struct engine_zero zero;
	uint64_t max_pages = 0;

	if (s->num_splits != 0) {
		return engine_refused("FlashInfer's tensor-core decode takes its split as "
				      "fixed_split_size (pages), not num_splits; give 0",
				      "num_splits");
	}
	if (o->fixed_split_size > FLASHINFER_INT32_MAX) {
		return engine_refused("fixed_split_size must fit FlashInfer's int32_t plan argument (at "
				      "most 2147483647 pages)",
				      "fixed_split_size");
	}
	/* PrefillPlanImpl 776-781 */
	if (s->num_q_heads % s->num_kv_heads != 0) {
		return engine_refused("num_q_heads must be a multiple of num_kv_heads", "num_kv_heads");
	}
	/* 788-791: int num_blocks_per_sm = 2; available_ctas = 2 * num_sm -
	 * num_colocated_ctas (0 for decode, decode.py 1732) into an int */
	if (2 * (uint64_t)s->sm_count > FLASHINFER_INT32_MAX) {
		return engine_refused("2 * sm_count must fit FlashInfer's int max_grid_size", "sm_count");
	}
	if (batch_pages_refused(s, b, &zero, &max_pages)) {
		return engine_refused(zero.reason, zero.input);
	}

	/* PrefillPlanImpl's arguments (decode.py 1714-1733): total_num_rows =
	 * batch_size (q_len_per_req 1), head_dim_qk = head_dim_vo = head_dim,
	 * window_left -1, num_colocated_ctas 0, uniform_q_len 0. */
	const uint32_t batch_size = b->num_seqs;
	const uint32_t total_num_rows = batch_size;
	const uint32_t num_qo_heads = s->num_q_heads;
	const uint32_t num_kv_heads = s->num_kv_heads;
	const uint32_t head_dim = s->head_dim; /* head_dim_vo, and head_dim_qk */
	const uint32_t page_size = s->page_size;
	const bool enable_cuda_graph = s->cuda_graph;
	const int32_t fixed_split_size = o->fixed_split_size == 0 ? -1 : (int32_t)o->fixed_split_size;
	const bool disable_split_kv = o->disable_split_kv;

	/* step 0 */
	const int num_sm = (int)s->sm_count;
	const int num_blocks_per_sm = 2;
	const int64_t available_ctas = (int64_t)num_blocks_per_sm * num_sm - 0;
	const int max_grid_size = (int)max_i64(0, available_ctas);
	const uint32_t max_batch_size_if_split = (uint32_t)max_grid_size / num_kv_heads;

	/* PrefillSplitQOKVIndptr, step 1: every request's packed_qo_len is
	 * 1 * gqa_group_size, its kv_len its pages. */
	const uint32_t gqa_group_size = num_qo_heads / num_kv_heads;
	const int64_t packed_qo_len = (int64_t)1 * (int64_t)gqa_group_size;

	/* step 2 */
	const uint32_t min_kv_chunk_size = max_u32((128 / page_size), 1U);
	uint32_t cta_tile_q;
	uint32_t total_num_tiles_q;
	if (enable_cuda_graph) {
		/* uniform_q_len is 0: the ragged worst case */
		const uint64_t max_seq_len = total_num_rows - batch_size + 1;
		const uint64_t max_qo_len = (uint64_t)max_seq_len * gqa_group_size;
		cta_tile_q = fa2_determine_cta_tile_q((int64_t)max_qo_len, head_dim, head_dim, 2);
		total_num_tiles_q =
			ceil_div_u32(total_num_rows * gqa_group_size, cta_tile_q) + batch_size - 1;
	} else {
		/* sum_packed_qo_len / batch_size: every term the same */
		const int64_t avg_packed_qo_len = packed_qo_len * batch_size / batch_size;
		cta_tile_q = fa2_determine_cta_tile_q(avg_packed_qo_len, head_dim, head_dim, 2);
		total_num_tiles_q = 0;
		for (uint32_t i = 0; i < batch_size; ++i) {
			total_num_tiles_q += (uint32_t)ceil_div_i64(packed_qo_len, cta_tile_q);
		}
	}

	/* window_left < 0: effective_kv_len_arr is kv_len_arr */
	bool split_kv = false;
	int64_t kv_chunk_size = 0;
	if (disable_split_kv) {
		kv_chunk_size = INT64_MAX;
	} else if (!disable_split_kv && fixed_split_size > 0) {
		kv_chunk_size = fixed_split_size;
	} else {
		kv_chunk_size = prefill_binary_search_kv_chunk_size(
			enable_cuda_graph, max_batch_size_if_split, packed_qo_len, b, page_size,
			cta_tile_q, min_kv_chunk_size, &split_kv);
	}

	/* step 3: the tiles, counted (upstream pushes one entry per tile
	 * and adds 1 to its uint32_t new_batch_size each time) */
	uint32_t new_batch_size = 0;
	int64_t longest = 0;
	for (uint32_t request_idx = 0; request_idx < batch_size; ++request_idx) {
		const int64_t num_tiles_q = ceil_div_i64(packed_qo_len, cta_tile_q);
		const int64_t kv_len = max_i64(batch_num_pages(b, request_idx, page_size), 1);
		const int64_t num_chunks_kv = disable_split_kv ? 1 : ceil_div_i64(kv_len, kv_chunk_size);
		if (fixed_split_size > 0 && !disable_split_kv) {
			split_kv = split_kv || num_chunks_kv > 1;
		}
		new_batch_size += (uint32_t)((uint64_t)num_tiles_q * (uint64_t)num_chunks_kv);
		longest = max_i64(longest, num_chunks_kv);
	}

	const uint64_t padded_batch_size =
		enable_cuda_graph ? max_u32(max_batch_size_if_split, total_num_tiles_q) : new_batch_size;
	if (!(new_batch_size <= padded_batch_size)) {
		return engine_refused("FlashInfer's plan fails: the split batch exceeds the CUDA graph's "
				      "padded batch (FLASHINFER_CHECK at scheduler.cuh 674-676); with a "
				      "fixed_split_size, disable the CUDA graph",
				      "fixed_split_size");
	}

	/* PrefillPlanImpl 855-864: the float workspace, only when split_kv */
	struct aligned_allocator float_allocator = {0};
	uint64_t tmp_v = 0, tmp_s = 0;
	if (split_kv) {
		tmp_v = (uint64_t)num_qo_heads * padded_batch_size * cta_tile_q * head_dim *
			sizeof(float);
		tmp_s = (uint64_t)num_qo_heads * padded_batch_size * cta_tile_q * sizeof(float);
		(void)aligned_alloc_offset(&float_allocator, tmp_v, 16); /* batch_prefill_tmp_v */
		(void)aligned_alloc_offset(&float_allocator, tmp_s, 16); /* batch_prefill_tmp_s */
	}
	/* The run (batch_prefill.cu 343-366, prefill.cuh 4512-4521) merges a
	 * split launch through VariableLengthMergeStates: DISPATCH_HEAD_DIM. */
	if (split_kv && !dispatch_head_dim(head_dim)) {
		return engine_refused(FLASHINFER_MERGE_HEAD_DIM, "head_dim");
	}

	for (uint32_t request_idx = 0; request_idx < batch_size; ++request_idx) {
		const int64_t kv_len = max_i64(batch_num_pages(b, request_idx, page_size), 1);
		by_seq[request_idx] =
			(uint32_t)(disable_split_kv ? 1 : ceil_div_i64(kv_len, kv_chunk_size));
	}

	struct engine_answer a;
	engine_answer_init(&a);
	a.num_splits = (uint32_t)longest;
	a.num_splits_bound = a.num_splits;
	a.workspace_bytes = float_allocator.allocated_space;
	engine_term(&a, "gqa_group_size", gqa_group_size);
	engine_term(&a, "num_sm", s->sm_count);
	engine_term(&a, "num_blocks_per_sm", (uint64_t)num_blocks_per_sm);
	engine_term(&a, "max_grid_size", (uint64_t)max_grid_size);
	engine_term(&a, "max_batch_size_if_split", max_batch_size_if_split);
	engine_term(&a, "cta_tile_q", cta_tile_q);
	engine_term(&a, "total_num_tiles_q", total_num_tiles_q);
	engine_term(&a, "min_kv_chunk_size", min_kv_chunk_size);
	engine_term(&a, "max_kv_len", max_pages < 1 ? 1 : max_pages);
	if (!disable_split_kv) {
		/* step 4: kv_chunk_size *= page_size, in tokens (left out when
		 * split_kv is disabled: INT64_MAX times page_size overflows) */
		engine_term(&a, "kv_chunk_size", (uint64_t)kv_chunk_size * page_size);
	}
	engine_term(&a, "new_batch_size", new_batch_size);
	engine_term(&a, "split_kv", split_kv);
	engine_term(&a, "padded_batch_size", padded_batch_size);
	engine_term(&a, "batch_prefill_tmp_v", tmp_v);
	engine_term(&a, "batch_prefill_tmp_s", tmp_s);
	return a;
}

struct engine_answer flashinfer_launch_batch(const struct engine_shape *s,
					     const struct engine_batch *b,
					     const struct flashinfer_options *o, uint32_t *by_seq)
{
	struct engine_zero zero;
	const struct flashinfer_options defaults = {false, 0, false};

	if (b == NULL || by_seq == NULL) {
		return engine_refused("the batch and its by_seq array must be given", "seq_lens");
	}
	if (engine_batch_refused(s, b,
				 ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS |
				 ENGINE_IN_HEAD_DIM | ENGINE_IN_PAGE_SIZE, &zero)) {
		return engine_refused(zero.reason, zero.input);
	}
	if (o == NULL) {
		o = &defaults;
	}
	return o->tensor_cores ? launch_batch_tensor_cores(s, b, o, by_seq)
			       : launch_batch_cuda_cores(s, b, o, by_seq);
}
