/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The state directory (--state-dir) against the real daemon: revisions
 * pinned before a SIGKILL or a SIGTERM answer byte for byte after the
 * restart; a torn or edited state file is skipped, the rest held; a
 * catalog file gone at start serves its last revision kept, and status
 * and gauge say so; a second process on the directory refuses to start;
 * a write that fails keeps serving and is counted.
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

/* Whether GET /v1/revisions holds `rev`. */
static bool holds(const char *rev)
{
	struct reply r = http(&d, "GET", "/v1/revisions", NULL, NULL);
	const cJSON *e;
	bool found = false;

	cr_assert_eq(r.status, 200);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r.json, "revisions")) {
		found = found || strcmp(jstr(e, "revision"), rev) == 0;
	}
	reply_free(&r);
	return found;
}

/* Every pinnable request pinned to `rev`, byte-equal to `recorded`. */
static void answers_as_recorded(const char *rev, char *const *recorded, const char *when)
{
	for (size_t i = 0; i < NUM_PINNABLE; i++) {
		long status;
		char *now = ask_on(&d, &pinnables[i], rev, &status);

		cr_assert_eq(status, 200, "%s: %s %s pinned to %s: %s", when, pinnables[i].method,
			     pinnables[i].path, rev, now);
		cr_assert_str_eq(now, recorded[i], "%s: %s %s pinned to %s:\n%s\nrecorded:\n%s", when,
				 pinnables[i].method, pinnables[i].path, rev, now, recorded[i]);
		free(now);
	}
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
