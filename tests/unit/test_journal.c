/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The change history (server/journal.c) through its own API, no daemon:
 * entries kept in memory and, with a state directory, on disk across a
 * reopen, newest first; the file rotated at N lines (the disk holds 2N),
 * durably, and a new file made before a line goes in; a torn last line
 * (a crash in the middle of an append) and an edited line skipped, logged
 * and counted (splitkd_state_history_lines_skipped_total), the torn tail
 * cut off; a failure to write counted, the entry still kept in memory.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable.h"
#include "journal.h"
#include "state_rig.h"

/* Each test's journal over its state directory, and a page of it (a
 * test runs in a process of its own). */
static struct state_rig r;
static struct journal j;
static struct history_entry e[8];
static char cur[128], old[128]; /* DIR/history.jsonl and DIR/history.1.jsonl */

static void attempt(struct journal *journal, const char *catalog, bool ok, const char *to)
{
	journal_add(journal, &(struct reload_attempt){
		.catalog = catalog, .trigger = API_TRIGGER_SIGNAL, .ok = ok, .changed = ok,
		.error = ok ? "" : "bad", .from = "", .to = to, .changed_cells = ok ? 3 : 0});
}

/* The page of every entry, newest first; how many. */
static size_t page(struct journal *journal, struct history_entry *out, size_t max)
{
	return journal_page(journal, 0, out, max);
}

/* The lines a file holds (its newlines), -1 when it is missing. */
static int lines_of(const char *p)
{
	FILE *f = fopen(p, "rb");
	int c, n = 0;

	if (f == NULL) {
		return -1;
	}
	while ((c = fgetc(f)) != EOF) {
		n += c == '\n';
	}
	fclose(f);
	return n;
}

static long size_of(const char *p)
{
	struct stat st;

	cr_assert_eq(stat(p, &st), 0, "%s", p);
	return (long)st.st_size;
}

static void append_to(const char *p, const char *text)
{
	FILE *f = fopen(p, "ab");

	cr_assert_not_null(f, "%s", p);
	cr_assert_geq(fputs(text, f), 0);
	cr_assert_eq(fclose(f), 0);
}

/* The state directory, and the history's two files' paths in it. */
static void open_dir(void)
{
	state_rig_open(&r, 4);
	snprintf(cur, sizeof(cur), "%s/" JOURNAL_FILE, r.dir);
	snprintf(old, sizeof(old), "%s/" JOURNAL_OLD_FILE, r.dir);
}

/* A journal of `cap` entries over a new state directory. */
static void start(unsigned cap)
{
	open_dir();
	cr_assert_eq(journal_init(&j, cap, &r.state, &r.log), 0);
}

/* The restart: the journal read again from the directory it wrote. */
static void restart(unsigned cap)
{
	journal_cleanup(&j);
	state_rig_reopen(&r);
	cr_assert_eq(journal_init(&j, cap, &r.state, &r.log), 0);
}

static void stop(void)
{
	journal_cleanup(&j);
	state_rig_close(&r);
}

Test(journal, memory_only_without_a_state_directory, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct log log;
	FILE *log_file = scratch_log(&log);

	cr_assert_eq(journal_init(&j, 2, NULL, &log), 0);
	attempt(&j, "default", true, "fnv1a64:0000000000000001");
	attempt(&j, "default", false, "");
	attempt(&j, "legacy", true, "fnv1a64:0000000000000002");
	cr_assert_eq(page(&j, e, 4), 2, "the last --history entries");
	cr_assert_eq(e[0].seq, 3);
	cr_assert_str_eq(e[0].catalog, "legacy");
	cr_assert_eq(e[1].seq, 2);
	cr_assert(!e[1].ok);
	cr_assert_str_eq(e[1].error, "bad");
	cr_assert_eq(journal_page(&j, 3, e, 4), 1, "before=3: the older one alone");
	cr_assert_eq(state_rig_entries(dir), 0, "nothing on disk");
	journal_cleanup(&j);
	fclose(log_file);
}

Test(journal, entries_survive_a_reopen_and_go_on_numbering, .init = scratch_setup,
     .fini = scratch_teardown)
{
	start(8);
	cr_assert_eq(lines_of(cur), 0, "made (empty) before the first line goes in");
	attempt(&j, "default", true, "fnv1a64:0000000000000001");
	attempt(&j, "default", false, "");
	cr_assert_eq(lines_of(cur), 2);
	restart(8);
	cr_assert_eq(page(&j, e, 8), 2);
	cr_assert_eq(e[0].seq, 2);
	cr_assert(!e[0].ok);
	cr_assert_eq(e[1].seq, 1);
	cr_assert_str_eq(e[1].to, "fnv1a64:0000000000000001");
	cr_assert_eq(e[1].changed_cells, 3);
	attempt(&j, "default", true, "fnv1a64:0000000000000002");
	cr_assert_eq(page(&j, e, 8), 3);
	cr_assert_eq(e[0].seq, 3, "the numbering goes on from the file");
	cr_assert_eq(state_rig_count(&r.metrics.state_history_lines_skipped), 0);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 0);
	stop();
}

