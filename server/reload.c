/* SPDX-License-Identifier: AGPL-3.0-only */
#include "reload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* FNV-1a 64 over the bytes, never 0 (0 means "nothing seen"). */
static uint64_t content_key(const char *p, size_t n, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325u ^ seed;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3u;
	}
	return h != 0 ? h : 1;
}

/* A failure's key: its kind and errno, so the same failure seen again is
 * not a new one, and a different one is. */
static uint64_t failure_key(enum api_disk_state state, int err)
{
	char tag[2] = {(char)state, (char)err};

	return content_key(tag, sizeof(tag), 0x5a5a5a5au);
}

static void read_failed(struct reload_read *rd, const char *path, int err)
{
	rd->state = err == ENOENT || err == ENOTDIR ? API_DISK_MISSING : API_DISK_UNREADABLE;
	rd->key = failure_key(rd->state, err);
	snprintf(rd->error, sizeof(rd->error), "%s: %s", path, strerror(err));
}

char *reload_read_bytes(const char *path, size_t max, size_t *len, struct reload_read *rd)
{
	/* O_NONBLOCK: a FIFO put in the file's place must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *buf = NULL;
	size_t n = 0;
	struct stat st;

	if (fd < 0) {
		read_failed(rd, path, errno);
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		read_failed(rd, path, errno);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a directory or a FIFO (which could block the reload forever) */
		read_failed(rd, path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
		goto done;
	}
	buf = malloc(max + 1);
	if (buf == NULL) {
		read_failed(rd, path, ENOMEM);
		goto done;
	}
	while (n <= max) {
		ssize_t got = read(fd, buf + n, max + 1 - n);

		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got < 0) {
			read_failed(rd, path, errno);
			free(buf);
			buf = NULL;
			goto done;
		}
		if (got == 0) {
			break;
		}
		n += (size_t)got;
	}
	if (n > max) {
		rd->state = API_DISK_INVALID;
		rd->key = failure_key(API_DISK_INVALID, EFBIG);
		snprintf(rd->error, sizeof(rd->error), "%s: larger than %zu bytes", path, max);
		free(buf);
		buf = NULL;
		goto done;
	}
	*len = n;
done:
	close(fd);
	return buf;
}

struct catalog *reload_read_file(const char *path, struct reload_read *rd)
{
	char why[512];
	struct catalog *cat = NULL;
	size_t len = 0;
	char *text;

	memset(rd, 0, sizeof(*rd));
	text = reload_read_bytes(path, CATALOG_MAX_BYTES, &len, rd);
	if (text == NULL) {
		return NULL;
	}
	rd->key = content_key(text, len, 0);
	if (len == 0) {
		/* flagd loads "{}" here and empties its flags; an empty file is a
		 * write in progress or a mistake, never a catalog */
		rd->state = API_DISK_INVALID;
		snprintf(rd->error, sizeof(rd->error), "%s: empty file", path);
		goto done;
	}
	cat = catalog_load(text, len, why, sizeof(why));
	if (cat == NULL) {
		rd->state = API_DISK_INVALID;
		snprintf(rd->error, sizeof(rd->error), "%s: %s", path, why);
		goto done;
	}
	rd->state = API_DISK_SAME;
done:
	free(text);
	return cat;
}

static const char *reload_name(const struct reload *r)
{
	return r->name != NULL ? r->name : holder_default_name(r->holder);
}

int reload_init(struct reload *r, struct holder *holder, const char *path,
		const struct reload_read *initial, const struct log *log, struct metrics *metrics)
{
	return reload_init_named(r, holder, NULL, path, initial, log, metrics);
}

