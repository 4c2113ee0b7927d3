/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * holder — the catalogs in service, by name, swappable while requests read
 * them, and the last catalogs each served (the revisions a request may pin).
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
 *
 * Named catalogs (--catalog NAME=FILE, --catalog-dir): a reference holds
 * every one of them, each its own set of revisions as above, so a request
 * takes one reference however many there are. The default one (the first,
 * or --default-catalog) is what holder_acquire, holder_read and
 * holder_revisions give, at the cost they always had; holder_catalogs
 * lists them all. A swap of one catalog (holder_swap_named) makes a new
 * reference that shares every other catalog's set; max_bytes bounds the
 * held revisions of all of them together (each current one always stays).
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
#define HOLDER_MAX_CATALOGS 64 /* --max-catalogs at most */
#define HOLDER_DEFAULT_CATALOGS 16

struct holder_ref; /* a counted set of revisions */

struct holder_options {
	unsigned max_revisions; /* 1..HOLDER_MAX_REVISIONS; 0: the default */
	size_t max_bytes;       /* 0: the default */
	const char *source;     /* where catalogs come from, e.g. the --catalog path
				 * ("embedded" when NULL); copied */
	const char *name;       /* the first (default) catalog's; NULL: "default" */
	unsigned max_catalogs;  /* 1..HOLDER_MAX_CATALOGS; 0: the default */
};

struct holder {
	pthread_mutex_t lock;
	struct holder_ref *current;
	atomic_uint generation; /* one more at each swap */
	unsigned max_revisions;
	unsigned max_catalogs;
	size_t max_bytes;
	char *source; /* holder_swap's */
	char default_name[CATALOG_NAME_MAX + 1];
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

/* holder_revisions and holder_catalogs of one reference in one call (the
 * request path's). */
void holder_view(const struct holder_ref *ref, const struct revision **revs, size_t *num_revs,
		 const struct revision_named **cats, size_t *num_cats);

/* Every catalog a reference (or a reader's, after holder_read) holds, by
 * name, in the order they were first added: *n of them, valid as long as
 * the reference is. */
const struct revision_named *holder_catalogs(const struct holder_ref *ref, size_t *n);

/* The current catalog of `name`, referenced (holder_release the ref), or
 * NULL (and *ref NULL) when the holder serves no catalog of that name. */
const struct catalog *holder_acquire_named(struct holder *h, const char *name,
					   struct holder_ref **ref);

/* Makes `cat` (taking ownership) the current catalog of `name`, recorded
 * as loaded now from `source` (copied; NULL: the holder's), or adds it as
 * a new named catalog. `name` must be catalog_name_ok. Returns 0; -1 when
 * out of memory; -2 when it would be a catalog more than max_catalogs. On
 * failure cat is freed and nothing changes. */
int holder_swap_named(struct holder *h, const char *name, struct catalog *cat, const char *source);
/* What a failed holder_swap_named says (its return, -1 or -2): a static
 * string. */
const char *holder_swap_error(int rc);
/* Stops serving the catalog `name` (a reference already taken keeps it).
 * Returns 0; -1 when no catalog has that name or it is the default, which
 * is never removed (it keeps its last good); -2 when out of memory. */
int holder_remove(struct holder *h, const char *name);
/* The default catalog's name (static for the holder's life). */
const char *holder_default_name(const struct holder *h);

/* Makes `cat` the default catalog's current (taking ownership), recorded as loaded now from the
 * holder's source. Returns 0, or -1 when out of memory, in which case cat
 * is freed and the old catalog stays. */
int holder_swap(struct holder *h, struct catalog *cat);
/* The same, recorded as from `source` (copied; NULL: the holder's). */
int holder_swap_from(struct holder *h, struct catalog *cat, const char *source);

#endif /* SPLITKD_HOLDER_H */
