/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The page through the real server: the Accept header reaches the api
 * (GET / negotiates), and the page's headers (CSP, nosniff, Vary, ETag)
 * and its 304 go out on the wire as the api set them.
 */
#include "harness.h"

static struct daemon d;

static void stop(void)
{
	daemon_stop(&d);
}

/* An answer with its whole header block. */
struct page_reply {
	long status;
	char head[4096];
	size_t head_len;
	size_t body_len;
};

static size_t keep_head(char *data, size_t size, size_t n, void *user)
{
	struct page_reply *r = user;
	size_t len = size * n;

	if (r->head_len + len < sizeof(r->head)) {
		memcpy(r->head + r->head_len, data, len);
		r->head_len += len;
		r->head[r->head_len] = '\0';
	}
	return len;
}

static size_t count_body(char *data, size_t size, size_t n, void *user)
{
	(void)data;
	((struct page_reply *)user)->body_len += size * n;
	return size * n;
}

/* GET (or HEAD) with these header lines; "Accept:" alone sends none. */
static struct page_reply fetch(const char *method, const char *path, const char *const *headers)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *list = NULL;
	struct page_reply r;
	char url[256];

	memset(&r, 0, sizeof(r));
	cr_assert_not_null(curl);
	snprintf(url, sizeof(url), "%s%s", d.base, path);
	for (int i = 0; headers != NULL && headers[i] != NULL; i++) {
		list = curl_slist_append(list, headers[i]);
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, keep_head);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, count_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(curl, CURLOPT_NOBODY, strcmp(method, "HEAD") == 0 ? 1L : 0L);
	cr_assert_eq(curl_easy_perform(curl), CURLE_OK, "%s %s", method, path);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
	curl_slist_free_all(list);
	curl_easy_cleanup(curl);
	return r;
}

/* Whether the header block has this exact line ("Name: value"). */
static bool has_line(const struct page_reply *r, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = strstr(r->head, line); p != NULL; p = strstr(p + n, line)) {
		if ((p == r->head || p[-1] == '\n') && p[n] == '\r') {
			return true;
		}
	}
	return false;
}

static void header_value(const struct page_reply *r, const char *name, char *out, size_t cap)
{
	const char *p = strstr(r->head, name);
	size_t n;

	out[0] = '\0';
	if (p != NULL) {
		p += strlen(name);
		n = strcspn(p, "\r\n");
		snprintf(out, cap, "%.*s", (int)n, p);
	}
}

#define CSP                                                                               \
	"Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; " \
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "    \
	"frame-ancestors 'none'"

Test(ui, accept_reaches_the_api_and_headers_the_wire, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	const char *browser[] = {"Accept: text/html,application/xhtml+xml,*/*;q=0.8", NULL};
	const char *json[] = {"Accept: application/json", NULL};
	const char *none[] = {"Accept:", NULL};
	struct page_reply page, index, bare, curl_default;

	daemon_start(&d, args);
	page = fetch("GET", "/", browser);
	cr_assert_eq(page.status, 200);
	cr_assert(has_line(&page, "Content-Type: text/html; charset=utf-8"), "%s", page.head);
	cr_assert(has_line(&page, CSP), "%s", page.head);
	cr_assert(has_line(&page, "X-Content-Type-Options: nosniff"), "%s", page.head);
	cr_assert(has_line(&page, "Vary: Accept"), "%s", page.head);
	cr_assert(has_line(&page, "Cache-Control: no-cache"), "%s", page.head);
	index = fetch("GET", "/", json);
	bare = fetch("GET", "/", none);
	curl_default = fetch("GET", "/", NULL); /* curl sends Accept: * / * */
	for (int i = 0; i < 3; i++) {
		const struct page_reply *r = i == 0 ? &index : i == 1 ? &bare : &curl_default;

		cr_assert_eq(r->status, 200);
		cr_assert(has_line(r, "Content-Type: application/json"), "%d: %s", i, r->head);
		cr_assert(has_line(r, "Vary: Accept"), "%s", r->head);
		cr_assert(strstr(r->head, "Content-Security-Policy") == NULL, "%s", r->head);
		cr_assert_neq(r->body_len, page.body_len);
	}
	daemon_finish(&d);
}

Test(ui, the_page_and_its_files_answer_304_on_the_wire, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char *const paths[] = {"/ui", "/ui/app.js", "/ui/style.css", "/"};
	char cond[128];
	const char *with_tag[] = {"Accept: text/html", cond, NULL};
	const char *accept_html[] = {"Accept: text/html", NULL};

	daemon_start(&d, args);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct page_reply ok = fetch("GET", paths[i], accept_html), same, head;
		char etag[64], length[32];

		header_value(&ok, "\nETag: ", etag, sizeof(etag));
		cr_assert_eq(ok.status, 200, "%s", paths[i]);
		cr_assert_eq(strlen(etag), 18, "%s: %s", paths[i], ok.head);
		cr_assert(has_line(&ok, "X-Content-Type-Options: nosniff"), "%s", ok.head);
		snprintf(cond, sizeof(cond), "If-None-Match: %s", etag);
		same = fetch("GET", paths[i], with_tag);
		cr_assert_eq(same.status, 304, "%s", paths[i]);
		cr_assert_eq(same.body_len, 0);
		cr_assert(strstr(same.head, "\nContent-Type:") == NULL, "a 304 has no type: %s", same.head);
		header_value(&same, "\nContent-Length: ", length, sizeof(length));
		cr_assert(length[0] == '\0' || strtoul(length, NULL, 10) == ok.body_len,
			  "%s: 304 announces %s bytes, the 200 had %zu", paths[i], length, ok.body_len);
		head = fetch("HEAD", paths[i], accept_html);
		cr_assert_eq(head.status, 200);
		header_value(&head, "\nContent-Length: ", length, sizeof(length));
		cr_assert_eq(strtoul(length, NULL, 10), ok.body_len, "HEAD %s: %s", paths[i], head.head);
	}
	daemon_finish(&d);
}
