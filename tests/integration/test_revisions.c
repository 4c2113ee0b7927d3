/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Revisions against the real daemon and SIGHUP reloads: pinned answers
 * byte-equal to those recorded while their revision was current (GET,
 * POST single, POST batch, OFREP), eviction past --revisions, If-Match,
 * the diff checked cell by cell against /v1/matrix taken while each
 * revision was current, and `splitkd --diff`'s exit codes.
 */
#include "pins.h"

static struct daemon d;

static void stop(void)
{
	daemon_stop(&d);
}

/* The shared helpers (pins.h) on this suite's daemon. */
static void reload_to(const char *path, const cJSON *c, char *out, size_t cap)
{
	reload_on(&d, path, c, out, cap);
}

static char *body_of(const char *method, const char *path, const char *body, long *status)
{
	return body_on(&d, method, path, body, status);
}

static char *ask(const struct pinnable *p, const char *rev, long *status)
{
	return ask_on(&d, p, rev, status);
}

Test(revisions, pinned_answers_are_the_bytes_answered_while_current, .fini = stop, .timeout = 60)
{
	const char *path = "/tmp/splitkd-test-rev-pin.json";
	const char *args[] = {"--catalog", path, "--access-log", "off", NULL};
	struct daemon boot;
	cJSON *c;
	char r0[64], r1[64], *recorded[NUM_PINNABLE];
	long status;

	daemon_start(&boot, (const char *[]){"--access-log", "off", NULL});
	d = boot;
	c = base_catalog(&d);
	daemon_finish(&d);
	write_json(path, c);
	daemon_start(&d, args);
	current_of(&d, r0, sizeof(r0));
	for (size_t i = 0; i < NUM_PINNABLE; i++) {
		recorded[i] = ask(&pinnables[i], NULL, &status);
		cr_assert_eq(status, 200, "%s %s: %s", pinnables[i].method, pinnables[i].path, recorded[i]);
	}
	/* a policy flip and an SM count change: every answer above moves */
	cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "gb10"), "attn_decode_splitk",
					       cJSON_CreateString("auto"));
	cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "b200"), "sm_count",
					       cJSON_CreateNumber(160));
	reload_to(path, c, r1, sizeof(r1));
	cr_assert_str_neq(r0, r1);
	for (size_t i = 0; i < NUM_PINNABLE; i++) {
		char *now = ask(&pinnables[i], NULL, &status), *old = ask(&pinnables[i], r0, &status);
		char *pinned_new = ask(&pinnables[i], r1, &status);

		cr_assert_eq(status, 200);
		cr_assert_str_neq(now, recorded[i], "%s %s did not change", pinnables[i].method,
				  pinnables[i].path);
		cr_assert_str_eq(old, recorded[i], "%s %s pinned to %s:\n%s\nwhile current:\n%s",
				 pinnables[i].method, pinnables[i].path, r0, old, recorded[i]);
		cr_assert_str_eq(pinned_new, now, "pinned to the current revision is the unpinned answer");
		free(now);
		free(old);
		free(pinned_new);
		free(recorded[i]);
	}
	cJSON_Delete(c);
	unlink(path);
	daemon_finish(&d);
}

/* The problem for a revision not held: 409 with current and held. */
static void expect_unavailable(const char *body, long status, const char *current)
{
	cJSON *j = cJSON_Parse(body);

	cr_assert_eq(status, 409, "%s", body);
	cr_assert_not_null(j);
	cr_assert_str_eq(jstr(j, "type"), "/problems/revision-unavailable");
	cr_assert_str_eq(jstr(j, "current"), current);
	cr_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "held")));
	cJSON_Delete(j);
}

