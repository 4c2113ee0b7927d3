/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the pure request handler, api_handle.
 *
 * Input: one byte choosing the method (and draining, and tight limits),
 * then the request target, the Content-Type and the If-None-Match value,
 * each ended by a NUL (as libmicrohttpd hands them over: C strings), then
 * the body (any bytes). The Content-Type string is sent as Accept too: no
 * route reads both (POST /v1/splits reads one, GET / the other), and the
 * corpus keeps its format.
 *
 * Invariants checked for every input, beyond "no crash, no leak, no
 * undefined behaviour": the status is one splitkd documents; a JSON body
 * is valid JSON, any other is one of the page's files, byte for byte (the
 * HTML with its CSP); an answer of / carries Vary; an error is RFC 9457
 * problem+json whose "status" is the status; a 304 has a tag and keeps the
 * 200's body (never sent); and
 * every decision in a 2xx answer has num_splits in 1..16 (1..sm_count
 * under legacy, which the seed never capped) and the num_splits and workspace_slots the policy core gives for
 * the inputs the answer echoes.
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
#include "splitk.h"
#include "ui.h"

static struct catalog *cat;

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
	return 0;
}

static double number(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	CHECK(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* A decision agrees with the core, from the inputs it echoes. */
static void check_decision(const cJSON *d)
{
	const cJSON *label = cJSON_GetObjectItemCaseSensitive(d, "policy");
	struct splitk_policy pol;
	double splits = number(d, "num_splits");
	uint32_t sm = (uint32_t)number(d, "sm_count"), heads = (uint32_t)number(d, "num_q_heads");
	uint32_t mb = (uint32_t)number(d, "max_batch_size"), seqs = (uint32_t)number(d, "num_seqs");
	uint32_t rows = (uint32_t)number(d, "max_rows");
	uint32_t ref = splitk_split_ref_seqs(seqs, mb);

	CHECK(cJSON_IsString(label));
	CHECK(splitk_parse(label->valuestring, strlen(label->valuestring), &pol));
	/* 1..16 for auto and pinned; the legacy rule has no cap (the seed's
	 * sm_count / ctas: 580 SMs over 24 heads is 24 splits), only sm_count */
	CHECK(splits >= 1);
	CHECK(pol.kind == SPLITK_LEGACY ? splits <= (sm > 1 ? sm : 1) : splits <= 16);
	CHECK(splits == splitk_num_splits(pol, sm, heads, ref));
	CHECK(number(d, "workspace_slots") == splitk_workspace_slots(pol, sm, heads, rows, ref));
}

static void check_problem(const cJSON *p, int status)
{
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "type")));
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "title")));
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "detail")));
	CHECK((int)number(p, "status") == status);
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
	struct api_context ctx = {.catalog = cat, .version = "fuzz", .build = "fuzz"};
	struct api_request req = {0};
	struct api_response resp;
	const char *uri, *ct, *inm;
	cJSON *json;

	if (size < 1) {
		return 0;
	}
	static const struct api_limits tight = {64, 96, 2};

	req.method = methods[data[0] % 6];
	ctx.draining = data[0] & 0x80;
	/* the server's limits may be anything: sometimes very tight ones */
	ctx.limits = (data[0] & 0x40) ? &tight : NULL;
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
	req.if_none_match = inm[0] ? inm : NULL;
	req.body = (const char *)data;
	req.body_len = size;

	api_handle(&ctx, &req, &resp);
	CHECK(resp.status == 200 || resp.status == 304 || resp.status == 400 || resp.status == 404 ||
	      resp.status == 405 || resp.status == 413 || resp.status == 414 || resp.status == 415 ||
	      resp.status == 500 || resp.status == 503);
	if ((resp.status == 200 || resp.status == 304) && strcmp(uri, "/") == 0) {
		CHECK(header_of(&resp, "Vary") != NULL); /* GET / negotiates */
	}
	if (resp.status == 304) {
		CHECK(resp.body_len > 0 && resp.etag[0] == '"'); /* the 200's bytes, not sent */
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
	if (resp.status >= 400 && resp.status != 503) {
		CHECK(strcmp(resp.content_type, "application/problem+json") == 0);
		check_problem(json, resp.status);
	} else if (resp.status == 200 && strncmp(uri, "/v1/splits", 10) == 0 &&
		   (uri[10] == '\0' || uri[10] == '?')) {
		const cJSON *results = cJSON_GetObjectItemCaseSensitive(json, "results");

		if (results == NULL) {
			check_decision(json);
		} else {
			const cJSON *r;

			cJSON_ArrayForEach(r, results) {
				const cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");

				if (e != NULL) {
					check_problem(e, (int)number(e, "status"));
				} else {
					check_decision(r);
				}
			}
		}
	}
	cJSON_Delete(json);
	api_response_cleanup(&resp);
	return 0;
}
