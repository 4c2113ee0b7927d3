/* SPDX-License-Identifier: AGPL-3.0-only */
#include "answer.h"

#include "explain.h"
#include "fragment.h"

void answer_write(struct jsonw *w, const struct decision *d, const struct catalog *cat)
{
	/* the common answer from literal fragments (fragment.c), the same
	 * bytes, written in place */
	if (!d->explain) {
		size_t bound = fragment_bound(d, cat);
		char *at = jsonw_raw_room(w, bound);

		if (at != NULL) {
			jsonw_raw_done(w, fragment_write(at, d, cat));
		}
		return;
	}
	answer_write_members(w, d, cat);
}

void answer_write_members(struct jsonw *w, const struct decision *d, const struct catalog *cat)
{
	char label[SPLITK_LABEL_MAX];

	jsonw_object_begin(w);
	jsonw_kv_str_or_null(w, "target", d->target ? d->target->names.name : NULL);
	jsonw_kv_u64(w, "sm_count", d->sm_count);
	splitk_label(d->res.declared, label);
	jsonw_kv_str(w, "declared", label);
	jsonw_kv_str_or_null(w, "model", d->model ? d->model->names.name : NULL);
	jsonw_kv_u64(w, "num_q_heads", d->num_q_heads);
	jsonw_kv_u64_or_null(w, "head_dim", d->head_dim);
	jsonw_kv_u64(w, "max_batch_size", d->shape.max_batch_size);
	jsonw_kv_u64(w, "num_seqs", d->shape.num_seqs);
	jsonw_kv_u64(w, "max_rows", d->shape.max_rows);
	jsonw_key(w, "override");
	if (d->override.p != NULL) {
		jsonw_strn(w, d->override.p, d->override.len);
	} else {
		jsonw_null(w);
	}
	splitk_label(d->res.resolved.policy, label);
	jsonw_kv_str(w, "policy", label);
	jsonw_kv_str(w, "source", decide_source(d));
	jsonw_kv_u64(w, "num_splits", d->num_splits);
	jsonw_kv_u64(w, "workspace_slots", d->workspace_slots);
	jsonw_kv_bytes(w, "workspace_bytes", d->workspace_bytes);
	jsonw_key(w, "warnings");
	jsonw_array_begin(w);
	for (size_t i = 0; i < d->num_warnings; i++) {
		jsonw_str(w, d->warnings[i]);
	}
	jsonw_array_end(w);
	jsonw_kv_str(w, "catalog", cat->digest);
	jsonw_kv_str(w, "catalog_name", cat->name);
	if (d->explain) {
		explain_write(w, d);
	}
	jsonw_object_end(w);
}

void answer_batch_begin(struct jsonw *w, size_t count, size_t each_bytes)
{
	/* size the buffer once, not by doubling */
	jsonw_reserve(w, count * each_bytes);
	jsonw_object_begin(w);
	jsonw_kv_u64(w, "count", count);
	jsonw_key(w, "results");
	jsonw_array_begin(w);
}

void answer_batch_error(struct jsonw *w, const struct problem *p)
{
	jsonw_object_begin(w);
	jsonw_key(w, "error");
	problem_write(w, p);
	jsonw_object_end(w);
}

void answer_batch_end(struct jsonw *w, size_t failures, const struct catalog *cat)
{
	jsonw_array_end(w);
	jsonw_kv_u64(w, "failures", failures);
	jsonw_kv_str(w, "catalog", cat->digest);
	jsonw_object_end(w);
}
