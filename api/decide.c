/* SPDX-License-Identifier: AGPL-3.0-only */
#include "decide.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "answer.h"
#include "explain.h"
#include "names.h"
#include "quote.h"

static void warn(struct decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct decision *d, const char *fmt, ...)
{
	va_list ap;

	if (d->num_warnings == DECIDE_MAX_WARNINGS) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(d->warnings[d->num_warnings++], sizeof(d->warnings[0]), fmt, ap);
	va_end(ap);
}

struct decide_bytes decide_workspace_bytes(uint32_t slots, uint32_t head_dim)
{
	/* slots * (head_dim + 2) * 4 < 2^32 * (2^32 + 2) * 4 < 2^67: split the
	 * 64x64 product into 32-bit halves so no bit is lost. */
	uint64_t a = slots, b = ((uint64_t)head_dim + 2u) * 4u;
	uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
	uint64_t lo_part = a * b_lo, hi_part = a * b_hi; /* each < 2^64 */
	struct decide_bytes r = {head_dim != 0, 0, 0};

	if (!r.known) {
		return r;
	}
	r.lo = lo_part + (hi_part << 32);
	r.hi = (hi_part >> 32) + (r.lo < lo_part ? 1u : 0u);
	return r;
}

/* How a request names each kind of catalog entry, for its problems. */
struct kind_words {
	enum problem_kind unknown;
	const char *param; /* also the word in messages */
	const char *list;  /* the route that lists them */
	const char *missing;
};

static const struct kind_words kind_words[] = {
	[CATALOG_TARGETS] = {PROBLEM_UNKNOWN_TARGET, "target", "GET /v1/targets",
			     "give a target (e.g. target=h100) or an sm_count"},
	[CATALOG_MODELS] = {PROBLEM_UNKNOWN_MODEL, "model", "GET /v1/models",
			    "give a model (e.g. model=llama-3.1-8b) or num_q_heads"},
};

long decide_find(const struct catalog *cat, enum catalog_kind kind, const char *param,
		 struct slice name, struct problem *p)
{
	const struct kind_words *k = &kind_words[kind];
	long i = catalog_find(cat, kind, name.p, name.len);

	if (i < 0) {
		problem_unknown_name(p, k->unknown, param, k->param, name.p, name.len,
				     catalog_suggest(cat, kind, name.p, name.len), k->list);
	}
	return i;
}

/* The entry a query names, or none when a number stands in for it
 * (`number_given`): 0 with *index set (-1 for none), or -1 with the
 * problem set when the name is unknown or neither is given. */
static int resolve_entry(const struct catalog *cat, enum catalog_kind kind, struct slice name,
			 bool number_given, long *index, struct problem *p)
{
	*index = -1;
	if (name.p != NULL) {
		*index = decide_find(cat, kind, kind_words[kind].param, name, p);
		return *index < 0 ? -1 : 0;
	}
	if (!number_given) {
		return problem_set(p, PROBLEM_MISSING_PARAMETER, kind_words[kind].param, NULL, "%s",
				   kind_words[kind].missing);
	}
	return 0;
}

/* The catalog's numbers, unless the query gives its own. */
static int resolve_entries(const struct catalog *cat, const struct query *q, struct decision *d,
			   struct problem *p)
{
	long t, m;

	if (resolve_entry(cat, CATALOG_TARGETS, q->target, q->sm_count.set, &t, p) != 0 ||
	    resolve_entry(cat, CATALOG_MODELS, q->model, q->num_q_heads.set, &m, p) != 0) {
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

	s.max_batch_size = q->max_batch_size.set ? q->max_batch_size.v : 1;
	s.num_seqs = q->num_seqs.set ? q->num_seqs.v : 1;
	s.max_rows = q->max_rows.set ? q->max_rows.v : s.max_batch_size;
	return s;
}

void decide_unparsed(char *out, size_t cap, const char *what, struct slice spelling,
		     const char *so, const char *near)
{
	char quoted[QUOTE_MAX];

	quote_excerpt(spelling.p, spelling.len, quoted, sizeof(quoted));
	snprintf(out, cap, "%s \"%s\" does not parse, so %s, as the engine does%s%s%s", what, quoted,
		 so, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
}

const char *decide_suggest_spelling(struct slice spelling)
{
	static const char *const words[] = {"legacy", "auto", "off", "false"};

	return names_first_near(spelling.p, spelling.len, words, sizeof(words) / sizeof(words[0]));
}

/* A warning into the next free slot, by decide_unparsed's words. */
static void warn_unparsed(struct decision *d, const char *what, struct slice spelling,
			  const char *so)
{
	if (d->num_warnings < DECIDE_MAX_WARNINGS) {
		decide_unparsed(d->warnings[d->num_warnings++], sizeof(d->warnings[0]), what, spelling,
				so, decide_suggest_spelling(spelling));
	}
}

/* Resolves the declaration against the override (ATLAS_ATTN_DECODE_SPLITK)
 * with the core's one rule, as the engine does, and warns when either does
 * not parse or the override is clamped. */
static void resolve_policy(struct decision *d)
{
	const struct splitk_resolution *r = &d->res;

	d->res = splitk_resolve_detail(d->declared_spelling.p, d->declared_spelling.len,
				       d->override.p, d->override.len);
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
	    r->override_requested > SPLITK_MAX_DECODE_SPLITS) {
		warn(d, "override %u is clamped to %u (MAX_DECODE_SPLITS)", r->override_requested,
		     SPLITK_MAX_DECODE_SPLITS);
	}
}

static void compute(struct decision *d)
{
	struct splitk_policy pol = d->res.resolved.policy;

	d->ref_seqs = splitk_split_ref_seqs(d->shape.num_seqs, d->shape.max_batch_size);
	d->num_splits = splitk_num_splits(pol, d->sm_count, d->num_q_heads, d->ref_seqs);
	d->workspace_slots =
		splitk_workspace_slots(pol, d->sm_count, d->num_q_heads, d->shape.max_rows, d->ref_seqs);
	d->workspace_bytes = decide_workspace_bytes(d->workspace_slots, d->head_dim);
}

/* Clears a decision up to its warning texts, which are written before
 * they are read (num_warnings counts them). */
static void clear(struct decision *d)
{
	memset(d, 0, offsetof(struct decision, warnings));
}

int decide_run(const struct catalog *cat, const struct query *q, struct decision *d,
	       struct problem *p)
{
	clear(d);
	if (resolve_entries(cat, q, d, p) != 0) {
		return -1;
	}
	/* the query's declaration, else the target's, else what the engine
	 * falls back to */
	d->declared_spelling = q->declared;
	if (q->declared.p == NULL) {
		d->declared_spelling = d->target ? (struct slice){d->target->declared, d->target->declared_len}
						 : (struct slice){"legacy", 6};
	}
	d->shape = decide_shape_of(q);
	d->override = q->override;
	d->explain = q->explain;

