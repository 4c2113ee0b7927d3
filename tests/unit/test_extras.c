/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A request's side of --cors-allow-origin and --rate-limit (server/extras.c)
 * through its own API, its headers from a table instead of
 * libmicrohttpd: a listed origin echoed and another not, the Origin
 * looked up only when origins are listed, a preflight told from a plain
 * OPTIONS, its 204 with and without a listed origin, and the limiter's
 * verdict: a burst taken, the next refused with why and Retry-After, the
 * routes never limited left alone.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api.h"
#include "extras.h"
#include "ratelimit.h"

/* A request's headers, and how many times they were asked for. */
struct headers {
	const char *origin, *request_method;
	int asked;
};

static const char *header(void *conn, const char *name)
{
	struct headers *h = conn;

	h->asked++;
	if (strcmp(name, "Origin") == 0) {
		return h->origin;
	}
	if (strcmp(name, "Access-Control-Request-Method") == 0) {
		return h->request_method;
	}
	return NULL;
}

static struct server_config cfg_with(unsigned num_origins, unsigned rate)
{
	struct server_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.cors_origins[0] = "https://a.example";
	cfg.cors_origins[1] = "http://b.example:8080";
	cfg.num_cors_origins = num_origins;
	cfg.rate_limit = rate;
	return cfg;
}

static int route(const char *path)
{
	int r = api_route_of(path, strlen(path));

	cr_assert_geq(r, 0, "%s is a route", path);
	return r;
}

static const int no_unlimited[3] = {-1, -1, -1};

Test(extras, a_listed_origin_is_echoed_and_no_other)
{
	static const struct {
		const char *origin;
		const char *echoed;
	} cases[] = {
		{"https://a.example", "https://a.example"},
		{"http://b.example:8080", "http://b.example:8080"},
		{"https://a.example.evil", NULL},
		{"http://a.example", NULL},
		{NULL, NULL},
	};
	struct server_config cfg = cfg_with(2, 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct headers h = {cases[i].origin, NULL, 0};
		struct extras x;

		memset(&x, 0, sizeof(x));
		extras_begin(&x, &cfg, header, &h, 1000 + i);
		cr_assert_eq(x.of, 1000 + i);
		cr_assert(x.fields.vary_origin);
		cr_assert_eq(x.origin_sent, cases[i].origin != NULL);
		if (cases[i].echoed == NULL) {
			cr_assert_null(x.fields.origin, "%s", cases[i].origin);
		} else {
			cr_assert_str_eq(x.fields.origin, cases[i].echoed);
		}
		cr_assert_null(x.fields.ratelimit);
	}
}

Test(extras, no_origin_listed_asks_for_none)
{
	struct server_config cfg = cfg_with(0, 0);
	struct headers h = {"https://a.example", "GET", 0};
	struct extras x;
	char why[160];

	memset(&x, 0, sizeof(x));
	cr_assert_eq(extras_judge(&x, &cfg, NULL, NULL, no_unlimited, route("/v1/splits"), "OPTIONS",
				  header, &h, 1, why, sizeof(why)),
		     EXTRAS_PASS, "no CORS: an OPTIONS is no preflight");
	cr_assert_eq(h.asked, 0);
	cr_assert(!x.fields.vary_origin);
	cr_assert_null(x.fields.origin);
}

Test(extras, a_preflight_is_an_options_with_both_headers_on_a_route)
{
	static const struct {
		const char *method, *path, *origin, *request_method;
		enum extras_verdict want;
	} cases[] = {
		{"OPTIONS", "/v1/splits", "https://a.example", "POST", EXTRAS_PREFLIGHT},
		{"OPTIONS", "/v1/splits", "https://c.example", "POST", EXTRAS_PREFLIGHT},
		{"OPTIONS", "/v1/splits", "https://a.example", NULL, EXTRAS_PASS},
		{"OPTIONS", "/v1/splits", NULL, "POST", EXTRAS_PASS},
		{"GET", "/v1/splits", "https://a.example", "POST", EXTRAS_PASS},
		{"OPTIONS", "/no/such/route", "https://a.example", "POST", EXTRAS_PASS},
	};
	struct server_config cfg = cfg_with(1, 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct headers h = {cases[i].origin, cases[i].request_method, 0};
		struct extras x;
		char why[160];
		int r = api_route_of(cases[i].path, strlen(cases[i].path));

		memset(&x, 0, sizeof(x));
		cr_assert_eq(extras_judge(&x, &cfg, NULL, NULL, no_unlimited, r, cases[i].method, header,
					  &h, 7, why, sizeof(why)),
			     cases[i].want, "case %zu", i);
		cr_assert_eq(x.route, r);
	}
}

