/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * http — the libmicrohttpd glue: the callbacks the engines call (a
 * connection started and closed, a request's target, headers, body and
 * end) and the request's side of its answer (its state, counters and
 * log); response.c makes and queues the response, or writes it past the
 * engine through direct.c. How one engine is started, stopped and handed
 * a socket is httpd.c's; a request's CORS and rate limit, extras.c's.
 * Starting, ticking, draining and stopping the server are server.c's; it
 * calls http_engines_start and http_engines_stop, and the listener calls
 * http_hand_over.
 *
 * Who includes microhttpd.h (grep '#include <microhttpd.h>' server/):
 * http.c (the engines' callbacks), httpd.h (an engine's start, stop and
 * sockets; httpd.c through it), response.h (an answer made into the engine's
 * response; response.c and http.c through it), stream.c (a change stream
 * is a libmicrohttpd response that suspends its connection), tls.c (the
 * connection of a GnuTLS session, MHD's certificate callback) and
 * respcache.h (a worker's kept responses; respcache.c and response.h
 * through it). This header does not, nor does server.c, which includes
 * it. `make includes` (scripts/check-includes.sh) holds server/ to that
 * list; every other server/ module (extras.c and channel.c among them),
 * and all of api/ and policy/, knows nothing of it.
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
 *   accept; admit, hold or refuse listener.c (thread), server.c, conntab.c (conntab_enter;
 *                                 a held one later, conntab_next_held)
 *     -> http_hand_over           http.c -> httpd.c httpd_add: the socket's options,
 *                                 MHD_add_connection to the chosen engine
 *   "connection started"          http.c session_start: the session, its conntab row
 *   request line                  http.c on_uri: the raw target        REQ_HEADERS
 *   header block                  http.c on_headers; framing.c judges size,
 *                                 RFC 9112 framing, Content-Length, memory fit;
 *                                 body.c reserves a declared body   REQ_KEEP / REQ_DROP
 *     CORS, rate limit            http.c on_extras -> extras.c extras_judge (either flag
 *                                 on): the answer's fields, a preflight  REQ_PREFLIGHT,
 *                                 or a 429 (refused, below)
 *     refused                     response.c response_refusal, queued REQ_ANSWERED
 *     no room for any answer      http.c answer_on_socket -> response.c
 *                                 response_on_socket -> direct.c (the socket,
 *                                 or the TLS session through direct_send)
 *   body pieces                   http.c on_upload, body.c          (REQ_REFUSE past a limit)
 *   whole request                 http.c answer (a preflight: extras.c extras_preflight)
 *                                 -> api.c api_handle (route table:
 *                                 handlers, the page, OFREP, /metrics through
 *                                 api_context.render_metrics -> server.c render_metrics
 *                                 -> metrics.c), queued (http.c queue, the one
 *                                 tail of every queued answer, streams' too,
 *                                 -> response.c response_queue)
 *   answer sent                   http.c on_completed: finish_request REQ_NONE
 *     (keep-alive: the next request line, above)
 *   deadlines, reclaim            conntab.c conntab_sweep, from server.c's tick
 *   "connection closed"           http.c session_end: a request MHD gave up on is
 *                                 answered (answer_on_socket), input drained
 *                                 (httpd.c httpd_drain: a FIN, not a RST),
 *                                 conntab_release
 *
 * Limits: a declared body over --max-body (413), a header block over
 * --max-header (431) and a declared body over the budget (503) are
 * answered before a byte of the body is read. A body without a declared
 * length (chunked) is read as it comes: once it passes --max-body or the
 * budget, the rest is read and dropped (MHD 0.9.75 cannot answer in the
 * middle of a body) and the refusal comes at its end, or the connection is
 * cut after 16 times --max-body. Where the engine cannot answer at all,
 * splitkd writes the answer to the socket itself: answer_on_socket (http.c)
 * says when, and why that needs MHD_USE_TURBO; response_on_socket
 * (response.c) writes it. Over TLS (tls.c) that answer goes through the
 * connection's TLS session while libmicrohttpd still holds one, and
 * otherwise the connection is closed: never a plaintext byte on a TLS
 * connection.
 *
 * struct server is the state the engines share, started and stopped by
 * server.c (server.h): its counters are atomics.
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
#include "ratelimit.h"
#include "stream.h"
#include "tls.h"

struct MHD_Daemon;
struct respcache;

/* What other server modules lend to every request: the status of the
 * followed sources (reload.c: the catalog, the TLS files) for GET
 * /v1/status; and what the serving loop does besides its own work: `tick`
 * is called at the end of every tick, on the listener's thread (the
 * watchdog's ping: it proves that loop turns). Members may be NULL. */
struct server_hooks {
	api_status_fn *report_status;
	void *report_status_cls;
	/* GET /v1/history's entries (history.h's api_history_fn); NULL: none */
	size_t (*list_history)(void *cls, uint64_t before, struct history_entry *out, size_t max);
	void *list_history_cls;
	listener_tick_fn *tick;
	void *tick_cls;
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
	api_metrics_fn *render_metrics; /* GET /metrics (server.c's), lent to every request */
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
	/* --cors-allow-origin and --rate-limit: a request pays for either
	 * only when one is on (`extras`); lent to extras.c's calls */
	bool extras;
	bool limiting;
	struct ratelimit limiter;
	char rate_policy[48];  /* RateLimit-Policy's value */
	int unlimited[3];      /* the routes never limited: /healthz, /readyz, /metrics */
};

/* Starts cfg->threads engines (libmicrohttpd daemons without a listening
 * socket of their own), each with its catalog reader and response cache.
 * Returns 0, or -1 with a message in err; http_engines_stop then undoes
 * what was started. */
int http_engines_start(struct server *s, char *err, size_t err_cap);

/* Stops the engines (every connection closes) and frees their readers and
 * caches. Safe after a failed or no start. */
void http_engines_stop(struct server *s);

/* Hands a connection the table admitted as `c` (its engine chosen) to
 * that engine. Returns 0, or -1 when the engine did not take it (the
 * socket is closed and c released). */
int http_hand_over(struct server *s, struct conntab_conn *c, int fd, const struct sockaddr *addr,
		   socklen_t len);

#endif /* SPLITKD_HTTP_H */
