/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * direct — the one place that writes an answer to the socket itself, for
 * the requests libmicrohttpd 0.9.75 cannot answer (http.c says which and
 * why, at its one caller). The answer is whole and closes the connection:
 * a status line, Date, Content-Type, Cache-Control, Connection: close,
 * Content-Length, then the body unless the request was HEAD.
 *
 * No allocation; sends without blocking and gives up on a short write
 * (the connection closes after it anyway). Thread-safe.
 */
#ifndef SPLITKD_DIRECT_H
#define SPLITKD_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Formats the header block into buf. Returns its length, or 0 when it
 * does not fit `cap`. */
size_t direct_head(char *buf, size_t cap, unsigned status, const char *reason,
		   const char *content_type, size_t body_len, time_t now);

/* Writes the header block and (unless head_only) the body to fd. Returns 0
 * when all of it went out, -1 otherwise. */
int direct_write(int fd, unsigned status, const char *reason, const char *content_type,
		 const char *body, size_t body_len, bool head_only);

#endif /* SPLITKD_DIRECT_H */