Test(revisions, eviction_after_n_plus_one_reloads, .fini = stop, .timeout = 60)
{
	const char *path = "/tmp/splitkd-test-rev-evict.json";
	const char *args[] = {"--catalog", path, "--revisions", "3", "--access-log", "off", NULL};
	struct daemon boot;
	cJSON *c;
	char revs[5][64];
	struct reply r;
	long status;

	daemon_start(&boot, (const char *[]){"--access-log", "off", NULL});
	d = boot;
	c = base_catalog(&d);
	daemon_finish(&d);
	write_json(path, c);
	daemon_start(&d, args);
	current_of(&d, revs[0], sizeof(revs[0]));
	for (int i = 1; i <= 4; i++) { /* N + 1 = 4 reloads, each a new SM count */
		cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "a100"), "sm_count",
						       cJSON_CreateNumber(100 + i));
		reload_to(path, c, revs[i], sizeof(revs[i]));
	}
	r = http(&d, "GET", "/v1/revisions", NULL, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(jstr(r.json, "current"), revs[4]);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "revisions")), 3,
		     "%s", r.body);
	for (int i = 0; i < 3; i++) {
		const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "revisions"), i);

		cr_assert_str_eq(jstr(e, "revision"), revs[4 - i], "newest first");
		cr_assert_str_eq(jstr(e, "source"), path);
		cr_assert_eq(strlen(jstr(e, "loaded_at")), strlen("2026-01-01T00:00:00Z"));
	}
	reply_free(&r);
	for (int i = 0; i <= 4; i++) {
		char q[512], want[512];
		char *body;

		snprintf(q, sizeof(q), "/v1/splits?target=a100&model=qwen3-8b&revision=%s", revs[i]);
		body = body_of("GET", q, NULL, &status);
		if (i < 2) { /* the evicted two */
			expect_unavailable(body, status, revs[4]);
		} else {
			snprintf(want, sizeof(want), "\"sm_count\":%d", 100 + i);
			cr_assert_eq(status, 200, "%s: %s", revs[i], body);
			cr_assert(strstr(body, want) != NULL, "%s answered %s", revs[i], body);
			snprintf(want, sizeof(want), "\"catalog\":\"%s\"", revs[i]);
			cr_assert(strstr(body, want) != NULL, "%s", body);
		}
		free(body);
	}
	/* a batch and an OFREP context pinned to an evicted one alike */
	{
		char b[1024];
		char *body;

		snprintf(b, sizeof(b), "{\"revision\":\"%s\",\"queries\":[{\"target\":\"a100\",\"model\":\"qwen3-8b\"}]}", revs[0]);
		body = body_of("POST", "/v1/splits", b, &status);
		expect_unavailable(body, status, revs[4]);
		free(body);
		snprintf(b, sizeof(b), "{\"context\":{\"revision\":\"%s\",\"target\":\"a100\",\"model\":\"qwen3-8b\"}}", revs[1]);
		body = body_of("POST", "/ofrep/v1/evaluate/flags/num_splits", b, &status);
		cr_assert_eq(status, 400, "%s", body);
		cr_assert(strstr(body, "\"errorCode\":\"GENERAL\"") != NULL, "%s", body);
		cr_assert(strstr(body, "/problems/revision-unavailable") != NULL, "%s", body);
		cr_assert(strstr(body, revs[1]) != NULL, "the error names the revision: %s", body);
		free(body);
	}
	cJSON_Delete(c);
	unlink(path);
	daemon_finish(&d);
}

static long status_with(const char *method, const char *path, const char *body, const char *if_match)
{
	char header[160];
	const char *h[] = {header, "Content-Type: application/json", NULL};
	struct reply r;
	long status;

	snprintf(header, sizeof(header), "If-Match: %s", if_match);
	r = http(&d, method, path, h, body);
	status = r.status;
	if (status == 412 && strcmp(method, "HEAD") != 0) {
		expect_problem(&r, 412, "precondition-failed");
	}
	if (status == 412) {
		cr_assert_str_eq(r.etag, "", "a 412 carries no tag");
	}
	reply_free(&r);
	return status;
}

