/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The page's routes (api/ui.c): GET / negotiated on Accept, /ui and its two
 * files as compiled in, their headers (Vary, nosniff, the CSP, the ETag)
 * and 304s, and the JSON index against the router and openapi.json.
 * Run from the top of the tree (make does): the embedded files are
 * compared with api/ui/ on disk, so a stale build fails here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "helpers.h"
#include "ui.h"

TestSuite(ui, .init = load_default_catalog, .fini = free_default_catalog);

static const char chrome[] = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
			     "image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";

/* One request with an Accept and an If-None-Match; the response is the
 * caller's to clean up. */
static struct api_response ask(const char *method, const char *uri, const char *accept,
			       const char *if_none_match)
{
	struct api_context ctx = {.catalog = test_catalog, .version = "9.9.9", .build = "test"};
	struct api_request req = {.method = method, .uri = uri, .uri_len = strlen(uri),
				  .accept = accept, .if_none_match = if_none_match, .body = ""};
	struct api_response resp;

	api_handle(&ctx, &req, &resp);
	return resp;
}

/* The value of an extra header the route set, or NULL. */
static const char *header(const struct api_response *r, const char *name)
{
	for (size_t i = 0; i < r->num_headers; i++) {
		if (strcasecmp(r->headers[i].name, name) == 0) {
			return r->headers[i].value;
		}
	}
	return NULL;
}

/* ---------------------------------------------------------- negotiation */

struct accept_case {
	const char *accept;
	bool html;
};

