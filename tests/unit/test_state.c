/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The state directory (server/state.c) through its own API, no daemon:
 * one process per directory (the lock); revisions saved and loaded back,
 * oldest first, the oldest past --revisions removed; a crash between a
 * write and its rename leaves the old revision and the old streams.json,
 * and the leftover temporary file is removed, never taken or counted; a
 * torn, edited or misnamed file is skipped, logged and counted; a write
 * that fails is counted, logged once per cause and reported; the change
 * stream's numbering kept across a reopen, within its bound.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "durable.h"
#include "jsonw.h"
#include "state_rig.h"
#include "statefile.h"

/* A catalog named `name` whose one target has `sm_count` SMs. */
static struct catalog *a_catalog(const char *name, unsigned sm_count)
{
	char json[256], err[256] = "";
	struct catalog *cat;

	snprintf(json, sizeof(json), "{\"targets\":[{\"name\":\"x\",\"sm_count\":%u,"
		 "\"attn_decode_splitk\":\"auto\"}],\"models\":[]}", sm_count);
	cat = catalog_load(json, strlen(json), err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	if (strcmp(name, CATALOG_DEFAULT_NAME) != 0) {
		catalog_set_name(cat, name, strlen(name), false);
	}
	return cat;
}

/* DIR/catalogs/NAME, and the file of a revision in it. */
static void catalog_dir(const struct state_rig *r, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/catalogs/%s", r->dir, name);
}

static void file_of(const struct state_rig *r, const struct catalog *cat, char *out, size_t cap)
{
	char cdir[192], file[STATEFILE_NAME_LEN + 1];

	catalog_dir(r, cat->name, cdir, sizeof(cdir));
	cr_assert_eq(statefile_name(cat->digest, file, sizeof(file)), 0);
	snprintf(out, cap, "%s/%s", cdir, file);
}

static void free_all(struct catalog **cats, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		catalog_free(cats[i]);
	}
}

Test(state, one_process_holds_the_directory, .init = scratch_setup, .fini = scratch_teardown)
{
	struct state_rig r;
	struct state second;
	struct metrics m;
	char err[1024] = "", sub[192], longer[STATE_PATH_MAX - 16];
	struct stat st;

	state_rig_open(&r, 4);
	snprintf(sub, sizeof(sub), "%s/catalogs", r.dir);
	cr_assert_eq(stat(sub, &st), 0, "the directory is made with its catalogs/");
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(metrics_init(&m), 0);
	cr_assert_eq(state_open(&second, r.dir, 4, &r.log, &m, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "is in use by another splitkd"), "%s", err);
	state_close(&second);
	state_rig_close(&r);
	/* the lock goes with the first: the next one takes it */
	cr_assert_eq(state_open(&second, r.dir, 4, &r.log, &m, err, sizeof(err)), 0, "%s", err);
	state_close(&second);
	/* room for the longest name under it, or refused (it shows in /v1/status) */
	memset(longer, 'd', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	cr_assert_eq(state_open(&second, longer, 4, &r.log, &m, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "the path is too long"), "%s", err);
	state_close(&second);
	metrics_cleanup(&m);
}

Test(state, revisions_load_back_oldest_first_and_the_oldest_go, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct state_rig r;
	struct catalog *saved[4], *loaded[8];
	char cdir[192];
	size_t n;

	state_rig_open(&r, 2);
	for (unsigned i = 0; i < 3; i++) {
		saved[i] = a_catalog(CATALOG_DEFAULT_NAME, 10 + i);
		cr_assert_eq(state_save(&r.state, saved[i]), 0);
		sleep_ms(20); /* the age of a revision is its file's mtime */
	}
	saved[3] = a_catalog("legacy", 99);
	cr_assert_eq(state_save(&r.state, saved[3]), 0);
	catalog_dir(&r, CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	cr_assert_eq(state_rig_entries(cdir), 2, "--revisions 2: the oldest file removed");
	state_rig_reopen(&r);
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 8);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(loaded[0]->digest, saved[1]->digest, "oldest first");
	cr_assert_str_eq(loaded[1]->digest, saved[2]->digest);
	free_all(loaded, n);
	n = state_load(&r.state, "legacy", loaded, 8);
	cr_assert_eq(n, 1, "each catalog in a directory of its own");
	cr_assert_str_eq(loaded[0]->digest, saved[3]->digest);
	free_all(loaded, n);
	/* at most `max`: the newest */
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 1);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(loaded[0]->digest, saved[2]->digest);
	free_all(loaded, n);
	cr_assert_eq(state_load(&r.state, "never-saved", loaded, 8), 0);
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 0);
	free_all(saved, 4);
	state_rig_close(&r);
}

