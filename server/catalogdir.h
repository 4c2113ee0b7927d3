/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * catalogdir — --catalog-dir DIR: every NAME.json in DIR is the catalog
 * NAME, followed live as Kubernetes projects the keys of one ConfigMap
 * into a directory (each key a symlink through `..data`, swapped whole at
 * an edit).
 *
 * The default catalog's file is the daemon's --catalog source as any
 * other (main.c sets it up: catalogdir_default finds it); this module
 * follows the others. One watch path, "DIR/", sees every entry of the
 * directory; at each event (and each periodic check) the directory is
 * listed and:
 * - a NAME.json not served yet is read, and read again RELOAD_SETTLE_MS
 *   later (a writer still writing is not trusted); the same valid bytes
 *   twice and it is served (through the owner's catalogdir_hold_fn, the
 *   one way any catalog comes into service: with the revisions the state
 *   directory kept of it) and becomes a catalog source of the reload's
 *   (unwatched: this module drives it); invalid bytes are logged once and
 *   tried again when they change;
 * - at start (the first listing) a NAME.json that is invalid is handed to
 *   the hold as well, so that the revision --state-dir kept of it serves,
 *   as for a catalog file named by --catalog (started_from "state"); with
 *   no kept revision it is not served, as above. A NAME.json gone while
 *   splitkd was down is not in the listing, and so is not served (404
 *   unknown-catalog), exactly as a file removed while running: in this
 *   directory a file is what declares its catalog, and its revisions kept
 *   stay on disk, held again if the file comes back;
 * - a NAME.json served already gets the reload's attempt on its source
 *   (reload_source_check: dedup, settle, keep the last good, log, count);
 * - a catalog whose file is gone stops being served (holder_remove): a
 *   request for it is 404 unknown-catalog from then on; the others go on.
 *   The default's file gone keeps its last good serving (its own source
 *   says missing): a request without catalog= is never answered from
 *   another catalog;
 * - any other entry (not NAME.json, NAME not a catalog name) is ignored,
 *   with one log line each; dot entries (the kubelet's `..data`, its
 *   timestamped directories) silently.
 *
 * Thread-safety: after catalogdir_start, the directory is read on the
 * watch's thread alone; what it shares (the holder, the reload's sources)
 * has its own locks. catalogdir_new/catalogdir_free pair up; free it after
 * reload_cleanup (the watch stopped).
 */
#ifndef SPLITKD_CATALOGDIR_H
#define SPLITKD_CATALOGDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "catsource.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "reload.h"
#include "status.h"

/*
 * How a catalog of the directory comes into service: `cat` (the file's at
 * `path`, owned from here on; NULL: the file is invalid, why in `why`),
 * after the revisions the state directory kept of `name`, journaled as
 * `trigger`; *from_state when a kept revision serves for the invalid
 * file. Returns 0, or -1 with why in err (nothing served, cat freed).
 * serving.c's hold(), which serves --catalog's catalogs too.
 */
typedef int catalogdir_hold_fn(void *cls, const char *name, const char *path, struct catalog *cat,
			       const char *why, enum api_trigger trigger, bool *from_state, char *err,
			       size_t err_cap);

/* Hears that catalog `name` left service (its file is gone), after the
 * holder let it go: serving.c ends its change streams. */
typedef void catalogdir_drop_fn(void *cls, const char *name);

#define CATALOGDIR_MAX_IGNORED 64 /* other entries logged once each; past it, not logged */

struct catalogdir_slot {
	bool serving; /* a source of the reload's, and a catalog of the holder's */
	bool seen;    /* in the listing just read */
	char name[CATALOG_NAME_MAX + 1];
	char path[PATH_MAX];
	struct catsource rc;
	uint64_t pending_key; /* a new file's bytes, seen once (reload_look's) */
	uint64_t refused_key; /* a new file's bytes refused (reload_look's tried key):
			       * tried again when they change */
};

/* room for "DIR/NAME.json" in a path */
#define CATALOGDIR_MAX_DIR (PATH_MAX - CATALOG_NAME_MAX - 8)

struct catalogdir {
	char dir[CATALOGDIR_MAX_DIR];
	char watch_path[PATH_MAX + 1]; /* "DIR/" */
	const char *default_name;
	catalogdir_hold_fn *hold;
	void *hold_cls;
	struct reload *reload;
	struct holder *holder;
	struct metrics *metrics;
	const struct log *log;
	struct catalogdir_slot slots[HOLDER_MAX_CATALOGS];
	int watch; /* reload_add_watch's index of DIR/; -1: none yet */
	catalogdir_drop_fn *dropped; /* NULL: nobody hears */
	void *dropped_cls;
	char ignored[CATALOGDIR_MAX_IGNORED][64];
	size_t num_ignored;
};

/*
 * The default catalog of DIR: `name` (--default-catalog), or the first
 * NAME.json by name. Its path into path_out and its name into name_out.
 * Returns 0, or -1 with why in err (no such file, no NAME.json at all,
 * the directory unreadable).
 */
int catalogdir_default(const char *dir, const char *name, char *path_out, size_t path_cap,
		       char *name_out, size_t name_cap, char *err, size_t err_cap);

/* A new follower of DIR (nothing read yet) whose catalogs come into
 * service through hold(hold_cls, ...), or NULL when out of memory. */
struct catalogdir *catalogdir_new(const char *dir, const char *default_name,
				  catalogdir_hold_fn *hold, void *hold_cls);
void catalogdir_free(struct catalogdir *d);

/* Who hears of a catalog leaving service (before catalogdir_start). */
void catalogdir_on_drop(struct catalogdir *d, catalogdir_drop_fn *fn, void *cls);

/*
 * Serves every other catalog of DIR that is valid now, and adds the watch
 * of DIR to `reload` (before reload_watch_start; check_seconds as
 * --catalog-check, 0: SIGHUP reads the served ones, nothing finds new
 * files). Returns 0, or -1 with why in err (no room for the watch).
 */
int catalogdir_start(struct catalogdir *d, struct reload *reload, struct holder *holder,
		     struct metrics *metrics, const struct log *log, unsigned check_seconds,
		     char *err, size_t err_cap);

#endif /* SPLITKD_CATALOGDIR_H */
