/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * ofrep — the OpenFeature Remote Evaluation Protocol, as a thin adapter
 * over the decision GET /v1/splits makes (docs/ofrep-design.md is the wire
 * contract). The evaluation context becomes a struct query
 * (query_from_context), decide_run decides, and this module says the
 * decision in OFREP's words: five flags (num_splits, workspace_slots,
 * workspace_bytes, policy, policy_source), reason TARGETING_MATCH, the
 * policy label as variant, and metadata (source, catalog, target, model,
 * warnings). A refusal of the inputs carries the detail, param and
 * suggestion of the problem GET /v1/splits would answer.
 *
 * What the body says is answered in OFREP's application/json shapes (400
 * PARSE_ERROR / INVALID_CONTEXT / GENERAL, 404 FLAG_NOT_FOUND); HTTP-level
 * refusals (405, 413, 415, and the router's) stay problem+json. The bulk
 * route's ETag and 304 come from the router (.conditional_post).
 *
 * Handlers as in handler.h: each writes only its call; thread-safe. No
 * state of its own; allocation only through the call's JSON writer and the
 * body's parse arena, both freed before the call ends (the body goes to
 * the response).
 */
#ifndef SPLITKD_OFREP_H
#define SPLITKD_OFREP_H

#include "handler.h"

handler_fn handler_ofrep_evaluate_flag;  /* POST /ofrep/v1/evaluate/flags/{key}: one flag */
handler_fn handler_ofrep_evaluate_flags; /* POST /ofrep/v1/evaluate/flags: every flag */
handler_fn handler_ofrep_configuration;  /* GET /ofrep/v1/configuration */

#endif /* SPLITKD_OFREP_H */
