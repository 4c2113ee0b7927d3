/* SPDX-License-Identifier: AGPL-3.0-only AND Apache-2.0 */
/*
 * vllm — vLLM's paged attention v1/v2 decode choice (PagedAttention.
 * forward_decode @ 5da3a32, paged_attention_v2.cu @ cc17020). See vllm.h
 * for where each line comes from, the branches fixed and the differences.
 *
 * Python's ints are unbounded and never negative here, so every count is a
 * uint64_t and `//` is C's unsigned `/`; the one place a uint64_t could
 * overflow (the v2 scratch of an absurd shape) is checked.
 */
#include "vllm.h"

#include <stddef.h>

/* paged_attn.py line 10: "Should be the same as PARTITION_SIZE in
 * `paged_attention_v2_launcher`." */
static const uint64_t PARTITION_SIZE_PY = 512;
/* paged_attention_v2.cu line 51: the launcher's template default, which
 * CALL_V2_LAUNCHER (lines 139-146) does not override. */
static const uint64_t PARTITION_SIZE_CU = 512;

/* The refusal of a non-zero num_splits (vllm_launch, vllm_launch_batch). */
static const char NO_NUM_SPLITS[] =
	"vLLM's paged attention takes no num_splits argument: "
	"its v1/v2 choice and partitions follow the shape; give num_splits 0";

/* torch.empty's largest tensor, in bytes (PyTorch's storage size check). */
static const uint64_t TORCH_MAX_NBYTES = INT64_MAX;

/* *p = a * b, false when it does not fit in a uint64_t. */
static bool mul_fits(uint64_t a, uint64_t b, uint64_t *p)
{
	if (a != 0 && b > UINT64_MAX / a) {
		return false;
	}
	*p = a * b;
	return true;
}

/*
 * The kernel dispatch both ops.paged_attention_v1 and ops.paged_attention_v2
 * reach for a bf16 query with kv_cache_dtype "auto" and no block sparsity:
 * first the block_size switch (CALL_V2_LAUNCHER_BLOCK_SIZE, v2.cu lines
 * 157-171; CALL_V1_LAUNCHER_BLOCK_SIZE the same), then in the launcher the
 * head_size switch (v2.cu lines 102-136; v1's the same). NULL when a kernel
 * exists, else the TORCH_CHECK it fails, as a reason; *input names it.
 */
static const char *dispatch(uint64_t block_size, uint64_t head_size, const char **input)
{
	switch (block_size) {
	case 8:
	case 16:
	case 32:
		break;
	default:
		*input = "page_size";
		return "Unsupported block size: vLLM's paged attention kernels are built for "
		       "block sizes 8, 16 and 32 only (paged_attention_v2.cu "
		       "CALL_V2_LAUNCHER_BLOCK_SIZE; v1 the same)";
	}
	switch (head_size) {
	case 32:
	case 64:
	case 80:
	case 96:
	case 112:
	case 120:
	case 128:
	case 192:
	case 256:
		break;
	default:
		*input = "head_dim";
		return "Unsupported head size: vLLM's paged attention kernels are built for "
		       "head sizes 32, 64, 80, 96, 112, 120, 128, 192 and 256 only "
		       "(paged_attention_v2_launcher; v1 the same)";
	}
	return NULL;
}

/*
 * forward_decode for n sequences whose longest holds max_seq_len tokens,
 * into *a (answered or refused in place), from the shape's heads, head
 * size and block size: the one computation vllm_launch and
 * vllm_launch_batch share (upstream reads no other length). Returns
 * use_v1 (meaningful only when *a is OK).
 */
