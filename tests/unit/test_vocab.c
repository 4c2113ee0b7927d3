/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The contract against the vocabulary (api/vocab.h): api/openapi.json
 * names every decision input where a client sends it and every answer
 * member where a client reads it, and nothing the tables do not name.
 * A row added to vocab.h alone fails here until the contract says it
 * (scripts/check-input-recipe.sh relies on that).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "decide.h"
#include "engines.h"
#include "embedded.h"
#include "fields.h"
#include "helpers.h"
#include "query.h"
#include "vocab.h"

struct param_row {
	enum query_field f;
	const char *name;
	bool decide;
};

#define PARAM_IS_DECIDE true
#define PARAM_IS_ENGINE true
#define PARAM_IS_OTHER false
#define PARAM_ROW(e, name, kind, scope, bounds) {QF_##e, #name, PARAM_IS_##scope},
static const struct param_row params[] = {VOCAB_PARAMS(PARAM_ROW)};
#define NUM_PARAMS (sizeof(params) / sizeof(params[0]))

static cJSON *openapi(void)
{
	cJSON *doc = cJSON_ParseWithLength(embedded_openapi_json, embedded_openapi_json_len);
	cr_assert_not_null(doc, "api/openapi.json is not JSON");
	return doc;
}

static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[256];
	const cJSON *cur = o;

	cr_assert_lt(strlen(path), sizeof(buf));
	memcpy(buf, path, strlen(path) + 1);
	for (char *key = buf, *next; key != NULL; key = next) {
		next = strchr(key, '/');
		if (next != NULL) {
			*next++ = '\0';
		}
		cur = cJSON_GetObjectItemCaseSensitive(cur, key);
		cr_assert_not_null(cur, "openapi.json has no %s (at %s)", path, key);
	}
	return cur;
}

/* The parameter names GET /v1/splits takes, through its $refs. */
static bool splits_get_takes(const cJSON *doc, const char *name)
{
	const cJSON *paths = at(doc, "paths");
	const cJSON *get = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(paths, "/v1/splits"), "get");
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(get, "parameters");
	const cJSON *comps = at(doc, "components/parameters");
	const cJSON *p;

	cJSON_ArrayForEach(p, ps)
	{
		const cJSON *ref = cJSON_GetObjectItemCaseSensitive(p, "$ref");
		const cJSON *def = p;

		if (cJSON_IsString(ref)) {
			const char *slash = strrchr(ref->valuestring, '/');
			def = cJSON_GetObjectItemCaseSensitive(comps, slash + 1);
		}
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(def, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
			return true;
		}
	}
	return false;
}

Test(vocab, every_decision_input_is_in_the_contract_and_no_other)
{
	cJSON *doc = openapi();
	const cJSON *query = at(doc, "components/schemas/Query/properties");
	const cJSON *context = at(doc, "components/schemas/OfrepContext/properties");
	const cJSON *prop;

	for (size_t i = 0; i < NUM_PARAMS; i++) {
		const struct param_row *r = &params[i];

		cr_assert_eq(r->decide, (DECIDE_FIELDS & QUERY_BIT(r->f)) != 0);
		if (!r->decide) {
			continue;
		}
		cr_assert(splits_get_takes(doc, r->name),
			  "openapi.json: GET /v1/splits does not take %s", r->name);
		cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(query, r->name),
				   "openapi.json: the Query schema has no %s", r->name);
		if (r->f != QF_EXPLAIN) {
			cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(context, r->name),
					   "openapi.json: OfrepContext has no %s", r->name);
		}
	}
	/* and the other way: the body takes what the table names, no more */
	cJSON_ArrayForEach(prop, query)
	{
		bool known = false;

		for (size_t i = 0; i < NUM_PARAMS; i++) {
			known = known || strcmp(params[i].name, prop->string) == 0;
		}
		cr_assert(known, "openapi.json: Query has %s, which vocab.h does not name",
			  prop->string);
	}
	cJSON_Delete(doc);
}

Test(vocab, every_member_is_in_the_decision_schema_in_order)
{
	cJSON *doc = openapi();
	const char *schemas[] = {"components/schemas/Decision/properties",
				 "components/schemas/DecisionFields/properties"};

	for (size_t s = 0; s < sizeof(schemas) / sizeof(schemas[0]); s++) {
		const cJSON *props = at(doc, schemas[s]);
		const cJSON *prop = props->child;

		for (int m = 0; m < FM_COUNT; m++, prop = prop ? prop->next : NULL) {
			cr_assert_not_null(prop, "%s ends before %s", schemas[s], fields_name(m));
			cr_assert_str_eq(prop->string, fields_name(m), "%s: member %d", schemas[s], m);
		}
		cr_assert_null(prop, "%s has %s, which vocab.h does not name", schemas[s],
			       prop ? prop->string : "");
	}
	cJSON_Delete(doc);
}

/* The names the tables give are the names the parsers answer to: each
 * decision input given as a query parameter is read, not refused. */
Test(vocab, every_decision_input_parses_by_its_table_name)
{
	for (size_t i = 0; i < NUM_PARAMS; i++) {
		const struct param_row *r = &params[i];
		struct query q;
		struct problem p;
		char raw[64], scratch[64];

		if (!r->decide) {
			continue;
		}
		int n = snprintf(raw, sizeof(raw), "%s=%s", r->name,
				 r->f == QF_EXPLAIN ? "true" : "1");
		cr_assert_eq(query_parse(raw, (size_t)n, scratch, DECIDE_FIELDS, &q, &p), 0,
			     "%s: %s", r->name, p.detail);
	}
}