int reload_init_named(struct reload *r, struct holder *holder, const char *name, const char *path,
		      const struct reload_read *initial, const struct log *log,
		      struct metrics *metrics)
{
	struct holder_ref *ref;
	const struct catalog *cat;
	int64_t now = unix_ms();

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->run_lock, NULL);
	pthread_mutex_init(&r->state_lock, NULL);
	r->holder = holder;
	r->name = name;
	r->path = path;
	r->log = log;
	r->metrics = metrics;
	cat = holder_acquire_named(holder, reload_name(r), &ref);
	if (cat != NULL) {
		snprintf(r->status.revision, sizeof(r->status.revision), "%s", cat->digest);
		holder_release(holder, ref);
	}
	r->status.loaded_at_ms = now;
	r->status.last = (struct api_status_attempt){.at_ms = now, .trigger = API_TRIGGER_START,
						     .ok = true, .changed = true};
	if (path != NULL && initial != NULL) {
		snprintf(r->status.source, sizeof(r->status.source), "%s", path);
		r->status.disk = API_DISK_SAME;
		r->status.checked_at_ms = now;
		r->tried_key = initial->key;
	}
	return 0;
}

void reload_cleanup(struct reload *r)
{
	if (r->holder == NULL) {
		return; /* zeroed: reload_init never ran */
	}
	watch_stop(r->watch);
	r->watch = NULL;
	pthread_mutex_destroy(&r->run_lock);
	pthread_mutex_destroy(&r->state_lock);
	r->holder = NULL;
}

int reload_add_listener(struct reload *r, reload_listener_fn *fn, void *cls)
{
	int ret = -1;

	pthread_mutex_lock(&r->run_lock);
	if (r->num_listeners < RELOAD_MAX_LISTENERS) {
		r->listeners[r->num_listeners].fn = fn;
		r->listeners[r->num_listeners].cls = cls;
		r->num_listeners++;
		ret = 0;
	}
	pthread_mutex_unlock(&r->run_lock);
	return ret;
}

/* Records an attempt in the status (copied out by reload_status). */
static void record(struct reload *r, enum api_trigger trigger, const struct reload_read *rd,
		   bool ok, bool changed, const char *error, int64_t now)
{
	pthread_mutex_lock(&r->state_lock);
	r->status.disk = rd->state;
	snprintf(r->status.disk_error, sizeof(r->status.disk_error), "%s", rd->error);
	r->status.checked_at_ms = now;
	r->status.last.at_ms = now;
	r->status.last.trigger = trigger;
	r->status.last.ok = ok;
	r->status.last.changed = changed;
	snprintf(r->status.last.error, sizeof(r->status.last.error), "%s", error);
	if (ok) {
		r->status.reloads_ok++;
	} else {
		r->status.reloads_error++;
	}
	pthread_mutex_unlock(&r->state_lock);
}

static void notify(struct reload *r, const struct catalog *before, const struct catalog *after)
{
	for (size_t i = 0; i < r->num_listeners; i++) {
		r->listeners[i].fn(r->listeners[i].cls, before, after);
	}
}

/* One attempt with what a read found (cat NULL: it failed). Takes cat.
 * Called with run_lock held. */
