/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The catalog loader: the embedded catalog loads, round-trips through its
 * canonical form, and every kind of broken file is refused with a message
 * that names the entry and the field.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "embedded.h"

#define T(body) "{\"targets\":[" body "],\"models\":[{\"name\":\"m\",\"num_q_heads\":8}]}"
#define M(body) "{\"targets\":[{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}],\"models\":[" body "]}"
/* top-level members beside one target and one model */
#define C(members) "{" members ",\"targets\":[{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"99\"}],\"models\":[{\"name\":\"m\",\"num_q_heads\":8}]}"

struct broken {
	const char *json;
	const char *message; /* a substring the error must contain */
};

static const struct broken broken[] = {
	{"", "not valid JSON"},
	{"{", "not valid JSON"},
	{"[]", "must be a JSON object"},
	{"{\"targets\":[],\"models\":[]} x", "trailing data"},
	{"{\"models\":[]}", "field \"targets\": is required"},
	{"{\"targets\":{},\"models\":[]}", "field \"targets\": must be an array"},
	{"{\"targets\":[],\"models\":[],\"extra\":1}", "field \"extra\""},
	{"{\"targets\":[],\"targets\":[],\"models\":[]}", "field \"targets\""},
	{T("1"), "targets[0]: must be an object"},
	{T("{\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "targets[0]: field \"name\": is required"},
	{T("{\"name\":7,\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "field \"name\": must be a string"},
	{T("{\"name\":\"\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "field \"name\": must be 1 to 64"},
	{T("{\"name\":\"a b\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "field \"name\": must be 1 to 64"},
	{T("{\"name\":\"-x\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "field \"name\""},
	{T("{\"name\":\"t\",\"attn_decode_splitk\":\"auto\"}"), "targets[0] \"t\": field \"sm_count\": is required"},
	{T("{\"name\":\"t\",\"sm_count\":0,\"attn_decode_splitk\":\"auto\"}"), "\"t\": field \"sm_count\": must be an integer"},
	{T("{\"name\":\"t\",\"sm_count\":1.5,\"attn_decode_splitk\":\"auto\"}"), "field \"sm_count\""},
	{T("{\"name\":\"t\",\"sm_count\":\"132\",\"attn_decode_splitk\":\"auto\"}"), "field \"sm_count\""},
	{T("{\"name\":\"t\",\"sm_count\":4294967296,\"attn_decode_splitk\":\"auto\"}"), "field \"sm_count\""},
	{T("{\"name\":\"t\",\"sm_count\":8}"), "field \"attn_decode_splitk\": is required"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"atuo\"}"), "field \"attn_decode_splitk\": must be a policy spelling"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":4}"), "field \"attn_decode_splitk\""},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"aliases\":\"x\"}"), "field \"aliases\": must be an array"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"aliases\":[1]}"), "field \"aliases\""},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"aliases\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}"), "field \"aliases\": has more than 8"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"notes\":5}"), "field \"notes\""},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"colour\":\"red\"}"), "targets[0]: field \"colour\": unknown field"},
	{T("{\"name\":\"t\",\"smcount\":8,\"attn_decode_splitk\":\"auto\"}"), "targets[0]: field \"smcount\": unknown field; did you mean \"sm_count\"?"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"atuo\"}"), "field \"attn_decode_splitk\": must be a policy spelling: legacy, auto, off, or a split count; did you mean \"auto\"?"},
	{M("{\"name\":\"m\",\"num_q_head\":8}"), "models[0]: field \"num_q_head\": unknown field; did you mean \"num_q_heads\"?"},
	{T("{\"name\":\"t\",\"name\":\"u\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}"), "field \"name\": appears twice"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"},{\"name\":\"T\",\"sm_count\":9,\"attn_decode_splitk\":\"auto\"}"), "targets[1]: field \"name\"/\"aliases\": \"T\" is already used by targets[0]"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"aliases\":[\"m\"]}"), "\"m\" is already used"},
	{M("{\"num_q_heads\":8}"), "models[0]: field \"name\": is required"},
	{M("{\"name\":\"m\"}"), "models[0] \"m\": field \"num_q_heads\": is required"},
	{M("{\"name\":\"m\",\"num_q_heads\":-1}"), "field \"num_q_heads\""},
	{M("{\"name\":\"m\",\"num_q_heads\":8,\"head_dim\":0}"), "field \"head_dim\""},
	{M("{\"name\":\"m\",\"num_q_heads\":8,\"num_kv_heads\":3}"), "field \"num_kv_heads\": must divide num_q_heads"},
	{M("{\"name\":\"m\",\"num_q_heads\":8,\"num_kv_heads\":16}"), "field \"num_kv_heads\""},
	{M("{\"name\":\"m\",\"num_q_heads\":8,\"heads\":8}"), "models[0]: field \"heads\": unknown field"},
	{M("{\"name\":\"m\",\"num_q_heads\":8,\"max_model_len\":0}"), "field \"max_model_len\": must be an integer"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"compute_capability\":1000}"),
	 "targets[0] \"t\": field \"compute_capability\": is major * 10 + minor (90 for 9.0): at most 999"},
	{T("{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\",\"compute_capability\":\"9.0\"}"),
	 "field \"compute_capability\": must be an integer"},
	{M("{\"name\":\"t\",\"num_q_heads\":8}"), "\"t\" is already used by targets[0]"},
	{"{\"targets\":[{\"name\":\"t\\u0000x\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}", "not valid JSON"},
	/* the rule's constants: integers within their bounds (splitk.h) */
	{C("\"splitk_target_waves\":0"), "field \"splitk_target_waves\": must be an integer from 1 to 64"},
	{C("\"splitk_target_waves\":65"), "field \"splitk_target_waves\": must be an integer from 1 to 64"},
	{C("\"splitk_target_waves\":2.5"), "field \"splitk_target_waves\": must be an integer"},
	{C("\"splitk_target_waves\":-2"), "field \"splitk_target_waves\": must be an integer"},
	{C("\"splitk_target_waves\":1e300"), "field \"splitk_target_waves\": must be an integer"},
	{C("\"splitk_target_waves\":4294967298"), "field \"splitk_target_waves\": must be an integer"},
	{C("\"splitk_target_waves\":\"2\""), "field \"splitk_target_waves\": must be an integer"},
	{C("\"splitk_target_waves\":null"), "field \"splitk_target_waves\": must be an integer"},
	{C("\"max_decode_splits\":0"), "field \"max_decode_splits\": must be an integer from 1 to 1024"},
	{C("\"max_decode_splits\":1025"), "field \"max_decode_splits\": must be an integer from 1 to 1024"},
	{C("\"max_decode_splits\":16.0001"), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":-16"), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":1e20"), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":\"16\""), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":[16]"), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":true"), "field \"max_decode_splits\": must be an integer"},
	{C("\"max_decode_splits\":16,\"max_decode_splits\":16"), "field \"max_decode_splits\""},
	{C("\"max_decode_split\":16"), "field \"max_decode_split\": unknown"},
};

