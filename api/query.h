/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * query — turns a query string or a JSON object into a typed struct query,
 * strictly: unknown, repeated or ill-typed parameters are problems, with a
 * "did you mean" for near-miss names. Each endpoint names the fields it
 * takes; the same names and rules hold for GET parameters and POST bodies.
 *
 * Slices in a struct query point into the caller's buffers (the decoded
 * query scratch, or the cJSON tree): they live as long as those do.
 * No allocation; thread-safe.
 */
#ifndef SPLITKD_QUERY_H
#define SPLITKD_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "problem.h"
#include "text.h"

enum query_field {
	QF_TARGET,
	QF_SM_COUNT,
	QF_DECLARED,
	QF_MODEL,
	QF_NUM_Q_HEADS,
	QF_HEAD_DIM,
	QF_MAX_BATCH_SIZE,
	QF_NUM_SEQS,
	QF_MAX_ROWS,
	QF_OVERRIDE,
	QF_EXPLAIN,
	QF_SPELLING,
	QF_COUNT
};

struct query_u32 {
	bool set;
	uint32_t v;
};

struct query {
	struct text_slice target, declared, model, override, spelling; /* p NULL: absent */
	struct query_u32 sm_count, num_q_heads, head_dim, max_batch_size, num_seqs, max_rows;
	bool explain;
};

/* A set of fields, as a bit mask: QUERY_BIT(QF_TARGET) | ... */
#define QUERY_BIT(f) (1u << (f))

/* Fills q from decoded parameters; only fields in `allowed` are accepted.
 * Returns 0, or -1 with the problem filled in. */
int query_from_params(const struct text_param *params, size_t n, unsigned allowed,
		      struct query *q, struct problem *p);

/* Fills q from a JSON object's members, by the same names. Strings must be
 * JSON strings, numbers integral JSON numbers, explain a boolean. */
int query_from_json(const cJSON *object, unsigned allowed, struct query *q, struct problem *p);

#endif /* SPLITKD_QUERY_H */
