/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A scratch directory for the server tests that follow or keep files
 * (test_reload.c, test_watch.c, test_state.c, ...): made fresh under /tmp
 * for each test (scratch_setup, as .init) with `path` a file in it,
 * removed after (scratch_teardown, as .fini); a file written as an editor
 * saves: a temporary beside it, renamed over; and a log caught in a
 * temporary file, to read back what a module said.
 */
#ifndef SPLITKD_TEST_SCRATCH_H
#define SPLITKD_TEST_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

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

/* A log into a new temporary file (closed with fclose). */
static inline FILE *scratch_log(struct log *log)
{
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	log_init(log, false, false, fileno(f));
	return f;
}

/* What the log holds so far: a new string, the caller frees it. Read with
 * pread, which leaves the file's offset alone, so a thread that logs
 * meanwhile (the watch's) appends where it would have. */
static inline char *scratch_log_text(FILE *f)
{
	struct stat st;
	char *text;
	ssize_t got;

	cr_assert_eq(fstat(fileno(f), &st), 0);
	text = calloc(1, (size_t)st.st_size + 1);
	cr_assert_not_null(text);
	got = pread(fileno(f), text, (size_t)st.st_size, 0);
	cr_assert_eq(got, (ssize_t)st.st_size);
	return text;
}

/* How many times `needle` stands in `text`. */
static inline int scratch_count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) {
		n++;
	}
	return n;
}

#endif /* SPLITKD_TEST_SCRATCH_H */
