/* SPDX-License-Identifier: AGPL-3.0-only */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the watch follows a source's files as one entry */
_Static_assert(RELOAD_MAX_FILES <= WATCH_MAX_PATHS, "a source's files are one watch entry");

/* ------------------------------------------------------ the catalog kind */

/* The catalog in a file's bytes, or NULL with "PATH: why" in err. */
static struct catalog *catalog_from(const char *path, const struct reload_read_text *bytes, char *err,
				    size_t cap)
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
	struct reload_catalog *c = cls;

	return catalog_from(c->src.files[0].path, &files[0], err, cap);
}

char *reload_read_catalog_bytes(const char *path, size_t *len, struct reload_read *rd)
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

struct catalog *reload_parse_catalog(const char *path, const char *data, size_t len,
				     struct reload_read *rd)
{
	const struct reload_read_text bytes = {data, len};
	struct catalog *cat = catalog_from(path, &bytes, rd->error, sizeof(rd->error));

	if (cat == NULL) {
		rd->state = API_DISK_INVALID;
	}
	return cat;
}

struct catalog *reload_read_file(const char *path, struct reload_read *rd)
{
	size_t len = 0;
	char *data = reload_read_catalog_bytes(path, &len, rd);
	struct catalog *cat = data != NULL ? reload_parse_catalog(path, data, len, rd) : NULL;

	free(data);
	return cat;
}

/* The source's catalog in the holder: its name, or the default. */
static const char *catalog_name_of(const struct reload_catalog *c)
{
	return c->name != NULL ? c->name : holder_default_name(c->holder);
}

/* Its current catalog, referenced (NULL: the holder no longer has it). */
static const struct catalog *catalog_current(const struct reload_catalog *c, struct holder_ref **ref)
{
	return holder_acquire_named(c->holder, catalog_name_of(c), ref);
}

/* The digest in service of the holder's catalog, into c->revision (before
 * the source is added, or under the state lock). */
static void catalog_note_revision(struct reload_catalog *c)
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
	struct reload_catalog *c = cls;

	return strcmp(c->revision, ((const struct catalog *)value)->digest) == 0;
}

/* The catalog kind's swap: the holder serves `value` from now on; the
 * catalogs before and after stay referenced until the attempt's notice
 * has gone out (catalog_publish lets them go). */
static int catalog_swap(void *cls, void *value, char *err, size_t cap)
{
	struct reload_catalog *c = cls;
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
	pthread_mutex_lock(&c->src.owner->state_lock);
	snprintf(c->revision, sizeof(c->revision), "%s",
		 c->swap.after != NULL ? c->swap.after->digest : "");
	pthread_mutex_unlock(&c->src.owner->state_lock);
	return 0;
}

static void catalog_drop(void *value)
{
	catalog_free(value);
}

