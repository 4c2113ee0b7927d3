/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * events — GET /v1/events, the change stream, in words: the text of
 * every Server-Sent Event splitkd sends. The route's handler is
 * handler_revisions.c's and holding streams open the server's
 * (server/stream.c); what they say is here, so a unit test reads it
 * without a socket.
 *
 * A revision is the catalog's digest, as everywhere else (issue 20:
 * GET /v1/revisions, revision=R). Events also number the catalogs this
 * process has served, `seq` (1 for the one it started with, one more at
 * each change), for their ids only: an event id is "<seq>@<boot>", with
 * an id of this process, so that a Last-Event-ID from another process or
 * an earlier run is recognised as foreign rather than misread. Events
 * (text/event-stream, WHATWG HTML 9.2):
 *   hello    on connect without Last-Event-ID: the current revision
 *   catalog  a change: the new revision and the one before it, and the
 *            cells whose decision changed under /v1/matrix's default
 *            inputs (diff.h), EVENTS_CELLS_MAX at most, `truncated` when
 *            more changed (`changed` counts them all)
 *   reset    a Last-Event-ID the held history does not reach (foreign,
 *            older than the last --revisions changes, malformed): the
 *            current revision, and the client fetches afresh
 * Each catalog and reset event is preceded by an unnamed message
 * {"type":"refetchEvaluation","etag","lastModified"} for OpenFeature's
 * OFREP web provider (ADR-0008), which listens to unnamed messages only;
 * it carries no id, so a replay from the named event's id resends both.
 *
 * No state: output goes into the caller's buffer. Thread-safe.
 */
#ifndef SPLITKD_EVENTS_H
#define SPLITKD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

/* The changed cells a catalog event lists at most. */
#define EVENTS_CELLS_MAX 16
/* Room for the longest event text a stream sends: events_change keeps
 * within it by listing fewer cells (truncated) when names are long. */
#define EVENTS_TEXT_MAX 8192
/* Room for an id: 20 digits, '@', EVENTS_BOOT_LEN, NUL. */
#define EVENTS_BOOT_LEN 8
#define EVENTS_ID_MAX 32
/* The reconnection delay the stream asks for (the retry: field). */
#define EVENTS_RETRY_MS 1000u

/* One catalog revision as the events name it. */
struct events_revision {
	uint64_t seq;
	const char *revision; /* the catalog's digest, "fnv1a64:..." */
	int64_t loaded_at;    /* unix seconds */
};

/* A catalog's revision as a stream of every catalog names it. */
struct events_named {
	const char *name;
	struct events_revision rev;
};

/* What catalog=* names: every catalog's stream in one. */
#define EVENTS_ALL "*"

/* The opening of every stream: the retry: hint. Returns the length, or 0
 * when cap is too small. Each writer below does the same. */
size_t events_preamble(char *out, size_t cap);
/* A heartbeat: one comment line. */
size_t events_heartbeat(char *out, size_t cap);
/* hello: the current revision, for a client without a Last-Event-ID. */
size_t events_hello(char *out, size_t cap, const char *boot, const struct events_revision *now);
/* The refetchEvaluation message and the catalog event of a change from
 * `before` (catalog `from`) to `now` (catalog `to`). Fits in
 * EVENTS_TEXT_MAX (fewer cells, truncated, when names are long). Returns
 * 0 when cap is too small or memory ran out (it writes through a JSON
 * writer of its own, freed before it returns). */
size_t events_change(char *out, size_t cap, const char *boot, const struct events_revision *now,
		     const struct events_revision *before, const struct catalog *from,
		     const struct catalog *to);
/* events_change with the catalog event's id `id_seq` and, when `name` is
 * not NULL, its data opened by "catalog_name" (a stream of every catalog:
 * its own ids, each catalog's own seqs in the data). */
size_t events_change_named(char *out, size_t cap, const char *boot, uint64_t id_seq,
			   const char *name, const struct events_revision *now,
			   const struct events_revision *before, const struct catalog *from,
			   const struct catalog *to);
/* removed: catalog `name`, last at `last`, is no longer served; its
 * stream ends after it. The event's id is `id_seq`; `all`: in a stream of
 * every catalog (which goes on). */
size_t events_removed(char *out, size_t cap, const char *boot, uint64_t id_seq, const char *name,
		      const struct events_revision *last);
/* A stream of every catalog's hello (last_id NULL) or reset (`last_id`
 * out of reach): its seq and each catalog's revision, cats[0..n). */
size_t events_all_hello(char *out, size_t cap, const char *boot, uint64_t seq,
			const struct events_named *cats, size_t n, const char *last_id);

/* The refetchEvaluation message and a reset event: `last_id` (as sent,
 * shown at most 64 bytes) is out of reach, `now` is current. */
size_t events_reset(char *out, size_t cap, const char *boot, const struct events_revision *now,
		    const char *last_id);

/* Reads a Last-Event-ID: 0 with *seq set when it is "<n>@<boot>" for
 * this boot, -1 otherwise (absent, malformed, another process's). */
int events_parse_id(const char *last_id, const char *boot, uint64_t *seq);

#endif /* SPLITKD_EVENTS_H */
