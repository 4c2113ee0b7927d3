/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * etag — conditional requests: a strong entity tag for an answer's bytes,
 * and the If-None-Match test (RFC 9110 13.1.2) against it.
 *
 * The tag is a hash of the body alone. Answers hold no timestamps or
 * request ids, so the same question to any replica with the same catalog
 * and version gets the same tag; the hash reads bytes as little-endian
 * words on every host so that replicas on different hardware agree.
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_ETAG_H
#define SPLITKD_ETAG_H

#include <stdbool.h>
#include <stddef.h>

/* Room for a tag: a quote, 16 hex digits, a quote and the NUL (19), padded. */
#define ETAG_MAX 24

/* Writes the strong tag of body[0..len) ("\"<16 hex digits>\"" and a NUL)
 * into out. */
void etag_of(const char *body, size_t len, char out[ETAG_MAX]);

/* Whether an If-None-Match header value matches the tag: "*", or a list of
 * entity-tags compared weakly (a W/ prefix is ignored). A malformed header
 * matches nothing, so the answer goes out in full. */
bool etag_none_match(const char *header, const char *etag);

/* Whether an If-Match header value passes for the tag (RFC 9110 13.1.1):
 * "*", or a list holding the tag compared strongly (a W/ tag never
 * matches). A malformed header passes nothing. */
bool etag_match(const char *header, const char *etag);

#endif /* SPLITKD_ETAG_H */
