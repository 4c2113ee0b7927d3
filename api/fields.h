/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fields — the members of a decision's answer a caller asks for:
 * `fields=num_splits,workspace_bytes` (GET /v1/splits, and a batch body's
 * top-level "fields", for each of its answers) answers only those members,
 * in the answer's own order, whatever the order asked. A name that is no
 * member of the answer is an invalid-parameter problem with a "did you
 * mean"; an empty list, an empty name or a name given twice is one too.
 *
 * The mask drives the one writer (answer_write, fragment.c): an answer cut
 * down by fields is the full answer with members left out, byte for byte
 * (tests/unit/test_fields.c holds it to that).
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_FIELDS_H
#define SPLITKD_FIELDS_H

#include <stddef.h>

#include "catalog.h"
#include "decide.h"
#include "jsonw.h"
#include "problem.h"
#include "slice.h"
#include "vocab.h"

/* The members of an answer, in the order they are written (vocab.h's
 * VOCAB_MEMBERS): FM_TARGET, ... FM_EXPLAIN (written only when the query
 * asks for explain). */
#define FIELDS_ENUM_ROW(e) FM_##e,
enum fields_member { VOCAB_MEMBERS(FIELDS_ENUM_ROW) FM_COUNT };
#undef FIELDS_ENUM_ROW

/* A set of members, as a bit mask; FIELDS_ALL is the whole answer. */
#define FIELDS_BIT(m) (1u << (m))
#define FIELDS_ALL ((1u << FM_COUNT) - 1u)

/* What GET /v1/splits takes: the decision's inputs and fields (a POST
 * body's query takes the inputs alone). */
#define FIELDS_SPLITS_PARAMS (DECIDE_FIELDS | QUERY_BIT(QF_FIELDS))

/* The member's name as the answer spells it ("num_splits"); NULL past the
 * end. */
const char *fields_name(enum fields_member m);

/*
 * Reads a comma-separated list of member names (no spaces; a query
 * string's value is decoded first, so %2C is a comma too). `param` names
 * where it came from in a problem ("fields"). Returns 0 with *mask set, or
 * -1 with the problem filled in.
 */
int fields_parse(struct slice list, const char *param, unsigned *mask, struct problem *p);

/* About how many bytes one answer with these members takes (a batch sizes
 * its writer by it): the whole answer is about 500. */
#define FIELDS_ANSWER_BYTES(mask) ((mask) == FIELDS_ALL ? 640u : 160u)

#endif /* SPLITKD_FIELDS_H */
