/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * ui — the page's routes: the files of api/ui/ (compiled in by
 * scripts/embed.sh, see embedded.h) served as they are, and GET /, which
 * negotiates between the page and a JSON index of the API.
 *
 * The page is a client of the public API like any other; nothing here
 * reads the catalog or decides anything. Every answer here carries
 * X-Content-Type-Options: nosniff, the HTML also UI_CSP, and both answers
 * of / carry Vary: Accept. The router gives each its ETag.
 *
 * No allocation beyond the call's JSON writer, no state: thread-safe.
 */
#ifndef SPLITKD_UI_H
#define SPLITKD_UI_H

#include <stdbool.h>

#include "handler.h"

/* The page's Content-Security-Policy: its own files, nothing inline, no
 * fetch but to splitkd, never framed. */
#define UI_CSP                                                                                 \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "      \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* Whether an Accept header value strictly prefers text/html to
 * application/json. Each type takes the q of the most specific media range
 * that matches it (text/html, then the text wildcard, then the full
 * wildcard; the first of equals), or 0 when none does (RFC 9110 12.5.1). A q that is not an RFC
 * qvalue counts as 0; an element that is not a media range is skipped.
 * NULL or empty (no preference): false, so curl and scripts get JSON.
 * Reads the string once; never fails. */
bool ui_prefers_html(const char *accept);

handler_fn handler_root;         /* GET /: the page or the JSON index, by Accept */
handler_fn handler_ui;           /* GET /ui: the page, whatever the Accept */
handler_fn handler_ui_app_js;    /* GET /ui/app.js */
handler_fn handler_ui_style_css; /* GET /ui/style.css */

#endif /* SPLITKD_UI_H */