Test(revisions, if_match_current_star_stale_and_lists, .fini = stop, .timeout = 60)
{
	const char *path = "/tmp/splitkd-test-rev-ifmatch.json";
	const char *args[] = {"--catalog", path, "--access-log", "off", NULL};
	const char *routes[][3] = {
		{"GET", "/v1/splits?target=b200&model=qwen3-8b", NULL},
		{"HEAD", "/v1/splits?target=b200&model=qwen3-8b", NULL},
		{"GET", "/v1/matrix", NULL},
		{"GET", "/v1/targets/b200", NULL},
		{"GET", "/v1/revisions", NULL},
		{"POST", "/ofrep/v1/evaluate/flags", "{\"context\":{\"target\":\"b200\",\"model\":\"qwen3-8b\"}}"},
	};
	struct daemon boot;
	cJSON *c;
	char stale[8][80], list[1024], rev[64];

	daemon_start(&boot, (const char *[]){"--access-log", "off", NULL});
	d = boot;
	c = base_catalog(&d);
	daemon_finish(&d);
	write_json(path, c);
	daemon_start(&d, args);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const char *json[] = {"Content-Type: application/json", NULL};
		struct reply r = http(&d, routes[i][0], routes[i][1], json, routes[i][2]);

		cr_assert_eq(r.status, 200);
		cr_assert_neq(r.etag[0], '\0', "%s %s sends no ETag", routes[i][0], routes[i][1]);
		snprintf(stale[i], sizeof(stale[i]), "%s", r.etag);
		reply_free(&r);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], stale[i]), 200);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], "*"), 200);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], "\"nope\""), 412,
			     "%s %s", routes[i][0], routes[i][1]);
		/* a weak tag never passes If-Match (strong comparison) */
		snprintf(list, sizeof(list), "W/%s", stale[i]);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], list), 412);
		snprintf(list, sizeof(list), "\"a\", %s , \"b\"", stale[i]);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], list), 200);
	}
	cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "b200"), "sm_count",
					       cJSON_CreateNumber(150));
	reload_to(path, c, rev, sizeof(rev));
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		/* the tag read before the reload is stale now, alone or in a list */
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], stale[i]), 412,
			     "%s %s", routes[i][0], routes[i][1]);
		snprintf(list, sizeof(list), "\"a\", %s", stale[i]);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], list), 412);
		cr_assert_eq(status_with(routes[i][0], routes[i][1], routes[i][2], "*"), 200);
	}
	/* a 404 ignores If-Match (RFC 9110 13.2.1: only a 2xx is conditioned) */
	cr_assert_eq(status_with("GET", "/v1/targets/nope", NULL, "\"x\""), 404);
	cJSON_Delete(c);
	unlink(path);
	daemon_finish(&d);
}

/* ------------------------------------------------ the diff, independently */

/* The four values a cell plans with, as JSON text, from a matrix cell or a
 * diff side: compared as text so that a null workspace_bytes counts too. */
static char *plan_of(const cJSON *cell)
{
	static const char *const keys[] = {"policy", "num_splits", "workspace_slots", "workspace_bytes"};
	cJSON *o = cJSON_CreateObject();
	char *text;

	for (int i = 0; i < 4; i++) {
		cJSON_AddItemToObject(o, keys[i],
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cell, keys[i]), true));
	}
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

static const cJSON *matrix_cell(const cJSON *matrix, const char *t, const char *m)
{
	const cJSON *cell;

	cJSON_ArrayForEach(cell, cJSON_GetObjectItemCaseSensitive(matrix, "cells")) {
		if (strcmp(jstr(cell, "target"), t) == 0 && strcmp(jstr(cell, "model"), m) == 0) {
			return cell;
		}
	}
	return NULL;
}

static const cJSON *diff_cell(const cJSON *diff, const char *t, const char *m)
{
	return matrix_cell(diff, t, m); /* the same keys */
}

/* Every (target, model) either matrix has: the diff lists exactly those
 * whose plan differs or that one side lacks, with each side's values, and
 * counts the rest as unchanged. */
static void check_diff(const cJSON *before, const cJSON *after, const cJSON *diff)
{
	const cJSON *sides[2] = {before, after}, *cell;
	int listed = 0, unchanged = 0;

	for (int s = 0; s < 2; s++) {
		cJSON_ArrayForEach(cell, cJSON_GetObjectItemCaseSensitive(sides[s], "cells")) {
			const char *t = jstr(cell, "target"), *m = jstr(cell, "model");
			const cJSON *a = matrix_cell(before, t, m), *b = matrix_cell(after, t, m);
			const cJSON *dc = diff_cell(diff, t, m);

			if (s == 1 && a != NULL) {
				continue; /* both sides: seen from the first */
			}
			if (a != NULL && b != NULL) {
				char *pa = plan_of(a), *pb = plan_of(b);
				bool same = strcmp(pa, pb) == 0;

				if (same) {
					unchanged++;
					cr_assert_null(dc, "%s x %s is unchanged but listed", t, m);
				} else {
					char *df, *dt;

					cr_assert_not_null(dc, "%s x %s changed (%s -> %s) but is not listed", t, m, pa, pb);
					df = plan_of(cJSON_GetObjectItemCaseSensitive(dc, "from"));
					dt = plan_of(cJSON_GetObjectItemCaseSensitive(dc, "to"));
					cr_assert_str_eq(df, pa, "%s x %s from", t, m);
					cr_assert_str_eq(dt, pb, "%s x %s to", t, m);
					free(df);
					free(dt);
					listed++;
				}
				free(pa);
				free(pb);
			} else {
				cr_assert_not_null(dc, "%s x %s is on one side only but not listed", t, m);
				cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(dc, a ? "to" : "from")),
					  "%s x %s: the missing side is null", t, m);
				listed++;
			}
		}
	}
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(diff, "cells")), listed,
		     "the diff lists cells the matrices do not explain");
	cr_assert_eq((int)jnum(diff, "unchanged"), unchanged);
}

