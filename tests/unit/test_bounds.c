/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The contract's bounds against the code (issue 41): every parameter
 * api/openapi.json bounds, read from the contract itself, is probed with a
 * value at its bound (answered: judged on what it says, not refused for
 * its size) and one past it (refused, as the code refuses it); where the
 * bound is a constant of the code, the contract's number is that
 * constant. A parameter the contract bounds and this file cannot probe
 * fails the test, so a new one needs its probe.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "exchange.h"
#include "history.h"
#include "helpers.h"
#include "query.h"
#include "vocab.h"

static cJSON *doc;

static void setup(void)
{
	load_default_catalog();
	doc = cJSON_ParseWithLength(embedded_openapi_json, embedded_openapi_json_len);
	cr_assert_not_null(doc);
}

static void teardown(void)
{
	cJSON_Delete(doc);
	free_default_catalog();
}

static const cJSON *at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cr_assert_not_null(v, "no %s", key);
	return v;
}

static double number(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The path template of the first operation that $refs parameter `name`,
 * GET preferred (every query parameter is a GET's). */
static const char *route_of(const char *name)
{
	char want[128];
	const cJSON *path;

	snprintf(want, sizeof(want), "#/components/parameters/%s", name);
	cJSON_ArrayForEach(path, at(doc, "paths")) {
		const cJSON *get = cJSON_GetObjectItemCaseSensitive(path, "get");
		const cJSON *params = get != NULL ? cJSON_GetObjectItemCaseSensitive(get, "parameters") : NULL;
		const cJSON *p;

		cJSON_ArrayForEach(p, params) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "$ref");

			if (cJSON_IsString(r) && strcmp(r->valuestring, want) == 0) {
				return path->string;
			}
		}
	}
	return NULL;
}

/* GET route?name=value (a bare route, so nothing else is judged first). */
static struct answer ask(const char *route, const char *name, const char *value)
{
	size_t n = strlen(route) + strlen(name) + strlen(value) + 3;
	char *uri = malloc(n);
	struct answer a;

	/* "route?name=value", or after a base query ("route?...&") */
	if (route[strlen(route) - 1] == '&') {
		snprintf(uri, n, "%s%s=%s", route, name, value);
	} else {
		snprintf(uri, n, "%s?%s=%s", route, name, value);
	}
	a = get(uri);
	free(uri);
	return a;
}

/* Whether `a` is the refusal of parameter `name` (400 naming it). */
static bool refused(const struct answer *a, const char *name)
{
	const cJSON *param = a->json != NULL ? cJSON_GetObjectItemCaseSensitive(a->json, "param") : NULL;

	return a->status >= 400 && a->status < 500 && cJSON_IsString(param) &&
	       strcmp(param->valuestring, name) == 0;
}

static bool says(const struct answer *a, const char *words)
{
	return strstr(a->body, words) != NULL;
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* A decimal input: 1 to 4294967295 (its pattern; maxLength 10): each
 * bound taken, one past it refused. */
static void probe_decimal(const char *route, const char *name)
{
	/* taken: not refused with `words` (the decimal rule's) */
	static const struct {
		const char *value;
		bool taken;
		const char *words;
	} probes[] = {{"4294967295", true, "4294967295 ("}, {"4294967296", false, NULL},
		      {"1", true, "from 1 to"}, {"0", false, NULL}};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct answer a = ask(route, name, probes[i].value);

		if (probes[i].taken) {
			cr_assert_not(refused(&a, name) && says(&a, probes[i].words), "%s=%s: %s", name,
				      probes[i].value, a.body);
		} else {
			cr_assert(refused(&a, name) && a.status == 400, "%s=%s: %s", name, probes[i].value,
				  a.body);
		}
		answer_free(&a);
	}
}

/* GET /v1/history's limit: 1 to HISTORY_MAX_LIMIT, a decimal of as many
 * digits at most. */
