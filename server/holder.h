/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * holder — the catalog in service, swappable while requests read it.
 *
 * A request takes a reference (holder_acquire) and gives it back
 * (holder_release); a reload swaps in a new catalog (holder_swap). A
 * request sees the old catalog or the new one, never a mix, and the old one
 * is freed when its last reader lets go. The lock guards only a pointer and
 * a counter: held for a few instructions, never across work.
 */
#ifndef SPLITKD_HOLDER_H
#define SPLITKD_HOLDER_H

#include <pthread.h>
#include <stdatomic.h>

#include "catalog.h"

struct holder_ref; /* a counted catalog */

struct holder {
	pthread_mutex_t lock;
	struct holder_ref *current;
	atomic_uint generation; /* one more at each swap */
};

/* A reader that keeps its reference from one request to the next, and
 * takes the lock only when a reload has made it stale: one per engine
 * (its thread), used by it alone (two locked calls a request, on a lock
 * every engine shared, were the cost otherwise). */
struct holder_reader {
	struct holder_ref *ref; /* NULL: none yet */
	unsigned generation;
};

/* Takes ownership of `cat`. Returns 0, or -1 when out of memory (cat is
 * then freed). */
int holder_init(struct holder *h, struct catalog *cat);
/* Drops the holder's reference; in-flight references stay valid. */
void holder_cleanup(struct holder *h);

/* The current catalog, referenced: pass the returned ref to holder_release. */
const struct catalog *holder_acquire(struct holder *h, struct holder_ref **ref);
void holder_release(struct holder *h, struct holder_ref *ref);

/* The current catalog through a reader: its own reference while no reload
 * has happened, a fresh one (and the old one let go) after. Valid until the
 * reader's next call or holder_reader_cleanup. */
const struct catalog *holder_read(struct holder *h, struct holder_reader *r);
/* Lets go of a reader's reference; the reader can be used again. */
void holder_reader_cleanup(struct holder *h, struct holder_reader *r);

/* Makes `cat` current (taking ownership). Returns 0, or -1 when out of
 * memory, in which case cat is freed and the old catalog stays. */
int holder_swap(struct holder *h, struct catalog *cat);

#endif /* SPLITKD_HOLDER_H */
