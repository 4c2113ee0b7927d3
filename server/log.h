/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * log — one line per event on stderr, as text or JSON.
 *
 * Each line is formatted into a stack buffer and written with one write(2),
 * so lines from different threads never interleave. Untrusted text (paths)
 * is escaped. No allocation; thread-safe; the struct is read-only after
 * log_init.
 */
#ifndef SPLITKD_LOG_H
#define SPLITKD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct log {
	bool json;
	bool access;
	int fd;
};

void log_init(struct log *log, bool json, bool access, int fd);

/* A lifecycle event: `event` is a word ("listening", "reload"), `msg` free
 * text. */
void log_event(const struct log *log, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One request: method, path (raw, escaped here), status, body bytes and
 * microseconds from first byte to queued answer. A no-op when access
 * logging is off. */
void log_access(const struct log *log, const char *method, const char *path, size_t path_len,
		unsigned status, size_t bytes, uint64_t micros);

#endif /* SPLITKD_LOG_H */
