/* SPDX-License-Identifier: AGPL-3.0-only */
#include "catalog.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "jsonin.h"
#include "names.h"
#include "warning.h"

/* What is being validated, for messages: `targets[2] "b200"`. */
struct where {
	const char *kind; /* "targets" or "models" */
	size_t index;
	const char *name; /* NULL until known */
	struct splitk_constants constants; /* the catalog's: a declared count clamps to them */
};

static void fail(char *err, size_t cap, const struct where *at, const char *field, const char *what)
{
	if (at->name != NULL) {
		snprintf(err, cap, "%s[%zu] \"%s\": field \"%s\": %s", at->kind, at->index, at->name,
			 field, what);
	} else {
		snprintf(err, cap, "%s[%zu]: field \"%s\": %s", at->kind, at->index, field, what);
	}
}

/* Names are what a URL path segment can carry without escaping. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CATALOG_MAX_NAME) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && !(i > 0 && (c == '.' || c == '_' || c == '-'))) {
			return false;
		}
	}
	return true;
}

#define NAME_RULE "must be 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit"

static int load_name(const cJSON *obj, const char *key, struct catalog_names *names,
		     struct where *at, char *err, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v == NULL) {
		fail(err, cap, at, key, "is required");
		return -1;
	}
	if (!cJSON_IsString(v) || !valid_name(v->valuestring)) {
		fail(err, cap, at, key, cJSON_IsString(v) ? NAME_RULE : "must be a string");
		return -1;
	}
	names->name = v->valuestring;
	names->name_len = strlen(v->valuestring);
	at->name = v->valuestring;
	return 0;
}

static int load_aliases(const cJSON *obj, const char *key, struct catalog_names *names,
			struct where *at, char *err, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	const cJSON *a;
	size_t *num = &names->num_aliases;

	*num = 0;
	if (v == NULL) {
		return 0;
	}
	if (!cJSON_IsArray(v)) {
		fail(err, cap, at, key, "must be an array of strings");
		return -1;
	}
	cJSON_ArrayForEach(a, v) {
		if (*num == CATALOG_MAX_ALIASES) {
			fail(err, cap, at, key, "has more than 8 entries");
			return -1;
		}
		if (!cJSON_IsString(a) || !valid_name(a->valuestring)) {
			fail(err, cap, at, key, cJSON_IsString(a) ? "each " NAME_RULE
								: "must be an array of strings");
			return -1;
		}
		names->alias_lens[*num] = strlen(a->valuestring);
		names->aliases[(*num)++] = a->valuestring;
	}
	return 0;
}

static int load_notes(const cJSON *obj, const char *key, const char **out, struct where *at,
		      char *err, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (v == NULL) {
		return 0;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) > CATALOG_MAX_NOTES) {
		fail(err, cap, at, key, "must be a string of at most 1024 bytes");
		return -1;
	}
	*out = v->valuestring;
	return 0;
}

/* A u32 field: required, or optional (absent leaves *out at 0). */
static int load_u32(const cJSON *obj, const char *field, bool required, uint32_t *out,
		    struct where *at, char *err, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);

	*out = 0;
	if (v == NULL) {
		if (required) {
			fail(err, cap, at, field, "is required");
			return -1;
		}
		return 0;
	}
	if (!jsonin_u32(v, out)) {
		fail(err, cap, at, field, "must be an integer from 1 to 4294967295");
		return -1;
	}
	return 0;
}

