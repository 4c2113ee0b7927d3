/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * lookup — the catalog entry a request names, or the problem that says
 * why there is none: an unknown name is a 404 with a did-you-mean
 * (catalog_suggest) and the route that lists the kind; a query that
 * names neither an entry nor the number standing in for it is a 400.
 * The words a request uses for each kind (parameter, list route, what is
 * missing) are here, once.
 *
 * Reads the catalog, writes only the caller's problem: no allocation, no
 * state, thread-safe.
 */
#ifndef SPLITKD_LOOKUP_H
#define SPLITKD_LOOKUP_H

#include <stdbool.h>

#include "catalog.h"
#include "problem.h"
#include "slice.h"

/* Finds the entry of a kind a request names: its index, or -1 with p set
 * to the 404 (unknown-target or unknown-model, with a did-you-mean).
 * `param` names the parameter, or NULL for a path segment. */
long lookup_find(const struct catalog *cat, enum catalog_kind kind, const char *param,
		 struct slice name, struct problem *p);

/* The query parameter that names a kind: "target" or "model" (also the
 * word lookup's messages use for it). */
static inline const char *lookup_param(enum catalog_kind kind)
{
	return kind == CATALOG_TARGETS ? "target" : "model";
}

/* Sets p to the 400 for a query that names no entry of a kind and gives
 * no number in its place. Returns -1. */
int lookup_missing(enum catalog_kind kind, struct problem *p);

/* The entry a query names (name.p not NULL), or none when a number stands
 * in for it (`number_given`: sm_count for a target, num_q_heads for a
 * model). Returns 0 with *index set (-1 for none), or -1 with p set when
 * the name is unknown (404) or neither is given (400). Inline: every
 * decision takes it twice. */
static inline int lookup_entry(const struct catalog *cat, enum catalog_kind kind,
			       struct slice name, bool number_given, long *index,
			       struct problem *p)
{
	*index = -1;
	if (name.p != NULL) {
		*index = lookup_find(cat, kind, lookup_param(kind), name, p);
		return *index < 0 ? -1 : 0;
	}
	return number_given ? 0 : lookup_missing(kind, p);
}

#endif /* SPLITKD_LOOKUP_H */
