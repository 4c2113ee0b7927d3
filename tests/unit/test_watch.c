/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The watch (server/watch.c) through its own API, no socket: a watch calls
 * back once per burst of events, ignores other files of the directory,
 * asks for a second look when told to, comes back after its directory is
 * removed and made again (the watch that died after a ConfigMap update,
 * flagd #42), and with several entries on its one thread calls only the
 * entry whose file changed. Moved here from test_reload.c, unchanged.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scratch.h"
#include "watch.h"

static const char cat_a[] = "{\"a\":1}";
static const char cat_b[] = "{\"b\":2}";

struct counter {
	atomic_int calls;
	atomic_int again_left; /* calls that still ask for a second look */
};

static unsigned count_call(void *cls)
{
	struct counter *c = cls;

	atomic_fetch_add(&c->calls, 1);
	if (atomic_load(&c->again_left) > 0) {
		atomic_fetch_sub(&c->again_left, 1);
		return 100;
	}
	return 0;
}

static int wait_calls(struct counter *c, int want, long ms)
{
	for (long waited = 0; waited < ms && atomic_load(&c->calls) < want; waited += 10) {
		sleep_ms(10);
	}
	return atomic_load(&c->calls);
}

Test(watch, one_call_per_burst_none_for_other_files, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter c = {0};
	struct watch_options opt = {3600, 500}; /* no periodic check within the test */
	char err[128], other[160];
	struct watch *w;

	write_rename(path, cat_a);
	w = watch_start(path, &opt, count_call, &c, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert(watch_inotify(w));
	/* five saves back to back: well inside one 500 ms debounce */
	for (int i = 0; i < 5; i++) {
		write_rename(path, i % 2 ? cat_a : cat_b);
	}
	cr_assert_eq(wait_calls(&c, 1, 3000), 1);
	sleep_ms(800);
	cr_assert_eq(atomic_load(&c.calls), 1, "a burst of saves called back more than once");
	/* another file of the directory is none of its business */
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	write_rename(other, "hello");
	sleep_ms(800);
	cr_assert_eq(atomic_load(&c.calls), 1, "a change to another file called back");
	watch_stop(w);
}

Test(watch, a_second_look_when_asked, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter c = {0};
	struct watch_options opt = {3600, 50};
	char err[128];
	struct watch *w;

	write_rename(path, cat_a);
	atomic_store(&c.again_left, 1);
	w = watch_start(path, &opt, count_call, &c, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	write_rename(path, cat_b);
	cr_assert_eq(wait_calls(&c, 2, 3000), 2, "the callback asked to be called again, in vain");
	sleep_ms(400);
	cr_assert_eq(atomic_load(&c.calls), 2);
	watch_stop(w);
}

Test(watch, comes_back_after_its_directory_goes, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter c = {0};
	struct watch_options opt = {1, 50};
	char err[128], sub[96], file[160], cmd[160];
	struct watch *w;
	int before;

	snprintf(sub, sizeof(sub), "%s/volume", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(file, sizeof(file), "%s/catalog.json", sub);
	write_rename(file, cat_a);
	w = watch_start(file, &opt, count_call, &c, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert(watch_inotify(w));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sub);
	cr_assert_eq(system(cmd), 0);
	for (int i = 0; i < 300 && watch_inotify(w); i++) {
		sleep_ms(10);
	}
	cr_assert(!watch_inotify(w), "the removed directory is still said to be watched");
	cr_assert_eq(mkdir(sub, 0755), 0);
	for (int i = 0; i < 300 && !watch_inotify(w); i++) { /* the next check, 1 s */
		sleep_ms(10);
	}
	cr_assert(watch_inotify(w), "the watch did not come back with its directory");
	/* and a save is seen again (by its event, or at the latest the check) */
	sleep_ms(200);
	before = wait_calls(&c, 1 << 30, 0);
	write_rename(file, cat_b);
	cr_assert_gt(wait_calls(&c, before + 1, 3000), before);
	watch_stop(w);
}

Test(watch, stop_is_prompt_and_null_safe, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter c = {0};
	struct watch_options opt = {3600, 50};
	char err[128];
	struct watch *w;

	watch_stop(NULL);
	w = watch_start(path, &opt, count_call, &c, err, sizeof(err)); /* no file yet: fine */
	cr_assert_not_null(w, "%s", err);
	watch_stop(w);
	cr_assert_eq(atomic_load(&c.calls), 0);
}

/* Two entries on the one thread: a save of one file calls its entry alone;
 * an entry of two files in two directories hears both. The 3600 s check
 * keeps the periodic calls out of the test. */
Test(watch, entries_on_one_thread_hear_their_own_files, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter one = {0}, two = {0};
	struct watch_options opt = {3600, 50};
	char err[128], sub[96], other[160], third[160];
	const char *pair[2], *single[1] = {path};
	struct watch *w;

	snprintf(sub, sizeof(sub), "%s/second", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(other, sizeof(other), "%s/tls.crt", dir);
	snprintf(third, sizeof(third), "%s/tls.key", sub);
	write_rename(path, cat_a);
	pair[0] = other;
	pair[1] = third;
	w = watch_new(err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(watch_add(w, single, 1, &opt, count_call, &one, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(watch_add(w, pair, 2, &opt, count_call, &two, err, sizeof(err)), 1, "%s", err);
	cr_assert_eq(watch_run(w, err, sizeof(err)), 0, "%s", err);
	cr_assert(watch_entry_inotify(w, 0) && watch_entry_inotify(w, 1) && watch_inotify(w));
	cr_assert(!watch_entry_inotify(w, 2), "no such entry");

	write_rename(path, cat_b);
	cr_assert_eq(wait_calls(&one, 1, 3000), 1);
	sleep_ms(300);
	cr_assert_eq(atomic_load(&two.calls), 0, "another entry's file called this one");

	write_rename(third, "key"); /* the second directory of the second entry */
	cr_assert_eq(wait_calls(&two, 1, 3000), 1);
	write_rename(other, "cert");
	cr_assert_eq(wait_calls(&two, 2, 3000), 2);
	sleep_ms(300);
	cr_assert_eq(atomic_load(&one.calls), 1, "the first entry heard the second's files");
	watch_stop(w);
}

Test(watch, the_entry_table_is_bounded, .init = scratch_setup, .fini = scratch_teardown)
{
	struct counter c = {0};
	struct watch_options opt = {3600, 50};
	const char *many[WATCH_MAX_PATHS + 1];
	char err[128];
	struct watch *w = watch_new(err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	for (int i = 0; i <= WATCH_MAX_PATHS; i++) {
		many[i] = path;
	}
	cr_assert_eq(watch_add(w, many, WATCH_MAX_PATHS + 1, &opt, count_call, &c, err, sizeof(err)),
		     -1, "more paths than an entry holds");
	cr_assert_eq(watch_add(w, many, 0, &opt, count_call, &c, err, sizeof(err)), -1, "no path");
	for (int i = 0; i < WATCH_MAX_ENTRIES; i++) {
		cr_assert_eq(watch_add(w, many, 1, &opt, count_call, &c, err, sizeof(err)), i, "%s", err);
	}
	cr_assert_eq(watch_add(w, many, 1, &opt, count_call, &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "too many"), "%s", err);
	watch_stop(w); /* never run: frees what was added */
}
