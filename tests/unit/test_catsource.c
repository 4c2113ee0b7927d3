/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The catalog kind (server/catsource.c) over a real reload and holder, no
 * socket: each attempt's notice names its catalog and, for a swap, the
 * catalogs it went between (an unchanged or refused one names none); the
 * status has the default's members and a row a catalog, the default's
 * first; a catalog file's load names each failure, and no file is the
 * embedded catalog.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catsource.h"
#include "heard.h"
#include "holder.h"
#include "log.h"
#include "reload.h"
#include "scratch.h"

static const char cat_a[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
static const char cat_b[] =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";

/* What the hearer of the notices saw: the members every kind has, and a
 * catalog's. */
struct seen {
	struct heard h;
	int swaps;
	char from[CATALOG_DIGEST_LEN + 1], to[CATALOG_DIGEST_LEN + 1];
	char before[CATALOG_DIGEST_LEN + 1], after[CATALOG_DIGEST_LEN + 1];
};

static void on_notice(void *cls, const struct reload_attempt *a)
{
	struct seen *s = cls;

	heard_take(&s->h, a);
	cr_assert(s->h.named, "a catalog's notice named no catalog");
	snprintf(s->from, sizeof(s->from), "%s", a->from);
	snprintf(s->to, sizeof(s->to), "%s", a->to);
	cr_assert_eq(a->changed, a->after != NULL, "after is a swap's, and every swap's");
	cr_assert_eq(a->changed, a->before != NULL, "before is a swap's, and every swap's");
	if (a->changed) {
		s->swaps++;
		memcpy(s->before, a->before->digest, sizeof(s->before));
		memcpy(s->after, a->after->digest, sizeof(s->after));
	}
}

/* A reload over a holder serving `path` as its default catalog, its log
 * into a temporary file, its notices to `seen`. */
struct rig {
	struct holder holder;
	struct log log;
	struct reload reload;
	struct catsource catalog;
	struct seen seen;
	char digest_a[CATALOG_DIGEST_LEN + 1];
	FILE *log_file;
};

static void rig_start(struct rig *r)
{
	struct reload_read rd;
	struct catalog *cat;
	char err[640];

	memset(r, 0, sizeof(*r));
	write_rename(path, cat_a);
	cat = catsource_load(path, &rd, err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	memcpy(r->digest_a, cat->digest, sizeof(r->digest_a));
	cr_assert_eq(holder_init(&r->holder, cat), 0);
	r->log_file = tmpfile();
	cr_assert_not_null(r->log_file);
	log_init(&r->log, false, false, fileno(r->log_file));
	reload_init(&r->reload, &r->log, on_notice, &r->seen);
	cr_assert_eq(catsource_add(&r->catalog, &r->reload, &r->holder, NULL, path, &rd, 0), 0);
}

static void rig_stop(struct rig *r)
{
	reload_cleanup(&r->reload);
	holder_cleanup(&r->holder);
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

Test(catsource, each_attempt_s_notice_names_the_catalogs, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;
	struct seen *s = &r.seen;
	struct api_status st = {0};
	char now[CATALOG_DIGEST_LEN + 1];

	rig_start(&r);
	write_rename(path, cat_b);
	reload_now(&r.reload);
	cr_assert_eq(s->h.calls, 1);
	cr_assert(s->h.ok && s->h.changed);
	cr_assert_eq(s->h.source, &r.catalog.src);
	cr_assert_str_eq(s->h.catalog, "default");
	cr_assert_str_eq(s->before, r.digest_a);
	cr_assert_str_eq(s->from, r.digest_a);
	cr_assert_str_eq(s->after, served(&r, now));
	cr_assert_str_eq(s->to, s->after);
	cr_assert_str_neq(s->after, r.digest_a);
	reload_status(&r.reload, &st);
	cr_assert_str_eq(st.revision, s->after);

	/* the same catalog again (white space aside): a notice, no swap */
	write_rename(path, "  {\"targets\":[{\"name\":\"x\",\"sm_count\":20,"
			   "\"attn_decode_splitk\":\"auto\"}],\"models\":[]}\n");
	reload_now(&r.reload);
	cr_assert_eq(s->h.calls, 2);
	cr_assert_eq(s->swaps, 1, "a catalog already served was a swap");
	cr_assert(s->h.ok && !s->h.changed);
	cr_assert_str_eq(s->from, s->after);
	cr_assert_str_eq(s->to, s->after);
	reload_status(&r.reload, &st);
	cr_assert(st.catalog.last.ok && !st.catalog.last.changed);

	/* refused: the old one stays, the notice and the status say why */
	write_rename(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}");
	reload_now(&r.reload);
	cr_assert_eq(s->h.calls, 3);
	cr_assert_eq(s->swaps, 1, "a refused file was a swap");
	cr_assert(!s->h.ok && !s->h.changed);
	cr_assert_not_null(strstr(s->h.error, "sm_count"), "%s", s->h.error);
	cr_assert_str_eq(s->from, s->after);
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
	cr_assert_eq(s->h.calls, 4);
	reload_status(&r.reload, &st);
	cr_assert_eq(st.catalog.disk, API_DISK_MISSING);
	cr_assert_str_eq(served(&r, now), s->after);
	rig_stop(&r);
}

/* The default's row first, each named catalog's after it with its own
 * revision; a named catalog's swap names it, and leaves the default. */
Test(catsource, a_row_a_catalog_the_default_s_first, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;
	struct catsource named;
	struct reload_read rd;
	struct catalog *cat;
	char other[160], err[640], digest_b[CATALOG_DIGEST_LEN + 1];
	struct api_named_source rows[3];
	struct api_status st = {.named = rows, .max_named = 3};

	rig_start(&r);
	snprintf(other, sizeof(other), "%s/other.json", dir);
	write_rename(other, cat_b);
	cat = catsource_load(other, &rd, err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	memcpy(digest_b, cat->digest, sizeof(digest_b));
	cr_assert_eq(holder_swap_named(&r.holder, "other", cat, other), 0);
	cr_assert_eq(catsource_add(&named, &r.reload, &r.holder, "other", other, &rd, 0), 0);

	reload_status(&r.reload, &st);
	cr_assert_eq(st.num_named, 2);
	cr_assert_str_eq(st.revision, r.digest_a);
	cr_assert_str_eq(rows[0].name, "default");
	cr_assert_str_eq(rows[0].revision, r.digest_a);
	cr_assert_str_eq(rows[0].st.source, path);
	cr_assert_str_eq(rows[1].name, "other");
	cr_assert_str_eq(rows[1].revision, digest_b);
	cr_assert_str_eq(rows[1].st.source, other);

	write_rename(other, cat_a);
	reload_now(&r.reload);
	cr_assert_eq(r.seen.h.calls, 2, "one notice a catalog");
	cr_assert_eq(r.seen.h.source, &named.src);
	cr_assert_str_eq(r.seen.h.catalog, "other");
	cr_assert_str_eq(r.seen.before, digest_b);
	cr_assert_str_eq(r.seen.after, r.digest_a);
	reload_status(&r.reload, &st);
	cr_assert_str_eq(rows[1].revision, r.digest_a);
	cr_assert_str_eq(st.revision, r.digest_a, "the default's revision moved");
	rig_stop(&r);
}

Test(catsource, load_names_each_failure, .init = scratch_setup, .fini = scratch_teardown)
{
	struct reload_read rd;
	struct catalog *cat;
	char sub[160], err[640];

	cr_assert_null(catsource_load(path, &rd, err, sizeof(err)));
	cr_assert_eq(rd.state, API_DISK_MISSING);
	cr_assert_str_eq(err, rd.error);
	write_rename(path, "");
	cr_assert_null(catsource_load(path, &rd, err, sizeof(err)));
	cr_assert_eq(rd.state, API_DISK_INVALID);
	cr_assert_not_null(strstr(rd.error, "empty"), "%s", rd.error);
	write_rename(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}],\"models\":[]}");
	cr_assert_null(catsource_load(path, NULL, err, sizeof(err)));
	cr_assert_not_null(strstr(err, path), "%s", err);
	cr_assert_not_null(strstr(err, "sm_count"), "%s", err);
	snprintf(sub, sizeof(sub), "%s/adir", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_null(catsource_load(sub, &rd, err, sizeof(err)));
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);
	snprintf(sub, sizeof(sub), "%s/afifo", dir);
	cr_assert_eq(mkfifo(sub, 0644), 0);
	cr_assert_null(catsource_load(sub, &rd, err, sizeof(err)), "a FIFO must not block or load");
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);

	/* no file: the embedded catalog, and nothing read */
	cat = catsource_load(NULL, &rd, err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	cr_assert_gt(cat->num_targets, 0);
	cr_assert_eq(rd.state, API_DISK_NONE);
	catalog_free(cat);
}
