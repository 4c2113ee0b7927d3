/* SPDX-License-Identifier: AGPL-3.0-only */
#include "diff.h"

#include <string.h>

#include "names.h"
#include "warning.h"

/* The index of the entry of a kind named `name` exactly (case aside), or
 * -1. By name alone: an alias that moved to another entry is a change of
 * both entries, not a rename. */
static long find_named(const struct catalog *cat, enum catalog_kind kind,
		       const struct catalog_names *names)
{
	size_t n = catalog_count(cat, kind);

	for (size_t i = 0; i < n; i++) {
		const struct catalog_names *other = catalog_names_of(cat, kind, i);

		if (other->name_len == names->name_len &&
		    names_equal(other->name, other->name_len, names->name)) {
			return (long)i;
		}
	}
	return -1;
}

static void side_of(const struct catalog_target *t, const struct catalog_model *m,
		    struct decide_shape shape, struct slice override, struct diff_side *s)
{
	struct decision d;

	memset(s, 0, sizeof(*s));
	if (t == NULL || m == NULL) {
		return;
	}
	decide_pair(t, m, shape, override, &d);
	s->present = true;
	splitk_label(d.res.resolved.policy, s->policy);
	s->num_splits = d.num_splits;
	s->workspace_slots = d.workspace_slots;
	s->workspace_bytes = d.workspace_bytes;
}

static bool sides_equal(const struct diff_side *a, const struct diff_side *b)
{
	return a->present && b->present && strcmp(a->policy, b->policy) == 0 &&
	       a->num_splits == b->num_splits && a->workspace_slots == b->workspace_slots &&
	       a->workspace_bytes.known == b->workspace_bytes.known &&
	       a->workspace_bytes.hi == b->workspace_bytes.hi &&
	       a->workspace_bytes.lo == b->workspace_bytes.lo;
}

/* The union of a kind's entries: `to`'s in order, then those only `from`
 * has, each with both sides' entry (NULL where absent). At most
 * 2 * CATALOG_MAX_ENTRIES, 8 KiB of pointers on the stack. */
struct union_list {
	size_t n;
	const void *from[2 * CATALOG_MAX_ENTRIES], *to[2 * CATALOG_MAX_ENTRIES];
};

static const void *entry_at(const struct catalog *cat, enum catalog_kind kind, size_t i)
{
	return kind == CATALOG_TARGETS ? (const void *)&cat->targets[i] : (const void *)&cat->models[i];
}

static void list_union(const struct catalog *from, const struct catalog *to, enum catalog_kind kind,
		       struct union_list *u)
{
	size_t nt = catalog_count(to, kind), nf = catalog_count(from, kind);

	u->n = 0;
	for (size_t i = 0; i < nt; i++) {
		long j = find_named(from, kind, catalog_names_of(to, kind, i));

		u->to[u->n] = entry_at(to, kind, i);
		u->from[u->n] = j < 0 ? NULL : entry_at(from, kind, (size_t)j);
		u->n++;
	}
	for (size_t i = 0; i < nf; i++) {
		if (find_named(to, kind, catalog_names_of(from, kind, i)) < 0) {
			u->to[u->n] = NULL;
			u->from[u->n] = entry_at(from, kind, i);
			u->n++;
		}
	}
}

size_t diff_cells(const struct catalog *from, const struct catalog *to, struct decide_shape shape,
		  struct slice override, diff_cell_fn *fn, void *cls)
{
	struct union_list targets, models;
	size_t unchanged = 0;

	list_union(from, to, CATALOG_TARGETS, &targets);
	list_union(from, to, CATALOG_MODELS, &models);
	for (size_t t = 0; t < targets.n; t++) {
		const struct catalog_target *ft = targets.from[t], *tt = targets.to[t];

		for (size_t m = 0; m < models.n; m++) {
			const struct catalog_model *fm = models.from[m], *tm = models.to[m];
			struct diff_cell cell;

			side_of(ft, fm, shape, override, &cell.from);
			side_of(tt, tm, shape, override, &cell.to);
			if (!cell.from.present && !cell.to.present) {
				continue; /* neither side has this pair whole */
			}
			if (sides_equal(&cell.from, &cell.to)) {
				unchanged++;
				continue;
			}
			cell.target = tt != NULL ? tt->names.name : ft->names.name;
			cell.model = tm != NULL ? tm->names.name : fm->names.name;
			if (fn != NULL) {
				fn(cls, &cell);
			}
		}
	}
	return unchanged;
}

