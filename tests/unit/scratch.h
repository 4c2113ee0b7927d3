/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A scratch directory for the server tests that follow or keep files
 * (test_reload.c, test_reload_read.c, test_watch.c, test_state.c, ...):
 * made fresh under /tmp for each test (scratch_setup, as .init) with
 * `path` a file in it, removed after (scratch_teardown, as .fini); a file
 * written as an editor saves: a temporary beside it, renamed over; a log
 * caught in a temporary file, to read back what a module said; and small
 * catalogs.
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

#include "catalog.h"
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
	char tmp[512]; /* room for any caller's path and ".tmp" */
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

/* Waits until the log says `needle` `times` times, up to 10 s (a line a
 * thread writes just after the change a test saw: the margin is for a
 * sanitizer build on a loaded machine, not the code's speed). */
static inline void scratch_await_logged(FILE *f, const char *needle, int times)
{
	for (int i = 0; i < 1000; i++) {
		char *log = scratch_log_text(f);
		int n = scratch_count(log, needle);

		free(log);
		if (n >= times) {
			return;
		}
		sleep_ms(10);
	}
}

/* Asserts that the log says `needle` `times` times (-1: at least once),
 * the whole log in the failure's message. */
static inline void scratch_logged(FILE *f, const char *needle, int times)
{
	char *log = scratch_log_text(f);
	int n = scratch_count(log, needle);

	if (times < 0) {
		cr_assert_gt(n, 0, "the log never says \"%s\":\n%s", needle, log);
	} else {
		cr_assert_eq(n, times, "the log says \"%s\" %d times, not %d:\n%s", needle, n,
			     times, log);
	}
	free(log);
}

/* A catalog whose one target, x, has `sm_count` SMs: each count its own
 * revision (the caller frees it). */
static inline struct catalog *scratch_catalog(unsigned sm_count)
{
	char json[256], err[256] = "";
	struct catalog *cat;

	snprintf(json, sizeof(json), "{\"targets\":[{\"name\":\"x\",\"sm_count\":%u,"
		 "\"attn_decode_splitk\":\"auto\"}],\"models\":[]}", sm_count);
	cat = catalog_load(json, strlen(json), err, sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	return cat;
}

#endif /* SPLITKD_TEST_SCRATCH_H */
