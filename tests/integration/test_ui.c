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

/* GET (or HEAD) with these header lines; "Accept:" alone sends none. */
static struct reply fetch(const char *method, const char *path, const char *const *headers)
{
	return http(&d, method, path, headers, NULL);
}

/* Whether the header block has this exact line ("Name: value"). */
static bool has_line(const struct reply *r, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = strstr(r->head, line); p != NULL; p = strstr(p + n, line)) {
		if ((p == r->head || p[-1] == '\n') && p[n] == '\r') {
			return true;
		}
	}
	return false;
}

static void header_value(const struct reply *r, const char *name, char *out, size_t cap)
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
	struct reply page, index, bare, curl_default;

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
		const struct reply *r = i == 0 ? &index : i == 1 ? &bare : &curl_default;

		cr_assert_eq(r->status, 200);
		cr_assert(has_line(r, "Content-Type: application/json"), "%d: %s", i, r->head);
		cr_assert(has_line(r, "Vary: Accept"), "%s", r->head);
		cr_assert(strstr(r->head, "Content-Security-Policy") == NULL, "%s", r->head);
		cr_assert_neq(r->len, page.len);
	}
	reply_free(&page);
	reply_free(&index);
	reply_free(&bare);
	reply_free(&curl_default);
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
		struct reply ok = fetch("GET", paths[i], accept_html), same, head;
		char etag[64], length[32];

		header_value(&ok, "\nETag: ", etag, sizeof(etag));
		cr_assert_eq(ok.status, 200, "%s", paths[i]);
		cr_assert_eq(strlen(etag), 18, "%s: %s", paths[i], ok.head);
		cr_assert(has_line(&ok, "X-Content-Type-Options: nosniff"), "%s", ok.head);
		snprintf(cond, sizeof(cond), "If-None-Match: %s", etag);
		same = fetch("GET", paths[i], with_tag);
		cr_assert_eq(same.status, 304, "%s", paths[i]);
		cr_assert_eq(same.len, 0);
		cr_assert(strstr(same.head, "\nContent-Type:") == NULL, "a 304 has no type: %s", same.head);
		header_value(&same, "\nContent-Length: ", length, sizeof(length));
		cr_assert(length[0] == '\0' || strtoul(length, NULL, 10) == ok.len,
			  "%s: 304 announces %s bytes, the 200 had %zu", paths[i], length, ok.len);
		head = fetch("HEAD", paths[i], accept_html);
		cr_assert_eq(head.status, 200);
		header_value(&head, "\nContent-Length: ", length, sizeof(length));
		cr_assert_eq(strtoul(length, NULL, 10), ok.len, "HEAD %s: %s", paths[i], head.head);
		reply_free(&ok);
		reply_free(&same);
		reply_free(&head);
	}
	daemon_finish(&d);
}
