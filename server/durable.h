/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * durable — the state directory's one rule for a file that must survive
 * a crash (LWN's "Ensuring data reaches disk"): the bytes go to a
 * temporary file beside it (".tmp-NAME"), which is fsync()ed, renamed
 * over NAME, and the directory fsync()ed, so that a crash at any moment
 * leaves the old file or the new one, whole, and never a part. A rename
 * of its own (the history's rotation) syncs the directory the same way.
 *
 * durable_write is the whole sequence; durable_stage and durable_commit
 * are its two halves, apart so that a test can stop between them as a
 * crash would. A temporary file a crash left is never taken for the file
 * (durable_is_temporary names them, for the readers that clean them up).
 *
 * No allocation, no lock, no global: thread-safe for different names;
 * the callers (state.c, journal.c) write one at a time under their own
 * lock. Failures are returned, never logged: struct durable_failure says
 * which step failed, on which path, and errno's value, for the caller's
 * words and counters.
 */
#ifndef SPLITKD_DURABLE_H
#define SPLITKD_DURABLE_H

#include <stdbool.h>
#include <stddef.h>

#define DURABLE_TMP_PREFIX ".tmp-"
#define DURABLE_PATH_MAX 1024 /* a longer path fails, ENAMETOOLONG */

/* Which step failed: `what` ("create", "write", "rename", "fsync") on
 * `path` (the temporary file's for the first three, the directory's for
 * "fsync"), and errno's value. */
struct durable_failure {
	const char *what;
	char path[DURABLE_PATH_MAX];
	int err;
};

/*
 * Writes `len` bytes as dir/name, whole or not at all: durable_stage then
 * durable_commit. Returns 0, or -1 with the failed step in *f (no
 * temporary file left, dir/name as it was; only when the directory's
 * fsync failed, dir/name holds the new bytes, not yet known to be on
 * disk).
 */
int durable_write(const char *dir, const char *name, const void *data, size_t len,
		  struct durable_failure *f);

/* The first half: dir/.tmp-name made (mode 0640, never through a
 * symlink), written and fsync()ed. Returns 0, or -1 with *f filled and
 * the temporary file removed. */
int durable_stage(const char *dir, const char *name, const void *data, size_t len,
		  struct durable_failure *f);

/* The second half: dir/.tmp-name renamed over dir/name and the directory
 * fsync()ed. Returns 0, or -1 with *f filled (the temporary file removed
 * when the rename failed). */
int durable_commit(const char *dir, const char *name, struct durable_failure *f);

/* Renames dir/from over dir/to and fsync()s the directory, so that the
 * rename survives a crash. Returns 0, or -1 with *f filled ("rename" on
 * dir/from, or "fsync" on dir). */
int durable_rename(const char *dir, const char *from, const char *to, struct durable_failure *f);

/* Whether a directory entry is a temporary file of durable_stage's (one
 * a crash left before its rename: never the file it was to become). */
bool durable_is_temporary(const char *entry);

#endif /* SPLITKD_DURABLE_H */
