/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The state directory (--state-dir) against the real daemon: revisions
 * pinned before a SIGKILL or a SIGTERM answer byte for byte after the
 * restart; a torn or edited state file is skipped, the rest held; a
 * catalog file gone at start serves its last revision kept, and status
 * and gauge say so; a second process on the directory refuses to start;
 * a write that fails keeps serving and is counted; a torn or edited
 * history line is skipped and counted.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "pins.h"

static struct daemon d;
static char dir[64], state_dir[96], path[96];

static void stop(void)
{
	daemon_stop(&d);
}

/* A fresh directory with the embedded catalog as its catalog file. */
static cJSON *setup(void)
{
	struct daemon boot;
	cJSON *c;

	snprintf(dir, sizeof(dir), "/tmp/splitkd-test-state-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(path, sizeof(path), "%s/catalog.json", dir);
	daemon_start(&boot, (const char *[]){"--access-log", "off", NULL});
	c = base_catalog(&boot);
	daemon_finish(&boot);
	write_json(path, c);
	return c;
}

static void teardown(cJSON *c)
{
	char cmd[160];

	cJSON_Delete(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static void start(void)
{
	daemon_start(&d, (const char *[]){"--catalog", path, "--state-dir", state_dir, "--access-log",
					 "off", "--catalog-check", "1", NULL});
}

/* One more revision: the i-th target's sm_count moved. */
static void next_revision(cJSON *c, int i, char *out, size_t cap)
{
	cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "targets"), i);

	cJSON_ReplaceItemInObjectCaseSensitive(t, "sm_count",
					       cJSON_CreateNumber(jnum(t, "sm_count") + 8));
	reload_on(&d, path, c, out, cap);
}

static bool holds_in(const char *name, const char *rev);

/* Whether GET /v1/revisions (the default catalog's) holds `rev`. */
static bool holds(const char *rev)
{
	return holds_in(NULL, rev);
}

/* Every request of `table` pinned to `rev`, byte-equal to `recorded`. */
static void table_as_recorded(const struct pinnable *table, size_t n, const char *rev,
			      char *const *recorded, const char *when)
{
	for (size_t i = 0; i < n; i++) {
		long status;
		char *now = ask_on(&d, &table[i], rev, &status);

		cr_assert_eq(status, 200, "%s: %s %s pinned to %s: %s", when, table[i].method,
			     table[i].path, rev, now);
		cr_assert_str_eq(now, recorded[i], "%s: %s %s pinned to %s:\n%s\nrecorded:\n%s", when,
				 table[i].method, table[i].path, rev, now, recorded[i]);
		free(now);
	}
}

/* Every pinnable request pinned to `rev`, byte-equal to `recorded`. */
static void answers_as_recorded(const char *rev, char *const *recorded, const char *when)
{
	table_as_recorded(pinnables, NUM_PINNABLE, rev, recorded, when);
}

Test(state, pinned_answers_survive_sigkill_and_sigterm, .fini = stop, .timeout = 90)
{
	cJSON *c = setup();
	char r1[64], r2[64], r3[64], now[64], *recorded[NUM_PINNABLE];
	const char *revs[] = {r1, r2, r3};
	int status;

	start();
	current_of(&d, r1, sizeof(r1));
	for (size_t i = 0; i < NUM_PINNABLE; i++) {
		long st;

		recorded[i] = ask_on(&d, &pinnables[i], NULL, &st);
		cr_assert_eq(st, 200, "%s", recorded[i]);
	}
	next_revision(c, 0, r2, sizeof(r2));
	next_revision(c, 1, r3, sizeof(r3));
	answers_as_recorded(r1, recorded, "before the kill");
	kill(d.pid, SIGKILL);
	status = daemon_wait(&d, 5000);
	cr_assert(status != -1 && WIFSIGNALED(status));
	for (int round = 0; round < 2; round++) {
		const char *when = round == 0 ? "after SIGKILL" : "after SIGTERM";

		start();
		for (size_t i = 0; i < 3; i++) {
			cr_assert(holds(revs[i]), "%s: %s not held", when, revs[i]);
		}
		current_of(&d, now, sizeof(now));
		cr_assert_str_eq(now, r3, "%s: the catalog file's revision is current", when);
		answers_as_recorded(r1, recorded, when);
		daemon_finish(&d); /* SIGTERM, exit 0: the next round restarts after it */
	}
	for (size_t i = 0; i < NUM_PINNABLE; i++) {
		free(recorded[i]);
	}
	teardown(c);
}

/* The state file of `rev` (fnv1a64:<hex> -> DIR/catalogs/default/fnv1a64-<hex>.json). */
static void file_of(const char *rev, char *out, size_t cap)
{
	snprintf(out, cap, "%s/catalogs/default/fnv1a64-%s.json", state_dir, rev + strlen("fnv1a64:"));
}

Test(state, a_torn_or_edited_file_is_skipped_the_rest_held, .fini = stop, .timeout = 60)
{
	cJSON *c = setup();
	char r1[64], r2[64], r3[64], f1[192], f2[192], *log;
	FILE *f;

	start();
	current_of(&d, r1, sizeof(r1));
	next_revision(c, 0, r2, sizeof(r2));
	next_revision(c, 1, r3, sizeof(r3));
	daemon_finish(&d);
	file_of(r1, f1, sizeof(f1));
	file_of(r2, f2, sizeof(f2));
	cr_assert_eq(truncate(f1, 100), 0, "%s", f1); /* torn */
	f = fopen(f2, "r+");                          /* edited: still a catalog, another digest */
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	cr_assert_geq(fputs(" ", f), 0); /* white space: the same digest, still taken */
	fclose(f);
	start();
	cr_assert(holds(r2), "white space after the JSON changes no revision");
	daemon_finish(&d);
	f = fopen(f2, "w");
	cr_assert_not_null(f);
	{
		char *text;
		cJSON *edited = cJSON_Duplicate(c, true);

		cJSON_ReplaceItemInObjectCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(edited, "targets"), 2), "sm_count",
			cJSON_CreateNumber(7));
		text = cJSON_PrintUnformatted(edited);
		fputs(text, f);
		free(text);
		cJSON_Delete(edited);
	}
	fclose(f);
	start();
	cr_assert(!holds(r1), "a torn file is never held");
	cr_assert(!holds(r2), "an edited file is never held");
	cr_assert(holds(r3));
	cr_assert_eq(metric_value(&d, "\nsplitkd_state_files_skipped_total "), 2);
	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "skipped"), "%s", log);
	cr_assert_not_null(strstr(log, "torn or edited"), "%s", log);
	cr_assert_not_null(strstr(log, "not the fnv1a64:"), "%s", log);
	free(log);
	daemon_finish(&d);
	teardown(c);
}

