/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A reload over a holder for the unit tests of what a reload drives
 * (test_catalogdir.c, test_tls.c): the holder serving the catalog file at
 * `path` as its default `name` (the file the reload then follows, its
 * catsource the reload's first source), or, with no path, a catalog of
 * the test's own, described and never read; its own metrics; its log
 * caught in a temporary file (scratch.h); nobody hears its notices.
 * reload_rig_stop undoes it all, the reload first (its watch stops).
 */
#ifndef SPLITKD_TEST_RELOAD_RIG_H
#define SPLITKD_TEST_RELOAD_RIG_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "catsource.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "reload.h"
#include "scratch.h"

struct reload_rig {
	struct holder holder;
	struct metrics metrics;
	struct log log;
	FILE *log_file;
	struct reload reload;
	struct catsource catalog; /* the default's */
};

static inline void reload_rig_start(struct reload_rig *r, const char *path, const char *name)
{
	struct holder_options ho = {.name = name};
	struct reload_read rd;
	char err[640] = "";
	struct catalog *cat = path != NULL ? catsource_load(path, &rd, err, sizeof(err))
					   : scratch_catalog(10);

	cr_assert_not_null(cat, "%s", err);
	cr_assert_eq(holder_init_with(&r->holder, cat, &ho), 0);
	cr_assert_eq(metrics_init(&r->metrics), 0);
	r->log_file = scratch_log(&r->log);
	reload_init(&r->reload, &r->log, NULL, NULL);
	cr_assert_eq(catsource_add(&r->catalog, &r->reload, &r->holder, NULL, path,
				   path != NULL ? &rd : NULL, 0), 0);
}

static inline void reload_rig_stop(struct reload_rig *r)
{
	reload_cleanup(&r->reload);
	holder_cleanup(&r->holder);
	metrics_cleanup(&r->metrics);
	fclose(r->log_file);
}

#endif /* SPLITKD_TEST_RELOAD_RIG_H */
