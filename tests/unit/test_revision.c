/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * revision.c and diff.c through their own API and api_handle: If-Match's
 * strong comparison, the diff of catalogs changed one way at a time, and
 * requests pinned against a context that holds several revisions.
 */
#include <stdio.h>

#include "diff.h"
#include "etag.h"
#include "helpers.h"
#include "revision.h"

/* The embedded catalog with one edit: `from` replaced by `to`, once. */
static struct catalog *edited(const char *from, const char *to)
{
	const char *base = embedded_catalog_json;
	const char *at = strstr(base, from);
	size_t n = embedded_catalog_json_len, fl = strlen(from), tl = strlen(to);
	char *text = malloc(n - fl + tl + 1), err[512];
	struct catalog *cat;

	cr_assert_not_null(at, "the catalog has no %s", from);
	memcpy(text, base, (size_t)(at - base));
	memcpy(text + (at - base), to, tl);
	memcpy(text + (at - base) + tl, at + fl, n - (size_t)(at - base) - fl);
	text[n - fl + tl] = '\0';
	cat = catalog_load(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	free(text);
	return cat;
}

Test(etag, if_match_is_strong_and_strict)
{
	static const struct {
		const char *header;
		bool passes;
	} cases[] = {
		{"*", true},
		{"  * ", true},
		{"\"0123456789abcdef\"", true},
		{"\"x\", \"0123456789abcdef\"", true},
		{"\"x\",\"0123456789abcdef\" , \"y\"", true},
		{"W/\"0123456789abcdef\"", false}, /* weak never passes If-Match */
		{"\"0123456789abcdee\"", false},
		{"\"nope\"", false},
		{"", false},
		{"0123456789abcdef", false}, /* not quoted: not an entity-tag */
		{"\"0123456789abcdef", false},
		{"*, \"0123456789abcdef\"", false}, /* "*" stands alone */
		{"\"x\" \"0123456789abcdef\"", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(etag_match(cases[i].header, "\"0123456789abcdef\""), cases[i].passes,
			     "If-Match: %s", cases[i].header);
	}
}

static void count_cell(void *cls, const struct diff_cell *cell)
{
	(void)cell;
	(*(size_t *)cls)++;
}

static cJSON *diff_json(const struct catalog *a, const struct catalog *b, uint32_t mbs)
{
	struct jsonw w;
	struct decide_shape shape = {mbs, 1, mbs};
	cJSON *j;

	jsonw_init(&w, 4096);
	diff_write(&w, a, b, shape, (struct slice){NULL, 0});
	cr_assert(!w.failed);
	j = cJSON_ParseWithLength(w.buf, w.len);
	cr_assert_not_null(j);
	jsonw_cleanup(&w);
	return j;
}

Test(diff, same_catalog_changes_nothing)
{
	struct jsonw w;
	cJSON *j;

	load_default_catalog();
	jsonw_init(&w, 4096);
	cr_assert_eq(diff_cells(test_catalog, test_catalog, (struct decide_shape){16, 1, 16},
				(struct slice){NULL, 0}, NULL, NULL),
		     test_catalog->num_targets * test_catalog->num_models);
	cr_assert(!diff_any_cell(test_catalog, test_catalog, (struct decide_shape){1, 1, 1},
				 (struct slice){NULL, 0}));
	jsonw_cleanup(&w);
	j = diff_json(test_catalog, test_catalog, 16);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "cells")), 0);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "targets"), "changed")), 0);
	cJSON_Delete(j);
	free_default_catalog();
}

Test(diff, a_policy_flip_changes_one_row_field_by_field)
{
	struct catalog *b;
	cJSON *j, *cell, *field;
	size_t n = 0, unchanged;

	load_default_catalog();
	b = edited("\"sm_count\": 148", "\"sm_count\": 150");
	j = diff_json(test_catalog, b, 16);
	field = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(j, "targets"), "changed"), 0), "fields"), 0);
	cr_assert_str_eq(str(field, "field"), "sm_count");
	cr_assert_eq(num(field, "from"), 148);
	cr_assert_eq(num(field, "to"), 150);
	cJSON_ArrayForEach(cell, cJSON_GetObjectItem(j, "cells")) {
		cr_assert_str_eq(str(cell, "target"), "b200", "only b200 moved: %s", str(cell, "target"));
		cr_assert(cJSON_IsObject(cJSON_GetObjectItem(cell, "from")));
		cr_assert(cJSON_IsObject(cJSON_GetObjectItem(cell, "to")));
		/* legacy at 148 vs 150 SMs: slots are the SM count */
		cr_assert_eq(num(cJSON_GetObjectItem(cell, "from"), "workspace_slots"), 148);
		cr_assert_eq(num(cJSON_GetObjectItem(cell, "to"), "workspace_slots"), 150);
		n++;
	}
	cr_assert_eq(n, test_catalog->num_models, "every b200 cell's slots moved");
	unchanged = diff_cells(test_catalog, b, (struct decide_shape){16, 1, 16}, (struct slice){NULL, 0},
			       count_cell, &n);
	cr_assert_eq(n, 2 * test_catalog->num_models, "the callback sees the cells the answer lists");
	cr_assert_eq(unchanged + test_catalog->num_models,
		     test_catalog->num_targets * test_catalog->num_models);
	cr_assert_eq((size_t)num(j, "unchanged"), unchanged);
	cJSON_Delete(j);
	catalog_free(b);
	free_default_catalog();
}

