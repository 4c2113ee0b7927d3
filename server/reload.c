/* SPDX-License-Identifier: AGPL-3.0-only */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the watch follows a source's files as one entry */
_Static_assert(RELOAD_MAX_FILES <= WATCH_MAX_PATHS, "a source's files are one watch entry");

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
	if (s->num_files > 0) { /* none: `files` may be NULL */
		memcpy(s->files, files, s->num_files * sizeof(files[0]));
	}
	s->check_seconds = check_seconds;
	s->watch_entry = -1;
	s->dir_watch = -1;
	status_start(&s->status, s->num_files > 0 ? files[0].path : NULL, unix_ms());
}

int reload_add_serving(struct reload *r, struct reload_source *s, uint64_t served_key)
{
	s->served_key = s->tried_key = served_key;
	return add_source(r, s);
}

void reload_init(struct reload *r, const struct log *log, reload_published_fn *published,
		 void *published_cls)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->run_lock, NULL);
	pthread_mutex_init(&r->state_lock, NULL);
	r->log = log;
	r->published = published;
	r->published_cls = published_cls;
	r->live = true;
}

void reload_cleanup(struct reload *r)
{
	if (!r->live) {
		return; /* zeroed (reload_init never ran), or cleaned up already */
	}
	watch_stop(r->watch);
	r->watch = NULL;
	pthread_mutex_destroy(&r->run_lock);
	pthread_mutex_destroy(&r->state_lock);
	r->live = false;
}

void reload_status_lock(struct reload *r)
{
	pthread_mutex_lock(&r->state_lock);
}

void reload_status_unlock(struct reload *r)
{
	pthread_mutex_unlock(&r->state_lock);
}

void reload_source_from_state(struct reload_source *s, const struct reload_read *rd)
{
	struct api_source_status *st = &s->status;

	/* the file's bytes are not what serves: read again as they are (a
	 * SIGHUP), they are refused again, never "ok, unchanged" */
	s->served_key = 0;
	pthread_mutex_lock(&s->owner->state_lock);
	st->started_from_state = true;
	st->disk = rd->state;
	snprintf(st->disk_error, sizeof(st->disk_error), "%s", rd->error);
	st->last.ok = false;
	st->last.changed = false;
	snprintf(st->last.error, sizeof(st->last.error), "%s", rd->error);
	st->reloads_error = 1;
	pthread_mutex_unlock(&s->owner->state_lock);
}

void reload_source_loaded_at(struct reload_source *s, int64_t ms)
{
	pthread_mutex_lock(&s->owner->state_lock);
	s->status.loaded_at_ms = ms;
	pthread_mutex_unlock(&s->owner->state_lock);
}

/* Records an attempt in the source's status, with the state lock held. */
static void record(struct reload_source *s, enum api_trigger trigger, const struct reload_read *rd,
		   enum reload_outcome outcome, const char *error, int64_t now)
{
	struct api_source_status *st = &s->status;
	bool ok = outcome != RELOAD_REFUSED;

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
}

/* Validates what a read found (texts NULL: the read failed, why in rd):
 * RELOAD_SWAPPED with *value the checked value still to swap in (publish
 * does), or the outcome, why in err when refused. Called with run_lock
 * held. */
static enum reload_outcome try_texts(struct reload_source *s, const struct reload_read_texts *texts,
				     struct reload_read *rd, void **value, char *err, size_t cap)
{
	const struct reload_kind *k = s->kind;

	*value = NULL;
	if (texts == NULL) {
		snprintf(err, cap, "%s", rd->error);
		return RELOAD_REFUSED;
	}
	if (rd->key == s->served_key) {
		return RELOAD_UNCHANGED; /* the bytes in service: nothing to check */
	}
	*value = k->check(s->cls, texts->files, err, cap);
	if (*value == NULL) {
		rd->state = API_DISK_INVALID;
		snprintf(rd->error, sizeof(rd->error), "%s", err);
		return RELOAD_REFUSED;
	}
	if (k->serving != NULL && k->serving(s->cls, *value)) {
		k->drop(*value);
		*value = NULL;
		s->served_key = rd->key;
		return RELOAD_UNCHANGED;
	}
	return RELOAD_SWAPPED;
}

/*
 * The publication of an attempt: a checked value swapped in and, with
 * `rec`, the attempt recorded in the source's status, in one step under
 * the state lock. Whoever reads the status (GET /v1/status, /metrics)
 * takes that lock, and the swap is what every other view reads (the
 * holder: decisions, /v1/revisions, /v1/catalogs), so no client reads a
 * view at the new value and then another at the old one. The notice
 * comes after: when the change streams hear of it, every view answers
 * it. Returns the outcome (REFUSED when the swap failed, why in err).
 * Called with run_lock held.
 */
