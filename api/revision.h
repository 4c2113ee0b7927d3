/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * revision — the catalogs a replica still holds, and what a request does
 * with them: a catalog's digest is its revision; a request may pin one
 * (`revision=R`), name a catalog (`catalog=NAME`), list them or diff two.
 * The routes that list and diff them are handler_revisions.c's, on the
 * lookups below (the diff itself is diff.c's).
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

/* The held revisions, newest first, the first the current catalog; a
 * context without any holds its catalog alone, written into `one`.
 * Returns them (the context's, or `one`) with their count in *n. */
const struct revision *revision_held(const struct api_context *ctx, struct revision *one,
				     size_t *n);
/* The catalogs served by name; a context without any serves its catalog
 * alone, under its own name and as what the catalog says it is served as
 * (catalog_set_name's is_default), written into `one` (its revisions into
 * `rev`). Returns them with their count in *n. */
const struct revision_named *revision_catalogs(const struct api_context *ctx,
					       struct revision_named *one, struct revision *rev,
					       size_t *n);

/* The held revision that `digest` (the parameter `param`) names, or NULL
 * with `p` set as revision_pin sets it (400 no digest, 409 not held). */
const struct catalog *revision_held_catalog(const struct api_context *ctx, const char *param,
					    struct slice digest, struct problem *p);

/*
 * The two sides of GET /v1/diff. Each of `from` and `to` is a revision
 * held for the context's catalog, a catalog's name (its current revision)
 * or a revision another catalog holds; `to` absent is the current
 * revision, `from` absent the one before `to` in its catalog (or `to`
 * itself when none is held before it). Returns 0 with both catalogs set
 * (held by the context: they live as long as it), or -1 with `p` set: 409
 * revision-unavailable naming both when neither is held anywhere, else
 * the first side's 404 unknown-catalog (a word near a catalog's name) or
 * revision problem (revision_pin's), `to` looked at before `from`.
 */
int revision_diff_pair(const struct api_context *ctx, struct slice from, struct slice to,
		       const struct catalog **from_cat, const struct catalog **to_cat,
		       struct problem *p);

#endif /* SPLITKD_REVISION_H */