Test(diff, added_and_removed_entries_have_one_sided_cells)
{
	struct catalog *b;
	cJSON *j, *cell;
	size_t only_to = 0, only_from = 0;

	load_default_catalog();
	/* b200 renamed: one target removed, one added */
	b = edited("\"name\": \"b200\"", "\"name\": \"b300\"");
	j = diff_json(test_catalog, b, 4);
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "targets"), "added"), 0)->valuestring, "b300");
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "targets"), "removed"), 0)->valuestring, "b200");
	cJSON_ArrayForEach(cell, cJSON_GetObjectItem(j, "cells")) {
		bool from_null = cJSON_IsNull(cJSON_GetObjectItem(cell, "from"));
		bool to_null = cJSON_IsNull(cJSON_GetObjectItem(cell, "to"));

		cr_assert(from_null != to_null, "a renamed target's cells are one-sided");
		only_to += from_null && strcmp(str(cell, "target"), "b300") == 0;
		only_from += to_null && strcmp(str(cell, "target"), "b200") == 0;
	}
	cr_assert_eq(only_to, test_catalog->num_models);
	cr_assert_eq(only_from, test_catalog->num_models);
	cJSON_Delete(j);
	catalog_free(b);
	free_default_catalog();
}

/* ------------------------------------------------ pinned through the api */

static struct answer ask(const struct revision *revs, size_t n, const char *method, const char *uri,
			 const char *body, const char *if_match)
{
	struct api_context ctx = {.catalog = revs[0].catalog, .revisions = revs, .num_revisions = n,
				  .version = "test", .build = "test"};
	struct api_request req = {.method = method, .uri = uri, .uri_len = strlen(uri),
				  .content_type = "application/json", .if_match = if_match,
				  .body = body ? body : "", .body_len = body ? strlen(body) : 0};

	return call_ctx(&ctx, &req);
}

Test(revision, pinned_answers_equal_the_old_current_ones)
{
	struct catalog *b;
	struct revision revs[2];
	char uri[256], body[512];
	const char *asks[][3] = {
		{"GET", "/v1/splits?target=b200&model=qwen3-8b&max_batch_size=8", NULL},
		{"GET", "/v1/matrix?max_batch_size=8", NULL},
		{"POST", "/v1/splits", "{\"target\":\"b200\",\"model\":\"qwen3-8b\"%s}"},
		{"POST", "/v1/splits", "{\"queries\":[{\"target\":\"b200\",\"model\":\"qwen3-8b\"},{\"target\":\"b200\"}]%s}"},
		{"POST", "/ofrep/v1/evaluate/flags", "{\"context\":{\"target\":\"b200\",\"model\":\"qwen3-8b\"%s}}"},
	};

	load_default_catalog();
	b = edited("\"sm_count\": 148", "\"sm_count\": 150");
	revs[0] = (struct revision){b, "2026-01-01T00:00:01Z", "new.json"};
	revs[1] = (struct revision){test_catalog, "2026-01-01T00:00:00Z", "old.json"};
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		struct answer then, now, pinned;
		char extra[96];

		/* then: the old catalog current and alone */
		snprintf(body, sizeof(body), asks[i][2] ? asks[i][2] : "", "");
		then = ask(&revs[1], 1, asks[i][0], asks[i][1], asks[i][2] ? body : NULL, NULL);
		now = ask(revs, 2, asks[i][0], asks[i][1], asks[i][2] ? body : NULL, NULL);
		snprintf(extra, sizeof(extra), ",\"revision\":\"%s\"", test_catalog->digest);
		snprintf(body, sizeof(body), asks[i][2] ? asks[i][2] : "", extra);
		snprintf(uri, sizeof(uri), "%s&revision=%s", asks[i][1], test_catalog->digest);
		pinned = ask(revs, 2, asks[i][0], asks[i][2] ? asks[i][1] : uri, asks[i][2] ? body : NULL, NULL);
		cr_assert_eq(then.status, 200, "%s", then.body);
		cr_assert_str_eq(pinned.body, then.body, "%s %s", asks[i][0], asks[i][1]);
		cr_assert_str_neq(now.body, then.body);
		cr_assert_str_eq(pinned.etag, then.etag);
		answer_free(&then);
		answer_free(&now);
		answer_free(&pinned);
	}
	catalog_free(b);
	free_default_catalog();
}