Test(state, a_deleted_catalog_file_serves_its_last_revision, .fini = stop, .timeout = 60)
{
	cJSON *c = setup();
	char r1[64], r2[64], now[64];
	struct reply r;
	const cJSON *disk;

	start();
	current_of(&d, r1, sizeof(r1));
	next_revision(c, 0, r2, sizeof(r2));
	daemon_finish(&d);
	cr_assert_eq(unlink(path), 0);
	start();
	current_of(&d, now, sizeof(now));
	cr_assert_str_eq(now, r2, "the last revision served from the file");
	cr_assert(holds(r1));
	r = http(&d, "GET", "/v1/status", NULL, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(jstr(r.json, "started_from"), "state", "%s", r.body);
	disk = cJSON_GetObjectItemCaseSensitive(r.json, "disk");
	cr_assert_str_eq(jstr(disk, "state"), "missing", "%s", r.body);
	cr_assert_not_null(strstr(jstr(disk, "error"), path), "%s", r.body);
	reply_free(&r);
	cr_assert_eq(metric_value(&d, "\nsplitkd_catalog_last_reload_successful "), 0);
	/* the file back (a third revision): the watch takes it, the status
	 * and gauge say the file serves again (5 s: --catalog-check 1) */
	write_json(path, c);
	for (int i = 0; i < 500 && metric_value(&d, "\nsplitkd_catalog_last_reload_successful ") != 1; i++) {
		sleep_ms(10);
	}
	cr_assert_eq(metric_value(&d, "\nsplitkd_catalog_last_reload_successful "), 1);
	r = http(&d, "GET", "/v1/status", NULL, NULL);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(r.json, "started_from"), "%s", r.body);
	reply_free(&r);
	daemon_finish(&d);
	/* without a state directory, a missing file still stops the start */
	{
		const char *argv[] = {splitkd_bin(), "--listen", "127.0.0.1:0", "--catalog", "/nonexistent/c.json",
				      NULL};
		pid_t pid = fork();
		int status;

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			execv(argv[0], (char *const *)argv);
			_exit(127);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	}
	teardown(c);
}

