/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_policy — what policies give without a query of one pair: whether
 * a spelling parses and to what (GET /v1/policy), and every target x model
 * of the catalog under one batch shape and override (GET /v1/matrix, by
 * decide_pair). Thread-safe; writes only the call.
 */
#ifndef SPLITKD_HANDLER_POLICY_H
#define SPLITKD_HANDLER_POLICY_H

#include "handler.h"

/* The fields GET /v1/matrix takes. */
#define HANDLER_MATRIX_FIELDS                                                         \
	(QUERY_BIT(QF_MAX_BATCH_SIZE) | QUERY_BIT(QF_NUM_SEQS) | QUERY_BIT(QF_MAX_ROWS) | \
	 QUERY_BIT(QF_OVERRIDE))

handler_fn handler_policy; /* GET /v1/policy?spelling= */
handler_fn handler_matrix; /* GET /v1/matrix */

#endif /* SPLITKD_HANDLER_POLICY_H */
