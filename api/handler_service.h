/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_service — the routes about the service itself: liveness,
 * readiness (503 while the context says draining), the version and build,
 * the embedded OpenAPI description (served without a copy), the problem
 * type pages, where the followed files stand (GET /v1/status, asked of the
 * context's report_status and rendered by status.c) and every reload
 * attempt (GET /v1/history, asked of its list_history, each entry written
 * by history.c). Thread-safe; writes only the call, allocating a status's
 * named rows or a history's page for its duration.
 */
#ifndef SPLITKD_HANDLER_SERVICE_H
#define SPLITKD_HANDLER_SERVICE_H

#include "handler.h"

handler_fn handler_healthz;      /* GET /healthz */
handler_fn handler_readyz;       /* GET /readyz: 503 while draining */
handler_fn handler_version;      /* GET /version */
handler_fn handler_openapi;      /* GET /openapi.json */
handler_fn handler_problem_type; /* GET /problems/{type} */
handler_fn handler_status;       /* GET /v1/status */
/* GET /v1/history?limit=N&before=SEQ: {"entries": [...], "next_before":
 * the seq to ask before for the next page, or null}. */
handler_fn handler_history;

#endif /* SPLITKD_HANDLER_SERVICE_H */
