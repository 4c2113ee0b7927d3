/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The counters and their text without a scrape: a request counted under
 * its route's label (the api's table, /metrics included), anything
 * unrouted as "other", decisions by target with the overflow bounded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "metrics.h"

static char *render(struct metrics *m)
{
	struct metrics_info info = {.version = "t", .build = "t", .digest = "d", .ready = true};
	size_t len = 0;
	char *text = metrics_render(m, &info, &len);

	cr_assert_not_null(text);
	cr_assert_eq(strlen(text), len);
	return text;
}

/* The value of one exact series line, or -1 when absent. */
static long long series(const char *text, const char *name)
{
	char key[256];
	const char *at;
	int n = snprintf(key, sizeof(key), "\n%s ", name);

	at = strstr(text, key);
	return at != NULL ? strtoll(at + n, NULL, 10) : -1;
}

Test(metrics, requests_by_route_label)
{
	static struct metrics m;
	int splits = api_route_of("/v1/splits?x=1", 14), scrape = api_route_of("/metrics", 8);
	char *text;

	cr_assert_eq(metrics_init(&m), 0);
	cr_assert_geq(splits, 0);
	cr_assert_geq(scrape, 0, "/metrics is a route of the api's table");
	metrics_request(&m, splits, 200, 10);
	metrics_request(&m, splits, 200, 10);
	metrics_request(&m, splits, 400, 10);
	metrics_request(&m, scrape, 200, 10);
	metrics_request(&m, METRICS_ROUTE_NONE, 404, 10);
	metrics_request(&m, 1000, 404, 10);    /* past the table: other */
	metrics_request(&m, splits, 599, 10);  /* a status nobody lists */
	metrics_request(&m, splits, 304, 10);
	text = render(&m);
	cr_assert_eq(series(text, "splitkd_requests_total{route=\"/v1/splits\",status=\"200\"}"), 2);
	cr_assert_eq(series(text, "splitkd_requests_total{route=\"/v1/splits\",status=\"400\"}"), 1);
	cr_assert_eq(series(text, "splitkd_requests_total{route=\"/metrics\",status=\"200\"}"), 1);
	cr_assert_eq(series(text, "splitkd_requests_total{route=\"other\",status=\"404\"}"), 2);
	cr_assert_eq(series(text, "splitkd_requests_total{route=\"/v1/splits\",status=\"other\"}"), 1);
	cr_assert_eq(series(text, "splitkd_not_modified_total"), 1);
	cr_assert_eq(series(text, "splitkd_request_duration_seconds_count{route=\"/v1/splits\"}"), 5);
	free(text);
	metrics_cleanup(&m);
}

Test(metrics, every_route_has_its_label)
{
	const char *methods;

	for (size_t i = 0; api_route_path(i, &methods) != NULL; i++) {
		cr_assert_str_eq(metrics_route_label((int)i), api_route_path(i, &methods));
	}
	cr_assert_str_eq(metrics_route_label((int)api_route_count()), "other");
}

Test(metrics, decisions_by_target_bounded)
{
	static struct metrics m;
	char name[32];
	char *text;

	cr_assert_eq(metrics_init(&m), 0);
	metrics_decision(&m, "default", "h100", SPLITK_AUTO);
	metrics_decision(&m, "default", "h100", SPLITK_AUTO);
	metrics_decision(&m, "default", "h100", SPLITK_PINNED);
	metrics_decision(&m, "default", NULL, SPLITK_LEGACY);
	metrics_decision(&m, "legacy", "h100", SPLITK_LEGACY);
	metrics_decision(&m, NULL, "h100", SPLITK_LEGACY); /* the default, named at the scrape */
	for (int i = 0; i < METRICS_MAX_TARGETS + 10; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		metrics_decision(&m, "default", name, SPLITK_LEGACY);
	}
	text = render(&m);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"h100\",policy=\"auto\"}"), 2);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"h100\",policy=\"pinned\"}"), 1);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"(none)\",policy=\"legacy\"}"), 1);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"h100\",policy=\"legacy\"}"), 1);
	/* the same target in another catalog is its own row */
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"legacy\",target=\"h100\",policy=\"legacy\"}"), 1);
	/* h100, (none), legacy's h100 and the default's h100 took four rows:
	 * the rest of the first 128 have one each, and the 14 after them
	 * share "(other)" */
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"t0\",policy=\"legacy\"}"), 1);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"t123\",policy=\"legacy\"}"), 1);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"default\",target=\"t124\",policy=\"legacy\"}"), -1);
	cr_assert_eq(series(text, "splitkd_decisions_total{catalog=\"(other)\",target=\"(other)\",policy=\"legacy\"}"), 14);
	free(text);
	metrics_cleanup(&m);
}

