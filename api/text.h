/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * text — small byte-string helpers the request layer shares: query-string
 * splitting and percent-decoding, strict decimal numbers, ASCII
 * case-insensitive names, and "did you mean" by edit distance.
 *
 * No allocation: every function works on caller-supplied buffers and
 * reports failure by return value. Thread-safe (no state).
 */
#ifndef SPLITKD_TEXT_H
#define SPLITKD_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte slice; `p == NULL` means absent (an empty but present value has a
 * non-NULL p and len 0). */
struct text_slice {
	const char *p;
	size_t len;
};

#define TEXT_MAX_PARAMS 32

struct text_param {
	struct text_slice key, value;
};

enum text_query_status {
	TEXT_QUERY_OK,
	TEXT_QUERY_TOO_MANY,   /* more than TEXT_MAX_PARAMS pairs */
	TEXT_QUERY_BAD_ESCAPE, /* '%' not followed by two hex digits */
};

/*
 * Splits a raw query string (the bytes after '?', not decoded) into
 * key/value pairs, decoding each with application/x-www-form-urlencoded
 * rules ('+' is a space, %XX a byte) into `scratch`, which must hold at
 * least `len` bytes. Empty pairs ("a=1&&b=2") are skipped; a pair without
 * '=' has an empty value. On TEXT_QUERY_BAD_ESCAPE, *bad_index is the pair
 * at fault. The slices point into scratch.
 */
enum text_query_status text_query_parse(const char *query, size_t len, char *scratch,
					struct text_param params[TEXT_MAX_PARAMS],
					size_t *num_params, size_t *bad_index);

/* Decodes a percent-encoded path segment (no '+' rule) into out, which
 * holds at least len bytes. Returns the decoded length, or -1 on a bad
 * escape. */
long text_percent_decode(const char *in, size_t len, char *out);

/* A plain decimal from 1 to 4294967295: ASCII digits only, no sign, no
 * leading zero, no spaces. Returns false for anything else. */
bool text_parse_u32(const char *s, size_t len, uint32_t *out);

/* ASCII case-insensitive equality of a slice and a NUL-terminated word. */
bool text_ieq(const char *s, size_t len, const char *word);

/* ASCII case-insensitive Levenshtein distance, capped: returns at most
 * `cap` (any distance >= cap reads as cap). Strings longer than 64 bytes
 * are never near anything and read as cap. */
unsigned text_distance(const char *a, size_t alen, const char *b, size_t blen, unsigned cap);

/* Whether a candidate is near enough a typo to suggest: distance at most 2
 * and less than a third of the longer length, rounded up. */
bool text_is_near(const char *typed, size_t typed_len, const char *candidate);

/* How many leading bytes of s are plain JSON string content: not '"', not
 * '\\', not a control character (< 0x20), and, when ascii_only, below 0x80.
 * Eight bytes a step; the JSON writer and the strict reader skip such runs
 * without looking at each byte. */
size_t text_plain_run(const char *s, size_t len, bool ascii_only);

/* Copies s into out (capacity cap > 0) for quoting in a message: at most
 * cap - 1 bytes and never a partial UTF-8 sequence; an ellipsis "..." when
 * cut. Returns out. Invalid bytes are left to the JSON writer to replace. */
char *text_quote(const char *s, size_t len, char *out, size_t cap);

#endif /* SPLITKD_TEXT_H */
