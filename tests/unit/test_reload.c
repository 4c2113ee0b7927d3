/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The reload engine (server/reload.c) through its own API, no socket and
 * no catalog: a kind of its own gets the whole cycle (read, check, dedup,
 * swap, keep the last good, status), each attempt is one notice (the
 * start-up load's too) that a kind adds its members to, the status is
 * every source's report in the order they were added, a source with no
 * file is described and never read, and one started from state says so
 * until its file is good. The catalog kind's tests are
 * tests/unit/test_catsource.c, the reader's tests/unit/test_reload_read.c,
 * the watch's tests/unit/test_watch.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "heard.h"
#include "reload.h"
#include "scratch.h"

static void on_notice(void *cls, const struct reload_attempt *a)
{
	heard_take(cls, a);
}

/* A reload, its log into a temporary file, its notices to `seen`. */
struct rig {
	struct log log;
	struct reload reload;
	struct heard seen;
	FILE *log_file;
};

static void rig_start(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	r->log_file = tmpfile();
	cr_assert_not_null(r->log_file);
	log_init(&r->log, false, false, fileno(r->log_file));
	reload_init(&r->reload, &r->log, on_notice, &r->seen);
}

static void rig_stop(struct rig *r)
{
	reload_cleanup(&r->reload);
	reload_cleanup(&r->reload); /* twice: safe */
	fclose(r->log_file);
}

/* A toy kind over two files: the value is "A+B", and a file that says
 * "bad" is refused. It counts what reload.c asks of it; its row of the
 * status is its name, and its notices carry that name too. */
struct toy {
	struct reload_source src;
	const char *name;
	char serving[64];
	int checks, swaps, publishes;
	char said[256];
};

static void *toy_check(void *cls, const struct reload_read_text *files, char *err, size_t cap)
{
	struct toy *t = cls;
	char *v = malloc(64);

	t->checks++;
	cr_assert_not_null(v);
	snprintf(v, 64, "%.*s+%.*s", (int)files[0].len, files[0].data, (int)files[1].len,
		 files[1].data);
	if (strstr(v, "bad") != NULL) {
		snprintf(err, cap, "a bad value: %s", v);
		free(v);
		return NULL;
	}
	return v;
}

static int toy_swap(void *cls, void *value, char *err, size_t cap)
{
	struct toy *t = cls;

	(void)err;
	(void)cap;
	t->swaps++;
	snprintf(t->serving, sizeof(t->serving), "%s", (char *)value);
	free(value);
	return 0;
}

static void toy_drop(void *value)
{
	free(value);
}

static void toy_say(void *cls, enum reload_outcome o, const char *why, char *out, size_t cap)
{
	struct toy *t = cls;

	snprintf(out, cap, "toy %d %s", (int)o, why);
	snprintf(t->said, sizeof(t->said), "%s", out);
}

static void toy_report(void *cls, const struct api_source_status *st, struct api_status *out)
{
	struct toy *t = cls;

	if (out->num_named < out->max_named) {
		struct api_named_source *row = &out->named[out->num_named++];

		snprintf(row->name, sizeof(row->name), "%s", t->name);
		row->st = *st;
	}
}

static void toy_publish(void *cls, struct reload_attempt *a)
{
	struct toy *t = cls;

	t->publishes++;
	a->catalog = t->name;
	reload_publish(t->src.owner, a);
}

static const struct reload_kind toy_kind = {
	.event = "toy", .max_bytes = 16, .check = toy_check, .swap = toy_swap, .drop = toy_drop,
	.say = toy_say,
};

/* the same, with a place in the status and members of its own in the notice */
static const struct reload_kind toy_kind_reporting = {
	.event = "toy", .max_bytes = 16, .check = toy_check, .swap = toy_swap, .drop = toy_drop,
	.say = toy_say, .report = toy_report, .publish = toy_publish,
};

/* A toy over DIR/NAME-a and DIR/NAME-b, holding "one" and "two". */
static void toy_files(struct toy *t, const char *name, char a[160], char b[160],
		      struct reload_read_file files[2])
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	snprintf(a, 160, "%s/%s-a", dir, name);
	snprintf(b, 160, "%s/%s-b", dir, name);
	files[0] = (struct reload_read_file){"--toy-a", a};
	files[1] = (struct reload_read_file){"--toy-b", b};
	write_rename(a, "one");
	write_rename(b, "two");
}

