/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * buf — the one growable byte buffer (curl's dynbuf is the model): the
 * JSON writer's answers (jsonw.c), the /metrics text (server/metrics.c)
 * and request bodies under the memory budget (server/body.c) all grow
 * through it, so growth, its overflow checks and the failure latch are
 * written once.
 *
 * Growth doubles the capacity (from BUF_FIRST_CAP when empty) until the
 * bytes asked for fit; buf_grow_to sets an exact capacity for a caller
 * that must account for every byte first (the body budget). A failed
 * allocation (or a size past SIZE_MAX) latches `failed`: every later
 * call is a no-op, buf_room returns NULL, buf_take returns NULL.
 * Nothing here adds a NUL unless asked (buf_take, buf_terminate), and
 * then only in room the caller left for it.
 *
 * The buffer owns its bytes until buf_take hands them over (free() them)
 * or buf_free frees them. Not thread-safe: one buffer, one thread.
 */
#ifndef SPLITKD_BUF_H
#define SPLITKD_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#define BUF_FIRST_CAP 4096

struct buf {
	char *p; /* NULL until the first allocation */
	size_t len, cap;
	bool failed;
};

/*
 * A struct buf member that its owner's callers may also read by the names
 * they have always read (w.buf, w.len, body.cap ...): an anonymous union of
 * the buffer and an untagged struct of the same members, which share their
 * common initial sequence (C11 6.5.2.3), so both views are the same bytes.
 * `name` is the buffer's own name, for the buf_* calls.
 */
#define BUF_MEMBER(name)                  \
	union {                           \
		struct buf name;          \
		struct {                  \
			char *buf;        \
			size_t len, cap;  \
			bool failed;      \
		};                        \
	}

/* The calls every answer makes once or twice (init, take, terminate,
 * free) are inline: out of line they cost an answer more instructions
 * than the writers they replaced (bench/instructions.sh). */

/* An empty buffer holding `hint` bytes of room (0: no allocation yet).
 * A failed allocation latches failed. */
static inline void buf_init(struct buf *b, size_t hint)
{
	b->len = 0;
	b->cap = 0;
	b->p = hint != 0 ? malloc(hint) : NULL;
	b->failed = hint != 0 && b->p == NULL;
	if (b->p != NULL) {
		b->cap = hint;
	}
}

/* Frees the bytes; the buffer is empty (and not failed) again. Safe on an
 * empty buffer and twice. */
static inline void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}

/* Writes a NUL after the bytes (not counted in len) when there is room,
 * for a reader of b->p as a C string. */
static inline void buf_terminate(struct buf *b)
{
	if (!b->failed && b->p != NULL && b->len < b->cap) {
		b->p[b->len] = '\0';
	}
}

/* Hands the bytes to the caller (free() them), NUL-terminated when there
 * is room for the NUL (buf_room(n + 1) leaves it), and their length; NULL
 * (and nothing to free) when the buffer failed. The buffer is left empty. */
static inline char *buf_take(struct buf *b, size_t *len)
{
	char *out = b->p;

	buf_terminate(b);
	*len = b->failed ? 0 : b->len;
	if (b->failed) {
		free(out);
		out = NULL;
	}
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = false;
	return out;
}

/* The capacity doubling gives for n more bytes, or 0 when it would pass
 * SIZE_MAX. */
size_t buf_cap_for(const struct buf *b, size_t n);

/* Sets the capacity to exactly cap (at least len). Returns false, with the
 * buffer failed, when the allocation fails. */
bool buf_grow_to(struct buf *b, size_t cap);

/* Grows the capacity by doubling until n more bytes fit. Returns false,
 * with the buffer failed, when that passes SIZE_MAX or the allocation
 * fails. buf_room's slow path. */
bool buf_grow(struct buf *b, size_t n);

/* Room for n more bytes at b->p + b->len, growing by doubling; NULL once
 * the buffer has failed. The caller writes there and adds to b->len.
 * Inline, and the growth out of line, so the writer's every value pays
 * two compares. */
static inline char *buf_room(struct buf *b, size_t n)
{
	if (b->failed || (n > b->cap - b->len && !buf_grow(b, n))) {
		return NULL;
	}
	return b->p + b->len;
}

/* Appends n bytes; on failure the buffer is failed and unchanged. */
void buf_add(struct buf *b, const void *data, size_t n);

/* Appends printf-formatted text (vsnprintf; no NUL counted in len, but
 * room left for one). */
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* SPLITKD_BUF_H */
