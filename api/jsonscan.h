/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * jsonscan — how far a JSON string's content can be copied as it is: the
 * run of bytes that need no escaping, found eight bytes a step. The JSON
 * writer copies such runs whole and looks at the bytes between them one
 * at a time.
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_JSONSCAN_H
#define SPLITKD_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* How many leading bytes of s are plain JSON string content: not '"', not
 * '\\', not a control character (< 0x20), and, when ascii_only, below 0x80. */
size_t jsonscan_plain_run(const char *s, size_t len, bool ascii_only);

#endif /* SPLITKD_JSONSCAN_H */
