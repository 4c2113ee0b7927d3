/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * holder — the catalog in service, swappable while requests read it, and
 * the last catalogs it served (the revisions a request may pin).
 *
 * A request takes a reference (holder_acquire) and gives it back
 * (holder_release); a reload swaps in a new catalog (holder_swap). A
 * request sees the old catalog or the new one, never a mix, and the old one
 * is freed when its last reader lets go. The lock guards only a pointer and
 * a counter: held for a few instructions, never across work.
 *
 * What a reference holds is a set: the current catalog and the revisions
 * held beside it, newest first, immutable. Each swap records the new
 * catalog (when it loaded, from where) in a new set, keeping the newest of
 * the old ones up to max_revisions in all and max_bytes of their canonical
 * JSON together (the current one always stays); a catalog whose digest is
 * already held moves to the front instead of being held twice. Every
 * reload path (SIGHUP, a file watch) records through holder_swap.
 * Thread-safe.
 */
#ifndef SPLITKD_HOLDER_H
#define SPLITKD_HOLDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "catalog.h"
#include "revision.h"

#define HOLDER_MAX_REVISIONS 64
#define HOLDER_DEFAULT_REVISIONS 8
/* the held revisions' canonical JSON together, the current one included */
#define HOLDER_DEFAULT_MAX_BYTES ((size_t)32 << 20)

struct holder_ref; /* a counted set of revisions */

struct holder_options {
	unsigned max_revisions; /* 1..HOLDER_MAX_REVISIONS; 0: the default */
	size_t max_bytes;       /* 0: the default */
	const char *source;     /* where catalogs come from, e.g. the --catalog path
				 * ("embedded" when NULL); copied */
};

struct holder {
	pthread_mutex_t lock;
	struct holder_ref *current;
	atomic_uint generation; /* one more at each swap */
	unsigned max_revisions;
	size_t max_bytes;
	char *source; /* holder_swap's */
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
 * then freed). holder_init is holder_init_with the defaults. */
int holder_init(struct holder *h, struct catalog *cat);
int holder_init_with(struct holder *h, struct catalog *cat, const struct holder_options *o);
/* Drops the holder's reference; in-flight references stay valid. Safe on
 * a zeroed struct, after a failed init and after a cleanup. */
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

/* The revisions a reference (or a reader's, after holder_read) holds,
 * newest first, the first its catalog: *n of them, valid as long as the
 * reference is. */
const struct revision *holder_revisions(const struct holder_ref *ref, size_t *n);
const struct revision *holder_reader_revisions(const struct holder_reader *r, size_t *n);

/* Makes `cat` current (taking ownership), recorded as loaded now from the
 * holder's source. Returns 0, or -1 when out of memory, in which case cat
 * is freed and the old catalog stays. */
int holder_swap(struct holder *h, struct catalog *cat);
/* The same, recorded as from `source` (copied; NULL: the holder's). */
int holder_swap_from(struct holder *h, struct catalog *cat, const char *source);

#endif /* SPLITKD_HOLDER_H */