Test(revision, unheld_is_409_with_current_and_held)
{
	struct catalog *b;
	struct revision revs[2];
	struct answer a;
	const cJSON *held;

	load_default_catalog();
	b = edited("\"sm_count\": 148", "\"sm_count\": 150");
	revs[0] = (struct revision){b, NULL, NULL};
	revs[1] = (struct revision){test_catalog, NULL, NULL};
	a = ask(revs, 2, "GET", "/v1/splits?target=b200&model=qwen3-8b&revision=fnv1a64:0000000000000000", NULL, NULL);
	assert_problem(&a, 409, "revision-unavailable", NULL);
	cr_assert_str_eq(str(a.json, "current"), b->digest);
	held = cJSON_GetObjectItem(a.json, "held");
	cr_assert_eq(cJSON_GetArraySize(held), 2);
	cr_assert_str_eq(cJSON_GetArrayItem(held, 1)->valuestring, test_catalog->digest);
	answer_free(&a);
	a = ask(revs, 2, "POST", "/v1/splits", "{\"revision\":7,\"queries\":[{\"target\":\"b200\"}]}", NULL);
	assert_problem(&a, 400, "invalid-parameter", "revision");
	answer_free(&a);
	a = ask(revs, 2, "POST", "/v1/splits", "{\"revision\":\"a\",\"revision\":\"b\",\"queries\":[{}]}", NULL);
	assert_problem(&a, 400, "repeated-parameter", "revision");
	answer_free(&a);
	a = ask(revs, 2, "POST", "/v1/splits", "{\"queries\":[{\"target\":\"b200\",\"model\":\"qwen3-8b\",\"revision\":\"x\"}]}", NULL);
	cr_assert_eq(a.status, 200, "a revision inside an item is that item's error: %s", a.body);
	cr_assert_eq(num(a.json, "failures"), 1);
	answer_free(&a);
	a = ask(revs, 2, "GET", "/v1/diff?from=nope", NULL, NULL);
	assert_problem(&a, 400, "invalid-parameter", "from");
	answer_free(&a);
	catalog_free(b);
	free_default_catalog();
}

/* What no replica can ever hold is the caller's mistake (400, with the
 * form a revision has); a digest not held is a 409; a near miss of a held
 * one gets the house's did-you-mean either way. */
Test(revision, malformed_is_400_and_near_misses_suggest)
{
	struct catalog *b;
	struct revision revs[2];
	struct answer a;
	char uri[256], near[64], want[256];
	const char *malformed[] = {"latest", "c1c4b75bae992a3e", "fnv1a64:C1C4B75BAE992A3E", "fnv1a64:c1c4",
				   "fnv1a64:c1c4b75bae992a3e0"};

	load_default_catalog();
	b = edited("\"sm_count\": 148", "\"sm_count\": 150");
	revs[0] = (struct revision){b, NULL, NULL};
	revs[1] = (struct revision){test_catalog, NULL, NULL};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		snprintf(uri, sizeof(uri), "/v1/splits?target=b200&model=qwen3-8b&revision=%s", malformed[i]);
		a = ask(revs, 2, "GET", uri, NULL, NULL);
		assert_problem(&a, 400, "invalid-parameter", "revision");
		cr_assert_not_null(strstr(str(a.json, "detail"), "\"fnv1a64:\" and 16 lowercase hex digits"),
				   "%s", a.body);
		answer_free(&a);
	}
	a = ask(revs, 2, "GET", "/v1/splits?target=b200&model=qwen3-8b&revision=latest", NULL, NULL);
	cr_assert_null(cJSON_GetObjectItem(a.json, "suggestion"), "latest is near nothing: %s", a.body);
	cr_assert_not_null(strstr(str(a.json, "detail"), b->digest), "names the current one: %s", a.body);
	answer_free(&a);
	/* truncated by one digit: 400, and the held one it was cut from */
	snprintf(near, sizeof(near), "%.*s", (int)strlen(test_catalog->digest) - 1, test_catalog->digest);
	snprintf(uri, sizeof(uri), "/v1/matrix?revision=%s", near);
	a = ask(revs, 2, "GET", uri, NULL, NULL);
	assert_problem(&a, 400, "invalid-parameter", "revision");
	cr_assert_str_eq(str(a.json, "suggestion"), test_catalog->digest);
	answer_free(&a);
	/* well formed, one digit off a held one: 409 with the did-you-mean */
	snprintf(near, sizeof(near), "%s", test_catalog->digest);
	near[strlen(near) - 1] = near[strlen(near) - 1] == '0' ? '1' : '0';
	snprintf(uri, sizeof(uri), "/v1/splits?target=b200&model=qwen3-8b&revision=%s", near);
	a = ask(revs, 2, "GET", uri, NULL, NULL);
	assert_problem(&a, 409, "revision-unavailable", NULL);
	snprintf(want, sizeof(want), "did you mean \"%s\"?", test_catalog->digest);
	cr_assert_not_null(strstr(str(a.json, "detail"), want), "%s", a.body);
	answer_free(&a);
	/* a diff with both sides missing names both */
	a = ask(revs, 2, "GET", "/v1/diff?from=fnv1a64:0000000000000000&to=fnv1a64:1111111111111111", NULL, NULL);
	assert_problem(&a, 409, "revision-unavailable", NULL);
	cr_assert_str_eq(str(a.json, "detail"), "this replica holds neither from \"fnv1a64:0000000000000000\" "
						 "nor to \"fnv1a64:1111111111111111\" (held: GET /v1/revisions)");
	answer_free(&a);
	/* one side missing names that side */
	snprintf(uri, sizeof(uri), "/v1/diff?from=%s&to=fnv1a64:1111111111111111", test_catalog->digest);
	a = ask(revs, 2, "GET", uri, NULL, NULL);
	assert_problem(&a, 409, "revision-unavailable", NULL);
	cr_assert_not_null(strstr(str(a.json, "detail"), "to \"fnv1a64:1111111111111111\""), "%s", a.body);
	answer_free(&a);
	catalog_free(b);
	free_default_catalog();
}

