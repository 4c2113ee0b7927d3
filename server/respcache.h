/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * respcache — a worker's last few finished libmicrohttpd responses, kept
 * to be queued again when a new answer has exactly their bytes. Building
 * a response (create, four headers copied with a malloc and two strdups
 * each, destroy) was a seventh of a GET's instructions, and a scheduler
 * polling a decision asks the same question again and again.
 *
 * It is not a cache of answers: the api still parses, decides and writes
 * every answer in full; only the engine's copy of identical bytes is
 * reused. An entry matches on status, content type, ETag, the extra
 * headers and the length, then the body byte for byte, so a reused
 * response is always the bytes the api just wrote. Only plain answers
 * are kept: status 200 with an ETag, no Allow, not closing the connection.
 *
 * One cache per worker thread (libmicrohttpd daemon), used only by it:
 * not thread-safe, and needs no lock. An entry holds the creation
 * reference of its response; eviction and respcache_cleanup drop it, and
 * libmicrohttpd frees the response once no connection sends it any more.
 */
#ifndef SPLITKD_RESPCACHE_H
#define SPLITKD_RESPCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "api.h"

/* Entries per worker: the questions a worker's pollers repeat. */
#define RESPCACHE_ENTRIES 8

struct respcache_entry {
	struct MHD_Response *resp; /* NULL: empty */
	int status;
	const char *content_type;
	char etag[ETAG_MAX];
	struct api_header headers[API_MAX_HEADERS];
	size_t num_headers;
	const char *body; /* the response's own bytes (MHD owns them) */
	size_t body_len;
};

struct respcache {
	struct respcache_entry entries[RESPCACHE_ENTRIES];
	size_t next; /* the entry the next miss replaces */
	unsigned long hits, misses;
};

/* An empty cache; respcache_cleanup empties it again. */
void respcache_init(struct respcache *rc);
void respcache_cleanup(struct respcache *rc);

/* Whether an answer may be kept and reused: 200, an ETag, no Allow, and
 * the connection stays open (`closing` false). */
bool respcache_eligible(const struct api_response *a, bool closing);

/* The kept response whose bytes equal the answer's, or NULL. The cache
 * keeps its own reference: queue it, never destroy it. */
struct MHD_Response *respcache_find(struct respcache *rc, const struct api_response *a);

/*
 * Keeps a response just built for an eligible answer, whose body is
 * `body` (the bytes MHD now owns or was lent for the response's life).
 * Takes over the caller's reference: the caller queues it but must not
 * destroy it. Evicts the oldest entry when full.
 */
void respcache_keep(struct respcache *rc, const struct api_response *a, struct MHD_Response *resp,
		    const char *body);

#endif /* SPLITKD_RESPCACHE_H */
