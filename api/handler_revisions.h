/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_revisions — the catalogs' revisions as a client follows them:
 * the revisions this replica holds (GET /v1/revisions), the catalogs it
 * serves by name (GET /v1/catalogs), what changed between two revisions
 * (GET /v1/diff) or from a held one to a candidate in the body (POST
 * /v1/catalog/diff), and the change stream that tells of each new one as
 * it serves (GET /v1/events). What a parameter names is revision.c's, the
 * diff diff.c's, an event's text events.c's and the open stream the
 * server's. Thread-safe; allocates only through the call's writer and,
 * for a candidate, the catalog it loads and frees within the call.
 */
#ifndef SPLITKD_HANDLER_REVISIONS_H
#define SPLITKD_HANDLER_REVISIONS_H

#include "handler.h"

handler_fn handler_revisions;    /* GET /v1/revisions */
handler_fn handler_diff;         /* GET /v1/diff */
handler_fn handler_catalog_diff; /* POST /v1/catalog/diff */
handler_fn handler_catalogs;     /* GET /v1/catalogs */
/* GET /v1/events: a 200 text/event-stream with no body, marked
 * resp->stream; the server holds the stream open (HEAD gets the headers).
 * catalog=NAME: that catalog's stream (resp->stream_catalog), catalog=*:
 * every catalog's (EVENTS_ALL); without: the default's. */
handler_fn handler_events;

#endif /* SPLITKD_HANDLER_REVISIONS_H */