Test(extras, a_preflights_answer)
{
	struct server_config cfg = cfg_with(1, 0);
	const char *methods = NULL;
	struct api_response a;
	struct extras x;
	char why[160];

	for (int listed = 0; listed < 2; listed++) {
		struct headers h = {listed ? "https://a.example" : "https://c.example", "POST", 0};

		memset(&x, 0, sizeof(x));
		cr_assert_eq(extras_judge(&x, &cfg, NULL, NULL, no_unlimited, route("/v1/splits"),
					  "OPTIONS", header, &h, 7, why, sizeof(why)),
			     EXTRAS_PREFLIGHT);
		extras_preflight(&x, &a);
		(void)api_route_path((size_t)x.route, &methods);
		cr_assert_eq(a.status, 204);
		cr_assert_eq(a.route, x.route);
		cr_assert_str_eq(a.allow, methods);
		cr_assert_eq(a.num_headers, listed ? 3u : 0u, "what a listed origin may send, only");
		if (listed) {
			cr_assert_str_eq(a.headers[0].name, "Access-Control-Allow-Methods");
			cr_assert_str_eq(a.headers[0].value, methods);
		}
		api_response_cleanup(&a);
	}
}

Test(extras, the_limiter_takes_a_burst_then_refuses)
{
	struct server_config cfg = cfg_with(0, 3);
	struct ratelimit rl;
	int healthz = route("/healthz");
	const int unlimited[3] = {healthz, -1, -1};
	struct headers h = {NULL, NULL, 0};
	struct extras x;
	char why[160];
	uint64_t now = 5000000000u;

	cr_assert_eq(ratelimit_init(&rl, 3, 16), 0);
	memset(&x, 0, sizeof(x));
	x.client[15] = 1;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(extras_judge(&x, &cfg, &rl, "\"client\";q=3;w=1", unlimited,
					  route("/v1/splits"), "GET", header, &h, now, why, sizeof(why)),
			     EXTRAS_PASS, "request %d of the burst", i + 1);
		cr_assert_str_eq(x.fields.ratelimit_policy, "\"client\";q=3;w=1");
		cr_assert_not_null(x.fields.ratelimit);
	}
	cr_assert_eq(extras_judge(&x, &cfg, &rl, "\"client\";q=3;w=1", unlimited, route("/v1/splits"),
				  "GET", header, &h, now, why, sizeof(why)),
		     EXTRAS_REFUSED);
	cr_assert_str_eq(x.retry_after, "1");
	cr_assert_not_null(strstr(why, "more than its 3 requests a second"), "%s", why);
	cr_assert_not_null(strstr(why, "retry after 1 s"), "%s", why);
	memset(&x.fields, 0, sizeof(x.fields));
	cr_assert_eq(extras_judge(&x, &cfg, &rl, "\"client\";q=3;w=1", unlimited, healthz, "GET",
				  header, &h, now, why, sizeof(why)),
		     EXTRAS_PASS, "a route never limited");
	cr_assert_null(x.fields.ratelimit, "and says nothing of the limit");
	x.client[15] = 2;
	cr_assert_eq(extras_judge(&x, &cfg, &rl, "\"client\";q=3;w=1", unlimited, route("/v1/splits"),
				  "GET", header, &h, now, why, sizeof(why)),
		     EXTRAS_PASS, "another client has its own burst");
	ratelimit_cleanup(&rl);
}
