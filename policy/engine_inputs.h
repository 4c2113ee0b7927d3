/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * engine_inputs — the one table of what an engine port is asked with: a
 * row per member of struct engine_shape (engine.h). From it come the
 * struct, enum engine_input's bits, engine_zero_count's refusals, and,
 * through api/vocab.h, everything the daemon does with an engine's input:
 * the query parameter and its parsers, the mapping from a query to a
 * shape (api/engines.c), the answer's members, GET /v1/engines' `inputs`
 * and `reads`, the explanation's `unread`. A new engine input is a row
 * here and the port that reads it (docs/DEVELOPING.md, "A new input").
 *
 * Here, in the pure core, because the struct is the core's: policy/ is
 * compiled with -Ipolicy alone and includes nothing of api/, so api/
 * takes its rows from this table and never the other way round.
 * Only macros: no code, no data.
 */
#ifndef ENGINE_INPUTS_H
#define ENGINE_INPUTS_H

#include <stdint.h>

/*
 * ENGINE_INPUTS(X, A): every input, as X(A, ENUM, name, kind, from, bounds,
 * zero, about), in struct engine_shape's order (which is also the order
 * engine_zero_count refuses in: a new row goes at the end). A is handed to
 * every row untouched, so a table built from this one (api/vocab.h) can
 * pass its own row macro through.
 *  - kind: U32 or BOOL (the query's kinds, api/vocab.h), or CHOICE: one of
 *    the words ENGINE_CHOICES_<ENUM> lists, given by name (the query's
 *    NAME kind) and held in the shape as its index, bounds (0, the last
 *    index, the default's index, 0).
 *  - from: where the daemon takes it. DECISION: the seed's decision, which
 *    resolves it from the catalog and the query (its query parameter is
 *    api/vocab.h's own row); MODEL: the query's, else the catalog model's;
 *    QUERY: an engine-only query parameter, the default when absent;
 *    OPTION: one of a setting that changes a port's path (FlashInfer's
 *    tensor-core plan), taken as QUERY is, which an answer says only
 *    where it is set and the engine reads it (so an answer that does not
 *    use the setting is the same bytes it was before the row); ARG: the
 *    caller's argument (a route's), never a parameter.
 *  - bounds: (min, max, default, 0) of a given value, the shape of
 *    api/vocab.h's bounds; a default of 0 is none: the value is 0 when
 *    not given, a port that reads it asks for it (api/engines.c) and an
 *    answer says null. A DECISION row's are its api/vocab.h row's.
 *  - zero: ZERO_REFUSED, a port that reads it refuses 0 before anything
 *    else (engine_zero_count); ZERO_OWN, 0 means something or the port
 *    words its own refusal.
 *  - about: what it is, in a few words: GET /v1/engines says it, and an
 *    engine that needs an input the query leaves out gives it as why.
 */
