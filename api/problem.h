/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * problem — RFC 9457 problem details: every error splitkd answers.
 *
 * A problem is a plain value filled in by whoever finds the fault and
 * written as application/problem+json by the router, or embedded in a batch
 * result. `type` is a relative URI, /problems/<slug>, that splitkd itself
 * serves with a description (problem_write_type). No allocation; thread-safe.
 */
#ifndef SPLITKD_PROBLEM_H
#define SPLITKD_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>

#include "jsonw.h"

enum problem_kind {
	PROBLEM_NONE,
	PROBLEM_INVALID_PARAMETER,
	PROBLEM_UNKNOWN_PARAMETER,
	PROBLEM_REPEATED_PARAMETER,
	PROBLEM_MISSING_PARAMETER,
	PROBLEM_MALFORMED_QUERY,
	PROBLEM_MALFORMED_JSON,
	PROBLEM_UNKNOWN_TARGET,
	PROBLEM_UNKNOWN_MODEL,
	PROBLEM_NOT_FOUND,
	PROBLEM_METHOD_NOT_ALLOWED,
	PROBLEM_UNSUPPORTED_MEDIA_TYPE,
	PROBLEM_PAYLOAD_TOO_LARGE,
	PROBLEM_URI_TOO_LONG,
	PROBLEM_HEADER_TOO_LARGE,
	PROBLEM_BAD_REQUEST,
	PROBLEM_EXPECTATION_FAILED,
	PROBLEM_NOT_IMPLEMENTED,
	PROBLEM_OVERLOADED,
	PROBLEM_INTERNAL,
	PROBLEM_REVISION_UNAVAILABLE, /* 409, with the extra members revision.c writes */
	PROBLEM_PRECONDITION_FAILED,  /* 412 */
	PROBLEM_INVALID_CATALOG,      /* 400: a candidate catalog a load would refuse */
	PROBLEM_UNKNOWN_CATALOG,      /* 404: catalog=NAME names no catalog served */
	PROBLEM_CATALOG_MISMATCH,     /* 409: a revision pinned is another catalog's */
	PROBLEM_UNKNOWN_ENGINE,       /* 404: engine=NAME names no engine (engines.h) */
	PROBLEM_UNSUPPORTED_SHAPE,    /* 422: the engine has no kernel for the shape */
	PROBLEM_TOO_MANY_REQUESTS,    /* 429: the client's --rate-limit is spent */
	PROBLEM_KIND_COUNT
};

struct problem {
	enum problem_kind kind;
	char detail[320];
	char param[72];      /* the offending parameter or field; "" if none */
	char suggestion[72]; /* "did you mean" candidate; "" if none */
	/* Members of the kind's own, written after the rest by `extra` (NULL:
	 * none) from `extra_cls`, which must outlive the problem. problem_set
	 * clears both; the finder sets them after. */
	void (*extra)(struct jsonw *w, const void *cls);
	const void *extra_cls;
};

/* Fills a problem; `param` and `suggestion` may be NULL. The detail is a
 * printf format. Returns -1, so a validator can `return problem_set(...)`. */
int problem_set(struct problem *p, enum problem_kind kind, const char *param,
		const char *suggestion, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* An unknown catalog name (404): `no <what> named "x"`, with a "did you
 * mean" when `near` is not NULL, else a pointer to the list at `list`.
 * `param` names the parameter, or NULL for a path segment. Returns -1. */
int problem_unknown_name(struct problem *p, enum problem_kind kind, const char *param,
			 const char *what, const char *name, size_t len, const char *near,
			 const char *list);

/* The HTTP status of a kind (400, 404, 405, 409, 412, 413, 414, 415, 417,
 * 431, 500, 501); 500 for a kind out of range. */
int problem_status(enum problem_kind kind);

/* The slug of a kind ("unknown-target"): its type is /problems/<slug>. */
const char *problem_slug(enum problem_kind kind);

/* Writes the problem object: type, title, status, detail, param and
 * suggestion when set, then the extra members. */
void problem_write(struct jsonw *w, const struct problem *p);

/* Looks up a /problems/<slug> page; writes its description and returns
 * true, or returns false for an unknown slug. */
bool problem_write_type(struct jsonw *w, const char *slug, size_t len);

#endif /* SPLITKD_PROBLEM_H */