/* The fuzzers' dictionaries know every decision input by name: the query
 * string's `name=` (fuzz/api.dict) and the batch's `"name":`
 * (fuzz/batch.dict), so a new input is fuzzed from its first run. */
Test(vocab, the_fuzz_dictionaries_name_every_decision_input)
{
	size_t api_len, batch_len;
	char *api = read_whole_file("fuzz/api.dict", &api_len);
	char *batch = read_whole_file("fuzz/batch.dict", &batch_len);

	cr_assert_not_null(api, "fuzz/api.dict (run from the repository)");
	cr_assert_not_null(batch, "fuzz/batch.dict");
	for (size_t i = 0; i < NUM_PARAMS; i++) {
		char q[80], b[80];

		if (!params[i].decide) {
			continue;
		}
		snprintf(q, sizeof(q), "\n\"%s=\"\n", params[i].name);
		snprintf(b, sizeof(b), "\n\"\\\"%s\\\":\"\n", params[i].name);
		cr_assert_not_null(strstr(api, q), "fuzz/api.dict lacks %s=", params[i].name);
		cr_assert_not_null(strstr(batch, b), "fuzz/batch.dict lacks \"%s\":", params[i].name);
	}
	free(api);
	free(batch);
}

/* An engine's answer writes VOCAB_ENGINE_MEMBERS, the engine-only inputs
 * from their table: EngineDecision names the same members in the same
 * order, and nothing else. */
static const char *const engine_members[] = {
#define ENGINE_MEMBER(m) VOCAB_M_##m,
#define ENGINE_INPUT_MEMBER(e, name, kind, bounds) #name,
#define ENGINE_INPUT_MEMBER_OPTION ENGINE_INPUT_MEMBER
	VOCAB_ENGINE_MEMBERS(ENGINE_MEMBER, ENGINE_INPUT_MEMBER)
#undef ENGINE_MEMBER
#undef ENGINE_INPUT_MEMBER
#undef ENGINE_INPUT_MEMBER_OPTION
};

Test(vocab, every_engine_member_is_in_the_engine_schema_in_order)
{
	cJSON *doc = openapi();
	const cJSON *prop = at(doc, "components/schemas/EngineDecision/properties")->child;
	size_t n = sizeof(engine_members) / sizeof(engine_members[0]);

	for (size_t m = 0; m < n; m++, prop = prop ? prop->next : NULL) {
		cr_assert_not_null(prop, "EngineDecision ends before %s", engine_members[m]);
		cr_assert_str_eq(prop->string, engine_members[m], "EngineDecision: member %zu", m);
	}
	cr_assert_null(prop, "EngineDecision has %s, which vocab.h does not name",
		       prop ? prop->string : "");
	cJSON_Delete(doc);
}

static bool in_enum(const cJSON *list, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, list)
	{
		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0) {
			return true;
		}
	}
	return false;
}

/* GET /v1/engines' inputs and reads, and /v1/compare's head, are the
 * table's: the contract names every engine input there, its reads every
 * row, and the table every name it lists. */
Test(vocab, every_engine_input_is_in_the_engines_contract)
{
	cJSON *doc = openapi();
	const cJSON *names = at(doc, "components/schemas/EngineInput/properties/name/enum");
	const cJSON *reads = at(doc, "components/schemas/Engine/properties/reads/items/enum");
	const cJSON *compare = at(doc, "components/schemas/Compare/properties");
	struct jsonw w;
	size_t n;
	const struct engines_param *x = engines_params(&n);

	const cJSON *parameters = at(doc, "components/parameters");

	cr_assert_eq((size_t)cJSON_GetArraySize(names), n, "EngineInput names %d inputs, the table %zu",
		     cJSON_GetArraySize(names), n);
	for (size_t i = 0; i < n; i++) {
		const cJSON *param = cJSON_GetObjectItemCaseSensitive(parameters, x[i].name);
		const cJSON *about = cJSON_GetObjectItemCaseSensitive(param, "description");
		char said[32];

		cr_assert(in_enum(names, x[i].name), "openapi.json: EngineInput has no %s", x[i].name);
		/* the parameter says the table's default, where it has one */
		cr_assert(cJSON_IsString(about), "openapi.json: no parameter %s", x[i].name);
		if (x[i].kind == ENGINES_PARAM_U32 && x[i].dflt != 0) {
			snprintf(said, sizeof(said), "Default %u.", (unsigned)x[i].dflt);
			cr_assert_not_null(strstr(about->valuestring, said),
					   "openapi.json: parameter %s does not say \"%s\"", x[i].name,
					   said);
		}
		cr_assert(!x[i].from_query || cJSON_GetObjectItemCaseSensitive(compare, x[i].name),
			  "openapi.json: Compare has no %s", x[i].name);
	}
	/* every name reads can list is the table's, and the contract's */
	jsonw_init(&w, 0);
	engines_write_inputs(&w, ~0u);
	jsonw_terminate(&w);
	cJSON *all = cJSON_Parse(w.buf);
	const cJSON *v;

	cr_assert_not_null(all);
	cr_assert_eq(cJSON_GetArraySize(all), cJSON_GetArraySize(reads),
		     "Engine.reads names %d inputs, the table %d", cJSON_GetArraySize(reads),
		     cJSON_GetArraySize(all));
	cJSON_ArrayForEach(v, all)
	{
		cr_assert(in_enum(reads, v->valuestring), "openapi.json: Engine.reads has no %s",
			  v->valuestring);
	}
	cJSON_Delete(all);
	jsonw_cleanup(&w);
	cJSON_Delete(doc);
}