static void catalog_say(void *cls, enum reload_outcome outcome, const char *why, char *out,
			size_t cap)
{
	struct reload_catalog *c = cls;

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
	struct reload_catalog *c = cls;
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
static void named_row(const struct reload_catalog *c, const struct api_source_status *st,
		      struct api_named_source *row)
{
	snprintf(row->name, sizeof(row->name), "%s", catalog_name_of(c));
	snprintf(row->revision, sizeof(row->revision), "%s", c->revision);
	row->st = *st;
}

/* A named catalog's place in the status: one more row (the reload's own
 * catalog, the default, has its row first, from reload_status). */
static void catalog_report(void *cls, const struct api_source_status *st, struct api_status *out)
{
	if (out->num_named < out->max_named) {
		named_row(cls, st, &out->named[out->num_named++]);
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

/* ------------------------------------------------------------ the engine */

/* What a source's status says before any reload: loaded now, at start. */
static void status_start(struct api_source_status *st, const char *source, int64_t now)
{
	memset(st, 0, sizeof(*st));
	st->loaded_at_ms = now;
	st->last = (struct api_status_attempt){.at_ms = now, .trigger = API_TRIGGER_START,
					       .ok = true, .changed = true};
	if (source != NULL) {
		snprintf(st->source, sizeof(st->source), "%s", source);
		st->disk = API_DISK_SAME;
		st->checked_at_ms = now;
	}
}

static int add_source(struct reload *r, struct reload_source *s)
{
	int ret = -1;

	pthread_mutex_lock(&r->run_lock);
	pthread_mutex_lock(&r->state_lock); /* reload_status copies the list under it */
	if (r->num_sources < RELOAD_MAX_SOURCES) {
		s->owner = r;
		s->watch_entry = -1;
		r->sources[r->num_sources++] = s;
		ret = 0;
	}
	pthread_mutex_unlock(&r->state_lock);
	pthread_mutex_unlock(&r->run_lock);
	return ret;
}

void reload_source_init(struct reload_source *s, const struct reload_kind *kind, void *cls,
			const struct reload_read_file *files, size_t num_files,
			unsigned check_seconds)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->cls = cls;
	s->num_files = num_files < RELOAD_MAX_FILES ? num_files : RELOAD_MAX_FILES;
	memcpy(s->files, files, s->num_files * sizeof(files[0]));
	s->check_seconds = check_seconds;
	s->watch_entry = -1;
}

int reload_add_named_catalog(struct reload *r, struct reload_catalog *c, struct holder *holder,
			     const char *name, const char *path, const struct reload_read *initial,
			     struct metrics *metrics, unsigned check_seconds)
{
	const struct reload_read_file file = {NULL, path};

	memset(c, 0, sizeof(*c));
	reload_source_init(&c->src, &catalog_kind, c, &file, 1, check_seconds);
	c->holder = holder;
	c->name = name;
	c->metrics = metrics;
	status_start(&c->src.status, path, unix_ms());
	c->src.served_key = c->src.tried_key = initial->key;
	catalog_note_revision(c); /* published by add_source's state lock */
	return add_source(r, &c->src);
}

int reload_init(struct reload *r, struct holder *holder, const char *path,
		const struct reload_read *initial, const struct log *log, struct metrics *metrics,
		reload_published_fn *published, void *published_cls)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->run_lock, NULL);
	pthread_mutex_init(&r->state_lock, NULL);
	r->log = log;
	r->published = published;
	r->published_cls = published_cls;
	if (path != NULL && initial != NULL) {
		/* its check is reload_watch_start's */
		return reload_add_named_catalog(r, &r->catalog, holder, NULL, path, initial, metrics,
						0);
	}
	/* the embedded catalog: described, never reloaded */
	r->catalog.holder = holder;
	r->catalog.metrics = metrics;
	catalog_note_revision(&r->catalog);
	status_start(&r->catalog.src.status, NULL, unix_ms());
	return 0;
}

void reload_cleanup(struct reload *r)
{
	if (r->catalog.holder == NULL) {
		return; /* zeroed: reload_init never ran */
	}
	watch_stop(r->watch);
	r->watch = NULL;
	pthread_mutex_destroy(&r->run_lock);
	pthread_mutex_destroy(&r->state_lock);
	r->catalog.holder = NULL;
}

void reload_catalog_from_state(struct reload_catalog *c, const struct reload_read *rd)
{
	struct api_source_status *st = &c->src.status;

	/* the file's bytes are not what serves: read again as they are (a
	 * SIGHUP), they are refused again, never "ok, unchanged" */
	c->src.served_key = 0;
	pthread_mutex_lock(&c->src.owner->state_lock);
	st->started_from_state = true;
	st->disk = rd->state;
	snprintf(st->disk_error, sizeof(st->disk_error), "%s", rd->error);
	st->last.ok = false;
	st->last.changed = false;
	snprintf(st->last.error, sizeof(st->last.error), "%s", rd->error);
	st->reloads_error = 1;
	pthread_mutex_unlock(&c->src.owner->state_lock);
	metrics_reload(c->metrics, false);
}

/* Records an attempt in the source's status. */
static void record(struct reload_source *s, enum api_trigger trigger, const struct reload_read *rd,
		   enum reload_outcome outcome, const char *error, int64_t now)
{
	struct api_source_status *st = &s->status;
	bool ok = outcome != RELOAD_REFUSED;

