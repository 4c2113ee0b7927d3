/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * reload — every file splitkd follows, followed one way: the catalogs
 * (catsource.c) and the TLS files (tls.c) are two kinds of *source*, and
 * reload.c drives any number of sources through one cycle (nginx's
 * ngx_init_cycle has the same shape): read, validate, dedup by content,
 * swap, keep the last good, record, publish, log. Whether SIGHUP asks
 * (reload_now: every source) or the watch (watch.c: one thread for every
 * source's files) sees a file change, the cycle runs here, one attempt at
 * a time. reload.c knows no kind: what a catalog is, catsource.c says
 * (the notice's catalog members are the catalog kind's to fill).
 *
 * A kind (struct reload_kind) is a table of callbacks: what the bytes of a
 * source's files mean (check), whether a checked value is what serves
 * already (serving), how it goes into service (swap) or away (drop), the
 * words of its log lines (say), its place in the status (report) and its
 * members of the notice (publish). A source (struct reload_source) is a
 * kind, its files and the state reload.c keeps for it; its owner embeds
 * it (struct tls, struct catsource). A source with no file (the embedded
 * catalog) is only described: in the status, never read. Adding a kind is
 * the recipe "a new kind of reloaded source" in docs/DEVELOPING.md.
 *
 * The cycle, for every kind alike:
 * - read: the source's files together through the one bounded reader
 *   (reload_read.h: regular files only, each bounded by the kind's
 *   max_bytes); a missing, unreadable, too large or empty file is refused
 *   before the kind sees anything;
 * - dedup: the bytes of all the files are hashed (FNV-1a 64, lengths
 *   included); the watch does not try bytes (or the same failure) it
 *   tried last, so each distinct failure is logged and counted once
 *   however many checks see it, and bytes seen for the first time are
 *   read again RELOAD_SETTLE_MS later and tried only if unchanged (a
 *   writer still writing is not trusted). SIGHUP always tries, logs and
 *   counts. Bytes equal to those in service are an unchanged reload;
 * - validate, swap: a value the kind refuses, or cannot swap in, leaves
 *   what serves serving (never worse than the last good);
 * - record: the source's counts and state, for GET /v1/status and
 *   /metrics;
 * - publish: one notice of the attempt (struct reload_attempt) to the one
 *   function that hears them all (reload_init's): the rest of the daemon
 *   hears of a reload this way and no other;
 * - log: one line per attempt (the kind's words, then the trigger).
 *
 * State for GET /v1/status is copied out under a short lock of its own
 * (reload_status, an api_status_fn): a request never waits on a reload.
 *
 * Thread-safe: reload_now and the watch's thread may run at once (the
 * second waits for the first). reload_init/reload_cleanup pair up;
 * sources are added (reload_add, reload_add_serving) after reload_init
 * and, when watched, before reload_watch_start; reload_cleanup stops the
 * watch before anything a source uses goes, and never frees a source (its
 * owner does, after). Allocates nothing but the watch.
 */
#ifndef SPLITKD_RELOAD_H
#define SPLITKD_RELOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "holder.h"
#include "log.h"
#include "reload_read.h"
#include "status.h"
#include "watch.h"

/* every named catalog (HOLDER_MAX_CATALOGS) and the TLS files */
#define RELOAD_MAX_SOURCES (HOLDER_MAX_CATALOGS + 2)
#define RELOAD_MAX_WATCHES 2 /* reload_add_watch's: a --catalog-dir */
#define RELOAD_MAX_FILES RELOAD_READ_MAX_FILES /* of one source: one watch entry */
#define RELOAD_DEBOUNCE_MS 200 /* quiet time after the last event in the directory */
#define RELOAD_SETTLE_MS 250   /* new bytes are read again this much later */

enum reload_outcome {
	RELOAD_SWAPPED,   /* a new value serves */
	RELOAD_UNCHANGED, /* valid, and what serves already */
	RELOAD_REFUSED,   /* what served keeps serving */
};

struct reload_source;

/*
 * What one attempt did: the one notice the reload publishes, for every
 * attempt on every source (the start-up load of reload_add's too), to the
 * one function reload_init was given. It comes after the attempt is
 * recorded in the source's status and before its log line, on the
 * reloading thread with the reload lock held, so notices come one at a
 * time and in order; every pointer in it is valid for the call only.
 *
 * reload.c fills the members every kind has; a kind adds its own through
 * its `publish` (struct reload_kind). The catalog's are the rest: a
 * catalog's attempt as GET /v1/history lists it, and the catalogs a swap
 * went between, for the change streams. Another kind's leave them NULL.
 */
struct reload_attempt {
	const struct reload_source *source; /* the source attempted */
	enum api_trigger trigger;
	bool ok, changed; /* changed: a new value serves (RELOAD_SWAPPED) */
	const char *error; /* "" when ok */
	/* the catalog kind's */
	const char *catalog; /* its name; NULL: not a catalog's attempt */
	const char *from, *to; /* digests: what served before and after; "": none */
	uint64_t changed_cells; /* diff_changed_cells(from, to) when changed, else 0 */
	const struct catalog *before, *after; /* when changed: what served before
					       * (NULL: none) and after */
};

/* Hears every attempt's notice (reload_init's; cls is its). Must not call
 * reload_now or add a source. */
typedef void reload_published_fn(void *cls, const struct reload_attempt *a);

/* A kind of source: callbacks on the source's `cls`, all called with the
 * reload's one-attempt-at-a-time lock held, on the reloading thread. */
struct reload_kind {
	const char *event; /* the log's event word: "reload", "tls" */
	size_t max_bytes;  /* each file's bound */
	/* The files' bytes (files[i] for the source's files[i]) into a new
	 * value of the kind's own, or NULL with why in err. */
	void *(*check)(void *cls, const struct reload_read_text *files, char *err, size_t err_cap);
	/* Whether a checked value is what serves (other bytes, the same
	 * meaning: an unchanged reload). NULL: other bytes are a change. */
	bool (*serving)(void *cls, const void *value);
	/* Puts the value in service (takes it). 0, or -1 with why in err
	 * (the value freed, what served keeps serving). Called with the
	 * status lock held as well (reload_status_lock: the swap and the
	 * attempt's record are one publication), so it must not take it. */
	int (*swap)(void *cls, void *value, char *err, size_t err_cap);
	/* Frees a checked value that will not serve. */
	void (*drop)(void *value);
	/* The log line for an outcome (`why`: a refusal's reason, else ""),
	 * into out; reload.c adds the trigger. */
	void (*say)(void *cls, enum reload_outcome outcome, const char *why, char *out, size_t cap);
	/* Optional: copies the source's state into its place in the status
	 * answer (under the reload's state lock, the sources in the order
	 * they were added: a catalog's row). */
	void (*report)(void *cls, const struct api_source_status *st, struct api_status *out);
	/* Optional: the kind's members of every attempt's notice (a's others
	 * filled), added before it hands the notice on with reload_publish,
	 * once; what it lends the notice need live only for that call. NULL:
	 * reload.c publishes the notice as it is. */
	void (*publish)(void *cls, struct reload_attempt *a);
};

struct reload;

struct reload_source {
	const struct reload_kind *kind;
	void *cls;
	struct reload_read_file files[RELOAD_MAX_FILES];
	size_t num_files;
	unsigned check_seconds; /* the watch's periodic check; 0: SIGHUP only */
	/* reload.c's from here: attempts under the reload's run_lock */
	struct reload *owner;
	int watch_entry; /* -1: not watched */
	uint64_t served_key;  /* the content in service */
	uint64_t tried_key;   /* the content (or failure) last tried */
	uint64_t pending_key; /* new content waiting for its second read; 0: none */
	uint64_t stamp;       /* reload_read_stamp before the check's last read; 0: none */
	int dir_watch;        /* the reload_add_watch that drives it (a --catalog-dir's); -1 */
	struct api_source_status status; /* under the reload's state_lock */
};

struct reload {
	pthread_mutex_t run_lock;   /* one attempt at a time */
	pthread_mutex_t state_lock; /* guards every source's status; held only to copy */
	const struct log *log;
	struct watch *watch;
	struct reload_source *sources[RELOAD_MAX_SOURCES];
	size_t num_sources;
	struct {
		const char *path;
		unsigned check_seconds;
		watch_fn *fn;
		void *cls;
		int entry; /* the watch's; -1: not watched */
	} watches[RELOAD_MAX_WATCHES]; /* reload_add_watch's */
	size_t num_watches;
	reload_published_fn *published; /* NULL: nobody hears */
	void *published_cls;
	bool live; /* from reload_init to reload_cleanup */
};

/* A reload with no source yet, logging to `log`, every attempt's notice
 * to `published` (NULL: nobody hears). */
void reload_init(struct reload *r, const struct log *log, reload_published_fn *published,
		 void *published_cls);
/* Stops the watch and frees what reload_init made. Safe on a zeroed
 * struct and after a cleanup. */
void reload_cleanup(struct reload *r);

/* Stops following a source (a named catalog whose file is gone): no
 * attempt reads it after this returns. Its owner frees it after. */
void reload_remove(struct reload *r, struct reload_source *s);

/* What the watch does with a read whose key is `key`: the dedup and the
 * settle of the cycle, for any follower of a file. */
enum reload_look {
	RELOAD_LOOK_SAME, /* the bytes (or the failure) tried last: nothing new */
	RELOAD_LOOK_WAIT, /* first sight: read again RELOAD_SETTLE_MS later */
	RELOAD_LOOK_TRY,  /* settled (or `settle` false): try them */
};

/* The decision on a read, given the key last tried and the key waiting
 * for its second read (*pending_key, updated; 0: none). `settle` false
 * (a start-up read): new bytes are tried at once. */
enum reload_look reload_look(uint64_t key, uint64_t tried_key, uint64_t *pending_key, bool settle);

/* The watch's attempt on one source, for an owner that watches its files
 * itself (a --catalog-dir): stats its files and, when they moved (or
 * bytes wait for their second read), reads, dedups, settles, tries. Returns the
 * milliseconds after which it wants another look (RELOAD_SETTLE_MS for
 * bytes seen the first time), or 0. */
unsigned reload_source_check(struct reload_source *s);

/* One more path for the watch, with its own callback (a --catalog-dir:
 * `path` "DIR/" follows every entry of DIR). Before reload_watch_start.
 * Returns its index (for reload_source_driven_by), or -1 when
 * RELOAD_MAX_WATCHES are added. */
int reload_add_watch(struct reload *r, const char *path, unsigned check_seconds, watch_fn *fn,
		     void *cls);

/* Fills a source (kind, its cls, its files, copied; none: only described)
 * for reload_add or reload_add_serving; its status says it loaded now. */
void reload_source_init(struct reload_source *s, const struct reload_kind *kind, void *cls,
			const struct reload_read_file *files, size_t num_files,
			unsigned check_seconds);

/* Adds a source and loads it now (read, check, swap: the start-up load,
 * trigger "start"). Returns 0, or -1 with why in err: a start-up error,
 * nothing serves, and the source is not added. Before reload_watch_start. */
int reload_add(struct reload *r, struct reload_source *s, char *err, size_t err_cap);

/* Adds a source whose value serves already, from bytes of `served_key`
 * (0: none, as for a source with no file): nothing is read now. A watched
 * one before reload_watch_start; an unwatched one also while the watch
 * runs (a --catalog-dir's catalog, which the directory's watch drives).
 * Returns 0, or -1 when RELOAD_MAX_SOURCES are added. */
int reload_add_serving(struct reload *r, struct reload_source *s, uint64_t served_key);

/* A source that reload_add_watch's `watch` drives (it is checked when
 * that path's callback says, not by a watch of its own): its status shows
 * that watch's mode and check. */
void reload_source_driven_by(struct reload_source *s, int watch);

/* The source's state, copied under the state lock. */
void reload_source_status(struct reload_source *s, struct api_source_status *out);

/* Hands an attempt's notice to the function that hears them: a kind's
 * `publish` calls it, once an attempt, with the lock it was called with. */
void reload_publish(struct reload *r, const struct reload_attempt *a);

/* The lock under which every source's status is copied (reload_status):
 * a kind writes under it what its `report` reads. Held only for a copy. */
void reload_status_lock(struct reload *r);
void reload_status_unlock(struct reload *r);

/* The source's start-up load failed (what `rd` found) and a value kept
 * elsewhere (the state directory's last revision) serves instead: its
 * status says so (started_from "state", the file's error, the attempt
 * failed); the watch takes the file as soon as it is good, and the same
 * bad bytes read again are refused again. At start, once added, before
 * the source is watched. */
void reload_source_from_state(struct reload_source *s, const struct reload_read *rd);

/* What serves was loaded at `ms` (unix milliseconds), not now: a value
 * kept elsewhere (reload_source_from_state's) says when it was. */
void reload_source_loaded_at(struct reload_source *s, int64_t ms);

/* Starts following every source's files: one watch (directory events plus
 * each source's periodic check, every check_seconds; 0: SIGHUP only).
 * Returns 0, or -1 with a message in err. */
int reload_watch_start(struct reload *r, char *err, size_t err_cap);

/* SIGHUP: reads every source with files now and swaps in what is valid
 * and new. Logs and counts each attempt whatever it finds. */
void reload_now(struct reload *r);

/* An api_status_fn: every source's state, each through its kind's
 * report, for GET /v1/status. */
void reload_status(void *cls, struct api_status *out);

#endif /* SPLITKD_RELOAD_H */
