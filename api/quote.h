/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * quote — client input cut short enough to quote in a message
 * (`unknown parameter "targt"`), without splitting a UTF-8 sequence.
 * Escaping is not done here: the JSON writer escapes whatever is quoted.
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_QUOTE_H
#define SPLITKD_QUOTE_H

#include <stddef.h>

/* The bytes a message quotes of one input: 64 and an ellipsis. */
#define QUOTE_MAX 72

/* Copies s[0..len) into out (capacity cap > 0) as a NUL-terminated
 * excerpt: at most cap - 1 bytes and never a partial UTF-8 sequence, with
 * "..." when cut. Returns out. Invalid bytes are left to the JSON writer to
 * replace. */
char *quote_excerpt(const char *s, size_t len, char *out, size_t cap);

#endif /* SPLITKD_QUOTE_H */
