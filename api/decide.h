/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * decide — one split-K decision: resolves a query against the catalog,
 * asks the policy core, and writes the answer as JSON.
 *
 * Resolution: a target gives sm_count and the declared spelling; a model
 * gives num_q_heads and head_dim; explicit numbers and `declared` override
 * the catalog's. `override` is the ATLAS_ATTN_DECODE_SPLITK value. Both go
 * through the core's splitk_resolve_detail, so a spelling that does not
 * parse does what it does in the engine (a declaration reads as legacy, an
 * override is ignored), with a warning and a did-you-mean.
 * max_batch_size (the seed's max_decode_seqs) and num_seqs default to 1,
 * max_rows to max_batch_size.
 *
 * A struct decision holds pointers into the catalog and the query: it lives
 * as long as both. No allocation except through the JSON writer; pure and
 * thread-safe.
 */
#ifndef SPLITKD_DECIDE_H
#define SPLITKD_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "jsonw.h"
#include "problem.h"
#include "query.h"
#include "splitk.h"

#define DECIDE_MAX_WARNINGS 6

/* The fields GET/POST /v1/splits take. */
#define DECIDE_FIELDS                                                                   \
	(QUERY_BIT(QF_TARGET) | QUERY_BIT(QF_SM_COUNT) | QUERY_BIT(QF_DECLARED) |       \
	 QUERY_BIT(QF_MODEL) | QUERY_BIT(QF_NUM_Q_HEADS) | QUERY_BIT(QF_HEAD_DIM) |     \
	 QUERY_BIT(QF_MAX_BATCH_SIZE) | QUERY_BIT(QF_NUM_SEQS) | QUERY_BIT(QF_MAX_ROWS) | \
	 QUERY_BIT(QF_OVERRIDE) | QUERY_BIT(QF_EXPLAIN))

/* Workspace bytes, exactly: slots * (head_dim + 2) * 4 can pass 2^64. */
struct decide_bytes {
	bool known; /* false without a head_dim */
	uint64_t hi, lo;
};

/* The batch a decision is for: the seed's max_decode_seqs, the co-batched
 * count, and the widest batch the decode-metadata layout accepts. */
struct decide_shape {
	uint32_t max_batch_size, num_seqs, max_rows;
};

struct decision {
	const struct catalog_target *target; /* NULL: sm_count given alone */
	const struct catalog_model *model;   /* NULL: num_q_heads given alone */
	uint32_t sm_count, num_q_heads, head_dim; /* head_dim 0: unknown */
	struct decide_shape shape;
	struct slice declared_spelling; /* as written: the query's, the target's, or "legacy" */
	struct slice override;          /* p NULL: unset */
	struct splitk_resolution res;   /* the core's resolution of the two */
	uint32_t ref_seqs, num_splits, workspace_slots;
	struct decide_bytes workspace_bytes;
	bool explain;
	size_t num_warnings;
	/* last, so decide_run clears everything above it and not these 2 KiB */
	char warnings[DECIDE_MAX_WARNINGS][320];
};

/* Resolves and computes. Returns 0, or -1 with the problem filled in
 * (unknown target/model: 404; missing or inconsistent input: 400). */
int decide_run(const struct catalog *cat, const struct query *q, struct decision *d,
	       struct problem *p);

/* Why a decision has no workspace_bytes (its head_dim is not known), in
 * the words of the decision's warning, into out (capacity cap). */
void decide_why_no_bytes(const struct decision *d, char *out, size_t cap);

/* Writes the answer object (with "explain" when d->explain). */
void decide_write(struct jsonw *w, const struct decision *d, const struct catalog *cat);

/* Writes `key` and the byte count exactly, or null when it is unknown. */
void decide_write_bytes(struct jsonw *w, const char *key, struct decide_bytes b);

/* slots * (head_dim + 2) * 4 bytes as an exact 128-bit value. */
struct decide_bytes decide_workspace_bytes(uint32_t slots, uint32_t head_dim);

/* One catalog pair, for the matrix: target and model from the catalog, the
 * rest as given. Cannot fail; warnings are left to the caller. */
void decide_pair(const struct catalog_target *t, const struct catalog_model *m,
		 struct decide_shape shape, struct slice override, struct decision *d);

/* The batch shape a query asks about, defaults filled in: max_batch_size
 * and num_seqs 1, max_rows max_batch_size. The one place they are set. */
struct decide_shape decide_shape_of(const struct query *q);

/* Finds the entry of a kind a request names: its index, or -1 with p set
 * to the 404 (unknown-target or unknown-model, with a did-you-mean).
 * `param` names the parameter, or NULL for a path segment. */
long decide_find(const struct catalog *cat, enum catalog_kind kind, const char *param,
		 struct slice name, struct problem *p);

/* The warning for a spelling the engine does not parse: `<what> "x" does
 * not parse, so <so>, as the engine does`, and `; did you mean "<near>"?`
 * when near is not NULL. Written into out (capacity cap), cut if need be.
 * One text for a declaration and an override alike. */
void decide_unparsed(char *out, size_t cap, const char *what, struct slice spelling,
		     const char *so, const char *near);

/* The policy spelling a typo most likely meant, or NULL. */
const char *decide_suggest_spelling(struct slice spelling);

#endif /* SPLITKD_DECIDE_H */
