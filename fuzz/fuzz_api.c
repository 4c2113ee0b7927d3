/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the pure request handler, api_handle.
 *
 * Input: one byte choosing the method (and draining, tight limits, and
 * whether the third string is If-Match rather than If-None-Match), then
 * the request target, the Content-Type and the If-None-Match value,
 * each ended by a NUL (as libmicrohttpd hands them over: C strings), then
 * the body (any bytes). The Content-Type string is sent as Accept too: no
 * route reads both (POST /v1/splits reads one, GET / the other), and the
 * corpus keeps its format.
 *
 * Invariants checked for every input, beyond "no crash, no leak, no
 * undefined behaviour": the status is one splitkd documents; a JSON body
 * is valid JSON, any other is one of the page's files, byte for byte (the
 * HTML with its CSP); an answer of / carries Vary; an error is RFC 9457
 * problem+json whose "status" is the status, except what an OFREP route
 * answers to its body (an OFREP failure: a known errorCode, its details,
 * metadata with the catalog, and a key unless it is a bulk 400); a 304 has
 * a tag and keeps the 200's body (never sent); every decision in a 2xx
 * answer has num_splits in 1..16 (1..sm_count under legacy, which the seed
 * never capped) and the num_splits and workspace_slots the policy core
 * gives for the inputs the answer echoes; and every OFREP flag is a value
 * or a failure, its integer at most 2^53 - 1, its variant a policy label,
 * num_splits in 1..16 unless legacy. The context holds two revisions (the
 * embedded catalog, current, and an older one with another SM count and
 * other constants of the rule, splitk_target_waves 4 and max_decode_splits
 * 32), so pins and diffs between them are reached, and a decision is
 * checked at the constants of the catalog it names (1..32 in the older).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <cjson/cJSON.h>

#include "api.h"
#include "catalog.h"
#include "embedded.h"
#include "revision.h"
#include "splitk.h"
#include "ui.h"

static struct catalog *cat, *older;
static struct revision revisions[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	if (cat == NULL) {
		fprintf(stderr, "embedded catalog: %s\n", err);
		abort();
	}
	{
		/* an older revision: b200 at 140 SMs, the rule at other constants */
		static const char constants[] = "{\"splitk_target_waves\":4,\"max_decode_splits\":32,";
		const char *at = strstr(embedded_catalog_json, "\"sm_count\": 148");
		const char *open = memchr(embedded_catalog_json, '{', embedded_catalog_json_len);
		size_t rest = open != NULL ? embedded_catalog_json_len - (size_t)(open + 1 - embedded_catalog_json) : 0;
		char *text = at != NULL && open != NULL ? malloc(sizeof(constants) + rest) : NULL;

		if (text == NULL) {
			abort();
		}
		memcpy(text, constants, sizeof(constants) - 1);
		memcpy(text + sizeof(constants) - 1, open + 1, rest);
		text[sizeof(constants) - 1 + (size_t)(at - (open + 1)) + 14] = '0'; /* 148 -> 140 */
		older = catalog_load(text, sizeof(constants) - 1 + rest, err, sizeof(err));
		free(text);
		if (older == NULL) {
			fprintf(stderr, "older catalog: %s\n", err);
			abort();
		}
	}
	revisions[0] = (struct revision){cat, "2026-01-01T00:00:01Z", "embedded"};
	revisions[1] = (struct revision){older, "2026-01-01T00:00:00Z", "older"};
	return 0;
}

static double number(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	CHECK(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* The catalog an answer names by its digest ("catalog", at `key` of o);
 * NULL when it names none (a fields= answer may leave it out). */
static const struct catalog *catalog_named(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v)) {
		return NULL;
	}
	CHECK(strcmp(v->valuestring, cat->digest) == 0 || strcmp(v->valuestring, older->digest) == 0);
	return strcmp(v->valuestring, cat->digest) == 0 ? cat : older;
}