Test(ui, the_page_only_when_html_is_strictly_preferred)
{
	static const struct accept_case cases[] = {
		/* browsers (Chromium, then Firefox and Safari) */
		{chrome, true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		/* clients of the API: curl, fetch() by default, scripts */
		{"*/*", false},
		{"application/json", false},
		{NULL, false},
		{"", false},
		{"application/json, text/html", false},
		{"text/html, application/json", false}, /* equal: not strictly preferred */
		{"text/html;q=0.5, application/json", false},
		{"text/html;q=0.5,application/json;q=0.4", true},
		{"text/html;q=0", false},
		{"text/html;q=0.001, application/json;q=0.000", true},
		{"text/html;q=1.000", true},
		/* the most specific range decides, not the highest q */
		{"text/html;q=0.5, */*;q=0.9", false},
		{"*/*;q=0.9, application/json;q=0.1", true},
		{"application/json;q=0.9, */*", true},
		{"application/json;q=0, */*", true},
		{"application/*;q=0.9, text/html;q=0.8", false},
		{"text/*;q=0.9, application/json;q=0.8", true},
		{"text/*", true},
		{"text/html;q=0.5, text/html;q=0.1, application/json;q=0.3", true}, /* first of equals */
		/* spelling: case, white space, parameters, quoted commas */
		{"TEXT/HTML", true},
		{"Text/Html;Q=0.9, application/json;q=0.8", true},
		{" \t text/html \t ; \t q=0.7 \t , application/json;q=0.6", true},
		{"text/html;level=1;q=0.2, application/json;q=0.1", true},
		{"text/html;foo=\"a,application/json;q=1\", application/json;q=0.5", true},
		{"text/html;foo=\"a\\\"b,c\";q=0.9, application/json;q=0.8", true},
		/* garbage: a bad q counts as 0, a bad element is skipped */
		{"text/plain, application/xml", false},
		{"garbage", false},
		{";;;,,,===", false},
		{",", false},
		{"\"", false},
		{"text/html;q=abc", false},
		{"text/html;q=2", false},
		{"text/html;q=1.0001", false},
		{"text/html;q=.5", false},
		{"text/html;q=-1", false},
		{"text/html;q=0.5;q=0", false}, /* the last q stands */
		{"text/html;q", true},          /* no value: no weight */
		{"image/webp, text/html junk, application/json;q=0.1", false},
		{"text/html;foo=\"unterminated, application/json", true},
		{"text/htm, text/html5, texts/*, */*x", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect_eq(ui_prefers_html(cases[i].accept), cases[i].html, "Accept: %s",
			     cases[i].accept ? cases[i].accept : "(none)");
	}
}

/* A long hostile header is read once, in bounded time, and refused. */
Test(ui, a_long_accept_is_read_in_one_pass)
{
	size_t n = 64 * 1024;
	char *accept = malloc(n + 1);

	cr_assert_not_null(accept);
	for (size_t i = 0; i < n; i++) {
		accept[i] = ";\",=q \\"[i % 7];
	}
	accept[n] = '\0';
	cr_assert_not(ui_prefers_html(accept));
	memcpy(accept, "text/html,", 10);
	cr_assert(ui_prefers_html(accept), "the first element still counts");
	free(accept);
}

/* ---------------------------------------------------------- GET / */

static void assert_page(const struct api_response *r, const char *what)
{
	cr_assert_eq(r->status, 200, "%s", what);
	cr_assert_str_eq(r->content_type, "text/html; charset=utf-8", "%s", what);
	cr_assert_eq(r->body_len, embedded_ui_index_html_len, "%s", what);
	cr_assert(memcmp(r->body, embedded_ui_index_html, r->body_len) == 0, "%s", what);
	cr_assert_null(r->owned, "%s: the page is lent, never copied", what);
	cr_assert_str_eq(header(r, "Content-Security-Policy"), UI_CSP, "%s", what);
	cr_assert_str_eq(header(r, "X-Content-Type-Options"), "nosniff", "%s", what);
	cr_assert_eq(strlen(r->etag), 18, "%s: ETag %s", what, r->etag);
}

Test(ui, root_is_the_page_for_a_browser)
{
	struct api_response r = ask("GET", "/", chrome, NULL);
	struct api_response ui = ask("GET", "/ui", chrome, NULL);

	assert_page(&r, "GET / from a browser");
	cr_assert_str_eq(header(&r, "Vary"), "Accept");
	cr_assert_str_eq(r.etag, ui.etag, "the same bytes as /ui, the same tag");
	cr_assert_null(header(&ui, "Vary"), "/ui does not negotiate");
	api_response_cleanup(&r);
	api_response_cleanup(&ui);
}

Test(ui, root_is_the_json_index_for_everyone_else)
{
	static const char *const accepts[] = {NULL, "*/*", "application/json",
					      "text/html;q=0.5, application/json", "garbage"};
	struct api_response page = ask("GET", "/", "text/html", NULL);

	for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
		struct api_response r = ask("GET", "/", accepts[i], NULL);
		cJSON *j = cJSON_ParseWithLength(r.body, r.body_len);

		cr_assert_eq(r.status, 200);
		cr_assert_str_eq(r.content_type, "application/json", "Accept: %s", accepts[i]);
		cr_assert_not_null(j, "not JSON: %.*s", (int)r.body_len, r.body);
		cr_assert_str_eq(str(j, "name"), "splitkd");
		cr_assert_str_eq(str(j, "version"), "9.9.9", "the context's version");
		cr_assert_str_eq(header(&r, "Vary"), "Accept");
		cr_assert_str_eq(header(&r, "X-Content-Type-Options"), "nosniff");
		cr_assert_null(header(&r, "Content-Security-Policy"), "the CSP is the page's");
		cr_assert_eq(strlen(r.etag), 18);
		cr_assert_str_neq(r.etag, page.etag, "two representations, two tags");
		cJSON_Delete(j);
		api_response_cleanup(&r);
	}
	api_response_cleanup(&page);
}

/* What GET on a path answers (/v1/policy with the parameter it needs). */
static int status_of(const char *path)
{
	char uri[128];
	struct api_response r;
	int status;

	snprintf(uri, sizeof(uri), "%s%s", path, strcmp(path, "/v1/policy") == 0 ? "?spelling=auto" : "");
	r = ask("GET", uri, NULL, NULL);
	status = r.status;
	api_response_cleanup(&r);
	return status;
}

/* The index lists exactly the paths openapi.json describes, each with the
 * methods the router takes (/metrics, the server's own: GET and HEAD);
 * every plain path a GET takes answers it (but /metrics, the server's,
 * and /v1/splits, which needs a question), and so do the two links. */
Test(ui, index_lists_every_described_route_and_nothing_else)
{
	struct api_response r = ask("GET", "/", NULL, NULL);
	struct answer doc = get("/openapi.json");
	cJSON *j = cJSON_ParseWithLength(r.body, r.body_len);
	const cJSON *routes = cJSON_GetObjectItem(j, "routes"), *item, *p;
	const cJSON *paths = cJSON_GetObjectItem(doc.json, "paths");
	size_t n = 0;

	cr_assert(cJSON_IsArray(routes));
	cJSON_ArrayForEach(item, routes) {
		const char *path = str(item, "path"), *methods = "GET, HEAD";
		char joined[64] = "";
		const cJSON *m;
		int route;

		cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(paths, path),
				   "the index has %s, openapi.json does not", path);
		route = api_route_of(path, strlen(path));
		if (route >= 0) {
			methods = "";
			api_route_path((size_t)route, &methods);
		} else {
			cr_assert_str_eq(path, "/metrics", "%s is no route", path);
		}
		cJSON_ArrayForEach(m, cJSON_GetObjectItem(item, "methods")) {
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
				 joined[0] ? ", " : "", m->valuestring);
		}
		cr_assert_str_eq(joined, methods, "%s", path);
		if (strchr(path, '{') == NULL && strstr(methods, "GET") != NULL &&
		    strcmp(path, "/metrics") != 0 && strcmp(path, "/v1/splits") != 0 &&
		    strcmp(path, "/v1/compare") != 0 &&
		    strcmp(path, "/v1/reserve") != 0) { /* the last three need a target and model */
			cr_assert_eq(status_of(path), 200, "GET %s", path);
		}
		n++;
	}
	cr_assert_eq(n, (size_t)cJSON_GetArraySize(paths), "one entry per described path");
	cJSON_ArrayForEach(p, paths) {
		bool listed = false;

		cJSON_ArrayForEach(item, routes) {
			listed = listed || strcmp(str(item, "path"), p->string) == 0;
		}
		cr_assert(listed, "openapi.json has %s, the index does not", p->string);
	}
	cr_assert_eq(status_of(str(j, "openapi")), 200);
	cr_assert_eq(status_of(str(j, "page")), 200);
	cJSON_Delete(j);
	answer_free(&doc);
	api_response_cleanup(&r);
}