	pthread_mutex_lock(&s->owner->state_lock);
	st->disk = rd->state;
	snprintf(st->disk_error, sizeof(st->disk_error), "%s", rd->error);
	st->checked_at_ms = now;
	st->last.at_ms = now;
	st->last.trigger = trigger;
	st->last.ok = ok;
	st->last.changed = outcome == RELOAD_SWAPPED;
	snprintf(st->last.error, sizeof(st->last.error), "%s", error);
	if (outcome == RELOAD_SWAPPED) {
		st->loaded_at_ms = now;
	}
	if (ok) {
		st->started_from_state = false; /* the file serves again */
		st->reloads_ok++;
	} else {
		st->reloads_error++;
	}
	pthread_mutex_unlock(&s->owner->state_lock);
}

/* Validates and swaps what a read found (texts NULL: the read failed, why
 * in rd). Returns the outcome, why in err when refused. Called with
 * run_lock held. */
static enum reload_outcome try_texts(struct reload_source *s, const struct reload_read_texts *texts,
				     struct reload_read *rd, char *err, size_t cap)
{
	const struct reload_kind *k = s->kind;
	void *value;

	if (texts == NULL) {
		snprintf(err, cap, "%s", rd->error);
		return RELOAD_REFUSED;
	}
	if (rd->key == s->served_key) {
		return RELOAD_UNCHANGED; /* the bytes in service: nothing to check */
	}
	value = k->check(s->cls, texts->files, err, cap);
	if (value == NULL) {
		rd->state = API_DISK_INVALID;
		snprintf(rd->error, sizeof(rd->error), "%s", err);
		return RELOAD_REFUSED;
	}
	if (k->serving != NULL && k->serving(s->cls, value)) {
		k->drop(value);
		s->served_key = rd->key;
		return RELOAD_UNCHANGED;
	}
	if (k->swap(s->cls, value, err, cap) != 0) {
		s->tried_key = 0; /* try these bytes again */
		return RELOAD_REFUSED;
	}
	s->served_key = rd->key;
	return RELOAD_SWAPPED;
}

void reload_publish(struct reload *r, const struct reload_attempt *a)
{
	if (r->published != NULL) {
		r->published(r->published_cls, a);
	}
}

/* An attempt's notice: what every kind's says, then the kind's own (its
 * `publish` hands it on). Called with run_lock held. */
static void publish(struct reload_source *s, enum api_trigger trigger, enum reload_outcome outcome,
		    const char *error)
{
	struct reload_attempt a = {.source = s, .trigger = trigger, .ok = outcome != RELOAD_REFUSED,
				   .changed = outcome == RELOAD_SWAPPED, .error = error};

	if (s->kind->publish != NULL) {
		s->kind->publish(s->cls, &a);
	} else {
		reload_publish(s->owner, &a);
	}
}

/* One attempt: validate, swap, record, publish, log. Called with run_lock
 * held. Returns the outcome. */
static enum reload_outcome attempt(struct reload_source *s, enum api_trigger trigger,
				   const struct reload_read_texts *texts, struct reload_read *rd,
				   char *err, size_t cap)
{
	char line[2 * API_STATUS_TEXT];
	enum reload_outcome outcome;

	err[0] = '\0';
	s->tried_key = rd->key;
	s->pending_key = 0;
	outcome = try_texts(s, texts, rd, err, cap);
	record(s, trigger, rd, outcome, outcome == RELOAD_REFUSED ? err : "", unix_ms());
	publish(s, trigger, outcome, outcome == RELOAD_REFUSED ? err : "");
	s->kind->say(s->cls, outcome, err, line, sizeof(line));
	log_event(s->owner->log, s->kind->event, "%s (%s)", line, status_trigger_name(trigger));
	return outcome;
}

int reload_add(struct reload *r, struct reload_source *s, char *err, size_t err_cap)
{
	struct reload_read_texts texts;
	struct reload_read rd;
	enum reload_outcome outcome = RELOAD_REFUSED;
	int64_t now = unix_ms();

	if (add_source(r, s) != 0) {
		snprintf(err, err_cap, "more followed sources than RELOAD_MAX_SOURCES");
		return -1;
	}
	status_start(&s->status, s->files[0].path, now);
	pthread_mutex_lock(&r->run_lock);
	if (reload_read_files(s->files, s->num_files, s->kind->max_bytes, &texts, &rd) == 0) {
		outcome = try_texts(s, &texts, &rd, err, err_cap);
		reload_read_texts_cleanup(&texts);
	} else {
		snprintf(err, err_cap, "%s", rd.error);
	}
	s->tried_key = rd.key;
	publish(s, API_TRIGGER_START, outcome, outcome == RELOAD_REFUSED ? err : "");
	if (outcome != RELOAD_SWAPPED) {
		r->num_sources--; /* nothing serves: the source is not followed */
		s->owner = NULL;
	}
	pthread_mutex_unlock(&r->run_lock);
	return outcome == RELOAD_SWAPPED ? 0 : -1;
}

