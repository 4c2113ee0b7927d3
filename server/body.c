/* SPDX-License-Identifier: AGPL-3.0-only */
#include "body.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

void body_budget_init(struct body_budget *b, size_t cap)
{
	b->cap = cap;
	atomic_init(&b->used, 0);
	atomic_init(&b->high, 0);
	atomic_init(&b->shed, 0);
}

/* Takes n bytes from the budget, all or nothing. */
static bool take(struct body_budget *b, size_t n)
{
	size_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
	size_t high;

	do {
		if (n > b->cap - used) {
			return false;
		}
	} while (!atomic_compare_exchange_weak_explicit(&b->used, &used, used + n,
							memory_order_relaxed, memory_order_relaxed));
	high = atomic_load_explicit(&b->high, memory_order_relaxed);
	while (used + n > high &&
	       !atomic_compare_exchange_weak_explicit(&b->high, &high, used + n,
						      memory_order_relaxed, memory_order_relaxed)) {
	}
	return true;
}

/* Grows the buffer to exactly `cap` bytes, reserving the difference from
 * the budget first: the buffer's own doubling would allocate before the
 * budget could say no. */
static enum body_status grow(struct body *body, struct body_budget *b, size_t cap)
{
	if (cap > body->reserved) {
		if (!take(b, cap - body->reserved)) {
			atomic_fetch_add_explicit(&b->shed, 1, memory_order_relaxed);
			return BODY_OVER_BUDGET;
		}
		body->reserved = cap;
	}
	if (!buf_grow_to(&body->data, cap)) {
		body->data.failed = false; /* the request is refused; the body may be released */
		return BODY_NO_MEMORY;
	}
	return BODY_OK;
}

enum body_status body_expect(struct body *body, struct body_budget *b, size_t declared)
{
	if (declared == 0) {
		return BODY_OK;
	}
	return grow(body, b, declared);
}

enum body_status body_append(struct body *body, struct body_budget *b, const char *data,
			     size_t n)
{
	if (n > body->data.cap - body->data.len) {
		/* doubling from BUF_FIRST_CAP (4 KiB), as the buffer grows */
		size_t cap = buf_cap_for(&body->data, n);
		enum body_status st = cap == 0 ? BODY_NO_MEMORY : grow(body, b, cap);

		if (st != BODY_OK) {
			return st;
		}
	}
	buf_add(&body->data, data, n);
	return BODY_OK;
}

void body_release(struct body *body, struct body_budget *b)
{
	buf_free(&body->data);
	atomic_fetch_sub_explicit(&b->used, body->reserved, memory_order_relaxed);
	memset(body, 0, sizeof(*body));
}

bool body_budget_trim(struct body_budget *b, size_t threshold)
{
	if (atomic_load_explicit(&b->used, memory_order_relaxed) != 0 ||
	    atomic_load_explicit(&b->high, memory_order_relaxed) < threshold) {
		return false;
	}
	atomic_store_explicit(&b->high, 0, memory_order_relaxed);
#ifdef __GLIBC__
	/* glibc keeps freed blocks in its arenas (after the first free of a
	 * large block it stops using mmap for that size): give them back */
	malloc_trim(0);
#endif
	return true;
}
