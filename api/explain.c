/* SPDX-License-Identifier: AGPL-3.0-only */
#include "explain.h"

#include <stdio.h>

#include "vocab.h"

/* a * b in 64 bits, or false when it does not fit. */
static bool mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* ctas / sm_count in thousandths, rounded half up; null when too large. */
static void write_waves(struct jsonw *w, bool ok, uint64_t ctas, uint32_t sm_count)
{
	uint64_t scaled;

	jsonw_key(w, "waves");
	if (!ok || !mul_u64(ctas, 2000, &scaled) || scaled > UINT64_MAX - sm_count) {
		jsonw_null(w);
		return;
	}
	jsonw_milli(w, (scaled + sm_count) / (2u * (uint64_t)sm_count));
}

/* The core's count for the decision's inputs under `pol`, at its
 * catalog's constants. */
static uint32_t num_splits(const struct decision *d, struct splitk_policy pol, uint32_t ref_seqs)
{
	return splitk_num_splits_with(d->constants, pol, d->sm_count, d->num_q_heads, ref_seqs);
}

static void write_policy_result(struct jsonw *w, const char *key, struct splitk_policy pol,
				const struct decision *d)
{
	char label[SPLITK_LABEL_MAX];
	uint32_t slots = splitk_workspace_slots_with(d->constants, pol, d->sm_count, d->num_q_heads,
						      d->shape.max_rows, d->ref_seqs);

	splitk_label(pol, label);
	jsonw_key(w, key);
	jsonw_object_begin(w);
	jsonw_kv_str(w, VOCAB_M_POLICY, label);
	jsonw_kv_u64(w, VOCAB_M_NUM_SPLITS, num_splits(d, pol, d->ref_seqs));
	jsonw_kv_u64(w, VOCAB_M_WORKSPACE_SLOTS, slots);
	jsonw_kv_bytes(w, VOCAB_M_WORKSPACE_BYTES, splitk_workspace_bytes(slots, d->head_dim));
	jsonw_object_end(w);
}

/* The resolved policy with a pinned count as it was written, before the
 * clamp (splitk_parse_requested), so the core's terms show the clamp.
 * 0/off/false/no are written 0 there but are the seed's own words for 1
 * ("one split IS no split-K"), not a count it clamps: they stay 1, as the
 * clamp warning has it. */
static struct splitk_policy as_written(const struct decision *d)
{
	struct splitk_policy pol = d->res.resolved.policy;
	uint32_t requested = d->res.resolved.from_override ? d->res.override_requested
							   : d->res.declared_requested;

	if (pol.kind == SPLITK_PINNED && requested != 0) {
		pol.pinned = requested;
	}
	return pol;
}

/* The rule with the catalog's constants written in: the seed's 2 and 16
 * unless it states others. */
static void auto_rule(char *rule, size_t cap, const struct splitk_terms *t,
		      struct splitk_constants k)
{
	int n = snprintf(rule, cap,
			 "auto: clamp(ceil(%u * sm_count / num_q_heads), 1, %u) = "
			 "clamp(ceil(%u * %u / %u), 1, %u) = ",
			 k.target_waves, k.max_decode_splits, k.target_waves, t->sm_count, t->num_q_heads,
			 k.max_decode_splits);

	if (n < 0 || (size_t)n >= cap) {
		return;
	}
	if (t->saturated) {
		/* the product the core divided, not the one arithmetic would give */
		snprintf(rule + n, cap - (size_t)n,
			 "clamp(ceil(%u / %u), 1, %u) = clamp(%u, 1, %u) = %u (%u * sm_count saturates "
			 "at 4294967295, the seed's u32 arithmetic)",
			 t->product, t->num_q_heads, k.max_decode_splits, t->unclamped,
			 k.max_decode_splits, t->num_splits, k.target_waves);
	} else {
		snprintf(rule + n, cap - (size_t)n, "clamp(%u, 1, %u) = %u", t->unclamped,
			 k.max_decode_splits, t->num_splits);
	}
}

