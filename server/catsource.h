/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * catsource — the catalog as a kind of reloaded source (reload.h; tls.c
 * is the other kind): a catalog file's bytes, read as every reload reads
 * them (the one bounded reader, at most CATALOG_MAX_BYTES), loaded with
 * catalog_load, swapped into one catalog of the holder by name, shown as
 * that catalog's row of GET /v1/status, and each attempt's notice given
 * what a catalog's says: its name, the digests before and after, and a
 * swap's catalogs.
 *
 * One struct catsource per catalog in service, embedded by its owner:
 * the default one (--catalog FILE, or the embedded catalog: a source with
 * no file, described in the status and never read), each --catalog
 * NAME=FILE (serving.c) and each --catalog-dir NAME.json (catalogdir.c).
 * catsource_add adds it to the reload once its catalog serves (serving.c's
 * hold puts it in the holder); reload_remove takes it out. The default's
 * must be the reload's first source: its row is the status's first.
 *
 * What it never does: open or stat a file (reload_read's), keep the old
 * catalog when the new is bad, or count, log, journal or tell anyone of
 * an attempt (the reload's, and whoever hears its notices). Its callbacks
 * run on the reloading thread with the reload's lock held; the revision
 * it keeps for the status is written under the reload's status lock as
 * well. Ownership: a catalog catsource_load or catsource_parse returns is
 * the caller's; one it swaps in is the holder's. A catsource allocates
 * nothing and needs no cleanup; the holder, name and path it borrows must
 * outlive it.
 */
#ifndef SPLITKD_CATSOURCE_H
#define SPLITKD_CATSOURCE_H

#include <stddef.h>

#include "catalog.h"
#include "holder.h"
#include "reload.h"

struct catsource {
	struct reload_source src;
	struct holder *holder;
	const char *name; /* the holder's catalog; NULL: its default */
	/* the digest in service: set at the add and at each swap (under the
	 * reload's status lock as well as its run lock), so neither an attempt
	 * nor the status takes a holder reference to read it */
	char revision[CATALOG_DIGEST_LEN + 1];
	/* the last swap's catalogs, referenced from the swap until its notice
	 * has been heard (under the run lock) */
	struct {
		const struct catalog *before, *after;
		struct holder_ref *before_ref, *after_ref;
	} swap;
};

/*
 * The catalog of the file at `path` read and validated as every reload of
 * it is, or the embedded catalog when path is NULL: a new catalog (the
 * caller's), or NULL with why in err. *rd (when not NULL) says what the
 * read found (zeroed for the embedded catalog). The start-up loads,
 * --check-catalog and --diff read through this one function.
 */
struct catalog *catsource_load(const char *path, struct reload_read *rd, char *err, size_t cap);

/*
 * A catalog file's bytes as every reload of it reads them, not parsed: a
 * new buffer (the caller frees it) of *len bytes, their key in rd->key;
 * or NULL with the failure in rd (its key too). catsource_parse makes the
 * catalog of them, once the key says they are worth it.
 */
char *catsource_read_bytes(const char *path, size_t *len, struct reload_read *rd);

/* The catalog in bytes catsource_read_bytes read from `path` (the caller's),
 * or NULL with rd->state INVALID and why in rd->error. */
struct catalog *catsource_parse(const char *path, const char *data, size_t len,
				struct reload_read *rd);

/*
 * Makes `c` the source of `holder`'s catalog `name` (NULL: the default),
 * following `path` (NULL: the embedded catalog, never read), whose
 * catalog already serves from bytes of `initial`'s key (NULL with no
 * path), and adds it to `r`: its file watched with a check every
 * check_seconds (0: SIGHUP and reload_source_check only). A watched one
 * before reload_watch_start. Returns 0, or -1 when RELOAD_MAX_SOURCES are
 * added.
 */
int catsource_add(struct catsource *c, struct reload *r, struct holder *holder, const char *name,
		  const char *path, const struct reload_read *initial, unsigned check_seconds);

#endif /* SPLITKD_CATSOURCE_H */