static cJSON *get_json(const char *path)
{
	struct reply r = http(&d, "GET", path, NULL, NULL);
	cJSON *j;

	cr_assert_eq(r.status, 200, "%s: %s", path, r.body);
	j = cJSON_Duplicate(r.json, true);
	reply_free(&r);
	return j;
}

static bool listed_in(const cJSON *diff, const char *kind, const char *how, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(diff, kind), how)) {
		const char *n = cJSON_IsString(e) ? e->valuestring : jstr(e, "name");

		if (strcmp(n, name) == 0) {
			return true;
		}
	}
	return false;
}

Test(revisions, diff_equals_the_matrices_taken_while_current, .fini = stop, .timeout = 90)
{
	const char *path = "/tmp/splitkd-test-rev-diff.json";
	const char *args[] = {"--catalog", path, "--access-log", "off", NULL};
	const char *inputs = "max_batch_size=16&num_seqs=2";
	struct daemon boot;
	cJSON *c, *matrices[4], *t;
	char revs[4][64], q[512], *candidate;
	long status;

	daemon_start(&boot, (const char *[]){"--access-log", "off", NULL});
	d = boot;
	c = base_catalog(&d);
	daemon_finish(&d);
	write_json(path, c);
	daemon_start(&d, args);
	current_of(&d, revs[0], sizeof(revs[0]));
	snprintf(q, sizeof(q), "/v1/matrix?%s", inputs);
	matrices[0] = get_json(q);
	for (int step = 1; step <= 3; step++) {
		char *after_load;

		if (step == 1) { /* a policy flip */
			cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "rtx4090"),
							       "attn_decode_splitk", cJSON_CreateString("auto"));
		} else if (step == 2) { /* an SM count change */
			cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "hopper"), "sm_count",
							       cJSON_CreateNumber(114));
		} else { /* a target added and a model removed */
			t = cJSON_Parse("{\"name\":\"b300\",\"sm_count\":160,\"attn_decode_splitk\":\"auto\"}");
			cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(c, "targets"), t);
			cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(c, "models"), 2);
		}
		/* the candidate's diff before it loads ... */
		candidate = cJSON_PrintUnformatted(c);
		snprintf(q, sizeof(q), "/v1/catalog/diff?%s", inputs);
		free(body_of("POST", q, candidate, &status)); /* warm: same answer twice */
		{
			char *before_load = body_of("POST", q, candidate, &status);

			cr_assert_eq(status, 200, "%s", before_load);
			reload_to(path, c, revs[step], sizeof(revs[step]));
			snprintf(q, sizeof(q), "/v1/matrix?%s", inputs);
			matrices[step] = get_json(q);
			/* ... is the diff of the held revisions after */
			snprintf(q, sizeof(q), "/v1/diff?from=%s&to=%s&%s", revs[step - 1], revs[step], inputs);
			after_load = body_of("GET", q, NULL, &status);
			cr_assert_eq(status, 200, "%s", after_load);
			cr_assert_str_eq(before_load, after_load);
			free(before_load);
		}
		{
			cJSON *diff = cJSON_Parse(after_load);

			cr_assert_str_eq(jstr(diff, "from"), revs[step - 1]);
			cr_assert_str_eq(jstr(diff, "to"), revs[step]);
			check_diff(matrices[step - 1], matrices[step], diff);
			cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(diff, "cells")), 0,
				     "step %d changed no decision", step);
			if (step == 1) {
				cr_assert(listed_in(diff, "targets", "changed", "rtx4090"));
			} else if (step == 2) {
				cr_assert(listed_in(diff, "targets", "changed", "hopper"));
			} else {
				cr_assert(listed_in(diff, "targets", "added", "b300"));
				cr_assert(listed_in(diff, "models", "removed", "llama-3.1-70b"));
			}
			cJSON_Delete(diff);
		}
		free(after_load);
		free(candidate);
	}
	/* the defaults: to the current, from the one before it */
	snprintf(q, sizeof(q), "/v1/diff?%s", inputs);
	{
		char *dflt = body_of("GET", q, NULL, &status), *explicit_;

		snprintf(q, sizeof(q), "/v1/diff?to=%s&from=%s&%s", revs[3], revs[2], inputs);
		explicit_ = body_of("GET", q, NULL, &status);
		cr_assert_str_eq(dflt, explicit_);
		free(dflt);
		free(explicit_);
	}
	/* across all three at once, the diff still matches the two matrices */
	snprintf(q, sizeof(q), "/v1/diff?from=%s&%s", revs[0], inputs);
	{
		cJSON *diff = get_json(q);

		check_diff(matrices[0], matrices[3], diff);
		cJSON_Delete(diff);
	}
	for (int i = 0; i < 4; i++) {
		cJSON_Delete(matrices[i]);
	}
	cJSON_Delete(c);
	unlink(path);
	daemon_finish(&d);
}

