/* SPDX-License-Identifier: AGPL-3.0-only */
#include "framing.h"

#include <string.h>
#include <strings.h>

/* Cookies: the engine copies the header and keeps a record per cookie. */
static void count_cookies(struct framing *f, const char *value, size_t value_len)
{
	f->bytes += value_len + 1;
	for (const char *c = value; c != NULL && *c != '\0'; c++) {
		f->fields += *c == ';';
	}
	f->fields++;
}

/* A header counted twice is a framing problem; one that is given twice
 * otherwise keeps its first value, as the engine's lookup did. */
void framing_note(struct framing *f, const char *key, const char *value)
{
	size_t value_len = value != NULL ? strlen(value) : 0;

	f->bytes += strlen(key) + value_len + 4; /* ": " and CRLF */
	f->fields++;
	if (strcasecmp(key, "Host") == 0) {
		f->hosts++;
	} else if (strcasecmp(key, "Content-Length") == 0) {
		f->lengths++;
		f->length = f->length != NULL ? f->length : value;
	} else if (strcasecmp(key, "Content-Type") == 0) {
		f->content_type = f->content_type != NULL ? f->content_type : value;
	} else if (strcasecmp(key, "Transfer-Encoding") == 0) {
		f->encodings++;
		f->encoding = value;
	} else if (strcasecmp(key, "Expect") == 0) {
		f->expects++;
		f->expect = value;
	} else if (strcasecmp(key, "Accept") == 0) {
		f->accept = f->accept != NULL ? f->accept : value;
	} else if (strcasecmp(key, "If-None-Match") == 0) {
		f->if_none_match = f->if_none_match != NULL ? f->if_none_match : value;
	} else if (strcasecmp(key, "If-Match") == 0) {
		f->if_match = f->if_match != NULL ? f->if_match : value;
	} else if (strcasecmp(key, "Cookie") == 0) {
		count_cookies(f, value, value_len);
	}
}

/* Query parameters in the target: the engine keeps a record of each. */
static size_t count_params(const char *uri, size_t uri_len)
{
	const char *q = memchr(uri, '?', uri_len);
	size_t n = 0;

	for (; q != NULL && q < uri + uri_len; q++) {
		n += *q == '?' || *q == '&';
	}
	return n;
}

static bool fits(const struct framing *f, size_t pool)
{
	return f->bytes + FRAMING_FIELD_RECORD * (f->fields + 1) + FRAMING_ANSWER_RESERVE <= pool;
}

/* inline in framing_judge, every request's call: a call each cost more than the checks */
static inline __attribute__((always_inline)) bool
fits_counted(struct framing *f, const char *uri, size_t uri_len, size_t pool)
{
	if (!fits(f, pool) && !f->params_counted) {
		f->fields -= uri_len / 2 + 1 - count_params(uri, uri_len);
		f->params_counted = true;
	}
	return fits(f, pool);
}

bool framing_fits(struct framing *f, const char *uri, size_t uri_len, size_t pool)
{
	return fits_counted(f, uri, uri_len, pool);
}

static inline __attribute__((always_inline)) enum problem_kind
check(const struct framing *f, bool http_1_1, const char **detail)
{
	*detail = NULL;
	if (f->hosts > 1 || (f->hosts == 0 && http_1_1)) {
		*detail = "an HTTP/1.1 request needs exactly one Host header";
	} else if (f->lengths > 1) {
		*detail = "more than one Content-Length header";
	} else if (f->lengths == 1 && f->encodings > 0) {
		*detail = "both Content-Length and Transfer-Encoding";
	} else if (f->encodings > 1) {
		*detail = "more than one Transfer-Encoding header";
	}
	if (*detail != NULL) {
		return PROBLEM_BAD_REQUEST;
	}
	if (f->encodings == 1 && (f->encoding == NULL || strcasecmp(f->encoding, "chunked") != 0)) {
		*detail = "the only transfer coding accepted is chunked";
		return PROBLEM_NOT_IMPLEMENTED;
	}
	if (f->expects > 1 ||
	    (f->expects == 1 && (f->expect == NULL || strcasecmp(f->expect, "100-continue") != 0))) {
		*detail = "the only expectation met is 100-continue";
		return PROBLEM_EXPECTATION_FAILED;
	}
	return PROBLEM_NONE;
}

enum problem_kind framing_check(const struct framing *f, bool http_1_1, const char **detail)
{
	return check(f, http_1_1, detail);
}

int framing_content_length(const char *value, uint64_t *out)
{
	uint64_t n = 0;
	const char *c = value;

	if (value == NULL || *value == '\0') {
		return -1;
	}
	for (; *c >= '0' && *c <= '9'; c++) {
		unsigned digit = (unsigned)(*c - '0');

		if (n > (UINT64_MAX - digit) / 10) {
			return -1;
		}
		n = n * 10 + digit;
	}
	if (*c != '\0') {
		return -1;
	}
	*out = n;
	return 0;
}

enum framing_verdict framing_judge(struct framing *f, const char *uri, size_t uri_len,
				   size_t pool, size_t max_header, const char *version,
				   enum problem_kind *fault, const char **detail)
{
	if (!fits_counted(f, uri, uri_len, pool)) {
		return FRAMING_NO_ROOM;
	}
	if (f->bytes > max_header) {
		return FRAMING_TOO_LARGE;
	}
	/* the version matters only to a request without Host */
	*fault = check(f, f->hosts == 0 && strcmp(version, "HTTP/1.1") == 0, detail);
	return *fault == PROBLEM_NONE ? FRAMING_OK : FRAMING_FAULT;
}
