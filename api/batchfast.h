/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * batchfast — a POST /v1/splits batch body in its common shape, read
 * without a tree: {"queries":[{...},...]} (and a top-level "fields"),
 * JSON whitespace only, each query an object whose members are decision
 * inputs given once, strings plain printable ASCII without escapes (at
 * most BATCHFAST_MAX_STRING bytes), numbers plain integers from 1 to
 * 4294967295, explain true or false, 1 to max_batch queries, nothing
 * after the closing brace. That is what a scheduler's serializer writes,
 * and every such body reads to the same queries through cJSON.
 *
 * Anything else — an escape, a fraction, an exponent, a repeated or
 * unknown key, a type the field does not take, a BOM, a bad fields list —
 * is declined before a byte is written or a decision counted, and the
 * caller answers through the cJSON path (jsonin, query_from_json), which
 * finds the problem and words it. So the answers and the problem texts
 * are those of the cJSON path, byte for byte: fuzz/fuzz_batch.c checks
 * exactly that, input by input.
 *
 * Reads the body once, in place: the queries' slices point into it, the
 * queries themselves go to one array (grown by doubling, freed before
 * it returns), so each query is read once, not checked and then read
 * again. Thread-safe (no state).
 */
#ifndef SPLITKD_BATCHFAST_H
#define SPLITKD_BATCHFAST_H

#include <stdbool.h>
#include <stddef.h>

#include "handler.h"

/* Longest string the fast reader takes; a longer one (a catalog name is at
 * most 64 bytes) goes to the cJSON path, which knows the longer limits. */
#define BATCHFAST_MAX_STRING 64

/* Answers the call's batch body when it has the common shape (a "fields"
 * list included, which must read): writes the batch answer into c->w and
 * returns true. Returns false, having written and counted nothing, when
 * the body is anything else. The caller has already checked the content
 * type and the body size. */
bool batchfast_answer(struct handler_call *c);

#endif /* SPLITKD_BATCHFAST_H */
