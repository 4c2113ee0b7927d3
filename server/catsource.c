/* SPDX-License-Identifier: AGPL-3.0-only */
#include "catsource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "embedded.h"

/* The catalog in a file's bytes, or NULL with "PATH: why" in err. */
static struct catalog *catalog_from(const char *path, const struct reload_read_text *bytes,
				    char *err, size_t cap)
{
	char why[512];
	struct catalog *cat = catalog_load(bytes->data, bytes->len, why, sizeof(why));

	if (cat == NULL) {
		snprintf(err, cap, "%s: %s", path, why);
	}
	return cat;
}

static void *catalog_check(void *cls, const struct reload_read_text *files, char *err, size_t cap)
{
	struct catsource *c = cls;

	return catalog_from(c->src.files[0].path, &files[0], err, cap);
}

char *catsource_read_bytes(const char *path, size_t *len, struct reload_read *rd)
{
	const struct reload_read_file file = {NULL, path};
	struct reload_read_texts t;
	char *data;

	if (reload_read_files(&file, 1, CATALOG_MAX_BYTES, &t, rd) != 0) {
		return NULL;
	}
	data = t.data[0];
	*len = t.files[0].len;
	return data;
}

struct catalog *catsource_parse(const char *path, const char *data, size_t len,
				struct reload_read *rd)
{
	const struct reload_read_text bytes = {data, len};
	struct catalog *cat = catalog_from(path, &bytes, rd->error, sizeof(rd->error));

	if (cat == NULL) {
		rd->state = API_DISK_INVALID;
	}
	return cat;
}

struct catalog *catsource_load(const char *path, struct reload_read *rd, char *err, size_t cap)
{
	char why[512];
	struct reload_read mine;
	struct catalog *cat = NULL;
	size_t len = 0;
	char *data;

	rd = rd != NULL ? rd : &mine;
	memset(rd, 0, sizeof(*rd));
	if (path == NULL) {
		cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, why, sizeof(why));
		if (cat == NULL) {
			snprintf(err, cap, "embedded catalog: %s", why);
		}
		return cat;
	}
	data = catsource_read_bytes(path, &len, rd);
	if (data != NULL) {
		cat = catsource_parse(path, data, len, rd);
	}
	free(data);
	if (cat == NULL) {
		snprintf(err, cap, "%s", rd->error);
	}
	return cat;
}

/* The source's catalog in the holder: its name, or the default. */
static const char *catalog_name_of(const struct catsource *c)
{
	return c->name != NULL ? c->name : holder_default_name(c->holder);
}

/* Its current catalog, referenced (NULL: the holder no longer has it). */
static const struct catalog *catalog_current(const struct catsource *c,
					     struct holder_ref **ref)
{
	return holder_acquire_named(c->holder, catalog_name_of(c), ref);
}

/* The digest in service of the holder's catalog, into c->revision (before
 * the source is added, or under the state lock). */
static void catalog_note_revision(struct catsource *c)
{
	struct holder_ref *ref;
	const struct catalog *now = catalog_current(c, &ref);

	snprintf(c->revision, sizeof(c->revision), "%s", now != NULL ? now->digest : "");
	if (ref != NULL) {
		holder_release(c->holder, ref);
	}
}

static bool catalog_serving(void *cls, const void *value)
{
	struct catsource *c = cls;

	return strcmp(c->revision, ((const struct catalog *)value)->digest) == 0;
}

/* The catalog kind's swap (under the reload's status lock): the holder
 * serves `value` from now on; the
 * catalogs before and after stay referenced until the attempt's notice
 * has gone out (catalog_publish lets them go). */