/* reload_source_status with the state lock held. */
static void source_status_locked(const struct reload_source *s, struct api_source_status *out)
{
	*out = s->status;
	if (s->watch_entry < 0) {
		out->watch = API_WATCH_OFF;
	} else {
		out->watch = watch_entry_inotify(s->owner->watch, s->watch_entry) ? API_WATCH_INOTIFY
										  : API_WATCH_PERIODIC;
	}
}

void reload_source_status(struct reload_source *s, struct api_source_status *out)
{
	pthread_mutex_lock(&s->owner->state_lock);
	source_status_locked(s, out);
	pthread_mutex_unlock(&s->owner->state_lock);
}

/* Reads a source and tries what it found. Called with run_lock held. */
static void reload_one(struct reload_source *s, enum api_trigger trigger)
{
	struct reload_read_texts texts;
	struct reload_read rd;
	char err[API_STATUS_TEXT];
	int got = reload_read_files(s->files, s->num_files, s->kind->max_bytes, &texts, &rd);

	(void)attempt(s, trigger, got == 0 ? &texts : NULL, &rd, err, sizeof(err));
	reload_read_texts_cleanup(&texts);
}

void reload_now(struct reload *r)
{
	if (r->catalog.src.owner == NULL) {
		log_event(r->log, "reload", "skipped: serving the embedded catalog (no --catalog FILE)");
	}
	pthread_mutex_lock(&r->run_lock);
	for (size_t i = 0; i < r->num_sources; i++) {
		reload_one(r->sources[i], API_TRIGGER_SIGNAL);
	}
	pthread_mutex_unlock(&r->run_lock);
}

void reload_remove(struct reload *r, struct reload_source *s)
{
	pthread_mutex_lock(&r->run_lock);
	pthread_mutex_lock(&r->state_lock);
	for (size_t i = 0; i < r->num_sources; i++) {
		if (r->sources[i] == s) {
			memmove(&r->sources[i], &r->sources[i + 1],
				(r->num_sources - i - 1) * sizeof(r->sources[0]));
			r->num_sources--;
			break;
		}
	}
	pthread_mutex_unlock(&r->state_lock);
	pthread_mutex_unlock(&r->run_lock);
}

int reload_add_watch(struct reload *r, const char *path, unsigned check_seconds, watch_fn *fn,
		     void *cls)
{
	if (r->num_watches == RELOAD_MAX_WATCHES) {
		return -1;
	}
	r->watches[r->num_watches].path = path;
	r->watches[r->num_watches].check_seconds = check_seconds;
	r->watches[r->num_watches].fn = fn;
	r->watches[r->num_watches].cls = cls;
	r->num_watches++;
	return 0;
}

enum reload_look reload_look(uint64_t key, uint64_t tried_key, uint64_t *pending_key, bool settle)
{
	if (key == tried_key) {
		/* nothing new: the same bytes, or the same failure, as last time */
		*pending_key = 0;
		return RELOAD_LOOK_SAME;
	}
	if (settle && key != *pending_key) {
		/* first sight of these bytes: a writer may still be writing, so
		 * read again a moment later and trust them only if unchanged */
		*pending_key = key;
		return RELOAD_LOOK_WAIT;
	}
	*pending_key = 0;
	return RELOAD_LOOK_TRY;
}

unsigned reload_source_check(struct reload_source *s)
{
	struct reload *r = s->owner;
	struct reload_read_texts texts;
	struct reload_read rd;
	char err[API_STATUS_TEXT];
	unsigned again = 0;
	int got;

	pthread_mutex_lock(&r->run_lock);
	got = reload_read_files(s->files, s->num_files, s->kind->max_bytes, &texts, &rd);
	switch (reload_look(rd.key, s->tried_key, &s->pending_key, true)) {
	case RELOAD_LOOK_SAME:
		pthread_mutex_lock(&r->state_lock);
		s->status.checked_at_ms = unix_ms();
		pthread_mutex_unlock(&r->state_lock);
		break;
	case RELOAD_LOOK_WAIT:
		again = RELOAD_SETTLE_MS;
		break;
	case RELOAD_LOOK_TRY:
		(void)attempt(s, API_TRIGGER_WATCH, got == 0 ? &texts : NULL, &rd, err, sizeof(err));
		break;
	}
	reload_read_texts_cleanup(&texts);
	pthread_mutex_unlock(&r->run_lock);
	return again;
}

