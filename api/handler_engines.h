/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_engines — the routes about the other engines (engines.h):
 * GET /v1/engines lists every engine splitkd answers for, where its port
 * came from and what it reads; GET /v1/compare answers, for one target and
 * model, each engine's split count at every co-batch 1..max_batch_size,
 * whether it moves, its largest scratch, and for an engine that moves how
 * it is made batch-invariant and what that costs. Thread-safe; writes
 * only the call.
 */
#ifndef SPLITKD_HANDLER_ENGINES_H
#define SPLITKD_HANDLER_ENGINES_H

#include "handler.h"

/* What GET /v1/compare takes: a decision's inputs less the co-batch
 * (num_seqs, which it sweeps), the engine (it answers every one), reserve
 * (each engine's is there when max_model_len is given) and the seed's
 * workspace rows and explain; and a pin. */
#define HANDLER_COMPARE_FIELDS                                                             \
	((DECIDE_FIELDS & ~(QUERY_BIT(QF_NUM_SEQS) | QUERY_BIT(QF_ENGINE) |                \
			    QUERY_BIT(QF_RESERVE) | QUERY_BIT(QF_MAX_ROWS) |               \
			    QUERY_BIT(QF_EXPLAIN))) |                                      \
	 HANDLER_PIN_FIELD)

/* The widest co-batch GET /v1/compare sweeps (max_batch_size), and the one
 * it sweeps when max_batch_size is not given. */
#define HANDLER_COMPARE_MAX_BATCH 4096u
#define HANDLER_COMPARE_DEFAULT_BATCH 64u

handler_fn handler_engines; /* GET /v1/engines */
handler_fn handler_compare; /* GET /v1/compare */

#endif /* SPLITKD_HANDLER_ENGINES_H */
