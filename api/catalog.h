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

struct catalog_target {
	const char *name;
	size_t name_len;
	const char *aliases[CATALOG_MAX_ALIASES];
	size_t alias_lens[CATALOG_MAX_ALIASES];
	size_t num_aliases;
	uint32_t sm_count;
	const char *declared;                /* the spelling, as written */
	struct splitk_policy declared_policy; /* what it parses to */
	const char *notes;                   /* NULL when absent */
};

struct catalog_model {
	const char *name;
	size_t name_len;
	const char *aliases[CATALOG_MAX_ALIASES];
	size_t alias_lens[CATALOG_MAX_ALIASES];
	size_t num_aliases;
	uint32_t num_q_heads;
	uint32_t num_kv_heads; /* 0: not stated */
	uint32_t head_dim;     /* 0: not stated */
	const char *notes;
};

struct catalog {
	struct catalog_target *targets;
	size_t num_targets;
	struct catalog_model *models;
	size_t num_models;
	char digest[CATALOG_DIGEST_LEN + 1];
	void *tree; /* the parsed JSON the strings above point into */
};

/*
 * Parses and validates a catalog. Returns a new catalog, or NULL with a
 * message in err (e.g. `targets[2] "b200": field "sm_count": must be an
 * integer from 1 to 4294967295`).
 */
struct catalog *catalog_load(const char *json, size_t len, char *err, size_t err_cap);
/* Frees a catalog; accepts NULL. */
void catalog_free(struct catalog *cat);

/* Finds by name or alias, case-insensitively; NULL when unknown. */
const struct catalog_target *catalog_find_target(const struct catalog *cat, const char *name,
						 size_t len);
const struct catalog_model *catalog_find_model(const struct catalog *cat, const char *name,
					       size_t len);
/* The nearest name or alias to a typo, or NULL when nothing is near. */
const char *catalog_suggest_target(const struct catalog *cat, const char *name, size_t len);
const char *catalog_suggest_model(const struct catalog *cat, const char *name, size_t len);

/* Writes one entry, or the whole catalog ({"digest"?, "targets", "models"}),
 * in the canonical form the digest is computed over: fixed key order, no
 * white space, optional fields omitted when absent. Without the digest it
 * is a catalog file catalog_load accepts (what --dump-catalog prints). */
void catalog_write_target(struct jsonw *w, const struct catalog_target *t);
void catalog_write_model(struct jsonw *w, const struct catalog_model *m);
void catalog_write(struct jsonw *w, const struct catalog *cat, bool with_digest);

#endif /* SPLITKD_CATALOG_H */
