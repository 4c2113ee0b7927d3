/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A reload over a holder for the unit tests of what a reload drives
 * (test_catalogdir.c, test_tls.c): the holder serving the catalog file at
 * `path` as its default `name` (the file the reload then follows), or,
 * with no path, a catalog of the test's own and no catalog source; its
 * own metrics; its log caught in a temporary file (scratch.h).
 * reload_rig_stop undoes it all, the reload first (its watch stops).
 */
#ifndef SPLITKD_TEST_RELOAD_RIG_H
#define SPLITKD_TEST_RELOAD_RIG_H

#include <criterion/criterion.h>
#include <stdio.h>

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
};

static inline void reload_rig_start(struct reload_rig *r, const char *path, const char *name)
{
	struct holder_options ho = {.name = name};
	struct reload_read rd;
	struct catalog *cat = path != NULL ? reload_read_file(path, &rd) : scratch_catalog(10);

	cr_assert_not_null(cat, "%s", path != NULL ? rd.error : "");
	cr_assert_eq(holder_init_with(&r->holder, cat, &ho), 0);
	cr_assert_eq(metrics_init(&r->metrics), 0);
	r->log_file = scratch_log(&r->log);
	cr_assert_eq(reload_init(&r->reload, &r->holder, path, path != NULL ? &rd : NULL, &r->log,
				 &r->metrics), 0);
}

static inline void reload_rig_stop(struct reload_rig *r)
{
	reload_cleanup(&r->reload);
	holder_cleanup(&r->holder);
	metrics_cleanup(&r->metrics);
	fclose(r->log_file);
}

#endif /* SPLITKD_TEST_RELOAD_RIG_H */