/* Whether a decision agrees with the core at the constants of `by`: its
 * count within 1..max_decode_splits (legacy, which the seed never capped:
 * 580 SMs over 24 heads is 24 splits, within 1..sm_count), and the count
 * and slots the core gives for the inputs it echoes. */
static bool agrees_at(const cJSON *d, const struct catalog *by)
{
	const cJSON *label = cJSON_GetObjectItemCaseSensitive(d, "policy");
	struct splitk_policy pol;
	double splits = number(d, "num_splits");
	uint32_t sm = (uint32_t)number(d, "sm_count"), heads = (uint32_t)number(d, "num_q_heads");
	uint32_t mb = (uint32_t)number(d, "max_batch_size"), seqs = (uint32_t)number(d, "num_seqs");
	uint32_t rows = (uint32_t)number(d, "max_rows");
	uint32_t ref = splitk_split_ref_seqs(seqs, mb);
	struct splitk_constants k = by->constants;

	CHECK(cJSON_IsString(label));
	CHECK(splitk_parse_requested_with(k, label->valuestring, strlen(label->valuestring), &pol,
					  &(uint32_t){0}));
	CHECK(splits >= 1);
	return (pol.kind == SPLITK_LEGACY ? splits <= (sm > 1 ? sm : 1)
					  : splits <= k.max_decode_splits) &&
	       splits == splitk_num_splits_with(k, pol, sm, heads, ref) &&
	       number(d, "workspace_slots") == splitk_workspace_slots_with(k, pol, sm, heads, rows, ref);
}

/* A mixed batch's counts (seq_lens): one a sequence, num_seqs of them,
 * the largest num_splits; the seed's all the same. */
static void check_by_seq(const cJSON *d, bool seed)
{
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(d, "num_splits_by_seq"), *e;
	double most = 0, splits = number(d, "num_splits");
	int n = 0;

	if (by == NULL) {
		return;
	}
	cJSON_ArrayForEach(e, by) {
		CHECK(cJSON_IsNumber(e) && (!seed || e->valuedouble == splits));
		most = e->valuedouble > most ? e->valuedouble : most;
		n++;
	}
	CHECK(n == (int)number(d, "num_seqs") && most == splits);
}

/* A decision agrees with the core, from the inputs it echoes, at the
 * constants of the catalog it names (either, when it names none); an
 * engine's answer (engine=) holds its own counts together. */
static void check_decision(const cJSON *d)
{
	const struct catalog *by = catalog_named(d, "catalog");

	if (cJSON_GetObjectItemCaseSensitive(d, "engine") != NULL) {
		CHECK(number(d, "num_splits") >= 0 && number(d, "workspace_bytes") >= 0);
		check_by_seq(d, false);
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(d, "max_rows") != NULL) {
		check_by_seq(d, true);
	}

	CHECK(by != NULL ? agrees_at(d, by) : agrees_at(d, cat) || agrees_at(d, older));
}

static void check_problem(const cJSON *p, int status)
{
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "type")));
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "title")));
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "detail")));
	CHECK((int)number(p, "status") == status);
}

/* A 200 of /v1/splits: one decision, or a batch of decisions and problems. */
static void check_splits(const cJSON *json)
{
	const cJSON *results = cJSON_GetObjectItemCaseSensitive(json, "results");
	const cJSON *r;

	if (results == NULL) {
		check_decision(json);
		return;
	}
	cJSON_ArrayForEach(r, results) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");

		if (e != NULL) {
			check_problem(e, (int)number(e, "status"));
		} else {
			check_decision(r);
		}
	}
}

/* ---------------------------------------------------------------- OFREP */

static const char *const ofrep_flags[] = {"num_splits", "workspace_slots", "workspace_bytes",
					  "policy", "policy_source"};

static const char *string(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	CHECK(cJSON_IsString(v));
	return v->valuestring;
}

