/* SPDX-License-Identifier: AGPL-3.0-only */
#include "revision.h"

#include <stdio.h>
#include <string.h>

#include "exchange.h"
#include "decide.h"
#include "diff.h"
#include "handler.h"
#include "names.h"
#include "quote.h"

/* The held revisions, newest first; a context without any holds its
 * catalog alone, written into `one`. */
static const struct revision *held(const struct api_context *ctx, struct revision *one, size_t *n)
{
	if (ctx->revisions != NULL && ctx->num_revisions > 0) {
		*n = ctx->num_revisions;
		return ctx->revisions;
	}
	*one = (struct revision){ctx->catalog, NULL, NULL};
	*n = 1;
	return one;
}

/* The index of the held revision `digest` names, or -1. */
static long find_index(const struct api_context *ctx, struct slice digest)
{
	struct revision one;
	size_t n;
	const struct revision *revs = held(ctx, &one, &n);

	for (size_t i = 0; i < n; i++) {
		const char *d = revs[i].catalog->digest;

		if (strlen(d) == digest.len && memcmp(d, digest.p, digest.len) == 0) {
			return (long)i;
		}
	}
	return -1;
}

const struct catalog *revision_find(const struct api_context *ctx, struct slice digest)
{
	struct revision one;
	size_t n;
	const struct revision *revs = held(ctx, &one, &n);
	long i = find_index(ctx, digest);

	return i < 0 || (size_t)i >= n ? NULL : revs[i].catalog;
}

/* The 409's own members: what this replica serves and still answers for. */
static void write_held(struct jsonw *w, const void *cls)
{
	const struct api_context *ctx = cls;
	struct revision one;
	size_t n;
	const struct revision *revs = held(ctx, &one, &n);

	jsonw_kv_str(w, "current", revs[0].catalog->digest);
	jsonw_key(w, "held");
	jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		jsonw_str(w, revs[i].catalog->digest);
	}
	jsonw_array_end(w);
}

/* What catalog_digest writes: "fnv1a64:" and 16 lowercase hex digits.
 * Anything else can never be held by any replica, so it is the caller's
 * mistake (400), not a replica's lag (409). */
#define DIGEST_PREFIX "fnv1a64:"
#define DIGEST_LEN (sizeof(DIGEST_PREFIX) - 1 + 16)

static bool well_formed(struct slice d)
{
	if (d.len != DIGEST_LEN || memcmp(d.p, DIGEST_PREFIX, sizeof(DIGEST_PREFIX) - 1) != 0) {
		return false;
	}
	for (size_t i = sizeof(DIGEST_PREFIX) - 1; i < d.len; i++) {
		if (!((d.p[i] >= '0' && d.p[i] <= '9') || (d.p[i] >= 'a' && d.p[i] <= 'f'))) {
			return false;
		}
	}
	return true;
}

/* The held revision nearest a typed one (the house's did-you-mean), or
 * NULL: a truncated digest or one with a digit wrong finds its revision. */
static const char *nearest_held(const struct api_context *ctx, struct slice digest)
{
	struct revision one;
	size_t n;
	const struct revision *revs = held(ctx, &one, &n);
	struct names_near near;

	names_near_init(&near, digest.p, digest.len, 0);
	for (size_t i = 0; i < n; i++) {
		names_near_offer(&near, revs[i].catalog->digest);
	}
	return near.best;
}

/* The index of the held revision `param` names, or -1 with the problem:
 * 400 invalid-parameter for what is no digest at all (with the form
 * expected), 409 for a digest this replica does not hold; both with a
 * "did you mean" when a held revision is near. */
static long find_param(const struct api_context *ctx, const char *param, struct slice digest,
		       struct problem *p)
{
	long i = find_index(ctx, digest);
	const char *near;
	char quoted[QUOTE_MAX];