static int catalog_swap(void *cls, void *value, char *err, size_t cap)
{
	struct catsource *c = cls;
	struct holder_ref *before_ref;
	const struct catalog *before = catalog_current(c, &before_ref);
	int rc = holder_swap_named(c->holder, catalog_name_of(c), value, c->src.files[0].path);

	if (rc != 0) {
		if (before_ref != NULL) {
			holder_release(c->holder, before_ref);
		}
		snprintf(err, cap, "%s", holder_swap_error(rc));
		return -1;
	}
	c->swap.before = before;
	c->swap.before_ref = before_ref;
	c->swap.after = catalog_current(c, &c->swap.after_ref);
	/* under the status lock (reload.c's publication): the status's
	 * revision and the holder's move together */
	snprintf(c->revision, sizeof(c->revision), "%s",
		 c->swap.after != NULL ? c->swap.after->digest : "");
	return 0;
}

static void catalog_drop(void *value)
{
	catalog_free(value);
}

static void catalog_say(void *cls, enum reload_outcome outcome, const char *why, char *out,
			size_t cap)
{
	struct catsource *c = cls;

	if (outcome == RELOAD_REFUSED) {
		snprintf(out, cap, "refused, the old catalog keeps serving: %s", why);
		return;
	}
	snprintf(out, cap, "ok: %s, catalog %s%s", c->src.files[0].path, c->revision,
		 outcome == RELOAD_UNCHANGED ? ", unchanged" : "");
}

/* The catalog kind's members of an attempt's notice: which catalog, and
 * what served before and after it (a swap's catalogs, let go once heard). */
static void catalog_publish(void *cls, struct reload_attempt *a)
{
	struct catsource *c = cls;
	const struct catalog *before = c->swap.before, *after = c->swap.after;

	a->catalog = catalog_name_of(c);
	if (a->changed) {
		a->from = before != NULL ? before->digest : "";
		a->to = after != NULL ? after->digest : "";
		a->changed_cells = before != NULL && after != NULL ? diff_changed_cells(before, after)
								   : 0;
		a->before = before;
		a->after = after;
	} else {
		a->from = c->revision;
		a->to = a->ok ? a->from : "";
	}
	reload_publish(c->src.owner, a);
	if (a->changed) {
		if (c->swap.after_ref != NULL) {
			holder_release(c->holder, c->swap.after_ref);
		}
		if (c->swap.before_ref != NULL) {
			holder_release(c->holder, c->swap.before_ref);
		}
		memset(&c->swap, 0, sizeof(c->swap));
	}
}

/* A catalog source's row of the status: its name, its revision, its
 * state. With the state lock held: the revision is the copy the swap left,
 * and a --catalog-dir removes a source (under the lock) before its
 * catalog leaves the holder, so no row names a catalog no longer held. */
static void named_row(const struct catsource *c, const struct api_source_status *st,
		      struct api_named_source *row)
{
	snprintf(row->name, sizeof(row->name), "%s", catalog_name_of(c));
	snprintf(row->revision, sizeof(row->revision), "%s", c->revision);
	row->st = *st;
}

/* A catalog's place in the status: one more row, and the default's own
 * members besides (the reload's first source: its row comes first). */
static void catalog_report(void *cls, const struct api_source_status *st, struct api_status *out)
{
	struct catsource *c = cls;

	if (c->name == NULL) {
		snprintf(out->revision, sizeof(out->revision), "%s", c->revision);
		out->catalog = *st;
	}
	if (out->num_named < out->max_named) {
		named_row(c, st, &out->named[out->num_named++]);
	}
}

static const struct reload_kind catalog_kind = {
	.event = "reload",
	.max_bytes = CATALOG_MAX_BYTES,
	.check = catalog_check,
	.serving = catalog_serving,
	.swap = catalog_swap,
	.drop = catalog_drop,
	.say = catalog_say,
	.report = catalog_report,
	.publish = catalog_publish,
};

int catsource_add(struct catsource *c, struct reload *r, struct holder *holder, const char *name,
		  const char *path, const struct reload_read *initial, unsigned check_seconds)
{
	const struct reload_read_file file = {NULL, path};

	memset(c, 0, sizeof(*c));
	reload_source_init(&c->src, &catalog_kind, c, &file, path != NULL ? 1 : 0, check_seconds);
	c->holder = holder;
	c->name = name;
	catalog_note_revision(c); /* published by the add's status lock */
	return reload_add_serving(r, &c->src, initial != NULL ? initial->key : 0);
}
