/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * sglang — SGLang's triton decode split over one mixed batch; where it
 * came from, what it fixes and why: sglang.h. Each step below names the
 * upstream statement it ports.
 */
#include "sglang.h"

#define INT32_MAX_ 2147483647ll

/* decode_attention.py 35 */
#define MIN_BLOCK_KV 32

/* Python's and Triton's cdiv for positive operands: (a + b - 1) // b. */
static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/*
 * log2 of a positive normal float, rounded to float: the exponent plus
 * log2 of the mantissa brought into [sqrt(1/2), sqrt(2)), by the atanh
 * series in double (|s| <= 0.172, so 20 terms leave nothing a double
 * sees). No libm in policy/; see sglang.h "Float arithmetic" for how it
 * stands to the GPU's.
 */
static float log2_float(float x)
{
	union {
		float f;
		uint32_t u;
	} v;
	v.f = x;
	int e = (int)((v.u >> 23) & 0xffu) - 127;
	v.u = (v.u & 0x007fffffu) | 0x3f800000u;
	double m = v.f;
	if (m > 1.4142135623730951) {
		m /= 2.0;
		e++;
	}
	const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
	double term = s, sum = 0.0;
	for (int k = 1; k < 40; k += 2) {
		sum += term / k;
		term *= s2;
	}
	/* ln(m) = 2 * atanh(s); log2(e) = 1 / ln 2 */
	const double l = (double)e + 2.0 * sum * 1.4426950408889634;
	return (float)l;
}

/* a * b, or false when it would pass 2^64 - 1 */
static bool mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a) {
		return false;
	}
	*out = a * b;
	return true;
}


/* The shape's and the options' own refusals, before any arithmetic. */
static const char *setting_refused(const struct engine_shape *s, const struct engine_batch *b,
				   const struct sglang_options *o, const char **input)
{
	if (s->num_splits != 0) {
		*input = "num_splits";
		return "SGLang's triton backend takes no split argument: leave num_splits 0 and "
		       "set max_kv_splits, deterministic or split_tile_size";
	}
	if (s->sm_count > SGLANG_MAX_SM_COUNT) {
		*input = "sm_count";
		return "sm_count above 16777216: float32(device_core_count) would round";
	}
	if (s->num_q_heads % s->num_kv_heads != 0) {
		*input = "num_kv_heads";
		return "num_q_heads must be a multiple of num_kv_heads";
	}
	if (s->num_q_heads > SGLANG_MAX_HEADS) {
		*input = "num_q_heads";
		return "num_q_heads above 1048576";
	}
	if (o->max_kv_splits == 0) {
		*input = "max_kv_splits";
		return "max_kv_splits (--triton-attention-num-kv-splits) must be at least 1";
	}
	if (o->max_kv_splits > INT32_MAX_ ||
	    (o->deterministic ? o->deterministic_tile : o->split_tile_size) > INT32_MAX_) {
		*input = o->max_kv_splits > INT32_MAX_ ? "max_kv_splits" : "split_tile_size";
		return "max_kv_splits and the split tile are int32 on the GPU: at most 2147483647";
	}
	if (s->cuda_graph) {
		if (o->cuda_graph_bs < b->num_seqs) {
			*input = "cuda_graph_bs";
			return "a CUDA-graph launch needs cuda_graph_bs, the captured batch size it "
			       "pads to, at least the batch's sequences";
		}
		if (o->cuda_graph_bs > ENGINE_MAX_SEQS) {
			*input = "cuda_graph_bs";
			return "cuda_graph_bs holds at most 4096 rows (ENGINE_MAX_SEQS)";
		}
		if (o->cuda_graph_max_bs != 0 && o->cuda_graph_max_bs < o->cuda_graph_bs) {
			*input = "cuda_graph_max_bs";
			return "cuda_graph_max_bs, the largest captured batch size, must be at least "
			       "cuda_graph_bs";
		}
	} else if (o->cuda_graph_bs != 0 || o->cuda_graph_max_bs != 0) {
		*input = "cuda_graph_bs";
		return "cuda_graph_bs and cuda_graph_max_bs are read only by a CUDA-graph launch: "
		       "set cuda_graph or leave them 0";
	}
	if (o->max_model_len != 0) {
		for (uint32_t i = 0; i < b->num_seqs; i++) {
			if (b->seq_lens[i] > o->max_model_len) {
				*input = "seq_lens";
				return "a sequence is longer than max_model_len, the context length "
				       "SGLang admits";
			}
		}
	}
	return NULL;
}