/* The watch's callback: something of the source's may have changed. */
static unsigned on_watch(void *cls)
{
	return reload_source_check(cls);
}

/* watch_add on *w, made first when none is yet (the watch exists only
 * when something is watched). Returns watch_add's entry, or -1 with err. */
static int watch_on(struct watch **w, const char *const *paths, size_t num,
		    const struct watch_options *opt, watch_fn *fn, void *cls, char *err,
		    size_t err_cap)
{
	if (*w == NULL) {
		*w = watch_new(err, err_cap);
		if (*w == NULL) {
			return -1;
		}
	}
	return watch_add(*w, paths, num, opt, fn, cls, err, err_cap);
}

int reload_watch_start(struct reload *r, unsigned check_seconds, char *err, size_t err_cap)
{
	struct watch *w = NULL;
	int ret = -1;

	r->catalog.src.check_seconds = r->catalog.src.owner != NULL ? check_seconds : 0;
	for (size_t i = 0; i < r->num_sources; i++) {
		struct reload_source *s = r->sources[i];
		const char *paths[RELOAD_MAX_FILES];
		struct watch_options opt = {s->check_seconds, RELOAD_DEBOUNCE_MS};

		if (s->check_seconds == 0) {
			continue;
		}
		for (size_t j = 0; j < s->num_files; j++) {
			paths[j] = s->files[j].path;
		}
		s->watch_entry = watch_on(&w, paths, s->num_files, &opt, on_watch, s, err, err_cap);
		if (s->watch_entry < 0) {
			goto done;
		}
		pthread_mutex_lock(&r->state_lock);
		s->status.check_seconds = s->check_seconds;
		pthread_mutex_unlock(&r->state_lock);
	}
	for (size_t i = 0; i < r->num_watches; i++) {
		struct watch_options opt = {r->watches[i].check_seconds, RELOAD_DEBOUNCE_MS};

		if (r->watches[i].check_seconds != 0 &&
		    watch_on(&w, &r->watches[i].path, 1, &opt, r->watches[i].fn, r->watches[i].cls, err,
			     err_cap) < 0) {
			goto done;
		}
	}
	if (w != NULL && watch_run(w, err, err_cap) != 0) {
		goto done;
	}
	r->watch = w;
	w = NULL;
	ret = 0;
done:
	if (w != NULL) {
		for (size_t i = 0; i < r->num_sources; i++) {
			r->sources[i]->watch_entry = -1;
		}
		watch_stop(w);
	}
	return ret;
}

void reload_status(void *cls, struct api_status *out)
{
	struct reload *r = cls;
	struct api_named_source *named = out->named;
	size_t max_named = out->max_named;

	memset(out, 0, sizeof(*out));
	out->named = named;
	out->max_named = max_named;
	/* under the short lock, never the reload's: a --catalog-dir adds and
	 * removes sources (under both), and a request never waits on a reload */
	pthread_mutex_lock(&r->state_lock);
	snprintf(out->revision, sizeof(out->revision), "%s", r->catalog.revision);
	if (r->catalog.src.owner != NULL) {
		source_status_locked(&r->catalog.src, &out->catalog);
	} else {
		out->catalog = r->catalog.src.status;
	}
	if (out->max_named > 0) {
		named_row(&r->catalog, &out->catalog, &out->named[out->num_named++]);
	}
	for (size_t i = 0; i < r->num_sources; i++) {
		struct reload_source *s = r->sources[i];
		struct api_source_status st;

		/* the reload's own catalog is written above */
		if (s->kind->report != NULL && s != &r->catalog.src) {
			source_status_locked(s, &st);
			s->kind->report(s->cls, &st, out);
		}
	}
	pthread_mutex_unlock(&r->state_lock);
}