Test(revision, candidate_diff_refuses_as_a_load_does)
{
	static const char bad[] = "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}";
	struct revision revs[1];
	struct answer a;
	char err[512];

	load_default_catalog();
	revs[0] = (struct revision){test_catalog, NULL, NULL};
	cr_assert_null(catalog_load(bad, strlen(bad), err, sizeof(err)));
	a = ask(revs, 1, "POST", "/v1/catalog/diff", bad, NULL);
	assert_problem(&a, 400, "invalid-catalog", NULL);
	cr_assert_str_eq(str(a.json, "detail"), err);
	answer_free(&a);
	a = ask(revs, 1, "POST", "/v1/catalog/diff", "{", NULL);
	assert_problem(&a, 400, "invalid-catalog", NULL);
	answer_free(&a);
	a = ask(revs, 1, "POST", "/v1/catalog/diff?max_batch_size=16&bogus=1", embedded_catalog_json, NULL);
	assert_problem(&a, 400, "unknown-parameter", "bogus");
	answer_free(&a);
	a = ask(revs, 1, "GET", "/v1/diff?max_batch_size=16", NULL, NULL);
	cr_assert_eq(a.status, 200, "with one revision held the diff is of it with itself");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a.json, "cells")), 0);
	answer_free(&a);
	free_default_catalog();
}

Test(revision, if_match_through_the_router)
{
	struct revision revs[1];
	struct answer a, b;

	load_default_catalog();
	revs[0] = (struct revision){test_catalog, NULL, NULL};
	a = ask(revs, 1, "GET", "/v1/revisions", NULL, NULL);
	cr_assert_eq(a.status, 200);
	b = ask(revs, 1, "GET", "/v1/revisions", NULL, a.etag);
	cr_assert_eq(b.status, 200);
	answer_free(&b);
	b = ask(revs, 1, "HEAD", "/v1/revisions", NULL, "\"stale\"");
	assert_problem(&b, 412, "precondition-failed", NULL);
	cr_assert_str_eq(b.etag, "");
	answer_free(&b);
	/* POST /v1/splits sends no ETag: If-Match does not apply */
	b = ask(revs, 1, "POST", "/v1/splits", "{\"target\":\"b200\",\"model\":\"qwen3-8b\"}", "\"stale\"");
	cr_assert_eq(b.status, 200);
	answer_free(&b);
	answer_free(&a);
	free_default_catalog();
}

/* ------------------------------------------------------------ every field */

/* Another value of field f (now: the entry's, NULL when it lacks it) that
 * the loader takes, chosen by the row's type alone: a row added to the
 * schema table is swept with no word here. */