static void attempt(struct reload *r, enum api_trigger trigger, struct catalog *cat,
		    const struct reload_read *rd)
{
	const char *why = status_trigger_name(trigger);
	char digest[CATALOG_DIGEST_LEN + 1];
	struct holder_ref *before_ref, *after_ref;
	const struct catalog *before, *after;
	int64_t now = unix_ms();

	r->tried_key = rd->key;
	r->pending_key = 0;
	if (cat == NULL) {
		metrics_reload(r->metrics, false);
		record(r, trigger, rd, false, false, rd->error, now);
		log_event(r->log, "reload", "refused, the old catalog keeps serving: %s (%s)", rd->error,
			  why);
		return;
	}
	/* revision is written only under run_lock, which is held */
	if (strcmp(cat->digest, r->status.revision) == 0) {
		catalog_free(cat);
		metrics_reload(r->metrics, true);
		record(r, trigger, rd, true, false, "", now);
		log_event(r->log, "reload", "ok: %s, catalog %s, unchanged (%s)", r->path,
			  r->status.revision, why);
		return;
	}
	memcpy(digest, cat->digest, sizeof(digest));
	before = holder_acquire_named(r->holder, reload_name(r), &before_ref);
	if (holder_swap_named(r->holder, reload_name(r), cat, r->path) != 0) {
		if (before_ref != NULL) {
			holder_release(r->holder, before_ref);
		}
		r->tried_key = 0; /* try these bytes again */
		metrics_reload(r->metrics, false);
		record(r, trigger, rd, false, false, "out of memory", now);
		log_event(r->log, "reload", "refused: out of memory (%s)", why);
		return;
	}
	after = holder_acquire_named(r->holder, reload_name(r), &after_ref);
	metrics_reload(r->metrics, true);
	metrics_catalog_loaded(r->metrics);
	pthread_mutex_lock(&r->state_lock);
	memcpy(r->status.revision, digest, sizeof(digest));
	r->status.loaded_at_ms = now;
	pthread_mutex_unlock(&r->state_lock);
	record(r, trigger, rd, true, true, "", now);
	log_event(r->log, "reload", "ok: %s, catalog %s (%s)", r->path, digest, why);
	if (before != NULL) {
		notify(r, before, after);
		holder_release(r->holder, before_ref);
	}
	holder_release(r->holder, after_ref);
}

void reload_now(struct reload *r)
{
	struct reload_read rd;
	struct catalog *cat;

	if (r->path == NULL) {
		log_event(r->log, "reload", "skipped: serving the embedded catalog (no --catalog FILE)");
		return;
	}
	pthread_mutex_lock(&r->run_lock);
	cat = reload_read_file(r->path, &rd);
	attempt(r, API_TRIGGER_SIGNAL, cat, &rd);
	pthread_mutex_unlock(&r->run_lock);
}

/* The watch's callback: something may have changed. */
static unsigned on_watch(void *cls)
{
	struct reload *r = cls;
	struct reload_read rd;
	struct catalog *cat;
	unsigned again = 0;

	pthread_mutex_lock(&r->run_lock);
	cat = reload_read_file(r->path, &rd);
	if (rd.key == r->tried_key) {
		/* nothing new: the same bytes, or the same failure, as last time */
		r->pending_key = 0;
		catalog_free(cat);
		pthread_mutex_lock(&r->state_lock);
		r->status.checked_at_ms = unix_ms();
		pthread_mutex_unlock(&r->state_lock);
	} else if (rd.key != r->pending_key) {
		/* first sight of these bytes: a writer may still be writing, so
		 * read again a moment later and trust them only if unchanged */
		r->pending_key = rd.key;
		catalog_free(cat);
		again = RELOAD_SETTLE_MS;
	} else {
		attempt(r, API_TRIGGER_WATCH, cat, &rd);
	}
	pthread_mutex_unlock(&r->run_lock);
	return again;
}

int reload_watch_start(struct reload *r, unsigned check_seconds, char *err, size_t err_cap)
{
	struct watch_options opt = {check_seconds, RELOAD_DEBOUNCE_MS};

	if (r->path == NULL || check_seconds == 0) {
		return 0;
	}
	pthread_mutex_lock(&r->state_lock);
	r->status.check_seconds = check_seconds;
	pthread_mutex_unlock(&r->state_lock);
	r->watch = watch_start(r->path, &opt, on_watch, r, err, err_cap);
	return r->watch != NULL ? 0 : -1;
}

void reload_status(void *cls, struct api_status *out)
{
	struct reload *r = cls;

	pthread_mutex_lock(&r->state_lock);
	*out = r->status;
	pthread_mutex_unlock(&r->state_lock);
	if (r->watch == NULL) {
		out->watch = API_WATCH_OFF;
	} else {
		out->watch = watch_inotify(r->watch) ? API_WATCH_INOTIFY : API_WATCH_PERIODIC;
	}
}