static bool forward_decode(struct engine_answer *a, const struct engine_shape *s, uint64_t n,
			   uint64_t max_seq_len)
{
	const char *input = NULL;
	const char *why;

	/* xformers.py XFormersImpl.__init__: assert self.num_heads %
	 * self.num_kv_heads == 0 (the kernels only divide). */
	if (s->num_q_heads % s->num_kv_heads != 0) {
		engine_refuse(a, "num_q_heads must be a multiple of num_kv_heads "
			      "(vLLM asserts num_heads % num_kv_heads == 0)",
			      "num_kv_heads");
		return false;
	}

	/* forward_decode, paged_attn.py lines 108-112; max_seq_len is the
	 * decode metadata's max_decode_seq_len, the batch's longest. */
	uint64_t block_size = s->page_size;
	uint64_t num_seqs = n, num_heads = s->num_q_heads, head_size = s->head_dim;
	uint64_t max_num_partitions = ((max_seq_len + PARTITION_SIZE_PY - 1) /
				       PARTITION_SIZE_PY);
	/* lines 120-121 */
	bool use_v1 = (max_seq_len <= 8192
		       && (max_num_partitions == 1 || num_seqs * num_heads > 512));

	engine_term(a, "max_seq_len", max_seq_len);
	engine_term(a, "num_seqs", num_seqs);
	engine_term(a, "num_heads", num_heads);
	engine_term(a, "head_size", head_size);
	engine_term(a, "block_size", block_size);
	engine_term(a, "_PARTITION_SIZE", PARTITION_SIZE_PY);
	engine_term(a, "max_num_partitions", max_num_partitions);
	engine_term(a, "num_seqs * num_heads", num_seqs * num_heads);
	engine_term(a, "use_v1", use_v1 ? 1 : 0);

	if (use_v1) {
		/* Run PagedAttention V1 (lines 123-144): one CTA per
		 * (head, sequence), grid (num_heads, num_seqs, 1), no scratch. */
		why = dispatch(block_size, head_size, &input);
		if (why != NULL) {
			engine_refuse(a, why, input);
			return use_v1;
		}
		a->num_splits = 1;
		a->num_splits_bound = 1;
		a->workspace_bytes = 0;
		return use_v1;
	}

	/* Run PagedAttention V2 (lines 145-181). */
	if (PARTITION_SIZE_PY % block_size != 0) {
		engine_refuse(a, "vLLM's paged attention v2 asserts _PARTITION_SIZE % block_size == 0 "
			      "(512), and its kernels are built for block sizes 8, 16 and 32 only",
			      "page_size");
		return use_v1;
	}
	/* tmp_output: (num_seqs, num_heads, max_num_partitions, head_size) of
	 * output.dtype (bf16, 2 bytes); exp_sums and max_logits:
	 * (num_seqs, num_heads, max_num_partitions) of torch.float32. */
	uint64_t rows, tmp_output_numel, tmp_output_nbytes, exp_sums_nbytes;
	if (!mul_fits(num_seqs * num_heads, max_num_partitions, &rows) ||
	    !mul_fits(rows, head_size, &tmp_output_numel) ||
	    !mul_fits(tmp_output_numel, 2, &tmp_output_nbytes) ||
	    !mul_fits(rows, 4, &exp_sums_nbytes) ||
	    tmp_output_nbytes > TORCH_MAX_NBYTES ||
	    exp_sums_nbytes > TORCH_MAX_NBYTES / 2 ||
	    tmp_output_nbytes > TORCH_MAX_NBYTES - 2 * exp_sums_nbytes) {
		/* Not vLLM's: a tensor over INT64_MAX bytes PyTorch refuses
		 * ("Storage size calculation overflowed"); three whose sum is
		 * over it no device holds. */
		engine_refuse(a, "vLLM's paged attention v2 scratch for this shape exceeds "
			      "2^63-1 bytes, more than torch.empty allocates",
			      "num_seqs");
		return use_v1;
	}
	uint64_t max_logits_nbytes = exp_sums_nbytes; /* torch.empty_like(exp_sums) */
	engine_term(a, "tmp_output.nbytes", tmp_output_nbytes);
	engine_term(a, "exp_sums.nbytes", exp_sums_nbytes);
	engine_term(a, "max_logits.nbytes", max_logits_nbytes);

	/* ops.paged_attention_v2 -> paged_attention_v2_launcher: its own
	 * max_num_partitions = DIVIDE_ROUND_UP(max_seq_len, PARTITION_SIZE)
	 * (v2.cu line 88) is the grid's z (line 93), the same number as
	 * Python's because both partition sizes are 512. */
	why = dispatch(block_size, head_size, &input);
	if (why != NULL) {
		engine_refuse(a, why, input);
		return use_v1;
	}
	engine_term(a, "PARTITION_SIZE", PARTITION_SIZE_CU);
	a->num_splits = (uint32_t)max_num_partitions; /* <= ceil(UINT32_MAX / 512) */
	a->num_splits_bound = a->num_splits;
	a->workspace_bytes = tmp_output_nbytes + exp_sums_nbytes + max_logits_nbytes;
	return use_v1;
}