Test(catalog, embedded_loads)
{
	char err[256];
	struct catalog *cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));

	cr_assert_not_null(cat, "%s", err);
	cr_assert_eq(cat->num_targets, 8);
	cr_assert_eq(cat->num_models, 13);
	cr_assert_eq(strncmp(cat->digest, "fnv1a64:", 8), 0);
	cr_assert_eq(strlen(cat->digest), CATALOG_DIGEST_LEN);
	catalog_free(cat);
}

Test(catalog, broken_files_name_the_field)
{
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		char err[512] = "";
		struct catalog *cat = catalog_load(broken[i].json, strlen(broken[i].json), err, sizeof(err));

		cr_expect_null(cat, "case %zu loaded: %s", i, broken[i].json);
		cr_expect(strstr(err, broken[i].message) != NULL, "case %zu: got \"%s\", want \"%s\"", i,
			  err, broken[i].message);
		catalog_free(cat);
	}
}

Test(catalog, canonical_form_round_trips_with_the_same_digest)
{
	char err[256];
	struct catalog *a = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	struct catalog *b;
	struct jsonw w;

	cr_assert_not_null(a);
	jsonw_init(&w, 0);
	catalog_write(&w, a, false);
	b = catalog_load(w.buf, w.len, err, sizeof(err));
	cr_assert_not_null(b, "canonical form does not load: %s", err);
	cr_assert_str_eq(a->digest, b->digest);
	jsonw_cleanup(&w);
	catalog_free(a);
	catalog_free(b);
}

