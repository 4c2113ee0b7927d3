/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_service — the routes about the service itself: liveness,
 * readiness (503 while the context says draining), the version and build,
 * the embedded OpenAPI description (served without a copy) and the
 * problem type pages. Thread-safe; writes only the call.
 */
#ifndef SPLITKD_HANDLER_SERVICE_H
#define SPLITKD_HANDLER_SERVICE_H

#include "handler.h"

handler_fn handler_healthz;      /* GET /healthz */
handler_fn handler_readyz;       /* GET /readyz: 503 while draining */
handler_fn handler_version;      /* GET /version */
handler_fn handler_openapi;      /* GET /openapi.json */
handler_fn handler_problem_type; /* GET /problems/{type} */

#endif /* SPLITKD_HANDLER_SERVICE_H */
