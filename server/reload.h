/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * reload — the catalog follows its file: every reload of --catalog FILE,
 * whether SIGHUP asks (reload_now) or the watch (watch.c) sees the file
 * change, goes through here, one at a time.
 *
 * A reload reads the file whole, validates it exactly as at start-up
 * (catalog_load) and, when it is valid and its digest differs from the
 * one in service, swaps it in (holder_swap), then calls every registered
 * listener with the catalogs before and after. Never worse than the last
 * good catalog: a file that is missing, unreadable, partly written or
 * invalid leaves the current one serving.
 *
 * The watch's reloads are by content: the bytes are hashed, and bytes seen
 * before (or the same missing/unreadable condition) are not tried again,
 * so each distinct failure is logged once and counted once, however many
 * checks see it. Bytes seen for the first time are read again
 * RELOAD_SETTLE_MS later and tried only if they are the same (a writer
 * still writing is not trusted). SIGHUP always tries, logs and counts.
 *
 * State for GET /v1/status is copied out under a short lock of its own
 * (reload_status, an api_status_fn): a request never waits on a reload.
 *
 * Thread-safe: reload_now and the watch's thread may run at once (the
 * second waits for the first). reload_init/reload_cleanup pair up;
 * reload_watch_start must come after reload_init, and reload_cleanup stops
 * the watch before anything it uses goes.
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
#include "metrics.h"
#include "status.h"
#include "watch.h"

#define RELOAD_MAX_LISTENERS 8
#define RELOAD_DEBOUNCE_MS 200 /* quiet time after the last event in the directory */
#define RELOAD_SETTLE_MS 250   /* new bytes are read again this much later */

/* Called after each successful swap, on the reloading thread, with the
 * reload lock held (so listeners see swaps one at a time, in order). Both
 * catalogs are valid for the call only. Must not call reload_now. */
typedef void reload_listener_fn(void *cls, const struct catalog *before,
				const struct catalog *after);

/* What a read of the file found; `key` tells one content (or one failure)
 * from another without keeping the bytes. */
struct reload_read {
	enum api_disk_state state; /* SAME (valid), INVALID, MISSING or UNREADABLE */
	uint64_t key;
	char error[API_STATUS_TEXT];
};

struct reload {
	pthread_mutex_t run_lock;   /* one reload at a time */
	pthread_mutex_t state_lock; /* guards status; held only to copy */
	struct holder *holder;
	const char *name; /* the catalog it reloads (a holder's name); NULL: the default */
	const char *path; /* NULL: the embedded catalog, nothing to reload */
	const struct log *log;
	struct metrics *metrics;
	struct watch *watch;
	/* the watch thread's own, under run_lock */
	uint64_t tried_key;   /* the content (or failure) last tried */
	uint64_t pending_key; /* new content waiting for its second read; 0: none */
	struct api_status status;
	struct {
		reload_listener_fn *fn;
		void *cls;
	} listeners[RELOAD_MAX_LISTENERS];
	size_t num_listeners;
};

/*
 * Reads a whole file of at most `max` bytes into a new heap buffer (the
 * caller frees it): only a regular file (a FIFO or a directory put in its
 * place is refused, and never blocks the open), read to its end. NULL with
 * rd filled (MISSING, UNREADABLE, or INVALID when larger than max; the
 * reason, naming the path, in rd->error); on success only *len is set.
 * The one reader of a followed file: the catalog's and the TLS files'.
 */
char *reload_read_bytes(const char *path, size_t max, size_t *len, struct reload_read *rd);

/*
 * Reads and validates a catalog file (at most CATALOG_MAX_BYTES): a new
 * catalog (the caller owns it), or NULL with what went wrong in *rd (and
 * rd->error). rd is filled either way. The start-up load and every reload
 * read through this one function.
 */
struct catalog *reload_read_file(const char *path, struct reload_read *rd);

/* Takes the catalog loaded at start (already in `holder`) and what its
 * read found (NULL for the embedded catalog; then `path` is NULL too).
 * Returns 0. */
int reload_init(struct reload *r, struct holder *holder, const char *path,
		const struct reload_read *initial, const struct log *log, struct metrics *metrics);
/* The same for the catalog `name` of the holder (NULL: the default):
 * `name` must outlive the reload. */
int reload_init_named(struct reload *r, struct holder *holder, const char *name, const char *path,
		      const struct reload_read *initial, const struct log *log,
		      struct metrics *metrics);
/* Stops the watch and frees what reload_init made. Safe on a zeroed
 * struct and after a cleanup. */
void reload_cleanup(struct reload *r);

/* Adds a listener. Returns 0, or -1 when RELOAD_MAX_LISTENERS are set.
 * Call before reloads can happen (before the watch and signals). */
int reload_add_listener(struct reload *r, reload_listener_fn *fn, void *cls);

/* Starts following the file: the directory watch plus a check every
 * check_seconds. A no-op for the embedded catalog or check_seconds 0.
 * Returns 0, or -1 with a message in err. */
int reload_watch_start(struct reload *r, unsigned check_seconds, char *err, size_t err_cap);

/* SIGHUP: reads the file now and swaps it in when valid and new. Logs and
 * counts the attempt whatever it finds. */
void reload_now(struct reload *r);

/* An api_status_fn: copies the state for GET /v1/status. */
void reload_status(void *cls, struct api_status *out);

#endif /* SPLITKD_RELOAD_H */
