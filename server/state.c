/* SPDX-License-Identifier: AGPL-3.0-only */
#include "state.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable.h"
#include "jsonw.h"
#include "reload.h"
#include "statefile.h"

/* A revision file found in a catalog's directory. */
struct found {
	char name[STATEFILE_NAME_LEN + 1];
	struct timespec mtime;
};

int state_open(struct state *s, const char *dir, unsigned max_revisions, const struct log *log,
	       struct metrics *metrics, char *err, size_t cap)
{
	char path[STATE_PATH_MAX + 16];

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->max_revisions = max_revisions;
	s->log = log;
	s->metrics = metrics;
	atomic_store(&metrics->state_on, true);
	if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >= (int)sizeof(s->dir) - 32) {
		snprintf(err, cap, "--state-dir %s: the path is too long", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/catalogs", s->dir);
	if ((mkdir(s->dir, 0750) != 0 && errno != EEXIST) || (mkdir(path, 0750) != 0 && errno != EEXIST)) {
		snprintf(err, cap, "--state-dir %s: cannot make %s: %s", dir, path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/lock", s->dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (s->lock_fd < 0) {
		snprintf(err, cap, "--state-dir %s: cannot open %s: %s", dir, path, strerror(errno));
		return -1;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK) {
			snprintf(err, cap, "--state-dir %s is in use by another splitkd (%s is locked): "
				 "give each process a state directory of its own", dir, path);
		} else {
			snprintf(err, cap, "--state-dir %s: cannot lock %s: %s", dir, path, strerror(errno));
		}
		close(s->lock_fd);
		s->lock_fd = -1;
		return -1;
	}
	return 0;
}

void state_close(struct state *s)
{
	if (s->log == NULL) {
		return; /* zeroed: never opened */
	}
	if (s->lock_fd >= 0) {
		close(s->lock_fd); /* the lock goes with the descriptor */
		s->lock_fd = -1;
	}
	pthread_mutex_destroy(&s->lock);
	free(s->named);
	s->named = NULL;
	s->log = NULL;
}

static int by_mtime(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec) {
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	}
	if (x->mtime.tv_nsec != y->mtime.tv_nsec) {
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

/*
 * The revision files of a catalog's directory, oldest first (a new array,
 * the caller frees it; NULL with *n 0 when the directory is missing or
 * holds none). When `report` (a load at start), a temporary file a
 * crash left (durable.h) is removed and any other entry that is no
 * revision file's name is logged and counted.
 */
static struct found *list_files(struct state *s, const char *cdir, bool report, size_t *n)
{
	DIR *d = opendir(cdir);
	struct found *all = NULL;
	size_t cap = 0;
	struct dirent *e;

	*n = 0;
	if (d == NULL) {
		return NULL;
	}
	while ((e = readdir(d)) != NULL) {
		char digest[CATALOG_DIGEST_LEN + 1], path[STATE_PATH_MAX + 320];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", cdir, e->d_name);
		if (durable_is_temporary(e->d_name)) {
			if (report) {
				unlink(path); /* a write a crash cut short: never renamed, never taken */
			}
			continue;
		}
		if (!statefile_digest_of(e->d_name, digest) || lstat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode)) {
			if (report) {
				log_event(s->log, "state", "skipped %s: not a revision file", path);
				atomic_fetch_add(&s->metrics->state_files_skipped, 1);
			}
			continue;
		}
		if (*n == cap) {
			struct found *grown = realloc(all, (cap ? 2 * cap : 16) * sizeof(*all));

			if (grown == NULL) {
				break;
			}
			all = grown;
			cap = cap ? 2 * cap : 16;
		}
		/* statefile_digest_of took only a name of exactly this length */
		memcpy(all[*n].name, e->d_name, sizeof(all[*n].name));
		all[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(d);
	if (*n > 1) {
		qsort(all, *n, sizeof(*all), by_mtime);
	}
	return all;
}

size_t state_load(struct state *s, const char *name, struct catalog **cats, size_t max)
{
	char cdir[STATE_PATH_MAX + 80];
	size_t n = 0, got = 0;
	struct found *files;

	snprintf(cdir, sizeof(cdir), "%s/catalogs/%s", s->dir, name);
	files = list_files(s, cdir, true, &n);
	/* newest first, so a file skipped leaves room for an older good one */
	for (size_t i = n; i-- > 0 && got < max;) {
		char path[STATE_PATH_MAX + 160], why[API_STATUS_TEXT + 8];
		struct reload_read rd;
		size_t len = 0;
		char *bytes;
		struct catalog *cat = NULL;

		snprintf(path, sizeof(path), "%s/%s", cdir, files[i].name);
		bytes = reload_read_bytes(path, CATALOG_MAX_BYTES, &len, &rd);
		if (bytes == NULL) {
			snprintf(why, sizeof(why), "%s", rd.error);
		} else {
			cat = statefile_read(files[i].name, bytes, len, why, sizeof(why));
		}
		free(bytes);
		if (cat == NULL) {
			log_event(s->log, "state", "skipped %s: %s", path, why);
			atomic_fetch_add(&s->metrics->state_files_skipped, 1);
			continue;
		}
		cats[got++] = cat;
	}
	free(files);
	/* oldest first */
	for (size_t i = 0; i < got / 2; i++) {
		struct catalog *t = cats[i];

		cats[i] = cats[got - 1 - i];
		cats[got - 1 - i] = t;
	}
	return got;
}

int64_t state_kept_at_ms(struct state *s, const char *name, const char *digest)
{
	char file[CATALOG_DIGEST_LEN + 16], path[STATE_PATH_MAX + 160];
	struct stat st;

	if (statefile_name(digest, file, sizeof(file)) != 0) {
		return 0;
	}
	snprintf(path, sizeof(path), "%s/catalogs/%s/%s", s->dir, name, file);
	if (stat(path, &st) != 0) {
		return 0;
	}
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* Counts a write failure, and logs it when its cause is new (a full disk
 * would otherwise log at every reload). */
static int write_failed(struct state *s, const char *what, const char *path, int err)
{
	atomic_fetch_add(&s->metrics->state_write_errors, 1);
	snprintf(s->last_error, sizeof(s->last_error), "%s %s: %s", what, path, strerror(err));
	if (err != s->logged_errno) {
		s->logged_errno = err;
		log_event(s->log, "state", "cannot keep revisions: %s (serving goes on; logged once "
			  "per cause, counted in splitkd_state_write_errors_total)", s->last_error);
	}
	return -1;
}

/* The oldest files past max_revisions go (the newest, just written, stays). */
static void prune(struct state *s, const char *cdir)
{
	size_t n = 0;
	struct found *files = list_files(s, cdir, false, &n);

	for (size_t i = 0; n > s->max_revisions && i < n - s->max_revisions; i++) {
		char path[STATE_PATH_MAX + 160];

		snprintf(path, sizeof(path), "%s/%s", cdir, files[i].name);
		if (unlink(path) != 0 && errno != ENOENT) {
			write_failed(s, "remove", path, errno);
		}
	}
	free(files);
}

/* Writes bytes as cdir/name, the one durable way (durable.h); a failure
 * is the state's. */
static int write_file(struct state *s, const char *cdir, const char *name, const char *data,
		      size_t len)
{
	struct durable_failure f;

	if (durable_write(cdir, name, data, len, &f) != 0) {
		return write_failed(s, f.what, f.path, f.err);
	}
	return 0;
}

int state_save(struct state *s, const struct catalog *cat)
{
	char cdir[STATE_PATH_MAX + 80], name[STATEFILE_NAME_LEN + 1];
	struct jsonw w;
	int ret = -1;

	if (statefile_name(cat->digest, name, sizeof(name)) != 0) {
		return -1; /* every catalog's digest is one: unreachable */
	}
	snprintf(cdir, sizeof(cdir), "%s/catalogs/%s", s->dir, cat->name);
	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	pthread_mutex_lock(&s->lock);
	if (w.failed) {
		write_failed(s, "write", cdir, ENOMEM);
	} else if (mkdir(cdir, 0750) != 0 && errno != EEXIST) {
		write_failed(s, "create", cdir, errno);
	} else if (write_file(s, cdir, name, w.buf, w.len) == 0) {
		prune(s, cdir);
		s->logged_errno = 0; /* a cause seen again after a success is news */
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	jsonw_cleanup(&w);
	return ret;
}

int state_write_failed(struct state *s, const char *what, const char *path, int err)
{
	pthread_mutex_lock(&s->lock);
	write_failed(s, what, path, err);
	pthread_mutex_unlock(&s->lock);
	return -1;
}

void state_catalog_swapped(void *cls, const struct catalog *after)
{
	state_save(cls, after);
}

void state_report(struct state *s, struct api_status *out)
{
	out->state_on = true;
	snprintf(out->state_dir, sizeof(out->state_dir), "%s", s->dir);
	out->state_write_errors = atomic_load(&s->metrics->state_write_errors);
	out->state_history_lines_skipped = atomic_load(&s->metrics->state_history_lines_skipped);
	pthread_mutex_lock(&s->lock);
	snprintf(out->state_error, sizeof(out->state_error), "%s", s->last_error);
	pthread_mutex_unlock(&s->lock);
}

/* A stream's numbering file, `file` in DIR: its boot and seqs into
 * boot, seqs[0..*n). False when there is none (or it does not check). */
static bool numbering_load(struct state *s, const char *file, char *boot,
			   struct statefile_seq *seqs, size_t *n)
{
	char path[STATE_PATH_MAX + 32 + CATALOG_NAME_MAX], why[API_STATUS_TEXT + 8];
	struct reload_read rd;
	size_t len = 0;
	char *bytes;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", s->dir, file);
	bytes = reload_read_bytes(path, 1u << 20, &len, &rd);
	if (bytes == NULL) {
		if (rd.state != API_DISK_MISSING) {
			log_event(s->log, "state", "skipped %s: %s", path, rd.error);
			atomic_fetch_add(&s->metrics->state_files_skipped, 1);
		}
		return false;
	}
	rc = statefile_read_streams(bytes, len, boot, seqs, s->max_revisions, n, why, sizeof(why));
	free(bytes);
	if (rc != 0) {
		log_event(s->log, "state", "skipped %s: %s (event ids start afresh)", path, why);
		atomic_fetch_add(&s->metrics->state_files_skipped, 1);
		return false;
	}
	return *n > 0;
}

bool state_streams_load(struct state *s)
{
	return numbering_load(s, "streams.json", s->boot, s->seqs, &s->num_seqs);
}

/* Keeps `seq` at `revision` in a numbering and writes its file again,
 * under the state's lock. */
static void numbering_keep(struct state *s, const char *file, char *kept_boot,
			   struct statefile_seq *seqs, size_t *n, const char *boot, uint64_t seq,
			   const char *revision)
{
	struct jsonw w;

	if (*n > 0 && seq <= seqs[*n - 1].seq && strcmp(boot, kept_boot) == 0) {
		return; /* a reload of the same revision: no event, nothing new */
	}
	snprintf(kept_boot, EVENTS_BOOT_LEN + 1, "%s", boot);
	if (*n == s->max_revisions) {
		memmove(seqs, seqs + 1, (*n - 1) * sizeof(*seqs));
		(*n)--;
	}
	seqs[*n].seq = seq;
	snprintf(seqs[*n].revision, sizeof(seqs[*n].revision), "%s", revision);
	(*n)++;
	jsonw_init(&w, 256);
	statefile_write_streams(&w, kept_boot, seqs, *n);
	if (w.failed) {
		write_failed(s, "write", file, ENOMEM);
	} else {
		write_file(s, s->dir, file, w.buf, w.len);
	}
	jsonw_cleanup(&w);
}

void state_streams_keep(struct state *s, const char *boot, uint64_t seq, const char *revision)
{
	pthread_mutex_lock(&s->lock);
	numbering_keep(s, "streams.json", s->boot, s->seqs, &s->num_seqs, boot, seq, revision);
	pthread_mutex_unlock(&s->lock);
}

/* The file of another stream's numbering. */
static void numbering_file(const char *name, char *out, size_t cap)
{
	if (strcmp(name, EVENTS_ALL) == 0) {
		snprintf(out, cap, "streams-all.json");
	} else {
		snprintf(out, cap, "streams.%s.json", name);
	}
}

/* The numbering of `name`, made when there is room (under the lock);
 * NULL when out of memory or full. */
static struct state_numbering *numbering_of(struct state *s, const char *name)
{
	if (s->named == NULL) {
		s->named = calloc(STATE_MAX_NUMBERINGS, sizeof(*s->named));
		if (s->named == NULL) {
			return NULL;
		}
	}
	for (size_t i = 0; i < s->num_named; i++) {
		if (strcmp(s->named[i].name, name) == 0) {
			return &s->named[i];
		}
	}
	if (s->num_named == STATE_MAX_NUMBERINGS) {
		return NULL;
	}
	snprintf(s->named[s->num_named].name, sizeof(s->named[0].name), "%s", name);
	return &s->named[s->num_named++];
}

const struct state_numbering *state_streams_load_named(struct state *s, const char *name)
{
	char file[CATALOG_NAME_MAX + 32];
	struct state_numbering *n;
	bool ok = false;

	numbering_file(name, file, sizeof(file));
	pthread_mutex_lock(&s->lock);
	n = numbering_of(s, name);
	if (n != NULL) {
		n->num_seqs = 0;
		ok = numbering_load(s, file, n->boot, n->seqs, &n->num_seqs);
	}
	pthread_mutex_unlock(&s->lock);
	return ok ? n : NULL;
}

void state_streams_keep_named(struct state *s, const char *name, const char *boot, uint64_t seq,
			      const char *revision)
{
	char file[CATALOG_NAME_MAX + 32];
	struct state_numbering *n;

	numbering_file(name, file, sizeof(file));
	pthread_mutex_lock(&s->lock);
	n = numbering_of(s, name);
	if (n != NULL) {
		numbering_keep(s, file, n->boot, n->seqs, &n->num_seqs, boot, seq, revision);
	}
	pthread_mutex_unlock(&s->lock);
}