/* The crash: the next revision's file (and streams.json) written and
 * synced under its temporary name, and the process killed before the
 * rename (durable_stage without durable_commit). The restart serves the
 * old ones; the leftover is removed from the catalog's directory, and is
 * neither taken nor counted as a skipped file. */
Test(state, a_crash_between_the_write_and_the_rename_keeps_the_old, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct state_rig r;
	struct catalog *old = a_catalog(CATALOG_DEFAULT_NAME, 10);
	struct catalog *next = a_catalog(CATALOG_DEFAULT_NAME, 20), *loaded[4];
	struct durable_failure f;
	char cdir[192], name[STATEFILE_NAME_LEN + 1], *log;
	const char *streams = "{\"boot\":\"0000beef\",\"seqs\":[[2,\"fnv1a64:0123456789abcdef\"]]}";
	struct jsonw w;
	size_t n;

	state_rig_open(&r, 4);
	cr_assert_eq(state_save(&r.state, old), 0);
	state_streams_keep(&r.state, "cafe0001", 1, old->digest);
	catalog_dir(&r, CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	cr_assert_eq(statefile_name(next->digest, name, sizeof(name)), 0);
	jsonw_init(&w, 1024);
	catalog_write(&w, next, false);
	cr_assert(!w.failed);
	cr_assert_eq(durable_stage(cdir, name, w.buf, w.len, &f), 0, "%s %s", f.what, f.path);
	jsonw_cleanup(&w);
	cr_assert_eq(durable_stage(r.dir, "streams.json", streams, strlen(streams), &f), 0);
	/* ...killed here: the restart */
	state_rig_reopen(&r);
	cr_assert_eq(state_rig_entries(cdir), 2, "the revision and the leftover");
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 1, "only the revision renamed into place");
	cr_assert_str_eq(loaded[0]->digest, old->digest);
	free_all(loaded, n);
	cr_assert_eq(state_rig_entries(cdir), 1, "the leftover is removed at the load");
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 0,
		     "a leftover is no skipped file");
	cr_assert(state_streams_load(&r.state));
	cr_assert_str_eq(r.state.boot, "cafe0001", "streams.json as it was before the crash");
	cr_assert_eq(r.state.num_seqs, 1);
	cr_assert_eq(r.state.seqs[0].seq, 1);
	cr_assert_str_eq(r.state.seqs[0].revision, old->digest);
	log = scratch_log_text(r.log_file);
	cr_assert_null(strstr(log, "skipped"), "%s", log);
	free(log);
	/* the next save of the same revision is whole */
	cr_assert_eq(state_save(&r.state, next), 0);
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 2);
	free_all(loaded, n);
	catalog_free(old);
	catalog_free(next);
	state_rig_close(&r);
}

Test(state, a_torn_edited_or_misnamed_file_is_skipped_and_counted, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct state_rig r;
	struct catalog *good = a_catalog(CATALOG_DEFAULT_NAME, 10);
	struct catalog *torn = a_catalog(CATALOG_DEFAULT_NAME, 20), *loaded[4];
	char cdir[192], p[320], other[320], *log;
	size_t n;

	state_rig_open(&r, 4);
	cr_assert_eq(state_save(&r.state, good), 0);
	cr_assert_eq(state_save(&r.state, torn), 0);
	file_of(&r, torn, p, sizeof(p));
	cr_assert_eq(truncate(p, 20), 0, "%s", p); /* torn */
	catalog_dir(&r, CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	snprintf(other, sizeof(other), "%s/notes.txt", cdir); /* misnamed */
	write_rename(other, "an operator's note");
	/* a whole catalog under another revision's name: edited */
	file_of(&r, good, p, sizeof(p));
	snprintf(other, sizeof(other), "%s/fnv1a64-0123456789abcdef.json", cdir);
	cr_assert_eq(link(p, other), 0);
	state_rig_reopen(&r);
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(loaded[0]->digest, good->digest);
	free_all(loaded, n);
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 3);
	log = scratch_log_text(r.log_file);
	cr_assert_eq(scratch_count(log, "skipped"), 3, "one log line each:\n%s", log);
	cr_assert_not_null(strstr(log, "notes.txt: not a revision file"), "%s", log);
	cr_assert_not_null(strstr(log, "torn or edited"), "%s", log);
	cr_assert_not_null(strstr(log, "not the fnv1a64:0123456789abcdef"), "%s", log);
	free(log);
	catalog_free(good);
	catalog_free(torn);
	state_rig_close(&r);
}

