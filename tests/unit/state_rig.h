/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A state directory (server/state.c) for the unit tests of what keeps
 * files in one (test_state.c, test_journal.c): DIR/state under the
 * scratch directory (scratch.h; scratch_setup first), its own metrics and
 * its log caught in a temporary file. state_rig_reopen is the restart: the
 * same directory, fresh metrics and log, as a new process would have.
 */
#ifndef SPLITKD_TEST_STATE_RIG_H
#define SPLITKD_TEST_STATE_RIG_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "scratch.h"
#include "state.h"

struct state_rig {
	char dir[96];
	struct state state;
	struct metrics metrics;
	struct log log;
	FILE *log_file;
	unsigned max_revisions;
};

static inline void state_rig_open(struct state_rig *r, unsigned max_revisions)
{
	char err[256] = "";

	snprintf(r->dir, sizeof(r->dir), "%s/state", dir);
	r->max_revisions = max_revisions;
	cr_assert_eq(metrics_init(&r->metrics), 0);
	r->log_file = scratch_log(&r->log);
	cr_assert_eq(state_open(&r->state, r->dir, max_revisions, &r->log, &r->metrics, err,
				sizeof(err)), 0, "%s", err);
}

static inline void state_rig_close(struct state_rig *r)
{
	state_close(&r->state);
	metrics_cleanup(&r->metrics);
	fclose(r->log_file);
}

static inline void state_rig_reopen(struct state_rig *r)
{
	unsigned max = r->max_revisions;

	state_rig_close(r);
	state_rig_open(r, max);
}

/* A counter of the rig's metrics, read. */
static inline uint64_t state_rig_count(const atomic_uint_fast64_t *c)
{
	return (uint64_t)atomic_load(c);
}

/* How many entries a directory holds (dot entries aside). */
static inline int state_rig_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(dp, "%s", d);
	while ((e = readdir(dp)) != NULL) {
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	}
	closedir(dp);
	return n;
}

#endif /* SPLITKD_TEST_STATE_RIG_H */
