/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * extras — a request's side of --cors-allow-origin and --rate-limit: its
 * CORS fields (Vary: Origin, and its Origin echoed when listed: cors.h),
 * a CORS preflight recognised and its 204 written, one of its client's
 * requests taken from the limiter (ratelimit.h) with the RateLimit fields,
 * or why it is a 429. What the answer then says is struct extras_fields,
 * which response.c adds to it; when to ask, and the answers' queueing,
 * are http.c's, which calls this only when either flag is on (struct
 * server's `extras`): a request without either pays nothing of it. The
 * limiter, RateLimit-Policy's value and the routes never limited are set
 * up by server.c and lent to each call.
 *
 * Never: libmicrohttpd (a request's headers come through the caller's
 * extras_header_fn), allocation but the preflight's headers
 * (api_response_add_header), I/O. A struct extras is one connection's,
 * used on its engine's thread only; what its fields point to is static,
 * the configuration's (argv) or its own, and lives while it does.
 */
#ifndef SPLITKD_EXTRAS_H
#define SPLITKD_EXTRAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "cli.h"
#include "ratelimit.h"

/* What a request's answer says besides the api's answer (response.c adds
 * it; NULL when both flags are off). Static strings, or the struct
 * extras' own. */
struct extras_fields {
	bool vary_origin;             /* --cors-allow-origin is on: Vary: Origin */
	const char *origin;           /* the request's Origin, listed: echoed; NULL: no CORS fields */
	const char *ratelimit;        /* RateLimit's value; NULL: not limited */
	const char *ratelimit_policy; /* RateLimit-Policy's, with ratelimit */
};

/* One connection's current request, as far as either flag goes. */
struct extras {
	struct extras_fields fields;
	bool origin_sent;         /* it has an Origin, listed or not */
	uint64_t of;              /* the start of the request `fields` are for */
	int route;                /* its route (api_route_of), -1: none */
	unsigned char client[16]; /* the client's address (conntab_client_key), for the limiter */
	char ratelimit[48];       /* fields.ratelimit's bytes */
	char retry_after[12];     /* a refusal's Retry-After, in seconds */
};

/* The value of the request's header `name`, or NULL when it has none. */
typedef const char *extras_header_fn(void *conn, const char *name);

/* The CORS fields of the request that began at `start_ns` (its start is
 * then x->of), from its Origin (looked up only when origins are listed):
 * before anything answers it, for a refusal as for an answer. */
void extras_begin(struct extras *x, const struct server_config *cfg, extras_header_fn *header,
		  void *conn, uint64_t start_ns);

enum extras_verdict {
	EXTRAS_PASS,      /* on to the api */
	EXTRAS_PREFLIGHT, /* a CORS preflight: extras_preflight answers it once it is in */
	EXTRAS_REFUSED,   /* no request left to this client: 429, `why` says so */
};

/*
 * Once the request's headers passed: its CORS fields (extras_begin), a
 * preflight noted (OPTIONS on a route with Origin and
 * Access-Control-Request-Method), and, with `limiter` (NULL: no
 * --rate-limit), one of the client's requests taken unless `route` is
 * one of the three `unlimited`, with RateLimit and `policy` (static, or
 * lives as long as the server) on its answer. On EXTRAS_REFUSED, `why`
 * (at most `why_cap` bytes) is the 429's detail and x->retry_after its
 * Retry-After.
 */
enum extras_verdict extras_judge(struct extras *x, const struct server_config *cfg,
				 struct ratelimit *limiter, const char *policy,
				 const int unlimited[3], int route, const char *method,
				 extras_header_fn *header, void *conn, uint64_t start_ns, char *why,
				 size_t why_cap);

/* A preflight's answer into *a: 204 with the route's methods in Allow,
 * and, to a listed origin, what it may send. The caller queues it (and
 * so owns its headers). */
void extras_preflight(const struct extras *x, struct api_response *a);

#endif /* SPLITKD_EXTRAS_H */
