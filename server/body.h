/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * body — request bodies buffered under one memory budget shared by every
 * connection (Envoy's overload manager sheds against a memory budget the
 * same way).
 *
 * A body reserves its bytes from the budget before it holds them: all of
 * a declared Content-Length at once, or a chunked body as its buffer
 * grows. When a reservation does not fit, the request is answered 503
 * (the caller's job) and nothing is buffered. Memory freed after a burst is
 * handed back to the system (body_budget_trim, called from a quiet thread).
 *
 * The budget is shared by all threads (atomics); a struct body belongs to
 * one request on one thread.
 */
#ifndef SPLITKD_BODY_H
#define SPLITKD_BODY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

struct body_budget {
	size_t cap;
	atomic_size_t used;
	atomic_size_t high; /* the most used since the last trim */
	atomic_uint_fast64_t shed; /* requests refused for want of budget */
};

struct body {
	/* the bytes, in the one growable buffer (buf.h): body.data for buf_*
	 * calls, body.buf, body.len and body.cap by the names callers read */
	BUF_MEMBER(data);
	size_t reserved; /* bytes taken from the budget */
};

enum body_status { BODY_OK, BODY_OVER_BUDGET, BODY_NO_MEMORY };

void body_budget_init(struct body_budget *b, size_t cap);

/* Reserves `declared` bytes (a Content-Length) and sizes the buffer for
 * them. BODY_OVER_BUDGET leaves nothing reserved. */
enum body_status body_expect(struct body *body, struct body_budget *b, size_t declared);

/* Appends n bytes, reserving more as the buffer grows (doubling from 4 KiB
 * when no length was declared). */
enum body_status body_append(struct body *body, struct body_budget *b, const char *data,
			     size_t n);

/* Frees the buffer and gives its reservation back; the body is empty and
 * reusable. Safe on an empty body. */
void body_release(struct body *body, struct body_budget *b);

/* Gives freed memory back to the system after a burst: when no body is
 * buffered and the budget's high-water mark passed `threshold` bytes since
 * the last trim. Returns true when it trimmed. */
bool body_budget_trim(struct body_budget *b, size_t threshold);

#endif /* SPLITKD_BODY_H */
