/* SPDX-License-Identifier: AGPL-3.0-only */
#include "revision.h"

#include <stdio.h>
#include <string.h>

#include "exchange.h"
#include "handler.h"
#include "names.h"
#include "quote.h"

const struct revision *revision_held(const struct api_context *ctx, struct revision *one,
				     size_t *n)
{
	if (ctx->revisions != NULL && ctx->num_revisions > 0) {
		*n = ctx->num_revisions;
		return ctx->revisions;
	}
	*one = (struct revision){ctx->catalog, NULL, NULL};
	*n = 1;
	return one;
}

const struct revision_named *revision_catalogs(const struct api_context *ctx,
					       struct revision_named *one, struct revision *rev,
					       size_t *n)
{
	if (ctx->catalogs != NULL && ctx->num_catalogs > 0) {
		*n = ctx->num_catalogs;
		return ctx->catalogs;
	}
	*one = (struct revision_named){ctx->catalog->name, revision_held(ctx, rev, n), 0,
				       ctx->catalog->is_default};
	one->num_revisions = *n;
	*n = 1;
	return one;
}

/* The catalog served as `name`, or NULL. A catalog's name is its current
 * catalog's (revision.h), whose length that catalog keeps. */
static const struct revision_named *named_find(const struct api_context *ctx, struct slice name,
					       struct revision_named *one, struct revision *rev)
{
	size_t n;
	const struct revision_named *all = revision_catalogs(ctx, one, rev, &n);

	for (size_t i = 0; i < n; i++) {
		if (all[i].revisions[0].catalog->name_len == name.len &&
		    memcmp(all[i].name, name.p, name.len) == 0) {
			return &all[i];
		}
	}
	return NULL;
}

/* The served catalog name nearest a typed one (the house's did-you-mean). */
static const char *named_near(const struct api_context *ctx, struct slice name)
{
	struct revision_named one;
	struct revision rev;
	size_t n;
	const struct revision_named *all = revision_catalogs(ctx, &one, &rev, &n);
	struct names_near near;

	names_near_init(&near, name.p, name.len, NAMES_SAME);
	for (size_t i = 0; i < n; i++) {
		names_near_offer(&near, all[i].name);
	}
	return near.best;
}

/* The index of the held revision `digest` names, or -1. */
static long find_index(const struct api_context *ctx, struct slice digest)
{
	struct revision one;
	size_t n;
	const struct revision *revs = revision_held(ctx, &one, &n);

	for (size_t i = 0; i < n; i++) {
		const char *d = revs[i].catalog->digest;

		if (strlen(d) == digest.len && memcmp(d, digest.p, digest.len) == 0) {
			return (long)i;
		}
	}
	return -1;
}

/* The 409's own members: what this replica serves and still answers for. */
static void write_held(struct jsonw *w, const void *cls)
{
	const struct api_context *ctx = cls;
	struct revision one;
	size_t n;
	const struct revision *revs = revision_held(ctx, &one, &n);

	jsonw_kv_str(w, "current", revs[0].catalog->digest);
	jsonw_key(w, "held");
	jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		jsonw_str(w, revs[i].catalog->digest);
	}
	jsonw_array_end(w);
}

/* What catalog_load writes as a digest (catalog_digest_ok). Anything else
 * can never be held by any replica, so it is the caller's mistake (400),
 * not a replica's lag (409). */
static bool well_formed(struct slice d)
{
	return catalog_digest_ok(d.p, d.len);
}

/* The held revision nearest a typed one (the house's did-you-mean), or
 * NULL: a truncated digest or one with a digit wrong finds its revision. */
static const char *nearest_held(const struct api_context *ctx, struct slice digest)
{
	struct revision one;
	size_t n;
	const struct revision *revs = revision_held(ctx, &one, &n);
	struct names_near near;

	names_near_init(&near, digest.p, digest.len, 0);
	for (size_t i = 0; i < n; i++) {
		names_near_offer(&near, revs[i].catalog->digest);
	}
	return near.best;
}

/* The problem of a `param` naming no held revision (find_index found none):
 * 400 invalid-parameter for what is no digest at all (with the form
 * expected), 409 for a digest this replica does not hold; both with a
 * "did you mean" when a held revision is near. Returns -1. */
static long not_held(const struct api_context *ctx, const char *param, struct slice digest,
		     struct problem *p)
{
	const char *near = nearest_held(ctx, digest);
	char quoted[QUOTE_MAX];

