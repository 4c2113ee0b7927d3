/* SPDX-License-Identifier: AGPL-3.0-only */
#include "decide.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "choice.h"
#include "lookup.h"
#include "warning.h"

/* The next free warning slot, or NULL when all are taken (the rest are
 * dropped: DECIDE_MAX_WARNINGS is a fixed limit). */
static char *next_warning(struct decision *d)
{
	if (d->num_warnings == DECIDE_MAX_WARNINGS) {
		return NULL;
	}
	return d->warnings[d->num_warnings++];
}

#define WARNING_CAP sizeof(((struct decision *)0)->warnings[0])

/* The catalog's numbers, unless the query gives its own. */
static int resolve_entries(const struct catalog *cat, const struct query *q, struct decision *d,
			   struct problem *p)
{
	long t, m;

	if (lookup_entry(cat, CATALOG_TARGETS, q->target, q->sm_count.set, &t, p) != 0 ||
	    lookup_entry(cat, CATALOG_MODELS, q->model, q->num_q_heads.set, &m, p) != 0) {
		return -1;
	}
	d->target = t < 0 ? NULL : &cat->targets[t];
	d->model = m < 0 ? NULL : &cat->models[m];
	d->sm_count = q->sm_count.set ? q->sm_count.v : d->target->sm_count;
	d->num_q_heads = q->num_q_heads.set ? q->num_q_heads.v : d->model->num_q_heads;
	d->head_dim = q->head_dim.set ? q->head_dim.v : (d->model ? d->model->head_dim : 0);
	return 0;
}

struct decide_shape decide_shape_of(const struct query *q)
{
	struct decide_shape s;

	s.max_batch_size = q->max_batch_size.set ? q->max_batch_size.v : QUERY_DEFAULT_MAX_BATCH_SIZE;
	s.num_seqs = q->num_seqs.set ? q->num_seqs.v : QUERY_DEFAULT_NUM_SEQS;
	s.max_rows = q->max_rows.set ? q->max_rows.v : s.max_batch_size;
	return s;
}

/* A warning for a spelling that does not parse, with its did-you-mean. */
static void warn_unparsed(struct decision *d, const char *what, struct slice spelling,
			  const char *so)
{
	char *out = next_warning(d);

	if (out != NULL) {
		warning_unparsed(out, WARNING_CAP, what, spelling, so,
				 warning_suggest_spelling(spelling));
	}
}

/* Resolves the declaration against the override (ATLAS_ATTN_DECODE_SPLITK)
 * with the core's one rule, as the engine does, and warns when either does
 * not parse or the override is clamped. */
static void resolve_policy(struct decision *d)
{
	const struct splitk_resolution *r = &d->res;
	char *out;

	d->res = d->declared_from_target
			 ? splitk_resolve_read_with(d->constants, d->target->declared_policy,
						    d->target->declared_requested, d->override.p,
						    d->override.len)
			 : splitk_resolve_detail_with(d->constants, d->declared_spelling.p,
						      d->declared_spelling.len, d->override.p,
						      d->override.len);
	if (!r->declared_parses) {
		warn_unparsed(d, "declared", d->declared_spelling, "it reads as legacy");
	}
	if (d->override.p != NULL && !r->override_parses) {
		char label[SPLITK_LABEL_MAX], so[80];

		splitk_label(r->declared, label);
		snprintf(so, sizeof(so), "it is ignored and the declared policy (%s) stands", label);
		warn_unparsed(d, "override", d->override, so);
	}
	if (r->override_parses && r->override.kind == SPLITK_PINNED &&
	    r->override_requested > d->constants.max_decode_splits) {
		out = next_warning(d);
		if (out != NULL) {
			warning_clamped(out, WARNING_CAP, r->override_requested,
					d->constants.max_decode_splits);
		}
	}
}

static void compute(struct decision *d)
{
	struct splitk_launch l;

	d->ref_seqs = splitk_split_ref_seqs(d->shape.num_seqs, d->shape.max_batch_size);
	l = splitk_launch_with(d->constants, d->res.resolved.policy, d->sm_count, d->num_q_heads,
			       d->shape.max_rows, d->ref_seqs);
	d->num_splits = l.num_splits;
	d->workspace_slots = l.workspace_slots;
	d->workspace_bytes = splitk_workspace_bytes(d->workspace_slots, d->head_dim);
}

/* Clears a decision up to its constants, which the caller sets next, and
 * its warning texts, which are written before they are read (num_warnings
 * counts them). */
static void clear(struct decision *d)
{
	memset(d, 0, offsetof(struct decision, constants));
}

