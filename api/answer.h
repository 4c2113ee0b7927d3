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

/* Writes the answer object (with "explain" when d->explain). */
void answer_write(struct jsonw *w, const struct decision *d, const struct catalog *cat);

#endif /* SPLITKD_ANSWER_H */
