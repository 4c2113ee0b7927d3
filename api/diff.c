/* SPDX-License-Identifier: AGPL-3.0-only */
#include "diff.h"

#include <string.h>

#include "names.h"
#include "vocab.h"
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

static void side_of(const struct catalog *cat, const struct catalog_target *t,
		    const struct catalog_model *m, struct decide_shape shape, struct slice override,
		    struct diff_side *s)
{
	struct decision d;

	memset(s, 0, sizeof(*s));
	if (t == NULL || m == NULL) {
		return;
	}
	decide_pair(cat->constants, t, m, shape, override, &d);
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

			side_of(from, ft, fm, shape, override, &cell.from);
			side_of(to, tt, tm, shape, override, &cell.to);
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
	jsonw_kv_str(w, VOCAB_M_POLICY, s->policy);
	jsonw_kv_u64(w, VOCAB_M_NUM_SPLITS, s->num_splits);
	jsonw_kv_u64(w, VOCAB_M_WORKSPACE_SLOTS, s->workspace_slots);
	jsonw_kv_bytes(w, VOCAB_M_WORKSPACE_BYTES, s->workspace_bytes);
	jsonw_object_end(w);
}

void diff_write_cell(struct jsonw *w, const struct diff_cell *cell)
{
	jsonw_object_begin(w);
	jsonw_kv_str(w, VOCAB_M_TARGET, cell->target);
	jsonw_kv_str(w, VOCAB_M_MODEL, cell->model);
	write_side(w, "from", &cell->from);
	write_side(w, "to", &cell->to);
	jsonw_object_end(w);
}

static void write_cell_cb(void *cls, const struct diff_cell *cell)
{
	diff_write_cell(cls, cell);
}

static void count_cell(void *cls, const struct diff_cell *cell)
{
	(void)cell;
	(*(size_t *)cls)++;
}

bool diff_any_cell(const struct catalog *from, const struct catalog *to, struct decide_shape shape,
		   struct slice override)
{
	size_t n = 0;