/* ---------------------------------------------------------- /ui */

Test(ui, ui_is_the_page_whatever_the_accept)
{
	static const char *const accepts[] = {NULL, "*/*", "application/json", "image/png", chrome};

	for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
		struct api_response r = ask("GET", "/ui", accepts[i], NULL);

		assert_page(&r, accepts[i] ? accepts[i] : "(no Accept)");
		api_response_cleanup(&r);
	}
}

struct file_case {
	const char *uri, *disk, *type;
	bool csp;
};

static const struct file_case files[] = {
	{"/ui", "api/ui/index.html", "text/html; charset=utf-8", true},
	{"/ui/app.js", "api/ui/app.js", "text/javascript; charset=utf-8", false},
	{"/ui/style.css", "api/ui/style.css", "text/css; charset=utf-8", false},
};

/* Each file as on disk (so a build that missed an edit fails), with its
 * type, nosniff, and the CSP on the HTML alone; HEAD the same headers. */
Test(ui, files_are_served_as_on_disk_with_their_types)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const struct file_case *f = &files[i];
		size_t len;
		char *want = read_whole_file(f->disk, &len);
		struct api_response r = ask("GET", f->uri, "*/*", NULL);
		struct api_response head = ask("HEAD", f->uri, "*/*", NULL);

		cr_assert_not_null(want, "cannot open %s (run from the top of the tree)", f->disk);
		cr_assert_eq(r.status, 200, "%s", f->uri);
		cr_assert_str_eq(r.content_type, f->type, "%s", f->uri);
		cr_assert_eq(r.body_len, len, "%s: %zu bytes, %s has %zu: rebuild", f->uri, r.body_len,
			     f->disk, len);
		cr_assert(memcmp(r.body, want, len) == 0, "%s differs from %s: rebuild", f->uri, f->disk);
		cr_assert_str_eq(header(&r, "X-Content-Type-Options"), "nosniff", "%s", f->uri);
		cr_assert_eq(header(&r, "Content-Security-Policy") != NULL, f->csp, "%s", f->uri);
		cr_assert_null(header(&r, "Vary"), "%s", f->uri);
		cr_assert_eq(head.status, 200);
		cr_assert_str_eq(head.content_type, r.content_type);
		cr_assert_str_eq(head.etag, r.etag, "%s", f->uri);
		cr_assert_eq(head.num_headers, r.num_headers, "%s", f->uri);
		api_response_cleanup(&r);
		api_response_cleanup(&head);
		free(want);
	}
}

