/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The state directory's one durable write (server/durable.c) on a real
 * directory: a file written whole, no temporary left; a crash between
 * the write and the rename (durable_stage without its durable_commit)
 * leaves the old file as it was; each step's failure named with its path
 * and errno, the temporary file removed; a rename of its own.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable.h"
#include "scratch.h"

/* A file's bytes as a new string ("" when missing: `missing` set). */
static char *slurp(const char *p, bool *missing)
{
	FILE *f = fopen(p, "rb");
	char *text = calloc(1, 4096);
	size_t n;

	cr_assert_not_null(text);
	*missing = f == NULL;
	if (f != NULL) {
		n = fread(text, 1, 4095, f);
		text[n] = '\0';
		fclose(f);
	}
	return text;
}

static void assert_holds(const char *p, const char *want)
{
	bool missing;
	char *got = slurp(p, &missing);

	cr_assert(!missing, "%s is missing", p);
	cr_assert_str_eq(got, want, "%s", p);
	free(got);
}

static bool exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static void in_dir(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

Test(durable, a_write_is_whole_and_leaves_no_temporary, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct durable_failure f;
	char tmp[160];
	struct stat st;

	in_dir(tmp, sizeof(tmp), DURABLE_TMP_PREFIX "catalog.json");
	cr_assert_eq(durable_write(dir, "catalog.json", "first", 5, &f), 0, "%s %s", f.what,
		     f.path);
	assert_holds(path, "first");
	cr_assert(!exists(tmp), "the temporary file is renamed, never left");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0640);
	cr_assert_eq(durable_write(dir, "catalog.json", "second, longer", 14, &f), 0);
	assert_holds(path, "second, longer");
	cr_assert_eq(durable_write(dir, "catalog.json", "", 0, &f), 0, "an empty file is a file");
	assert_holds(path, "");
	cr_assert(!exists(tmp));
}

/* The crash: the new bytes are staged (written, synced) and the process
 * dies before the rename. The file keeps its old bytes whole; only the
 * temporary file, which durable_is_temporary names, holds the new. */
Test(durable, a_crash_between_the_write_and_the_rename_keeps_the_old_file, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct durable_failure f;
	char tmp[160];

	in_dir(tmp, sizeof(tmp), DURABLE_TMP_PREFIX "catalog.json");
	cr_assert_eq(durable_write(dir, "catalog.json", "old", 3, &f), 0);
	cr_assert_eq(durable_stage(dir, "catalog.json", "new and longer", 14, &f), 0);
	/* ...killed here */
	assert_holds(path, "old");
	assert_holds(tmp, "new and longer");
	cr_assert(durable_is_temporary(DURABLE_TMP_PREFIX "catalog.json"));
	/* a write after the restart takes the leftover's place */
	cr_assert_eq(durable_write(dir, "catalog.json", "next", 4, &f), 0);
	assert_holds(path, "next");
	cr_assert(!exists(tmp));
	/* and a commit after a stage is the whole write */
	cr_assert_eq(durable_stage(dir, "catalog.json", "staged", 6, &f), 0);
	cr_assert_eq(durable_commit(dir, "catalog.json", &f), 0);
	assert_holds(path, "staged");
	cr_assert(!exists(tmp));
}

Test(durable, each_failure_names_its_step_its_path_and_errno, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct durable_failure f;
	char gone[160], tmp[160], sub[160], inner[200], link_to[160], long_name[DURABLE_PATH_MAX];

	/* no such directory: the temporary file cannot be made */
	in_dir(gone, sizeof(gone), "gone");
	cr_assert_eq(durable_write(gone, "x.json", "a", 1, &f), -1);
	cr_assert_str_eq(f.what, "create");
	cr_assert_not_null(strstr(f.path, "/gone/" DURABLE_TMP_PREFIX "x.json"), "%s", f.path);
	cr_assert_eq(f.err, ENOENT);

	/* a symlink where the temporary file goes is never followed */
	in_dir(tmp, sizeof(tmp), DURABLE_TMP_PREFIX "catalog.json");
	in_dir(link_to, sizeof(link_to), "elsewhere");
	cr_assert_eq(symlink(link_to, tmp), 0);
	cr_assert_eq(durable_write(dir, "catalog.json", "a", 1, &f), -1);
	cr_assert_str_eq(f.what, "create");
	cr_assert_eq(f.err, ELOOP);
	cr_assert(!exists(link_to), "nothing written through the link");
	cr_assert_eq(unlink(tmp), 0);

	/* the name is a directory that is not empty: the rename fails and
	 * the temporary file goes */
	in_dir(sub, sizeof(sub), "sub");
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(inner, sizeof(inner), "%s/keep", sub);
	write_rename(inner, "kept");
	in_dir(tmp, sizeof(tmp), DURABLE_TMP_PREFIX "sub");
	cr_assert_eq(durable_write(dir, "sub", "a", 1, &f), -1);
	cr_assert_str_eq(f.what, "rename");
	cr_assert_str_eq(f.path, tmp);
	cr_assert(f.err == EISDIR || f.err == ENOTEMPTY || f.err == EEXIST, "%s", strerror(f.err));
	cr_assert(!exists(tmp), "a failed rename leaves no temporary file");
	assert_holds(inner, "kept");

	/* a path that does not fit is refused, not cut short */
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	cr_assert_eq(durable_write(dir, long_name, "a", 1, &f), -1);
	cr_assert_eq(f.err, ENAMETOOLONG);
}

Test(durable, a_rename_of_its_own_moves_the_file_or_says_why, .init = scratch_setup,
     .fini = scratch_teardown)
{
	struct durable_failure f;
	char to[160], from[160];

	write_rename(path, "current");
	in_dir(to, sizeof(to), "previous.json");
	cr_assert_eq(durable_rename(dir, "catalog.json", "previous.json", &f), 0);
	assert_holds(to, "current");
	cr_assert(!exists(path));
	cr_assert_eq(durable_rename(dir, "catalog.json", "previous.json", &f), -1);
	in_dir(from, sizeof(from), "catalog.json");
	cr_assert_str_eq(f.what, "rename");
	cr_assert_str_eq(f.path, from, "the failure names the file renamed");
	cr_assert_eq(f.err, ENOENT);
	assert_holds(to, "current");
}

Test(durable, only_its_own_temporary_files_are_temporary)
{
	static const struct {
		const char *entry;
		bool temporary;
	} cases[] = {
		{DURABLE_TMP_PREFIX "fnv1a64-0123456789abcdef.json", true},
		{DURABLE_TMP_PREFIX "streams.json", true},
		{DURABLE_TMP_PREFIX, true},
		{"fnv1a64-0123456789abcdef.json", false},
		{".tmp", false},
		{"x.tmp-streams.json", false},
		{"", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(durable_is_temporary(cases[i].entry), cases[i].temporary, "\"%s\"",
			     cases[i].entry);
	}
}