	quote_excerpt(digest.p, digest.len, quoted, sizeof(quoted));
	if (!well_formed(digest)) {
		char tail[128];

		if (near != NULL) {
			snprintf(tail, sizeof(tail), "; did you mean \"%s\"?", near);
		} else {
			snprintf(tail, sizeof(tail), ", as GET /v1/revisions lists them (current: %s)",
				 ctx->catalog->digest);
		}
		problem_set(p, PROBLEM_INVALID_PARAMETER, param, near,
			    "%s \"%s\" is no revision: a revision is \"fnv1a64:\" and 16 lowercase hex "
			    "digits%s", param, quoted, tail);
		return -1;
	}
	/* a digest near a held one is a typo; any other may be held elsewhere */
	problem_set(p, PROBLEM_REVISION_UNAVAILABLE, NULL, NULL,
		    "this replica does not hold %s \"%s\"%s%s%s (held: GET /v1/revisions)", param,
		    quoted, near != NULL ? "; did you mean \"" : ": try another replica, or wait for it here",
		    near != NULL ? near : "", near != NULL ? "\"?" : "");
	p->extra = write_held;
	p->extra_cls = ctx;
	return -1;
}

/* The served catalog (other than the one whose revisions are `skip`; NULL
 * skips none) that holds `digest`, with its index among that catalog's
 * revisions in `at`; or NULL. */
static const struct revision_named *holding(const struct api_context *ctx, struct slice digest,
					    const struct revision *skip, size_t *at)
{
	for (size_t i = 0; ctx->catalogs != NULL && i < ctx->num_catalogs; i++) {
		const struct revision_named *nc = &ctx->catalogs[i];

		if (skip != NULL && nc->revisions == skip) {
			continue;
		}
		for (size_t j = 0; j < nc->num_revisions; j++) {
			const char *d = nc->revisions[j].catalog->digest;

			if (strlen(d) == digest.len && memcmp(d, digest.p, digest.len) == 0) {
				*at = j;
				return nc;
			}
		}
	}
	return NULL;
}

/* The 404 of a `param` naming no served catalog, with `near` (named_near
 * of it, or NULL) as its "did you mean". Returns -1. */
static int unknown_catalog(struct problem *p, const char *param, struct slice name,
			   const char *near)
{
	return problem_unknown_name(p, PROBLEM_UNKNOWN_CATALOG, param, "catalog", name.p, name.len,
				    near, "GET /v1/catalogs");
}

/* The catalog served as `name`, or NULL with its 404 in `p`. */
static const struct revision_named *named_param(const struct api_context *ctx, struct slice name,
						struct revision_named *one, struct revision *rev,
						struct problem *p)
{
	const struct revision_named *nc = named_find(ctx, name, one, rev);

	if (nc == NULL) {
		unknown_catalog(p, "catalog", name, named_near(ctx, name));
	}
	return nc;
}

const struct catalog *revision_named_catalog(const struct api_context *ctx, struct slice name,
					    struct problem *p)
{
	struct revision_named one;
	struct revision rev;
	const struct revision_named *nc = named_param(ctx, name, &one, &rev, p);

	return nc == NULL ? NULL : nc->revisions[0].catalog;
}

int revision_select(struct handler_call *c, struct slice name, struct problem *p)
{
	struct revision_named one;
	struct revision rev;
	const struct revision_named *nc;

	if (name.p == NULL) {
		return 0;
	}
	nc = named_param(c->ctx, name, &one, &rev, p);
	if (nc == NULL) {
		return -1;
	}
	if (nc->revisions[0].catalog != c->ctx->catalog) {
		c->pinned = *c->ctx;
		c->pinned.catalog = nc->revisions[0].catalog;
		c->pinned.revisions = nc->revisions;
		c->pinned.num_revisions = nc->num_revisions;
		c->ctx = &c->pinned;
	}
	return 0;
}

/* revision_pin's work once the held revision's index `i` (find_index's,
 * -1: none) is known. */
static int pin_at(struct handler_call *c, struct slice digest, long i, struct problem *p)
{
	const struct catalog *cat;
	struct revision one;
	size_t n;

	if (i < 0) {
		return (int)not_held(c->ctx, "revision", digest, p);
	}
	cat = revision_held(c->ctx, &one, &n)[i].catalog;
	if (cat != c->ctx->catalog) {
		c->pinned = *c->ctx;
		c->pinned.catalog = cat;
		c->ctx = &c->pinned;
	}
	return 0;
}

int revision_choose(struct handler_call *c, struct slice catalog, struct slice digest,
		    struct problem *p)
{
	const struct revision_named *other;
	size_t at;
	long i;

	if (revision_select(c, catalog, p) != 0) {
		return -1;
	}
	if (digest.p == NULL) {
		return 0;
	}
	i = find_index(c->ctx, digest);
	/* the context's own revisions were just looked in */
	other = i < 0 ? holding(c->ctx, digest, c->ctx->revisions, &at) : NULL;
	if (other != NULL) {
		char quoted[QUOTE_MAX];

		quote_excerpt(digest.p, digest.len, quoted, sizeof(quoted));
		return problem_set(p, PROBLEM_CATALOG_MISMATCH, "revision", other->name,
				   "revision \"%s\" is catalog \"%s\"'s, not \"%s\"'s: ask "
				   "with catalog=%s, or without the revision", quoted, other->name,
				   c->ctx->catalog->name, other->name);
	}
	return pin_at(c, digest, i, p);
}

