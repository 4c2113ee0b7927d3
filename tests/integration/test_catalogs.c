/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Named catalogs against the real daemon: two engine releases served side
 * by side, the seed's declarations before #928 (every target legacy) as
 * "legacy" and today's api/catalog.json as "today". Qwen3.8-27B on an H100
 * at max_batch_size 16 is 1 split (132 slots) on the one and 11 (4,224
 * slots) on the other through GET, POST, one batch mixing both, OFREP
 * single and bulk, and /v1/matrix; /v1/diff?from=legacy&to=today lists
 * exactly the cells whose decision differs, checked against the core
 * (policy/splitk.h) called here directly.
 */
#include "harness.h"

#include <sys/stat.h>

#include "splitk.h"

static struct daemon d;

static char legacy_path[64], today_path[64];

static void stop(void)
{
	daemon_stop(&d);
	unlink(legacy_path);
	unlink(today_path);
}


/* Writes today's catalog (api/catalog.json, the file the binary embeds)
 * to today_path, and to legacy_path the same with every target declared
 * legacy: the seed's declarations before #928. */
static void write_releases(void)
{
	snprintf(legacy_path, sizeof(legacy_path), "/tmp/splitkd-test-cat-legacy-%d.json", (int)getpid());
	snprintf(today_path, sizeof(today_path), "/tmp/splitkd-test-cat-today-%d.json", (int)getpid());
	FILE *in = fopen("api/catalog.json", "rb");
	static char text[1 << 20];
	size_t n;
	cJSON *c, *t;
	char *legacy;
	FILE *out;

	cr_assert_not_null(in, "run from the repository root (api/catalog.json)");
	n = fread(text, 1, sizeof(text) - 1, in);
	fclose(in);
	text[n] = '\0';
	out = fopen(today_path, "wb");
	cr_assert_not_null(out);
	cr_assert_eq(fwrite(text, 1, n, out), n);
	fclose(out);
	c = cJSON_Parse(text);
	cr_assert_not_null(c);
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(c, "targets")) {
		cJSON_ReplaceItemInObjectCaseSensitive(t, "attn_decode_splitk", cJSON_CreateString("legacy"));
	}
	legacy = cJSON_PrintUnformatted(c);
	out = fopen(legacy_path, "wb");
	cr_assert_not_null(out);
	fputs(legacy, out);
	fclose(out);
	free(legacy);
	cJSON_Delete(c);
}

static void start_two(void)
{
	char legacy[96], today[96];
	const char *args[] = {"--catalog", legacy, "--catalog", today, "--default-catalog", "today",
			      "--access-log", "off", NULL};

	write_releases();
	snprintf(legacy, sizeof(legacy), "legacy=%s", legacy_path);
	snprintf(today, sizeof(today), "today=%s", today_path);
	daemon_start(&d, args);
}

static const char *json_ct[] = {"Content-Type: application/json", NULL};

static struct reply post(const char *path, const char *body)
{
	return http(&d, "POST", path, json_ct, body);
}

/* One decision's numbers and the catalog it names. */
static void expect_decision(const cJSON *o, const char *catalog, double splits, double slots)
{
	cr_assert_not_null(o);
	cr_assert_str_eq(jstr(o, "catalog_name"), catalog, "catalog");
	cr_assert_eq(jnum(o, "num_splits"), splits, "%s: num_splits", catalog);
	cr_assert_eq(jnum(o, "workspace_slots"), slots, "%s: workspace_slots", catalog);
}

#define Q "\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16"