static enum reload_outcome publish_step(struct reload_source *s, enum reload_outcome outcome,
					void *value, bool rec, enum api_trigger trigger,
					struct reload_read *rd, char *err, size_t cap)
{
	pthread_mutex_lock(&s->owner->state_lock);
	if (value != NULL) {
		if (s->kind->swap(s->cls, value, err, cap) != 0) {
			s->tried_key = 0; /* try these bytes again */
			outcome = RELOAD_REFUSED;
		} else {
			s->served_key = rd->key;
		}
	}
	if (rec) {
		record(s, trigger, rd, outcome, outcome == RELOAD_REFUSED ? err : "", unix_ms());
	}
	pthread_mutex_unlock(&s->owner->state_lock);
	return outcome;
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
	void *value;

	err[0] = '\0';
	s->tried_key = rd->key;
	s->pending_key = 0;
	outcome = try_texts(s, texts, rd, &value, err, cap);
	outcome = publish_step(s, outcome, value, true, trigger, rd, err, cap);
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
	void *value;

	if (add_source(r, s) != 0) {
		snprintf(err, err_cap, "more followed sources than RELOAD_MAX_SOURCES");
		return -1;
	}
	pthread_mutex_lock(&r->run_lock);
	if (reload_read_files(s->files, s->num_files, s->kind->max_bytes, &texts, &rd) == 0) {
		outcome = try_texts(s, &texts, &rd, &value, err, err_cap);
		/* the start-up load: its status is status_start's */
		outcome = publish_step(s, outcome, value, false, API_TRIGGER_START, &rd, err,
				       err_cap);
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
	const struct reload *r = s->owner;
	int entry = s->watch_entry;

	*out = s->status;
	if (entry < 0 && s->dir_watch >= 0 && (size_t)s->dir_watch < r->num_watches) {
		/* followed through its directory's watch: that one's mode */
		entry = r->watches[s->dir_watch].entry;
		out->check_seconds = entry >= 0 ? r->watches[s->dir_watch].check_seconds : 0;
	}
	if (entry < 0) {
		out->watch = API_WATCH_OFF;
	} else {
		out->watch = watch_entry_inotify(r->watch, entry) ? API_WATCH_INOTIFY
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
	pthread_mutex_lock(&r->run_lock);
	for (size_t i = 0; i < r->num_sources; i++) {
		if (r->sources[i]->num_files > 0) { /* one with none is only described */
			reload_one(r->sources[i], API_TRIGGER_SIGNAL);
		}
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
	r->watches[r->num_watches].entry = -1;
	return (int)r->num_watches++;
}

void reload_source_driven_by(struct reload_source *s, int watch)
{
	pthread_mutex_lock(&s->owner->state_lock);
	s->dir_watch = watch;
	pthread_mutex_unlock(&s->owner->state_lock);
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

/* A look at the files found nothing new: only when is recorded. */
static void checked_now(struct reload_source *s)
{
	pthread_mutex_lock(&s->owner->state_lock);
	s->status.checked_at_ms = unix_ms();
	pthread_mutex_unlock(&s->owner->state_lock);
}

unsigned reload_source_check(struct reload_source *s)
{
	struct reload *r = s->owner;
	struct reload_read_texts texts;
	struct reload_read rd;
	char err[API_STATUS_TEXT];
	unsigned again = 0;
	uint64_t stamp;
	int got;

	pthread_mutex_lock(&r->run_lock);
	/* stat first: files not replaced nor written since the last read are
	 * not opened (an idle daemon reads nothing), unless bytes wait for
	 * their second read */
	stamp = reload_read_stamp(s->files, s->num_files);
	if (stamp == s->stamp && s->pending_key == 0) {
		checked_now(s);
		pthread_mutex_unlock(&r->run_lock);
		return 0;
	}
	s->stamp = stamp;
	got = reload_read_files(s->files, s->num_files, s->kind->max_bytes, &texts, &rd);
	switch (reload_look(rd.key, s->tried_key, &s->pending_key, true)) {
	case RELOAD_LOOK_SAME:
		checked_now(s);
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

int reload_watch_start(struct reload *r, char *err, size_t err_cap)
{
	struct watch *w = NULL;
	int ret = -1;

	for (size_t i = 0; i < r->num_sources; i++) {
		struct reload_source *s = r->sources[i];
		const char *paths[RELOAD_MAX_FILES];
		struct watch_options opt = {s->check_seconds, RELOAD_DEBOUNCE_MS};

		if (s->check_seconds == 0 || s->num_files == 0) {
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

		int entry;

		if (r->watches[i].check_seconds == 0) {
			continue;
		}
		entry = watch_on(&w, &r->watches[i].path, 1, &opt, r->watches[i].fn,
				 r->watches[i].cls, err, err_cap);
		if (entry < 0) {
			goto done;
		}
		pthread_mutex_lock(&r->state_lock);
		r->watches[i].entry = entry;
		pthread_mutex_unlock(&r->state_lock);
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
		for (size_t i = 0; i < r->num_watches; i++) {
			r->watches[i].entry = -1;
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
	for (size_t i = 0; i < r->num_sources; i++) {
		struct reload_source *s = r->sources[i];
		struct api_source_status st;

		if (s->kind->report != NULL) {
			source_status_locked(s, &st);
			s->kind->report(s->cls, &st, out);
		}
	}
	pthread_mutex_unlock(&r->state_lock);
}
