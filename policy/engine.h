/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * engine — the shape of one paged decode launch and the answer every
 * engine port gives for it (policy/fa2.h, fa3.h, flashinfer.h, vllm.h).
 *
 * Each port answers what that engine, at the upstream commit its header
 * pins, would launch for one decode step in which every sequence holds
 * `seq_len` tokens of KV: its split count, its split-K scratch in bytes,
 * and the intermediates the choice was made of. A shape the engine has no
 * kernel for is refused with a static reason, never answered by a guess.
 *
 * Same promise as the seed's core (splitk.h): no allocation, no I/O, no
 * locale, no state; every function is pure and thread-safe. Term names
 * and refusal texts are static strings.
 *
 * This header holds types, constants and the few inline helpers every
 * port shares (the answer's start, its terms, a refusal, the zero-count
 * refusal), so a port includes it (and through it engine_inputs.h, the
 * table of the shape's inputs) and nothing else of ours.
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_inputs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One decode launch, a member an input (engine_inputs.h, where each row
 * says what it is). Every count is as the engine would see it; 0 where a
 * count must be at least 1 is refused by the port (ENGINE_REFUSED), never
 * raised. */
#define ENGINE_SHAPE_MEMBER(a, e, name, kind, from, bounds, zero, about) \
	ENGINE_TYPE_##kind name;
struct engine_shape {
	ENGINE_INPUTS(ENGINE_SHAPE_MEMBER, ~)
};
#undef ENGINE_SHAPE_MEMBER

/* Each input's place in the table: ENGINE_INDEX_SEQ_LEN, ... */
#define ENGINE_INDEX_ROW(a, e, name, kind, from, bounds, zero, about) ENGINE_INDEX_##e,
enum engine_input_index { ENGINE_INPUTS(ENGINE_INDEX_ROW, ~) ENGINE_INPUTS_COUNT };
#undef ENGINE_INDEX_ROW

/* The inputs a port reads, as bits: each port's header defines
 * <PORT>_READS and <PORT>_GPU_READS (the subset only a GPU knows at run
 * time, which a caller must give and the port never guesses), so a
 * listing of engines says what each one reads without a second copy. */
#define ENGINE_BIT_ROW(a, e, name, kind, from, bounds, zero, about) \
	ENGINE_IN_##e = 1u << ENGINE_INDEX_##e,
enum engine_input { ENGINE_INPUTS(ENGINE_BIT_ROW, ~) };
#undef ENGINE_BIT_ROW

/* The bits are an enum's, so an int's: a 32nd row would not fit. */
#define ENGINE_INPUTS_FIT "engine_inputs.h: more rows than enum engine_input holds"
#ifdef __cplusplus
static_assert(ENGINE_INPUTS_COUNT <= 31, ENGINE_INPUTS_FIT);
#else
_Static_assert(ENGINE_INPUTS_COUNT <= 31, ENGINE_INPUTS_FIT);
#endif

#define ENGINE_TERMS_MAX 16

/* ENGINE_MAX_SEQS and ENGINE_MAX_SEQ_LEN: engine_inputs.h. */

/*
 * One mixed decode batch: sequence i holds seq_lens[i] tokens of KV (this
 * step's included), 1..ENGINE_MAX_SEQ_LEN, for i < num_seqs
 * (1..ENGINE_MAX_SEQS). A port's <port>_launch_batch reads it in place of
 * the shape's num_seqs and seq_len, and writes each sequence's split count
 * (what that sequence's attention is split into in this launch) to a
 * caller's array of num_seqs. With every length equal to L its answer is
 * the port's <port>_launch answer for num_seqs sequences of L, exactly.
 */
struct engine_batch {
	const uint32_t *seq_lens;
	uint32_t num_seqs;
};

/* One intermediate of the choice, by the upstream's own name where it has
 * one ("num_m_blocks", "padded_batch_size", ...). */
struct engine_term {
	const char *name; /* static */
	uint64_t value;
};

enum engine_status { ENGINE_OK = 0, ENGINE_REFUSED = 1 };

struct engine_answer {
	enum engine_status status;
	/* The split count the launch runs: for FA3 the per-batch split, for
	 * vLLM its partitions (1 for v1). */
	uint32_t num_splits;
	/* FA3: the host heuristic's count, which sizes its accumulators and
	 * bounds the per-batch split; every other engine: num_splits. */
	uint32_t num_splits_bound;
	/* The split-K scratch in bytes (0 where the launch needs none). */
	uint64_t workspace_bytes;
	/* Refused: why, and the input to change (static strings). */
	const char *refused;
	const char *refused_input;
	unsigned n_terms;
	struct engine_term terms[ENGINE_TERMS_MAX];
};

/* An answer before a port fills it: OK, no split, no scratch, no term.
 * Member by member, not by an initializer or a struct copy, which a
 * compiler may make a memset or memcpy call the pure core may not make. */
static inline void engine_answer_init(struct engine_answer *a)
{
	a->status = ENGINE_OK;
	a->num_splits = 0;
	a->num_splits_bound = 0;
	a->workspace_bytes = 0;
	a->refused = NULL;
	a->refused_input = NULL;
	a->n_terms = 0;
}

/* Adds an intermediate under its upstream name; past ENGINE_TERMS_MAX
 * the rest are left out. */
static inline void engine_term(struct engine_answer *a, const char *name, uint64_t value)
{
	if (a->n_terms < ENGINE_TERMS_MAX) {
		a->terms[a->n_terms].name = name;
		a->terms[a->n_terms].value = value;
		a->n_terms++;
	}
}

/* Refuses *a in place: no split, no scratch, the reason and the input
 * to change (static strings); the terms found so far stay. */
static inline void engine_refuse(struct engine_answer *a, const char *why, const char *input)
{
	a->status = ENGINE_REFUSED;
	a->num_splits = 0;
	a->num_splits_bound = 0;
	a->workspace_bytes = 0;
	a->refused = why;
	a->refused_input = input;
}

/* A refusal by value, for a port that returns its answer at each check. */
static inline struct engine_answer engine_refused(const char *why, const char *input)
{
	struct engine_answer a;

	engine_answer_init(&a);
	engine_refuse(&a, why, input);
	return a;
}

/* A count a port needs at least 1 of and was given 0 of: the reason and
 * the input to change (static strings). */
struct engine_zero {
	const char *reason, *input;
};

/*
 * The first count among `reads` (enum engine_input bits) that is 0, in
 * engine_shape's order: every port refuses it before anything else it
 * checks (upstream would divide by zero or launch nothing). Returns true
 * with *z filled, or false when every count it reads is at least 1.
 */
#define ENGINE_ZERO_ZERO_REFUSED(e, name)                           \
	if ((reads & ENGINE_IN_##e) && s->name == 0) {               \
		z->reason = #name " must be at least 1";             \
		z->input = #name;                                    \
		return true;                                         \
	}
#define ENGINE_ZERO_ZERO_OWN(e, name)
#define ENGINE_ZERO_ROW(a, e, name, kind, from, bounds, zero, about) ENGINE_ZERO_##zero(e, name)
static inline bool engine_zero_count(const struct engine_shape *s, unsigned reads,
				     struct engine_zero *z)
{
	ENGINE_INPUTS(ENGINE_ZERO_ROW, ~)
	return false;
}
#undef ENGINE_ZERO_ROW
#undef ENGINE_ZERO_ZERO_OWN
#undef ENGINE_ZERO_ZERO_REFUSED

/*
 * The checks a port makes of a mixed batch before anything of its own, in
 * engine_shape's order with the batch in place of num_seqs and seq_len:
 * sm_count among `reads` (enum engine_input bits) at 0, no sequence, the
 * head counts and head_dim among `reads` at 0, more than ENGINE_MAX_SEQS
 * sequences, no lengths, a length of 0 or past ENGINE_MAX_SEQ_LEN, then
 * page_size among `reads` at 0 (engine_zero_count's texts). Returns true
 * with *z filled when the batch is refused, false when every check holds.
 */
static inline bool engine_batch_refused(const struct engine_shape *s,
					const struct engine_batch *b, unsigned reads,
					struct engine_zero *z)
{
	if (engine_zero_count(s, reads & ENGINE_IN_SM_COUNT, z)) {
		return true;
	}
	if (b->num_seqs == 0) {
		z->reason = "num_seqs must be at least 1";
		z->input = "num_seqs";
		return true;
	}
	if (engine_zero_count(s,
			      reads & (ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_NUM_KV_HEADS |
				       ENGINE_IN_HEAD_DIM),
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
	for (uint32_t i = 0; i < b->num_seqs; i++) {
		if (b->seq_lens[i] == 0) {
			z->reason = "seq_len must be at least 1";
			z->input = "seq_lens";
			return true;
		}
		if (b->seq_lens[i] > ENGINE_MAX_SEQ_LEN) {
			z->reason = "a sequence holds at most 2147483647 tokens (int32)";
			z->input = "seq_lens";
			return true;
		}
	}
	return engine_zero_count(s, reads & ENGINE_IN_PAGE_SIZE, z);
}

#ifdef __cplusplus
}
#endif

#endif /* ENGINE_H */
