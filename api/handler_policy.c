/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_policy.h"

#include <stdio.h>

#include "decide.h"
#include "vocab.h"
#include "warning.h"

void handler_policy(struct handler_call *c)
{
	const struct query *q = &c->q;
	struct splitk_policy pol;
	uint32_t requested = 0;
	char label[SPLITK_LABEL_MAX], note[96];
	uint32_t max = c->ctx->catalog->constants.max_decode_splits;
	bool ok;

	if (q->spelling.p == NULL) {
		problem_set(&c->problem, PROBLEM_MISSING_PARAMETER, "spelling", NULL,
			    "give the spelling to check, e.g. /v1/policy?spelling=auto");
		handler_fail(c);
		return;
	}
	ok = splitk_parse_requested_with(c->ctx->catalog->constants, q->spelling.p, q->spelling.len,
					 &pol, &requested);
	jsonw_object_begin(&c->w);
	jsonw_key(&c->w, "spelling");
	jsonw_strn(&c->w, q->spelling.p, q->spelling.len);
	jsonw_kv_bool(&c->w, "parses", ok);
	if (ok) {
		splitk_label(pol, label);
		jsonw_kv_str(&c->w, VOCAB_M_POLICY, label);
		jsonw_kv_str(&c->w, "kind", splitk_kind_name(pol.kind));
		jsonw_key(&c->w, "pinned");
		if (pol.kind == SPLITK_PINNED) {
			jsonw_u64(&c->w, pol.pinned);
		} else {
			jsonw_null(&c->w);
		}
		jsonw_kv_bool(&c->w, "clamped", pol.kind == SPLITK_PINNED && requested != pol.pinned);
		/* the catalog's max_decode_splits: 16 unless it states another */
		snprintf(note, sizeof(note),
			 "a pinned count, clamped to 1..%u; 0/off/false/no mean 1 (no split-K)", max);
		jsonw_kv_str(&c->w, "note", pol.kind == SPLITK_PINNED ? note : "a named policy");
	} else {
		jsonw_key(&c->w, "policy");
		jsonw_null(&c->w);
		jsonw_key(&c->w, "kind");
		jsonw_null(&c->w);
		jsonw_key(&c->w, "pinned");
		jsonw_null(&c->w);
		jsonw_kv_bool(&c->w, "clamped", false);
		jsonw_kv_str(&c->w, "note",
			     "does not parse: as ATLAS_ATTN_DECODE_SPLITK the engine ignores it and "
			     "keeps the target's declaration; in a catalog it is refused");
	}
	jsonw_object_end(&c->w);
}

/* One cell of the matrix: a catalog pair under the query's shape. */
static void write_cell(struct handler_call *c, const struct catalog_target *t,
		       const struct catalog_model *m, struct decide_shape shape)
{
	struct decision d;
	char label[SPLITK_LABEL_MAX];

	decide_pair(c->ctx->catalog->constants, t, m, shape, c->q.override, &d);
	splitk_label(d.res.resolved.policy, label);
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, VOCAB_M_TARGET, t->names.name);
	jsonw_kv_str(&c->w, VOCAB_M_MODEL, m->names.name);
	jsonw_kv_str(&c->w, VOCAB_M_POLICY, label);
	jsonw_kv_str(&c->w, "source", decide_source(&d));
	jsonw_kv_u64(&c->w, VOCAB_M_NUM_SPLITS, d.num_splits);
	jsonw_kv_u64(&c->w, VOCAB_M_WORKSPACE_SLOTS, d.workspace_slots);
	jsonw_kv_bytes(&c->w, VOCAB_M_WORKSPACE_BYTES, d.workspace_bytes);
	jsonw_object_end(&c->w);
}

void handler_matrix(struct handler_call *c)
{
	const struct catalog *cat = c->ctx->catalog;
	const struct query *q = &c->q;
	struct decide_shape shape = decide_shape_of(q);
	struct splitk_policy ignored;

	jsonw_object_begin(&c->w);
	jsonw_kv_u64(&c->w, VOCAB_M_MAX_BATCH_SIZE, shape.max_batch_size);
	jsonw_kv_u64(&c->w, VOCAB_M_NUM_SEQS, shape.num_seqs);
	jsonw_kv_u64(&c->w, VOCAB_M_MAX_ROWS, shape.max_rows);
	jsonw_key(&c->w, "override");
	if (q->override.p != NULL) {
		jsonw_strn(&c->w, q->override.p, q->override.len);
	} else {
		jsonw_null(&c->w);
	}
	jsonw_key(&c->w, "warnings");
	jsonw_array_begin(&c->w);
	if (q->override.p != NULL && !splitk_parse(q->override.p, q->override.len, &ignored)) {
		char msg[320];

		warning_unparsed(msg, sizeof(msg), "override", q->override,
				"it is ignored and each target's declared policy stands",
				warning_suggest_spelling(q->override));
		jsonw_str(&c->w, msg);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_str(&c->w, "catalog", cat->digest);
	jsonw_key(&c->w, "cells");
	jsonw_array_begin(&c->w);
	for (size_t t = 0; t < cat->num_targets; t++) {
		for (size_t m = 0; m < cat->num_models; m++) {
			write_cell(c, &cat->targets[t], &cat->models[m], shape);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

