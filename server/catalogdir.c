/* SPDX-License-Identifier: AGPL-3.0-only */
#include "catalogdir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUFFIX ".json"
#define SUFFIX_LEN (sizeof(SUFFIX) - 1)

/* The catalog name of a directory entry ("legacy.json": "legacy"), into
 * out; false for any other entry. */
static bool name_of(const char *entry, char *out, size_t cap)
{
	size_t len = strlen(entry);

	if (len <= SUFFIX_LEN || strcmp(entry + len - SUFFIX_LEN, SUFFIX) != 0 ||
	    !catalog_name_ok(entry, len - SUFFIX_LEN) || len - SUFFIX_LEN >= cap) {
		return false;
	}
	memcpy(out, entry, len - SUFFIX_LEN);
	out[len - SUFFIX_LEN] = '\0';
	return true;
}

int catalogdir_default(const char *dir, const char *name, char *path_out, size_t path_cap,
		       char *name_out, size_t name_cap, char *err, size_t err_cap)
{
	DIR *dp = strlen(dir) < CATALOGDIR_MAX_DIR ? opendir(dir) : NULL;
	struct dirent *e;
	char best[CATALOG_NAME_MAX + 1] = "", n[CATALOG_NAME_MAX + 1];
	const char *pick = name;

	if (dp == NULL) {
		snprintf(err, err_cap, "--catalog-dir %s: cannot read the directory", dir);
		return -1;
	}
	while ((e = readdir(dp)) != NULL) {
		if (name_of(e->d_name, n, sizeof(n)) && (best[0] == '\0' || strcmp(n, best) < 0)) {
			snprintf(best, sizeof(best), "%s", n);
		}
	}
	closedir(dp);
	if (pick == NULL) {
		if (best[0] == '\0') {
			snprintf(err, err_cap, "--catalog-dir %s holds no NAME.json catalog", dir);
			return -1;
		}
		pick = best;
	}
	snprintf(name_out, name_cap, "%s", pick);
	snprintf(path_out, path_cap, "%s/%s" SUFFIX, dir, pick);
	return 0;
}

struct catalogdir *catalogdir_new(const char *dir, const char *default_name,
				  catalogdir_hold_fn *hold, void *hold_cls)
{
	struct catalogdir *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		return NULL;
	}
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(d->watch_path, sizeof(d->watch_path), "%s/", dir);
	d->watch = -1;
	d->default_name = default_name;
	d->hold = hold;
	d->hold_cls = hold_cls;
	return d;
}

void catalogdir_free(struct catalogdir *d)
{
	free(d);
}

static struct catalogdir_slot *slot_of(struct catalogdir *d, const char *name)
{
	struct catalogdir_slot *free_slot = NULL;

	for (size_t i = 0; i < HOLDER_MAX_CATALOGS; i++) {
		struct catalogdir_slot *s = &d->slots[i];

		if (s->name[0] != '\0' && strcmp(s->name, name) == 0) {
			return s;
		}
		if (s->name[0] == '\0' && free_slot == NULL) {
			free_slot = s;
		}
	}
	if (free_slot != NULL) {
		snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	}
	return free_slot;
}

/* An entry that is no catalog: one log line, the first time. */
static void ignore(struct catalogdir *d, const char *entry)
{
	if (entry[0] == '.') {
		return; /* ".", "..", the kubelet's "..data" and its directories */
	}
	for (size_t i = 0; i < d->num_ignored; i++) {
		if (strncmp(d->ignored[i], entry, sizeof(d->ignored[i]) - 1) == 0) {
			return;
		}
	}
	if (d->num_ignored < CATALOGDIR_MAX_IGNORED) {
		snprintf(d->ignored[d->num_ignored++], sizeof(d->ignored[0]), "%.63s", entry);
		log_event(d->log, "reload", "--catalog-dir %s: ignoring %s (not NAME.json, NAME 1 to 63 "
			  "of a-z 0-9 . _ -)", d->dir, entry);
	}
}

/* A NAME.json not served yet: served once the same valid bytes are read
 * twice (reload_look's settle), parsed only then. At start (`settle`
 * false) invalid bytes go to the hold too, which serves the revision the
 * state directory kept, if any. Returns the milliseconds until it wants
 * another look. */