Test(state, a_second_process_on_the_directory_exits_non_zero, .fini = stop, .timeout = 60)
{
	cJSON *c = setup();
	char log_path[] = "/tmp/splitkd-test-state-second-XXXXXX", buf[2048] = "";
	const char *argv[] = {splitkd_bin(), "--listen", "127.0.0.1:0", "--catalog", path,
			      "--state-dir", state_dir, NULL};
	int fd = mkstemp(log_path), status;
	pid_t pid;
	ssize_t n;

	cr_assert_geq(fd, 0);
	start();
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0, "the second process served");
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	cr_assert_gt(n, 0);
	cr_assert_not_null(strstr(buf, "is in use by another splitkd"), "%s", buf);
	close(fd);
	unlink(log_path);
	current_of(&d, buf, sizeof(buf)); /* the first serves on */
	daemon_finish(&d);
	teardown(c);
}

/*
 * Tests run as root, so a read-only mode would not stop a write: the
 * catalog's directory in the state is replaced by a regular file, so
 * every write under it fails (ENOTDIR), as a full or read-only disk's
 * would, while the reloads go on.
 */
Test(state, a_write_failure_keeps_serving_and_counts, .fini = stop, .timeout = 60)
{
	cJSON *c = setup();
	char r1[64], r2[64], r3[64], cdir[160], cmd[400], *log;
	const char *p;
	struct reply r;
	int lines = 0;

	start();
	current_of(&d, r1, sizeof(r1));
	snprintf(cdir, sizeof(cdir), "%s/catalogs/default", state_dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && echo not-a-directory > '%s'", cdir, cdir);
	cr_assert_eq(system(cmd), 0);
	next_revision(c, 0, r2, sizeof(r2));
	next_revision(c, 1, r3, sizeof(r3));
	cr_assert(holds(r1) && holds(r2), "the reloads landed: serving went on");
	cr_assert_eq(metric_value(&d, "\nsplitkd_state_write_errors_total "), 2);
	r = http(&d, "GET", "/v1/status", NULL, NULL);
	cr_assert_eq(jnum(cJSON_GetObjectItemCaseSensitive(r.json, "state"), "write_errors"), 2,
		     "%s", r.body);
	cr_assert_not_null(strstr(jstr(cJSON_GetObjectItemCaseSensitive(r.json, "state"),
				       "last_write_error"), "Not a directory"), "%s", r.body);
	reply_free(&r);
	log = daemon_log(&d);
	for (p = log; (p = strstr(p, "cannot keep revisions")) != NULL; p++) {
		lines++;
	}
	cr_assert_eq(lines, 1, "one log line per cause:\n%s", log);
	free(log);
	daemon_finish(&d);
	teardown(c);
}

/* A history line edited by hand and a torn last line (a crash in the
 * middle of an append): both skipped at the restart with a log line
 * each, counted in /metrics and /v1/status, the good lines listed, the
 * torn tail cut off before the next append. */
Test(state, a_torn_history_line_is_skipped_and_counted, .fini = stop, .timeout = 60)
{
	cJSON *c = setup();
	char r2[64], hist[160], *log;
	struct reply r;
	cJSON *entries;
	FILE *f;

	start();
	next_revision(c, 0, r2, sizeof(r2));
	daemon_finish(&d);
	snprintf(hist, sizeof(hist), "%s/history.jsonl", state_dir);
	f = fopen(hist, "a");
	cr_assert_not_null(f, "%s", hist);
	fputs("{\"seq\":3,\"edited\":true}\n{\"seq\":4,\"at\":", f);
	fclose(f);
	start();
	cr_assert_eq(metric_value(&d, "\nsplitkd_state_history_lines_skipped_total "), 2);
	r = http(&d, "GET", "/v1/status", NULL, NULL);
	cr_assert_eq(jnum(cJSON_GetObjectItemCaseSensitive(r.json, "state"),
			  "history_lines_skipped"), 2, "%s", r.body);
	reply_free(&r);
	r = http(&d, "GET", "/v1/history", NULL, NULL);
	entries = cJSON_GetObjectItemCaseSensitive(r.json, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3, "two kept and this start's: %s", r.body);
	reply_free(&r);
	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "skipped a line"), "%s", log);
	cr_assert_not_null(strstr(log, "its last line is torn"), "%s", log);
	free(log);
	daemon_finish(&d);
	start(); /* the torn tail was cut: nothing skipped the next time */
	cr_assert_eq(metric_value(&d, "\nsplitkd_state_history_lines_skipped_total "), 1,
		     "the edited line stays and is skipped again; the torn tail is gone");
	daemon_finish(&d);
	teardown(c);
}