	diff_cells(from, to, shape, override, count_cell, &n);
	return n > 0;
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

/* A row's member in an entry, by its type (catalog.h). */
static const struct catalog_names *names_at(const struct catalog_field *f, const char *entry)
{
	return (const void *)(entry + f->offset);
}

static uint32_t u32_at(const struct catalog_field *f, const char *entry)
{
	uint32_t v;

	memcpy(&v, entry + f->offset, sizeof(v));
	return v;
}

/* a policy's offset is its spelling's: both are strings there */
static const char *str_at(const struct catalog_field *f, const char *entry)
{
	const char *v;

	memcpy(&v, entry + f->offset, sizeof(v));
	return v;
}

/* Whether field f of two entries of its kind is the same. */
static bool field_equal(const struct catalog_field *f, const char *a, const char *b)
{
	switch (f->type) {
	case CATALOG_FIELD_NAME:
		return strcmp(names_at(f, a)->name, names_at(f, b)->name) == 0; /* case counts */
	case CATALOG_FIELD_ALIASES:
		return aliases_equal(names_at(f, a), names_at(f, b));
	case CATALOG_FIELD_U32:
	case CATALOG_FIELD_CONSTANT:
		return u32_at(f, a) == u32_at(f, b);
	case CATALOG_FIELD_POLICY:
	case CATALOG_FIELD_NOTES:
		return str_equal(str_at(f, a), str_at(f, b));
	}
	return false;
}

/* One side's value of field f, under `key` ("from" or "to"). */
static void write_value(struct jsonw *w, const char *key, const struct catalog_field *f,
			const char *entry)
{
	switch (f->type) {
	case CATALOG_FIELD_NAME:
		jsonw_kv_str_or_null(w, key, names_at(f, entry)->name);
		break;
	case CATALOG_FIELD_ALIASES:
		jsonw_key(w, key);
		write_aliases(w, names_at(f, entry));
		break;
	case CATALOG_FIELD_U32:
		/* an optional count not stated is 0 in memory and absent in the file */
		if (f->required) {
			jsonw_kv_u64(w, key, u32_at(f, entry));
		} else {
			jsonw_kv_u64_or_null(w, key, u32_at(f, entry));
		}
		break;
	case CATALOG_FIELD_POLICY:
	case CATALOG_FIELD_NOTES:
		jsonw_kv_str_or_null(w, key, str_at(f, entry));
		break;
	case CATALOG_FIELD_CONSTANT:
		/* the value the rule used, stated or the default */
		jsonw_kv_u64(w, key, u32_at(f, entry));
		break;
	}
}

static const char *name_of(enum catalog_kind kind, const void *entry)
{
	return kind == CATALOG_TARGETS ? ((const struct catalog_target *)entry)->names.name
				       : ((const struct catalog_model *)entry)->names.name;
}

/* Whether any row of a table differs between a and b (field_equal). */
static bool fields_differ(const struct catalog_field *fields, size_t n, const void *a,
			  const void *b)
{
	for (size_t i = 0; i < n; i++) {
		if (!field_equal(&fields[i], a, b)) {
			return true;
		}
	}
	return false;
}

/* The rows of a table whose fields differ between a and b, each as
 * {"field", "from", "to"} with the catalog file's keys, in the table's
 * order (the caller has asked fields_differ whether there are any). */
static void field_rows(struct jsonw *w, const struct catalog_field *fields, size_t n,
		       const void *a, const void *b)
{
	for (size_t i = 0; i < n; i++) {
		if (field_equal(&fields[i], a, b)) {
			continue;
		}
		jsonw_object_begin(w);
		jsonw_kv_str(w, "field", fields[i].key);
		write_value(w, "from", &fields[i], a);
		write_value(w, "to", &fields[i], b);
		jsonw_object_end(w);
	}
}

/* The fields of two entries of a kind that differ, every row of the
 * schema table in its order: {"name", "fields": [{"field", "from",
 * "to"}]}, or nothing when none differs. */
static void entry_changes(struct jsonw *w, enum catalog_kind kind, const void *a, const void *b)
{
	size_t n;
	const struct catalog_field *fields = catalog_fields(kind, &n);

	if (!fields_differ(fields, n, a, b)) {
		return;
	}
	jsonw_object_begin(w);
	jsonw_kv_str(w, "name", name_of(kind, b));
	jsonw_key(w, "fields");
	jsonw_array_begin(w);
	field_rows(w, fields, n, a, b);
	jsonw_array_end(w);
	jsonw_object_end(w);
}

/* The top-level rows (the rule's constants) that differ, as
 * "constants": [{"field", "from", "to"}]; no member at all when none
 * does, so a diff of two catalogs at the seed's constants is what it was
 * before a catalog could state them. */
static void top_changes(struct jsonw *w, const struct catalog *from, const struct catalog *to)
{
	size_t n;
	const struct catalog_field *fields = catalog_top_fields(&n);

	if (!fields_differ(fields, n, from, to)) {
		return;
	}
	jsonw_key(w, "constants");
	jsonw_array_begin(w);
	field_rows(w, fields, n, from, to);
	jsonw_array_end(w);
}

static bool entry_changed(enum catalog_kind kind, const void *a, const void *b)
{
	size_t n;
	const struct catalog_field *fields = catalog_fields(kind, &n);

	return fields_differ(fields, n, a, b);
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
		entry_changes(w, kind, u->from[i], u->to[i]);
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
	jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, shape.max_batch_size);
	jsonw_kv_u64(w, VOCAB_M_NUM_SEQS, shape.num_seqs);
	jsonw_kv_u64(w, VOCAB_M_MAX_ROWS, shape.max_rows);
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
	top_changes(w, from, to);
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

bool diff_any_change(const struct catalog *from, const struct catalog *to,
		     struct decide_shape shape, struct slice override)
{
	static const enum catalog_kind kinds[] = {CATALOG_TARGETS, CATALOG_MODELS};
	struct union_list u;
	size_t n;
	const struct catalog_field *top = catalog_top_fields(&n);

	if (fields_differ(top, n, from, to)) {
		return true;
	}
	for (size_t k = 0; k < 2; k++) {
		list_union(from, to, kinds[k], &u);
		for (size_t i = 0; i < u.n; i++) {
			if (u.from[i] == NULL || u.to[i] == NULL ||
			    entry_changed(kinds[k], u.from[i], u.to[i])) {
				return true;
			}
		}
	}
	return diff_any_cell(from, to, shape, override);
}

size_t diff_changed_cells(const struct catalog *from, const struct catalog *to)
{
	size_t n = 0;

	diff_cells(from, to, DIFF_STREAM_SHAPE, (struct slice){NULL, 0}, count_cell, &n);
	return n;
}
