/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * status — GET /v1/status's answer: where this replica's catalog stands.
 *
 * The loaded revision (the catalog digest every answer's `catalog` names)
 * and when it was loaded, the source path, what is on disk now, how the
 * file is watched, and the last reload attempt with its result; with HTTPS
 * the same of the TLS files (member `tls`, absent without TLS, so a plain
 * daemon's answer is what it was) and the served certificate's dates. The data is
 * plain: the server fills a struct api_status through the context's
 * status callback (a copy taken under its own lock), and this module only
 * renders it, so the api never sees the server's reload machinery. The
 * route's handler (handler_service.c) asks for it; without a callback
 * (unit tests, fuzzers) the answer describes the context's catalog alone,
 * as the embedded catalog is described.
 *
 * No allocation beyond the call's JSON writer, no state: thread-safe.
 */
#ifndef SPLITKD_STATUS_H
#define SPLITKD_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"

#define API_STATUS_TEXT 640 /* bytes of a path or an error message, NUL included */

/* What was on disk at the last look. */
enum api_disk_state {
	API_DISK_NONE,       /* no file: the embedded catalog */
	API_DISK_SAME,       /* a valid catalog, the one loaded (by digest) */
	API_DISK_INVALID,    /* read, but not a valid catalog (error says why) */
	API_DISK_MISSING,    /* no such file (or a dangling symlink) */
	API_DISK_UNREADABLE, /* there, but not readable (error says why) */
};

/* What set off a reload attempt. */
enum api_trigger { API_TRIGGER_START, API_TRIGGER_SIGNAL, API_TRIGGER_WATCH };

/* How the file is followed. */
enum api_watch_mode {
	API_WATCH_OFF,      /* SIGHUP only (--catalog-check 0, or no file) */
	API_WATCH_INOTIFY,  /* inotify on the directory, and the periodic check */
	API_WATCH_PERIODIC, /* the periodic check alone (no inotify there) */
};

struct api_status_attempt {
	int64_t at_ms; /* unix milliseconds */
	enum api_trigger trigger;
	bool ok;                     /* a valid catalog was read */
	bool changed;                /* ... and swapped in (a new digest) */
	char error[API_STATUS_TEXT]; /* "" when ok */
};

/* One followed source's state (the catalog's file, the TLS files): the
 * same for every kind of source reload.c drives. */
struct api_source_status {
	char source[API_STATUS_TEXT]; /* the path followed; "" for the embedded catalog */
	int64_t loaded_at_ms;         /* what serves was loaded then (unix milliseconds) */
	enum api_watch_mode watch;
	unsigned check_seconds; /* the periodic check; 0 when off */
	enum api_disk_state disk;
	char disk_error[API_STATUS_TEXT]; /* for invalid, unreadable and missing */
	int64_t checked_at_ms;            /* the last look at the file; 0: none */
	struct api_status_attempt last;   /* the start-up load at first */
	uint64_t reloads_ok, reloads_error;
	/* --state-dir: the file was missing or invalid at start and its last
	 * revision kept in the state directory serves ("started_from") */
	bool started_from_state;
};

/* A named catalog's source (--catalog NAME=FILE, --catalog-dir). */
struct api_named_source {
	char name[CATALOG_NAME_MAX + 1];
	char revision[CATALOG_DIGEST_LEN + 1];
	struct api_source_status st;
};

struct api_status {
	char revision[CATALOG_DIGEST_LEN + 1]; /* the loaded catalog's digest */
	struct api_source_status catalog;
	/* Every catalog's source, the default's among them, when the status
	 * fn has room: the handler gives `named` with room for max_named
	 * (NULL, 0: not asked), the fn fills num_named of them. */
	struct api_named_source *named;
	size_t num_named, max_named;
	bool tls_on; /* HTTPS: tls below is the TLS files' source */
	struct api_source_status tls;
	int64_t tls_not_before, tls_not_after; /* the served certificate's, unix seconds; 0: none */
	/* --state-dir (written only with one): its path, the writes that
	 * failed, the last failure ("": none) and the history's lines not
	 * taken at start */
	bool state_on;
	char state_dir[API_STATUS_TEXT];
	uint64_t state_write_errors;
	char state_error[API_STATUS_TEXT];
	uint64_t state_history_lines_skipped;
};

/* The names the answer uses, for the server's logs too. */
const char *status_disk_name(enum api_disk_state s);
const char *status_trigger_name(enum api_trigger t);

/* `key`: unix milliseconds as RFC 3339 UTC with milliseconds, or null
 * for 0 (never). */
struct jsonw;
void status_write_time(struct jsonw *w, const char *key, int64_t ms);

/* The answer: the request's catalog (`name`: catalog=NAME, or the
 * default) as the answer's own source, and with more than one catalog
 * served, every one of them under "catalogs" (a one-catalog daemon answers
 * what it always did); then the TLS files and the state directory when
 * they are on. */
void status_write(struct jsonw *w, const struct api_status *st, const char *name);

#endif /* SPLITKD_STATUS_H */