static void probe_limit(const char *route, const char *name, size_t max)
{
	char at[16], past[16];
	struct answer a;

	snprintf(at, sizeof(at), "%d", HISTORY_MAX_LIMIT);
	snprintf(past, sizeof(past), "%d", HISTORY_MAX_LIMIT + 1);
	cr_assert_eq(max, strlen(at), "%s: maxLength %zu for at most %s", name, max, at);
	a = ask(route, name, at);
	cr_assert_eq(a.status, 200, "%s=%s: %s", name, at, a.body);
	answer_free(&a);
	a = ask(route, name, past);
	cr_assert(refused(&a, name) && a.status == 400, "%s=%s: %s", name, past, a.body);
	answer_free(&a);
	a = ask(route, name, "1");
	cr_assert_eq(a.status, 200, "%s=1: %s", name, a.body);
	answer_free(&a);
	a = ask(route, name, "0");
	cr_assert(refused(&a, name) && a.status == 400, "%s=0: %s", name, a.body);
	answer_free(&a);
}

/* A list input (seq_lens): each element 1 to ENGINE_MAX_SEQ_LEN, no
 * empty or other element; its text is bounded by the request target
 * alone (API_DEFAULT_MAX_URI), the count (ENGINE_MAX_SEQS) by a body's. */
static void probe_list(const char *route, const char *name, size_t max)
{
	static const struct {
		const char *value;
		bool taken;
	} probes[] = {
		{"1", true},           {"2147483647", true}, {"2147483647,1,2", true},
		{"2147483648", false}, {"0", false},         {"1,,2", false},
		{"1,", false},         {",1", false},        {"a", false},
		{"-1", false},         {"1 2", false},       {"01", false},
	};

	cr_assert_eq(max, API_DEFAULT_MAX_URI, "%s: maxLength %zu, the request target's %zu", name, max,
		     API_DEFAULT_MAX_URI);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct answer a = ask(route, name, probes[i].value);

		if (probes[i].taken) {
			cr_assert_not(refused(&a, name), "%s=%s: %s", name, probes[i].value, a.body);
		} else {
			cr_assert(refused(&a, name) && a.status == 400, "%s=%s: %s", name,
				  probes[i].value, a.body);
		}
		answer_free(&a);
	}
}

/* A string input: QUERY_MAX_VALUE bytes taken, one more refused for its length. */
static void probe_length(const char *route, const char *name, size_t max)
{
	char *v = repeat('a', max + 1);
	struct answer a;

	cr_assert_eq(max, QUERY_MAX_VALUE, "%s: maxLength %zu, the code's QUERY_MAX_VALUE is %d", name, max,
		     QUERY_MAX_VALUE);
	a = ask(route, name, v);
	cr_assert(refused(&a, name) && a.status == 400 && says(&a, "longer than"), "%s of %zu bytes: %s",
		  name, max + 1, a.body);
	answer_free(&a);
	v[max] = '\0';
	a = ask(route, name, v);
	cr_assert_not(says(&a, "longer than"), "%s of %zu bytes: %s", name, max, a.body);
	answer_free(&a);
	free(v);
}

/* A flag (explain, cuda_graph): its longest spelling, "false", taken; longer refused. */
static void probe_flag(const char *route, const char *name, size_t max)
{
	struct answer a;

	cr_assert_eq(max, strlen("false"));
	a = ask(route, name, "false");
	cr_assert_not(refused(&a, name), "%s=false: %s", name, a.body);
	answer_free(&a);
	a = ask(route, name, "falsee");
	cr_assert(refused(&a, name) && a.status == 400, "%s=falsee: %s", name, a.body);
	answer_free(&a);
}

/* An enum (engine, judged once the decision's inputs are): each value
 * taken, another refused. */