static cJSON *other_value(const struct catalog_field *f, const cJSON *now)
{
	char upper[CATALOG_MAX_NAME + 1];
	cJSON *v;

	switch (f->type) {
	case CATALOG_FIELD_NAME:
		/* a change of case: the same entry (names match case aside) */
		snprintf(upper, sizeof(upper), "%s", now->valuestring);
		for (char *p = upper; *p != '\0'; p++) {
			*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		}
		return cJSON_CreateString(upper);
	case CATALOG_FIELD_ALIASES:
		v = now != NULL ? cJSON_Duplicate(now, true) : cJSON_CreateArray();
		cJSON_AddItemToArray(v, cJSON_CreateString("zz-sweep"));
		return v;
	case CATALOG_FIELD_U32:
		/* twice a required count (a kv head count that divided still
		 * does); an optional one 1 (which divides anything), or 2 */
		if (f->required) {
			return cJSON_CreateNumber(now->valuedouble * 2);
		}
		return cJSON_CreateNumber(now != NULL && now->valuedouble == 1 ? 2 : 1);
	case CATALOG_FIELD_POLICY:
		return cJSON_CreateString(strcmp(now->valuestring, "auto") == 0 ? "legacy" : "auto");
	case CATALOG_FIELD_NOTES:
		return cJSON_CreateString(now != NULL ? "" : "added by the sweep");
	case CATALOG_FIELD_CONSTANT:
		/* twice the default: within the bound for both constants */
		return cJSON_CreateNumber(f->absent * 2.0);
	}
	return NULL;
}

/* The embedded catalog with field f of the first entry of a kind changed. */
static struct catalog *with_field_changed(enum catalog_kind kind, const struct catalog_field *f)
{
	cJSON *doc = cJSON_ParseWithLength(embedded_catalog_json, embedded_catalog_json_len);
	cJSON *first = cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(doc, kind == CATALOG_TARGETS ? "targets" : "models"), 0);
	cJSON *v = other_value(f, cJSON_GetObjectItemCaseSensitive(first, f->key));
	char *text, err[512];
	struct catalog *cat;

	cr_assert_not_null(v, "field %s", f->key);
	cJSON_DeleteItemFromObjectCaseSensitive(first, f->key);
	cJSON_AddItemToObject(first, f->key, v);
	text = cJSON_PrintUnformatted(doc);
	cat = catalog_load(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(cat, "field %s: %s", f->key, err);
	free(text);
	cJSON_Delete(doc);
	return cat;
}

Test(diff, a_change_of_any_field_of_the_schema_is_listed)
{
	static const enum catalog_kind kinds[] = {CATALOG_TARGETS, CATALOG_MODELS};
	size_t swept = 0;

	load_default_catalog();
	cr_assert(!diff_any_change(test_catalog, test_catalog, (struct decide_shape){16, 1, 16},
				   (struct slice){NULL, 0}));
	for (size_t k = 0; k < 2; k++) {
		size_t n;
		const struct catalog_field *fields = catalog_fields(kinds[k], &n);

		for (size_t i = 0; i < n; i++) {
			struct catalog *b = with_field_changed(kinds[k], &fields[i]);
			cJSON *j = diff_json(test_catalog, b, 16);
			cJSON *changed = cJSON_GetObjectItem(
				cJSON_GetObjectItem(j, kinds[k] == CATALOG_TARGETS ? "targets" : "models"),
				"changed");
			cJSON *only = cJSON_GetObjectItem(cJSON_GetArrayItem(changed, 0), "fields");

			cr_assert_neq(strcmp(b->digest, test_catalog->digest), 0, "%s", fields[i].key);
			cr_assert_eq(cJSON_GetArraySize(changed), 1, "field %s", fields[i].key);
			cr_assert_eq(cJSON_GetArraySize(only), 1, "field %s", fields[i].key);
			cr_assert_str_eq(
				cJSON_GetObjectItem(cJSON_GetArrayItem(only, 0), "field")->valuestring,
				fields[i].key);
			cr_assert(diff_any_change(test_catalog, b, (struct decide_shape){16, 1, 16},
						  (struct slice){NULL, 0}),
				  "--diff exits 1 for a change of %s", fields[i].key);
			cJSON_Delete(j);
			catalog_free(b);
			swept++;
		}
	}
	cr_assert_geq(swept, 11, "every row of both kinds");
	free_default_catalog();
}

/* The embedded catalog with a top-level member set to `value`. */
static struct catalog *with_top(const char *key, double value)
{
	cJSON *doc = cJSON_ParseWithLength(embedded_catalog_json, embedded_catalog_json_len);
	char *text, err[512];
	struct catalog *cat;

