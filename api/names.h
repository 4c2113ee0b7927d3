/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * names — comparing names the way people type them: ASCII
 * case-insensitive equality, and "did you mean" by edit distance. Catalog
 * names, parameter names and policy spellings all go through here, so a
 * typo is judged near or far by one rule.
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_NAMES_H
#define SPLITKD_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* ASCII case-insensitive equality of s[0..len) and a NUL-terminated word. */
bool names_equal(const char *s, size_t len, const char *word);

/* Equality as a name is spelt in another convention: ASCII
 * case-insensitive, ignoring every '_' and '-' on both sides, so
 * "maxBatchSize", "MAX-BATCH-SIZE" and "max_batch_size" are one name. */
bool names_equal_folded(const char *s, size_t len, const char *word);

/* ASCII case-insensitive Levenshtein distance, capped: returns at most
 * `cap` (any distance >= cap reads as cap). Strings longer than 64 bytes
 * are never near anything and read as cap. */
unsigned names_distance(const char *a, size_t alen, const char *b, size_t blen, unsigned cap);

/* Whether a candidate is near enough a typo to suggest: distance at most 2
 * and less than a third of the longer length, rounded up; never the same
 * word (distance 0). */
bool names_is_near(const char *typed, size_t typed_len, const char *candidate);

/*
 * "Did you mean": the one search every suggestion goes through (catalog
 * names and aliases, query parameters, OFREP context keys and flags,
 * policy spellings). Offer each candidate in order; the best is the
 * nearest by names_distance among those names_is_near the typed text,
 * the first offered on a tie. With NAMES_SAME an exact (case-insensitive)
 * match counts too, at distance 0 (a parameter a route does not take is
 * its own suggestion); with NAMES_FOLDED so does a match names_equal_folded
 * (maxBatchSize for max_batch_size). Holds pointers, allocates nothing.
 */
#define NAMES_SAME 1u
#define NAMES_FOLDED 2u
/* With NAMES_PREFIX, typed text of at least 4 bytes that is the first
 * words of a candidate (the candidate goes on with '_' or '-') counts
 * too, ranked after every edit-distance match: max_batch for
 * max_batch_size. */
#define NAMES_PREFIX 4u

struct names_near {
	const char *typed;
	size_t typed_len;
	unsigned flags;
	const char *best; /* NULL: nothing near yet */
	unsigned best_distance;
};

void names_near_init(struct names_near *n, const char *typed, size_t typed_len, unsigned flags);
/* Offers one candidate (NUL-terminated; the pointer is what best returns). */
void names_near_offer(struct names_near *n, const char *candidate);

/* names_near over an array: the nearest of `count` candidates to the
 * typed text, or NULL when none is near. */
const char *names_nearest(const char *typed, size_t typed_len, const char *const *candidates,
			  size_t count);

#endif /* SPLITKD_NAMES_H */
