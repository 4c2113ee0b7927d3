/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The one bounded reader (server/reload_read.c) through its own API: a
 * file read whole under its caller's bound, one byte more refused, a FIFO
 * refused without blocking; a source's files read together under one key
 * that moves when any byte moves (from one file to the next too), stays
 * when none does, and names a failure's file.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reload_read.h"
#include "scratch.h"

/* The one reader under any bound (the TLS files' is 1 MiB, the catalog's
 * 4 MiB): exactly `max` bytes read whole, one more refused with the bound
 * named; a FIFO refused without blocking whatever the bound. */
Test(reload_read, read_bytes_holds_its_caller_s_bound, .init = scratch_setup,
     .fini = scratch_teardown)
{
	static const size_t bounds[] = {1, 16, 4096};
	struct reload_read rd;
	char sub[160], want[64];

	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		char text[4098];
		size_t len = 0;
		char *got;

		memset(text, 'x', bounds[i] + 1);
		text[bounds[i]] = '\0';
		write_rename(path, text);
		got = reload_read_bytes(path, bounds[i], &len, &rd);
		cr_assert_not_null(got, "%zu bytes under a bound of %zu: %s", bounds[i], bounds[i],
				   rd.error);
		cr_assert_eq(len, bounds[i]);
		cr_assert(memcmp(got, text, len) == 0);
		free(got);
		text[bounds[i]] = 'x';
		text[bounds[i] + 1] = '\0';
		write_rename(path, text);
		cr_assert_null(reload_read_bytes(path, bounds[i], &len, &rd));
		cr_assert_eq(rd.state, API_DISK_INVALID);
		snprintf(want, sizeof(want), "larger than %zu bytes", bounds[i]);
		cr_assert_not_null(strstr(rd.error, want), "%s", rd.error);
	}
	snprintf(sub, sizeof(sub), "%s/afifo", dir);
	cr_assert_eq(mkfifo(sub, 0644), 0);
	cr_assert_null(reload_read_bytes(sub, 1u << 20, &(size_t){0}, &rd));
	cr_assert_eq(rd.state, API_DISK_UNREADABLE);
}

/* Two files read as one source: their key, or 0 with `rd` saying why. */
static uint64_t key_of(const char *a, const char *b, struct reload_read *rd)
{
	const struct reload_read_file files[2] = {{"--one", a}, {"--two", b}};
	struct reload_read_texts t;
	uint64_t key = 0;

	if (reload_read_files(files, 2, 64, &t, rd) == 0) {
		cr_assert_eq(rd->state, API_DISK_SAME);
		key = rd->key;
	} else {
		for (size_t i = 0; i < RELOAD_READ_MAX_FILES; i++) {
			cr_assert_null(t.data[i], "a failed read left file %zu's bytes", i);
		}
	}
	reload_read_texts_cleanup(&t);
	return key;
}

Test(reload_read, a_source_s_files_share_one_key, .init = scratch_setup, .fini = scratch_teardown)
{
	struct reload_read rd;
	char a[160], b[160];
	uint64_t first, moved, empty_b;

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	write_rename(a, "ab");
	write_rename(b, "c");
	first = key_of(a, b, &rd);
	cr_assert_neq(first, 0);
	cr_assert_eq(key_of(a, b, &rd), first, "the same bytes read again are another key");

	/* the same bytes, one moved from the first file to the second */
	write_rename(a, "a");
	write_rename(b, "bc");
	moved = key_of(a, b, &rd);
	cr_assert_neq(moved, 0);
	cr_assert_neq(moved, first, "a byte moved between the files kept the key");

	/* an empty file is refused, naming its flag and path; so is a missing one */
	write_rename(b, "");
	cr_assert_eq(key_of(a, b, &rd), 0);
	cr_assert_eq(rd.state, API_DISK_INVALID);
	cr_assert_not_null(strstr(rd.error, "--two "), "%s", rd.error);
	cr_assert_not_null(strstr(rd.error, "empty file"), "%s", rd.error);
	empty_b = rd.key;
	write_rename(b, "bc");
	write_rename(a, "");
	cr_assert_eq(key_of(a, b, &rd), 0);
	cr_assert_neq(rd.key, empty_b, "the same failure in another file is the same key");
	cr_assert_eq(unlink(a), 0);
	cr_assert_eq(key_of(a, b, &rd), 0);
	cr_assert_eq(rd.state, API_DISK_MISSING);
	cr_assert_not_null(strstr(rd.error, "--one "), "%s", rd.error);
}
