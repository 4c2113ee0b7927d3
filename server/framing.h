/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * framing — what a request's header block says about its size and framing,
 * judged without libmicrohttpd: the header tally, the RFC 9112 checks
 * libmicrohttpd 0.9.75 does not make, the Content-Length, and whether the
 * request leaves room in a connection's memory for the answer's headers.
 *
 * Pure: no allocation, no I/O, no globals. A struct framing points into the
 * strings it was shown (the engine's copies of the headers) and is valid
 * while they are. Thread-safe; each request has its own.
 */
#ifndef SPLITKD_FRAMING_H
#define SPLITKD_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* Room kept in a connection's memory for the answer's status line and
 * headers (ours and libmicrohttpd's: the largest set is about 550 bytes). */
#define FRAMING_ANSWER_RESERVE 1024u
/* What libmicrohttpd 0.9.75 spends per header field, query parameter and
 * cookie in the same memory: a 56-byte record, 16-byte aligned. */
#define FRAMING_FIELD_RECORD 64u
/* The memory a connection has beyond --max-header. */
#define FRAMING_POOL_EXTRA 2048u

struct framing {
	size_t bytes;  /* request line and headers, as sent */
	size_t fields; /* header fields, query parameters and cookies: the engine keeps a record of each */
	bool params_counted; /* fields holds the target's parameters exactly, not their bound */
	unsigned hosts, lengths, encodings, expects;
	/* the first value of each (the last for Transfer-Encoding and Expect,
	 * which may appear once only); NULL when absent */
	const char *length, *encoding, *expect;
	const char *content_type, *if_none_match, *accept;
};

/* Starts the tally of a request: its request line ("GET <target>
 * HTTP/1.1\r\n"). The target's query parameters are counted by their bound
 * (uri_len / 2 + 1) until framing_fits needs them exactly. Inline: it is
 * on every request's path and smaller than a call. */
static inline void framing_init(struct framing *f, const char *method, size_t uri_len)
{
	*f = (struct framing){
		/* "<method> <target> HTTP/1.1\r\n": two spaces, 8 of version, CRLF */
		.bytes = uri_len + __builtin_strlen(method) + 12,
		.fields = uri_len / 2 + 1,
	};
}

/* Notes one header field, as the engine parsed it (value may be NULL). */
void framing_note(struct framing *f, const char *key, const char *value);

/* Whether the request line, the headers, the engine's records of them and
 * the answer's headers fit a connection's memory of `pool` bytes. Counts
 * the target's parameters exactly when their bound would not fit. */
bool framing_fits(struct framing *f, const char *uri, size_t uri_len, size_t pool);

/* What a header block comes to, in the order splitkd judges it. */
enum framing_verdict {
	FRAMING_OK,
	FRAMING_NO_ROOM,   /* no room left for any answer (framing_fits) */
	FRAMING_TOO_LARGE, /* over max_header: 431 */
	FRAMING_FAULT,     /* framing_check's fault */
};

/* framing_fits, then the max_header limit, then framing_check, as one
 * call (each request takes it). `version` is the request's ("HTTP/1.1"),
 * compared only when there is no Host. On FRAMING_FAULT, *fault and
 * *detail say what. */
enum framing_verdict framing_judge(struct framing *f, const char *uri, size_t uri_len,
				   size_t pool, size_t max_header, const char *version,
				   enum problem_kind *fault, const char **detail);

/* The framing fault splitkd refuses, or PROBLEM_NONE: RFC 9112 where
 * libmicrohttpd 0.9.75 is lenient and leniency is how requests get smuggled
 * past a proxy (one Host, required in HTTP/1.1; at most one Content-Length;
 * never both it and Transfer-Encoding), a transfer coding other than
 * chunked (501), an expectation other than 100-continue (417). *detail is
 * a static string saying which. */
enum problem_kind framing_check(const struct framing *f, bool http_1_1, const char **detail);

/* Reads a Content-Length value: decimal digits only, no sign, no space, no
 * overflow. Returns 0 and the length, or -1 for anything else. */
int framing_content_length(const char *value, uint64_t *out);

#endif /* SPLITKD_FRAMING_H */
