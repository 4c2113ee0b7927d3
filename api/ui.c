/* SPDX-License-Identifier: AGPL-3.0-only */
#include "ui.h"

#include <string.h>
#include <strings.h>

#include "embedded.h"
#include "slice.h"

/* ---------------------------------------------------------- negotiation */

/* How specifically a media range names a type. */
enum rank { RANK_NONE = -1, RANK_ANY, RANK_MAJOR, RANK_EXACT };

/* What an Accept value says of one type so far: its best range's q. */
struct preference {
	const char *type; /* "text/html" */
	int rank;
	int q; /* thousandths: 0..1000 */
};

/* An RFC 9110 qvalue ("0", "0.5", "1.000") in thousandths, or -1. */
static int parse_qvalue(const char *s, size_t len)
{
	int q, scale = 100;

	if (len == 0 || len > 5 || (s[0] != '0' && s[0] != '1')) {
		return -1;
	}
	q = (s[0] - '0') * 1000;
	if (len > 1 && s[1] != '.') {
		return -1;
	}
	for (size_t i = 2; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return -1;
		}
		q += (s[i] - '0') * scale;
		scale /= 10;
	}
	return q <= 1000 ? q : -1;
}

static enum rank rank_of(struct slice range, const char *type)
{
	size_t major = (size_t)(strchr(type, '/') - type) + 1; /* "text/" */

	if (range.len == strlen(type) && strncasecmp(range.p, type, range.len) == 0) {
		return RANK_EXACT;
	}
	if (range.len == major + 1 && strncasecmp(range.p, type, major) == 0 &&
	    range.p[major] == '*') {
		return RANK_MAJOR;
	}
	if (range.len == 3 && memcmp(range.p, "*/*", 3) == 0) {
		return RANK_ANY;
	}
	return RANK_NONE;
}

/* Past a quoted-string whose opening quote is at p, escapes included; at
 * the NUL when it is not closed. */
static const char *skip_quoted(const char *p)
{
	for (p++; *p != '\0' && *p != '"'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			p++;
		}
	}
	return *p == '"' ? p + 1 : p;
}

/* One parameter, just after its ';': sets *q when it is the weight (0 for
 * a weight that is no qvalue). Returns where it ends. */
static const char *parse_param(const char *p, int *q)
{
	struct slice name, value;

	p += strspn(p, " \t");
	name = (struct slice){p, strcspn(p, "=;, \t")};
	p += name.len;
	if (*p != '=') {
		return p;
	}
	p++;
	value.p = p;
	p = *p == '"' ? skip_quoted(p) : p + strcspn(p, ";, \t");
	value.len = (size_t)(p - value.p);
	if (name.len == 1 && (name.p[0] == 'q' || name.p[0] == 'Q')) {
		int v = parse_qvalue(value.p, value.len);

		*q = v < 0 ? 0 : v;
	}
	return p;
}

/* One element of the list: its media range (len 0 when the element is not
 * one) and its q (1000 when it has none). Returns where the next element
 * starts, always past p unless p is at the end. */
static const char *next_element(const char *p, struct slice *range, int *q)
{
	p += strspn(p, " \t,");
	*range = (struct slice){p, strcspn(p, " \t;,")};
	*q = 1000;
	p += range->len;
	for (;;) {
		p += strspn(p, " \t");
		if (*p != ';') {
			break;
		}
		p = parse_param(p + 1, q);
	}
	if (*p != ',' && *p != '\0') {
		/* neither a parameter nor the end: no media range, skip it */
		range->len = 0;
		while (*p != ',' && *p != '\0') {
			p = *p == '"' ? skip_quoted(p) : p + 1;
		}
	}
	return p;
}

static void consider(struct preference *pref, struct slice range, int q)
{
	enum rank rank = range.len > 0 ? rank_of(range, pref->type) : RANK_NONE;

	if (rank != RANK_NONE && (int)rank > pref->rank) {
		pref->rank = (int)rank;
		pref->q = q;
	}
}

bool ui_prefers_html(const char *accept)
{
	struct preference html = {"text/html", RANK_NONE, 0};
	struct preference json = {"application/json", RANK_NONE, 0};
	const char *p = accept;

	if (p == NULL) {
		return false;
	}
	while (*p != '\0') {
		struct slice range;
		int q;

		p = next_element(p, &range, &q);
		consider(&html, range, q);
		consider(&json, range, q);
	}
	return html.q > json.q;
}

/* ---------------------------------------------------------- answers */

/* A route here sets at most three headers (Vary, nosniff, the CSP), so
 * adding one cannot fail. */
_Static_assert(API_MAX_HEADERS >= 3, "ui answers carry up to three headers");

static void answer_file(struct handler_call *c, const char *body, size_t len, const char *type)
{
	c->body = (struct slice){body, len};
	c->content_type = type;
	(void)exchange_add_header(c->resp, "X-Content-Type-Options", "nosniff");
}

static void answer_page(struct handler_call *c)
{
	answer_file(c, embedded_ui_index_html, embedded_ui_index_html_len, API_CT_HTML);
	(void)exchange_add_header(c->resp, "Content-Security-Policy", UI_CSP);
}

/* "GET, HEAD, POST" as ["GET","HEAD","POST"]. */
static void write_methods(struct jsonw *w, const char *methods)
{
	jsonw_array_begin(w);
	while (*methods != '\0') {
		size_t n = strcspn(methods, ",");

		jsonw_strn(w, methods, n);
		methods += n;
		methods += strspn(methods, ", ");
	}
	jsonw_array_end(w);
}

static void write_route(struct jsonw *w, const char *path, const char *methods)
{
	jsonw_object_begin(w);
	jsonw_kv_str(w, "path", path);
	jsonw_key(w, "methods");
	write_methods(w, methods);
	jsonw_object_end(w);
}

/* The index: every route of the router's table, as it stands (/metrics
 * included: the server renders it, the table routes it), so it cannot fall
 * behind. */
static void write_index(struct handler_call *c)
{
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "name", "splitkd");
	jsonw_kv_str(&c->w, "version", c->ctx->version != NULL ? c->ctx->version : "unknown");
	jsonw_kv_str(&c->w, "description",
		     "GPU split-K decisions over HTTP/JSON. /openapi.json describes every route; "
		     "a browser gets the page at / and /ui.");
	jsonw_kv_str(&c->w, "openapi", "/openapi.json");
	jsonw_kv_str(&c->w, "page", "/ui");
	jsonw_key(&c->w, "routes");
	jsonw_array_begin(&c->w);
	for (size_t i = 0;; i++) {
		const char *methods;
		const char *path = c->route_path(i, &methods);

		if (path == NULL) {
			break;
		}
		write_route(&c->w, path, methods);
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

void handler_root(struct handler_call *c)
{
	/* one URL, two representations: a cache must key on Accept */
	(void)exchange_add_header(c->resp, "Vary", "Accept");
	if (ui_prefers_html(c->req->accept)) {
		answer_page(c);
		return;
	}
	(void)exchange_add_header(c->resp, "X-Content-Type-Options", "nosniff");
	write_index(c);
}

void handler_ui(struct handler_call *c)
{
	answer_page(c);
}

void handler_ui_app_js(struct handler_call *c)
{
	answer_file(c, embedded_ui_app_js, embedded_ui_app_js_len, API_CT_JS);
}

void handler_ui_style_css(struct handler_call *c)
{
	answer_file(c, embedded_ui_style_css, embedded_ui_style_css_len, API_CT_CSS);
}