/* The schema table drives loading, writing and the digest alike: every
 * field, given in any order, is written back in the schema's order (the
 * optional ones only when stated), and a change to any one of them moves
 * the digest. */
#define FULL_TARGET "{\"notes\":\"n\",\"attn_decode_splitk\":\"Auto\",\"compute_capability\":90,\"sm_count\":8,\"aliases\":[\"u\"],\"name\":\"t\"}"
#define FULL_MODEL "{\"notes\":\"k\",\"max_model_len\":4096,\"head_dim\":64,\"num_kv_heads\":2,\"num_q_heads\":8,\"aliases\":[],\"name\":\"m\"}"
#define BARE_MODEL "{\"num_q_heads\":4,\"name\":\"m2\"}"

Test(catalog, every_field_is_written_in_schema_order_and_hashed)
{
	static const char full[] = "{\"targets\":[" FULL_TARGET "],\"models\":[" FULL_MODEL "," BARE_MODEL "]}";
	static const char canonical[] =
		"{\"targets\":[{\"name\":\"t\",\"aliases\":[\"u\"],\"sm_count\":8,\"compute_capability\":90,"
		"\"attn_decode_splitk\":\"Auto\",\"notes\":\"n\"}],\"models\":[{\"name\":\"m\",\"aliases\":[],"
		"\"num_q_heads\":8,\"num_kv_heads\":2,\"head_dim\":64,\"max_model_len\":4096,\"notes\":\"k\"},"
		"{\"name\":\"m2\",\"aliases\":[],\"num_q_heads\":4}]}";
	/* one field changed at a time, every field of both kinds */
	static const char *const from[] = {"\"n\"", "\"Auto\"", ":8,", "\"u\"", "\"t\"", "\"k\"", ":64", ":2,",
					   ":8,\"aliases\":[],", "\"m\"", ":90,", ":4096,"};
	static const char *const to[] = {"\"N\"", "\"legacy\"", ":9,", "\"v\"", "\"s\"", "\"K\"", ":65", ":4,",
					 ":16,\"aliases\":[],", "\"n\"", ":80,", ":8192,"};
	char err[256];
	struct catalog *a = catalog_load(full, strlen(full), err, sizeof(err));
	struct jsonw w;

	cr_assert_not_null(a, "%s", err);
	jsonw_init(&w, 0);
	catalog_write(&w, a, false);
	jsonw_terminate(&w);
	cr_assert_str_eq(w.buf, canonical);
	jsonw_cleanup(&w);
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		char changed[sizeof(full) + 16];
		const char *at = strstr(full, from[i]);
		struct catalog *b;

		cr_assert_not_null(at, "%s", from[i]);
		snprintf(changed, sizeof(changed), "%.*s%s%s", (int)(at - full), full, to[i],
			 at + strlen(from[i]));
		b = catalog_load(changed, strlen(changed), err, sizeof(err));
		cr_assert_not_null(b, "%s: %s", changed, err);
		cr_assert_str_neq(a->digest, b->digest, "%s -> %s", from[i], to[i]);
		catalog_free(b);
	}
	catalog_free(a);
}

