/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * GET /v1/status through the pure handler: what the server's callback
 * fills is what the answer says (each disk state and trigger, errors and
 * times), and without a callback the answer describes the context's
 * catalog alone.
 */
#include <stdio.h>

#include "helpers.h"
#include "status.h"

TestSuite(status, .init = load_default_catalog, .fini = free_default_catalog);

/* 2026-12-01T10:00:00.250Z */
#define T_LOADED 1796119200250LL

static void fill(void *cls, struct api_status *out)
{
	const struct api_status *want = cls;

	*out = *want;
}

static struct answer status_of(const struct api_status *st)
{
	struct api_context ctx = {.catalog = test_catalog, .version = "test", .build = "test",
				  .report_status = fill, .report_status_cls = (void *)st};
	struct api_request req = {.method = "GET", .uri = "/v1/status", .uri_len = 10, .body = ""};

	return call_ctx(&ctx, &req);
}

static const cJSON *obj(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cr_assert(cJSON_IsObject(v), "%s is not an object", key);
	return v;
}

static bool is_null(const cJSON *o, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static struct api_status a_file(enum api_disk_state disk, bool ok)
{
	struct api_status st;

	memset(&st, 0, sizeof(st));
	snprintf(st.revision, sizeof(st.revision), "fnv1a64:0123456789abcdef");
	st.catalog.loaded_at_ms = T_LOADED;
	snprintf(st.catalog.source, sizeof(st.catalog.source), "/etc/splitkd/catalog.json");
	st.catalog.watch = API_WATCH_INOTIFY;
	st.catalog.check_seconds = 5;
	st.catalog.disk = disk;
	st.catalog.checked_at_ms = T_LOADED + 60000;
	st.catalog.last.at_ms = T_LOADED + 60000;
	st.catalog.last.trigger = API_TRIGGER_WATCH;
	st.catalog.last.ok = ok;
	st.catalog.reloads_ok = 3;
	st.catalog.reloads_error = ok ? 0 : 1;
	return st;
}

Test(status, a_followed_file_in_step)
{
	struct api_status st = a_file(API_DISK_SAME, true);
	struct answer a;

	st.catalog.last.changed = true;
	a = status_of(&st);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(a.content_type, "application/json");
	cr_assert_str_eq(str(a.json, "revision"), "fnv1a64:0123456789abcdef");
	cr_assert_str_eq(str(a.json, "loaded_at"), "2026-12-01T10:00:00.250Z");
	cr_assert_str_eq(str(a.json, "source"), "/etc/splitkd/catalog.json");
	cr_assert_str_eq(str(obj(a.json, "watch"), "mode"), "inotify");
	cr_assert_eq(num(obj(a.json, "watch"), "check_seconds"), 5);
	cr_assert_str_eq(str(obj(a.json, "disk"), "state"), "same");
	cr_assert(is_null(obj(a.json, "disk"), "error"));
	cr_assert_str_eq(str(obj(a.json, "disk"), "checked_at"), "2026-12-01T10:01:00.250Z");
	cr_assert_str_eq(str(obj(a.json, "last_attempt"), "trigger"), "watch");
	cr_assert_str_eq(str(obj(a.json, "last_attempt"), "result"), "ok");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(obj(a.json, "last_attempt"), "changed")));
	cr_assert(is_null(obj(a.json, "last_attempt"), "error"));
	cr_assert_eq(num(obj(a.json, "reloads"), "ok"), 3);
	cr_assert_eq(num(obj(a.json, "reloads"), "error"), 0);
	cr_assert_eq(strlen(a.etag), 18, "a GET answer carries an ETag");
	answer_free(&a);
}

/* Every failing disk state: named, with its error, and the failed attempt. */
Test(status, each_failure_named_with_its_error)
{
	static const struct {
		enum api_disk_state disk;
		const char *name;
	} cases[] = {
		{API_DISK_INVALID, "invalid"},
		{API_DISK_MISSING, "missing"},
		{API_DISK_UNREADABLE, "unreadable"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_status st = a_file(cases[i].disk, false);
		struct answer a;

		snprintf(st.catalog.disk_error, sizeof(st.catalog.disk_error), "why %s \"quoted\"", cases[i].name);
		snprintf(st.catalog.last.error, sizeof(st.catalog.last.error), "attempt %s", cases[i].name);
		a = status_of(&st);
		cr_assert_eq(a.status, 200);
		cr_assert_not_null(a.json, "not JSON: %s", a.body);
		cr_assert_str_eq(str(obj(a.json, "disk"), "state"), cases[i].name);
		cr_assert_not_null(strstr(str(obj(a.json, "disk"), "error"), cases[i].name));
		cr_assert_not_null(strstr(str(obj(a.json, "disk"), "error"), "\"quoted\""));
		cr_assert_str_eq(str(obj(a.json, "last_attempt"), "result"), "error");
		cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(obj(a.json, "last_attempt"), "changed")));
		cr_assert_not_null(strstr(str(obj(a.json, "last_attempt"), "error"), cases[i].name));
		cr_assert_eq(num(obj(a.json, "reloads"), "error"), 1);
		answer_free(&a);
	}
}

