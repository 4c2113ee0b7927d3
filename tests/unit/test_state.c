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

/* Each test's state directory, and the revisions most tests keep (a
 * test runs in a process of its own). */
static struct state_rig r;
static struct catalog *first, *second, *loaded[8];

/* A catalog named `name` (scratch_catalog's). */
static struct catalog *a_catalog(const char *name, unsigned sm_count)
{
	struct catalog *cat = scratch_catalog(sm_count);

	if (strcmp(name, CATALOG_DEFAULT_NAME) != 0) {
		catalog_set_name(cat, name, strlen(name), false);
	}
	return cat;
}

/* DIR/catalogs/NAME, and the file of a revision in it. */
static void catalog_dir(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/catalogs/%s", r.dir, name);
}

static void file_of(const struct catalog *cat, char *out, size_t cap)
{
	char cdir[192], file[STATEFILE_NAME_LEN + 1];

	catalog_dir(cat->name, cdir, sizeof(cdir));
	cr_assert_eq(statefile_name(cat->digest, file, sizeof(file)), 0);
	snprintf(out, cap, "%s/%s", cdir, file);
}

static void free_all(struct catalog **cats, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		catalog_free(cats[i]);
	}
}

/* Two revisions of the default catalog, and a state directory of 4. */
static void two_revisions(void)
{
	scratch_setup();
	first = a_catalog(CATALOG_DEFAULT_NAME, 10);
	second = a_catalog(CATALOG_DEFAULT_NAME, 20);
	state_rig_open(&r, 4);
}

static void two_revisions_done(void)
{
	state_rig_close(&r);
	catalog_free(first);
	catalog_free(second);
	scratch_teardown();
}

Test(state, one_process_holds_the_directory, .init = scratch_setup, .fini = scratch_teardown)
{
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
	struct catalog *saved[4];
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
	catalog_dir(CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
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
Test(state, a_crash_between_the_write_and_the_rename_keeps_the_old, .init = two_revisions,
     .fini = two_revisions_done)
{
	struct durable_failure f;
	char cdir[192], name[STATEFILE_NAME_LEN + 1];
	const char *streams = "{\"boot\":\"0000beef\",\"seqs\":[[2,\"fnv1a64:0123456789abcdef\"]]}";
	struct jsonw w;
	size_t n;

	cr_assert_eq(state_save(&r.state, first), 0);
	state_streams_keep(&r.state, "cafe0001", 1, first->digest);
	catalog_dir(CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	cr_assert_eq(statefile_name(second->digest, name, sizeof(name)), 0);
	jsonw_init(&w, 1024);
	catalog_write(&w, second, false);
	cr_assert(!w.failed);
	cr_assert_eq(durable_stage(cdir, name, w.buf, w.len, &f), 0, "%s %s", f.what, f.path);
	jsonw_cleanup(&w);
	cr_assert_eq(durable_stage(r.dir, "streams.json", streams, strlen(streams), &f), 0);
	/* ...killed here: the restart */
	state_rig_reopen(&r);
	cr_assert_eq(state_rig_entries(cdir), 2, "the revision and the leftover");
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 1, "only the revision renamed into place");
	cr_assert_str_eq(loaded[0]->digest, first->digest);
	free_all(loaded, n);
	cr_assert_eq(state_rig_entries(cdir), 1, "the leftover is removed at the load");
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 0,
		     "a leftover is no skipped file");
	cr_assert(state_streams_load(&r.state));
	cr_assert_str_eq(r.state.boot, "cafe0001", "streams.json as it was before the crash");
	cr_assert_eq(r.state.num_seqs, 1);
	cr_assert_eq(r.state.seqs[0].seq, 1);
	cr_assert_str_eq(r.state.seqs[0].revision, first->digest);
	scratch_logged(r.log_file, "skipped", 0);
	/* the next save of the same revision is whole */
	cr_assert_eq(state_save(&r.state, second), 0);
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 2);
	free_all(loaded, n);
}

Test(state, a_torn_edited_or_misnamed_file_is_skipped_and_counted, .init = two_revisions,
     .fini = two_revisions_done)
{
	char cdir[192], p[320], other[320];
	size_t n;

	cr_assert_eq(state_save(&r.state, first), 0);
	cr_assert_eq(state_save(&r.state, second), 0);
	file_of(second, p, sizeof(p));
	cr_assert_eq(truncate(p, 20), 0, "%s", p); /* torn */
	catalog_dir(CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	snprintf(other, sizeof(other), "%s/notes.txt", cdir); /* misnamed */
	write_rename(other, "an operator's note");
	/* a whole catalog under another revision's name: edited */
	file_of(first, p, sizeof(p));
	snprintf(other, sizeof(other), "%s/fnv1a64-0123456789abcdef.json", cdir);
	cr_assert_eq(link(p, other), 0);
	state_rig_reopen(&r);
	n = state_load(&r.state, CATALOG_DEFAULT_NAME, loaded, 4);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(loaded[0]->digest, first->digest);
	free_all(loaded, n);
	cr_assert_eq(state_rig_count(&r.metrics.state_files_skipped), 3);
	scratch_logged(r.log_file, "skipped", 3); /* one log line each */
	scratch_logged(r.log_file, "notes.txt: not a revision file", 1);
	scratch_logged(r.log_file, "torn or edited", 1);
	scratch_logged(r.log_file, "not the fnv1a64:0123456789abcdef", 1);
}

Test(state, a_failed_write_is_counted_logged_once_per_cause_and_reported, .init = two_revisions,
     .fini = two_revisions_done)
{
	struct api_status st;
	char cdir[192], p[320];

	catalog_dir(CATALOG_DEFAULT_NAME, cdir, sizeof(cdir));
	write_rename(cdir, "a file where the catalog's directory goes");
	cr_assert_eq(state_save(&r.state, first), -1);
	cr_assert_eq(state_save(&r.state, second), -1);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 2);
	scratch_logged(r.log_file, "cannot keep revisions", 1); /* once per cause */
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
	cr_assert_eq(state_save(&r.state, first), 0);
	file_of(first, p, sizeof(p));
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(rmdir(cdir), 0);
	write_rename(cdir, "the same cause again");
	cr_assert_eq(state_save(&r.state, second), -1);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 3);
	scratch_logged(r.log_file, "cannot keep revisions", 2);
}

Test(state, the_streams_numbering_survives_a_reopen_within_its_bound, .init = scratch_setup,
     .fini = scratch_teardown)
{
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
