/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The reload (server/reload.c) and the watch (server/watch.c) through their
 * own APIs, no socket: listeners see each swap once, with the catalogs
 * before and after, and nothing else; a watch calls back once per burst of
 * events, ignores other files of the directory, asks for a second look
 * when told to, and comes back after its directory is removed and made
 * again (the watch that died after a ConfigMap update, flagd #42).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "reload.h"
#include "watch.h"

static char dir[64], path[128];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/splitkd-reload-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/catalog.json", dir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static void write_rename(const char *to, const char *text)
{
	char tmp[160];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	f = fopen(tmp, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, to), 0);
}

static const char cat_a[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
static const char cat_b[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";

/* ------------------------------------------------------------ listeners */

struct seen {
	int calls;
	char before[CATALOG_DIGEST_LEN + 1], after[CATALOG_DIGEST_LEN + 1];
};

static void on_swap(void *cls, const struct catalog *before, const struct catalog *after)
{
	struct seen *s = cls;

	s->calls++;
	memcpy(s->before, before->digest, sizeof(s->before));
	memcpy(s->after, after->digest, sizeof(s->after));
}

/* A reload over a holder, its log into a temporary file. */
struct rig {
	struct holder holder;
	struct metrics metrics;
	struct log log;
	struct reload reload;
	char digest_a[CATALOG_DIGEST_LEN + 1];
	FILE *log_file;
};

static void rig_start(struct rig *r)
{
	struct reload_read rd;
	struct catalog *cat;

	write_rename(path, cat_a);
	cat = reload_read_file(path, &rd);
	cr_assert_not_null(cat, "%s", rd.error);
	memcpy(r->digest_a, cat->digest, sizeof(r->digest_a));
	cr_assert_eq(holder_init(&r->holder, cat), 0);
	cr_assert_eq(metrics_init(&r->metrics), 0);
	r->log_file = tmpfile();
	cr_assert_not_null(r->log_file);
	log_init(&r->log, false, false, fileno(r->log_file));
	cr_assert_eq(reload_init(&r->reload, &r->holder, path, &rd, &r->log, &r->metrics), 0);
}

static void rig_stop(struct rig *r)
{
	reload_cleanup(&r->reload);
	holder_cleanup(&r->holder);
	metrics_cleanup(&r->metrics);
	fclose(r->log_file);
}

static const char *served(struct rig *r, char out[CATALOG_DIGEST_LEN + 1])
{
	struct holder_ref *ref;
	const struct catalog *cat = holder_acquire(&r->holder, &ref);

	memcpy(out, cat->digest, CATALOG_DIGEST_LEN + 1);
	holder_release(&r->holder, ref);
	return out;
}

Test(reload, listeners_see_each_swap_once, .init = setup, .fini = teardown)
{
	struct rig r;
	struct seen s = {0};
	struct api_status st;
	char now[CATALOG_DIGEST_LEN + 1];

	rig_start(&r);
	cr_assert_eq(reload_add_listener(&r.reload, on_swap, &s), 0);

	write_rename(path, cat_b);
	reload_now(&r.reload);
	cr_assert_eq(s.calls, 1);
	cr_assert_str_eq(s.before, r.digest_a);
	cr_assert_str_eq(s.after, served(&r, now));
	cr_assert_str_neq(s.after, r.digest_a);

	/* the same catalog again (white space aside): no swap, no call */
	write_rename(path, "  {\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],"
			   "\"models\":[]}\n");
	reload_now(&r.reload);
	cr_assert_eq(s.calls, 1, "a listener was called for a catalog already served");
	reload_status(&r.reload, &st);
	cr_assert(st.last.ok && !st.last.changed);

	/* refused: no call, the old one stays, the status says why */
	write_rename(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}");
	reload_now(&r.reload);
	cr_assert_eq(s.calls, 1, "a listener was called for a refused file");
	cr_assert_str_eq(served(&r, now), s.after);
	reload_status(&r.reload, &st);
	cr_assert(!st.last.ok);
	cr_assert_eq(st.disk, API_DISK_INVALID);
	cr_assert_not_null(strstr(st.disk_error, "sm_count"), "%s", st.disk_error);
	cr_assert_eq(st.last.trigger, API_TRIGGER_SIGNAL);
	cr_assert_eq(st.reloads_ok, 2);
	cr_assert_eq(st.reloads_error, 1);
	cr_assert_eq(atomic_load(&r.metrics.last_reload_ok), false);

	cr_assert_eq(unlink(path), 0);
	reload_now(&r.reload);
	reload_status(&r.reload, &st);
	cr_assert_eq(st.disk, API_DISK_MISSING);
	cr_assert_str_eq(served(&r, now), s.after);
	rig_stop(&r);
}

Test(reload, listener_table_is_bounded, .init = setup, .fini = teardown)
{
	struct rig r;
	struct seen s = {0};

	rig_start(&r);
	for (int i = 0; i < RELOAD_MAX_LISTENERS; i++) {
		cr_assert_eq(reload_add_listener(&r.reload, on_swap, &s), 0);
	}
	cr_assert_eq(reload_add_listener(&r.reload, on_swap, &s), -1);
	write_rename(path, cat_b);
	reload_now(&r.reload);
	cr_assert_eq(s.calls, RELOAD_MAX_LISTENERS, "every listener once");
	rig_stop(&r);
}

Test(reload, read_file_names_each_failure, .init = setup, .fini = teardown)
{
	struct reload_read rd;
	char sub[160];

	cr_assert_null(reload_read_file(path, &rd));
	cr_assert_eq(rd.state, API_DISK_MISSING);
	write_rename(path, "");
	cr_assert_null(reload_read_file(path, &rd));
	cr_assert_eq(rd.state, API_DISK_INVALID);
	cr_assert_not_null(strstr(rd.error, "empty"), "%s", rd.error);
	snprintf(sub, sizeof(sub), "%s/adir", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_null(reload_read_file(sub, &rd));
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);
	snprintf(sub, sizeof(sub), "%s/afifo", dir);
	cr_assert_eq(mkfifo(sub, 0644), 0);
	cr_assert_null(reload_read_file(sub, &rd), "a FIFO must not block or load");
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);
}

/* The one reader under any bound (the TLS files' is 1 MiB, the catalog's
 * 4 MiB): exactly `max` bytes read whole, one more refused with the bound
 * named; a FIFO refused without blocking whatever the bound. */
Test(reload, read_bytes_holds_its_caller_s_bound, .init = setup, .fini = teardown)
{
	static const size_t bounds[] = {1, 16, 4096};
	struct reload_read rd;
	char sub[160], want[64];

	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		char text[4098];
		size_t len = 0;
		char *got;

		memset(text, 'x', bounds[i] + 1);
		text[bounds[i]] = '\0';
		write_rename(path, text);
		got = reload_read_bytes(path, bounds[i], &len, &rd);
		cr_assert_not_null(got, "%zu bytes under a bound of %zu: %s", bounds[i], bounds[i],
				   rd.error);
		cr_assert_eq(len, bounds[i]);
		cr_assert(memcmp(got, text, len) == 0);
		free(got);
		text[bounds[i]] = 'x';
		text[bounds[i] + 1] = '\0';
		write_rename(path, text);
		cr_assert_null(reload_read_bytes(path, bounds[i], &len, &rd));
		cr_assert_eq(rd.state, API_DISK_INVALID);
		snprintf(want, sizeof(want), "larger than %zu bytes", bounds[i]);
		cr_assert_not_null(strstr(rd.error, want), "%s", rd.error);
	}
	snprintf(sub, sizeof(sub), "%s/afifo", dir);
	cr_assert_eq(mkfifo(sub, 0644), 0);
	cr_assert_null(reload_read_bytes(sub, 1u << 20, &(size_t){0}, &rd));
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);
}

/* ------------------------------------------------------------ the watch */

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

Test(watch, one_call_per_burst_none_for_other_files, .init = setup, .fini = teardown)
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

Test(watch, a_second_look_when_asked, .init = setup, .fini = teardown)
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

Test(watch, comes_back_after_its_directory_goes, .init = setup, .fini = teardown)
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

Test(watch, stop_is_prompt_and_null_safe, .init = setup, .fini = teardown)
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
