/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * state — the state directory (--state-dir DIR): every revision of every
 * catalog splitkd serves, kept on disk so a restart holds what a
 * scheduler may have pinned.
 *
 * DIR/lock        flock()ed for the process's life: a second splitkd on
 *                 the same directory refuses to start (state_open);
 * DIR/catalogs/NAME/fnv1a64-<hex>.json
 *                 one revision of catalog NAME, its canonical JSON
 *                 (api/statefile.h says what a file must be to be taken).
 *
 * Every file (a revision, streams.json) is written the one durable way
 * (durable.h: a temporary file in its directory, fsync()ed, renamed over
 * its name and the directory fsync()ed), so a crash at any moment leaves
 * either the old file or the new one, whole (a temporary file a crash
 * left in a catalog's directory is removed when it is next loaded). Each catalog keeps at
 * most max_revisions files, the oldest (by modification time: a file is
 * written again each time its revision is served again) removed.
 *
 * Writing never stops serving: a failed write (a full or read-only
 * directory) is logged once per cause, counted and reported; the
 * revision is still served, only not kept. A file that does not check at
 * start is skipped with one log line and counted, never served.
 *
 * Thread-safe: writes go one at a time under the state's own lock (they
 * come from the reload's thread, after its swaps, and from start-up).
 * state_open/state_close pair up; state_close accepts a zeroed struct.
 */
#ifndef SPLITKD_STATE_H
#define SPLITKD_STATE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "status.h"
#include "statefile.h"

#define STATE_PATH_MAX 512 /* --state-dir at most this long (it shows in /v1/status) */

/* Another stream's numbering (state_streams_*_named). */
struct state_numbering {
	char name[CATALOG_NAME_MAX + 1]; /* the catalog's, or "*" */
	char boot[EVENTS_BOOT_LEN + 1];
	struct statefile_seq seqs[HOLDER_MAX_REVISIONS];
	size_t num_seqs;
};
#define STATE_MAX_NUMBERINGS (HOLDER_MAX_CATALOGS + 1)

struct state {
	char dir[STATE_PATH_MAX];
	int lock_fd; /* the held lock; -1: none */
	unsigned max_revisions;
	const struct log *log;
	struct metrics *metrics; /* splitkd_state_* (state_on set by state_open) */
	pthread_mutex_t lock; /* one write at a time; guards the two below */
	int logged_errno;     /* the write failure's cause last logged; 0: none */
	char last_error[256]; /* the last write failure, for /v1/status; "": none */
	/* streams.json's: the change stream's numbering (state_streams_*) */
	char boot[EVENTS_BOOT_LEN + 1];
	struct statefile_seq seqs[HOLDER_MAX_REVISIONS];
	size_t num_seqs;
	/* every other catalog's stream and the stream of every catalog:
	 * DIR/streams.NAME.json and DIR/streams-all.json, the same form */
	struct state_numbering *named; /* STATE_MAX_NUMBERINGS; NULL: none yet */
	size_t num_named;
};

/* Opens (makes when missing) the directory and takes its lock. Returns 0,
 * or -1 with why in err (another process holds the lock; the directory
 * cannot be made or locked): a start-up error. */
int state_open(struct state *s, const char *dir, unsigned max_revisions, const struct log *log,
	       struct metrics *metrics, char *err, size_t err_cap);
/* Lets go of the lock. Safe on a zeroed struct and after a failed open. */
void state_close(struct state *s);

/*
 * The revisions of catalog `name` the directory holds, oldest first, at
 * most `max` (the newest of them): each one checked (api/statefile.h), a
 * file that is not skipped with a log line and counted. Fills cats[] with
 * new catalogs (the caller frees them) and returns how many.
 */
size_t state_load(struct state *s, const char *name, struct catalog **cats, size_t max);

/* When the revision `digest` of catalog `name` kept here was last served
 * before (its file's modification time: a file is written again each time
 * its revision serves), unix milliseconds; 0 when it is not kept. */
int64_t state_kept_at_ms(struct state *s, const char *name, const char *digest);

/* Keeps `cat` (named: cat->name) as the newest revision of its catalog,
 * removing the oldest past max_revisions. Returns 0, or -1 (logged once
 * per cause and counted; nothing else changes). */
int state_save(struct state *s, const struct catalog *cat);

/* A failed write of the state's (the history's file too): counted,
 * logged when its cause is new, shown in /v1/status. Returns -1. */
int state_write_failed(struct state *s, const char *what, const char *path, int err);

/* Keeps a revision a reload swapped in (cls: the state): serving.c's
 * `published` calls it for every catalog notice that swapped. */
void state_catalog_swapped(void *cls, const struct catalog *after);

/* DIR/streams.json, read at start: the boot id and the seqs it kept
 * (oldest first) into the state; false when there is none (or it does
 * not check: logged, counted, and the numbering starts afresh). */
bool state_streams_load(struct state *s);

/* The default catalog's change stream moved to `seq` serving `revision`
 * (ids "<seq>@<boot>"): kept, the oldest past max_revisions dropped, and
 * streams.json written again (durable_write). A seq not above the last
 * kept is ignored. */
void state_streams_keep(struct state *s, const char *boot, uint64_t seq, const char *revision);

/* The same for the stream of catalog `name` (not the default) or of
 * every catalog ("*"), in its own file: its numbering, or NULL when there
 * is none (or it does not check); and kept. Their boot is the default's. */
const struct state_numbering *state_streams_load_named(struct state *s, const char *name);
void state_streams_keep_named(struct state *s, const char *name, const char *boot, uint64_t seq,
			      const char *revision);

/* The state's part of GET /v1/status (api_status's state_* members). */
void state_report(struct state *s, struct api_status *out);

#endif /* SPLITKD_STATE_H */