/* xorshift64*: the crash test's moments, reproducible from the seed it prints. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

#define CRASH_RELOADS 200
#define CRASH_KILLS 25
#define CRASH_GET "/v1/splits?target=gb10&model=qwen3-8b&max_batch_size=16"

/* What the crash test knows: each revision's GET answer while current. */
struct seen {
	char digest[CRASH_RELOADS + 1][64];
	char *answer[CRASH_RELOADS + 1];
	size_t n;
};

static long seen_find(const struct seen *s, const char *digest)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->digest[i], digest) == 0) {
			return (long)i;
		}
	}
	return -1;
}

/* The current revision's answer, recorded the first time it is seen. */
static void seen_record(struct seen *s)
{
	char now[64], path_q[256];
	struct reply r;

	current_of(&d, now, sizeof(now));
	if (seen_find(s, now) >= 0 || s->n > CRASH_RELOADS) {
		return;
	}
	snprintf(path_q, sizeof(path_q), CRASH_GET "&revision=%s", now);
	r = http(&d, "GET", path_q, NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	snprintf(s->digest[s->n], sizeof(s->digest[s->n]), "%s", now);
	s->answer[s->n++] = strdup(r.body);
	reply_free(&r);
}

/* After a restart: every held revision is one written and answers as
 * recorded; no state file was skipped (nothing torn was left); every
 * history entry's revisions were served (held now, or seen current). */
static void check_after_restart(struct seen *s, int restart)
{
	struct reply r = http(&d, "GET", "/v1/revisions", NULL, NULL), h;
	const cJSON *e;
	char *log = daemon_log(&d);

	cr_assert_null(strstr(log, "skipped"), "restart %d: a state file was skipped:\n%s", restart, log);
	free(log);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r.json, "revisions")) {
		const char *rev = jstr(e, "revision");
		char q[256];
		long i = seen_find(s, rev);
		struct reply p;

		if (i < 0) { /* served, then killed before the test saw it: record it now */
			cr_assert_lt(s->n, CRASH_RELOADS + 1, "more revisions than reloads");
			snprintf(q, sizeof(q), CRASH_GET "&revision=%s", rev);
			p = http(&d, "GET", q, NULL, NULL);
			cr_assert_eq(p.status, 200);
			snprintf(s->digest[s->n], sizeof(s->digest[s->n]), "%s", rev);
			s->answer[s->n++] = strdup(p.body);
			reply_free(&p);
			continue;
		}
		snprintf(q, sizeof(q), CRASH_GET "&revision=%s", rev);
		p = http(&d, "GET", q, NULL, NULL);
		cr_assert_str_eq(p.body, s->answer[i], "restart %d: %s answers otherwise", restart, rev);
		reply_free(&p);
	}
	reply_free(&r);
	h = http(&d, "GET", "/v1/history?limit=100", NULL, NULL);
	cr_assert_eq(h.status, 200);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(h.json, "entries")) {
		const cJSON *to = cJSON_GetObjectItemCaseSensitive(e, "to");

		if (cJSON_IsString(to)) {
			cr_assert_geq(seen_find(s, to->valuestring), 0,
				      "restart %d: the history names %s, never served", restart, to->valuestring);
		}
	}
	reply_free(&h);
}