Test(catalogs, two_releases_side_by_side_on_every_route, .fini = stop, .timeout = 60)
{
	static const struct {
		const char *name;
		double splits, slots;
	} releases[] = {{"legacy", 1, 132}, {"today", 11, 4224}};
	struct reply r;
	char path[256], body[512];

	start_two();
	for (size_t i = 0; i < 2; i++) {
		const char *name = releases[i].name;
		double splits = releases[i].splits, slots = releases[i].slots;

		snprintf(path, sizeof(path),
			 "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&catalog=%s", name);
		r = http(&d, "GET", path, NULL, NULL);
		cr_assert_eq(r.status, 200, "%s", r.body);
		expect_decision(r.json, name, splits, slots);
		reply_free(&r);
		snprintf(body, sizeof(body), "{" Q ",\"catalog\":\"%s\"}", name);
		r = post("/v1/splits", body);
		expect_decision(r.json, name, splits, slots);
		reply_free(&r);
		snprintf(body, sizeof(body), "{\"context\":{" Q ",\"catalog\":\"%s\"}}", name);
		r = post("/ofrep/v1/evaluate/flags/num_splits", body);
		cr_assert_eq(r.status, 200, "%s", r.body);
		cr_assert_eq(jnum(r.json, "value"), splits, "OFREP %s: %s", name, r.body);
		reply_free(&r);
		r = post("/ofrep/v1/evaluate/flags", body);
		cr_assert_eq(r.status, 200, "%s", r.body);
		{
			const cJSON *f;
			int seen = 0;

			cJSON_ArrayForEach(f, cJSON_GetObjectItem(r.json, "flags")) {
				if (strcmp(jstr(f, "key"), "num_splits") == 0) {
					cr_assert_eq(jnum(f, "value"), splits, "OFREP bulk %s", name);
					seen++;
				} else if (strcmp(jstr(f, "key"), "workspace_slots") == 0) {
					cr_assert_eq(jnum(f, "value"), slots, "OFREP bulk %s", name);
					seen++;
				}
			}
			cr_assert_eq(seen, 2, "%s", r.body);
		}
		reply_free(&r);
		snprintf(path, sizeof(path), "/v1/matrix?max_batch_size=16&catalog=%s", name);
		r = http(&d, "GET", path, NULL, NULL);
		cr_assert_eq(r.status, 200, "%s", r.body);
		{
			const cJSON *cell;
			int seen = 0;

			cJSON_ArrayForEach(cell, cJSON_GetObjectItem(r.json, "cells")) {
				if (strcmp(jstr(cell, "target"), "hopper") == 0 &&
				    strcmp(jstr(cell, "model"), "qwen3.8-27b") == 0) {
					cr_assert_eq(jnum(cell, "num_splits"), splits, "matrix %s", name);
					cr_assert_eq(jnum(cell, "workspace_slots"), slots, "matrix %s", name);
					seen++;
				}
			}
			cr_assert_eq(seen, 1, "the matrix has the cell once: %.300s", r.body);
		}
		reply_free(&r);
	}
	/* one batch, both releases: a query's own catalog over the batch's */
	r = post("/v1/splits", "{\"catalog\":\"legacy\",\"queries\":[{" Q "},{" Q ",\"catalog\":\"today\"}]}");
	cr_assert_eq(r.status, 200, "%s", r.body);
	expect_decision(cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "results"), 0), "legacy", 1, 132);
	expect_decision(cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "results"), 1), "today", 11, 4224);
	reply_free(&r);
	/* no catalog: the default (today), exactly */
	r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16", NULL, NULL);
	expect_decision(r.json, "today", 11, 4224);
	reply_free(&r);
	r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&catalog=legasy", NULL, NULL);
	expect_problem(&r, 404, "unknown-catalog");
	cr_assert_str_eq(jstr(r.json, "suggestion"), "legacy");
	reply_free(&r);
	r = http(&d, "GET", "/v1/catalogs", NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(jstr(r.json, "default"), "today");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "catalogs")), 2);
	reply_free(&r);
}

/* The core's decision for one cell: what /v1/matrix would answer at
 * max_batch_size 16 (num_seqs 1, max_rows 16). */
struct core_cell {
	char label[SPLITK_LABEL_MAX];
	uint32_t num_splits, slots;
};

static struct core_cell core_at(const char *declared, uint32_t sm_count, uint32_t num_q_heads)
{
	struct splitk_resolved res = splitk_resolve(declared, strlen(declared), NULL, 0);
	uint32_t ref = splitk_split_ref_seqs(1, 16);
	struct core_cell c;

	splitk_label(res.policy, c.label);
	c.num_splits = splitk_num_splits(res.policy, sm_count, num_q_heads, ref);
	c.slots = splitk_workspace_slots(res.policy, sm_count, num_q_heads, 16, ref);
	return c;
}

static bool cells_differ(const struct core_cell *a, const struct core_cell *b)
{
	return strcmp(a->label, b->label) != 0 || a->num_splits != b->num_splits || a->slots != b->slots;
}

