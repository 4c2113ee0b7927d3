/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * reserve — what a scheduler must reserve for one serve (issue 51): the
 * largest split-K scratch (workspace_bytes) an engine port answers for any
 * decode batch of 1..max_batch_size sequences of 1..max_model_len tokens
 * each, one batch that reaches it, and how that was found.
 *
 * Every figure comes from the ports themselves (policy/<port>.h): reserve.c
 * launches candidate batches through each port's *_launch_batch and keeps
 * the largest answered one. Which candidates suffice is proven per engine
 * in reserve.c, from what the port's scratch depends on:
 *  - RESERVE_MONOTONE: the scratch never falls as the batch grows or its
 *    sequences lengthen (or depends on the batch size alone), so the
 *    largest batch is the worst;
 *  - RESERVE_SEARCH: it does fall somewhere (a heuristic that stops
 *    splitting, a kernel chosen by size), so an exact search runs over the
 *    classes of batches the scratch can tell apart, with a proven bound on
 *    them and a cap on its work (RESERVE_WORK_MAX);
 *  - RESERVE_BOUND: it depends on the mix; a proven upper bound and a batch
 *    built to reach it (FlashInfer's plans without a CUDA graph);
 *  - RESERVE_FIXED: the upstream allocates one buffer whatever the batch
 *    (vLLM's Triton attention's segment buffers, SGLang's and FlashInfer's
 *    CUDA-graph buffers): the answer is that buffer.
 * A batch a port refuses needs no scratch and is not counted; a reserve is
 * refused where no batch within the bounds is answered, where a candidate
 * the proof needs is refused (never a maximum over the rest, which could
 * be a guess), or where the search would pass its cap.
 *
 * By engine (reserve.c has each proof):
 *   FA2              search over batch sizes and page counts (monotone
 *                    when num_splits is given)
 *   FA3              monotone in the batch size and the longest
 *   FlashInfer       CUDA cores: bound, or fixed under a CUDA graph;
 *                    tensor cores: bound, monotone under a graph or with
 *                    fixed_split_size, a search with both, 0 with
 *                    disable_split_kv
 *   vLLM v0          search over batch sizes at max_model_len
 *   vLLM V1          search over batch sizes and KV-block classes
 *   Triton attention fixed
 *   SGLang           monotone in the batch size, fixed under a CUDA graph
 *   TensorRT-LLM     search over batch sizes and classes of longest / 128;
 *                    the most one XQA launch uses, which the workspace
 *                    TensorRT-LLM sizes at build time holds (that figure is
 *                    not a port yet); batches it hands to masked MHA are
 *                    refused by the port and not counted
 *   FlashMLA         monotone in the batch size
 * The expected work: a monotone, bound or fixed answer is a few launches
 * (at most a few times max_batch_size batch entries); a search is up to
 * RESERVE_WORK_MAX entries, about 0.1 s, and Llama-3.1-8B on an H100 at
 * 64 sequences of 32k tokens takes at most 0.1 million (a few ms).
 *
 * The unit is always the bytes of one attention layer's launch; every
 * engine here either frees its scratch when the layer's call returns (the
 * next layer reuses it through PyTorch's caching allocator) or holds one
 * buffer all layers share, so none multiplies it by the layers
 * (layers_multiply false; `layers` says which, from the port's header).
 *
 * What it never does: allocate, perform I/O or keep state. reserve_worst
 * writes only the caller's witness and scratch_by_seq arrays and returns
 * its answer by value; it is pure and thread-safe. Every string in an
 * answer is static.
 */
#ifndef RESERVE_H
#define RESERVE_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine ports a reserve is asked of, and the options each takes
 * (reserve_worst's `options`). */
enum reserve_engine {
	RESERVE_FA2 = 0,     /* fa2_launch_batch; options unread (NULL) */
	RESERVE_FA3,         /* fa3_launch_batch; options unread (NULL) */
	RESERVE_FLASHINFER,  /* flashinfer_launch_batch; struct flashinfer_options */
	RESERVE_VLLM,        /* vllm_launch_batch (v0 paged attention); unread */
	/* vllm_v1_launch_batch; struct vllm_v1_options, whose max_model_len,
	 * when 0, is taken as the reserve's: a serve's full CUDA graphs are
	 * captured at its own max_model_len */
	RESERVE_VLLM_V1,
	RESERVE_VLLM_TRITON, /* vllm_triton_launch_batch; struct vllm_triton_options */
	RESERVE_SGLANG,      /* sglang_launch_batch; struct sglang_options */
	RESERVE_TRTLLM,      /* trtllm_launch_batch; struct trtllm_options */
	RESERVE_FLASHMLA,    /* flashmla_launch_batch; struct flashmla_options */
	RESERVE_ENGINES
};

enum reserve_method {
	RESERVE_MONOTONE = 0,
	RESERVE_SEARCH = 1,
	RESERVE_BOUND = 2,
	RESERVE_FIXED = 3,
};

/* The most batch entries (sequences, summed over every launch) one search
 * may hand the ports: about a tenth of a second of launches. A reserve
 * that would pass it is refused, naming max_batch_size. */
#define RESERVE_WORK_MAX (1u << 25)

struct reserve_answer {
	enum engine_status status;
	/* The largest workspace_bytes of an answered batch within the bounds:
	 * the port's own answer for the witness. */
	uint64_t workspace_bytes;
	/* The witness: witness[0..witness_len) (the caller's array), and the
	 * port's answer for it (its by_seq in scratch_by_seq). The port's
	 * terms are not copied: launch the witness again for them. */
	uint32_t witness_len;
	uint32_t num_splits;
	uint32_t num_splits_bound;
	enum reserve_method method;
	const char *method_name; /* "monotone", "search", "bound", "fixed" */
	const char *basis;       /* why that method holds for this engine */
	const char *unit;        /* what the bytes are */
	bool layers_multiply;    /* false for every engine here */
	const char *layers;      /* how layers hold it, as the engine allocates */
	uint64_t work;           /* batch entries launched to find it */
	/* Refused: why, and the input to change. */
	const char *refused;
	const char *refused_input;
};

/*
 * The reserve of engine e for the model and GPU *s (its num_seqs and
 * seq_len are ignored; every other member is read as the port reads it),
 * under the port's options (see enum reserve_engine; NULL: its defaults),
 * over every batch of 1..max_batch_size sequences (at most
 * ENGINE_MAX_SEQS) of 1..max_model_len tokens (at most ENGINE_MAX_SEQ_LEN).
 *
 * witness and scratch_by_seq are the caller's, each max_batch_size long;
 * both are used as scratch during the search. On OK, witness holds the
 * batch that reaches the reserve (witness_len entries) and scratch_by_seq
 * the port's by_seq for it.
 *
 * Refuses (status ENGINE_REFUSED, refused and refused_input static): a
 * NULL s, witness or scratch_by_seq ("witness"); an engine out of the
 * enum ("engine"); max_batch_size 0 or above ENGINE_MAX_SEQS
 * ("max_batch_size"); max_model_len 0 or above ENGINE_MAX_SEQ_LEN
 * ("max_model_len"); a search that would pass RESERVE_WORK_MAX
 * ("max_batch_size"); a bound reserve.c cannot prove for the shape
 * (FlashInfer's CUDA-core plan where its uint32_t products may wrap:
 * "max_model_len"); and where the port refuses every candidate the proof
 * needs, the port's own reason and input.
 */
struct reserve_answer reserve_worst(enum reserve_engine e, const struct engine_shape *s,
				    const void *options, uint32_t max_batch_size,
				    uint32_t max_model_len, uint32_t *witness,
				    uint32_t *scratch_by_seq);

#ifdef __cplusplus
}
#endif

#endif /* RESERVE_H */
