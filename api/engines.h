/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * engines — the engines splitkd answers for: the seed's rule and the four
 * ports in policy/ (fa2, fa3, flashinfer, vllm: engine.h), what each one
 * is and reads, and the one path from a decision's query to an engine's
 * answer (GET and POST /v1/splits, each query of a batch, GET
 * /v1/compare).
 *
 * `engine` absent or `seed` is today's answer, byte for byte: the seed
 * reads none of the other engines' inputs (policy/engine_inputs.h's
 * MODEL and QUERY rows), which is its point. Any other
 * engine answers what that engine, at the upstream commit its port pins,
 * would launch: its split count, its split-K scratch and the
 * intermediates it chose them from; a shape it has no kernel for is a
 * 422 problem naming the input to change.
 *
 * No allocation but the writer's; no state; thread-safe.
 */
#ifndef SPLITKD_ENGINES_H
#define SPLITKD_ENGINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "decide.h"
#include "engine.h"
#include "exchange.h"
#include "jsonw.h"
#include "problem.h"
#include "query.h"
#include "reserve.h"

/* ENGINES_SEED is Atlas's rule, the seed's (engine=atlas, or its alias
 * seed); ENGINES_VLLM is vLLM V1's FLASH_ATTN backend, ENGINES_VLLM_V0 the
 * paged attention V0 ran, since removed upstream. */
enum engines_id {
	ENGINES_SEED,
	ENGINES_FA2,
	ENGINES_FA3,
	ENGINES_FLASHINFER,
	ENGINES_VLLM,
	ENGINES_VLLM_V0,
	ENGINES_VLLM_TRITON,
	ENGINES_SGLANG,
	ENGINES_TRTLLM,
	ENGINES_FLASHMLA,
	ENGINES_COUNT
};

/* What an engine is, from its port's header (policy/<port>.h). Lists are
 * space-separated words; the seed's repository is NULL (its source is the
 * seed file itself). */
struct engines_info {
	const char *name, *title, *repository, *commits, *files, *functions;
	unsigned reads;     /* enum engine_input bits its answer reads */
	unsigned gpu_reads; /* of those, the ones only a running GPU knows */
	/* its page_size where the query gives none: the upstream's default
	 * (0: the engine reads none) */
	uint32_t page_size;
	/* a sentence every answer of it carries among its warnings, or NULL */
	const char *note;
};

/* The largest compute_capability taken (major * 10 + minor: 99.9). */
#define ENGINES_MAX_COMPUTE_CAPABILITY CATALOG_MAX_COMPUTE_CAPABILITY

/* The seed's engine's other name, which answers as it does. */
#define ENGINES_SEED_ALIAS "seed"

/* The longest name of a term a port gives (engine_answer.terms): each is
 * plain JSON text, no quote, backslash or control byte. */
#define ENGINES_TERM_NAME_MAX 48

/* The longest engine name and input name a warning names. */
#define ENGINES_WARNING_MAX 64

/* The engine's row; NULL past the end. */
const struct engines_info *engines_info(enum engines_id id);

/* The engine a query names (q->engine), ENGINES_SEED when it names none.
 * Returns 0, or -1 with a 404 unknown-engine problem and its did-you-mean. */
int engines_find(const struct query *q, enum engines_id *out, struct problem *p);

/* The KV heads a query asks with: its num_kv_heads, else its catalog
 * model's; 0 when neither says (num_q_heads given alone, or a model
 * without them). */
uint32_t engines_kv_heads(const struct query *q, const struct decision *d);

/* The shape a decision's query asks of engine `id` (not the seed), with
 * the defaults filled (num_kv_heads the model's, the others their row's in
 * engine_inputs.h), and
 * `num_splits` as the engine's own argument (0: its heuristic). Returns
 * 0, or -1 with a missing-parameter problem for an input the engine needs
 * and the query does not give (seq_len; num_kv_heads and head_dim where
 * the model does not say them; a GPU value such as blocks_per_sm). */
