/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler — the call a route's handler answers, and what every handler
 * shares. The router (api.c) matches the path and method, parses the query
 * for the route, and calls one handler with a struct handler_call; the
 * handler writes the body into the call's JSON writer, or fills its problem
 * and marks it failed. The router turns either into the response (status,
 * content type, ETag).
 *
 * The handlers live by job, each file with its header: handler_splits
 * (decisions), handler_catalog (the catalog's entries), handler_policy (a
 * spelling, the matrix), handler_revisions (the revisions and catalogs
 * held, their diffs, the change stream), handler_service (health,
 * readiness, version, the description, problem types, the status, the
 * history), handler_engines (the other engines); each calls the logic of
 * its modules (revision.c, diff.c, status.c, history.c...), which hold no
 * route. The two adapters, the page (ui.c) and OFREP (ofrep.c), are thin
 * layers over the same decision code, each in its own file with its
 * routes' handlers; /metrics is api.c's, which asks the server.
 * Every route's entry point, wherever it lives, is named handler_<route>
 * (handler_targets, handler_ofrep_configuration, handler_splits_get when
 * a route has two): one pattern for the table to read, which here wins
 * over the module prefix; a file's other functions keep its prefix. A
 * handler includes exchange.h, never api.h: the router includes the
 * handlers, not the other way round.
 *
 * A handler reads the context and the request and writes only its call:
 * thread-safe. Nothing a handler leaves outlives the call except the body,
 * which the router hands to the response.
 */
#ifndef SPLITKD_HANDLER_H
#define SPLITKD_HANDLER_H

#include <stdbool.h>

#include "decide.h"
#include "exchange.h"
#include "jsonw.h"
#include "problem.h"
#include "query.h"
#include "slice.h"

/* The i-th route's path template and methods, NULL past the end: the
 * router's api_route_path, handed down so that a handler (the index at
 * GET /) lists the table without including the router. */
typedef const char *handler_route_fn(size_t i, const char **methods);

struct handler_call {
	const struct api_context *ctx;
	handler_route_fn *route_path; /* the router's table, for the index */
	const struct api_request *req;
	const struct api_limits *limits; /* the context's, or the defaults */
	struct api_response *resp;       /* for exchange_add_header */
	struct slice name; /* the {name} of a prefix route, decoded; p NULL otherwise */
	struct jsonw w;    /* the answer's body */
	/* or a static body (an embedded file), answered without a copy */
	struct slice body;
	const char *content_type; /* static; NULL: application/json */
	int status;               /* 200 unless the handler says otherwise */
	bool failed;              /* problem holds the answer */
	/* last: set whole before they are read (problem_set; revision_pin
	 * copies ctx whole), so the router clears the call only up to here */
	struct problem problem;
	struct api_context pinned; /* ctx with a pinned revision's catalog (revision_pin) */
	/* the query string, parsed for the route's fields: set whole by the
	 * router (query_parse, or cleared where a route reads none) */
	struct query q;
};

typedef void handler_fn(struct handler_call *c);

/* Marks the call failed: its problem, filled first (problem_set), is the
 * answer. Returns -1. */
int handler_fail(struct handler_call *c);

/* Reports one decision answered from `cat` to the context's on_decision,
 * if any: the catalog's name, the target's name in it (NULL for an
 * sm_count alone) and the kind of policy it resolved to. Inline: every
 * decision takes it. */
static inline void handler_count_decision(const struct handler_call *c, const struct decision *d,
					  const struct catalog *cat)
{
	if (c->ctx->on_decision != NULL) {
		c->ctx->on_decision(c->ctx->on_decision_cls, cat->is_default ? NULL : cat->name,
				    d->target ? d->target->names.name : NULL, d->res.resolved.policy.kind);
	}
}

/* Whether a Content-Type is application/json, parameters allowed
 * ("application/json; charset=utf-8"), case-insensitive. */
bool handler_is_json(const char *content_type);
/* A POST route's JSON body: true when Content-Type is JSON and the body is
 * within --max-body; otherwise the 415 or 413 is set (handler_fail) and
 * false. `route` names it in the 415 ("POST /v1/splits"). */
bool handler_json_body(struct handler_call *c, const char *route);

/* The field a request names a catalog with (revision.c): every route that
 * reads a catalog. */
#define HANDLER_CATALOG_FIELD QUERY_BIT(QF_CATALOG)
/* The fields a request pins a catalog revision with, and names its
 * catalog (revision.c): GET /v1/splits and /v1/matrix, a POST /v1/splits
 * body, an OFREP context. */
#define HANDLER_PIN_FIELD (QUERY_BIT(QF_REVISION) | HANDLER_CATALOG_FIELD)

#endif /* SPLITKD_HANDLER_H */
