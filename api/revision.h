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

#include <stdbool.h>
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

/* One catalog a server serves by name (--catalog NAME=FILE, --catalog-dir):
 * its revisions, newest first, the first its current catalog (whose name
 * is `name`); loaded_at and source of the first are its last reload's. */
struct revision_named {
	const char *name;
	const struct revision *revisions;
	size_t num_revisions;
	bool is_default;
};

struct api_context;
struct handler_call;

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

/*
 * Points the call at the catalog served as `name` (catalog=NAME): c->ctx
 * becomes a copy of the context whose catalog and revisions are that
 * catalog's. A name with p NULL changes nothing (the default). Returns 0,
 * or -1 with `p` set: 404 unknown-catalog, with a "did you mean".
 */
int revision_select(struct handler_call *c, struct slice name, struct problem *p);
/* The current catalog served as `name` (p non-NULL), or NULL with `p`
 * set: 404 unknown-catalog (a batch query's own "catalog"). */
const struct catalog *revision_named_catalog(const struct api_context *ctx, struct slice name,
					    struct problem *p);
/* revision_select, then revision_pin among the selected catalog's
 * revisions; a revision held only by another catalog is a 409
 * catalog-mismatch naming that catalog. */
int revision_choose(struct handler_call *c, struct slice catalog, struct slice digest,
		    struct problem *p);

/* This file's routes: handler.h's handler_fn, spelt out (this header only
 * declares struct handler_call). */
void handler_revisions(struct handler_call *c);    /* GET /v1/revisions */
void handler_diff(struct handler_call *c);         /* GET /v1/diff */
void handler_catalog_diff(struct handler_call *c); /* POST /v1/catalog/diff */
void handler_catalogs(struct handler_call *c);     /* GET /v1/catalogs */

#endif /* SPLITKD_REVISION_H */
