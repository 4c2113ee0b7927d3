/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * history — GET /v1/history, every catalog reload attempt and change,
 * newest first, and the line a state directory keeps each entry as.
 *
 * The server keeps the entries (server/journal.c: in memory, and with
 * --state-dir in an append-only file that survives restarts); the route's
 * handler (handler_service.c) asks for a page of them through the
 * context's list_history and writes each with history_write_entry. A
 * line is the entry's JSON, a space and the FNV-1a 64 of that JSON in 16
 * hex digits, so a torn or edited line is told apart from a whole one and
 * skipped (history_parse_line). No I/O, no clock, no state; thread-safe.
 */
#ifndef SPLITKD_HISTORY_H
#define SPLITKD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "jsonw.h"
#include "status.h"

#define HISTORY_DEFAULT_LIMIT 20
#define HISTORY_MAX_LIMIT 100
#define HISTORY_LINE_MAX 2048 /* an entry's line at most, its newline included */

/* One reload attempt of one catalog. */
struct history_entry {
	uint64_t seq; /* 1, 2, ... in the order they happened (across restarts with a state dir) */
	int64_t at_ms; /* unix milliseconds */
	enum api_trigger trigger;
	char catalog[CATALOG_NAME_MAX + 1];
	bool ok;      /* a valid catalog was read */
	bool changed; /* ... and a new revision serves */
	char error[512]; /* "" when ok */
	char from[CATALOG_DIGEST_LEN + 1], to[CATALOG_DIGEST_LEN + 1]; /* "": none */
	uint64_t changed_cells; /* cells of /v1/matrix (its default inputs) whose decision moved */
};

/* The context's list_history (exchange.h's api_context): up to `max`
 * entries of seq below `before` (0: no bound), newest first, into out;
 * returns how many. */
typedef size_t api_history_fn(void *cls, uint64_t before, struct history_entry *out, size_t max);

/* The entry as the answer lists it (and, with `with_ms`, as a line keeps
 * it: its time in milliseconds as well). */
void history_write_entry(struct jsonw *w, const struct history_entry *e, bool with_ms);

/* The entry's line (JSON, ' ', 16 hex, '\n') into out; its length, or 0
 * when it does not fit in cap (at most HISTORY_LINE_MAX). */
size_t history_line(const struct history_entry *e, char *out, size_t cap);

/* Reads one line (without its newline). Returns 0 with *e filled, or -1
 * with why in err: not whole (torn), its check not its JSON's (edited),
 * or a member missing or out of range. */
int history_parse_line(const char *line, size_t len, struct history_entry *e, char *err,
		       size_t err_cap);

#endif /* SPLITKD_HISTORY_H */
