/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * revision — the catalogs a replica still holds, and what a request does
 * with them: a catalog's digest is its revision; a request may pin one
 * (`revision=R`), list them (GET /v1/revisions) or diff two
 * (GET /v1/diff, POST /v1/catalog/diff; the diff itself is diff.c's).
 *
 * The server hands the held revisions in as plain data (api_context's
 * revisions, newest first, the first the current catalog): an immutable
 * set a request holds for its duration. The api never keeps them, never
 * reads a clock and never allocates beyond the call's JSON writer and, for
 * a candidate catalog, the catalog it loads and frees within the call.
 * Thread-safe.
 */
#ifndef SPLITKD_REVISION_H
#define SPLITKD_REVISION_H

#include <stddef.h>

#include "catalog.h"
#include "problem.h"
#include "slice.h"

/* One held catalog. `loaded_at` (RFC 3339, UTC) and `source` (a file path,
 * "embedded"...) are the server's; NULL: unknown (written as null). */
struct revision {
	const struct catalog *catalog;
	const char *loaded_at;
	const char *source;
};

struct api_context;
struct handler_call;

/* The held revision whose digest is `digest`, or NULL. A context without
 * revisions holds its catalog alone. */
const struct catalog *revision_find(const struct api_context *ctx, struct slice digest);

/*
 * Points the call at the revision `digest` names: afterwards c->ctx is a
 * copy of the context whose catalog is that revision's, so every handler
 * answers exactly what it answered while that revision was current.
 * A digest with p NULL (not asked for) changes nothing. Returns 0, or -1
 * with `p` set: 400 invalid-parameter for text that is no digest
 * ("fnv1a64:" and 16 lowercase hex digits), 409 revision-unavailable (with
 * `current` and `held`) for a digest not held; either with a "did you
 * mean" when a held revision is near.
 */
int revision_pin(struct handler_call *c, struct slice digest, struct problem *p);

/* GET /v1/revisions, GET /v1/diff, POST /v1/catalog/diff. */
void revision_list(struct handler_call *c);
void revision_diff(struct handler_call *c);
void revision_diff_candidate(struct handler_call *c);

#endif /* SPLITKD_REVISION_H */