static void legacy_rule(char *rule, size_t cap, const struct splitk_terms *t,
			const struct decision *d)
{
	int n = snprintf(rule, cap,
			 "legacy: num_q_heads * max(num_seqs, max_batch_size) = %u * max(%u, %u) = %u%s",
			 t->num_q_heads, d->shape.num_seqs, d->shape.max_batch_size, t->product,
			 t->saturated ? " (saturated)" : "");

	if (n < 0 || (size_t)n >= cap) {
		return;
	}
	if (t->product >= t->sm_count) {
		snprintf(rule + n, cap - (size_t)n, " >= sm_count %u, so 1", t->sm_count);
	} else {
		snprintf(rule + n, cap - (size_t)n, " < sm_count %u, so %u / %u = %u", t->sm_count,
			 t->sm_count, t->product, t->num_splits);
	}
}

/* The rule with its numbers, all of them the core's own (splitk_split_terms),
 * and whether a clamp fired. */
static bool write_rule(struct jsonw *w, const struct decision *d)
{
	struct splitk_terms t = splitk_split_terms_with(d->constants, as_written(d), d->sm_count,
							d->num_q_heads, d->ref_seqs);
	char rule[320];

	if (t.kind == SPLITK_AUTO) {
		auto_rule(rule, sizeof(rule), &t, d->constants);
	} else if (t.kind == SPLITK_LEGACY) {
		legacy_rule(rule, sizeof(rule), &t, d);
	} else {
		snprintf(rule, sizeof(rule), "pinned: clamp(%u, 1, %u) = %u", t.unclamped,
			 d->constants.max_decode_splits, t.num_splits);
	}
	jsonw_kv_str(w, "rule", rule);
	return t.kind != SPLITK_LEGACY && t.unclamped != t.num_splits;
}

static void write_workspace_rule(struct jsonw *w, const struct decision *d)
{
	char rule[256];
	int n;

	if (d->res.resolved.policy.kind == SPLITK_LEGACY) {
		n = snprintf(rule, sizeof(rule),
			     "legacy keeps its old bound: max(sm_count, 1) = %u slots", d->workspace_slots);
	} else {
		n = snprintf(rule, sizeof(rule),
			     "max_rows * num_q_heads * num_splits = %u * %u * %u = %u slots%s",
			     d->shape.max_rows, d->num_q_heads, d->num_splits, d->workspace_slots,
			     d->workspace_slots == UINT32_MAX ? " (saturated)" : "");
	}
	if (d->head_dim != 0 && n > 0 && (size_t)n < sizeof(rule)) {
		snprintf(rule + n, sizeof(rule) - (size_t)n, " of (%u + 2) floats", d->head_dim);
	}
	jsonw_kv_str(w, "workspace_rule", rule);
}

/* The grid and occupancy at one stream and at the widest batch. */
static void write_grids(struct jsonw *w, const struct decision *d, uint32_t s1)
{
	struct splitk_policy pol = d->res.resolved.policy;
	uint32_t smax = num_splits(
		d, pol, splitk_split_ref_seqs(d->shape.max_batch_size, d->shape.max_batch_size));
	uint64_t ctas1 = (uint64_t)d->num_q_heads * s1, ctas_max;
	bool max_ok = mul_u64((uint64_t)d->num_q_heads * smax, d->shape.max_batch_size, &ctas_max);

	jsonw_key(w, "single_stream");
	jsonw_object_begin(w);
	jsonw_key(w, "grid");
	jsonw_array_begin(w);
	jsonw_u64(w, d->num_q_heads);
	jsonw_u64(w, s1);
	jsonw_u64(w, 1);
	jsonw_array_end(w);
	jsonw_kv_u64(w, "ctas", ctas1);
	write_waves(w, true, ctas1, d->sm_count);
	jsonw_object_end(w);

	jsonw_key(w, "max_batch");
	jsonw_object_begin(w);
	jsonw_kv_u64(w, VOCAB_M_NUM_SEQS, d->shape.max_batch_size);
	jsonw_kv_u64(w, VOCAB_M_NUM_SPLITS, smax);
	jsonw_key(w, "ctas");
	if (max_ok) {
		jsonw_u64(w, ctas_max);
	} else {
		jsonw_null(w);
	}
	write_waves(w, max_ok, ctas_max, d->sm_count);
	jsonw_object_end(w);
}

