/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * watch — one thread and one inotify descriptor that follow any number of
 * entries, each a set of paths with its own callback, and call back when
 * one of an entry's paths may have changed.
 *
 * The watch is on the directory that holds each path, not on the file: a
 * file watch dies when the file is renamed over or deleted, and a
 * Kubernetes ConfigMap or Secret volume changes its files by swapping the
 * `..data` symlink beside them, which the file itself never sees. So every
 * event in such a directory that names one of an entry's last components
 * (every name, for a path that ends in '/': a directory followed whole,
 * as --catalog-dir is) or a `..` entry (the kubelet's), whatever its kind, marks the entry
 * pending; its callback runs once no such event has come for its
 * `debounce_ms` (a burst of writes is one call), or after
 * WATCH_MAX_WAIT_MS of an unbroken burst. When a directory itself goes
 * away its watch is re-added at the entry's next check.
 *
 * Besides the events, an entry's callback runs every `check_seconds` (the
 * fallback for filesystems without inotify, and for a path that is a
 * symlink into another directory).
 *
 * Callbacks run on the watch's own thread, never two at once; each decides
 * whether anything changed (by content) and returns how many milliseconds
 * later it wants to be called again (0: only at the next event or check) —
 * so a reader can ask for a second look before it trusts a file. No busy
 * polling: between events the thread sleeps in poll(2).
 *
 * watch_new/watch_stop pair up; entries are added (watch_add) before
 * watch_run starts the thread; watch_stop joins it, so the callbacks' data
 * may be freed after it. One owner drives a watch.
 */
#ifndef SPLITKD_WATCH_H
#define SPLITKD_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#define WATCH_MAX_WAIT_MS 2000 /* a burst longer than this is read anyway */
#define WATCH_MAX_ENTRIES 72 /* every named catalog's file, the TLS files, a --catalog-dir */
#define WATCH_MAX_PATHS 4 /* of one entry (the TLS files are three) */

/* Returns milliseconds until it wants to be called again, or 0. */
typedef unsigned watch_fn(void *cls);

struct watch_options {
	unsigned check_seconds; /* the periodic check; at least 1 */
	unsigned debounce_ms;   /* quiet time after the last event */
};

struct watch;

/* A watch with no entries and no thread yet. NULL with a message in err
 * (out of memory, no pipe). */
struct watch *watch_new(char *err, size_t err_cap);

/* Adds an entry: `num_paths` paths (copied) followed together, `fn` called
 * for any of them. Before watch_run only. Returns the entry's number (for
 * watch_entry_inotify), or -1 with a message in err (out of memory, too
 * many entries or paths). A directory that cannot be watched (missing, no
 * inotify) is not an error: the periodic check covers it. */
int watch_add(struct watch *w, const char *const *paths, size_t num_paths,
	      const struct watch_options *opt, watch_fn *fn, void *cls, char *err, size_t err_cap);

/* Starts the thread. Returns 0, or -1 with a message in err. */
int watch_run(struct watch *w, char *err, size_t err_cap);

/* One path, one entry, running: watch_new + watch_add + watch_run. NULL
 * with a message in err. */
struct watch *watch_start(const char *path, const struct watch_options *opt, watch_fn *fn,
			  void *cls, char *err, size_t err_cap);

/* Whether inotify is watching every directory of entry `entry` now (of
 * every entry for watch_inotify). Thread-safe. */
bool watch_entry_inotify(const struct watch *w, int entry);
bool watch_inotify(const struct watch *w);

/* Stops the thread (waiting for a callback in progress) and frees the
 * watch. Accepts NULL. */
void watch_stop(struct watch *w);

#endif /* SPLITKD_WATCH_H */