int engines_shape(enum engines_id id, const struct query *q, const struct decision *d,
		  uint32_t num_splits, struct engine_shape *out, struct problem *p);

/* The 422 problem of an engine's refusal (a->status ENGINE_REFUSED).
 * Returns -1. */
int engines_refused(enum engines_id id, const struct engine_answer *a, struct problem *p);

/* Writes one engine's answer object for shape s, decision d (the target,
 * model and catalog it was asked of) and its launch a (ENGINE_OK), with
 * each sequence's count (by_seq, d->by_seq_n of them) where the decision
 * is a mixed batch's (seq_lens). */
void engines_write(struct jsonw *w, enum engines_id id, const struct query *q,
		   const struct decision *d, const struct engine_shape *s,
		   const struct engine_answer *a, const uint32_t *by_seq,
		   const struct catalog *cat);

/* The engine-only inputs (enum engine_input bits) query q gives that
 * engine `id` does not read on the path q takes: each is a warning in its
 * answer. */
unsigned engines_unread(enum engines_id id, const struct query *q);

/* The inputs engine `id` reads on the path query q takes (FlashInfer's
 * tensor-core plan reads no occupancy figure). */
unsigned engines_reads(enum engines_id id, const struct query *q);

/*
 * The answer to a decision's query that names an engine (q->engine set),
 * after decide_run has read the target, model and catalog into d: 1 when
 * the engine is the seed (the caller answers as it always has); 0 with
 * the engine's answer written to w; -1 with the problem filled (an
 * unknown engine, a `fields` list (`fields` true: the query's or its
 * batch's), which cuts the seed's answer only, a
 * missing input, a refusal). Called only when q->engine is set, so a
 * query without it pays one test.
 */
int engines_answer(const struct api_context *ctx, struct jsonw *w, const struct query *q,
		   const struct decision *d, const struct catalog *cat, bool fields,
		   struct problem *p);

/*
 * The launch of the engine a decision's query names, without writing it:
 * 1 when it names the seed (or none); 0 with *id, *s and *a filled; -1
 * with the problem (an unknown engine, a `fields` list when `fields` is
 * true, which cuts the seed's answer only, a missing input, a refusal). Each
 * launch is counted (engines_count); a mixed batch's counts go to by_seq
 * (room for ENGINE_MAX_SEQS). engines_answer is this and the writer; OFREP
 * answers its flags from it.
 */
int engines_decide(const struct api_context *ctx, const struct query *q, const struct decision *d,
		   bool fields, enum engines_id *id, struct engine_shape *s,
		   struct engine_answer *a, uint32_t *by_seq, struct problem *p);

/*
 * The launch of engine `id` (not the seed) for a query's batch, shape s:
 * its seq_lens when given, each sequence's count written to by_seq (room
 * for ENGINE_MAX_SEQS), else num_seqs sequences of seq_len, through the
 * port's batch path where a setting only that path reads is set
 * (FlashInfer's tensor_cores, fixed_split_size, disable_split_kv).
 */
struct engine_answer engines_launch_query(enum engines_id id, const struct query *q,
					  const struct engine_shape *s, uint32_t *by_seq);

/* The port's launch over mixed batch b (engine.h), each sequence's count
 * to by_seq; a refusal naming seq_lens where the port has none. */
struct engine_answer engines_launch_batch(enum engines_id id, const struct engine_shape *s,
					  const struct engine_batch *b, uint32_t *by_seq);

/* The path an engine's launch took, as the metrics count it. */
enum engines_path {
	ENGINES_PATH_UNIFORM,      /* num_seqs sequences of seq_len */
	ENGINES_PATH_MIXED,        /* seq_lens */
	ENGINES_PATH_TENSOR_CORES, /* FlashInfer's tensor-core plan, either batch */
	ENGINES_PATH_RESERVE,      /* reserve: the worst case over every batch */
	ENGINES_PATH_COUNT
};

/* A path's name ("uniform", "mixed", "tensor_cores", "reserve"). */
const char *engines_path_name(enum engines_path path);