/* The TLS series come from here too, from tls.c's figures: each figure in
 * its own series, under the catalog's (after the streams'), and none at
 * all without TLS. */
Test(metrics, tls_series_from_the_figures)
{
	static struct metrics m;
	struct metrics_tls tls = {1900000000, 1800000000, 3, 2, false, 41, 5, 7};
	static const struct {
		const char *name;
		long long value;
	} want[] = {
		{"splitkd_tls_certificate_expiry_timestamp_seconds", 1900000000},
		{"splitkd_tls_certificate_loaded_timestamp_seconds", 1800000000},
		{"splitkd_tls_reloads_total{result=\"ok\"}", 3},
		{"splitkd_tls_reloads_total{result=\"error\"}", 2},
		{"splitkd_tls_last_reload_success", 0},
		{"splitkd_tls_handshakes_total", 41},
		{"splitkd_tls_handshake_failures_total{reason=\"client_certificate\"}", 5},
		{"splitkd_tls_handshake_failures_total{reason=\"handshake\"}", 7},
	};
	struct metrics_info info = {.version = "t", .build = "t", .digest = "d", .ready = true};
	size_t len = 0;
	char *text, *plain;

	cr_assert_eq(metrics_init(&m), 0);
	plain = render(&m);
	cr_assert_null(strstr(plain, "splitkd_tls_"), "no TLS series over plain HTTP");
	info.tls = &tls;
	text = metrics_render(&m, &info, &len);
	cr_assert_not_null(text);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_assert_eq(series(text, want[i].name), want[i].value, "%s", want[i].name);
	}
	cr_assert(strstr(text, "splitkd_stream_events_total") < strstr(text, "splitkd_tls_") &&
			  strstr(text, "splitkd_tls_") < strstr(text, "splitkd_catalog_info"),
		  "where the series stood when tls.c wrote them");
	cr_assert_eq(strlen(text), len);
	free(text);
	free(plain);
	metrics_cleanup(&m);
}

/* The state directory's series: absent without --state-dir, each of its
 * counters under its own name with one, the history's skipped lines too. */
Test(metrics, state_series_only_with_a_state_directory)
{
	static struct metrics m;
	char *text;

	cr_assert_eq(metrics_init(&m), 0);
	text = render(&m);
	cr_assert_null(strstr(text, "splitkd_state_"), "no state series without --state-dir");
	free(text);
	atomic_store(&m.state_on, true);
	atomic_store(&m.state_write_errors, 3);
	atomic_store(&m.state_files_skipped, 5);
	atomic_store(&m.state_history_lines_skipped, 7);
	text = render(&m);
	cr_assert_eq(series(text, "splitkd_state_write_errors_total"), 3);
	cr_assert_eq(series(text, "splitkd_state_files_skipped_total"), 5);
	cr_assert_eq(series(text, "splitkd_state_history_lines_skipped_total"), 7);
	cr_assert_not_null(strstr(text, "# TYPE splitkd_state_history_lines_skipped_total "
				      "counter\n"));
	free(text);
	metrics_cleanup(&m);
}
