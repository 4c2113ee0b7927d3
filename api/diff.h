/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * diff — what a catalog change does: the targets and models added,
 * removed and changed (field by field: every row of the catalog's schema
 * table, catalog_fields, so a field added there is diffed with no word
 * here), and every target x model cell
 * whose decision (policy, num_splits, workspace_slots, workspace_bytes)
 * differs under one batch shape and override, as GET /v1/matrix would
 * answer it on each side.
 *
 * Entries are matched by name (ASCII case-insensitively, as requests name
 * them), never by alias. Cells come in the order of the `to` catalog's
 * targets and models, then those only `from` has; a cell neither side has
 * whole (a target only one side has with a model only the other has) is
 * no cell at all.
 *
 * Pure: reads two immutable catalogs, writes into the caller's JSON
 * writer or calls the caller back; no allocation of its own, no state.
 * Thread-safe.
 */
#ifndef SPLITKD_DIFF_H
#define SPLITKD_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "decide.h"
#include "jsonw.h"
#include "slice.h"
#include "splitk.h"

/* One side of a cell: the four values a scheduler plans with. */
struct diff_side {
	bool present; /* false: this side's catalog lacks the target or the model */
	char policy[SPLITK_LABEL_MAX];
	uint32_t num_splits, workspace_slots;
	struct splitk_bytes workspace_bytes;
};

struct diff_cell {
	const char *target, *model; /* names, from whichever side has them */
	struct diff_side from, to;
};

/* Called for each cell that differs; the cell lives for the call. */
typedef void diff_cell_fn(void *cls, const struct diff_cell *cell);

/* Calls `fn` (when not NULL) for every cell whose decision differs between
 * the two catalogs, in the order above. Returns how many cells both sides
 * have with equal decisions. Cannot fail. */
size_t diff_cells(const struct catalog *from, const struct catalog *to, struct decide_shape shape,
		  struct slice override, diff_cell_fn *fn, void *cls);

/* Writes one cell as the answer lists it:
 * {"target","model","from":{policy,num_splits,workspace_slots,workspace_bytes}|null,"to":…}. */
void diff_write_cell(struct jsonw *w, const struct diff_cell *cell);

/*
 * Writes the whole answer object: "from" and "to" (the digests), the shape
 * and override asked about and their warnings, "targets" and "models"
 * ({"added": [names], "removed": [names], "changed": [{"name", "fields":
 * [{"field", "from", "to"}]}]}), "cells" and "unchanged" (the count).
 */
void diff_write(struct jsonw *w, const struct catalog *from, const struct catalog *to,
		struct decide_shape shape, struct slice override);

/* The change stream's inputs, /v1/matrix's defaults: a batch of one
 * (max_batch_size, num_seqs, max_rows 1), and no override. A catalog
 * event states them, diff_changed_cells counts at them. */
#define DIFF_STREAM_SHAPE ((struct decide_shape){1, 1, 1})

/* How many cells' decisions differ at the change stream's inputs
 * (DIFF_STREAM_SHAPE; no override), as a catalog event and GET
 * /v1/history count them. */
size_t diff_changed_cells(const struct catalog *from, const struct catalog *to);

/* Whether a cell's decision differs. */
bool diff_any_cell(const struct catalog *from, const struct catalog *to, struct decide_shape shape,
		   struct slice override);

/* Whether diff_write lists anything: a cell, an entry added or removed, a
 * field of an entry changed. --diff exits 1 when it does. */
bool diff_any_change(const struct catalog *from, const struct catalog *to,
		     struct decide_shape shape, struct slice override);

#endif /* SPLITKD_DIFF_H */