static const cJSON *named_entry(const cJSON *list, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, list) {
		if (strcmp(jstr(e, "name"), name) == 0) {
			return e;
		}
	}
	return NULL;
}

/* The diff's cell for (target, model), or NULL. */
static const cJSON *diff_cell(const cJSON *cells, const char *target, const char *model)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cells) {
		if (strcmp(jstr(c, "target"), target) == 0 && strcmp(jstr(c, "model"), model) == 0) {
			return c;
		}
	}
	return NULL;
}

Test(catalogs, the_upgrade_diff_is_what_the_core_says_changes, .fini = stop, .timeout = 60)
{
	struct reply from_t, to_t, models, diff;
	const cJSON *t, *m;
	int expected = 0, hopper = 0;

	start_two();
	from_t = http(&d, "GET", "/v1/targets?catalog=legacy", NULL, NULL);
	to_t = http(&d, "GET", "/v1/targets?catalog=today", NULL, NULL);
	models = http(&d, "GET", "/v1/models?catalog=today", NULL, NULL);
	diff = http(&d, "GET", "/v1/diff?from=legacy&to=today&max_batch_size=16", NULL, NULL);
	cr_assert_eq(diff.status, 200, "%s", diff.body);
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(to_t.json, "targets")) {
		const cJSON *old = named_entry(cJSON_GetObjectItem(from_t.json, "targets"), jstr(t, "name"));

		cr_assert_not_null(old);
		cJSON_ArrayForEach(m, cJSON_GetObjectItem(models.json, "models")) {
			uint32_t nq = (uint32_t)jnum(m, "num_q_heads"), sm = (uint32_t)jnum(t, "sm_count");
			struct core_cell a = core_at(jstr(old, "attn_decode_splitk"), sm, nq);
			struct core_cell b = core_at(jstr(t, "attn_decode_splitk"), sm, nq);
			const cJSON *cell = diff_cell(cJSON_GetObjectItem(diff.json, "cells"),
						      jstr(t, "name"), jstr(m, "name"));

			cr_assert_eq(cell != NULL, cells_differ(&a, &b), "%s x %s: listed %d, core differs %d",
				     jstr(t, "name"), jstr(m, "name"), cell != NULL, cells_differ(&a, &b));
			if (cell == NULL) {
				continue;
			}
			expected++;
			hopper += strcmp(jstr(t, "name"), "hopper") == 0;
			cr_assert_str_eq(jstr(cJSON_GetObjectItem(cell, "from"), "policy"), a.label);
			cr_assert_eq(jnum(cJSON_GetObjectItem(cell, "from"), "num_splits"), a.num_splits);
			cr_assert_eq(jnum(cJSON_GetObjectItem(cell, "from"), "workspace_slots"), a.slots);
			cr_assert_str_eq(jstr(cJSON_GetObjectItem(cell, "to"), "policy"), b.label);
			cr_assert_eq(jnum(cJSON_GetObjectItem(cell, "to"), "num_splits"), b.num_splits);
			cr_assert_eq(jnum(cJSON_GetObjectItem(cell, "to"), "workspace_slots"), b.slots);
		}
	}
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(diff.json, "cells")), expected,
		     "no cell besides those");
	cr_assert_gt(hopper, 0, "the Hopper cells are listed");
	cr_assert_eq(hopper, expected, "and only Hopper's: the one target #928 moved");
	reply_free(&from_t);
	reply_free(&to_t);
	reply_free(&models);
	reply_free(&diff);
}

/* ------------------------------------------------------- --catalog-dir */

static char dir[64];