	cJSON_AddItemToObject(doc, key, cJSON_CreateNumber(value));
	text = cJSON_PrintUnformatted(doc);
	cat = catalog_load(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(cat, "%s = %g: %s", key, value, err);
	free(text);
	cJSON_Delete(doc);
	return cat;
}

/* The rule's constants are rows of the table too (catalog_top_fields): a
 * change of either is listed under "constants", with the values the rule
 * used, moves the digest and makes --diff exit 1; the seed's value stated
 * is no change at all (the same digest, no "constants" member, exit 0). */
Test(diff, a_change_of_either_constant_is_listed_and_the_default_stated_is_none)
{
	size_t n;
	const struct catalog_field *top = catalog_top_fields(&n);
	const struct decide_shape shape = {16, 1, 16};

	load_default_catalog();
	cr_assert_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		struct catalog *same = with_top(top[i].key, top[i].absent);
		struct catalog *b = with_top(top[i].key, top[i].absent * 2.0);
		cJSON *j = diff_json(test_catalog, same, 16), *list, *row;

		cr_assert_str_eq(same->digest, test_catalog->digest, "%s stated", top[i].key);
		cr_assert_null(cJSON_GetObjectItem(j, "constants"), "%s stated", top[i].key);
		cr_assert_not(diff_any_change(test_catalog, same, shape, (struct slice){NULL, 0}));
		cJSON_Delete(j);

		j = diff_json(test_catalog, b, 16);
		list = cJSON_GetObjectItem(j, "constants");
		row = cJSON_GetArrayItem(list, 0);
		cr_assert_str_neq(b->digest, test_catalog->digest, "%s", top[i].key);
		cr_assert_eq(cJSON_GetArraySize(list), 1, "%s", top[i].key);
		cr_assert_str_eq(cJSON_GetObjectItem(row, "field")->valuestring, top[i].key);
		cr_assert_eq(cJSON_GetObjectItem(row, "from")->valuedouble, top[i].absent);
		cr_assert_eq(cJSON_GetObjectItem(row, "to")->valuedouble, top[i].absent * 2.0);
		cr_assert(diff_any_change(test_catalog, b, shape, (struct slice){NULL, 0}), "%s",
			  top[i].key);
		cJSON_Delete(j);
		catalog_free(same);
		catalog_free(b);
	}
	free_default_catalog();
}

/* ------------------------------------------------------ named catalogs */

/* Two releases served by name: "today" (the embedded catalog, the
 * default) and "legacy" (Hopper declared legacy, as before #928). */
struct two_releases {
	struct catalog *today, *legacy;
	struct revision today_rev, legacy_rev;
	struct revision_named named[2];
};

static void two_releases_init(struct two_releases *t)
{
	t->today = edited("\"sm_count\": 148", "\"sm_count\": 148");
	t->legacy = edited("\"attn_decode_splitk\": \"auto\"", "\"attn_decode_splitk\": \"legacy\"");
	catalog_set_name(t->today, "today", 5, true);
	catalog_set_name(t->legacy, "legacy", 6, false);
	t->today_rev = (struct revision){t->today, NULL, "today.json"};
	t->legacy_rev = (struct revision){t->legacy, NULL, "legacy.json"};
	t->named[0] = (struct revision_named){"today", &t->today_rev, 1, true};
	t->named[1] = (struct revision_named){"legacy", &t->legacy_rev, 1, false};
}

static void two_releases_cleanup(struct two_releases *t)
{
	catalog_free(t->today);
	catalog_free(t->legacy);
}

/* A request to the two releases; `alone` (non-NULL): to that catalog
 * served alone instead, as a one-catalog server would answer. */
static struct answer ask_named(const struct two_releases *t, const struct revision *alone,
			       const char *method, const char *uri, const char *body)
{
	struct api_context ctx = {.catalog = t->today, .revisions = &t->today_rev,
				  .num_revisions = 1, .catalogs = t->named, .num_catalogs = 2,
				  .version = "test", .build = "test"};
	struct api_request req = {.method = method, .uri = uri, .uri_len = strlen(uri),
				  .content_type = "application/json",
				  .body = body ? body : "", .body_len = body ? strlen(body) : 0};

	if (alone != NULL) {
		ctx = (struct api_context){.catalog = alone->catalog, .revisions = alone,
					   .num_revisions = 1, .version = "test", .build = "test"};
	}
	return call_ctx(&ctx, &req);
}

/* catalog=NAME answers what that catalog answers when served alone, on
 * every route that reads a catalog; without it, the default's answer. */