	resolve_policy(d);
	compute(d);

	if (d->shape.max_rows < d->shape.max_batch_size) {
		warn(d,
		     "max_rows (%u) is below max_batch_size (%u): the workspace must cover the "
		     "widest batch the decode-metadata layout accepts",
		     d->shape.max_rows, d->shape.max_batch_size);
	}
	if (d->shape.num_seqs > d->shape.max_rows && d->res.resolved.policy.kind != SPLITK_LEGACY) {
		warn(d, "num_seqs (%u) is above max_rows (%u): a batch that wide would write past "
			"the workspace",
		     d->shape.num_seqs, d->shape.max_rows);
	}
	if (d->workspace_slots == UINT32_MAX && d->res.resolved.policy.kind != SPLITK_LEGACY) {
		warn(d, "workspace_slots saturated at 4294967295 (the seed's u32 arithmetic): the "
			"true need is larger");
	}
	if (d->head_dim == 0 && d->num_warnings < DECIDE_MAX_WARNINGS) {
		decide_why_no_bytes(d, d->warnings[d->num_warnings++], sizeof(d->warnings[0]));
	}
	return 0;
}

/* Appends s[0..len) to out[*n..cap - 1), cut as snprintf cuts. */
static void append(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	size_t room = cap - 1 - *n;
	size_t take = len < room ? len : room;

	memcpy(out + *n, s, take);
	*n += take;
}

/* Every catalog model without a head_dim earns this warning on every
 * answer, so it is put together from its pieces, not through snprintf
 * (a thirtieth of a GET's instructions). */
void decide_why_no_bytes(const struct decision *d, char *out, size_t cap)
{
	static const char head[] = "workspace_bytes is null: head_dim is not known";
	static const char tail[] = "; pass head_dim";
	size_t n = 0;

	if (cap == 0) {
		return;
	}
	append(out, cap, &n, head, sizeof(head) - 1);
	if (d->model != NULL) {
		append(out, cap, &n, " for ", 5);
		append(out, cap, &n, d->model->names.name, strlen(d->model->names.name));
	}
	append(out, cap, &n, tail, sizeof(tail) - 1);
	out[n] = '\0';
}

void decide_pair(const struct catalog_target *t, const struct catalog_model *m,
		 struct decide_shape shape, struct slice override, struct decision *d)
{
	clear(d);
	d->target = t;
	d->model = m;
	d->sm_count = t->sm_count;
	d->num_q_heads = m->num_q_heads;
	d->head_dim = m->head_dim;
	d->declared_spelling = (struct slice){t->declared, t->declared_len};
	d->shape = shape;
	d->override = override;
	resolve_policy(d);
	compute(d);
}

void decide_write_bytes(struct jsonw *w, const char *key, struct decide_bytes b)
{
	jsonw_key(w, key);
	if (b.known) {
		jsonw_u128(w, b.hi, b.lo);
	} else {
		jsonw_null(w);
	}
}

void decide_write(struct jsonw *w, const struct decision *d, const struct catalog *cat)
{
	char label[SPLITK_LABEL_MAX];

	/* the common answer from literal fragments (answer.c), the same bytes */
	if (!d->explain && answer_bound(d, cat) <= ANSWER_STACK) {
		char text[ANSWER_STACK];

		jsonw_raw(w, text, answer_write(text, d, cat));
		return;
	}
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
	jsonw_kv_str(w, "source", d->res.resolved.from_override ? "override" : "declared");
	jsonw_kv_u64(w, "num_splits", d->num_splits);
	jsonw_kv_u64(w, "workspace_slots", d->workspace_slots);
	decide_write_bytes(w, "workspace_bytes", d->workspace_bytes);
	jsonw_key(w, "warnings");
	jsonw_array_begin(w);
	for (size_t i = 0; i < d->num_warnings; i++) {
		jsonw_str(w, d->warnings[i]);
	}
	jsonw_array_end(w);
	jsonw_kv_str(w, "catalog", cat->digest);
	if (d->explain) {
		explain_write(w, d);
	}
	jsonw_object_end(w);
}