static void write_side(struct jsonw *w, const char *key, const struct diff_side *s)
{
	jsonw_key(w, key);
	if (!s->present) {
		jsonw_null(w);
		return;
	}
	jsonw_object_begin(w);
	jsonw_kv_str(w, "policy", s->policy);
	jsonw_kv_u64(w, "num_splits", s->num_splits);
	jsonw_kv_u64(w, "workspace_slots", s->workspace_slots);
	jsonw_kv_bytes(w, "workspace_bytes", s->workspace_bytes);
	jsonw_object_end(w);
}

void diff_write_cell(struct jsonw *w, const struct diff_cell *cell)
{
	jsonw_object_begin(w);
	jsonw_kv_str(w, "target", cell->target);
	jsonw_kv_str(w, "model", cell->model);
	write_side(w, "from", &cell->from);
	write_side(w, "to", &cell->to);
	jsonw_object_end(w);
}

static void write_cell_cb(void *cls, const struct diff_cell *cell)
{
	diff_write_cell(cls, cell);
}

static void count_cell_cb(void *cls, const struct diff_cell *cell)
{
	(void)cell;
	*(bool *)cls = true;
}

bool diff_any_cell(const struct catalog *from, const struct catalog *to, struct decide_shape shape,
		   struct slice override)
{
	bool any = false;

	diff_cells(from, to, shape, override, count_cell_cb, &any);
	return any;
}

/* ------------------------------------------------------------ entries */

static bool str_equal(const char *a, const char *b)
{
	if (a == NULL || b == NULL) {
		return a == b;
	}
	return strcmp(a, b) == 0;
}

static bool aliases_equal(const struct catalog_names *a, const struct catalog_names *b)
{
	if (a->num_aliases != b->num_aliases) {
		return false;
	}
	for (size_t i = 0; i < a->num_aliases; i++) {
		if (a->alias_lens[i] != b->alias_lens[i] ||
		    memcmp(a->aliases[i], b->aliases[i], a->alias_lens[i]) != 0) {
			return false;
		}
	}
	return true;
}

static void write_aliases(struct jsonw *w, const struct catalog_names *n)
{
	jsonw_array_begin(w);
	for (size_t i = 0; i < n->num_aliases; i++) {
		jsonw_strn(w, n->aliases[i], n->alias_lens[i]);
	}
	jsonw_array_end(w);
}

/* Opens the entry's "changed" item once, before its first field. */
struct changes {
	struct jsonw *w;
	const char *name;
	bool open;
};

static void field_begin(struct changes *ch, const char *field)
{
	if (!ch->open) {
		jsonw_object_begin(ch->w);
		jsonw_kv_str(ch->w, "name", ch->name);
		jsonw_key(ch->w, "fields");
		jsonw_array_begin(ch->w);
		ch->open = true;
	}
	jsonw_object_begin(ch->w);
	jsonw_kv_str(ch->w, "field", field);
}

static void changes_end(struct changes *ch)
{
	if (ch->open) {
		jsonw_array_end(ch->w);
		jsonw_object_end(ch->w);
	}
}

static void field_u32(struct changes *ch, const char *field, uint32_t a, uint32_t b, bool zero_null)
{
	if (a == b) {
		return;
	}
	field_begin(ch, field);
	/* a count a model does not state is 0 in memory and absent in the file */
	if (zero_null) {
		jsonw_kv_u64_or_null(ch->w, "from", a);
		jsonw_kv_u64_or_null(ch->w, "to", b);
	} else {
		jsonw_kv_u64(ch->w, "from", a);
		jsonw_kv_u64(ch->w, "to", b);
	}
	jsonw_object_end(ch->w);
}

static void field_str(struct changes *ch, const char *field, const char *a, const char *b)
{
	if (str_equal(a, b)) {
		return;
	}
	field_begin(ch, field);
	jsonw_kv_str_or_null(ch->w, "from", a);
	jsonw_kv_str_or_null(ch->w, "to", b);
	jsonw_object_end(ch->w);
}

static void field_aliases(struct changes *ch, const struct catalog_names *a,
			  const struct catalog_names *b)
{
	if (aliases_equal(a, b)) {
		return;
	}
	field_begin(ch, "aliases");
	jsonw_key(ch->w, "from");
	write_aliases(ch->w, a);
	jsonw_key(ch->w, "to");
	write_aliases(ch->w, b);
	jsonw_object_end(ch->w);
}

