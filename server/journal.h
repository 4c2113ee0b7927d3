/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * journal — the change history GET /v1/history pages through: every
 * catalog reload attempt (start, signal, watch) and what it changed, the
 * last --history N of them in memory and, with --state-dir, in the state
 * directory, so they survive a restart.
 *
 * DIR/history.jsonl    appended one line an entry (api/history.h's line:
 *                      JSON and its check), fsync()ed after each;
 * DIR/history.1.jsonl  the previous N: when the current file reaches N
 *                      lines it is renamed here and a new one begun, so
 *                      the disk holds 2N entries at most.
 * At start both are read, oldest first; a line that does not check (a
 * torn last line after a crash, an edit) is skipped with one log line and
 * counted (the state's metrics: splitkd_state_history_lines_skipped_total,
 * and /v1/status's state.history_lines_skipped), and a torn tail is cut
 * off before the next append. An entry is written only after its attempt
 * happened, so the history never names a revision that did not serve.
 * A new history.jsonl is made, and the rotation's rename synced, the
 * state directory's one durable way (durable.h).
 *
 * Writes that fail are the state's (counted, logged once per cause); the
 * entry is still kept in memory. Thread-safe: one mutex, held for a copy
 * of the entries or one append. journal_init/journal_cleanup pair up;
 * journal_cleanup accepts a zeroed struct.
 */
#ifndef SPLITKD_JOURNAL_H
#define SPLITKD_JOURNAL_H

#include <pthread.h>
#include <stdint.h>

#include "history.h"
#include "log.h"
#include "reload.h"
#include "state.h"

#define JOURNAL_FILE "history.jsonl"       /* in the state directory */
#define JOURNAL_OLD_FILE "history.1.jsonl" /* the previous N */
#define JOURNAL_DEFAULT_ENTRIES 200
#define JOURNAL_MAX_ENTRIES 10000

struct journal {
	pthread_mutex_t lock;
	struct history_entry *ring; /* `cap` entries; the newest at (head + cap - 1) % cap */
	size_t cap, num, head;
	uint64_t seq; /* the last entry's */
	struct state *state; /* NULL: memory only */
	int fd;              /* DIR/history.jsonl; -1: none */
	size_t lines;        /* in it */
	char path[STATE_PATH_MAX + 32], old_path[STATE_PATH_MAX + 32];
	const struct log *log;
};

/* Keeps `max_entries` (1..JOURNAL_MAX_ENTRIES) entries; with a state,
 * reads what its directory kept. Returns 0, or -1 when out of memory. */
int journal_init(struct journal *j, unsigned max_entries, struct state *state,
		 const struct log *log);
void journal_cleanup(struct journal *j);

/* Adds one entry (its seq and time are the journal's). */
void journal_add(struct journal *j, const struct reload_attempt *a);

/* Records one reload notice (cls: the journal): serving.c's `published`
 * calls it for every attempt it hears. */
void journal_attempted(void *cls, const struct reload_attempt *a);

/* An api_history_fn (cls: the journal). */
size_t journal_page(void *cls, uint64_t before, struct history_entry *out, size_t max);

#endif /* SPLITKD_JOURNAL_H */