#define ENGINE_INPUTS(X, A)                                                                   \
	X(A, SM_COUNT, sm_count, U32, DECISION, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,          \
	  "the device's multiprocessors")                                                 \
	X(A, NUM_SEQS, num_seqs, U32, DECISION, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,          \
	  "sequences in the batch (the co-batch)")                                        \
	X(A, NUM_Q_HEADS, num_q_heads, U32, DECISION, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,    \
	  "query heads")                                                                  \
	X(A, NUM_KV_HEADS, num_kv_heads, U32, MODEL, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,     \
	  "KV heads; num_q_heads % num_kv_heads == 0")                                    \
	X(A, HEAD_DIM, head_dim, U32, DECISION, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,          \
	  "head size, for Q, K and V alike")                                              \
	X(A, SEQ_LEN, seq_len, U32, QUERY, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,               \
	  "the tokens of KV each sequence holds")                                         \
	X(A, PAGE_SIZE, page_size, U32, QUERY, (1, UINT32_MAX, 0, 0), ZERO_REFUSED,           \
	  "tokens per KV page (vLLM: its block size); absent: each engine's own "         \
	  "(GET /v1/engines: page_size)")                                                 \
	X(A, BLOCKS_PER_SM, blocks_per_sm, U32, QUERY, (1, UINT32_MAX, 0, 0), ZERO_OWN,       \
	  "the decode kernel's CTAs per SM, which the engine asks "                       \
	  "cudaOccupancyMaxActiveBlocksPerMultiprocessor at run time; splitkd never "     \
	  "guesses it")                                                                   \
	X(A, CUDA_GRAPH, cuda_graph, BOOL, QUERY, (0, 1, 0, 0), ZERO_OWN,                     \
	  "FlashInfer's padded plan, as under CUDA graphs")                               \
	X(A, NUM_SPLITS, num_splits, U32, ARG, (0, UINT32_MAX, 0, 0), ZERO_OWN,               \
	  "the engine's own num_splits argument (FA2, FA3): 0, its heuristic decides")    \
	X(A, TENSOR_CORES, tensor_cores, BOOL, OPTION, (0, 1, 0, 0), ZERO_OWN,                \
	  "FlashInfer's tensor-core decode plan (use_tensor_cores=True, planned as a "    \
	  "prefill), the path vLLM and SGLang take")                                      \
	X(A, FIXED_SPLIT_SIZE, fixed_split_size, U32, OPTION, (1, UINT32_MAX, 0, 0), ZERO_OWN, \
	  "FlashInfer's fixed_split_size, in pages, on the tensor-core plan (SGLang's "   \
	  "deterministic inference sets it); absent: the plan chooses")                   \
	X(A, DISABLE_SPLIT_KV, disable_split_kv, BOOL, OPTION, (0, 1, 0, 0), ZERO_OWN,        \
	  "FlashInfer's disable_split_kv on the tensor-core plan: no split")                 \
	X(A, COMPUTE_CAPABILITY, compute_capability, U32, OPTION, (1, UINT32_MAX, 0, 0), ZERO_OWN,   \
	  "the GPU's compute capability as major * 10 + minor (90 for 9.0, as vLLM's "     \
	  "DeviceCapability.to_int()); absent: the catalog target's")                      \
	X(A, CUDAGRAPH_MODE, cudagraph_mode, CHOICE, OPTION, (0, 3, 0, 0), ZERO_OWN,          \
	  "vLLM's CompilationConfig.cudagraph_mode: full_and_piecewise (its default), "   \
	  "none, piecewise or full_decode_only")                                           \
	X(A, MAX_CAPTURE_SIZE, max_capture_size, U32, OPTION, (1, UINT32_MAX, 0, 0), ZERO_OWN,     \
	  "vLLM's max_cudagraph_capture_size, the largest batch a graph is captured for; "  \
	  "absent: 512")                                                                   \
	X(A, BATCH_INVARIANT, batch_invariant, BOOL, OPTION, (0, 1, 0, 0), ZERO_OWN,          \
	  "vLLM's VLLM_BATCH_INVARIANT=1: one split whatever the batch")                    \
	X(A, MAX_MODEL_LEN, max_model_len, U32, OPTION, (1, UINT32_MAX, 0, 0),        \
	  ZERO_OWN,                                                                        \
	  "the serve's context length (vLLM's max_model_len, SGLang's --context-length): "  \
	  "what vLLM's FA2 full graphs are captured with and what sizes SGLang's "          \
	  "deterministic scratch; a longer sequence is refused")                           \
	X(A, MAX_KV_SPLITS, max_kv_splits, U32, OPTION, (1, UINT32_MAX, 0, 0), ZERO_OWN,           \
	  "SGLang's --triton-attention-num-kv-splits, its most splits; absent: 8")          \
	X(A, DETERMINISTIC, deterministic, BOOL, OPTION, (0, 1, 0, 0), ZERO_OWN,              \
	  "SGLang's --enable-deterministic-inference; TensorRT-LLM's FORCE_DETERMINISTIC=1") \
	X(A, HEAD_DIM_V, head_dim_v, U32, OPTION, (1, UINT32_MAX, 0, 0), ZERO_OWN,            \
	  "FlashMLA's V head size (DeepSeek-V3's 512, the only one it runs); absent: 512")

/* The most sequences one mixed batch may list (seq_lens, struct
 * engine_batch), and the longest a sequence may be: the engines keep
 * lengths in int32. Here, beside the inputs' table, since api/vocab.h
 * bounds its seq_lens row with them. */
#define ENGINE_MAX_SEQS 4096u
#define ENGINE_MAX_SEQ_LEN 2147483647u

/* A row's bounds, unpacked: ENGINE_BOUND_MIN((1, 2, 3, 4)) is 1. */
#define ENGINE_BOUND_MIN_(min, max, dflt, len) min
#define ENGINE_BOUND_MAX_(min, max, dflt, len) max
#define ENGINE_BOUND_DEFAULT_(min, max, dflt, len) dflt
#define ENGINE_BOUND_LEN_(min, max, dflt, len) len
#define ENGINE_BOUND_MIN(b) ENGINE_BOUND_MIN_ b
#define ENGINE_BOUND_MAX(b) ENGINE_BOUND_MAX_ b
#define ENGINE_BOUND_DEFAULT(b) ENGINE_BOUND_DEFAULT_ b
#define ENGINE_BOUND_LEN(b) ENGINE_BOUND_LEN_ b

/* The C type of a kind's member in struct engine_shape. */
#define ENGINE_TYPE_U32 uint32_t
#define ENGINE_TYPE_BOOL bool
#define ENGINE_TYPE_CHOICE uint32_t

/* A CHOICE row's words, in the order of their index (the upstream enum's:
 * vllm_v1.h and vllm_triton.h number cudagraph_mode so). */
#define ENGINE_CHOICES_CUDAGRAPH_MODE "full_and_piecewise", "none", "piecewise", "full_decode_only"

#endif /* ENGINE_INPUTS_H */
