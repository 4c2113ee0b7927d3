/* SPDX-License-Identifier: AGPL-3.0-only */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t buf_cap_for(const struct buf *b, size_t n)
{
	size_t cap = b->cap != 0 ? b->cap : BUF_FIRST_CAP;

	if (n > SIZE_MAX - b->len) {
		return 0;
	}
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			return 0;
		}
		cap *= 2;
	}
	return cap;
}

bool buf_grow(struct buf *b, size_t n)
{
	size_t cap = buf_cap_for(b, n);

	if (cap == 0) {
		b->failed = true;
		return false;
	}
	return buf_grow_to(b, cap);
}

bool buf_grow_to(struct buf *b, size_t cap)
{
	char *grown;

	if (b->failed || cap < b->len) {
		b->failed = true;
		return false;
	}
	grown = realloc(b->p, cap);
	if (grown == NULL) {
		b->failed = true;
		return false;
	}
	b->p = grown;
	b->cap = cap;
	return true;
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	char *out;

	if (n == 0) {
		return; /* nothing to add, and no room to make for it */
	}
	out = buf_room(b, n);
	if (out != NULL) {
		memcpy(out, data, n);
		b->len += n;
	}
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	if (b->failed) {
		return;
	}
	va_copy(again, ap);
	n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
	if (n >= 0 && (b->p == NULL || (size_t)n >= b->cap - b->len)) {
		/* it did not fit: room for it and its NUL, then again */
		if (buf_room(b, (size_t)n + 1) != NULL) {
			n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, again);
		}
	}
	va_end(again);
	if (n < 0) {
		b->failed = true;
	} else if (!b->failed) {
		b->len += (size_t)n;
	}
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}