/* One row of the metadata's seq_lens: real rows, then the graph's
 * padding rows of length 1 (get_cuda_graph_seq_len_fill_value). */
static int64_t row_len(const struct engine_batch *b, uint32_t i)
{
	return i < b->num_seqs ? (int64_t)b->seq_lens[i] : 1;
}

/*
 * get_num_kv_splits_triton (metadata.py 12-60) for one launch: fills the
 * chunk sizes the per-row count is taken from (num_kv_splits = max(
 * cdiv(len, kv_chunk_size_1), cdiv(len, kv_chunk_size_2)), 53-55).
 * Returns NULL, or a refusal where upstream's int32 would wrap.
 */
static const char *metadata_kernel(const struct engine_shape *s, const struct engine_batch *b,
				   uint32_t rows, bool int32_lens, int64_t max_kv_splits,
				   struct engine_answer *a, int64_t *chunk_1, int64_t *chunk_2,
				   const char **input)
{
	/* 27-30: the max over the rows, then the min with masked lanes at the max */
	int64_t max_seq_len = 0, min_seq_len;
	for (uint32_t i = 0; i < rows; i++) {
		max_seq_len = max64(max_seq_len, row_len(b, i));
	}
	min_seq_len = max_seq_len;
	for (uint32_t i = 0; i < rows; i++) {
		min_seq_len = min64(min_seq_len, row_len(b, i));
	}
	/* A graph's int32 seq_lens make these int32 products; every later sum
	 * of lengths here is at most 2 * max_seq_len, so these are the ones
	 * that can wrap. */
	if (int32_lens && (max_seq_len * 8 > INT32_MAX_ || min_seq_len * 10 > INT32_MAX_)) {
		*input = "seq_lens";
		return "a CUDA-graph launch reads int32 seq_lens: its max_seq_len * 8 (from "
		       "268435456 tokens) or min_seq_len * 10 (from 214748365) wraps";
	}
	engine_term(a, "max_seq_len", (uint64_t)max_seq_len);
	/* 31-32 */
	if (max_seq_len * 8 < min_seq_len * 10) {
		min_seq_len = max_seq_len;
	}
	engine_term(a, "min_seq_len", (uint64_t)min_seq_len);
	/* 33-34 */
	const int64_t max_kv_splits_1 = min64(cdiv(max_seq_len, min_seq_len), max_kv_splits);
	const int64_t kv_chunk_size_1 = cdiv(max_seq_len, max_kv_splits_1);
	engine_term(a, "max_kv_splits_1", (uint64_t)max_kv_splits_1);
	engine_term(a, "kv_chunk_size_1", (uint64_t)kv_chunk_size_1);

	/* 37-40, in float32: the cast rounds to nearest, / 64.0 is exact,
	 * int * fp32 is an fp32 product, and the int32 cast truncates. */
	const float ext_seq_len = (float)max_seq_len / 64.0f;
	const float lg = log2_float(ext_seq_len);
	const float factor = lg > 1.0f ? lg : 1.0f;
	const float ext_cores = (float)s->sm_count * factor;
	const int64_t ext_device_core_count = (int64_t)(int32_t)ext_cores;
	engine_term(a, "ext_device_core_count", (uint64_t)ext_device_core_count);

	/* 41-47 */
	const int64_t num_head = s->num_q_heads, num_kv_group = num_head / s->num_kv_heads;
	int64_t token_grid;
	if (num_kv_group == 1) {
		token_grid = (int64_t)rows * 1 * num_head;
	} else {
		const int64_t block_h = min64(16, num_kv_group);
		token_grid = (int64_t)rows * 1 * cdiv(num_head, block_h);
	}
	/* token_grid and cdiv(ext_device_core_count, token_grid) are int32
	 * (num_seq, num_head and the core count are int32 arguments) */
	if (token_grid + ext_device_core_count - 1 > INT32_MAX_) {
		*input = "num_q_heads";
		return "token_grid (num_seq * num_head) near INT32_MAX: the kernel's int32 "
		       "token_grid or cdiv(ext_device_core_count, token_grid) wraps";
	}
	engine_term(a, "token_grid", (uint64_t)token_grid);
	/* 48-51 */
	const int64_t max_kv_splits_2 = min64(cdiv(ext_device_core_count, token_grid), max_kv_splits);
	const int64_t kv_chunk_size_2 = cdiv(max_seq_len, max_kv_splits_2);
	engine_term(a, "max_kv_splits_2", (uint64_t)max_kv_splits_2);
	engine_term(a, "kv_chunk_size_2", (uint64_t)kv_chunk_size_2);
	*chunk_1 = kv_chunk_size_1;
	*chunk_2 = kv_chunk_size_2;
	return NULL;
}