/* The page's URLs are relative (it also works under a path prefix): from
 * / and from /ui each resolves to a route that answers, which is why /ui/
 * must not be one (from there, ui/app.js would be /ui/ui/app.js). */
Test(ui, the_page_links_resolve_and_ui_slash_is_not_found)
{
	static const char *const refs[] = {"href=\"ui/style.css\"", "src=\"ui/app.js\""};
	static const char *const not_found[] = {"/ui/", "/UI", "/ui/index.html", "/ui/ui/app.js",
						"//", "/index.html", "/ui/app.js/"};

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		char uri[64];
		const char *quote = strchr(refs[i], '"') + 1;
		struct api_response r;

		cr_assert_not_null(strstr(embedded_ui_index_html, refs[i]), "the page has %s", refs[i]);
		snprintf(uri, sizeof(uri), "/%.*s", (int)(strlen(quote) - 1), quote);
		r = ask("GET", uri, "*/*", NULL);
		cr_assert_eq(r.status, 200, "%s", uri);
		api_response_cleanup(&r);
	}
	for (size_t i = 0; i < sizeof(not_found) / sizeof(not_found[0]); i++) {
		struct api_response r = ask("GET", not_found[i], chrome, NULL);

		cr_assert_eq(r.status, 404, "%s: %d", not_found[i], r.status);
		cr_assert_str_eq(r.content_type, "application/problem+json");
		cr_assert_eq(r.num_headers, 0, "%s", not_found[i]);
		api_response_cleanup(&r);
	}
}

Test(ui, other_methods_are_405_with_allow)
{
	static const char *const uris[] = {"/", "/ui", "/ui/app.js", "/ui/style.css"};

	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		struct api_response r = ask("POST", uris[i], chrome, NULL);

		cr_assert_eq(r.status, 405, "%s", uris[i]);
		cr_assert_str_eq(r.allow, "GET, HEAD");
		api_response_cleanup(&r);
	}
}

/* ---------------------------------------------------------- 304 */

/* If-None-Match with the tag: 304 with the same headers (Vary must be on
 * a 304 when it is on the 200, RFC 9110 15.4.5); GET and HEAD alike. */
Test(ui, if_none_match_answers_304_with_the_same_headers)
{
	static const char *const uris[] = {"/", "/", "/ui", "/ui/app.js", "/ui/style.css"};
	static const char *const accepts[] = {chrome, "*/*", NULL, NULL, NULL};

	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		struct api_response ok = ask("GET", uris[i], accepts[i], NULL);
		struct api_response same = ask("GET", uris[i], accepts[i], ok.etag);
		struct api_response head = ask("HEAD", uris[i], accepts[i], ok.etag);
		struct api_response other = ask("GET", uris[i], accepts[i], "\"0000000000000000\"");

		cr_assert_eq(same.status, 304, "%s", uris[i]);
		cr_assert_eq(head.status, 304, "HEAD %s", uris[i]);
		cr_assert_str_eq(same.etag, ok.etag);
		cr_assert_eq(same.body_len, ok.body_len, "the 200's length, to announce");
		cr_assert_eq(same.num_headers, ok.num_headers, "%s", uris[i]);
		for (size_t h = 0; h < ok.num_headers; h++) {
			cr_assert_str_eq(same.headers[h].name, ok.headers[h].name);
			cr_assert_str_eq(same.headers[h].value, ok.headers[h].value);
		}
		cr_assert_eq(other.status, 200, "another tag: the whole answer");
		api_response_cleanup(&ok);
		api_response_cleanup(&same);
		api_response_cleanup(&head);
		api_response_cleanup(&other);
	}
}

/* The page's tag does not match the index: a cache that kept the page
 * and revalidates for a client that wants JSON gets the JSON. */
Test(ui, the_page_tag_does_not_revalidate_the_index)
{
	struct api_response page = ask("GET", "/", chrome, NULL);
	struct api_response json = ask("GET", "/", "application/json", page.etag);

	cr_assert_eq(json.status, 200);
	cr_assert_str_eq(json.content_type, "application/json");
	api_response_cleanup(&page);
	api_response_cleanup(&json);
}