/* What the shape and the numbers warn of, in the order answers list them;
 * once the slots are taken the rest are dropped (out is NULL). */
static void warn_shape(struct decision *d)
{
	bool legacy = d->res.resolved.policy.kind == SPLITK_LEGACY;
	char *out;

	if (d->shape.max_rows < d->shape.max_batch_size) {
		out = next_warning(d);
		if (out != NULL) {
			warning_rows_below_batch(out, WARNING_CAP, d->shape.max_rows,
						 d->shape.max_batch_size);
		}
	}
	if (d->shape.num_seqs > d->shape.max_rows && !legacy) {
		out = next_warning(d);
		if (out != NULL) {
			warning_seqs_above_rows(out, WARNING_CAP, d->shape.num_seqs, d->shape.max_rows);
		}
	}
	if (d->workspace_slots == UINT32_MAX && !legacy) {
		out = next_warning(d);
		if (out != NULL) {
			warning_slots_saturated(out, WARNING_CAP);
		}
	}
	if (d->head_dim == 0) {
		out = next_warning(d);
		if (out != NULL) {
			/* its words and a catalog name (catalog.h): plain, cut or not */
			d->warning_lens[d->num_warnings - 1] =
				warning_no_bytes(out, WARNING_CAP, d->model ? d->model->names.name : NULL,
						 d->model ? d->model->names.name_len : 0);
			d->warning_plain[d->num_warnings - 1] = true;
		}
	}
}

/* The bit of an ENGINE row the query gives (decide_run's `unread`). */
#define UNREAD_IF_DECIDE(e, name, kind)
#define UNREAD_IF_ENGINE(e, name, kind) | (QUERY_GIVEN_##kind(q->name) ? QUERY_BIT(QF_##e) : 0u)
#define UNREAD_IF_OTHER(e, name, kind)
#define UNREAD_ROW(e, name, kind, scope, bounds) UNREAD_IF_##scope(e, name, kind)

/* A mixed batch (seq_lens): num_seqs is its length, given or not; a
 * num_seqs that says otherwise, or a seq_len beside it, is refused. Out
 * of line: a query without seq_lens pays the test above and no more. */
static __attribute__((noinline)) int mixed_batch(const struct query *q, struct decision *d,
						 struct problem *p)
{
	uint32_t n = q->seq_lens.n;

	if (q->num_seqs.set && q->num_seqs.v != n) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_SEQ_LENS, NULL,
				   "seq_lens lists %u sequences and num_seqs says %u: num_seqs is "
				   "seq_lens' length, so send one of them (or both, agreeing)",
				   n, q->num_seqs.v);
	}
	if (q->seq_len.set) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_SEQ_LENS, NULL,
				   "seq_lens gives each sequence's length; seq_len (every "
				   "sequence's) cannot stand beside it: send one of them");
	}
	d->shape.num_seqs = n;
	d->by_seq_n = n;
	return 0;
}

int decide_run(const struct catalog *cat, const struct query *q, struct decision *d,
	       struct problem *p)
{
	clear(d);
	d->constants = cat->constants;
	if (resolve_entries(cat, q, d, p) != 0) {
		return -1;
	}
	/* the query's declaration, else the target's, else what the engine
	 * falls back to */
	d->declared_spelling = q->declared;
	if (q->declared.p == NULL) {
		d->declared_spelling = d->target ? (struct slice){d->target->declared, d->target->declared_len}
						 : (struct slice){"legacy", 6};
		d->declared_from_target = d->target != NULL;
	}
	d->shape = decide_shape_of(q);
	if (q->seq_lens.n > 0 && mixed_batch(q, d, p) != 0) {
		return -1;
	}
	if (CHOICE_ANY_GIVEN(q) && choice_check_query(q, p) != 0) {
		return -1;
	}
	d->override = q->override;
	d->explain = q->explain;
	if (q->explain) {
		d->unread = 0u VOCAB_PARAMS(UNREAD_ROW);
	}

	resolve_policy(d);
	compute(d);
	warn_shape(d);
	return 0;
}

void decide_pair(struct splitk_constants k, const struct catalog_target *t,
		 const struct catalog_model *m, struct decide_shape shape, struct slice override,
		 struct decision *d)
{
	clear(d);
	d->constants = k;
	d->target = t;
	d->model = m;
	d->sm_count = t->sm_count;
	d->num_q_heads = m->num_q_heads;
	d->head_dim = m->head_dim;
	d->declared_spelling = (struct slice){t->declared, t->declared_len};
	d->declared_from_target = true;
	d->shape = shape;
	d->override = override;
	resolve_policy(d);
	compute(d);
}