int revision_pin(struct handler_call *c, struct slice digest, struct problem *p)
{
	if (digest.p == NULL) {
		return 0;
	}
	return pin_at(c, digest, find_index(c->ctx, digest), p);
}

const struct catalog *revision_held_catalog(const struct api_context *ctx, const char *param,
					    struct slice digest, struct problem *p)
{
	struct revision one;
	size_t n;
	long i = find_index(ctx, digest);

	if (i < 0) {
		not_held(ctx, param, digest, p);
		return NULL;
	}
	return revision_held(ctx, &one, &n)[i].catalog;
}

/* A side of a diff: a revision among `revs` (n of them, newest first). */
struct side {
	const struct revision *revs;
	size_t n;
	long at;
};

/* What a diff parameter names, besides a revision of the request's
 * catalog: a catalog's name (its current revision), or a revision another
 * catalog holds. False when it names neither. */
static bool side_elsewhere(const struct api_context *ctx, struct slice text, struct side *out)
{
	struct revision_named one;
	struct revision rev;
	const struct revision_named *nc = named_find(ctx, text, &one, &rev);

	size_t at;

	if (nc != NULL && ctx->catalogs != NULL) {
		*out = (struct side){nc->revisions, nc->num_revisions, 0};
		return true;
	}
	nc = holding(ctx, text, NULL, &at);
	if (nc != NULL) {
		*out = (struct side){nc->revisions, nc->num_revisions, (long)at};
		return true;
	}
	return false;
}

/* A diff side (`param` is "from" or "to"), or false with its problem: a
 * revision held for the request's catalog, a catalog's name, a revision of
 * another catalog; a word near a catalog's name is an unknown-catalog
 * with its did-you-mean; anything else the revision problems. */
static bool diff_side(const struct api_context *ctx, const char *param, struct slice text,
		      struct revision *one, struct side *out, struct problem *p)
{
	const char *near;

	out->revs = revision_held(ctx, one, &out->n);
	out->at = find_index(ctx, text);
	if (out->at >= 0 || side_elsewhere(ctx, text, out)) {
		return true;
	}
	near = well_formed(text) || ctx->catalogs == NULL ? NULL : named_near(ctx, text);
	if (near != NULL) {
		unknown_catalog(p, param, text, near);
	} else {
		/* find_index found none above */
		not_held(ctx, param, text, p);
	}
	return false;
}

/* Whether both sides are given and neither is held anywhere, in any
 * form: then the problem says so of both, not only of the first looked
 * at. */
static bool neither_held(const struct api_context *ctx, struct slice from, struct slice to)
{
	struct side none;

	return from.p != NULL && to.p != NULL && find_index(ctx, from) < 0 &&
	       find_index(ctx, to) < 0 && well_formed(from) && well_formed(to) &&
	       !side_elsewhere(ctx, from, &none) && !side_elsewhere(ctx, to, &none);
}

int revision_diff_pair(const struct api_context *ctx, struct slice from, struct slice to,
		       const struct catalog **from_cat, const struct catalog **to_cat,
		       struct problem *p)
{
	struct revision one;
	struct side from_side, to_side;
	size_t n;
	const struct revision *revs = revision_held(ctx, &one, &n);

	to_side = (struct side){revs, n, 0};
	if (neither_held(ctx, from, to)) {
		char qfrom[QUOTE_MAX], qto[QUOTE_MAX];

		quote_excerpt(from.p, from.len, qfrom, sizeof(qfrom));
		quote_excerpt(to.p, to.len, qto, sizeof(qto));
		problem_set(p, PROBLEM_REVISION_UNAVAILABLE, NULL, NULL,
			    "this replica holds neither from \"%s\" nor to \"%s\" "
			    "(held: GET /v1/revisions)", qfrom, qto);
		p->extra = write_held;
		p->extra_cls = ctx;
		return -1;
	}
	if (to.p != NULL && !diff_side(ctx, "to", to, &one, &to_side, p)) {
		return -1;
	}
	if (from.p != NULL) {
		if (!diff_side(ctx, "from", from, &one, &from_side, p)) {
			return -1;
		}
	} else {
		/* the one before it in its catalog; none held before it (no
		 * reload yet, or the oldest named): itself, and nothing changed */
		from_side = to_side;
		from_side.at = (size_t)to_side.at + 1 < to_side.n ? to_side.at + 1 : to_side.at;
	}
	*from_cat = from_side.revs[from_side.at].catalog;
	*to_cat = to_side.revs[to_side.at].catalog;
	return 0;
}
