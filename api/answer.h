/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * answer — a decision (decide.c) as the JSON object /v1/splits answers:
 * fixed key order, the resolved names, the policy and its source, the
 * counts, the exact workspace bytes (or null), the warnings, the catalog
 * digest, and the "explain" member (explain.c) when the query asked.
 *
 * Writes into the caller's JSON writer and nothing else: no other
 * allocation, no state, thread-safe.
 */
#ifndef SPLITKD_ANSWER_H
#define SPLITKD_ANSWER_H

#include "catalog.h"
#include "decide.h"
#include "jsonw.h"

/* Writes the answer object with the members in mask (fields.h:
 * FIELDS_ALL is the whole answer; "explain" only when the mask has it and
 * d->explain), through the one writer (fragment.h). A writer that fails
 * (out of memory) is marked failed. */
void answer_write(struct jsonw *w, const struct decision *d, const struct catalog *cat,
		  unsigned mask);

/* A POST /v1/splits batch answer around its results, one writer call
 * each: {"count":N,"results":[ (the writer sized for count answers of
 * about each_bytes), then per query an answer or {"error":problem}, then
 * ],"failures":F,"catalog":digest}. The cJSON and the fast reader's paths
 * (handler_splits.c, batchfast.c) both write through these. */
void answer_batch_begin(struct jsonw *w, size_t count, size_t each_bytes);
void answer_batch_error(struct jsonw *w, const struct problem *p);
void answer_batch_end(struct jsonw *w, size_t failures, const struct catalog *cat);

#endif /* SPLITKD_ANSWER_H */
