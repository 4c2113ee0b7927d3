/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * catalog — the targets (SM count, declared policy) and models (heads,
 * head_dim) a decision needs that a request does not carry.
 *
 * One JSON format, one loader: the default catalog compiled into the binary
 * and a --catalog FILE go through catalog_load alike. Loading validates
 * everything (types, ranges, names, unique names and aliases across the
 * whole catalog, declared spellings that parse) and refuses a bad file with
 * a message naming the entry and the field.
 *
 * A loaded catalog is immutable: any number of threads may read it at once.
 * The caller owns it (catalog_free). Names match ASCII case-insensitively.
 */
#ifndef SPLITKD_CATALOG_H
#define SPLITKD_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"
#include "splitk.h"

#define CATALOG_MAX_ENTRIES 256 /* per kind */
#define CATALOG_MAX_ALIASES 8   /* per entry */
#define CATALOG_MAX_NAME 64     /* bytes */
#define CATALOG_MAX_NOTES 1024  /* bytes */
#define CATALOG_MAX_BYTES (4u << 20)
#define CATALOG_DIGEST_LEN 24 /* "fnv1a64:" + 16 hex digits */
#define CATALOG_DIGEST_PREFIX "fnv1a64:"
/* A served catalog's name (--catalog NAME=FILE, NAME.json in --catalog-dir):
 * 1 to 63 of a-z 0-9 . _ -, the first a letter or digit (catalog_name_ok) */
#define CATALOG_NAME_MAX 63
#define CATALOG_DEFAULT_NAME "default"

/* What a request may call an entry: its name and aliases, matched ASCII
 * case-insensitively. Targets and models are named alike. catalog_load
 * takes only 1 to 64 of A-Z a-z 0-9 . _ - (NAME_RULE): nothing in a name
 * needs escaping in JSON, which fragment.c counts on. */
struct catalog_names {
	const char *name;
	size_t name_len;
	const char *aliases[CATALOG_MAX_ALIASES];
	size_t alias_lens[CATALOG_MAX_ALIASES];
	size_t num_aliases;
};

#define CATALOG_MAX_COMPUTE_CAPABILITY 999u

struct catalog_target {
	struct catalog_names names;
	uint32_t sm_count;
	/* major * 10 + minor (90 for 9.0), at most
	 * CATALOG_MAX_COMPUTE_CAPABILITY; 0: not stated */
	uint32_t compute_capability;
	const char *declared;                /* the spelling, as written */
	size_t declared_len;
	struct splitk_policy declared_policy; /* what it parses to */
	uint32_t declared_requested;          /* its count as written (splitk_parse_requested) */
	const char *notes;                   /* NULL when absent */
};

struct catalog_model {
	struct catalog_names names;
	uint32_t num_q_heads;
	uint32_t num_kv_heads; /* 0: not stated */
	uint32_t head_dim;     /* 0: not stated */
	uint32_t max_model_len; /* its context length; 0: not stated */
	const char *notes;
};

/* The two lists a catalog holds. */
enum catalog_kind { CATALOG_TARGETS, CATALOG_MODELS };

/* Every name and alias of one kind, hashed (ASCII case folded), in open
 * addressing with linear probes: a slot holds the spelling, its length
 * and its entry's index; name NULL is empty. catalog_load builds both
 * kinds' (at least 16 slots, at least twice the spellings). */
struct catalog_slot {
	const char *name;
	uint32_t len, entry;
};

struct catalog_index {
	struct catalog_slot *slots;
	size_t mask; /* slots - 1, a power of two less one */
};

struct catalog {
	struct catalog_target *targets;
	size_t num_targets;
	struct catalog_model *models;
	size_t num_models;
	char digest[CATALOG_DIGEST_LEN + 1];
	/* the rule's constants (the top-level splitk_target_waves and
	 * max_decode_splits): the seed's unless the file states others */
	struct splitk_constants constants;
	/* the name it is served under: CATALOG_DEFAULT_NAME as catalog_load
	 * leaves it, set (catalog_set_name) before it is shared; every
	 * decision answered from it says it (a plain name: nothing to escape) */
	char name[CATALOG_NAME_MAX + 1];
	size_t name_len;
	bool is_default; /* served as the default catalog (set with the name) */
	struct catalog_index index[2]; /* by enum catalog_kind */
	void *tree; /* the parsed JSON the strings above point into */
};

/*
 * Parses and validates a catalog. Returns a new catalog, or NULL with a
 * message in err (e.g. `targets[2] "b200": field "sm_count": must be an
 * integer from 1 to 4294967295`).
 */