/* The fields of a target that differ, with the catalog file's names. */
static void target_changes(struct jsonw *w, const struct catalog_target *a,
			   const struct catalog_target *b)
{
	struct changes ch = {w, b->names.name, false};

	field_str(&ch, "name", a->names.name, b->names.name); /* a change of case */
	field_aliases(&ch, &a->names, &b->names);
	field_u32(&ch, "sm_count", a->sm_count, b->sm_count, false);
	field_str(&ch, "attn_decode_splitk", a->declared, b->declared);
	field_str(&ch, "notes", a->notes, b->notes);
	changes_end(&ch);
}

static void model_changes(struct jsonw *w, const struct catalog_model *a,
			  const struct catalog_model *b)
{
	struct changes ch = {w, b->names.name, false};

	field_str(&ch, "name", a->names.name, b->names.name);
	field_aliases(&ch, &a->names, &b->names);
	field_u32(&ch, "num_q_heads", a->num_q_heads, b->num_q_heads, false);
	field_u32(&ch, "num_kv_heads", a->num_kv_heads, b->num_kv_heads, true);
	field_u32(&ch, "head_dim", a->head_dim, b->head_dim, true);
	field_str(&ch, "notes", a->notes, b->notes);
	changes_end(&ch);
}

static const char *name_of(enum catalog_kind kind, const void *entry)
{
	return kind == CATALOG_TARGETS ? ((const struct catalog_target *)entry)->names.name
				       : ((const struct catalog_model *)entry)->names.name;
}

/* {"added": [...], "removed": [...], "changed": [...]} for one kind. */
static void write_entries(struct jsonw *w, enum catalog_kind kind, const struct union_list *u)
{
	jsonw_object_begin(w);
	jsonw_key(w, "added");
	jsonw_array_begin(w);
	for (size_t i = 0; i < u->n; i++) {
		if (u->from[i] == NULL) {
			jsonw_str(w, name_of(kind, u->to[i]));
		}
	}
	jsonw_array_end(w);
	jsonw_key(w, "removed");
	jsonw_array_begin(w);
	for (size_t i = 0; i < u->n; i++) {
		if (u->to[i] == NULL) {
			jsonw_str(w, name_of(kind, u->from[i]));
		}
	}
	jsonw_array_end(w);
	jsonw_key(w, "changed");
	jsonw_array_begin(w);
	for (size_t i = 0; i < u->n; i++) {
		if (u->from[i] == NULL || u->to[i] == NULL) {
			continue;
		}
		if (kind == CATALOG_TARGETS) {
			target_changes(w, u->from[i], u->to[i]);
		} else {
			model_changes(w, u->from[i], u->to[i]);
		}
	}
	jsonw_array_end(w);
	jsonw_object_end(w);
}

void diff_write(struct jsonw *w, const struct catalog *from, const struct catalog *to,
		struct decide_shape shape, struct slice override)
{
	struct union_list u;
	struct splitk_policy ignored;
	size_t unchanged;

	jsonw_object_begin(w);
	jsonw_kv_str(w, "from", from->digest);
	jsonw_kv_str(w, "to", to->digest);
	jsonw_kv_u64(w, "max_batch_size", shape.max_batch_size);
	jsonw_kv_u64(w, "num_seqs", shape.num_seqs);
	jsonw_kv_u64(w, "max_rows", shape.max_rows);
	jsonw_key(w, "override");
	if (override.p != NULL) {
		jsonw_strn(w, override.p, override.len);
	} else {
		jsonw_null(w);
	}
	jsonw_key(w, "warnings");
	jsonw_array_begin(w);
	if (override.p != NULL && !splitk_parse(override.p, override.len, &ignored)) {
		char msg[320];

		warning_unparsed(msg, sizeof(msg), "override", override,
				"it is ignored and each target's declared policy stands",
				warning_suggest_spelling(override));
		jsonw_str(w, msg);
	}
	jsonw_array_end(w);
	jsonw_key(w, "targets");
	list_union(from, to, CATALOG_TARGETS, &u);
	write_entries(w, CATALOG_TARGETS, &u);
	jsonw_key(w, "models");
	list_union(from, to, CATALOG_MODELS, &u);
	write_entries(w, CATALOG_MODELS, &u);
	jsonw_key(w, "cells");
	jsonw_array_begin(w);
	unchanged = diff_cells(from, to, shape, override, write_cell_cb, w);
	jsonw_array_end(w);
	jsonw_kv_u64(w, "unchanged", unchanged);
	jsonw_object_end(w);
}
