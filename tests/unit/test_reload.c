/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The reload (server/reload.c) through its own API, no socket: listeners
 * see each swap once, with the catalogs before and after, and nothing
 * else; a catalog file's read names each failure; a kind of source of its
 * own gets the whole cycle (read, check, dedup, swap, keep the last good,
 * status). The watch's own tests are tests/unit/test_watch.c, the
 * reader's tests/unit/test_reload_read.c.
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
#include "scratch.h"

static const char cat_a[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
static const char cat_b[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";

/* -------------------------------------------------------------- notices */

/* What the hearer of the notices saw: how many, and the last one's. */
struct seen {
	int calls, swaps;
	const struct reload_source *source;
	bool ok, changed, is_catalog;
	enum api_trigger trigger;
	char error[API_STATUS_TEXT];
	char from[CATALOG_DIGEST_LEN + 1], to[CATALOG_DIGEST_LEN + 1];
	char before[CATALOG_DIGEST_LEN + 1], after[CATALOG_DIGEST_LEN + 1];
};

static void on_notice(void *cls, const struct reload_attempt *a)
{
	struct seen *s = cls;

	s->calls++;
	s->source = a->source;
	s->ok = a->ok;
	s->changed = a->changed;
	s->trigger = a->trigger;
	s->is_catalog = a->catalog != NULL;
	snprintf(s->error, sizeof(s->error), "%s", a->error);
	snprintf(s->from, sizeof(s->from), "%s", a->from != NULL ? a->from : "-");
	snprintf(s->to, sizeof(s->to), "%s", a->to != NULL ? a->to : "-");
	if (a->catalog == NULL) {
		cr_assert(a->from == NULL && a->before == NULL && a->after == NULL,
			  "another kind's notice has a catalog's members");
		return;
	}
	cr_assert_eq(a->changed, a->after != NULL, "after is a swap's, and every swap's");
	if (a->changed) {
		s->swaps++;
		cr_assert_not_null(a->before);
		memcpy(s->before, a->before->digest, sizeof(s->before));
		memcpy(s->after, a->after->digest, sizeof(s->after));
	}
}

/* A reload over a holder, its log into a temporary file, its notices to
 * `seen`. */
struct rig {
	struct holder holder;
	struct metrics metrics;
	struct log log;
	struct reload reload;
	struct seen seen;
	char digest_a[CATALOG_DIGEST_LEN + 1];
	FILE *log_file;
};

static void rig_start(struct rig *r)
{
	struct reload_read rd;
	struct catalog *cat;

	memset(&r->seen, 0, sizeof(r->seen));
	write_rename(path, cat_a);
	cat = reload_read_file(path, &rd);
	cr_assert_not_null(cat, "%s", rd.error);
	memcpy(r->digest_a, cat->digest, sizeof(r->digest_a));
	cr_assert_eq(holder_init(&r->holder, cat), 0);
	cr_assert_eq(metrics_init(&r->metrics), 0);
	r->log_file = tmpfile();
	cr_assert_not_null(r->log_file);
	log_init(&r->log, false, false, fileno(r->log_file));
	cr_assert_eq(reload_init(&r->reload, &r->holder, path, &rd, &r->log, &r->metrics, on_notice,
				 &r->seen),
		     0);
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

/* One notice an attempt, after its record: a swap names the catalogs it
 * went between, an unchanged or refused attempt names none. */
Test(reload, each_attempt_is_one_notice, .init = scratch_setup, .fini = scratch_teardown)
{
	struct rig r;
	struct seen *s = &r.seen;
	struct api_status st;
	char now[CATALOG_DIGEST_LEN + 1];

	rig_start(&r);
	write_rename(path, cat_b);
	reload_now(&r.reload);
	cr_assert_eq(s->calls, 1);
	cr_assert_eq(s->swaps, 1);
	cr_assert(s->is_catalog && s->ok && s->changed);
	cr_assert_eq(s->source, &r.reload.catalog.src);
	cr_assert_eq(s->trigger, API_TRIGGER_SIGNAL);
	cr_assert_str_eq(s->before, r.digest_a);
	cr_assert_str_eq(s->from, r.digest_a);
	cr_assert_str_eq(s->after, served(&r, now));
	cr_assert_str_eq(s->to, s->after);
	cr_assert_str_neq(s->after, r.digest_a);

	/* the same catalog again (white space aside): a notice, no swap */
	write_rename(path, "  {\"targets\":[{\"name\":\"x\",\"sm_count\":20,"
			   "\"attn_decode_splitk\":\"auto\"}],\"models\":[]}\n");
	reload_now(&r.reload);
	cr_assert_eq(s->calls, 2);
	cr_assert_eq(s->swaps, 1, "a catalog already served was a swap");
	cr_assert(s->ok && !s->changed);
	cr_assert_str_eq(s->from, s->after);
	cr_assert_str_eq(s->to, s->after);
	reload_status(&r.reload, &st);
	cr_assert(st.catalog.last.ok && !st.catalog.last.changed);

	/* refused: the old one stays, the notice and the status say why */
	write_rename(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}");
	reload_now(&r.reload);
	cr_assert_eq(s->calls, 3);
	cr_assert_eq(s->swaps, 1, "a refused file was a swap");
	cr_assert(!s->ok && !s->changed);
	cr_assert_not_null(strstr(s->error, "sm_count"), "%s", s->error);
	cr_assert_str_eq(s->to, "");
	cr_assert_str_eq(served(&r, now), s->after);
	reload_status(&r.reload, &st);
	cr_assert(!st.catalog.last.ok);
	cr_assert_eq(st.catalog.disk, API_DISK_INVALID);
	cr_assert_not_null(strstr(st.catalog.disk_error, "sm_count"), "%s", st.catalog.disk_error);
	cr_assert_eq(st.catalog.last.trigger, API_TRIGGER_SIGNAL);
	cr_assert_eq(st.catalog.reloads_ok, 2);
	cr_assert_eq(st.catalog.reloads_error, 1);

	cr_assert_eq(unlink(path), 0);
	reload_now(&r.reload);
	cr_assert_eq(s->calls, 4);
	reload_status(&r.reload, &st);
	cr_assert_eq(st.catalog.disk, API_DISK_MISSING);
	cr_assert_str_eq(served(&r, now), s->after);
	rig_stop(&r);
}

Test(reload, read_file_names_each_failure, .init = scratch_setup, .fini = scratch_teardown)
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

/* ------------------------------------------------------- a kind of its own */

/* A toy kind over two files: the value is "A+B", and a file that says
 * "bad" is refused. It counts what reload.c asks of it. */
struct toy {
	struct reload_source src;
	char serving[64];
	int checks, swaps;
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

static const struct reload_kind toy_kind = {
	.event = "toy", .max_bytes = 16, .check = toy_check, .swap = toy_swap, .drop = toy_drop,
	.say = toy_say,
};

Test(reload, a_kind_of_its_own_gets_the_whole_cycle, .init = scratch_setup, .fini = scratch_teardown)
{
	struct rig r;
	struct toy t;
	struct api_source_status st;
	char a[160], b[160], err[640];
	struct reload_read_file files[2] = {{"--toy-a", a}, {"--toy-b", b}};

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	memset(&t, 0, sizeof(t));
	rig_start(&r);
	reload_source_init(&t.src, &toy_kind, &t, files, 2, 0);

	/* the start-up load: a missing file is a start-up error naming it */
	write_rename(a, "one");
	cr_assert_eq(reload_add(&r.reload, &t.src, err, sizeof(err)), -1);
	cr_assert_eq(r.reload.num_sources, 1, "a source that failed its start stays out");
	cr_assert_not_null(strstr(err, "--toy-b"), "%s", err);
	cr_assert_eq(t.checks, 0, "the kind saw a read that failed");
	write_rename(b, "two");
	cr_assert_eq(reload_add(&r.reload, &t.src, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(t.serving, "one+two");
	/* the start-up load is published too, as no catalog's */
	cr_assert_eq(r.seen.calls, 2, "one notice each start-up load, failed or not");
	cr_assert_eq(r.seen.source, &t.src);
	cr_assert(!r.seen.is_catalog && r.seen.ok && r.seen.changed);
	cr_assert_eq(r.seen.trigger, API_TRIGGER_START);

	/* the same bytes: unchanged without a check */
	reload_now(&r.reload);
	cr_assert_eq(t.checks, 1);
	cr_assert_not_null(strstr(t.said, "toy 1"), "%s", t.said);

	/* a refused change keeps the value, says why; the next good one swaps */
	write_rename(b, "bad");
	reload_now(&r.reload);
	cr_assert_str_eq(t.serving, "one+two");
	cr_assert_not_null(strstr(t.said, "a bad value: one+bad"), "%s", t.said);
	cr_assert_eq(r.seen.source, &t.src, "the toy's notice was not the last");
	cr_assert(!r.seen.ok && !r.seen.changed);
	cr_assert_not_null(strstr(r.seen.error, "a bad value: one+bad"), "%s", r.seen.error);
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
