/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A worker's kept responses (server/respcache.c), end to end: on one
 * keep-alive connection, more distinct questions than a worker keeps,
 * asked round and round, each answered with the bytes and tag the api
 * gives for it in this process, with a HEAD and a 304 between them.
 */
#include "harness.h"

#include "api.h"
#include "catalog.h"
#include "embedded.h"

static struct daemon d;
static const char *const quiet[] = {"--access-log", "off", NULL};

static void start_quiet(void)
{
	daemon_start(&d, quiet);
}

static void stop(void)
{
	daemon_stop(&d);
}

TestSuite(reuse, .init = start_quiet, .fini = stop, .timeout = 60);

/* What the api answers for a GET, here and now: body and tag. */
static void expected(const struct catalog *cat, const char *uri, char **body, char etag[ETAG_MAX])
{
	struct api_context ctx = {.catalog = cat, .version = "x", .build = "x"};
	struct api_request req = {.method = "GET", .uri = uri, .uri_len = strlen(uri)};
	struct api_response resp;

	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 200, "%s", uri);
	*body = strndup(resp.body, resp.body_len);
	memcpy(etag, resp.etag, ETAG_MAX);
	api_response_cleanup(&resp);
}

Test(reuse, every_answer_is_its_own_bytes_however_often_asked)
{
	char err[256];
	struct catalog *cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	CURL *curl = curl_easy_init();
	static const char *const models[] = {"qwen3.8-27b", "llama-3.1-70b", "qwen3-8b"};

	cr_assert_not_null(cat, "%s", err);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 12; i++) {
			char uri[160], etag[ETAG_MAX], inm[64], *body;
			const char *conditional[] = {inm, NULL};
			struct reply r, h, n;

			snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=%s&max_batch_size=%d", models[i % 3],
				 1 + i);
			expected(cat, uri, &body, etag);
			r = http_on(curl, &d, "GET", uri, NULL, NULL, 0);
			cr_assert_eq(r.status, 200, "%s", uri);
			cr_assert_str_eq(r.body, body, "round %d, %s", round, uri);
			cr_assert_str_eq(r.etag, etag, "round %d, %s", round, uri);
			if (i % 4 == 0) {
				h = http_on(curl, &d, "HEAD", uri, NULL, NULL, 0);
				cr_assert_eq(h.status, 200);
				cr_assert_eq(h.len, 0);
				cr_assert_str_eq(h.etag, etag);
				snprintf(inm, sizeof(inm), "If-None-Match: %s", etag);
				n = http_on(curl, &d, "GET", uri, conditional, NULL, 0);
				cr_assert_eq(n.status, 304, "%s", uri);
				cr_assert_eq(n.len, 0);
				reply_free(&h);
				reply_free(&n);
			}
			cr_assert_eq(r.connects, round == 0 && i == 0 ? 1 : 0, "keep-alive was lost");
			reply_free(&r);
			free(body);
		}
	}
	curl_easy_cleanup(curl);
	catalog_free(cat);
	daemon_finish(&d);
}
