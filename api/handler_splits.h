/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_splits — the decision routes: GET /v1/splits (the query string)
 * and POST /v1/splits (one query object, or {"queries": [...]} of up to
 * the context's max_batch, each answered or its problem in place). Each
 * decision is decide_run's, written by answer_write, and counted once
 * (handler_count_decision). Thread-safe; allocates only through the
 * call's writer and the JSON parse's arena, both freed by the call.
 */
#ifndef SPLITKD_HANDLER_SPLITS_H
#define SPLITKD_HANDLER_SPLITS_H

#include "handler.h"

handler_fn handler_splits_get;  /* GET /v1/splits: one decision */
handler_fn handler_reserve_get; /* GET /v1/reserve: /v1/splits with reserve (engines.h) */
handler_fn handler_splits_post; /* POST /v1/splits: one decision, or a batch */

#endif /* SPLITKD_HANDLER_SPLITS_H */
