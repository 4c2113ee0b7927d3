/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A scratch directory for the server tests that follow files
 * (test_reload.c, test_reload_read.c, test_watch.c): made fresh under
 * /tmp for each test (scratch_setup, as .init) with `path` a file in it,
 * removed after (scratch_teardown, as .fini), and a file written as an
 * editor saves: a temporary beside it, renamed over.
 */
#ifndef SPLITKD_TEST_SCRATCH_H
#define SPLITKD_TEST_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static char dir[64], path[128];

static inline void scratch_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/splitkd-scratch-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/catalog.json", dir);
}

static inline void scratch_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static inline void write_rename(const char *to, const char *text)
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

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

#endif /* SPLITKD_TEST_SCRATCH_H */