/* Reports an engine's launch (answered, or refused) to ctx->on_engine. */
void engines_count(const struct api_context *ctx, enum engines_id id, enum engines_path path,
		   const struct engine_answer *a);

/* The port's launch for shape s (id not the seed). */
struct engine_answer engines_launch(enum engines_id id, const struct engine_shape *s);

/* The names of the inputs in `bits` (enum engine_input), as a JSON array. */
void engines_write_inputs(struct jsonw *w, unsigned bits);

/* An input a query gives for the other engines only (engine_inputs.h's
 * MODEL and QUERY rows): its name, what it is, its kind, its bounds and
 * its default (0: none; a MODEL row's is the catalog model's). */
struct engines_param {
	const char *name, *about;
	enum { ENGINES_PARAM_U32, ENGINES_PARAM_BOOL, ENGINES_PARAM_CHOICE } kind;
	uint32_t min, max, dflt;
	unsigned index; /* enum engine_input_index: a CHOICE's words (choice.h) */
	unsigned bit;    /* enum engine_input */
	bool from_query; /* a QUERY row: the query's or its default, no catalog's */
	bool from_catalog; /* absent, the catalog's (compute_capability, max_model_len) */
	bool option;     /* an OPTION row: said only where set (engine_inputs.h) */
	size_t offset;   /* of its member in struct query */
};

/* Every such input, in the table's order: *n of them, static. */
const struct engines_param *engines_params(size_t *n);

/* Whether query q gives input x. */
bool engines_given(const struct engines_param *x, const struct query *q);

/* Writes "name": and the value query q gives input x (a from_query
 * one): its own, else its default, else null. */
void engines_write_given(struct jsonw *w, const struct engines_param *x, const struct query *q);

/*
 * The reserve (a query's `reserve`, GET /v1/reserve; issue 51): the
 * largest split-K scratch engine `id` launches for any decode batch of
 * 1..max_batch_size sequences of 1..max_model_len tokens, the batch that
 * reaches it and how it was found (policy/reserve.h). The seed's reserve
 * is its own answer: the arena at max_rows.
 */
struct engine_reserve {
	struct reserve_answer answer;
	uint32_t max_batch_size, max_model_len;
	uint32_t witness[ENGINE_MAX_SEQS]; /* answer.witness_len of them */
	uint32_t by_seq[ENGINE_MAX_SEQS];  /* the witness's counts */
};

/* The port's reserve for shape s (reserve_worst with the engine's options
 * from the shape), witness and by_seq max_batch_size long. */
struct reserve_answer engines_reserve(enum engines_id id, const struct engine_shape *s,
				      uint32_t max_batch_size, uint32_t max_model_len,
				      uint32_t *witness, uint32_t *by_seq);

/* A reserve's bounds: max_batch_size 1..ENGINE_MAX_SEQS, max_model_len
 * 1..ENGINE_MAX_SEQ_LEN (0: missing), and a seq_lens the query gives
 * within both. 0, or -1 with a 400 naming the bound. */
int engines_reserve_bounds(enum engines_id id, const struct query *q, const struct decision *d,
			   uint32_t max_batch_size, uint32_t max_model_len, struct problem *p);

/* Engine id's reserve for query q (its shape to s, max_model_len the
 * query's or the catalog model's) over batches of max_batch_size at most:
 * 0 with *r, or -1 with the problem (a missing input, a bound, a refusal:
 * 422 naming the input, as the search's cap is). */
int engines_reserve_query(enum engines_id id, const struct query *q, const struct decision *d,
			  uint32_t max_batch_size, struct engine_shape *s, struct engine_reserve *r,
			  struct problem *p);

/* Writes a reserve's answer object (r->answer ENGINE_OK). */
void engines_write_reserve(struct jsonw *w, enum engines_id id, const struct query *q,
			   const struct decision *d, const struct engine_shape *s,
			   const struct engine_reserve *r, const struct catalog *cat);

#endif /* SPLITKD_ENGINES_H */
