/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * http — the libmicrohttpd glue, and the only module that knows about it.
 *
 * splitkd's listener (listener.c) accepts connections and the connection
 * table (conntab.c) admits them; each admitted connection goes to one of
 * cfg->threads libmicrohttpd daemons (one worker thread each, no listening
 * socket of their own), the least loaded. Per connection a session holds
 * the request state (the raw request target from MHD's URI log callback,
 * before MHD decodes anything, and a body buffered under the shared memory
 * budget, body.c); it lives from MHD's "connection started" notice to its
 * "closed" one, so nothing a request holds can outlive its connection.
 * Each request calls the pure api_handle and queues its answer.
 *
 * Limits answer before a byte more is read: 413 (body), 431 (header),
 * 503 (body budget). Where libmicrohttpd 0.9.75 cannot answer — a request
 * that leaves no room in its per-connection memory for the answer's
 * headers, or one it gives up on without a word — splitkd writes the
 * answer to the socket itself (so MHD runs with MHD_USE_TURBO: it does not
 * shut the socket down before reporting the close). Over TLS it writes
 * through the session while libmicrohttpd still holds one, and otherwise
 * closes: never a plaintext byte on a TLS connection.
 *
 * server_start/server_stop pair up; server_drain is the SIGTERM path. The
 * struct is shared with the worker threads: its counters are atomics.
 */
#ifndef SPLITKD_HTTP_H
#define SPLITKD_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "body.h"
#include "cli.h"
#include "conntab.h"
#include "holder.h"
#include "listener.h"
#include "log.h"
#include "metrics.h"
#include "tls.h"

struct MHD_Daemon;

struct server {
	struct MHD_Daemon **daemons; /* cfg->threads of them */
	struct holder_reader *readers; /* one per daemon: its thread's view of the catalog */
	unsigned num_daemons;
	const struct server_config *cfg;
	struct holder *holder;
	const struct log *log;
	struct metrics *metrics;
	struct tls *tls; /* NULL: plain HTTP */
	struct conntab table;
	struct body_budget budget;
	struct api_limits limits; /* from cfg, for every request */
	struct listener listener;
	unsigned port; /* the bound port, after server_start */
	atomic_bool draining;
	atomic_uint in_flight; /* requests begun and not yet over */
};

/* Starts serving, over TLS when `tls` is not NULL (borrowed: it must
 * outlive the server). Returns 0, or -1 with a message in err (the port
 * is in use, the address is not this host's, out of memory). */
int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, struct tls *tls, char *err,
		 size_t err_cap);

/* SIGTERM: /readyz turns 503, no new connections are accepted, every answer
 * closes its connection, idle keep-alive connections are closed, and this
 * waits (up to cfg->drain_timeout) until no request is in flight and every
 * client has gone or none has sent anything for half a second. Returns
 * the number still in flight at the end. */
unsigned server_drain(struct server *s);

/* Stops the daemons and closes every connection. Safe after a failed start. */
void server_stop(struct server *s);

#endif /* SPLITKD_HTTP_H */
