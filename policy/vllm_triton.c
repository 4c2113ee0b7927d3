/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * vllm_triton — vLLM V1 TRITON_ATTN's 2D/3D choice and its segment scratch
 * over a mixed decode batch. Where it came from, what it fixes and its
 * license: vllm_triton.h. Each function below names the upstream lines it
 * follows (vllm-project/vllm @ 81be2e09aebfd1c45b3ed9f73d2850da8a72984c).
 */
#include "vllm_triton.h"

/* triton_attn.py 55 */
#define MIN_LAUNCH_GRID_SIZE_2D 128u
/* triton_attn.py 56 */
#define NUM_PAR_SOFTMAX_SEGMENTS VLLM_TRITON_NUM_PAR_SOFTMAX_SEGMENTS
/* _get_tile_size (triton_unified_attention.py 784-799) for a 2-byte query,
 * no Gemma 3 window: decode 16, prefill (the 2D kernel's) 32. */
#define TILE_SIZE_DECODE 16u
#define TILE_SIZE_PREFILL 32u
/* Triton's int32, in which the kernels hold seq_len and its tile sums. */
#define TRITON_INT32_MAX 2147483647u

/* vllm/utils/math_utils.py 15-17: 1 if n < 1 else 1 << (n - 1).bit_length()
 * (Python ints: no overflow; n < 2^32 here, so the answer fits 2^32). */
static uint64_t next_power_of_2(uint32_t n)
{
	uint64_t p = 1;

	if (n < 1) {
		return 1;
	}
	while (p < n) {
		p <<= 1;
	}
	return p;
}

/*
 * vllm/config/vllm.py 1885-1911, the "balanced" default list, is
 * [1, 2, 4 if <= max], then range(8, min(max + 1, 256), 8), then
 * range(256, max + 1, 16): ascending. triton_attn.py 149-152 takes Python's
 * min(capture_sizes, key=abs(x - t)), the first of the nearest, so on a tie
 * the smaller. The list is walked in that order without being built; the
 * walk stops once a size lies above t and further than the best, as every
 * later one does too (the list ascends).
 */
static uint32_t nearest_capture_size(uint32_t max_capture_size, uint32_t t)
{
	static const uint32_t small[] = {1, 2, 4};
	uint32_t best = 0;
	uint64_t best_dist = UINT64_MAX;

	/* _set_cudagraph_sizes' assert max_cudagraph_capture_size >= 1 holds:
	 * 0 is "not set" and stands for 512 (vllm_triton_launch_batch). */
	for (unsigned i = 0; i < 3; i++) {
		if (small[i] <= max_capture_size) {
			uint64_t d = small[i] > t ? small[i] - t : t - small[i];
			if (d < best_dist) {
				best = small[i];
				best_dist = d;
			}
		}
	}
	/* range(8, min(max + 1, 256), 8) then range(256, max + 1, 16) */
	uint64_t x = 8;
	while (x <= max_capture_size) {
		uint64_t d = x > t ? x - t : t - x;

		if (x > t && d >= best_dist) {
			break;
		}
		if (d < best_dist) {
			best = (uint32_t)x;
			best_dist = d;
		}
		x += x < 256 ? 8 : 16;
	}
	return best;
}

/* triton_attn.py 124-152: the builder's seq_threshold_3D. */
static uint32_t seq_threshold_3d(uint32_t num_heads_kv, const struct vllm_triton_options *o)
{
	const bool decode_cudagraph_enabled = o->cudagraph_mode == VLLM_TRITON_CG_FULL_AND_PIECEWISE ||
					      o->cudagraph_mode == VLLM_TRITON_CG_FULL_DECODE_ONLY ||
					      o->cudagraph_mode == VLLM_TRITON_CG_FULL;
	/* Python's // of two positive ints: C's unsigned division. */
	uint32_t t = MIN_LAUNCH_GRID_SIZE_2D / num_heads_kv;

	if (decode_cudagraph_enabled) {
		/* max_cudagraph_capture_size None: min(max_num_seqs * 2, 512),
		 * 512 with every default max_num_seqs (arg_utils.py 2553-2620) */
		uint32_t max_capture_size = o->max_capture_size == 0 ? 512 : o->max_capture_size;
		t = nearest_capture_size(max_capture_size, t);
	}
	return t;
}


/* The choice's own refusals, after the counts: true with the reason. */
static bool shape_refused(const struct engine_shape *s, const struct vllm_triton_options *o,
			  struct engine_zero *z)
{
	if (s->num_splits != 0) {
		z->reason = "TRITON_ATTN takes no num_splits argument: leave it 0";
		z->input = "num_splits";
		return true;
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		z->reason = "num_q_heads must be a multiple of num_kv_heads";
		z->input = "num_kv_heads";
		return true;
	}
	/* supports_head_size (triton_attn.py 385-387) */
	if (s->head_dim < 32) {
		z->reason = "TRITON_ATTN supports head sizes of 32 and more: raise head_dim";
		z->input = "head_dim";
		return true;
	}
	/* supports_block_size and get_kv_cache_shape (289-297, 329-330) */
	if (s->page_size % 16 != 0) {
		z->reason = "TRITON_ATTN needs a block size that is a multiple of 16";
		z->input = "page_size";
		return true;
	}
	if (o->cudagraph_mode > VLLM_TRITON_CG_FULL) {
		z->reason = "cudagraph_mode must be none, piecewise, full, full_decode_only or "
			    "full_and_piecewise";
		z->input = "cudagraph_mode";
		return true;
	}
	return false;
}