/*
 * SIGKILL at random moments (0 to 3 ms after a SIGHUP, so inside the
 * write of the new revision's file, its rename, the history's append)
 * during 200 reloads, 25 of them killed; the seed is printed
 * (SPLITKD_CRASH_SEED sets it). A few seconds here; the bound is 120 s
 * only because a loaded machine may be slow.
 */
Test(state, sigkill_at_random_moments_leaves_nothing_torn, .fini = stop, .timeout = 120)
{
	cJSON *c = setup();
	const char *env = getenv("SPLITKD_CRASH_SEED");
	uint64_t seed = env != NULL ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) * 2654435761u;
	uint64_t x = seed | 1;
	bool kill_at[CRASH_RELOADS] = {false};
	struct seen *s = calloc(1, sizeof(*s));
	int kills = 0, status;

	cr_assert_not_null(s);
	fprintf(stderr, "crash test seed %llu (SPLITKD_CRASH_SEED=%llu to repeat)\n",
		(unsigned long long)seed, (unsigned long long)seed);
	while (kills < CRASH_KILLS) {
		size_t i = (size_t)(next_random(&x) % CRASH_RELOADS);

		kills += kill_at[i] ? 0 : 1;
		kill_at[i] = true;
	}
	start();
	seen_record(s);
	for (int i = 0; i < CRASH_RELOADS; i++) {
		cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "targets"), i % 4);

		cJSON_ReplaceItemInObjectCaseSensitive(t, "sm_count", cJSON_CreateNumber(jnum(t, "sm_count") + 1));
		if (!kill_at[i]) {
			char now[64];

			reload_on(&d, path, c, now, sizeof(now));
			seen_record(s);
			continue;
		}
		write_json(path, c);
		kill(d.pid, SIGHUP);
		sleep_ms((long)(next_random(&x) % 4));
		kill(d.pid, SIGKILL);
		status = daemon_wait(&d, 5000);
		cr_assert(status != -1 && WIFSIGNALED(status));
		start();
		check_after_restart(s, i);
		seen_record(s);
	}
	daemon_finish(&d);
	for (size_t i = 0; i < s->n; i++) {
		free(s->answer[i]);
	}
	free(s);
	teardown(c);
}

/* ------------------------------------------------------------ --catalog-dir */

static char cat_dir[96];

/* DIR/cats with today.json (the default, `c`) and legacy.json (`c` with the
 * last target's sm_count moved, so that no revision is both catalogs'). */
static cJSON *setup_dir(cJSON *c)
{
	cJSON *legacy = cJSON_Duplicate(c, true);
	cJSON *targets = cJSON_GetObjectItemCaseSensitive(legacy, "targets");
	cJSON *t = cJSON_GetArrayItem(targets, cJSON_GetArraySize(targets) - 1);
	char file[160];

	snprintf(cat_dir, sizeof(cat_dir), "%s/cats", dir);
	cr_assert_eq(mkdir(cat_dir, 0750), 0);
	cJSON_ReplaceItemInObjectCaseSensitive(t, "sm_count", cJSON_CreateNumber(jnum(t, "sm_count") + 4));
	snprintf(file, sizeof(file), "%s/today.json", cat_dir);
	write_json(file, c);
	snprintf(file, sizeof(file), "%s/legacy.json", cat_dir);
	write_json(file, legacy);
	return legacy;
}

