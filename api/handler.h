/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler — what each route answers. The router (api.c) matches the path
 * and method, parses the query for the route, and calls one handler with a
 * struct handler_call; the handler writes the body into the call's JSON
 * writer, or fills its problem and marks it failed. The router turns either
 * into the response (status, content type, ETag).
 *
 * A handler reads the context and the request and writes only its call:
 * thread-safe. Nothing a handler leaves outlives the call except the body,
 * which the router hands to the response.
 */
#ifndef SPLITKD_HANDLER_H
#define SPLITKD_HANDLER_H

#include <stdbool.h>

#include "api.h"
#include "jsonw.h"
#include "problem.h"
#include "query.h"
#include "slice.h"

struct handler_call {
	const struct api_context *ctx;
	const struct api_request *req;
	const struct api_limits *limits; /* the context's, or the defaults */
	struct api_response *resp;       /* for api_response_add_header */
	struct slice name; /* the {name} of a prefix route, decoded; p NULL otherwise */
	struct query q;    /* the query string, parsed for the route's fields */
	struct jsonw w;    /* the answer's body */
	/* or a static body (an embedded file), answered without a copy */
	struct slice body;
	const char *content_type; /* static; NULL: application/json */
	int status;               /* 200 unless the handler says otherwise */
	struct api_context pinned; /* ctx with a pinned revision's catalog (revision_pin) */
	bool failed;              /* problem holds the answer */
	/* last: set whole by problem_set before it is read, so the router
	 * clears the call only up to here */
	struct problem problem;
};

typedef void handler_fn(struct handler_call *c);

/* Marks the call failed: its problem, filled first (problem_set), is the
 * answer. Returns -1. */
int handler_fail(struct handler_call *c);

struct decision;

/* Reports one decision answered to the context's on_decision, if any. */
void handler_count_decision(const struct handler_call *c, const struct decision *d);

/* Whether a Content-Type is application/json, parameters allowed
 * ("application/json; charset=utf-8"), case-insensitive. */
bool handler_is_json(const char *content_type);

/* The fields GET /v1/matrix takes. */
#define HANDLER_MATRIX_FIELDS                                                         \
	(QUERY_BIT(QF_MAX_BATCH_SIZE) | QUERY_BIT(QF_NUM_SEQS) | QUERY_BIT(QF_MAX_ROWS) | \
	 QUERY_BIT(QF_OVERRIDE))
/* ... and what GET /v1/matrix and /v1/splits take beside theirs */
#define HANDLER_PIN_FIELD QUERY_BIT(QF_REVISION)

handler_fn handler_splits_get;  /* GET /v1/splits: one decision */
handler_fn handler_splits_post; /* POST /v1/splits: one decision, or a batch */
handler_fn handler_targets;     /* GET /v1/targets */
handler_fn handler_target;      /* GET /v1/targets/{name} */
handler_fn handler_models;      /* GET /v1/models */
handler_fn handler_model;       /* GET /v1/models/{name} */
handler_fn handler_catalog;     /* GET /v1/catalog */
handler_fn handler_policy;      /* GET /v1/policy?spelling= */
handler_fn handler_matrix;      /* GET /v1/matrix */
handler_fn handler_healthz;     /* GET /healthz */
handler_fn handler_readyz;      /* GET /readyz: 503 while draining */
handler_fn handler_version;     /* GET /version */
handler_fn handler_openapi;     /* GET /openapi.json */
handler_fn handler_problem_type; /* GET /problems/{type} */

#endif /* SPLITKD_HANDLER_H */