Test(journal, the_file_rotates_at_n_lines_and_the_disk_holds_2n, .init = scratch_setup,
     .fini = scratch_teardown)
{
	start(2);
	for (int i = 0; i < 5; i++) {
		attempt(&j, "default", true, "fnv1a64:0000000000000001");
	}
	cr_assert_eq(lines_of(cur), 1, "entry 5 in a new file");
	cr_assert_eq(lines_of(old), 2, "entries 3 and 4 in the previous one");
	/* the lock, catalogs/ and the two files: no temporary left */
	cr_assert_eq(state_rig_entries(r.dir), 4);
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 0);
	restart(2);
	cr_assert_eq(page(&j, e, 8), 2, "the last N of the 2N on disk");
	cr_assert_eq(e[0].seq, 5);
	cr_assert_eq(e[1].seq, 4);
	stop();
}

/* The crash in the middle of an append leaves a last line without its
 * newline; an operator's edit leaves a line whose check fails. Both are
 * skipped with a log line and counted; the torn tail is cut off, so the
 * next append is a line of its own and the next start skips only the
 * edited line, still there. */
Test(journal, a_torn_line_is_skipped_counted_and_cut, .init = scratch_setup,
     .fini = scratch_teardown)
{
	long whole;

	start(8);
	attempt(&j, "default", true, "fnv1a64:0000000000000001");
	append_to(cur, "{\"seq\":2,\"edited\":true}\n");
	whole = size_of(cur);
	append_to(cur, "{\"seq\":3,\"at_ms\":17"); /* ...killed in the middle of the write */
	restart(8);
	cr_assert_eq(page(&j, e, 8), 1, "only the whole line that checks");
	cr_assert_eq(e[0].seq, 1);
	cr_assert_eq(state_rig_count(&r.metrics.state_history_lines_skipped), 2);
	scratch_logged(r.log_file, "skipped a line", 1);
	scratch_logged(r.log_file, "its last line is torn; dropped", 1);
	cr_assert_eq(size_of(cur), whole, "the torn tail is cut off");
	attempt(&j, "default", true, "fnv1a64:0000000000000002");
	cr_assert_eq(lines_of(cur), 3);
	restart(8);
	cr_assert_eq(page(&j, e, 8), 2);
	cr_assert_eq(e[0].seq, 2, "the append after the cut is whole");
	cr_assert_eq(state_rig_count(&r.metrics.state_history_lines_skipped), 1,
		     "the edited line alone, again");
	stop();
}

/* The previous file is never written again: a torn line there is
 * skipped and counted as well, and left as it is. */
Test(journal, a_torn_line_of_the_previous_file_is_counted_and_left, .init = scratch_setup,
     .fini = scratch_teardown)
{
	long torn;

	start(2);
	for (int i = 0; i < 3; i++) {
		attempt(&j, "default", true, "fnv1a64:0000000000000001");
	}
	append_to(old, "{\"seq\":");
	torn = size_of(old);
	restart(2);
	cr_assert_eq(page(&j, e, 8), 2);
	cr_assert_eq(state_rig_count(&r.metrics.state_history_lines_skipped), 1);
	cr_assert_eq(size_of(old), torn);
	stop();
}

/* Writes that fail are the state's: counted, and the entry is still
 * listed from memory. A history.jsonl that cannot be opened, and a
 * rotation whose rename is refused (the appends go on in the current
 * file). */
Test(journal, a_failed_write_is_counted_and_the_entry_kept, .init = scratch_setup,
     .fini = scratch_teardown)
{
	char inner[150];

	open_dir();
	cr_assert_eq(mkdir(cur, 0750), 0); /* no file can be opened there */
	cr_assert_eq(journal_init(&j, 2, &r.state, &r.log), 0);
	attempt(&j, "default", true, "fnv1a64:0000000000000001");
	cr_assert_eq(page(&j, e, 8), 1, "kept in memory");
	cr_assert_geq(state_rig_count(&r.metrics.state_write_errors), 2,
		      "at the start and the add");
	journal_cleanup(&j);
	cr_assert_eq(rmdir(cur), 0);

	state_rig_reopen(&r);
	cr_assert_eq(mkdir(old, 0750), 0);
	snprintf(inner, sizeof(inner), "%s/x", old);
	write_rename(inner, "a directory in the rotation's way");
	cr_assert_eq(journal_init(&j, 2, &r.state, &r.log), 0);
	for (int i = 0; i < 3; i++) {
		attempt(&j, "default", true, "fnv1a64:0000000000000001");
	}
	cr_assert_eq(state_rig_count(&r.metrics.state_write_errors), 1, "the rename, refused");
	cr_assert_eq(lines_of(cur), 3, "the appends went on in the current file");
	cr_assert_eq(page(&j, e, 8), 2);
	cr_assert_eq(e[0].seq, 3, "nothing of the first run reached the disk");
	stop();
}