static void start_dir(void)
{
	daemon_start(&d, (const char *[]){"--catalog-dir", cat_dir, "--default-catalog", "today",
					 "--state-dir", state_dir, "--access-log", "off",
					 "--catalog-check", "1", NULL});
}

/* GET /v1/revisions?catalog=NAME's answer (NULL: the default's; the
 * caller frees it). */
static struct reply revisions_of(const char *name)
{
	char target[96];

	snprintf(target, sizeof(target), "/v1/revisions%s%s", name != NULL ? "?catalog=" : "",
		 name != NULL ? name : "");
	return http(&d, "GET", target, NULL, NULL);
}

static void current_in(const char *name, char *out, size_t cap)
{
	struct reply r = revisions_of(name);

	cr_assert_eq(r.status, 200, "%s: %s", name, r.body);
	snprintf(out, cap, "%s", jstr(r.json, "current"));
	reply_free(&r);
}

/* Whether catalog NAME (NULL: the default) holds `rev`. */
static bool holds_in(const char *name, const char *rev)
{
	struct reply r = revisions_of(name);
	const cJSON *e;
	bool found = false;

	cr_assert_eq(r.status, 200, "%s: %s", name, r.body);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r.json, "revisions")) {
		found = found || strcmp(jstr(e, "revision"), rev) == 0;
	}
	reply_free(&r);
	return found;
}

/* DIR/cats/NAME.json replaced by `c` (the i-th target's sm_count moved
 * first) and SIGHUP sent; waits (5 s at most) for NAME's current revision
 * to move, into out. */
static void next_in_dir(const char *name, cJSON *c, int i, char *out, size_t cap)
{
	cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "targets"), i);
	char file[160], before[64];

	cJSON_ReplaceItemInObjectCaseSensitive(t, "sm_count",
					       cJSON_CreateNumber(jnum(t, "sm_count") + 8));
	current_in(name, before, sizeof(before));
	snprintf(file, sizeof(file), "%s/%s.json", cat_dir, name);
	write_json(file, c);
	kill(d.pid, SIGHUP);
	for (int k = 0; k < 500; k++) {
		current_in(name, out, cap);
		if (strcmp(out, before) != 0) {
			return;
		}
		sleep_ms(10);
	}
	cr_assert_fail("catalog %s: the reload did not land within 5 s", name);
}

/* Waits (5 s at most) until GET /v1/status?catalog=NAME says `text`. */
static void wait_status_says(const char *name, const char *text)
{
	char target[96];

	snprintf(target, sizeof(target), "/v1/status?catalog=%s", name);
	for (int i = 0; i < 500; i++) {
		struct reply r = http(&d, "GET", target, NULL, NULL);
		bool says = r.status == 200 && strstr(r.body, text) != NULL;

		reply_free(&r);
		if (says) {
			return;
		}
		sleep_ms(10);
	}
	cr_assert_fail("%s never said %s within 5 s", target, text);
}

/* The requests a scheduler pins, asked of the catalog `legacy`. */
static const struct pinnable legacy_pinnables[] = {
	{"GET", "/v1/splits?target=gb10&model=qwen3-8b&max_batch_size=16&catalog=legacy", NULL},
	{"GET", "/v1/matrix?max_batch_size=16&catalog=legacy", NULL},
	{"POST", "/v1/splits",
	 "{\"catalog\":\"legacy\",\"target\":\"gb10\",\"model\":\"qwen3-8b\",\"max_batch_size\":16%s}"},
	{"POST", "/v1/splits",
	 "{\"catalog\":\"legacy\",\"queries\":[{\"target\":\"gb10\",\"model\":\"qwen3-8b\"},"
	 "{\"target\":\"b200\",\"model\":\"llama-3.1-70b\",\"max_batch_size\":8}]%s}"},
	{"POST", "/ofrep/v1/evaluate/flags/num_splits",
	 "{\"context\":{\"catalog\":\"legacy\",\"target\":\"gb10\",\"model\":\"qwen3-8b\","
	 "\"max_batch_size\":16%s}}"},
};