Test(reload, a_kind_of_its_own_gets_the_whole_cycle, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;
	struct toy t;
	struct api_source_status st;
	char a[160], b[160], err[640];
	struct reload_read_file files[2];

	rig_start(&r);
	toy_files(&t, "toy", a, b, files);
	cr_assert_eq(unlink(b), 0);
	reload_source_init(&t.src, &toy_kind, &t, files, 2, 0);

	/* the start-up load: a missing file is a start-up error naming it */
	cr_assert_eq(reload_add(&r.reload, &t.src, err, sizeof(err)), -1);
	cr_assert_eq(r.reload.num_sources, 0, "a source that failed its start stays out");
	cr_assert_not_null(strstr(err, "--toy-b"), "%s", err);
	cr_assert_eq(t.checks, 0, "the kind saw a read that failed");
	write_rename(b, "two");
	cr_assert_eq(reload_add(&r.reload, &t.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(t.serving, "one+two");

	/* the same bytes: unchanged without a check */
	reload_now(&r.reload);
	cr_assert_eq(t.checks, 1);
	cr_assert_not_null(strstr(t.said, "toy 1"), "%s", t.said);

	/* a refused change keeps the value, says why; the next good one swaps */
	write_rename(b, "bad");
	reload_now(&r.reload);
	cr_assert_str_eq(t.serving, "one+two");
	cr_assert_not_null(strstr(t.said, "a bad value: one+bad"), "%s", t.said);
	reload_source_status(&t.src, &st);
	cr_assert_eq(st.disk, API_DISK_INVALID);
	cr_assert_eq(st.reloads_error, 1);
	cr_assert(!st.last.ok);

	/* larger than the kind's bound: refused by the reader, before the kind */
	write_rename(a, "0123456789abcdefX");
	reload_now(&r.reload);
	cr_assert_eq(t.checks, 2);
	reload_source_status(&t.src, &st);
	cr_assert_not_null(strstr(st.disk_error, "--toy-a"), "%s", st.disk_error);
	cr_assert_not_null(strstr(st.disk_error, "larger than 16 bytes"), "%s", st.disk_error);

	write_rename(a, "three");
	write_rename(b, "four");
	reload_now(&r.reload);
	cr_assert_str_eq(t.serving, "three+four");
	reload_source_status(&t.src, &st);
	cr_assert(st.last.ok && st.last.changed);
	cr_assert_eq(st.reloads_ok, 2);
	cr_assert_eq(st.reloads_error, 2);
	rig_stop(&r);
}

/* One notice an attempt, the start-up load's too, after its record: what
 * the attempt did, with the kind's members when it has a publish (called
 * once an attempt), none when it has not. */
Test(reload, each_attempt_is_one_notice, .init = scratch_setup, .fini = scratch_teardown)
{
	struct rig r;
	struct toy plain, named;
	char a[2][160], b[2][160], err[640];
	struct reload_read_file files[2][2];
	struct api_source_status st;

	rig_start(&r);
	toy_files(&plain, "plain", a[0], b[0], files[0]);
	toy_files(&named, "named", a[1], b[1], files[1]);
	reload_source_init(&plain.src, &toy_kind, &plain, files[0], 2, 0);
	reload_source_init(&named.src, &toy_kind_reporting, &named, files[1], 2, 0);

	cr_assert_eq(reload_add(&r.reload, &plain.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.seen.calls, 1);
	cr_assert(r.seen.source == &plain.src && r.seen.ok && r.seen.changed);
	cr_assert_eq(r.seen.trigger, API_TRIGGER_START);
	cr_assert(!r.seen.named, "a kind without a publish had members of its own");
	cr_assert_eq(reload_add(&r.reload, &named.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.seen.calls, 2);
	cr_assert_eq(named.publishes, 1);
	cr_assert_str_eq(r.seen.catalog, "named");

	/* a SIGHUP: one notice each, in the order the sources were added */
	write_rename(b[0], "bad");
	reload_now(&r.reload);
	cr_assert_eq(r.seen.calls, 4);
	cr_assert_eq(named.publishes, 2);
	cr_assert(r.seen.source == &named.src && r.seen.ok && !r.seen.changed);
	cr_assert_eq(r.seen.trigger, API_TRIGGER_SIGNAL);

	/* the watch's look: one more notice for new bytes, and its record
	 * before it (the status heard says the attempt) */
	write_rename(b[1], "three");
	cr_assert_eq(reload_source_check(&named.src), RELOAD_SETTLE_MS, "new bytes were tried at once");
	cr_assert_eq(r.seen.calls, 4);
	cr_assert_eq(reload_source_check(&named.src), 0);
	cr_assert_eq(r.seen.calls, 5);
	cr_assert(r.seen.ok && r.seen.changed);
	cr_assert_eq(r.seen.trigger, API_TRIGGER_WATCH);
	reload_source_status(&named.src, &st);
	cr_assert_eq(st.last.trigger, API_TRIGGER_WATCH);
	cr_assert_eq(reload_source_check(&named.src), 0);
	cr_assert_eq(r.seen.calls, 5, "the same bytes looked at again were an attempt");

	/* the refused one's notice said why */
	reload_source_check(&plain.src);
	reload_source_check(&plain.src);
	cr_assert_eq(r.seen.calls, 5, "the failure tried last was tried again");
	write_rename(a[0], "five");
	cr_assert_eq(reload_source_check(&plain.src), RELOAD_SETTLE_MS);
	cr_assert_eq(reload_source_check(&plain.src), 0);
	cr_assert_eq(r.seen.calls, 6);
	cr_assert(r.seen.source == &plain.src && !r.seen.ok);
	cr_assert_not_null(strstr(r.seen.error, "a bad value: five+bad"), "%s", r.seen.error);
	rig_stop(&r);
}

/* The status is every source's report, in the order they were added (one
 * removed leaves the others' order); a source with no file is described
 * there and never read; one started from state says so until a good
 * attempt. */
Test(reload, the_status_is_every_source_s_report_in_order, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;
	struct toy bare, one, two;
	char a[2][160], b[2][160], err[640];
	struct reload_read_file files[2][2];
	struct api_named_source rows[4];
	struct api_status st = {.named = rows, .max_named = 4};
	struct reload_read refused = {.state = API_DISK_INVALID, .error = "a bad start"};

	rig_start(&r);
	memset(&bare, 0, sizeof(bare));
	bare.name = "bare";
	reload_source_init(&bare.src, &toy_kind_reporting, &bare, NULL, 0, 5);
	cr_assert_eq(reload_add_serving(&r.reload, &bare.src, 0), 0);
	toy_files(&one, "one", a[0], b[0], files[0]);
	toy_files(&two, "two", a[1], b[1], files[1]);
	reload_source_init(&one.src, &toy_kind_reporting, &one, files[0], 2, 0);
	reload_source_init(&two.src, &toy_kind_reporting, &two, files[1], 2, 0);
	cr_assert_eq(reload_add(&r.reload, &one.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(reload_add(&r.reload, &two.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(reload_watch_start(&r.reload, err, sizeof(err)), 0, "%s", err);

	reload_now(&r.reload);
	cr_assert_eq(bare.checks, 0, "a source with no file was read");
	cr_assert_eq(bare.publishes, 0, "a source with no file was attempted");
	reload_status(&r.reload, &st);
	cr_assert_eq(st.num_named, 3);
	cr_assert_str_eq(rows[0].name, "bare");
	cr_assert_str_eq(rows[1].name, "one");
	cr_assert_str_eq(rows[2].name, "two");
	cr_assert_eq(rows[0].st.disk, API_DISK_NONE);
	cr_assert_eq(rows[0].st.watch, API_WATCH_OFF, "a source with no file was watched");
	cr_assert_str_eq(rows[0].st.source, "");
	cr_assert(rows[0].st.last.ok && rows[0].st.last.trigger == API_TRIGGER_START);
	cr_assert_str_eq(rows[1].st.source, a[0]);
	cr_assert_eq(rows[1].st.reloads_ok, 1);

	reload_source_from_state(&one.src, &refused);
	reload_status(&r.reload, &st);
	cr_assert(rows[1].st.started_from_state && !rows[1].st.last.ok);
	cr_assert_eq(rows[1].st.disk, API_DISK_INVALID);
	cr_assert_str_eq(rows[1].st.last.error, "a bad start");
	/* the same bytes read again are no "unchanged": what serves is not theirs */
	reload_now(&r.reload);
	cr_assert_eq(one.swaps, 2, "the file's bytes were not tried after a start from state");
	reload_status(&r.reload, &st);
	cr_assert(!rows[1].st.started_from_state && rows[1].st.last.ok);

	reload_remove(&r.reload, &one.src);
	reload_status(&r.reload, &st);
	cr_assert_eq(st.num_named, 2);
	cr_assert_str_eq(rows[0].name, "bare");
	cr_assert_str_eq(rows[1].name, "two");
	rig_stop(&r);
}
