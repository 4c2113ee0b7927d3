/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * cors — --cors-allow-origin ORIGIN: the origins whose pages may call
 * splitkd from a browser (the Fetch standard's CORS protocol).
 *
 * An origin is given exactly as a browser sends it in Origin: a scheme
 * (http or https), "://", a host (lowercase name, IPv4, or [IPv6]) and an
 * optional port, nothing after. No wildcard: the answers allow
 * credentials (a client certificate, with --tls-client-ca), which the
 * standard forbids with "*", and a listed origin is one the operator
 * named. An answer to a request from a listed origin echoes it; one from
 * any other origin carries no Access-Control-* field at all.
 *
 * Pure: no allocation, no I/O, no globals; the strings are the caller's
 * (argv) and outlive the server.
 */
#ifndef SPLITKD_CORS_H
#define SPLITKD_CORS_H

#include <stdbool.h>
#include <stddef.h>

#define CORS_MAX_ORIGINS 16

/* What an answer to a listed origin also says (response.c), and what a
 * preflight allows besides the route's methods. */
#define CORS_EXPOSE_HEADERS "ETag, Retry-After, RateLimit, RateLimit-Policy"
#define CORS_ALLOW_HEADERS "Content-Type, If-None-Match, If-Match, Last-Event-ID"
#define CORS_MAX_AGE "600" /* seconds a browser may keep a preflight's answer */

/* Whether `s` is an origin as above; when not, *why says what is wrong. */
bool cors_origin_ok(const char *s, const char **why);

/* The listed origin equal to `origin` (NULL: none sent), or NULL. */
const char *cors_match(const char *const *origins, size_t num, const char *origin);

#endif /* SPLITKD_CORS_H */