/* {"key"?, "errorCode", "errorDetails", "metadata": {"catalog", ...}} */
static void check_ofrep_failure(const cJSON *f, bool keyed)
{
	static const char *const codes[] = {"PARSE_ERROR", "INVALID_CONTEXT", "GENERAL", "FLAG_NOT_FOUND"};
	const char *code = string(f, "errorCode");
	bool known = false;

	for (size_t i = 0; i < 4; i++) {
		known = known || strcmp(code, codes[i]) == 0;
	}
	CHECK(known);
	CHECK(string(f, "errorDetails")[0] != '\0');
	CHECK(string(cJSON_GetObjectItemCaseSensitive(f, "metadata"), "catalog")[0] != '\0');
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "key")) == keyed);
	CHECK(cJSON_GetObjectItemCaseSensitive(f, "value") == NULL);
}

/* One flag of a 200 (single or bulk element): a value, or a failure. */
static void check_ofrep_flag(const cJSON *f, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
	struct splitk_policy pol;
	const char *variant;

	CHECK(strcmp(string(f, "key"), key) == 0);
	if (v == NULL) {
		check_ofrep_failure(f, true);
		return;
	}
	CHECK(strcmp(string(f, "reason"), "TARGETING_MATCH") == 0);
	variant = string(f, "variant");
	CHECK(splitk_parse(variant, strlen(variant), &pol));
	if (strcmp(key, "policy") == 0 || strcmp(key, "policy_source") == 0) {
		CHECK(cJSON_IsString(v));
		return;
	}
	/* a JSON reader takes the integer exactly: never past 2^53 - 1 */
	CHECK(cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 9007199254740991.0);
	if (strcmp(key, "num_splits") == 0) {
		/* the larger max_decode_splits of the two catalogs */
		CHECK(v->valuedouble >= 1 &&
		      (pol.kind == SPLITK_LEGACY ||
		       v->valuedouble <= (cat->constants.max_decode_splits > older->constants.max_decode_splits
						  ? cat->constants.max_decode_splits
						  : older->constants.max_decode_splits)));
	}
}

/* What an OFREP evaluation route answered with application/json. */
static void check_ofrep(const struct api_response *resp, const cJSON *json)
{
	const char *methods;
	const char *route = api_route_path((size_t)resp->route, &methods);
	bool bulk = strcmp(route, "/ofrep/v1/evaluate/flags") == 0;
	const cJSON *flags = cJSON_GetObjectItemCaseSensitive(json, "flags");

	if (resp->status != 200) {
		CHECK(resp->status == 400 || (!bulk && resp->status == 404));
		check_ofrep_failure(json, !bulk);
	} else if (bulk) {
		CHECK(cJSON_GetArraySize(flags) == 5);
		for (int i = 0; i < 5; i++) {
			check_ofrep_flag(cJSON_GetArrayItem(flags, i), ofrep_flags[i]);
		}
	} else {
		check_ofrep_flag(json, string(json, "key"));
	}
}

static const char *header_of(const struct api_response *r, const char *name)
{
	for (size_t i = 0; i < r->num_headers; i++) {
		if (strcmp(r->headers[i].name, name) == 0) {
			return r->headers[i].value;
		}
	}
	return NULL;
}

/* A body that is not JSON is one of the page's files, as compiled in. */
static void check_file(const struct api_response *r)
{
	const char *file = embedded_ui_style_css;
	size_t len = embedded_ui_style_css_len;

	if (strcmp(r->content_type, API_CT_HTML) == 0) {
		file = embedded_ui_index_html;
		len = embedded_ui_index_html_len;
		CHECK(header_of(r, "Content-Security-Policy") != NULL);
	} else if (strcmp(r->content_type, API_CT_JS) == 0) {
		file = embedded_ui_app_js;
		len = embedded_ui_app_js_len;
	} else {
		CHECK(strcmp(r->content_type, API_CT_CSS) == 0);
	}
	CHECK(r->body_len == len && memcmp(r->body, file, len) == 0);
	CHECK(header_of(r, "X-Content-Type-Options") != NULL);
}