Test(catalog, digest_ignores_layout_but_not_content)
{
	const char *x = "{\"targets\":[{\"name\":\"t\",\"sm_count\":8,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
	const char *y = "{ \"models\" : [ ],\n \"targets\": [ {\"attn_decode_splitk\":\"auto\", \"sm_count\":8, \"name\":\"t\"} ] }";
	const char *z = "{\"targets\":[{\"name\":\"t\",\"sm_count\":9,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
	char err[256];
	struct catalog *a = catalog_load(x, strlen(x), err, sizeof(err));
	struct catalog *b = catalog_load(y, strlen(y), err, sizeof(err));
	struct catalog *c = catalog_load(z, strlen(z), err, sizeof(err));

	cr_assert(a && b && c);
	cr_assert_str_eq(a->digest, b->digest);
	cr_assert_str_neq(a->digest, c->digest);
	catalog_free(a);
	catalog_free(b);
	catalog_free(c);
}

Test(catalog, lookup_is_case_insensitive_over_names_and_aliases)
{
	char err[256];
	struct catalog *cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));

	cr_assert_str_eq(catalog_find_target(cat, "SM90", 4)->names.name, "hopper");
	cr_assert_str_eq(catalog_find_target(cat, "H200", 4)->names.name, "hopper");
	cr_assert_str_eq(catalog_find_target(cat, "Gb10", 4)->names.name, "gb10");
	cr_assert_null(catalog_find_target(cat, "h10", 3));
	cr_assert_null(catalog_find_target(cat, "h1000", 5));
	cr_assert_str_eq(catalog_find_model(cat, "Qwen3.8-27B", 11)->names.name, "qwen3.8-27b");
	cr_assert_eq(catalog_find_model(cat, "qwen3.8-27b", 11)->head_dim, 0); /* the seed does not say */
	cr_assert_str_eq(catalog_suggest(cat, CATALOG_MODELS, "qwen3-32", 8), "qwen3-32b");
	cr_assert_null(catalog_suggest(cat, CATALOG_MODELS, "zzzzzz", 6));
	catalog_free(cat);
}

/* The name index (catalog.h) against the scan it replaced: the most
 * entries a catalog takes, names and aliases alike in length, first,
 * middle and last byte (so their hashes collide and the probes run long),
 * each found as itself, in upper case, and never a near miss. */
Test(catalog, every_name_and_alias_of_a_full_catalog_is_found_by_the_index)
{
	static char json[CATALOG_MAX_ENTRIES * 160 + 128];
	char err[256], name[32];
	size_t n = 0;
	struct catalog *cat;

	n += (size_t)snprintf(json + n, sizeof(json) - n, "{\"targets\":[");
	for (int i = 0; i < CATALOG_MAX_ENTRIES; i++) {
		n += (size_t)snprintf(json + n, sizeof(json) - n,
				      "%s{\"name\":\"t%03dt\",\"aliases\":[\"a%03da\",\"x%04dx\"],"
				      "\"sm_count\":%d,\"attn_decode_splitk\":\"auto\"}",
				      i ? "," : "", i, i, i, i + 1);
	}
	n += (size_t)snprintf(json + n, sizeof(json) - n,
			      "],\"models\":[{\"name\":\"m\",\"num_q_heads\":8}]}");
	cr_assert_lt(n, sizeof(json));
	cat = catalog_load(json, n, err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	for (int i = 0; i < CATALOG_MAX_ENTRIES; i++) {
		const char *forms[] = {"t%03dt", "a%03da", "x%04dx", "T%03dT", "X%04dX"};

		for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			const struct catalog_target *t;

			snprintf(name, sizeof(name), forms[f], i);
			t = catalog_find_target(cat, name, strlen(name));
			cr_assert_not_null(t, "%s", name);
			cr_assert_eq(t->sm_count, (uint32_t)i + 1, "%s found entry %u", name, t->sm_count);
		}
		snprintf(name, sizeof(name), "t%03dx", i);
		cr_assert_null(catalog_find_target(cat, name, strlen(name)), "%s", name);
		snprintf(name, sizeof(name), "t%04dt", i);
		cr_assert_null(catalog_find_target(cat, name, strlen(name)), "%s", name);
	}
	cr_assert_null(catalog_find_target(cat, "", 0));
	catalog_free(cat);
}