#define NUM_LEGACY (sizeof(legacy_pinnables) / sizeof(legacy_pinnables[0]))

Test(state, a_catalog_dir_catalogs_pins_survive_sigkill, .fini = stop, .timeout = 90)
{
	cJSON *c = setup(), *legacy = setup_dir(c);
	char r1[64], r2[64], r3[64], now[64], today[64], *recorded[NUM_LEGACY];
	const char *revs[] = {r1, r2, r3};
	int status;

	start_dir();
	current_in("legacy", r1, sizeof(r1));
	current_in("today", today, sizeof(today));
	cr_assert_str_neq(r1, today);
	for (size_t i = 0; i < NUM_LEGACY; i++) {
		long st;

		recorded[i] = ask_on(&d, &legacy_pinnables[i], r1, &st);
		cr_assert_eq(st, 200, "%s", recorded[i]);
		cr_assert_not_null(strstr(recorded[i], r1), "the answer names its revision: %s",
				   recorded[i]);
	}
	next_in_dir("legacy", legacy, 0, r2, sizeof(r2));
	next_in_dir("legacy", legacy, 1, r3, sizeof(r3));
	table_as_recorded(legacy_pinnables, NUM_LEGACY, r1, recorded, "before the kill");
	kill(d.pid, SIGKILL);
	status = daemon_wait(&d, 5000);
	cr_assert(status != -1 && WIFSIGNALED(status));
	start_dir();
	for (size_t i = 0; i < 3; i++) {
		cr_assert(holds_in("legacy", revs[i]), "after SIGKILL: legacy does not hold %s", revs[i]);
	}
	current_in("legacy", now, sizeof(now));
	cr_assert_str_eq(now, r3, "the file's revision is current");
	table_as_recorded(legacy_pinnables, NUM_LEGACY, r1, recorded, "after SIGKILL");
	/* each kept revision held again names its own file, not the default's */
	{
		struct reply r = revisions_of("legacy");
		const cJSON *e;
		char file[160];

		snprintf(file, sizeof(file), "%s/legacy.json", cat_dir);
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r.json, "revisions")) {
			cr_assert_str_eq(jstr(e, "source"), file, "%s", r.body);
		}
		reply_free(&r);
	}
	/* the default's revisions are its own: none of legacy's among them */
	cr_assert(!holds_in("today", r1));
	daemon_finish(&d);
	for (size_t i = 0; i < NUM_LEGACY; i++) {
		free(recorded[i]);
	}
	cJSON_Delete(legacy);
	teardown(c);
}

/*
 * While splitkd is down, legacy.json is made invalid and extra.json is
 * deleted. legacy.json is in the directory, so legacy is declared: its
 * last revision kept serves, and status and gauge say why (a SIGHUP that
 * reads the same bad bytes says so again). extra.json is gone, and in
 * --catalog-dir a file is what declares a catalog: extra is 404
 * unknown-catalog, as when a file is removed while running; its kept
 * revisions stay on disk and are held again when the file comes back.
 */