/* ------------------------------------------------------------ --diff */

static int run_diff(const char *a, const char *b, const char *extra, char *out, size_t cap)
{
	char cmd[1024];
	FILE *p;
	size_t n;
	int status;

	snprintf(cmd, sizeof(cmd), "%s --diff %s %s %s 2>&1", splitkd_bin(), a, b, extra);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	status = pclose(p);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

Test(revisions, diff_flag_exit_codes, .fini = stop, .timeout = 60)
{
	const char *a = "/tmp/splitkd-test-rev-a.json", *b = "/tmp/splitkd-test-rev-b.json";
	const char *bad = "/tmp/splitkd-test-rev-bad.json";
	static char out[1 << 20];
	cJSON *c, *j;
	FILE *f;

	daemon_start(&d, (const char *[]){"--access-log", "off", NULL});
	c = base_catalog(&d);
	daemon_finish(&d);
	write_json(a, c);
	write_json(b, c);
	cr_assert_eq(run_diff(a, b, "", out, sizeof(out)), 0, "%s", out);
	j = cJSON_Parse(out);
	cr_assert_not_null(j, "%s", out);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "cells")), 0);
	cr_assert_eq((int)jnum(j, "unchanged"), 8 * 13);
	cJSON_Delete(j);
	/* notes change no decision, but any field of an entry is a change:
	 * listed, and 1 */
	cJSON_DeleteItemFromObjectCaseSensitive(entry(c, "targets", "l40s"), "notes");
	cJSON_AddItemToObject(entry(c, "targets", "l40s"), "notes", cJSON_CreateString("edited"));
	write_json(b, c);
	cr_assert_eq(run_diff(a, b, "", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "\"field\":\"notes\"") != NULL, "%s", out);
	cr_assert(strstr(out, "\"cells\":[]") != NULL, "no decision moved: %s", out);
	cJSON_ReplaceItemInObjectCaseSensitive(entry(c, "targets", "l40s"), "attn_decode_splitk",
					       cJSON_CreateString("auto"));
	write_json(b, c);
	cr_assert_eq(run_diff(a, b, "--max-batch-size 16 --num-seqs 2", out, sizeof(out)), 1, "%s", out);
	j = cJSON_Parse(out);
	cr_assert_not_null(j, "%s", out);
	cr_assert_eq((int)jnum(j, "max_batch_size"), 16);
	cr_assert_eq((int)jnum(j, "num_seqs"), 2);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "cells")), 13);
	cJSON_Delete(j);
	/* an override pins every cell on both sides: no decision differs,
	 * though l40s is still listed changed (1) */
	cr_assert_eq(run_diff(a, b, "--override 4", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "\"cells\":[]") != NULL, "%s", out);
	f = fopen(bad, "w");
	cr_assert_not_null(f);
	fputs("{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}", f);
	fclose(f);
	cr_assert_eq(run_diff(a, bad, "", out, sizeof(out)), 2, "%s", out);
	cr_assert(strstr(out, bad) != NULL && strstr(out, "sm_count") != NULL,
		  "the error says which file and where: %s", out);
	cr_assert_eq(run_diff("/nonexistent.json", b, "", out, sizeof(out)), 2, "%s", out);
	cJSON_Delete(c);
	unlink(a);
	unlink(b);
	unlink(bad);
}
