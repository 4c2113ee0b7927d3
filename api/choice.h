/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * choice — the engine inputs given by a word (policy/engine_inputs.h's
 * CHOICE rows, as cudagraph_mode): each row's words, a word's index, and
 * the check every decision makes of the words a query gives, so a word no
 * engine takes is a 400 whichever engine answers (the seed too, which
 * reads none of them, as it refuses a count that does not parse).
 *
 * No allocation, no state; thread-safe.
 */
#ifndef SPLITKD_CHOICE_H
#define SPLITKD_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "problem.h"
#include "query.h"

/* The words of input `input` (enum engine_input_index), in their index's
 * order; NULL for an input that is not a CHOICE. Static. */
const char *const *choice_words(unsigned input);

/* Word `index` of input `input` (a CHOICE), or "" past its words. */
const char *choice_word(unsigned input, uint32_t index);

/* The index of the word *v gives for input `input` (its row's default
 * when absent): 0 with *out, or -1 with a 400 invalid-parameter naming the
 * words and the nearest. */
int choice_index(const struct slice *v, unsigned input, uint32_t *out, struct problem *p);

/* Whether query q gives any CHOICE input: a test per CHOICE row. */
#define CHOICE_GIVEN_U32(q, name) false
#define CHOICE_GIVEN_BOOL(q, name) false
#define CHOICE_GIVEN_CHOICE(q, name) (q)->name.p != NULL
#define CHOICE_GIVEN_ROW(q, e, name, kind, from, bounds, zero, about) \
	|| CHOICE_GIVEN_##kind(q, name)
#define CHOICE_ANY_GIVEN(q) (false ENGINE_INPUTS(CHOICE_GIVEN_ROW, q))

/* Each CHOICE input query q gives is one of its words: 0, or -1 with the
 * first that is not (choice_index's problem). */
int choice_check_query(const struct query *q, struct problem *p);

#endif /* SPLITKD_CHOICE_H */
