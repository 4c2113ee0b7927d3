/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * http — the libmicrohttpd glue, and the only module that knows about it.
 *
 * An engine is one libmicrohttpd daemon with its one thread and no
 * listening socket of its own; there are cfg->threads of them. splitkd's
 * listener accepts, the connection table admits and picks the least
 * loaded engine, and per connection a session holds the request: its raw
 * target (MHD's URI log callback, before MHD decodes anything), a state
 * (enum request_state), and a body buffered under the shared memory
 * budget. A session lives from MHD's "connection started" notice to its
 * "closed" one, so nothing a request holds outlives its connection.
 *
 * The life of a request, accept to close, and the file of each step:
 *
 *   accept, admit or refuse       listener.c (thread), conntab.c (conntab_admit)
 *     -> hand_over                http.c: MHD_add_connection to the chosen engine
 *   "connection started"          http.c session_start: the session, its conntab row
 *   request line                  http.c on_uri: the raw target        REQ_HEADERS
 *   header block                  http.c on_headers; framing.c judges size,
 *                                 RFC 9112 framing, Content-Length, memory fit;
 *                                 body.c reserves a declared body   REQ_KEEP / REQ_DROP
 *     refused                     api.c api_problem_answer, queued    REQ_ANSWERED
 *     no room for any answer      http.c answer_on_socket -> direct.c (raw socket)
 *   body pieces                   http.c on_upload, body.c          (REQ_REFUSE past a limit)
 *   whole request                 http.c answer -> api.c api_handle (route table:
 *                                 handlers, the page, OFREP, /metrics through
 *                                 api_context.metrics -> metrics.c), queued
 *   answer sent                   http.c on_completed: finish_request REQ_NONE
 *     (keep-alive: the next request line, above)
 *   deadlines, reclaim            conntab.c conntab_sweep, from the listener's tick
 *   "connection closed"           http.c session_end: a request MHD gave up on is
 *                                 answered (answer_on_socket), input drained
 *                                 (a FIN, not a RST), conntab_release
 *
 * Limits: a declared body over --max-body (413), a header block over
 * --max-header (431) and a declared body over the budget (503) are
 * answered before a byte of the body is read. A body without a declared
 * length (chunked) is read as it comes: once it passes --max-body or the
 * budget, the rest is read and dropped (MHD 0.9.75 cannot answer in the
 * middle of a body) and the refusal comes at its end, or the connection is
 * cut after 16 times --max-body. Where the engine cannot answer at all,
 * splitkd writes the answer to the socket itself: answer_on_socket (http.c)
 * says when, and why that needs MHD_USE_TURBO. Over TLS (tls.c) that
 * answer goes through the connection's TLS session while libmicrohttpd
 * still holds one, and otherwise the connection is closed: never a
 * plaintext byte on a TLS connection.
 *
 * server_start/server_stop pair up; server_drain is the SIGTERM path. The
 * struct is shared with the engines: its counters are atomics.
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

struct respcache;
#include "metrics.h"
#include "stream.h"
#include "tls.h"

struct MHD_Daemon;

/* What other server modules lend to every request: the status of the
 * catalog's reloads (reload.c) for GET /v1/status. Members may be NULL. */
struct server_hooks {
	api_status_fn *status;
	void *status_cls;
};

struct server {
	struct MHD_Daemon **engines; /* cfg->threads of them */
	struct holder_reader *readers; /* one per engine: its view of the catalog */
	struct respcache *caches;      /* one per engine: its thread's finished responses */
	unsigned num_engines;
	const struct server_config *cfg;
	struct holder *holder;
	const struct log *log;
	struct metrics *metrics;
	struct server_hooks hooks;
	struct tls *tls; /* NULL: plain HTTP */
	struct conntab table;
	struct body_budget budget;
	struct api_limits limits; /* from cfg, for every request */
	struct listener listener;
	struct stream_hub streams; /* GET /v1/events (stream.c) */
	bool streams_up;           /* streams is initialised */
	unsigned port; /* the bound port, after server_start */
	atomic_bool draining;
	atomic_uint in_flight; /* requests begun and not yet over */
};

/* Starts serving, over TLS when `tls` is not NULL (borrowed: it must
 * outlive the server). `hooks` (copied; NULL: none) must outlive
 * server_stop. Returns 0, or -1 with a message in err (the port is in use,
 * the address is not this host's, out of memory). */
int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, const struct server_hooks *hooks,
		 struct tls *tls, char *err, size_t err_cap);

/* SIGTERM: /readyz turns 503, no new connections are accepted, every answer
 * closes its connection, idle keep-alive connections are closed, and this
 * waits (up to cfg->drain_timeout) until no request is in flight and every
 * client has gone or none has sent anything for half a second. Returns
 * the number still in flight at the end. */
unsigned server_drain(struct server *s);

/* Stops the engines and closes every connection. Safe after a failed start
 * and on a zeroed struct (never started). */
void server_stop(struct server *s);

#endif /* SPLITKD_HTTP_H */