static int check_keys(const cJSON *obj, const char *const *allowed, size_t n, struct where *at,
		      char *err, size_t cap)
{
	const char *bad;

	if (!cJSON_IsObject(obj)) {
		snprintf(err, cap, "%s[%zu]: must be an object", at->kind, at->index);
		return -1;
	}
	switch (jsonin_check_keys(obj, allowed, n, &bad)) {
	case JSONIN_KEYS_OK:
		return 0;
	case JSONIN_KEYS_UNKNOWN: {
		/* the did-you-mean the HTTP API gives for a parameter */
		const char *near = names_nearest(bad, strlen(bad), allowed, n);

		snprintf(err, cap, "%s[%zu]: field \"%s\": unknown field%s%s%s", at->kind, at->index, bad,
			 near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
		return -1;
	}
	case JSONIN_KEYS_DUPLICATE:
		break;
	}
	snprintf(err, cap, "%s[%zu]: field \"%s\": appears twice", at->kind, at->index, bad);
	return -1;
}

/* The policy spelling a target declares. The engine would read a bad
 * declaration as legacy; a catalog that says something it does not mean
 * is refused instead. */
static int load_policy(const cJSON *v, const char *key, struct splitk_constants k,
		       struct catalog_target *t, struct where *at, char *err, size_t cap)
{
	if (!cJSON_IsString(v) ||
	    !splitk_parse_requested_with(k, v->valuestring, strlen(v->valuestring),
					 &t->declared_policy, &t->declared_requested)) {
		/* the did-you-mean an override gets over HTTP */
		const char *near = cJSON_IsString(v) ? warning_suggest_spelling((struct slice){
								v->valuestring, strlen(v->valuestring)})
						    : NULL;
		char what[160];

		snprintf(what, sizeof(what),
			 "must be a policy spelling: legacy, auto, off, or a split count%s%s%s",
			 near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
		fail(err, cap, at, key, what);
		return -1;
	}
	t->declared = v->valuestring;
	t->declared_len = strlen(v->valuestring);
	return 0;
}

/*
 * The schema: every field of an entry, once, in the order the canonical
 * form writes them (so the digest's order too). The one table drives the
 * allowlist (check_keys), loading, writing and the digest, which is a hash
 * of what is written; the diff (diff.c, through catalog_fields) lists a
 * change of any row's field. A new field is a row here, a member in
 * catalog.h, and (for a new type) a case in load_field, write_field and
 * diff.c's field_equal and write_value.
 */
/* `type` is the row's enum catalog_field_type less its CATALOG_ (FIELD_U32...) */
#define TARGET_FIELD(key, type, required, member) \
	{key, CATALOG_##type, required, offsetof(struct catalog_target, member), 0, 0}
#define MODEL_FIELD(key, type, required, member) \
	{key, CATALOG_##type, required, offsetof(struct catalog_model, member), 0, 0}

static const struct catalog_field target_fields[] = {
	TARGET_FIELD("name", FIELD_NAME, true, names),
	TARGET_FIELD("aliases", FIELD_ALIASES, false, names),
	TARGET_FIELD("sm_count", FIELD_U32, true, sm_count),
	TARGET_FIELD("compute_capability", FIELD_U32, false, compute_capability),
	TARGET_FIELD("attn_decode_splitk", FIELD_POLICY, true, declared),
	TARGET_FIELD("notes", FIELD_NOTES, false, notes),
};

static const struct catalog_field model_fields[] = {
	MODEL_FIELD("name", FIELD_NAME, true, names),
	MODEL_FIELD("aliases", FIELD_ALIASES, false, names),
	MODEL_FIELD("num_q_heads", FIELD_U32, true, num_q_heads),
	MODEL_FIELD("num_kv_heads", FIELD_U32, false, num_kv_heads),
	MODEL_FIELD("head_dim", FIELD_U32, false, head_dim),
	MODEL_FIELD("max_model_len", FIELD_U32, false, max_model_len),
	MODEL_FIELD("notes", FIELD_NOTES, false, notes),
};

#define MAX_FIELDS 8

/* What a kind's entries hold, and the check across fields a row cannot say. */
struct schema {
	const struct catalog_field *fields;
	size_t num_fields;
	int (*check)(const void *entry, struct where *at, char *err, size_t cap); /* NULL: none */
};

/* grouped-query attention shares each kv head among whole q heads */
static int check_model(const void *entry, struct where *at, char *err, size_t cap)
{
	const struct catalog_model *m = entry;

	if (m->num_kv_heads != 0 &&
	    (m->num_kv_heads > m->num_q_heads || m->num_q_heads % m->num_kv_heads != 0)) {
		fail(err, cap, at, "num_kv_heads", "must divide num_q_heads");
		return -1;
	}
	return 0;
}

/* a compute capability is major * 10 + minor: 99.9 at most, as the
 * engines' compute_capability input (engines.h) */
static int check_target(const void *entry, struct where *at, char *err, size_t cap)
{
	const struct catalog_target *t = entry;

	if (t->compute_capability > CATALOG_MAX_COMPUTE_CAPABILITY) {
		fail(err, cap, at, "compute_capability",
		     "is major * 10 + minor (90 for 9.0): at most 999");
		return -1;
	}
	return 0;
}

/* The catalog's own members besides the two lists: the rule's constants,
 * bounded by the core (splitk.h), the seed's value when not stated. */
#define TOP_CONSTANT(key, member, absent, max) \
	{key, CATALOG_FIELD_CONSTANT, false, offsetof(struct catalog, constants.member), absent, max}

static const struct catalog_field top_fields[] = {
	TOP_CONSTANT("splitk_target_waves", target_waves, SPLITK_TARGET_WAVES,
		     SPLITK_TARGET_WAVES_MAX),
	TOP_CONSTANT("max_decode_splits", max_decode_splits, SPLITK_MAX_DECODE_SPLITS,
		     SPLITK_MAX_DECODE_SPLITS_MAX),
};

#define NUM_TOP_FIELDS (sizeof(top_fields) / sizeof(top_fields[0]))

const struct catalog_field *catalog_top_fields(size_t *n)
{
	*n = NUM_TOP_FIELDS;
	return top_fields;
}

static const struct schema schemas[] = {
	[CATALOG_TARGETS] = {target_fields, sizeof(target_fields) / sizeof(target_fields[0]),
			     check_target},
	[CATALOG_MODELS] = {model_fields, sizeof(model_fields) / sizeof(model_fields[0]), check_model},
};

const struct catalog_field *catalog_fields(enum catalog_kind kind, size_t *n)
{
	*n = schemas[kind].num_fields;
	return schemas[kind].fields;
}

_Static_assert(sizeof(target_fields) / sizeof(target_fields[0]) <= MAX_FIELDS, "MAX_FIELDS");
_Static_assert(sizeof(model_fields) / sizeof(model_fields[0]) <= MAX_FIELDS, "MAX_FIELDS");

static int load_field(const cJSON *obj, const struct catalog_field *f, char *entry,
		      struct where *at, char *err, size_t cap)
{
	const cJSON *v;

	switch (f->type) {
	case CATALOG_FIELD_NAME:
		return load_name(obj, f->key, (struct catalog_names *)(void *)(entry + f->offset), at, err,
				 cap);
	case CATALOG_FIELD_ALIASES:
		return load_aliases(obj, f->key, (struct catalog_names *)(void *)(entry + f->offset), at,
				    err, cap);
	case CATALOG_FIELD_U32:
		return load_u32(obj, f->key, f->required, (uint32_t *)(void *)(entry + f->offset), at,
				err, cap);
	case CATALOG_FIELD_NOTES:
		return load_notes(obj, f->key, (const char **)(void *)(entry + f->offset), at, err, cap);
	case CATALOG_FIELD_POLICY:
		v = cJSON_GetObjectItemCaseSensitive(obj, f->key);
		if (v == NULL) {
			fail(err, cap, at, f->key, "is required");
			return -1;
		}
		return load_policy(v, f->key, at->constants, (struct catalog_target *)(void *)entry, at,
				   err, cap);
	case CATALOG_FIELD_CONSTANT:
		break; /* top-level only: load_top */
	}
	return -1;
}

/* One entry of a kind: the allowlist from its schema, then each field in
 * the schema's order, then the checks across fields. */
static int load_entry(const cJSON *obj, const struct schema *sc, void *entry, struct where *at,
		      char *err, size_t cap)
{
	const char *keys[MAX_FIELDS];

	for (size_t i = 0; i < sc->num_fields; i++) {
		keys[i] = sc->fields[i].key;
	}
	if (check_keys(obj, keys, sc->num_fields, at, err, cap) != 0) {
		return -1;
	}
	for (size_t i = 0; i < sc->num_fields; i++) {
		if (load_field(obj, &sc->fields[i], entry, at, err, cap) != 0) {
			return -1;
		}
	}
	return sc->check != NULL ? sc->check(entry, at, err, cap) : 0;
}

static const char *const kind_names[] = {"targets", "models"};

size_t catalog_count(const struct catalog *cat, enum catalog_kind kind)
{
	return kind == CATALOG_TARGETS ? cat->num_targets : cat->num_models;
}

const struct catalog_names *catalog_names_of(const struct catalog *cat, enum catalog_kind kind,
					     size_t i)
{
	return kind == CATALOG_TARGETS ? &cat->targets[i].names : &cat->models[i].names;
}

/* The j-th of an entry's names: 0 is the name, then the aliases. */
static const char *nth_name(const struct catalog_names *n, size_t j, size_t *len)
{
	*len = j == 0 ? n->name_len : n->alias_lens[j - 1];
	return j == 0 ? n->name : n->aliases[j - 1];
}

/* Every name and alias, of both kinds, once: a request that says `gb10`
 * must not depend on which list is searched first. */
struct name_ref {
	const char *name;
	size_t len;
	enum catalog_kind kind;
	size_t index;
};

static int check_unique(const struct catalog *cat, char *err, size_t cap)
{
	size_t max = (cat->num_targets + cat->num_models) * (CATALOG_MAX_ALIASES + 1), n = 0;
	struct name_ref *refs = malloc((max ? max : 1) * sizeof(*refs));
	int ret = -1;

	if (refs == NULL) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (int k = CATALOG_TARGETS; k <= CATALOG_MODELS; k++) {
		for (size_t i = 0; i < catalog_count(cat, (enum catalog_kind)k); i++) {
			const struct catalog_names *names = catalog_names_of(cat, (enum catalog_kind)k, i);

			for (size_t j = 0; j <= names->num_aliases; j++) {
				refs[n].name = nth_name(names, j, &refs[n].len);
				refs[n].kind = (enum catalog_kind)k;
				refs[n++].index = i;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (refs[j].len == refs[i].len &&
			    names_equal(refs[j].name, refs[j].len, refs[i].name)) {
				snprintf(err, cap,
					 "%s[%zu]: field \"name\"/\"aliases\": \"%s\" is already used by %s[%zu]",
					 kind_names[refs[j].kind], refs[j].index, refs[j].name,
					 kind_names[refs[i].kind], refs[i].index);
				goto done;
			}
		}
	}
	ret = 0;
done:
	free(refs);
	return ret;
}

static int load_list(const cJSON *root, const char *kind, const cJSON **out, size_t *count,
		     char *err, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, kind);

	if (!cJSON_IsArray(v)) {
		snprintf(err, cap, "field \"%s\": %s", kind,
			 v == NULL ? "is required" : "must be an array");
		return -1;
	}
	*count = (size_t)cJSON_GetArraySize(v);
	if (*count > CATALOG_MAX_ENTRIES) {
		snprintf(err, cap, "field \"%s\": more than %d entries", kind, CATALOG_MAX_ENTRIES);
		return -1;
	}
	*out = v;
	return 0;
}

bool catalog_digest_ok(const char *s, size_t len)
{
	size_t p = sizeof(CATALOG_DIGEST_PREFIX) - 1;

	if (len != CATALOG_DIGEST_LEN || memcmp(s, CATALOG_DIGEST_PREFIX, p) != 0) {
		return false;
	}
	for (size_t i = p; i < len; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return true;
}

/* The digest of the catalog as catalog_write writes it (a failed write
 * hashes nothing). */
static void compute_digest(struct catalog *cat)
{
	struct jsonw w;
	uint64_t h;

	jsonw_init(&w, 4096);
	catalog_write(&w, cat, false);
	h = fnv_hash(w.buf, w.failed ? 0 : w.len);
	jsonw_cleanup(&w);
	snprintf(cat->digest, sizeof(cat->digest), CATALOG_DIGEST_PREFIX "%016llx",
		 (unsigned long long)h);
}

/* Every entry of one list, into the catalog's array of that kind. */
static int load_entries(struct catalog *cat, enum catalog_kind kind, const cJSON *list, char *err,
			size_t cap)
{
	const cJSON *item;
	size_t i = 0;

	cJSON_ArrayForEach(item, list) {
		struct where at = {kind_names[kind], i, NULL, cat->constants};
		void *entry = kind == CATALOG_TARGETS ? (void *)&cat->targets[i] : (void *)&cat->models[i];
		int rc = load_entry(item, &schemas[kind], entry, &at, err, cap);

		if (rc != 0) {
			return -1;
		}
		i++;
	}
	return 0;
}

static unsigned fold(char c)
{
	unsigned char ch = (unsigned char)c;

	return ch >= 'A' && ch <= 'Z' ? ch | 0x20u : ch;
}

/* A hash of the length and three bytes (first, middle, last; ASCII case
 * folded, as names_equal compares): a catalog's names mostly differ
 * there, and a whole-name hash costs more than the scan it replaces. */
static inline size_t name_hash(const char *name, size_t len)
{
	uint32_t h = len == 0 ? 0
			      : (uint32_t)len ^ fold(name[0]) << 8 ^ fold(name[len / 2]) << 16 ^
					fold(name[len - 1]) << 24;

	return (h * 2654435761u) >> 16;
}

static void index_put(struct catalog_index *x, const char *name, size_t len, size_t entry)
{
	size_t at = name_hash(name, len) & x->mask;

	while (x->slots[at].name != NULL) {
		at = (at + 1) & x->mask;
	}
	x->slots[at] = (struct catalog_slot){name, (uint32_t)len, (uint32_t)entry};
}

/* The index of one kind: slots for at least twice its names, so a probe
 * meets an empty slot soon. Names are unique (check_unique), so the one
 * entry an index finds is the one a scan finds. */
static int build_index(struct catalog *cat, enum catalog_kind kind)
{
	struct catalog_index *x = &cat->index[kind];
	size_t count = catalog_count(cat, kind), names = 0, slots = 16;

	for (size_t i = 0; i < count; i++) {
		names += 1 + catalog_names_of(cat, kind, i)->num_aliases;
	}
	while (slots < 2 * names) {
		slots *= 2;
	}
	x->slots = calloc(slots, sizeof(*x->slots));
	if (x->slots == NULL) {
		return -1;
	}
	x->mask = slots - 1;
	for (size_t i = 0; i < count; i++) {
		const struct catalog_names *n = catalog_names_of(cat, kind, i);

		index_put(x, n->name, n->name_len, i);
		for (size_t a = 0; a < n->num_aliases; a++) {
			index_put(x, n->aliases[a], n->alias_lens[a], i);
		}
	}
	return 0;
}

/* The top-level rows: each a count within its bounds, or its default
 * when not stated. Before the entries, whose declared counts clamp to
 * max_decode_splits. */
static int load_top(const cJSON *root, struct catalog *cat, char *err, size_t cap)
{
	for (size_t i = 0; i < NUM_TOP_FIELDS; i++) {
		const struct catalog_field *f = &top_fields[i];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, f->key);
		uint32_t value = f->absent;

		if (v != NULL && (!jsonin_u32(v, &value) || value > f->max)) {
			snprintf(err, cap, "field \"%s\": must be an integer from 1 to %u", f->key, f->max);
			return -1;
		}
		memcpy((char *)cat + f->offset, &value, sizeof(value));
	}
	return 0;
}

bool catalog_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > CATALOG_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
			return false;
		}
	}
	return true;
}

void catalog_set_name(struct catalog *cat, const char *name, size_t len, bool is_default)
{
	memcpy(cat->name, name, len);
	cat->name[len] = '\0';
	cat->name_len = len;
	cat->is_default = is_default;
}

struct catalog *catalog_load(const char *json, size_t len, char *err, size_t err_cap)
{
	const char *keys[2 + NUM_TOP_FIELDS] = {"targets", "models"};
	struct catalog *cat = calloc(1, sizeof(*cat));
	const cJSON *targets, *models, *root;
	const char *bad;
	char why[160];

	if (cat == NULL) {
		snprintf(err, err_cap, "out of memory");
		return NULL;
	}
	catalog_set_name(cat, CATALOG_DEFAULT_NAME, sizeof(CATALOG_DEFAULT_NAME) - 1, true);
	if (len > CATALOG_MAX_BYTES) {
		snprintf(err, err_cap, "catalog is larger than %u bytes", CATALOG_MAX_BYTES);
		goto fail;
	}
	cat->tree = jsonin_parse(json, len, why, sizeof(why));
	root = cat->tree;
	if (root == NULL) {
		snprintf(err, err_cap, "not valid JSON: %s", why);
		goto fail;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(err, err_cap, "the catalog must be a JSON object with \"targets\" and \"models\"");
		goto fail;
	}
	for (size_t i = 0; i < NUM_TOP_FIELDS; i++) {
		keys[2 + i] = top_fields[i].key;
	}
	if (jsonin_check_keys(root, keys, sizeof(keys) / sizeof(keys[0]), &bad) != JSONIN_KEYS_OK) {
		snprintf(err, err_cap, "field \"%s\": unknown or repeated top-level field", bad);
		goto fail;
	}
	if (load_top(root, cat, err, err_cap) != 0 ||
	    load_list(root, "targets", &targets, &cat->num_targets, err, err_cap) != 0 ||
	    load_list(root, "models", &models, &cat->num_models, err, err_cap) != 0) {
		goto fail;
	}
	cat->targets = calloc(cat->num_targets ? cat->num_targets : 1, sizeof(*cat->targets));
	cat->models = calloc(cat->num_models ? cat->num_models : 1, sizeof(*cat->models));
	if (cat->targets == NULL || cat->models == NULL) {
		snprintf(err, err_cap, "out of memory");
		goto fail;
	}
	if (load_entries(cat, CATALOG_TARGETS, targets, err, err_cap) != 0 ||
	    load_entries(cat, CATALOG_MODELS, models, err, err_cap) != 0 ||
	    check_unique(cat, err, err_cap) != 0) {
		goto fail;
	}
	if (build_index(cat, CATALOG_TARGETS) != 0 || build_index(cat, CATALOG_MODELS) != 0) {
		snprintf(err, err_cap, "out of memory");
		goto fail;
	}
	compute_digest(cat);
	return cat;
fail:
	catalog_free(cat);
	return NULL;
}

void catalog_free(struct catalog *cat)
{
	if (cat == NULL) {
		return;
	}
	cJSON_Delete(cat->tree);
	free(cat->index[CATALOG_TARGETS].slots);
	free(cat->index[CATALOG_MODELS].slots);
	free(cat->targets);
	free(cat->models);
	free(cat);
}

/* The first bytes alike but for ASCII case: most other names of the same
 * length differ there, and this is cheaper than the call. */
static bool same_first(const char *a, const char *b)
{
	return ((unsigned char)*a | 0x20u) == ((unsigned char)*b | 0x20u);
}

/* Of the same length: the same bytes (memcmp, the usual spelling), else
 * the same but for ASCII case (a byte-at-a-time fold). */
static bool same_name(const char *name, size_t len, const char *word)
{
	return len == 0 ||
	       (same_first(name, word) && (memcmp(name, word, len) == 0 || names_equal(name, len, word)));
}

long catalog_find(const struct catalog *cat, enum catalog_kind kind, const char *name, size_t len)
{
	const struct catalog_index *x = &cat->index[kind];

	for (size_t at = name_hash(name, len) & x->mask; x->slots[at].name != NULL;
	     at = (at + 1) & x->mask) {
		const struct catalog_slot *s = &x->slots[at];

		if (s->len == len && same_name(name, len, s->name)) {
			return (long)s->entry;
		}
	}
	return -1;
}

const char *catalog_suggest(const struct catalog *cat, enum catalog_kind kind, const char *name,
			    size_t len)
{
	size_t count = catalog_count(cat, kind);
	struct names_near near;

	names_near_init(&near, name, len, 0);
	for (size_t i = 0; i < count; i++) {
		const struct catalog_names *n = catalog_names_of(cat, kind, i);

		/* the spelling that was nearly typed: the name or an alias */
		names_near_offer(&near, n->name);
		for (size_t a = 0; a < n->num_aliases; a++) {
			names_near_offer(&near, n->aliases[a]);
		}
	}
	return near.best;
}

static void write_field(struct jsonw *w, const struct catalog_field *f, const char *entry)
{
	const struct catalog_names *names;
	uint32_t u32;
	const char *str;

	switch (f->type) {
	case CATALOG_FIELD_NAME:
		names = (const void *)(entry + f->offset);
		jsonw_kv_str(w, f->key, names->name);
		break;
	case CATALOG_FIELD_ALIASES:
		names = (const void *)(entry + f->offset);
		jsonw_kv_strs(w, f->key, names->aliases, names->num_aliases);
		break;
	case CATALOG_FIELD_U32:
		memcpy(&u32, entry + f->offset, sizeof(u32));
		if (f->required || u32 != 0) {
			jsonw_kv_u64(w, f->key, u32);
		}
		break;
	case CATALOG_FIELD_POLICY:
	case CATALOG_FIELD_NOTES:
		/* a policy's offset is its spelling's: both are strings there */
		memcpy(&str, entry + f->offset, sizeof(str));
		if (str != NULL) {
			jsonw_kv_str(w, f->key, str);
		}
		break;
	case CATALOG_FIELD_CONSTANT:
		/* the default is not written: absent or stated, the same rule
		 * and the same digest (catalog.h) */
		memcpy(&u32, entry + f->offset, sizeof(u32));
		if (u32 != f->absent) {
			jsonw_kv_u64(w, f->key, u32);
		}
		break;
	}
}

void catalog_write_top(struct jsonw *w, const struct catalog *cat)
{
	for (size_t i = 0; i < NUM_TOP_FIELDS; i++) {
		write_field(w, &top_fields[i], (const char *)cat);
	}
}

/* An entry in the canonical form: its schema's fields in order. */
static void write_entry(struct jsonw *w, const struct schema *sc, const void *entry)
{
	jsonw_object_begin(w);
	for (size_t i = 0; i < sc->num_fields; i++) {
		write_field(w, &sc->fields[i], entry);
	}
	jsonw_object_end(w);
}

void catalog_write_target(struct jsonw *w, const struct catalog_target *t)
{
	write_entry(w, &schemas[CATALOG_TARGETS], t);
}

void catalog_write_model(struct jsonw *w, const struct catalog_model *m)
{
	write_entry(w, &schemas[CATALOG_MODELS], m);
}

void catalog_write(struct jsonw *w, const struct catalog *cat, bool with_digest)
{
	jsonw_object_begin(w);
	if (with_digest) {
		jsonw_kv_str(w, "digest", cat->digest);
	}
	catalog_write_top(w, cat);
	jsonw_key(w, "targets");
	jsonw_array_begin(w);
	for (size_t i = 0; i < cat->num_targets; i++) {
		catalog_write_target(w, &cat->targets[i]);
	}
	jsonw_array_end(w);
	jsonw_key(w, "models");
	jsonw_array_begin(w);
	for (size_t i = 0; i < cat->num_models; i++) {
		catalog_write_model(w, &cat->models[i]);
	}
	jsonw_array_end(w);
	jsonw_object_end(w);
}