Test(named, a_selected_catalog_answers_as_if_served_alone)
{
	struct two_releases t;
	char uri[256], body[512];
	const char *asks[][3] = {
		{"GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16", NULL},
		{"GET", "/v1/matrix?max_batch_size=16", NULL},
		{"GET", "/v1/targets", NULL},
		{"GET", "/v1/targets/h100", NULL},
		{"GET", "/v1/models", NULL},
		{"GET", "/v1/catalog", NULL},
		{"GET", "/v1/revisions", NULL},
		{"POST", "/v1/splits", "{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16%s}"},
		{"POST", "/v1/splits", "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16}]%s}"},
		{"POST", "/ofrep/v1/evaluate/flags/num_splits", "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16%s}}"},
		{"POST", "/ofrep/v1/evaluate/flags", "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16%s}}"},
	};

	two_releases_init(&t);
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		const struct revision *sides[] = {&t.legacy_rev, &t.today_rev};
		const char *names[] = {"legacy", "today"};

		for (size_t s = 0; s < 2; s++) {
			struct answer alone, selected, plain;
			char extra[64];

			snprintf(body, sizeof(body), asks[i][2] ? asks[i][2] : "", "");
			alone = ask_named(&t, sides[s], asks[i][0], asks[i][1], asks[i][2] ? body : NULL);
			plain = ask_named(&t, NULL, asks[i][0], asks[i][1], asks[i][2] ? body : NULL);
			snprintf(extra, sizeof(extra), ",\"catalog\":\"%s\"", names[s]);
			snprintf(body, sizeof(body), asks[i][2] ? asks[i][2] : "", extra);
			snprintf(uri, sizeof(uri), "%s%scatalog=%s", asks[i][1],
				 strchr(asks[i][1], '?') ? "&" : "?", names[s]);
			selected = ask_named(&t, NULL, asks[i][0], asks[i][2] ? asks[i][1] : uri,
					     asks[i][2] ? body : NULL);
			cr_assert_eq(alone.status, 200, "%s %s: %s", asks[i][0], asks[i][1], alone.body);
			if (strcmp(asks[i][1], "/ofrep/v1/evaluate/flags") == 0) {
				/* a context that names a catalog is told that catalog's
				 * stream, and is otherwise the same */
				char stream[64], *at;

				snprintf(stream, sizeof(stream), "/v1/events?catalog=%s", names[s]);
				at = strstr(selected.body, stream);
				cr_assert_not_null(at, "%s", selected.body);
				memmove(at + strlen("/v1/events"), at + strlen(stream),
					strlen(at + strlen(stream)) + 1);
			}
			cr_assert_str_eq(selected.body, alone.body, "%s %s catalog=%s", asks[i][0],
					 asks[i][1], names[s]);
			/* without catalog: the default's (today's) answer */
			if (s == 1) {
				cr_assert_str_eq(plain.body, alone.body, "%s %s", asks[i][0], asks[i][1]);
			} else {
				cr_assert_str_neq(plain.body, alone.body, "%s %s", asks[i][0], asks[i][1]);
			}
			answer_free(&alone);
			answer_free(&selected);
			answer_free(&plain);
		}
	}
	two_releases_cleanup(&t);
}

Test(named, a_batch_mixes_catalogs_query_by_query)
{
	struct two_releases t;
	struct answer a;
	const cJSON *results;

	two_releases_init(&t);
	a = ask_named(&t, NULL, "POST", "/v1/splits",
		      "{\"catalog\":\"legacy\",\"queries\":["
		      "{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
		      "{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16,\"catalog\":\"today\"},"
		      "{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"catalog\":\"todya\"}]}");
	cr_assert_eq(a.status, 200, "%s", a.body);
	results = cJSON_GetObjectItem(a.json, "results");
	cr_assert_str_eq(str(cJSON_GetArrayItem(results, 0), "catalog_name"), "legacy");
	cr_assert_str_eq(str(cJSON_GetArrayItem(results, 0), "catalog"), t.legacy->digest);
	cr_assert_str_eq(str(cJSON_GetArrayItem(results, 1), "catalog_name"), "today");
	cr_assert_str_eq(str(cJSON_GetArrayItem(results, 1), "catalog"), t.today->digest);
	cr_assert_neq(num(cJSON_GetArrayItem(results, 0), "num_splits"),
		      num(cJSON_GetArrayItem(results, 1), "num_splits"));
	cr_assert_str_eq(str(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 2), "error"), "type"),
			 "/problems/unknown-catalog");
	cr_assert_str_eq(str(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 2), "error"), "suggestion"),
			 "today");
	cr_assert_eq(num(a.json, "failures"), 1);
	cr_assert_str_eq(str(a.json, "catalog"), t.legacy->digest, "the batch's own catalog");
	answer_free(&a);
	two_releases_cleanup(&t);
}

