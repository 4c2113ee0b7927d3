/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The tests' reference writer of a decision's answer: a JSON writer call
 * per key and per value, each member behind its bit of the field mask, in
 * the answer's order. splitkd writes every answer through its one writer
 * (api/fragment.c, from literal fragments); this is what test_fragment.c
 * and test_fields.c hold it to, byte for byte. A test's oracle only: no
 * answer of the daemon is written by it.
 */
#ifndef SPLITKD_TEST_REFERENCE_H
#define SPLITKD_TEST_REFERENCE_H

#include "catalog.h"
#include "decide.h"
#include "explain.h"
#include "fields.h"
#include "jsonw.h"
#include "splitk.h"

static inline void reference_write(struct jsonw *w, const struct decision *d,
				   const struct catalog *cat, unsigned mask)
{
	char label[SPLITK_LABEL_MAX];

	jsonw_object_begin(w);
	if (mask & FIELDS_BIT(FM_TARGET)) {
		jsonw_kv_str_or_null(w, "target", d->target ? d->target->names.name : NULL);
	}
	if (mask & FIELDS_BIT(FM_SM_COUNT)) {
		jsonw_kv_u64(w, "sm_count", d->sm_count);
	}
	if (mask & FIELDS_BIT(FM_DECLARED)) {
		splitk_label(d->res.declared, label);
		jsonw_kv_str(w, "declared", label);
	}
	if (mask & FIELDS_BIT(FM_MODEL)) {
		jsonw_kv_str_or_null(w, "model", d->model ? d->model->names.name : NULL);
	}
	if (mask & FIELDS_BIT(FM_NUM_Q_HEADS)) {
		jsonw_kv_u64(w, "num_q_heads", d->num_q_heads);
	}
	if (mask & FIELDS_BIT(FM_HEAD_DIM)) {
		jsonw_kv_u64_or_null(w, "head_dim", d->head_dim);
	}
	if (mask & FIELDS_BIT(FM_MAX_BATCH_SIZE)) {
		jsonw_kv_u64(w, "max_batch_size", d->shape.max_batch_size);
	}
	if (mask & FIELDS_BIT(FM_NUM_SEQS)) {
		jsonw_kv_u64(w, "num_seqs", d->shape.num_seqs);
	}
	if (mask & FIELDS_BIT(FM_MAX_ROWS)) {
		jsonw_kv_u64(w, "max_rows", d->shape.max_rows);
	}
	if (mask & FIELDS_BIT(FM_OVERRIDE)) {
		jsonw_key(w, "override");
		if (d->override.p != NULL) {
			jsonw_strn(w, d->override.p, d->override.len);
		} else {
			jsonw_null(w);
		}
	}
	if (mask & FIELDS_BIT(FM_POLICY)) {
		splitk_label(d->res.resolved.policy, label);
		jsonw_kv_str(w, "policy", label);
	}
	if (mask & FIELDS_BIT(FM_SOURCE)) {
		jsonw_kv_str(w, "source", decide_source(d));
	}
	if (mask & FIELDS_BIT(FM_NUM_SPLITS)) {
		jsonw_kv_u64(w, "num_splits", d->num_splits);
	}
	if (mask & FIELDS_BIT(FM_WORKSPACE_SLOTS)) {
		jsonw_kv_u64(w, "workspace_slots", d->workspace_slots);
	}
	if (mask & FIELDS_BIT(FM_WORKSPACE_BYTES)) {
		jsonw_kv_bytes(w, "workspace_bytes", d->workspace_bytes);
	}
	if (mask & FIELDS_BIT(FM_WARNINGS)) {
		jsonw_key(w, "warnings");
		jsonw_array_begin(w);
		for (size_t i = 0; i < d->num_warnings; i++) {
			jsonw_str(w, d->warnings[i]);
		}
		jsonw_array_end(w);
	}
	if (mask & FIELDS_BIT(FM_CATALOG)) {
		jsonw_kv_str(w, "catalog", cat->digest);
	}
	if (mask & FIELDS_BIT(FM_CATALOG_NAME)) {
		jsonw_kv_str(w, "catalog_name", cat->name);
	}
	if ((mask & FIELDS_BIT(FM_EXPLAIN)) && d->explain) {
		explain_write(w, d);
	}
	jsonw_object_end(w);
}

#endif /* SPLITKD_TEST_REFERENCE_H */
