/* SPDX-License-Identifier: AGPL-3.0-only */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "durable.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Puts an entry in the ring (the oldest goes when full). Under the lock. */
static void keep(struct journal *j, const struct history_entry *e)
{
	j->ring[(j->head + j->num) % j->cap] = *e;
	if (j->num < j->cap) {
		j->num++;
	} else {
		j->head = (j->head + 1) % j->cap;
	}
	j->seq = e->seq > j->seq ? e->seq : j->seq;
}

/* A line read at start and not taken (torn, or it does not check):
 * counted in splitkd_state_history_lines_skipped_total and /v1/status. */
static void skipped_line(struct journal *j)
{
	atomic_fetch_add(&j->state->metrics->state_history_lines_skipped, 1);
}

/*
 * Reads one kept file into the ring; returns its whole lines' count.
 * A line that does not check is skipped with a log line and counted;
 * with `cut` a last line without its newline (torn, counted too) is cut
 * off, so the next append begins a line of its own.
 */
static size_t read_file(struct journal *j, const char *path, bool cut)
{
	struct reload_read rd;
	size_t len = 0, lines = 0, start = 0;
	char *bytes = reload_read_bytes(path, (size_t)(2 * j->cap + 2) * HISTORY_LINE_MAX, &len, &rd);

	if (bytes == NULL) {
		if (rd.state != API_DISK_MISSING) {
			log_event(j->log, "state", "skipped %s: %s", path, rd.error);
		}
		return 0;
	}
	for (size_t i = 0; i <= len; i++) {
		struct history_entry e;
		char why[128];

		if (i < len && bytes[i] != '\n') {
			continue;
		}
		if (i == len && start == len) {
			break;
		}
		if (i == len) { /* no newline: a write a crash cut short */
			log_event(j->log, "state", "%s: its last line is torn; dropped", path);
			skipped_line(j);
			if (cut && truncate(path, (off_t)start) != 0) {
				state_write_failed(j->state, "truncate", path, errno);
			}
			break;
		}
		if (history_parse_line(bytes + start, i - start, &e, why, sizeof(why)) == 0) {
			keep(j, &e);
		} else {
			log_event(j->log, "state", "%s: skipped a line: %s", path, why);
			skipped_line(j);
		}
		lines++;
		start = i + 1;
	}
	free(bytes);
	return lines;
}

/* Opens DIR/history.jsonl to append to it. A file not there yet is made
 * the durable way first (an empty one, durable.h), so its name is on disk
 * before a line is: a synced line in a file a crash unnamed is lost. */
static int open_append(struct journal *j)
{
	int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
	struct durable_failure f;

	j->fd = open(j->path, flags);
	if (j->fd < 0 && errno == ENOENT) {
		if (durable_write(j->state->dir, JOURNAL_FILE, "", 0, &f) != 0) {
			return state_write_failed(j->state, f.what, f.path, f.err);
		}
		j->fd = open(j->path, flags);
	}
	return j->fd >= 0 ? 0 : state_write_failed(j->state, "open", j->path, errno);
}

int journal_init(struct journal *j, unsigned max_entries, struct state *state,
		 const struct log *log)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	j->cap = max_entries;
	j->ring = calloc(j->cap, sizeof(*j->ring));
	if (j->ring == NULL) {
		return -1;
	}
	pthread_mutex_init(&j->lock, NULL);
	j->log = log;
	j->state = state;
	if (state != NULL) {
		snprintf(j->path, sizeof(j->path), "%s/" JOURNAL_FILE, state->dir);
		snprintf(j->old_path, sizeof(j->old_path), "%s/" JOURNAL_OLD_FILE, state->dir);
		read_file(j, j->old_path, false);
		j->lines = read_file(j, j->path, true);
		open_append(j);
	}
	return 0;
}

void journal_cleanup(struct journal *j)
{
	if (j->ring == NULL) {
		return;
	}
	if (j->fd >= 0) {
		close(j->fd);
	}
	pthread_mutex_destroy(&j->lock);
	free(j->ring);
	j->ring = NULL;
}

/* The current file is full: it becomes the previous one, the rename
 * synced as every write of the directory is (durable.h), and a new one
 * begins. Under the lock. */
static void rotate(struct journal *j)
{
	struct durable_failure f;

	close(j->fd);
	j->fd = -1;
	if (durable_rename(j->state->dir, JOURNAL_FILE, JOURNAL_OLD_FILE, &f) != 0) {
		state_write_failed(j->state, f.what, f.path, f.err);
	}
	j->lines = 0;
	open_append(j);
}

/* Appends a line to the file and syncs it. Under the lock. */
static void append(struct journal *j, const struct history_entry *e)
{
	char line[HISTORY_LINE_MAX];
	size_t n = history_line(e, line, sizeof(line));
	ssize_t w;

	if (j->fd < 0 && open_append(j) != 0) {
		return;
	}
	if (j->lines >= j->cap) {
		rotate(j);
		if (j->fd < 0) {
			return;
		}
	}
	w = write(j->fd, line, n);
	if (w != (ssize_t)n) {
		int err = w < 0 ? errno : ENOSPC;

		/* a partial line is cut off at the next start (a torn tail) */
		state_write_failed(j->state, "append to", j->path, err);
		return;
	}
	if (fsync(j->fd) != 0) {
		state_write_failed(j->state, "fsync", j->path, errno);
	}
	j->lines++;
}

void journal_add(struct journal *j, const struct reload_attempt *a)
{
	struct history_entry e;

	memset(&e, 0, sizeof(e));
	e.at_ms = now_ms();
	e.trigger = a->trigger;
	snprintf(e.catalog, sizeof(e.catalog), "%s", a->catalog);
	e.ok = a->ok;
	e.changed = a->changed;
	snprintf(e.error, sizeof(e.error), "%s", a->error != NULL ? a->error : "");
	snprintf(e.from, sizeof(e.from), "%s", a->from != NULL ? a->from : "");
	snprintf(e.to, sizeof(e.to), "%s", a->to != NULL ? a->to : "");
	e.changed_cells = a->changed_cells;
	pthread_mutex_lock(&j->lock);
	e.seq = j->seq + 1;
	if (j->state != NULL) {
		append(j, &e);
	}
	keep(j, &e);
	pthread_mutex_unlock(&j->lock);
}

void journal_attempted(void *cls, const struct reload_attempt *a)
{
	journal_add(cls, a);
}

size_t journal_page(void *cls, uint64_t before, struct history_entry *out, size_t max)
{
	struct journal *j = cls;
	size_t n = 0;

	pthread_mutex_lock(&j->lock);
	for (size_t i = j->num; i-- > 0 && n < max;) {
		const struct history_entry *e = &j->ring[(j->head + i) % j->cap];

		if (before == 0 || e->seq < before) {
			out[n++] = *e;
		}
	}
	pthread_mutex_unlock(&j->lock);
	return n;
}
