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

/* The entry a query names (name.p not NULL), or none when a number stands
 * in for it (`number_given`: sm_count for a target, num_q_heads for a
 * model). Returns 0 with *index set (-1 for none), or -1 with p set when
 * the name is unknown (404) or neither is given (400). */
int lookup_entry(const struct catalog *cat, enum catalog_kind kind, struct slice name,
		 bool number_given, long *index, struct problem *p);

#endif /* SPLITKD_LOOKUP_H */
