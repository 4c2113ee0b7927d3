/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * --catalog-dir (server/catalogdir.c) through its own API, over a real
 * reload, holder and watch, no socket: which entries of the directory are
 * catalogs (NAME.json, NAME a catalog name) and which are ignored, with
 * one log line each (dot entries silently); the default picked by name;
 * every catalog comes into service through the owner's hold (start-up's
 * invalid files too, for the state directory's kept revision); a file
 * added while running is served once settled, an invalid one refused; a
 * file removed stops serving its catalog and no other, the default's
 * file excepted.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalogdir.h"
#include "reload_rig.h"

#define WAIT_MS 5000 /* the watch's debounce and settle, many times over */

static const char valid[] = "{\"targets\":[{\"name\":\"x\",\"sm_count\":10,"
			    "\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";

/* The owner's side: main.c's hold, without a state directory unless
 * `kept` is set (then an invalid file at start serves it instead). */
struct rig {
	struct reload_rig base;
	struct catalogdir *cd;
	char a_path[160];
	bool kept; /* "the state directory kept a revision" of every catalog */
	atomic_int holds, holds_invalid, holds_watch;
};

static int hold(void *cls, const char *name, const char *path, struct catalog *cat,
		const char *why, enum api_trigger trigger, bool *from_state, char *err, size_t cap)
{
	struct rig *r = cls;
	int rc;

	atomic_fetch_add(&r->holds, 1);
	atomic_fetch_add(&r->holds_watch, trigger == API_TRIGGER_WATCH);
	*from_state = false;
	if (cat == NULL) {
		atomic_fetch_add(&r->holds_invalid, 1);
		if (!r->kept) {
			snprintf(err, cap, "%s (and no revision kept)", why);
			return -1;
		}
		cat = scratch_catalog(77);
		*from_state = true;
	}
	rc = holder_swap_named(&r->base.holder, name, cat, path);
	if (rc != 0) {
		snprintf(err, cap, "%s", holder_swap_error(rc));
		return -1;
	}
	return 0;
}