struct catalog *catalog_load(const char *json, size_t len, char *err, size_t err_cap);
/* Whether s[0..len) is a catalog name: 1 to CATALOG_NAME_MAX bytes of
 * a-z 0-9 . _ -, the first a letter or a digit (so no "..", no dot file,
 * nothing a URL or a label needs to escape). */
bool catalog_name_ok(const char *s, size_t len);
/* Names a catalog not yet shared (a valid name: catalog_name_ok), and
 * says whether it is served as the default. */
void catalog_set_name(struct catalog *cat, const char *name, size_t len, bool is_default);
/* Frees a catalog; accepts NULL. */
void catalog_free(struct catalog *cat);

/* Whether s[0..len) is a digest as catalog_load writes one:
 * CATALOG_DIGEST_PREFIX and 16 lowercase hex digits (CATALOG_DIGEST_LEN
 * bytes). Anything else no catalog can have. */
bool catalog_digest_ok(const char *s, size_t len);

/* How many entries of a kind the catalog holds, and the names of the i-th
 * (i below that count). */
size_t catalog_count(const struct catalog *cat, enum catalog_kind kind);
const struct catalog_names *catalog_names_of(const struct catalog *cat, enum catalog_kind kind,
					     size_t i);

/* Finds an entry of a kind by name or alias, case-insensitively: its index
 * in cat->targets or cat->models, or -1 when no entry has that name. */
long catalog_find(const struct catalog *cat, enum catalog_kind kind, const char *name,
		  size_t len);

/* The name or alias of a kind nearest to a typo (names_is_near), or NULL
 * when nothing is near. */
const char *catalog_suggest(const struct catalog *cat, enum catalog_kind kind, const char *name,
			    size_t len);

/* catalog_find with the entry's type: the entry, or NULL when unknown. */
static inline const struct catalog_target *catalog_find_target(const struct catalog *cat,
							       const char *name, size_t len)
{
	long i = catalog_find(cat, CATALOG_TARGETS, name, len);

	return i < 0 ? NULL : &cat->targets[i];
}

static inline const struct catalog_model *catalog_find_model(const struct catalog *cat,
							     const char *name, size_t len)
{
	long i = catalog_find(cat, CATALOG_MODELS, name, len);

	return i < 0 ? NULL : &cat->models[i];
}

/*
 * The schema table (catalog.c): every field of a target or a model, once,
 * in the order the canonical form writes them. It is the allowlist, the
 * loader, the writer (and so the digest) and the diff's list of fields;
 * nothing else spells a field's key.
 */
enum catalog_field_type {
	CATALOG_FIELD_NAME,    /* struct catalog_names: the name (required, first) */
	CATALOG_FIELD_ALIASES, /* struct catalog_names: the aliases (written even when none) */
	CATALOG_FIELD_U32,     /* uint32_t; optional ones are 0 when absent and written when not 0 */
	CATALOG_FIELD_POLICY,  /* a target's declaration: declared, declared_len, declared_policy */
	CATALOG_FIELD_NOTES,   /* const char *, NULL when absent, written when present */
	/* uint32_t, a constant of the rule: 1..max, `absent` when not stated,
	 * written when not `absent` (so stating the seed's value is the same
	 * catalog, with the same digest, as leaving it out) */
	CATALOG_FIELD_CONSTANT,
};

struct catalog_field {
	const char *key;
	enum catalog_field_type type;
	bool required;
	size_t offset; /* of the member in struct catalog_target, catalog_model or catalog */
	uint32_t absent, max; /* FIELD_CONSTANT only: its value when not stated, its bound */
};

/* A kind's rows of the table, *n of them, in schema order. Static: never
 * freed. */
const struct catalog_field *catalog_fields(enum catalog_kind kind, size_t *n);
/* The rows of the catalog's own top-level members besides "targets" and
 * "models" (the rule's constants), offsets into struct catalog, in the
 * order the canonical form writes them (before "targets"). Static. */
const struct catalog_field *catalog_top_fields(size_t *n);

/* Writes one entry, or the whole catalog ({"digest"?, "targets", "models"}),
 * in the canonical form the digest is computed over: fixed key order, no
 * white space, optional fields omitted when absent. Without the digest it
 * is a catalog file catalog_load accepts (what --dump-catalog prints). */
void catalog_write_target(struct jsonw *w, const struct catalog_target *t);
void catalog_write_model(struct jsonw *w, const struct catalog_model *m);
void catalog_write(struct jsonw *w, const struct catalog *cat, bool with_digest);
/* The top-level rows (catalog_top_fields) as catalog_write writes them:
 * members of the object open in `w`, none when every one is its default. */
void catalog_write_top(struct jsonw *w, const struct catalog *cat);

#endif /* SPLITKD_CATALOG_H */
