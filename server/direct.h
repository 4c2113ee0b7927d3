/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * direct — the one place that writes an answer past libmicrohttpd, for
 * the requests libmicrohttpd 0.9.75 cannot answer (http.c's
 * answer_on_socket says which and why; response.c's response_on_socket is
 * the one caller): to the socket (direct_write) or, over TLS, through the
 * connection's session (direct_send with tls_send). The
 * answer is whole and closes the connection: a status line, Date,
 * Content-Type, Cache-Control, Connection: close, Content-Length, then the
 * body unless the request was HEAD.
 *
 * direct_write allocates nothing; direct_send allocates the one buffer it
 * hands to its sender (a TLS record is best sent whole). Both send without
 * blocking and give up on a short write (the connection closes after it
 * anyway). Thread-safe. Knows nothing of libmicrohttpd or GnuTLS.
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

/* Sends all of buf, or fails: 0 or -1. */
typedef int direct_send_fn(void *cls, const void *buf, size_t len);

/* The same answer as direct_write, header block and body (unless
 * head_only) in one call of `send_fn` (with `cls`). Returns what it
 * returned, or -1 when the header block does not fit or no memory. */
int direct_send(direct_send_fn *send_fn, void *cls, unsigned status, const char *reason,
		const char *content_type, const char *body, size_t body_len, bool head_only);

#endif /* SPLITKD_DIRECT_H */