/*
 * The segments a sequence of seq_len tokens runs on the 3D kernel:
 * kernel_unified_attention 322-325 returns for segm_idx * tiles_per_segment
 * * TILE_SIZE >= seq_len, and reduce_segments 719-723 merges
 * act_num_segments = cdiv_fn(seq_len, tiles_per_segment * TILE_SIZE), the
 * same count (compute_tile_loop_bounds gives a decode row seq_len's tiles,
 * so every segment below it has one). In Triton's int32: false when a sum
 * would wrap (refused).
 */
static bool segments_3d(uint32_t seq_len, uint32_t *tiles_per_segment, uint32_t *segments)
{
	const uint64_t span = (uint64_t)NUM_PAR_SOFTMAX_SEGMENTS * TILE_SIZE_DECODE;

	if ((uint64_t)seq_len + span - 1 > TRITON_INT32_MAX) {
		return false;
	}
	const uint64_t tps = ((uint64_t)seq_len + span - 1) / span;
	const uint64_t step = tps * TILE_SIZE_DECODE;
	if ((uint64_t)seq_len + step - 1 > TRITON_INT32_MAX) {
		return false;
	}
	*tiles_per_segment = (uint32_t)tps;
	*segments = (uint32_t)(((uint64_t)seq_len + step - 1) / step);
	return true;
}

/* The scratch (triton_attn.py 154-175): float32 [t, num_heads_q, 16,
 * headdim_padded] + 2 x float32 [t, num_heads_q, 16], in bytes; false
 * when it exceeds UINT64_MAX. */
static bool scratch_bytes(uint32_t t, uint32_t num_heads_q, uint64_t headdim_padded,
			  uint64_t *bytes)
{
	/* t * num_heads_q * 16 * 4 < 2^32 * 2^32 * 2^6 could wrap: check each step */
	const uint64_t rows = (uint64_t)t * num_heads_q;

	if (rows > UINT64_MAX / (NUM_PAR_SOFTMAX_SEGMENTS * 4u)) {
		return false;
	}
	const uint64_t per_elem = rows * NUM_PAR_SOFTMAX_SEGMENTS * 4u;
	if (rows != 0 && headdim_padded + 2 > UINT64_MAX / per_elem) {
		return false;
	}
	*bytes = per_elem * headdim_padded + 2 * per_elem;
	return true;
}

struct engine_answer vllm_triton_launch_batch(const struct engine_shape *s,
					      const struct engine_batch *b,
					      const struct vllm_triton_options *o,
					      uint32_t *by_seq)
{
	const struct vllm_triton_options defaults = {VLLM_TRITON_CG_FULL_AND_PIECEWISE, 0, false};
	struct engine_answer a;
	struct engine_zero z;

	if (s == NULL || b == NULL || by_seq == NULL) {
		return engine_refused("the shape, the batch and its by_seq array must be given",
				      "seq_lens");
	}
	if (o == NULL) {
		o = &defaults;
	}
	if (engine_batch_refused(s, b,
				 ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM |
				 ENGINE_IN_PAGE_SIZE, &z) || shape_refused(s, o, &z)) {
		return engine_refused(z.reason, z.input);
	}

	engine_answer_init(&a);
	const uint32_t t = seq_threshold_3d(s->num_kv_heads, o);
	const uint64_t headdim_padded = next_power_of_2(s->head_dim);
	uint64_t ws;
	if (!scratch_bytes(t, s->num_q_heads, headdim_padded, &ws)) {
		return engine_refused("the softmax_segm scratch would exceed 2^64 bytes: "
				      "lower head_dim or num_q_heads", "head_dim");
	}

	/* unified_attention 1041-1050 for a decode batch with its buffers */
	const bool use_3d = !(b->num_seqs > t || o->batch_invariant);
	uint32_t max_segments = 0, longest = 0, longest_tps = 0;

	for (uint32_t i = 0; i < b->num_seqs; i++) {
		const uint32_t seq_len = b->seq_lens[i];
		uint32_t tps = 0, segs = 1;

		if (use_3d) {
			if (!segments_3d(seq_len, &tps, &segs)) {
				return engine_refused("a sequence this long wraps the 3D kernel's int32 "
						      "tile arithmetic: shorten it",
						      "seq_lens");
			}
		} else if ((uint64_t)seq_len + TILE_SIZE_PREFILL - 1 > TRITON_INT32_MAX) {
			/* compute_tile_loop_bounds: cdiv_fn(seq_len, 32) in int32 */
			return engine_refused("a sequence this long wraps the 2D kernel's int32 "
					      "tile arithmetic: shorten it",
					      "seq_lens");
		}
		if (segs > max_segments) {
			max_segments = segs;
		}
		if (seq_len > longest) {
			longest = seq_len;
			longest_tps = tps;
		}
	}
	/* every check passed: only now is the caller's array written */
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		uint32_t tps, segs = 1;

		if (use_3d) {
			(void)segments_3d(b->seq_lens[i], &tps, &segs);
		}
		by_seq[i] = segs;
	}

	a.num_splits = max_segments;
	a.num_splits_bound = use_3d ? NUM_PAR_SOFTMAX_SEGMENTS : 1;
	a.workspace_bytes = ws;
	engine_term(&a, "seq_threshold_3D", t);
	engine_term(&a, "use_3d", use_3d);
	engine_term(&a, "NUM_SEGMENTS_PER_SEQ", use_3d ? NUM_PAR_SOFTMAX_SEGMENTS : 1);
	engine_term(&a, "TILE_SIZE", use_3d ? TILE_SIZE_DECODE : TILE_SIZE_PREFILL);
	if (use_3d) {
		engine_term(&a, "tiles_per_segment", longest_tps);
	}
	engine_term(&a, "headdim_padded", headdim_padded);
	return a;
}