static void probe_enum(const char *route, const char *name, const cJSON *values)
{
	char base[128];
	const cJSON *v;
	struct answer a;

	snprintf(base, sizeof(base), "%s?target=h100&model=qwen3-8b&", route);
	route = base;
	cJSON_ArrayForEach(v, values) {
		a = ask(route, name, v->valuestring);
		cr_assert_not(refused(&a, name) && a.status != 422, "%s=%s: %s", name, v->valuestring, a.body);
		answer_free(&a);
	}
	a = ask(route, name, "none-of-them");
	cr_assert(refused(&a, name), "%s=none-of-them: %s", name, a.body);
	answer_free(&a);
}

/* A path segment: the request target (API_DEFAULT_MAX_URI) less the path
 * before it; one byte more is 414. */
static void probe_segment(const char *name, const char *prefix, size_t max)
{
	size_t n = strlen(prefix);
	char *uri = malloc(n + max + 2);
	struct answer a;

	cr_assert_eq(n + max, API_DEFAULT_MAX_URI, "%s: %zu + %zu is not the target's limit %zu", name, n,
		     max, API_DEFAULT_MAX_URI);
	memcpy(uri, prefix, n);
	memset(uri + n, 'a', max + 1);
	uri[n + max] = '\0';
	a = get(uri);
	cr_assert_neq(a.status, 414, "%s of %zu bytes: %s", name, max, a.body);
	answer_free(&a);
	uri[n + max] = 'a';
	uri[n + max + 1] = '\0';
	a = get(uri);
	assert_problem(&a, 414, "uri-too-long", NULL);
	answer_free(&a);
	free(uri);
}

/* A header: no longer than the header block may be, --max-header at most. */
static void probe_header(const char *name, size_t max)
{
	struct server_config cfg;
	char err[256], v[32];
	char *argv[] = {"splitkd", "--max-header", v, NULL};

	cr_assert_eq(max, CLI_MAX_HEADER_MOST, "%s: maxLength %zu, the largest --max-header is %zu", name,
		     max, CLI_MAX_HEADER_MOST);
	snprintf(v, sizeof(v), "%zu", max);
	cr_assert_eq(cli_parse(3, argv, &cfg, err, sizeof(err)), 0, "--max-header %s: %s", v, err);
	snprintf(v, sizeof(v), "%zu", max + 1);
	cr_assert_eq(cli_parse(3, argv, &cfg, err, sizeof(err)), -1, "--max-header %s taken", v);
}

/* The path of a path parameter's route up to the segment. */
static const char *prefix_of(const char *name)
{
	static char out[128];
	char want[128];
	const cJSON *path;

	snprintf(want, sizeof(want), "#/components/parameters/%s", name);
	cJSON_ArrayForEach(path, at(doc, "paths")) {
		const cJSON *op;

		cJSON_ArrayForEach(op, path) {
			const cJSON *p;

			cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(op, "parameters")) {
				const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "$ref");

				if (cJSON_IsString(r) && strcmp(r->valuestring, want) == 0) {
					snprintf(out, sizeof(out), "%.*s", (int)strcspn(path->string, "{"),
						 path->string);
					return out;
				}
			}
		}
	}
	return NULL;
}

/* The parameters an operation declares inline (not in components): each
 * a string of QUERY_MAX_VALUE bytes at most, on its own route and method. */
static int probe_inline(void)
{
	const cJSON *path;
	int n = 0;

	cJSON_ArrayForEach(path, at(doc, "paths")) {
		const cJSON *op;

		cJSON_ArrayForEach(op, path) {
			const cJSON *p;

			cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(op, "parameters")) {
				const char *name;
				size_t max, len;
				char *v, *uri;
				struct answer a;

				if (cJSON_GetObjectItemCaseSensitive(p, "$ref") != NULL) {
					continue;
				}
				name = at(p, "name")->valuestring;
				max = (size_t)number(at(p, "schema"), "maxLength");
				cr_assert_eq(max, QUERY_MAX_VALUE, "%s %s %s: maxLength %zu", op->string,
					     path->string, name, max);
				v = repeat('a', max + 1);
				len = strlen(path->string) + strlen(name) + max + 4;
				uri = malloc(len);
				snprintf(uri, len, "%s?%s=%s", path->string, name, v);
				a = strcmp(op->string, "post") == 0 ? post(uri, "{}") : get(uri);
				cr_assert(refused(&a, name) && says(&a, "longer than"), "%s: %s", uri, a.body);
				answer_free(&a);
				uri[strlen(uri) - 1] = '\0';
				a = strcmp(op->string, "post") == 0 ? post(uri, "{}") : get(uri);
				cr_assert_not(says(&a, "longer than"), "%s: %s", name, a.body);
				answer_free(&a);
				free(uri);
				free(v);
				n++;
			}
		}
	}
	return n;
}

