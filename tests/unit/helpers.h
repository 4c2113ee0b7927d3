/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Shared by the api unit tests: load the embedded catalog once per test,
 * call the pure handler, and parse what it answers.
 */
#ifndef SPLITKD_TEST_HELPERS_H
#define SPLITKD_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "catalog.h"
#include "embedded.h"

struct answer {
	int status;
	const char *content_type;
	const char *allow;
	char etag[24];
	char *body; /* NUL-terminated copy */
	cJSON *json; /* NULL when the body is not JSON */
};

static struct catalog *test_catalog;

static inline void load_default_catalog(void)
{
	char err[256];

	test_catalog = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	cr_assert_not_null(test_catalog, "embedded catalog: %s", err);
}

static inline void free_default_catalog(void)
{
	catalog_free(test_catalog);
	test_catalog = NULL;
}

/* One request through api_handle with the given context; the answer is
 * copied out (the body NUL-terminated) and the response cleaned up. */
static inline struct answer call_ctx(const struct api_context *ctx, const struct api_request *req)
{
	struct api_response resp;
	struct answer a;

	api_handle(ctx, req, &resp);
	a.status = resp.status;
	a.content_type = resp.content_type;
	a.allow = resp.allow;
	memcpy(a.etag, resp.etag, sizeof(a.etag));
	a.body = strndup(resp.body, resp.body_len);
	cr_assert_eq(strlen(a.body), resp.body_len, "body has a NUL byte");
	a.json = cJSON_ParseWithLength(resp.body, resp.body_len);
	api_response_cleanup(&resp);
	return a;
}

static inline struct answer call_cond(const char *method, const char *uri, const char *ct,
				      const char *body, size_t body_len, bool draining,
				      const char *if_none_match)
{
	struct api_context ctx = {.catalog = test_catalog, .draining = draining, .version = "test",
				  .build = "test"};
	struct api_request req = {.method = method, .uri = uri, .uri_len = strlen(uri),
				  .content_type = ct, .if_none_match = if_none_match,
				  .body = body ? body : "", .body_len = body_len};

	return call_ctx(&ctx, &req);
}

static inline struct answer call_full(const char *method, const char *uri, const char *ct,
				      const char *body, size_t body_len, bool draining)
{
	return call_cond(method, uri, ct, body, body_len, draining, NULL);
}

static inline struct answer get(const char *uri)
{
	return call_full("GET", uri, NULL, NULL, 0, false);
}

static inline struct answer post(const char *uri, const char *body)
{
	return call_full("POST", uri, "application/json", body, strlen(body), false);
}

static inline void answer_free(struct answer *a)
{
	free(a->body);
	cJSON_Delete(a->json);
}

static inline double num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	cr_assert(cJSON_IsNumber(v), "%s is not a number", key);
	return v->valuedouble;
}

static inline const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	cr_assert(cJSON_IsString(v), "%s is not a string", key);
	return v->valuestring;
}

/* An RFC 9457 answer: status, content type, and the members it must have. */
static inline void assert_problem(const struct answer *a, int status, const char *slug,
				  const char *param)
{
	char type[64];

	snprintf(type, sizeof(type), "/problems/%s", slug);
	cr_assert_eq(a->status, status, "status %d, want %d: %s", a->status, status, a->body);
	cr_assert_str_eq(a->content_type, "application/problem+json");
	cr_assert_not_null(a->json, "not JSON: %s", a->body);
	cr_assert_str_eq(str(a->json, "type"), type, "%s", a->body);
	cr_assert_eq((int)num(a->json, "status"), status);
	cr_assert_gt(strlen(str(a->json, "title")), 0);
	cr_assert_gt(strlen(str(a->json, "detail")), 0);
	if (param != NULL) {
		cr_assert_str_eq(str(a->json, "param"), param, "%s", a->body);
	}
}


/* A whole file as a NUL-terminated string (free it), its length in *len
 * when len is not NULL; NULL when it cannot be opened. */
static inline char *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL) {
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len != NULL) {
		*len = (size_t)n;
	}
	return buf;
}

#endif
