/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * jsonw — a small streaming JSON writer into a growable buffer.
 *
 * Answers are written straight to text instead of through a cJSON tree: no
 * allocation per value, integers printed exactly (a 64- or 128-bit count is
 * never rounded through a double), and key order fixed by the code, so the
 * same answer is always the same bytes (what an ETag needs).
 *
 * Commas are placed by the writer; the caller only opens, names and closes.
 * Strings are escaped per RFC 8259; bytes that are not UTF-8 are written as
 * U+FFFD so the output is always valid JSON. jsonw_escape applies the same
 * rules into a fixed buffer, for a caller with no writer (a log line).
 * A failed allocation latches: every later call is a no-op, and
 * jsonw_take reports it by returning NULL.
 * Not thread-safe per object; use one writer per request. jsonw_escape
 * has no state and is thread-safe.
 */
#ifndef SPLITKD_JSONW_H
#define SPLITKD_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "splitk.h"

#define JSONW_MAX_DEPTH 16

struct jsonw {
	/* the text, in the one growable buffer (buf.h): w.out for buf_* calls;
	 * w.buf, w.len and w.failed (allocation failed or nesting too deep)
	 * are the same members by the names callers read */
	BUF_MEMBER(out);
	int depth;
	bool after_key; /* a key was written; its value needs no comma */
	bool first[JSONW_MAX_DEPTH]; /* no member written yet at this depth */
};

/* Starts an empty writer; reserves `hint` bytes (0: a default). */
void jsonw_init(struct jsonw *w, size_t hint);
/* Frees the buffer; safe on a writer that jsonw_take emptied. */
void jsonw_cleanup(struct jsonw *w);
/* Hands the buffer to the caller (free() it) and its length; NULL when the
 * writer failed. The writer is left empty. */
char *jsonw_take(struct jsonw *w, size_t *len);

/* Grows the buffer to hold n more bytes in one step, to exactly that
 * (a hint for large answers: doubling would round a 655 KiB batch answer
 * up to 1 MiB, past the heap's mmap threshold, server/main.c); on
 * failure the writer is marked failed. */
void jsonw_reserve(struct jsonw *w, size_t n);

/* Writes a NUL after the text (not counted in len), for callers that read
 * w->buf as a C string; jsonw_take does it too. */
void jsonw_terminate(struct jsonw *w);

void jsonw_object_begin(struct jsonw *w);
void jsonw_object_end(struct jsonw *w);
void jsonw_array_begin(struct jsonw *w);
void jsonw_array_end(struct jsonw *w);
/* Writes an object key of len bytes; the next call writes its value. The
 * key is written as is: it must be a name from the code (no quote,
 * backslash or control character), never input. */
void jsonw_keyn(struct jsonw *w, const char *key, size_t len);

void jsonw_str(struct jsonw *w, const char *s);
void jsonw_strn(struct jsonw *w, const char *s, size_t len);
void jsonw_u64(struct jsonw *w, uint64_t v);
/* An unsigned 128-bit value as hi * 2^64 + lo, printed exactly. */
void jsonw_u128(struct jsonw *w, uint64_t hi, uint64_t lo);
/* v / 1000 with three decimals ("2.125"): fixed-point, no floating point. */
void jsonw_milli(struct jsonw *w, uint64_t v);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);
/*
 * Escapes s[0..len) as the content of a JSON string (no quotes, no NUL)
 * into out, at most cap bytes, by the writer's own rules: valid UTF-8 is
 * kept, a byte that is not UTF-8 becomes U+FFFD, '"', '\\' and control
 * characters are escaped. Stops before a sequence or an escape that would
 * not fit whole, so the output is always valid string content. Returns the
 * bytes written (less than the input needs when cap ran out).
 */
size_t jsonw_escape(char *out, size_t cap, const char *s, size_t len);

/* Inserts already valid JSON text as one value. */
void jsonw_raw(struct jsonw *w, const char *json, size_t len);
/* jsonw_raw written in place: room for at most `max` bytes of one value
 * (the comma before it already placed), NULL once the writer has failed;
 * the caller writes there, then says how many with jsonw_raw_done. */
char *jsonw_raw_room(struct jsonw *w, size_t max);
void jsonw_raw_done(struct jsonw *w, size_t len);

/* jsonw_keyn with a NUL-terminated key. Inline, so that the length of a
 * literal key is folded at compile time (strlen was 5% of a batch). */
static inline void jsonw_key(struct jsonw *w, const char *key)
{
	jsonw_keyn(w, key, strlen(key));
}

/* Shorthands: key and value in one call (inline for the same reason). */
static inline void jsonw_kv_str(struct jsonw *w, const char *key, const char *s)
{
	jsonw_key(w, key);
	jsonw_str(w, s);
}

static inline void jsonw_kv_u64(struct jsonw *w, const char *key, uint64_t v)
{
	jsonw_key(w, key);
	jsonw_u64(w, v);
}

static inline void jsonw_kv_bool(struct jsonw *w, const char *key, bool v)
{
	jsonw_key(w, key);
	jsonw_bool(w, v);
}

/* The string, or null when s is NULL. */
void jsonw_str_or_null(struct jsonw *w, const char *s);
static inline void jsonw_kv_str_or_null(struct jsonw *w, const char *key, const char *s)
{
	jsonw_key(w, key);
	jsonw_str_or_null(w, s);
}

/* An array of n strings. */
void jsonw_strs(struct jsonw *w, const char *const *s, size_t n);
static inline void jsonw_kv_strs(struct jsonw *w, const char *key, const char *const *s, size_t n)
{
	jsonw_key(w, key);
	jsonw_strs(w, s, n);
}

/* The number, or null when v is 0 (the catalog's "not stated"). */
void jsonw_u64_or_null(struct jsonw *w, uint64_t v);
static inline void jsonw_kv_u64_or_null(struct jsonw *w, const char *key, uint64_t v)
{
	jsonw_key(w, key);
	jsonw_u64_or_null(w, v);
}

/* `key` and an exact byte count (splitk_workspace_bytes), or null when it
 * is not known. */
static inline void jsonw_kv_bytes(struct jsonw *w, const char *key, struct splitk_bytes b)
{
	jsonw_key(w, key);
	if (b.known) {
		jsonw_u128(w, b.hi, b.lo);
	} else {
		jsonw_null(w);
	}
}

#endif /* SPLITKD_JSONW_H */