/* Whether the split count holds for every co-batched count the layout
 * accepts. Evaluated, not assumed: every count up to 4096 of them, and
 * the widest. Legacy is monotone in num_seqs, so the two ends decide it
 * when the range is longer. */
static void write_invariance(struct jsonw *w, const struct decision *d, uint32_t s1)
{
	struct splitk_policy pol = d->res.resolved.policy;
	uint32_t upper = d->shape.max_batch_size, probe;
	bool invariant = true;

	if (d->shape.max_rows > upper) {
		upper = d->shape.max_rows;
	}
	if (d->shape.num_seqs > upper) {
		upper = d->shape.num_seqs;
	}
	for (probe = 1; probe <= upper && probe <= 4096 && invariant; probe++) {
		invariant = num_splits(d, pol, splitk_split_ref_seqs(probe, d->shape.max_batch_size)) == s1;
	}
	if (invariant) {
		invariant = num_splits(d, pol, splitk_split_ref_seqs(upper, d->shape.max_batch_size)) == s1;
	}
	jsonw_kv_bool(w, "co_batch_invariant", invariant);
	jsonw_key(w, "co_batch_range");
	jsonw_array_begin(w);
	jsonw_u64(w, 1);
	jsonw_u64(w, upper);
	jsonw_array_end(w);
}

/* The other engines' inputs the query gave, which the seed takes and never
 * reads (that is its point): named only when given, so an answer without
 * them is as it always was. */
static void write_unread(struct jsonw *w, const struct decision *d)
{
	query_mask given = d->unread & DECIDE_ENGINE_FIELDS & ~QUERY_BIT(QF_ENGINE);

	if (given == 0) {
		return;
	}
	jsonw_key(w, "unread");
	jsonw_object_begin(w);
	jsonw_key(w, "inputs");
	jsonw_array_begin(w);
	for (int f = 0; f < QF_COUNT; f++) {
		if (given & QUERY_BIT(f)) {
			jsonw_str(w, query_field_name((enum query_field)f));
		}
	}
	jsonw_array_end(w);
	jsonw_kv_str(w, "why",
		     "the seed's split count reads sm_count and num_q_heads (and, under legacy, "
		     "the batch) and nothing else, so that a sequence gets the same bits whatever "
		     "else is batched; these are the other engines' inputs (engine=)");
	jsonw_object_end(w);
}

/* What each policy would give for the same inputs. */
static void write_policies(struct jsonw *w, const struct decision *d)
{
	jsonw_key(w, "policies");
	jsonw_object_begin(w);
	write_policy_result(w, "legacy", (struct splitk_policy){SPLITK_LEGACY, 0}, d);
	write_policy_result(w, "auto", (struct splitk_policy){SPLITK_AUTO, 0}, d);
	write_policy_result(w, "declared", d->res.declared, d);
	if (d->res.override_parses) {
		write_policy_result(w, "override", d->res.override, d);
	} else {
		jsonw_key(w, "override");
		jsonw_null(w);
	}
	jsonw_object_end(w);
}

void explain_write(struct jsonw *w, const struct decision *d)
{
	uint32_t s1 = num_splits(d, d->res.resolved.policy,
				 splitk_split_ref_seqs(1, d->shape.max_batch_size));

	jsonw_key(w, "explain");
	jsonw_object_begin(w);
	jsonw_kv_bool(w, "clamped", write_rule(w, d));
	write_workspace_rule(w, d);
	write_grids(w, d, s1);
	write_invariance(w, d, s1);
	write_policies(w, d);
	write_unread(w, d);
	jsonw_object_end(w);
}