static void stop_dir(void)
{
	char path[128];

	daemon_stop(&d);
	for (size_t i = 0; i < 4; i++) {
		static const char *const names[] = {"release-a.json", "release-b.json", "release-c.json",
						    "notes.txt"};

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Copies a file into the directory under `name`, whole (a rename over). */
static void put_file(const char *from, const char *name)
{
	char to[128], tmp[160], cmd[512];

	snprintf(to, sizeof(to), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(cmd, sizeof(cmd), "cp %s %s", from, tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(rename(tmp, to), 0);
}

static double splits_of(const char *catalog, long *status, char *suggestion, size_t cap)
{
	char path[256];
	struct reply r;
	double v;

	snprintf(path, sizeof(path),
		 "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&catalog=%s", catalog);
	r = http(&d, "GET", path, NULL, NULL);
	*status = r.status;
	v = r.status == 200 ? jnum(r.json, "num_splits") : -1;
	if (suggestion != NULL) {
		snprintf(suggestion, cap, "%s", r.status == 404 && cJSON_GetObjectItem(r.json, "suggestion")
							 ? jstr(r.json, "suggestion")
							 : "");
	}
	reply_free(&r);
	return v;
}

/* Waits up to `ms` for catalog's answer to have `status`; the time it took. */
static long wait_for(const char *catalog, long status, long ms)
{
	for (long waited = 0; waited <= ms; waited += 20) {
		long got;

		splits_of(catalog, &got, NULL, 0);
		if (got == status) {
			return waited;
		}
		sleep_ms(20);
	}
	return -1;
}

static double metric(const char *name)
{
	return metric_value(&d, name);
}

Test(catalogs, a_directory_of_releases_is_followed_file_by_file, .fini = stop_dir, .timeout = 60)
{
	const char *args[] = {"--catalog-dir", dir, "--default-catalog", "release-b",
			      "--access-log", "off", NULL};
	char path[128], suggestion[64];
	long status;
	struct reply r;
	FILE *f;

	write_releases();
	snprintf(dir, sizeof(dir), "/tmp/splitkd-test-catdir-%d", (int)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	put_file(legacy_path, "release-a.json");
	put_file(today_path, "release-b.json");
	put_file(today_path, "notes.txt");
	daemon_start(&d, args);
	cr_assert_eq(splits_of("release-a", &status, NULL, 0), 1);
	cr_assert_eq(splits_of("release-b", &status, NULL, 0), 11);
	{
		char *log = daemon_log(&d);

		cr_assert(strstr(log, "ignoring notes.txt") != NULL, "%s", log);
		free(log);
	}
	/* a file added: served within 2 s (inotify, a 200 ms debounce and a
	 * 250 ms second read; 2 s is the bound the operator is promised, and
	 * a margin for a loaded machine) */
	put_file(legacy_path, "release-c.json");
	cr_assert_geq(wait_for("release-c", 200, 2000), 0, "release-c not served within 2 s");
	cr_assert_eq(splits_of("release-c", &status, NULL, 0), 1);
	/* one removed: 404 with a did-you-mean, the others unaffected */
	snprintf(path, sizeof(path), "%s/release-a.json", dir);
	cr_assert_eq(unlink(path), 0);
	cr_assert_geq(wait_for("release-a", 404, 2000), 0, "release-a still served 2 s after removal");
	splits_of("release-a", &status, suggestion, sizeof(suggestion));
	cr_assert_eq(status, 404);
	cr_assert(strcmp(suggestion, "release-b") == 0 || strcmp(suggestion, "release-c") == 0,
		  "did you mean: %s", suggestion);
	cr_assert_eq(splits_of("release-b", &status, NULL, 0), 11);
	cr_assert_eq(splits_of("release-c", &status, NULL, 0), 1);
	/* one made invalid: its last good serves; its status and metric say so, no one else's */
	cr_assert_eq(metric("splitkd_catalog_reload_successful{catalog=\"release-c\"} "), 1);
	snprintf(path, sizeof(path), "%s/release-c.json", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"targets\": [", f);
	fclose(f);
	for (int i = 0; i < 100 && metric("splitkd_catalog_reload_successful{catalog=\"release-c\"} ") != 0; i++) {
		sleep_ms(20);
	}
	cr_assert_eq(metric("splitkd_catalog_reload_successful{catalog=\"release-c\"} "), 0);
	cr_assert_eq(metric("splitkd_catalog_reload_successful{catalog=\"release-b\"} "), 1);
	cr_assert_eq(splits_of("release-c", &status, NULL, 0), 1, "the last good serves");
	r = http(&d, "GET", "/v1/status?catalog=release-c", NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(jstr(cJSON_GetObjectItem(r.json, "disk"), "state"), "invalid", "%s", r.body);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "catalogs")), 2);
	reply_free(&r);
	r = http(&d, "GET", "/v1/status", NULL, NULL);
	cr_assert_str_eq(jstr(cJSON_GetObjectItem(r.json, "disk"), "state"), "same", "the default's own");
	reply_free(&r);
}
