/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * warning — the text of every warning a decision carries, in one place:
 * a spelling the engine does not parse (with a did-you-mean among the
 * policy words), a clamped override, a batch shape the workspace does not
 * cover, a saturated slot count, a byte count without a head_dim. The
 * decision (decide.c) says when; this module says what.
 *
 * Each function writes one NUL-terminated text into out (capacity cap),
 * cut if need be. No allocation, no state, thread-safe.
 */
#ifndef SPLITKD_WARNING_H
#define SPLITKD_WARNING_H

#include <stddef.h>
#include <stdint.h>

#include "slice.h"

/* `<what> "x" does not parse, so <so>, as the engine does`, and
 * `; did you mean "<near>"?` when near is not NULL. One text for a
 * declaration and an override alike. */
void warning_unparsed(char *out, size_t cap, const char *what, struct slice spelling,
		      const char *so, const char *near);

/* The policy spelling a typo most likely meant, or NULL (names_nearest
 * among legacy, auto, off, false). */
const char *warning_suggest_spelling(struct slice spelling);

/* An override above the cap, and the count it is clamped to. */
void warning_clamped(char *out, size_t cap, uint32_t requested, uint32_t clamped);

/* max_rows below max_batch_size. */
void warning_rows_below_batch(char *out, size_t cap, uint32_t max_rows, uint32_t max_batch_size);

/* num_seqs above max_rows. */
void warning_seqs_above_rows(char *out, size_t cap, uint32_t num_seqs, uint32_t max_rows);

/* workspace_slots saturated at UINT32_MAX. */
void warning_slots_saturated(char *out, size_t cap);

/* Why workspace_bytes is null: head_dim is not known (for `model`, the
 * catalog name of model_len bytes, when not NULL). Also OFREP's error
 * text for the flag.
 * Returns its length (0 when cap is 0). */
size_t warning_no_bytes(char *out, size_t cap, const char *model, size_t model_len);

#endif /* SPLITKD_WARNING_H */