Test(status, triggers_and_watch_modes_by_name)
{
	static const char *const triggers[] = {"start", "signal", "watch"};
	static const char *const modes[] = {"off", "inotify", "periodic"};

	for (int i = 0; i < 3; i++) {
		struct api_status st = a_file(API_DISK_SAME, true);
		struct answer a;

		st.catalog.last.trigger = (enum api_trigger)i;
		st.catalog.watch = (enum api_watch_mode)i;
		a = status_of(&st);
		cr_assert_str_eq(str(obj(a.json, "last_attempt"), "trigger"), triggers[i]);
		cr_assert_str_eq(str(obj(a.json, "watch"), "mode"), modes[i]);
		answer_free(&a);
	}
}

Test(status, embedded_catalog_has_no_source_or_disk)
{
	struct api_status st;
	struct answer a;

	memset(&st, 0, sizeof(st));
	snprintf(st.revision, sizeof(st.revision), "%s", test_catalog->digest);
	st.catalog.loaded_at_ms = T_LOADED;
	st.catalog.last.ok = true;
	a = status_of(&st);
	cr_assert(is_null(a.json, "source"), "%s", a.body);
	cr_assert(is_null(a.json, "disk"), "%s", a.body);
	answer_free(&a);
}

Test(status, without_a_callback_the_context_catalog)
{
	struct answer a = get("/v1/status");

	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "revision"), test_catalog->digest);
	cr_assert(is_null(a.json, "source"));
	cr_assert(is_null(a.json, "loaded_at"), "no time was handed over: null, not 1970");
	cr_assert_str_eq(str(obj(a.json, "watch"), "mode"), "off");
	answer_free(&a);
}

Test(status, post_is_405_and_query_refused)
{
	struct answer a = post("/v1/status", "{}");

	assert_problem(&a, 405, "method-not-allowed", NULL);
	cr_assert_str_eq(a.allow, "GET, HEAD");
	answer_free(&a);
	a = get("/v1/status?verbose=1");
	cr_assert_eq(a.status, 400, "%s", a.body);
	answer_free(&a);
}

/* The TLS files are a source like the catalog: written under `tls` with the
 * same members and the certificate's dates, and only with TLS (a plain
 * daemon's answer has no `tls` at all). */
Test(status, the_tls_source_only_with_tls)
{
	struct api_status st = a_file(API_DISK_SAME, true);
	const cJSON *tls;
	struct answer a;

	a = status_of(&st);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(a.json, "tls"), "%s", a.body);
	answer_free(&a);

	st.tls_on = true;
	snprintf(st.tls.source, sizeof(st.tls.source), "/etc/splitkd/tls/tls.crt");
	st.tls.loaded_at_ms = T_LOADED + 1000;
	st.tls.watch = API_WATCH_PERIODIC;
	st.tls.check_seconds = 1;
	st.tls.disk = API_DISK_INVALID;
	snprintf(st.tls.disk_error, sizeof(st.tls.disk_error), "--tls-key k.pem does not match");
	st.tls.last = (struct api_status_attempt){.at_ms = T_LOADED + 2000,
						  .trigger = API_TRIGGER_SIGNAL};
	snprintf(st.tls.last.error, sizeof(st.tls.last.error), "--tls-key k.pem does not match");
	st.tls.reloads_error = 2;
	st.tls_not_before = 1796119200; /* 2026-12-01T10:00:00Z */
	st.tls_not_after = 1827655200;  /* 2027-12-01T10:00:00Z */
	a = status_of(&st);
	tls = obj(a.json, "tls");
	cr_assert_str_eq(str(a.json, "source"), "/etc/splitkd/catalog.json", "the catalog's own");
	cr_assert_str_eq(str(tls, "source"), "/etc/splitkd/tls/tls.crt");
	cr_assert_str_eq(str(tls, "loaded_at"), "2026-12-01T10:00:01.250Z");
	cr_assert_str_eq(str(obj(tls, "watch"), "mode"), "periodic");
	cr_assert_str_eq(str(obj(tls, "disk"), "state"), "invalid");
	cr_assert_str_eq(str(obj(tls, "disk"), "error"), "--tls-key k.pem does not match");
	cr_assert_str_eq(str(obj(tls, "last_attempt"), "trigger"), "signal");
	cr_assert_str_eq(str(obj(tls, "last_attempt"), "result"), "error");
	cr_assert_eq(num(obj(tls, "reloads"), "error"), 2);
	cr_assert_str_eq(str(obj(tls, "certificate"), "not_before"), "2026-12-01T10:00:00.000Z");
	cr_assert_str_eq(str(obj(tls, "certificate"), "not_after"), "2027-12-01T10:00:00.000Z");
	answer_free(&a);
}
