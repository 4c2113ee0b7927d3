/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * response — an api answer (struct api_response) on its way out of the
 * engine, and the refusals the server answers itself (a limit, framing it
 * will not guess at): made into libmicrohttpd's response with the headers every
 * answer carries, its body handed over or lent (never copied when it can
 * be helped), the engine's kept responses (respcache.h) reused and filled,
 * and queued; or, for the few answers the engine cannot send (http.c says
 * which), written past it through direct.c: to the socket, or over TLS
 * through the connection's session, never a plaintext byte on a TLS
 * connection. What the request's state, counters and log make of it is
 * http.c's, the one caller.
 *
 * Includes microhttpd.h (one of the files `make includes` allows). No
 * state of its own: called on an engine's thread with that engine's
 * cache, which only that thread uses.
 */
#ifndef SPLITKD_RESPONSE_H
#define SPLITKD_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "api.h"
#include "cli.h"
#include "extras.h"
#include "respcache.h"
#include "tls.h"

/*
 * Queues the answer `a` on `conn`: `made` when the caller made the
 * response (a stream's: let go of here), else a response `cache` kept with
 * the same bytes, else a new one, kept in `cache` in turn when it may be
 * (`cache` NULL: none); with the answer's headers (Connection: close when
 * a->close says so: the caller sets it while draining) and `extra`'s
 * (NULL: none; an answer with an origin or a RateLimit is never kept). A
 * body `a` owns is handed to libmicrohttpd. For a 304 libmicrohttpd sends
 * no body but announces the 200's length, which the api kept. Returns
 * false, nothing queued, when no response could be made (out of memory);
 * else true with MHD_queue_response's result in *ret.
 */
bool response_queue(struct MHD_Connection *conn, struct respcache *cache, struct api_response *a,
		    struct MHD_Response *made, const struct extras_fields *extra,
		    enum MHD_Result *ret);

/*
 * A request the server refuses before the api sees it: a limit (413, 429,
 * 431, 503) or HTTP framing it will not guess at (400, 417, 501), as the api's
 * problem answer into *a (api_response_cleanup it). A framing error
 * closes the connection (where its body ends is unknown); a 503 or a 429
 * says Retry-After: `retry_after` seconds.
 */
void response_refusal(struct api_response *a, enum problem_kind kind, const char *detail,
		      const char *retry_after);

/* The words of a limit's refusal (PROBLEM_PAYLOAD_TOO_LARGE, _OVERLOADED,
 * _HEADER_TOO_LARGE), with the limit from `cfg`, into out. */
void response_limit_detail(enum problem_kind kind, const struct server_config *cfg, char *out,
			   size_t cap);

/*
 * Writes the answer `a` past the engine, whole, the connection closing
 * after it: to the socket `fd`, or, on a TLS connection (`tls->tls` set),
 * through its session or not at all. A HEAD gets no body. Returns the
 * body bytes the access log counts: a->body_len, or 0 when a TLS
 * connection was closed without the answer.
 */
size_t response_on_socket(struct tls_conn *tls, int fd, const char *method,
			  const struct api_response *a);

#endif /* SPLITKD_RESPONSE_H */
