/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * watch — a watch of one path that calls back when it may have changed.
 *
 * The watch is on the directory that holds the path, not on the file: a
 * file watch dies when the file is renamed over or deleted, and a
 * Kubernetes ConfigMap volume changes its files by swapping the `..data`
 * symlink beside them, which the file itself never sees. So every event in
 * that directory that names the path's last component or a `..` entry
 * (the kubelet's), whatever its kind, marks the path pending; the callback
 * runs once no such event has come for `debounce_ms` (a burst of writes is
 * one call), or after WATCH_MAX_WAIT_MS of an unbroken burst. When the
 * directory itself goes away the watch is re-added at the next check.
 *
 * Besides the events, the callback runs every `check_seconds` (the
 * fallback for filesystems without inotify, and for a path that is a
 * symlink into another directory). check_seconds 0: no watch at all
 * (watch_start is not to be called).
 *
 * The callback runs on the watch's own thread, never two at once; it
 * decides whether anything changed (by content) and returns how many
 * milliseconds later it wants to be called again (0: only at the next
 * event or check) — so a reader can ask for a second look before it trusts
 * a file. No busy polling: between events the thread sleeps in poll(2).
 *
 * watch_start/watch_stop pair up; watch_stop joins the thread, so the
 * callback's data may be freed after it. One owner drives a watch.
 */
#ifndef SPLITKD_WATCH_H
#define SPLITKD_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#define WATCH_MAX_WAIT_MS 2000 /* a burst longer than this is read anyway */

/* Returns milliseconds until it wants to be called again, or 0. */
typedef unsigned watch_fn(void *cls);

struct watch_options {
	unsigned check_seconds; /* the periodic check; at least 1 */
	unsigned debounce_ms;   /* quiet time after the last event */
};

struct watch;

/* Starts watching `path` (copied). Returns the watch, or NULL with a
 * message in err (out of memory, no thread). A directory that cannot be
 * watched (missing, no inotify) is not an error: the periodic check
 * covers it, and watch_inotify says so. */
struct watch *watch_start(const char *path, const struct watch_options *opt, watch_fn *fn,
			  void *cls, char *err, size_t err_cap);

/* Whether inotify is watching the directory now. Thread-safe. */
bool watch_inotify(const struct watch *w);

/* Stops the thread (waiting for a callback in progress) and frees the
 * watch. Accepts NULL. */
void watch_stop(struct watch *w);

#endif /* SPLITKD_WATCH_H */
