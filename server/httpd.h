/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * httpd — one libmicrohttpd daemon as splitkd runs it (an "engine",
 * http.h): started with splitkd's choices — its own thread polling, no
 * listening socket, TURBO, suspend and resume for the change streams,
 * the connection's memory pool sized to --max-header, the target left
 * undecoded, TLS with the certificate of the moment — and stopped; and a
 * connection the listener accepted handed to it, with the socket's
 * options (TCP_NODELAY, TCP_NOTSENT_LOWAT), and its unread input drained
 * when it closes. Each choice says why where it is made. What the
 * engine calls back, and how many engines there are, are http.c's
 * (struct httpd_calls, one engine per --threads).
 *
 * Includes microhttpd.h (one of the files `make includes` allows).
 * httpd_start and httpd_stop run on the server's thread; httpd_add on
 * the listener's (MHD_add_connection may be called from any thread);
 * httpd_drain on the engine's, at a connection's close.
 * Owns nothing but the daemon, which httpd_stop frees.
 */
#ifndef SPLITKD_HTTPD_H
#define SPLITKD_HTTPD_H

#include <sys/socket.h>

#include <microhttpd.h>

#include "cli.h"
#include "tls.h"

/* What an engine calls, each with `cls`: the request callback, the
 * target as sent (MHD_OPTION_URI_LOG_CALLBACK), a request's end and a
 * connection's start and close. */
struct httpd_calls {
	MHD_AccessHandlerCallback request;
	void *(*uri)(void *cls, const char *uri, struct MHD_Connection *conn);
	MHD_RequestCompletedCallback completed;
	MHD_NotifyConnectionCallback connection;
	void *cls;
};

/* An engine calling `calls`, holding `max_connections` at most, over
 * `tls` (NULL: plain HTTP). Returns it, or NULL when libmicrohttpd would
 * not start it. */
struct MHD_Daemon *httpd_start(const struct server_config *cfg, unsigned max_connections,
				const struct tls *tls, const struct httpd_calls *calls);

/* Stops the engine: every connection it holds closes. Accepts NULL. */
void httpd_stop(struct MHD_Daemon *engine);

/* Hands the accepted socket `fd` (from `addr`, `len` bytes) to the
 * engine. Returns 0, or -1 when it was not taken (libmicrohttpd has then
 * closed the socket). */
int httpd_add(struct MHD_Daemon *engine, int fd, const struct sockaddr *addr, socklen_t len);

/* Reads what the client of a closing connection (socket `fd`) sent and
 * nobody will read, so that closing the socket sends FIN, not RST: a
 * reset can destroy the answer on its way to a client still sending (RFC
 * 9112 9.6). Bounded: a client that keeps sending is cut off. Never
 * waits. */
void httpd_drain(int fd);

#endif /* SPLITKD_HTTPD_H */