static void in_dir(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

static void put(const char *name, const char *text)
{
	char p[160];

	in_dir(name, p, sizeof(p));
	write_rename(p, text);
}

/* The rig over the scratch directory, whose a.json is the default. */
static void rig_start(struct rig *r, bool kept, bool watch)
{
	struct reload_rig *b = &r->base;
	char err[256] = "";

	memset(r, 0, sizeof(*r));
	r->kept = kept;
	in_dir("a.json", r->a_path, sizeof(r->a_path));
	reload_rig_start(b, r->a_path, "a");
	r->cd = catalogdir_new(dir, "a", hold, r);
	cr_assert_not_null(r->cd);
	/* the directory's events drive the listing; its periodic check (an
	 * hour) never comes within a test */
	cr_assert_eq(catalogdir_start(r->cd, &b->reload, &b->holder, &b->metrics, &b->log, 3600,
				      err, sizeof(err)), 0, "%s", err);
	if (watch) {
		cr_assert_eq(reload_watch_start(&b->reload, err, sizeof(err)), 0, "%s", err);
	}
}

static void rig_stop(struct rig *r)
{
	reload_rig_stop(&r->base); /* the watch first */
	catalogdir_free(r->cd);
}

static bool serves(struct rig *r, const char *name)
{
	struct holder_ref *ref;
	const struct catalog *cat = holder_acquire_named(&r->base.holder, name, &ref);

	if (cat != NULL) {
		holder_release(&r->base.holder, ref);
	}
	return cat != NULL;
}

/* Whether `name` is served (`want`) within WAIT_MS. */
static bool comes_to(struct rig *r, const char *name, bool want)
{
	for (long waited = 0; waited < WAIT_MS && serves(r, name) != want; waited += 20) {
		sleep_ms(20);
	}
	return serves(r, name) == want;
}

/* Whether the log says `needle` within WAIT_MS. */
static bool log_says(struct rig *r, const char *needle)
{
	bool said = false;

	for (long waited = 0; waited < WAIT_MS && !said; waited += 20) {
		char *log = scratch_log_text(r->base.log_file);

		said = strstr(log, needle) != NULL;
		free(log);
		if (!said) {
			sleep_ms(20);
		}
	}
	return said;
}

Test(catalogdir, the_default_is_named_or_the_first_by_name, .init = scratch_setup,
     .fini = scratch_teardown)
{
	char p[PATH_MAX], name[CATALOG_NAME_MAX + 1], err[256], gone[160];

	put("notes.txt", "not a catalog");
	cr_assert_eq(catalogdir_default(dir, NULL, p, sizeof(p), name, sizeof(name), err,
					sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "holds no NAME.json catalog"), "%s", err);
	put("zeta.json", valid);
	put("beta.json", valid);
	put("Alpha.json", valid); /* no catalog name: never the default */
	cr_assert_eq(catalogdir_default(dir, NULL, p, sizeof(p), name, sizeof(name), err,
					sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(name, "beta");
	cr_assert_not_null(strstr(p, "/beta.json"), "%s", p);
	cr_assert_eq(catalogdir_default(dir, "zeta", p, sizeof(p), name, sizeof(name), err,
					sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(name, "zeta", "--default-catalog names it");
	in_dir("gone", gone, sizeof(gone));
	cr_assert_eq(catalogdir_default(gone, NULL, p, sizeof(p), name, sizeof(name), err,
					sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "cannot read the directory"), "%s", err);
}

/* Which entries are catalogs: NAME.json with NAME 1 to 63 of a-z 0-9 . _ -
 * (a letter or digit first). Every other entry is ignored with one log
 * line, however many listings see it; dot entries (the kubelet's ..data)
 * silently. */
Test(catalogdir, what_is_a_catalog_and_what_is_ignored, .init = scratch_setup,
     .fini = scratch_teardown)
{
	static const struct {
		const char *entry;
		const char *catalog; /* NULL: ignored, with a log line */
	} cases[] = {
		{"b.json", "b"},
		{"ok.name_1-2.json", "ok.name_1-2"},
		{"Upper.json", NULL},
		{"with space.json", NULL},
		{"-dash.json", NULL},
		{"b.json.bak", NULL},
		{"c.yaml", NULL},
		{"json", NULL},
	};
	char long_name[CATALOG_NAME_MAX + 8];
	struct rig r;

	put("a.json", valid);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put(cases[i].entry, valid);
	}
	memset(long_name, 'n', CATALOG_NAME_MAX + 1); /* 64: one too many */
	snprintf(long_name + CATALOG_NAME_MAX + 1, 6, ".json");
	put(long_name, valid);
	put("..data", "the kubelet's"); /* silently */
	rig_start(&r, false, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].catalog != NULL) {
			cr_assert(serves(&r, cases[i].catalog), "%s serves", cases[i].entry);
		}
	}
	cr_assert(serves(&r, "a"), "the default, the --catalog source's own");
	cr_assert_eq(atomic_load(&r.holds), 2, "one hold for each catalog but the default");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[128];

		snprintf(line, sizeof(line), "ignoring %s (", cases[i].entry);
		scratch_logged(r.base.log_file, line, cases[i].catalog == NULL ? 1 : 0);
	}
	scratch_logged(r.base.log_file, "ignoring nnnn", 1); /* a name of 64 */
	scratch_logged(r.base.log_file, "..data", 0);        /* dot entries are silent */
	rig_stop(&r);
}

/* At start an invalid NAME.json goes to the hold as well: with a kept
 * revision it serves (started from the state), without one it is not
 * served and says why. */
Test(catalogdir, an_invalid_file_at_start_serves_only_a_kept_revision, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;

	put("a.json", valid);
	put("broken.json", "{\"targets\":");
	rig_start(&r, false, false);
	cr_assert(!serves(&r, "broken"));
	cr_assert_eq(atomic_load(&r.holds_invalid), 1, "the hold saw the invalid file");
	scratch_logged(r.base.log_file, "catalog broken not served: ", 1);
	scratch_logged(r.base.log_file, "(and no revision kept)", 1);
	rig_stop(&r);

	rig_start(&r, true, false);
	cr_assert(serves(&r, "broken"), "its kept revision serves");
	scratch_logged(r.base.log_file, "catalog broken added", 1);
	rig_stop(&r);
}

/* While running, a new file is served once its bytes settle (through the
 * hold, triggered by the watch); a new invalid one never reaches the hold
 * (no kept revision may stand in for a file that never served). */
Test(catalogdir, a_file_added_while_running_is_served_once_settled, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;

	put("a.json", valid);
	rig_start(&r, true, true);
	cr_assert_eq(atomic_load(&r.holds), 0);
	put("late.json", valid);
	cr_assert(comes_to(&r, "late", true), "late.json served");
	cr_assert_eq(atomic_load(&r.holds_watch), 1);
	put("later-broken.json", "{");
	cr_assert(log_says(&r, "catalog later-broken not served"));
	cr_assert(!serves(&r, "later-broken"));
	cr_assert_eq(atomic_load(&r.holds_invalid), 0, "not handed to the hold");
	rig_stop(&r);
}

/* A file removed: its catalog stops serving, the others go on; the
 * default's file removed keeps the default serving (its last good). */
Test(catalogdir, a_file_removed_stops_serving_that_catalog_alone, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct rig r;
	char p[160];

	put("a.json", valid);
	put("b.json", valid);
	put("c.json", valid);
	rig_start(&r, false, true);
	cr_assert(serves(&r, "b") && serves(&r, "c"));
	in_dir("c.json", p, sizeof(p));
	cr_assert_eq(unlink(p), 0);
	cr_assert(comes_to(&r, "c", false), "c no longer served");
	cr_assert(serves(&r, "b"), "the others go on");
	/* the slot is dropped before its line is logged: wait for the line */
	scratch_await_logged(r.base.log_file, "catalog c removed: ", 1);
	scratch_logged(r.base.log_file, "catalog c removed: ", 1);
	scratch_logged(r.base.log_file, "is gone; no longer served", 1);
	/* the default's file gone, and c.json back: once c serves again, a
	 * listing without a.json has run, and the default still serves */
	cr_assert_eq(unlink(r.a_path), 0);
	put("c.json", valid);
	cr_assert(comes_to(&r, "c", true), "c.json back: a catalog again");
	cr_assert(serves(&r, "a"), "the default keeps its last good");
	rig_stop(&r);
}