Test(bounds, every_bounded_parameter_is_the_codes_bound, .init = setup, .fini = teardown)
{
	const cJSON *p;
	int probed = 0;

	cJSON_ArrayForEach(p, at(at(doc, "components"), "parameters")) {
		const char *name = at(p, "name")->valuestring, *in = at(p, "in")->valuestring;
		const cJSON *s = at(p, "schema");
		const cJSON *values = cJSON_GetObjectItemCaseSensitive(s, "enum");
		double max = number(s, "maxLength");

		if (strcmp(in, "header") == 0) {
			cr_assert_gt(max, 0, "header %s has no maxLength", name);
			probe_header(name, (size_t)max);
		} else if (strcmp(in, "path") == 0) {
			cr_assert_gt(max, 0, "path parameter %s has no maxLength", name);
			cr_assert_not_null(prefix_of(p->string));
			probe_segment(name, prefix_of(p->string), (size_t)max);
		} else {
			const char *route = route_of(p->string);

			cr_assert_not_null(route, "query parameter %s is on no GET", name);
			if (values != NULL) {
				probe_enum(route, name, values);
			} else if (strcmp(name, "limit") == 0) {
				probe_limit(route, name, (size_t)max);
			} else if (strcmp(name, VOCAB_M_SEQ_LENS) == 0) {
				probe_list(route, name, (size_t)max);
			} else if (max == 10) {
				probe_decimal(route, name);
			} else if (max == 5) {
				probe_flag(route, name, (size_t)max);
			} else {
				cr_assert_gt(max, 0, "query parameter %s has no bound to probe", name);
				probe_length(route, name, (size_t)max);
			}
		}
		probed++;
	}
	probed += probe_inline();
	cr_assert_geq(probed, 33, "%d parameters", probed);
	printf("bounds: %d parameters probed at their bound and one past it\n", probed);
}

/* A batch of Batch.queries' maxItems (API_DEFAULT_MAX_BATCH) is answered;
 * one more query is 413. */
Test(bounds, a_batch_is_its_max_items, .init = setup, .fini = teardown)
{
	const cJSON *queries = at(at(at(at(at(doc, "components"), "schemas"), "Batch"), "properties"),
				  "queries");
	size_t max = (size_t)number(queries, "maxItems");
	const char *one = "{\"target\":\"h100\",\"model\":\"qwen3-8b\"},";
	size_t n = strlen(one);
	char *body = malloc(32 + (max + 1) * n);
	size_t len = 0;
	struct answer a;

	cr_assert_eq(max, API_DEFAULT_MAX_BATCH);
	len += (size_t)sprintf(body, "{\"queries\":[");
	for (size_t i = 0; i < max; i++) {
		memcpy(body + len, one, n);
		len += n;
	}
	memcpy(body + len - 1, "]}", 3);
	a = post("/v1/splits", body);
	cr_assert_eq(a.status, 200, "%zu queries: %.200s", max, a.body);
	answer_free(&a);
	len = (size_t)sprintf(body, "{\"queries\":[");
	for (size_t i = 0; i <= max; i++) {
		memcpy(body + len, one, n);
		len += n;
	}
	memcpy(body + len - 1, "]}", 3);
	a = post("/v1/splits", body);
	assert_problem(&a, 413, "payload-too-large", NULL);
	answer_free(&a);
	free(body);
}