static const char *take_cstring(const uint8_t **data, size_t *size)
{
	const uint8_t *nul = memchr(*data, 0, *size);
	const char *s = (const char *)*data;

	if (nul == NULL) {
		return NULL;
	}
	*size -= (size_t)(nul - *data) + 1;
	*data = nul + 1;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"};
	struct api_context ctx = {.catalog = cat, .revisions = revisions, .num_revisions = 2,
				  .version = "fuzz", .build = "fuzz"};
	struct api_request req = {0};
	struct api_response resp;
	const char *uri, *ct, *inm, *allow;
	bool if_match;
	cJSON *json;

	if (size < 1) {
		return 0;
	}
	static const struct api_limits tight = {64, 96, 2};

	req.method = methods[data[0] % 6];
	ctx.draining = data[0] & 0x80;
	/* the server's limits may be anything: sometimes very tight ones */
	ctx.limits = (data[0] & 0x40) ? &tight : NULL;
	if_match = data[0] & 0x20;
	data++;
	size--;
	uri = take_cstring(&data, &size);
	ct = take_cstring(&data, &size);
	inm = take_cstring(&data, &size);
	if (uri == NULL || ct == NULL || inm == NULL) {
		return 0;
	}
	req.uri = uri;
	req.uri_len = strlen(uri);
	req.content_type = ct[0] ? ct : NULL;
	req.accept = req.content_type;
	/* the third string is If-Match or If-None-Match, as the first byte says */
	req.if_none_match = inm[0] && !if_match ? inm : NULL;
	req.if_match = inm[0] && if_match ? inm : NULL;
	req.body = (const char *)data;
	req.body_len = size;

	api_handle(&ctx, &req, &resp);
	CHECK(resp.status == 200 || resp.status == 304 || resp.status == 400 || resp.status == 404 ||
	      resp.status == 405 || resp.status == 409 || resp.status == 412 || resp.status == 413 ||
	      resp.status == 414 || resp.status == 415 || resp.status == 422 || resp.status == 500 ||
	      resp.status == 503);
	if ((resp.status == 200 || resp.status == 304) && strcmp(uri, "/") == 0) {
		CHECK(header_of(&resp, "Vary") != NULL); /* GET / negotiates */
	}
	if (resp.status == 304) {
		CHECK(resp.body_len > 0 && resp.etag[0] == '"'); /* the 200's bytes, not sent */
		api_response_cleanup(&resp);
		return 0;
	}
	if (strcmp(resp.content_type, API_CT_EVENT_STREAM) == 0) {
		/* the change stream: the server holds it open; the api only says so */
		CHECK(resp.status == 200 && resp.stream && resp.etag[0] == '\0');
		CHECK(resp.route >= 0 && strcmp(api_route_path((size_t)resp.route, &allow), "/v1/events") == 0);
		api_response_cleanup(&resp);
		return 0;
	}
	if (strncmp(resp.content_type, "text/", 5) == 0) {
		check_file(&resp);
		api_response_cleanup(&resp);
		return 0;
	}
	json = cJSON_ParseWithLength(resp.body, resp.body_len);
	CHECK(json != NULL);
	if (resp.route >= 0 && strcmp(resp.content_type, "application/json") == 0 &&
	    strncmp(api_route_path((size_t)resp.route, &allow), "/ofrep/v1/evaluate/", 19) == 0) {
		check_ofrep(&resp, json);
	} else if (resp.status >= 400 && resp.status != 503) {
		CHECK(strcmp(resp.content_type, "application/problem+json") == 0);
		check_problem(json, resp.status);
	} else if (resp.status == 200 && strncmp(uri, "/v1/splits", 10) == 0 &&
		   (uri[10] == '\0' || uri[10] == '?')) {
		check_splits(json);
	}
	cJSON_Delete(json);
	api_response_cleanup(&resp);
	return 0;
}