static unsigned try_new(struct catalogdir *d, struct catalogdir_slot *s, bool settle)
{
	struct reload_read rd;
	struct catalog *cat = NULL;
	size_t len = 0;
	char *bytes, err[640];
	const char *refused = NULL; /* why it is not served */
	enum reload_look look;
	bool from_state = false;

	snprintf(s->path, sizeof(s->path), "%s/%s" SUFFIX, d->dir, s->name);
	bytes = catsource_read_bytes(s->path, &len, &rd);
	look = reload_look(rd.key, s->refused_key, &s->pending_key, settle);
	if (look == RELOAD_LOOK_TRY && bytes != NULL) {
		cat = catsource_parse(s->path, bytes, len, &rd);
	}
	free(bytes);
	if (look != RELOAD_LOOK_TRY) {
		/* refused before and unchanged since, or seen once */
		return look == RELOAD_LOOK_WAIT ? RELOAD_SETTLE_MS : 0;
	}
	/* a file added while running has no last good to start on: only a
	 * restart serves a kept revision in place of an invalid file */
	if (cat == NULL && settle) {
		refused = rd.error;
	} else if (d->hold(d->hold_cls, s->name, s->path, cat, rd.error,
			   settle ? API_TRIGGER_WATCH : API_TRIGGER_START, &from_state, err,
			   sizeof(err)) != 0) {
		refused = err;
	} else if (catsource_add(&s->rc, d->reload, d->holder, s->name, s->path, &rd, 0) != 0) {
		holder_remove(d->holder, s->name);
		refused = "no room for its source";
	}
	if (refused != NULL) {
		s->refused_key = rd.key;
		log_event(d->log, "reload", "catalog %s not served: %s", s->name, refused);
		return 0;
	}
	reload_source_driven_by(&s->rc.src, d->watch);
	if (from_state) {
		reload_source_from_state(&s->rc.src, &rd);
		metrics_reload(d->metrics, false);
	}
	s->serving = true;
	s->refused_key = 0;
	log_event(d->log, "reload", "catalog %s added: %s", s->name, s->path);
	return 0;
}

/* A served catalog whose file is gone: no longer declared. */
static void drop(struct catalogdir *d, struct catalogdir_slot *s)
{
	if (s->serving) {
		reload_remove(d->reload, &s->rc.src);
		holder_remove(d->holder, s->name);
		if (d->dropped != NULL) {
			d->dropped(d->dropped_cls, s->name);
		}
		log_event(d->log, "reload", "catalog %s removed: %s is gone; no longer served", s->name,
			  s->path);
	}
	memset(s, 0, sizeof(*s));
}

static unsigned min_again(unsigned a, unsigned b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* One listing; `settle`: new bytes must be read twice (not at start). */
static unsigned scan(struct catalogdir *d, bool settle)
{
	DIR *dp = opendir(d->dir);
	struct dirent *e;
	unsigned again = 0;
	char name[CATALOG_NAME_MAX + 1];

	if (dp == NULL) {
		return 0; /* gone for now (a volume remounting): the served ones stay */
	}
	for (size_t i = 0; i < HOLDER_MAX_CATALOGS; i++) {
		d->slots[i].seen = false;
	}
	while ((e = readdir(dp)) != NULL) {
		struct catalogdir_slot *s;

		if (!name_of(e->d_name, name, sizeof(name))) {
			ignore(d, e->d_name);
			continue;
		}
		if (strcmp(name, d->default_name) == 0) {
			continue; /* the --catalog source's own */
		}
		s = slot_of(d, name);
		if (s == NULL) {
			continue; /* more files than catalogs can ever serve */
		}
		s->seen = true;
		again = min_again(again, s->serving ? reload_source_check(&s->rc.src)
						    : try_new(d, s, settle));
	}
	closedir(dp);
	for (size_t i = 0; i < HOLDER_MAX_CATALOGS; i++) {
		if (d->slots[i].name[0] != '\0' && !d->slots[i].seen) {
			drop(d, &d->slots[i]);
		}
	}
	return again;
}

/* The watch's callback: a listing now, new bytes read twice. */
static unsigned on_watch(void *cls)
{
	return scan(cls, true);
}

int catalogdir_start(struct catalogdir *d, struct reload *reload, struct holder *holder,
		     struct metrics *metrics, const struct log *log, unsigned check_seconds,
		     char *err, size_t err_cap)
{
	d->reload = reload;
	d->holder = holder;
	d->metrics = metrics;
	d->log = log;
	/* the watch first: each catalog the first listing serves is shown
	 * followed by it */
	d->watch = reload_add_watch(reload, d->watch_path, check_seconds, on_watch, d);
	if (d->watch < 0) {
		snprintf(err, err_cap, "--catalog-dir: no room for its watch");
		return -1;
	}
	(void)scan(d, false);
	return 0;
}

void catalogdir_on_drop(struct catalogdir *d, catalogdir_drop_fn *fn, void *cls)
{
	d->dropped = fn;
	d->dropped_cls = cls;
}