struct engine_answer vllm_launch(const struct engine_shape *s)
{
	struct engine_answer a;
	struct engine_zero zero;

	engine_answer_init(&a);

	/* Not vLLM's: the inputs every port refuses. vLLM has no num_splits
	 * argument (forward_decode's parameters, paged_attn.py lines 82-99). */
	if (s->num_splits != 0) {
		engine_refuse(&a, NO_NUM_SPLITS, "num_splits");
		return a;
	}
	if (engine_zero_count(s, VLLM_READS, &zero)) {
		engine_refuse(&a, zero.reason, zero.input);
		return a;
	}
	/* Every sequence holds seq_len tokens: the longest is seq_len. */
	(void)forward_decode(&a, s, s->num_seqs, s->seq_len);
	return a;
}

/*
 * The batch's own refusals, in engine_shape's order as vllm_launch's zero
 * counts (num_seqs, the heads, head_dim, then the lengths where seq_len
 * stood, then page_size), the lengths naming seq_lens. Returns true with
 * *z filled when the batch is refused, else false with *longest the
 * batch's longest length.
 */
static bool batch_refused(const struct engine_shape *s, const struct engine_batch *b,
			  struct engine_zero *z, uint32_t *longest)
{
	if (b->num_seqs == 0) {
		z->reason = "num_seqs must be at least 1";
		z->input = "num_seqs";
		return true;
	}
	if (engine_zero_count(s, ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS | ENGINE_IN_HEAD_DIM,
			      z)) {
		return true;
	}
	if (b->num_seqs > ENGINE_MAX_SEQS) {
		z->reason = "a batch holds at most 4096 sequences (ENGINE_MAX_SEQS)";
		z->input = "seq_lens";
		return true;
	}
	if (b->seq_lens == NULL) {
		z->reason = "the batch's seq_lens are missing";
		z->input = "seq_lens";
		return true;
	}
	*longest = 0;
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		if (b->seq_lens[i] == 0) {
			z->reason = "every one of seq_lens must be at least 1";
			z->input = "seq_lens";
			return true;
		}
		/* The kernels read seq_lens as int (attention_kernels.cuh). */
		if (b->seq_lens[i] > ENGINE_MAX_SEQ_LEN) {
			z->reason = "a sequence holds at most 2147483647 tokens (int32 seq_lens)";
			z->input = "seq_lens";
			return true;
		}
		if (b->seq_lens[i] > *longest) {
			*longest = b->seq_lens[i];
		}
	}
	return engine_zero_count(s, ENGINE_IN_PAGE_SIZE, z);
}

struct engine_answer vllm_launch_batch(const struct engine_shape *s, const struct engine_batch *b,
				       uint32_t *by_seq)
{
	struct engine_answer a;
	struct engine_zero zero;
	uint32_t longest = 0;

	engine_answer_init(&a);
	if (b == NULL || by_seq == NULL) {
		engine_refuse(&a, "the batch and its by_seq array must be given", "seq_lens");
		return a;
	}
	if (s->num_splits != 0) {
		engine_refuse(&a, NO_NUM_SPLITS, "num_splits");
		return a;
	}
	if (batch_refused(s, b, &zero, &longest)) {
		engine_refuse(&a, zero.reason, zero.input);
		return a;
	}
	/* max_decode_seq_len is the batch's longest (paged_attn.py reads no
	 * other length; the kernels read each one from seq_lens). */
	bool const use_v1 = forward_decode(&a, s, b->num_seqs, longest);
	if (a.status != ENGINE_OK) {
		return a;
	}
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		/* v1: one CTA per (head, sequence) over its whole length. v2:
		 * paged_attention_kernel returns at once in a partition with
		 * partition_idx * PARTITION_SIZE >= seq_len, and the reduce
		 * kernel merges num_partitions = DIVIDE_ROUND_UP(seq_len,
		 * PARTITION_SIZE) of them (a copy when that is 1): the
		 * sequence's own length decides its split, the longest only
		 * the grid and the scratch. */
		by_seq[i] = use_v1 ? 1
				   : (uint32_t)(((uint64_t)b->seq_lens[i] + PARTITION_SIZE_CU - 1) /
						PARTITION_SIZE_CU);
	}
	return a;
}