	if (i >= 0) {
		return i;
	}
	near = nearest_held(ctx, digest);
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

int revision_pin(struct handler_call *c, struct slice digest, struct problem *p)
{
	const struct catalog *cat;

	struct revision one;
	size_t n;
	long i;

	if (digest.p == NULL) {
		return 0;
	}
	i = find_param(c->ctx, "revision", digest, p);
	if (i < 0) {
		return -1;
	}
	cat = held(c->ctx, &one, &n)[i].catalog;
	if (cat != c->ctx->catalog) {
		c->pinned = *c->ctx;
		c->pinned.catalog = cat;
		c->ctx = &c->pinned;
	}
	return 0;
}

void revision_list(struct handler_call *c)
{
	struct revision one;
	size_t n;
	const struct revision *revs = held(c->ctx, &one, &n);

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "current", revs[0].catalog->digest);
	jsonw_key(&c->w, "revisions");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		jsonw_object_begin(&c->w);
		jsonw_kv_str(&c->w, "revision", revs[i].catalog->digest);
		jsonw_kv_str_or_null(&c->w, "loaded_at", revs[i].loaded_at);
		jsonw_kv_str_or_null(&c->w, "source", revs[i].source);
		jsonw_kv_u64(&c->w, "targets", revs[i].catalog->num_targets);
		jsonw_kv_u64(&c->w, "models", revs[i].catalog->num_models);
		jsonw_object_end(&c->w);
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

/* A held revision a diff parameter names, or -1 with its problem. */
static long held_param(struct handler_call *c, const char *param, struct slice digest)
{
	long i = find_param(c->ctx, param, digest, &c->problem);

	if (i < 0) {
		handler_fail(c);
	}
	return i;
}

void revision_diff(struct handler_call *c)
{
	struct revision one;
	size_t n;
	const struct revision *revs = held(c->ctx, &one, &n);
	long to = 0, from = -1;

	if (c->q.from.p != NULL && c->q.to.p != NULL && find_index(c->ctx, c->q.from) < 0 &&
	    find_index(c->ctx, c->q.to) < 0 && well_formed(c->q.from) && well_formed(c->q.to)) {
		/* both sides missing: say so of both, not only of the first looked at */
		char qfrom[QUOTE_MAX], qto[QUOTE_MAX];

		quote_excerpt(c->q.from.p, c->q.from.len, qfrom, sizeof(qfrom));
		quote_excerpt(c->q.to.p, c->q.to.len, qto, sizeof(qto));
		problem_set(&c->problem, PROBLEM_REVISION_UNAVAILABLE, NULL, NULL,
			    "this replica holds neither from \"%s\" nor to \"%s\" "
			    "(held: GET /v1/revisions)", qfrom, qto);
		c->problem.extra = write_held;
		c->problem.extra_cls = c->ctx;
		handler_fail(c);
		return;
	}
	if (c->q.to.p != NULL) {
		to = held_param(c, "to", c->q.to);
		if (to < 0) {
			return;
		}
	}
	if (c->q.from.p != NULL) {
		from = held_param(c, "from", c->q.from);
		if (from < 0) {
			return;
		}
	} else {
		/* the one before it; none held before it (no reload yet, or the
		 * oldest named): itself, and nothing changed */
		from = (size_t)to + 1 < n ? to + 1 : to;
	}
	diff_write(&c->w, revs[from].catalog, revs[to].catalog, decide_shape_of(&c->q),
		   c->q.override);
}

void revision_diff_candidate(struct handler_call *c)
{
	char why[640];
	const struct catalog *base = c->ctx->catalog;
	struct catalog *candidate;
	long from;

	if (!handler_json_body(c, "POST /v1/catalog/diff")) {
		return;
	}
	if (c->q.from.p != NULL) {
		struct revision one;
		size_t n;

		from = held_param(c, "from", c->q.from);
		if (from < 0) {
			return;
		}
		base = held(c->ctx, &one, &n)[from].catalog;
	}
	/* the loader a reload uses, so the same file gets the same verdict */
	candidate = catalog_load(c->req->body, c->req->body_len, why, sizeof(why));
	if (candidate == NULL) {
		problem_set(&c->problem, PROBLEM_INVALID_CATALOG, NULL, NULL, "%s", why);
		handler_fail(c);
		return;
	}
	diff_write(&c->w, base, candidate, decide_shape_of(&c->q), c->q.override);
	catalog_free(candidate);
}