Test(state, a_catalog_dir_file_invalid_at_start_serves_kept_one_deleted_is_gone, .fini = stop,
     .timeout = 90)
{
	cJSON *c = setup(), *legacy = setup_dir(c), *extra = cJSON_Duplicate(legacy, true);
	char r1[64], r2[64], e1[64], e2[64], now[64], file[160], extra_file[160];
	const char *gauge = "\nsplitkd_catalog_reload_successful{catalog=\"legacy\"} ";
	struct reply r;

	snprintf(extra_file, sizeof(extra_file), "%s/extra.json", cat_dir);
	cJSON_ReplaceItemInObjectCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(extra, "targets"), 2), "sm_count",
		cJSON_CreateNumber(7));
	write_json(extra_file, extra);
	start_dir();
	current_in("legacy", r1, sizeof(r1));
	next_in_dir("legacy", legacy, 0, r2, sizeof(r2));
	current_in("extra", e1, sizeof(e1));
	next_in_dir("extra", extra, 1, e2, sizeof(e2));
	daemon_finish(&d);
	snprintf(file, sizeof(file), "%s/legacy.json", cat_dir);
	replace_file(file, "{\"targets\":");
	cr_assert_eq(unlink(extra_file), 0);

	start_dir();
	current_in("legacy", now, sizeof(now));
	cr_assert_str_eq(now, r2, "legacy: the last revision served from its file");
	cr_assert(holds_in("legacy", r1));
	for (int round = 0; round < 2; round++) {
		const char *when = round == 0 ? "at start" : "after a SIGHUP";
		const cJSON *disk;

		if (round == 1) {
			kill(d.pid, SIGHUP);
			wait_status_says("legacy", "\"trigger\":\"signal\"");
		}
		r = http(&d, "GET", "/v1/status?catalog=legacy", NULL, NULL);
		cr_assert_eq(r.status, 200);
		cr_assert_str_eq(jstr(r.json, "started_from"), "state", "%s: %s", when, r.body);
		cr_assert_str_eq(jstr(r.json, "revision"), r2, "%s: %s", when, r.body);
		disk = cJSON_GetObjectItemCaseSensitive(r.json, "disk");
		cr_assert_str_eq(jstr(disk, "state"), "invalid", "%s: %s", when, r.body);
		cr_assert_not_null(strstr(jstr(disk, "error"), file), "%s: %s", when, r.body);
		reply_free(&r);
		cr_assert_eq(metric_value(&d, gauge), 0, "%s", when);
	}
	/* extra: no file, no catalog */
	r = http(&d, "GET", "/v1/splits?target=gb10&model=qwen3-8b&catalog=extra", NULL, NULL);
	expect_problem(&r, 404, "unknown-catalog");
	reply_free(&r);
	r = revisions_of("extra");
	expect_problem(&r, 404, "unknown-catalog");
	reply_free(&r);
	/* the file back as it was last served: the watch serves it (within
	 * its debounce; 5 s with --catalog-check 1), with both revisions kept */
	write_json(extra_file, extra);
	for (int i = 0; i < 500; i++) {
		r = revisions_of("extra");
		if (r.status == 200) {
			break;
		}
		reply_free(&r);
		sleep_ms(10);
	}
	cr_assert_eq(r.status, 200, "extra.json back, not served within 5 s: %s", r.body);
	cr_assert_str_eq(jstr(r.json, "current"), e2, "%s", r.body);
	reply_free(&r);
	cr_assert(holds_in("extra", e1), "extra.json back: its kept first revision is held again");
	/* legacy's file good again (a third revision): the watch takes it, the
	 * status and gauge say the file serves again */
	next_in_dir("legacy", legacy, 1, now, sizeof(now));
	/* the reload serves the new revision a moment before it records its
	 * result (reload.c): the gauge is read until it says so, 1 s at most */
	for (int i = 0; i < 100 && metric_value(&d, gauge) != 1; i++) {
		sleep_ms(10);
	}
	cr_assert_eq(metric_value(&d, gauge), 1);
	r = http(&d, "GET", "/v1/status?catalog=legacy", NULL, NULL);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(r.json, "started_from"), "%s", r.body);
	reply_free(&r);
	cr_assert(holds_in("legacy", r1) && holds_in("legacy", r2));
	daemon_finish(&d);
	cJSON_Delete(extra);
	cJSON_Delete(legacy);
	teardown(c);
}
