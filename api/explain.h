/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * explain — the numbers behind a decision, for `explain=1`: the rule with
 * its operands, the workspace rule, the grid and occupancy at one stream
 * and at the widest batch, whether the split count holds across
 * co-batched counts, and what each policy would give instead.
 *
 * Every number comes from the policy core's own functions (the rule's
 * operands and the count before its clamp from splitk_split_terms); none
 * is a second derivation of the rule. Writes into the caller's JSON
 * writer; no other allocation, no state, thread-safe. Called by answer.c;
 * reads a decision and never calls back into decide.c.
 */
#ifndef SPLITKD_EXPLAIN_H
#define SPLITKD_EXPLAIN_H

#include "decide.h"
#include "jsonw.h"

/* Writes the "explain" member of a decision's answer object. */
void explain_write(struct jsonw *w, const struct decision *d);

#endif /* SPLITKD_EXPLAIN_H */