enum split_path { PATH_STATIC, PATH_DETERMINISTIC, PATH_DYNAMIC };

/* get_num_kv_splits (triton_backend.py 255-305) for one row. */
static int64_t row_kv_splits(enum split_path path, int64_t len, int64_t max_kv_splits,
			     int64_t tile, int64_t chunk_1, int64_t chunk_2)
{
	switch (path) {
	case PATH_STATIC: /* 271-275 */
		return max_kv_splits;
	case PATH_DETERMINISTIC: /* 285-287 */
		return (len + tile - 1) / tile;
	default: /* metadata.py 53-55 */
		return max64(cdiv(len, chunk_1), cdiv(len, chunk_2));
	}
}

struct engine_answer sglang_launch_batch(const struct engine_shape *s,
					 const struct engine_batch *b,
					 const struct sglang_options *o, uint32_t *by_seq)
{
	struct engine_answer a;
	struct engine_zero zero;
	const struct sglang_options defaults = {SGLANG_DEFAULT_MAX_KV_SPLITS, 0, false, 0, false,
						0, 0, 0};
	const char *why, *input = NULL;

	if (s == NULL || b == NULL || by_seq == NULL) {
		return engine_refused("the shape, the batch and its by_seq array must be given",
				      "seq_lens");
	}
	if (engine_batch_refused(s, b,
				 ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS |
				 ENGINE_IN_HEAD_DIM, &zero)) {
		return engine_refused(zero.reason, zero.input);
	}
	if (o == NULL) {
		o = &defaults;
	}
	why = setting_refused(s, b, o, &input);
	if (why != NULL) {
		return engine_refused(why, input);
	}
	engine_answer_init(&a);

	/* __init__ 165 and 197-212: the tile, then max_kv_splits it sets (a
	 * Python int: no overflow in uint32 / int64 here). */
	int64_t max_kv_splits = o->max_kv_splits, tile = 0;
	bool static_kv_splits = o->static_kv_splits;
	if (o->deterministic) {
		tile = o->deterministic_tile != 0 ? o->deterministic_tile
						  : SGLANG_DEFAULT_DETERMINISTIC_TILE;
		static_kv_splits = false;
	} else {
		tile = o->split_tile_size; /* 0: None */
	}
	if (tile != 0) {
		if (o->max_model_len == 0) {
			return engine_refused("a split tile size (deterministic or split_tile_size) "
					      "sizes max_kv_splits by the context length: give "
					      "max_model_len",
					      "max_model_len");
		}
		max_kv_splits = ((int64_t)o->max_model_len + tile - 1) / tile;
		engine_term(&a, "split_tile_size", (uint64_t)tile);
		if (max_kv_splits > INT32_MAX_) {
			/* torch's fill_ / store into the int32 num_kv_splits */
			engine_refuse(&a, "ceil(max_model_len / tile) above INT32_MAX: the int32 "
					  "num_kv_splits cannot hold it",
				      "split_tile_size");
			return a;
		}
	}
	engine_term(&a, "max_kv_splits", (uint64_t)max_kv_splits);

	/* The rows the metadata sees: the batch, or the graph's padded bs. */
	const uint32_t rows = s->cuda_graph ? o->cuda_graph_bs : b->num_seqs;
	engine_term(&a, "bs", rows);
	int64_t total = 0;
	for (uint32_t i = 0; i < rows; i++) {
		total += row_len(b, i);
	}
	if (total > INT32_MAX_) {
		return engine_refused("the batch holds more than 2147483647 tokens: the int32 "
				      "kv_indptr wraps",
				      "seq_lens");
	}

	/* get_num_kv_splits 271-288: static fill, deterministic, else the
	 * kernel. The deterministic sum stays within int32 (total above). */
	enum split_path path = PATH_DYNAMIC;
	int64_t chunk_1 = 1, chunk_2 = 1;
	if (static_kv_splits && !o->deterministic) {
		path = PATH_STATIC;
	} else if (tile != 0 && o->deterministic) {
		path = PATH_DETERMINISTIC;
	} else {
		why = metadata_kernel(s, b, rows, s->cuda_graph, max_kv_splits, &a, &chunk_1,
				      &chunk_2, &input);
		if (why != NULL) {
			engine_refuse(&a, why, input);
			return a;
		}
	}

	/* The decode kernel (_fwd_kernel_stage1 / _fwd_kernel_stage2): split
	 * id in 0..max_kv_splits-1 runs when id * kv_len_per_split < len. The
	 * padding rows are checked for wraps too: the GPU runs them. */
	int64_t most = 0, most_kv_splits = 0;
	for (uint32_t i = 0; i < rows; i++) {
		const int64_t len = row_len(b, i);
		const int64_t kv_splits = row_kv_splits(path, len, max_kv_splits, tile, chunk_1,
							chunk_2);
		if (path == PATH_DETERMINISTIC && s->cuda_graph && len + tile - 1 > INT32_MAX_) {
			engine_refuse(&a, "a CUDA-graph launch reads int32 seq_lens: seq_len + tile - 1 "
					  "above INT32_MAX wraps",
				      "seq_lens");
			return a;
		}
		if (len + kv_splits - 1 > INT32_MAX_) {
			engine_refuse(&a, "seq_len + num_kv_splits - 1 above INT32_MAX: the "
					  "kernel's int32 cdiv wraps",
				      "seq_lens");
			return a;
		}
		const int64_t per_seq = cdiv(len, kv_splits);
		if (per_seq + MIN_BLOCK_KV - 1 > INT32_MAX_) {
			engine_refuse(&a, "a sequence's one split above 2147483616 tokens: the "
					  "kernel's int32 cdiv by MIN_BLOCK_KV wraps",
				      "seq_lens");
			return a;
		}
		const int64_t per = cdiv(per_seq, MIN_BLOCK_KV) * MIN_BLOCK_KV;
		/* the grid runs every split id below max_kv_splits: the last one's
		 * split_kv_start + kv_len_per_split is the largest int32 it forms */
		if (per > INT32_MAX_ / max_kv_splits) {
			engine_refuse(&a, "kv_len_per_split * max_kv_splits above INT32_MAX: the "
					  "kernel's int32 split bounds wrap",
				      "max_kv_splits");
			return a;
		}
		const int64_t runs = min64(cdiv(len, per), max_kv_splits);
		if (i < b->num_seqs) {
			by_seq[i] = (uint32_t)runs;
			most = max64(most, runs);
			most_kv_splits = max64(most_kv_splits, kv_splits);
		}
	}
	engine_term(&a, "num_kv_splits", (uint64_t)most_kv_splits);

	/* init_forward_metadata (eager) or init_cuda_graph_state (graph):
	 * attn_logits (rows, num_head, max_kv_splits, v_head_dim) and attn_lse
	 * (rows, num_head, max_kv_splits), float32. */
	uint64_t alloc_rows = b->num_seqs;
	if (s->cuda_graph) {
		alloc_rows = o->cuda_graph_max_bs != 0 ? o->cuda_graph_max_bs : o->cuda_graph_bs;
	}
	uint64_t lse = 0, logits = 0;
	if (!mul_u64(alloc_rows * s->num_q_heads, (uint64_t)max_kv_splits, &lse) ||
	    !mul_u64(lse, 4, &lse) || !mul_u64(lse, s->head_dim, &logits) ||
	    logits > UINT64_MAX - lse) {
		engine_refuse(&a, "attn_logits would pass 2^64 bytes", "max_kv_splits");
		return a;
	}
	engine_term(&a, "attn_logits_bytes", logits);
	engine_term(&a, "attn_lse_bytes", lse);

	a.num_splits = (uint32_t)most;
	a.num_splits_bound = (uint32_t)max_kv_splits;
	a.workspace_bytes = logits + lse;
	return a;
}