Test(catalog, empty_lists_are_a_valid_catalog)
{
	const char *e = "{\"targets\":[],\"models\":[]}";
	char err[128];
	struct catalog *cat = catalog_load(e, strlen(e), err, sizeof(err));

	cr_assert_not_null(cat, "%s", err);
	cr_assert_null(catalog_find_target(cat, "h100", 4));
	catalog_free(cat);
}

/* ------------------------------------------------------------ the fuzz seeds */

/* A file of the source tree, whole and NUL-terminated (tests run from its
 * top, as make unit runs them). */
static char *slurp_tree(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(CATALOG_MAX_BYTES + 1);
	size_t n;

	cr_assert_not_null(f, "%s: run from the top of the source tree", path);
	cr_assert_not_null(buf);
	n = fread(buf, 1, CATALOG_MAX_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The rows of the schema table: k 0 and 1 the kinds', 2 the top level's. */
static const struct catalog_field *table_rows(size_t k, size_t *n)
{
	static const enum catalog_kind kinds[] = {CATALOG_TARGETS, CATALOG_MODELS};

	return k < 2 ? catalog_fields(kinds[k], n) : catalog_top_fields(n);
}

static bool is_schema_key(const char *word)
{
	if (strcmp(word, "targets") == 0 || strcmp(word, "models") == 0) {
		return true;
	}
	for (size_t k = 0; k < 3; k++) {
		size_t n;
		const struct catalog_field *fields = table_rows(k, &n);

		for (size_t i = 0; i < n; i++) {
			if (strcmp(fields[i].key, word) == 0) {
				return true;
			}
		}
	}
	return false;
}

/* The catalog fuzzer starts from the catalog served (its seed is
 * api/catalog.json, byte for byte), and its dictionary holds every key of
 * the schema table (each as "\"key\"") and no key the table lacks: a field
 * added to the table and not to fuzz/catalog.dict fails here, and so does
 * a seed left behind when api/catalog.json changes. */
Test(catalog, the_fuzz_seeds_follow_the_table_and_the_catalog)
{
	size_t len;
	char *seed = slurp_tree("fuzz/corpus/catalog/default.json", &len);
	char *dict = slurp_tree("fuzz/catalog.dict", &len), *line, *next;
	char want[80];

	cr_assert(len > 0);
	cr_assert(strlen(seed) == embedded_catalog_json_len &&
			  memcmp(seed, embedded_catalog_json, embedded_catalog_json_len) == 0,
		  "fuzz/corpus/catalog/default.json is not api/catalog.json: copy it over");
	for (size_t k = 0; k < 3; k++) {
		size_t n;
		const struct catalog_field *fields = table_rows(k, &n);

		for (size_t i = 0; i < n; i++) {
			snprintf(want, sizeof(want), "\n\"\\\"%s\\\"\"\n", fields[i].key);
			cr_assert_not_null(strstr(dict, want), "fuzz/catalog.dict lacks the key %s",
					   fields[i].key);
		}
	}
	/* every quoted word is a key of the table or a policy spelling */
	for (line = dict; line != NULL && *line != '\0'; line = next) {
		char word[64];
		struct splitk_policy p;

		next = strchr(line, '\n');
		if (next != NULL) {
			*next++ = '\0';
		}
		if (sscanf(line, "\"\\\"%63[^\\]\\\"\"", word) != 1) {
			continue; /* punctuation and numbers */
		}
		cr_assert(is_schema_key(word) || splitk_parse(word, strlen(word), &p),
			  "fuzz/catalog.dict has \"%s\", no key of the schema table", word);
	}
	free(seed);
	free(dict);
}

/* ------------------------------------------------------------ the rule's constants */

static struct catalog *load_ok(const char *json)
{
	char err[256];
	struct catalog *cat = catalog_load(json, strlen(json), err, sizeof(err));

	cr_assert_not_null(cat, "%s: %s", json, err);
	return cat;
}

/* Each constant at 1 and at its bound loads and is used; a declared count
 * clamps to max_decode_splits; absent is the seed's value. */
Test(catalog, the_constants_load_at_their_bounds_and_clamp_declared_counts)
{
	struct catalog *none = load_ok(C("\"splitk_target_waves\":2"));
	struct catalog *low = load_ok(C("\"splitk_target_waves\":1,\"max_decode_splits\":1"));
	struct catalog *high = load_ok(C("\"splitk_target_waves\":64,\"max_decode_splits\":1024"));
	struct catalog *mid = load_ok(C("\"max_decode_splits\":64"));

	cr_assert_eq(none->constants.target_waves, 2);
	cr_assert_eq(none->constants.max_decode_splits, 16);
	cr_assert_eq(none->targets[0].declared_policy.pinned, 16); /* "99" at the seed's cap */
	cr_assert_eq(low->constants.target_waves, 1);
	cr_assert_eq(low->constants.max_decode_splits, 1);
	cr_assert_eq(low->targets[0].declared_policy.pinned, 1);
	cr_assert_eq(high->constants.target_waves, 64);
	cr_assert_eq(high->constants.max_decode_splits, 1024);
	cr_assert_eq(high->targets[0].declared_policy.pinned, 99);
	cr_assert_eq(high->targets[0].declared_requested, 99);
	cr_assert_eq(mid->constants.target_waves, 2);
	cr_assert_eq(mid->targets[0].declared_policy.pinned, 64);
	catalog_free(none);
	catalog_free(low);
	catalog_free(high);
	catalog_free(mid);
}

/* Revision ids are pinned by schedulers: a catalog without the constants
 * keeps its digest, and so does one that states the seed's values (the
 * same rule: not written in the canonical form); another value moves it,
 * and is written first, before "targets". */
Test(catalog, the_constants_move_the_digest_only_off_their_defaults)
{
	static const char bare[] = "{\"targets\":[],\"models\":[]}";
	struct catalog *a = load_ok(bare);
	struct catalog *b = load_ok("{\"targets\":[],\"models\":[],\"max_decode_splits\":16,\"splitk_target_waves\":2}");
	struct catalog *c = load_ok("{\"targets\":[],\"models\":[],\"max_decode_splits\":32}");
	struct catalog *d = load_ok("{\"targets\":[],\"models\":[],\"splitk_target_waves\":4}");
	struct jsonw w;

	cr_assert_str_eq(a->digest, b->digest);
	cr_assert_str_neq(a->digest, c->digest);
	cr_assert_str_neq(a->digest, d->digest);
	cr_assert_str_neq(c->digest, d->digest);
	jsonw_init(&w, 0);
	catalog_write(&w, b, false);
	jsonw_terminate(&w);
	cr_assert_str_eq(w.buf, bare);
	jsonw_cleanup(&w);
	jsonw_init(&w, 0);
	catalog_write(&w, d, true);
	jsonw_terminate(&w);
	cr_assert_not_null(strstr(w.buf, "\",\"splitk_target_waves\":4,\"targets\":[]"), "%s", w.buf);
	cr_assert_null(strstr(w.buf, "max_decode_splits"), "%s", w.buf);
	jsonw_cleanup(&w);
	catalog_free(a);
	catalog_free(b);
	catalog_free(c);
	catalog_free(d);
}
