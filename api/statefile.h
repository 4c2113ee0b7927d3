/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * statefile — what a state directory's revision files mean (--state-dir):
 * each file holds one revision a catalog served, in its canonical JSON,
 * and is named by that revision ("fnv1a64-<16 hex>.json" for
 * "fnv1a64:<16 hex>"). Pure: the bytes and the name in, a catalog or why
 * not out; no I/O (server/state.c reads and writes the files), so a
 * fuzzer reads state files through the same check the daemon does.
 * Thread-safe; the caller owns what it gets.
 */
#ifndef SPLITKD_STATEFILE_H
#define SPLITKD_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "events.h"
#include "jsonw.h"

/* "fnv1a64-" + 16 hex + ".json" */
#define STATEFILE_NAME_LEN (CATALOG_DIGEST_LEN + 5)

/* The file name of a revision (a catalog's digest) into out (at least
 * STATEFILE_NAME_LEN + 1 bytes). Returns 0, or -1 when digest is no
 * catalog digest. */
int statefile_name(const char *digest, char *out, size_t cap);

/* Whether `name` is a revision file's name; its digest into `digest`
 * (CATALOG_DIGEST_LEN + 1 bytes) when it is. */
bool statefile_digest_of(const char *name, char digest[CATALOG_DIGEST_LEN + 1]);

/*
 * A revision file's bytes, checked: they load as a catalog (catalog_load,
 * every rule of a catalog file) and its digest is the one the file name
 * says, so a torn, edited or misnamed file is never taken. Returns the
 * catalog (the caller frees it), or NULL with why in err.
 */
struct catalog *statefile_read(const char *name, const char *data, size_t len, char *err,
			       size_t err_cap);

/* streams.json: the change stream's numbering kept across restarts (the
 * boot part of every event id, and the seq of each revision the default
 * catalog served, oldest first), so a Last-Event-ID from before a restart
 * replays what it missed. */
struct statefile_seq {
	uint64_t seq;
	char revision[CATALOG_DIGEST_LEN + 1];
};

/* {"boot":"<8 hex>","seqs":[[seq,"fnv1a64:..."],...]} */
void statefile_write_streams(struct jsonw *w, const char *boot, const struct statefile_seq *seqs,
			     size_t n);

/* Reads streams.json: 0 with boot, out[0..*n) (at most max, the newest
 * when more) filled, or -1 with why in err (not JSON, a boot that is not
 * 8 lowercase hex digits, a seq not above the one before it, a revision
 * that is no digest). */
int statefile_read_streams(const char *data, size_t len, char boot[EVENTS_BOOT_LEN + 1],
			   struct statefile_seq *out, size_t max, size_t *n, char *err, size_t err_cap);

#endif /* SPLITKD_STATEFILE_H */