Test(state, a_failed_write_is_counted_logged_once_per_cause_and_reported, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct state_rig r;
	struct catalog *a = a_catalog(CATALOG_DEFAULT_NAME, 10);
	struct catalog *b = a_catalog(CATALOG_DEFAULT_NAME, 20);
	struct api_status st;
	char cdir[192], p[320], *log;

	state_rig_open(&r, 4);
	catalog_dir(&r, CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	write_rename(cdir, "a file where the catalog's directory goes");
	cr_assert_eq(state_save(&r.state, a), -1);
	cr_assert_eq(state_save(&r.state, b), -1);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 2);
	log = scratch_log_text(r.log_file);
	cr_assert_eq(scratch_count(log, "cannot keep revisions"), 1, "once per cause:\n%s", log);
	free(log);
	memset(&st, 0, sizeof(st));
	atomic_store(&r.metrics.state_history_lines_skipped, 5);
	state_report(&r.state, &st);
	cr_assert(st.state_on);
	cr_assert_str_eq(st.state_dir, r.dir);
	cr_assert_eq(st.state_write_errors, 2);
	cr_assert_eq(st.state_history_lines_skipped, 5, "the journal's count, in the state's part");
	cr_assert_not_null(strstr(st.state_error, "Not a directory"), "%s", st.state_error);
	/* a success between two failures of one cause: the second is news */
	cr_assert_eq(unlink(cdir), 0);
	cr_assert_eq(state_save(&r.state, a), 0);
	file_of(&r, a, p, sizeof(p));
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(rmdir(cdir), 0);
	write_rename(cdir, "the same cause again");
	cr_assert_eq(state_save(&r.state, b), -1);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 3);
	log = scratch_log_text(r.log_file);
	cr_assert_eq(scratch_count(log, "cannot keep revisions"), 2, "%s", log);
	free(log);
	catalog_free(a);
	catalog_free(b);
	state_rig_close(&r);
}

Test(state, the_streams_numbering_survives_a_reopen_within_its_bound, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct state_rig r;
	const char *revs[] = {"fnv1a64:0000000000000001", "fnv1a64:0000000000000002",
			      "fnv1a64:0000000000000003"};
	char p[192];

	state_rig_open(&r, 2);
	cr_assert(!state_streams_load(&r.state), "no streams.json yet");
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 0,
		     "a missing file is no skipped one");
	for (unsigned i = 0; i < 3; i++) {
		state_streams_keep(&r.state, "cafe0001", i + 1, revs[i]);
	}
	state_streams_keep(&r.state, "cafe0001", 3, revs[2]); /* the same again: ignored */
	state_rig_reopen(&r);
	cr_assert(state_streams_load(&r.state));
	cr_assert_str_eq(r.state.boot, "cafe0001");
	cr_assert_eq(r.state.num_seqs, 2, "--revisions 2: the oldest seq dropped");
	cr_assert_eq(r.state.seqs[0].seq, 2);
	cr_assert_str_eq(r.state.seqs[0].revision, revs[1]);
	cr_assert_eq(r.state.seqs[1].seq, 3);
	cr_assert_str_eq(r.state.seqs[1].revision, revs[2]);
	snprintf(p, sizeof(p), "%s/streams.json", r.dir);
	write_rename(p, "{\"boot\":\"not hex!\",\"seqs\":[]}");
	state_rig_reopen(&r);
	cr_assert(!state_streams_load(&r.state), "a file that does not check starts afresh");
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 1);
	state_rig_close(&r);
}
