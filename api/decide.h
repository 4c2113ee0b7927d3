/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * decide — one split-K decision: resolves a query against the catalog and
 * asks the policy core. Writing it is answer.c's job, explaining it
 * explain.c's; the catalog lookups are lookup.c's and the warning texts
 * warning.c's.
 *
 * Resolution: a target gives sm_count and the declared spelling; a model
 * gives num_q_heads and head_dim; explicit numbers and `declared` override
 * the catalog's. `override` is the ATLAS_ATTN_DECODE_SPLITK value. Both go
 * through the core's splitk_resolve_detail_with, at the catalog's
 * constants (a count clamps to its max_decode_splits), so a spelling that does not
 * parse does what it does in the engine (a declaration reads as legacy, an
 * override is ignored), with a warning and a did-you-mean.
 * max_batch_size (the seed's max_decode_seqs) and num_seqs default to 1,
 * max_rows to max_batch_size. With seq_lens (a mixed batch) num_seqs is
 * its length: a num_seqs that disagrees is refused, and so is seq_len
 * beside it (each sequence says its own).
 *
 * A struct decision holds pointers into the catalog and the query: it lives
 * as long as both. No allocation; pure and thread-safe.
 */
#ifndef SPLITKD_DECIDE_H
#define SPLITKD_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "problem.h"
#include "query.h"
#include "splitk.h"

/* A fixed limit, not the operator's: more warnings than this are dropped. */
#define DECIDE_MAX_WARNINGS 6

/* The fields GET/POST /v1/splits take: the seed's inputs and the other
 * engines' (vocab.h's DECIDE and ENGINE rows). */
#define DECIDE_FIELDS (QUERY_SCOPE(DECIDE) | QUERY_SCOPE(ENGINE))
/* Of those, the other engines' (engines.h): the seed reads none of them. */
#define DECIDE_ENGINE_FIELDS QUERY_SCOPE(ENGINE)

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
	bool declared_from_target;      /* the target's: read once, at catalog load */
	struct slice override;          /* p NULL: unset */
	struct splitk_resolution res;   /* the core's resolution of the two */
	uint32_t ref_seqs, num_splits, workspace_slots;
	struct splitk_bytes workspace_bytes; /* known false without a head_dim */
	bool explain;
	/* seq_lens' length (a mixed batch: num_seqs is it, and the answer
	 * lists each sequence's count), or 0 without seq_lens */
	uint32_t by_seq_n;
	/* with explain only: the other engines' inputs the query gave
	 * (DECIDE_ENGINE_FIELDS' bits), which the seed takes and never reads */
	query_mask unread;
	size_t num_warnings;
	/* a warning's length, and whether it is plain ASCII with nothing to
	 * escape in JSON, where its writer knows (0 and false: not known, so
	 * strlen and a scan), for fragment.c */
	size_t warning_lens[DECIDE_MAX_WARNINGS];
	bool warning_plain[DECIDE_MAX_WARNINGS];
	/* the rule's constants, the catalog's: set, not cleared, by decide_run
	 * and decide_pair */
	struct splitk_constants constants;
	/* last, so decide_run clears everything above it and not these 2 KiB */
	char warnings[DECIDE_MAX_WARNINGS][320];
};

/* Resolves and computes. Returns 0, or -1 with the problem filled in
 * (unknown target/model: 404; missing or inconsistent input: 400). */
int decide_run(const struct catalog *cat, const struct query *q, struct decision *d,
	       struct problem *p);

/* One catalog pair, for the matrix: target and model from the catalog, the
 * rest as given, under the catalog's constants (its `constants`). Cannot
 * fail; warnings are left to the caller. */
void decide_pair(struct splitk_constants k, const struct catalog_target *t,
		 const struct catalog_model *m, struct decide_shape shape, struct slice override,
		 struct decision *d);

/* The batch shape a query asks about, defaults filled in: max_batch_size
 * and num_seqs 1, max_rows max_batch_size. The one place they are set. */
struct decide_shape decide_shape_of(const struct query *q);

/* Where the policy came from: "override" when the override parsed and won,
 * else "declared" (a static string; every answer says it with this).
 * Inline: it is on every answer's path. */
static inline const char *decide_source(const struct decision *d)
{
	return d->res.resolved.from_override ? "override" : "declared";
}

#endif /* SPLITKD_DECIDE_H */