Test(named, unknown_names_and_other_catalogs_revisions_are_refused)
{
	struct two_releases t;
	struct answer a;
	char uri[256];

	two_releases_init(&t);
	a = ask_named(&t, NULL, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&catalog=legacyy", NULL);
	assert_problem(&a, 404, "unknown-catalog", "catalog");
	cr_assert_str_eq(str(a.json, "suggestion"), "legacy");
	answer_free(&a);
	a = ask_named(&t, NULL, "GET", "/v1/targets?catalog=zzzzzzzz", NULL);
	assert_problem(&a, 404, "unknown-catalog", "catalog");
	cr_assert_null(cJSON_GetObjectItem(a.json, "suggestion"));
	answer_free(&a);
	/* legacy's revision with no catalog (the default, today): never today's answer */
	snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=qwen3.8-27b&revision=%s",
		 t.legacy->digest);
	a = ask_named(&t, NULL, "GET", uri, NULL);
	assert_problem(&a, 409, "catalog-mismatch", "revision");
	cr_assert_str_eq(str(a.json, "suggestion"), "legacy");
	answer_free(&a);
	snprintf(uri, sizeof(uri), "/v1/splits?target=h100&model=qwen3.8-27b&catalog=legacy&revision=%s",
		 t.legacy->digest);
	a = ask_named(&t, NULL, "GET", uri, NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "catalog_name"), "legacy");
	answer_free(&a);
	a = ask_named(&t, NULL, "POST", "/v1/splits", "{\"catalog\":7,\"queries\":[{}]}");
	assert_problem(&a, 400, "invalid-parameter", "catalog");
	answer_free(&a);
	two_releases_cleanup(&t);
}

Test(named, catalogs_lists_each_and_the_default)
{
	struct two_releases t;
	struct answer a;
	const cJSON *list;

	two_releases_init(&t);
	a = ask_named(&t, NULL, "GET", "/v1/catalogs", NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_str_eq(str(a.json, "default"), "today");
	list = cJSON_GetObjectItem(a.json, "catalogs");
	cr_assert_eq(cJSON_GetArraySize(list), 2);
	cr_assert_str_eq(str(cJSON_GetArrayItem(list, 1), "name"), "legacy");
	cr_assert_str_eq(str(cJSON_GetArrayItem(list, 1), "revision"), t.legacy->digest);
	cr_assert_str_eq(str(cJSON_GetArrayItem(list, 1), "source"), "legacy.json");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "default")));
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "default")));
	cr_assert_eq(num(cJSON_GetArrayItem(list, 0), "targets"), (double)t.today->num_targets);
	answer_free(&a);
	two_releases_cleanup(&t);
}

/* from=NAME&to=NAME is diff.c's diff of the two current catalogs, and a
 * revision of either catalog stands for it too. */
Test(named, the_upgrade_diff_between_names_is_the_catalogs_diff)
{
	struct two_releases t;
	struct answer a, b;
	struct jsonw w;
	struct query q = {0};
	char uri[256];

	two_releases_init(&t);
	q.max_batch_size = (struct query_u32){true, 16};
	jsonw_init(&w, 65536);
	diff_write(&w, t.legacy, t.today, decide_shape_of(&q), (struct slice){NULL, 0});
	cr_assert(!w.failed);
	a = ask_named(&t, NULL, "GET", "/v1/diff?from=legacy&to=today&max_batch_size=16", NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(strlen(a.body), w.len);
	cr_assert(memcmp(a.body, w.buf, w.len) == 0, "%s", a.body);
	snprintf(uri, sizeof(uri), "/v1/diff?from=%s&to=today&max_batch_size=16", t.legacy->digest);
	b = ask_named(&t, NULL, "GET", uri, NULL);
	cr_assert_str_eq(b.body, a.body);
	answer_free(&a);
	answer_free(&b);
	a = ask_named(&t, NULL, "GET", "/v1/diff?from=legac&to=today", NULL);
	assert_problem(&a, 404, "unknown-catalog", "from");
	cr_assert_str_eq(str(a.json, "suggestion"), "legacy");
	answer_free(&a);
	/* every catalog has a stream of its own, and all of them one */
	a = ask_named(&t, NULL, "GET", "/v1/events?catalog=legacy", NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	answer_free(&a);
	a = ask_named(&t, NULL, "GET", "/v1/events?catalog=*", NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	answer_free(&a);
	a = ask_named(&t, NULL, "GET", "/v1/events?catalog=legac", NULL);
	assert_problem(&a, 404, "unknown-catalog", "catalog");
	cr_assert_str_eq(str(a.json, "suggestion"), "legacy");
	answer_free(&a);
	a = ask_named(&t, NULL, "GET", "/v1/events?catalog=today", NULL);
	cr_assert_eq(a.status, 200, "%s", a.body);
	answer_free(&a);
	jsonw_cleanup(&w);
	two_releases_cleanup(&t);
}
