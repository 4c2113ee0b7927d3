/* SPDX-License-Identifier: AGPL-3.0-only */
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

/* Every kind of change an entry of the directory can see: a rename over
 * comes as MOVED_TO, the kubelet's symlink swap as MOVED_TO of `..data`,
 * an editor's in-place save as MODIFY/CLOSE_WRITE, a chmod as ATTRIB. */
#define WATCH_EVENTS                                                                            \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB |      \
	 IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF)

struct watch_path {
	char *dir;  /* the directory holding the path */
	char *name; /* the path's last component */
	int wd;     /* -1: not watching the directory now */
	atomic_bool watching;
};

struct watch_entry {
	struct watch_path paths[WATCH_MAX_PATHS];
	size_t num_paths;
	struct watch_options opt;
	watch_fn *fn;
	void *cls;
	/* the thread's own */
	uint64_t next_check, pending_since, last_event, again_at; /* 0: none */
};

struct watch {
	struct watch_entry entries[WATCH_MAX_ENTRIES];
	size_t num_entries;
	int inotify; /* -1: none (inotify unavailable) */
	int stop[2]; /* a pipe: a byte (or its close) stops the thread */
	pthread_t thread;
	bool started;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Splits a path into its directory and last component (both copied). */
static int split_path(struct watch_path *p, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len;

	p->wd = -1;
	atomic_init(&p->watching, false);
	if (slash == NULL) {
		p->dir = strdup(".");
		p->name = strdup(path);
	} else {
		dir_len = slash == path ? 1 : (size_t)(slash - path); /* "/x": the root */
		p->dir = malloc(dir_len + 1);
		if (p->dir != NULL) {
			memcpy(p->dir, path, dir_len);
			p->dir[dir_len] = '\0';
		}
		p->name = strdup(slash + 1);
	}
	return p->dir != NULL && p->name != NULL ? 0 : -1;
}

/* Watches the entry's directories that are not watched now (two paths in
 * one directory get the same descriptor from inotify). */
static void add_watches(struct watch *w, struct watch_entry *e)
{
	for (size_t i = 0; i < e->num_paths && w->inotify >= 0; i++) {
		struct watch_path *p = &e->paths[i];

		if (p->wd < 0) {
			p->wd = inotify_add_watch(w->inotify, p->dir, WATCH_EVENTS | IN_ONLYDIR);
			atomic_store(&p->watching, p->wd >= 0);
		}
	}
}

/* Whether an event concerns the path: its own name, a `..` entry (the
 * kubelet's `..data` and timestamped directories), or the directory. */
static bool relevant(const struct watch_path *p, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		return true; /* events were lost: any of them may have been ours */
	}
	if (ev->wd != p->wd) {
		return false;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
		return true;
	}
	if (ev->len == 0) {
		return false;
	}
	/* "DIR/" names no file: every entry of the directory is its */
	return p->name[0] == '\0' || strcmp(ev->name, p->name) == 0 || strncmp(ev->name, "..", 2) == 0;
}

/* One event against every entry: marks the ones it concerns pending, and
 * forgets a directory whose watch is gone (re-added at the next check). */
static void take_event(struct watch *w, const struct inotify_event *ev, uint64_t now)
{
	for (size_t i = 0; i < w->num_entries; i++) {
		struct watch_entry *e = &w->entries[i];
		bool hit = false;

		for (size_t j = 0; j < e->num_paths; j++) {
			struct watch_path *p = &e->paths[j];

			hit = hit || relevant(p, ev);
			if ((ev->mask & IN_IGNORED) && ev->wd == p->wd) {
				p->wd = -1;
				atomic_store(&p->watching, false);
			}
		}
		if (hit) {
			e->pending_since = e->pending_since != 0 ? e->pending_since : now;
			e->last_event = now;
		}
	}
}

/* Reads what inotify has. */
static void drain_events(struct watch *w, uint64_t now)
{
	/* aligned as inotify(7) asks */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(w->inotify, buf, sizeof(buf));

		if (n <= 0) {
			break; /* EAGAIN: all read */
		}
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;

			take_event(w, ev, now);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* When the entry next wants its callback (its check, its settled burst,
 * its second look: the earliest). */
static uint64_t entry_wake(const struct watch_entry *e)
{
	uint64_t wake = e->next_check;

	if (e->pending_since != 0) {
		uint64_t settle = e->last_event + e->opt.debounce_ms;
		uint64_t cap = e->pending_since + WATCH_MAX_WAIT_MS;

		wake = settle < cap ? settle : cap;
		wake = wake < e->next_check ? wake : e->next_check;
	}
	if (e->again_at != 0 && e->again_at < wake) {
		wake = e->again_at;
	}
	return wake;
}

/* Calls the entry back when it is due at `now`. */
static void entry_run(struct watch *w, struct watch_entry *e, uint64_t now)
{
	bool call = e->again_at != 0 && now >= e->again_at;
	unsigned later;

	if (e->pending_since != 0 && (now >= e->last_event + e->opt.debounce_ms ||
				      now >= e->pending_since + WATCH_MAX_WAIT_MS)) {
		call = true;
	}
	if (now >= e->next_check) {
		add_watches(w, e); /* a directory may be back */
		call = true;
		e->next_check = now + (uint64_t)e->opt.check_seconds * 1000u;
	}
	if (!call) {
		return;
	}
	e->pending_since = 0;
	e->again_at = 0;
	later = e->fn(e->cls);
	if (later != 0) {
		e->again_at = now_ms() + later;
	}
}

static int timeout_until(uint64_t now, uint64_t at)
{
	uint64_t d = at > now ? at - now : 0;

	return d > INT_MAX ? INT_MAX : (int)d;
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	uint64_t now = now_ms();

	for (size_t i = 0; i < w->num_entries; i++) {
		w->entries[i].next_check = now + (uint64_t)w->entries[i].opt.check_seconds * 1000u;
	}
	for (;;) {
		struct pollfd fds[2] = {{w->stop[0], POLLIN, 0}, {w->inotify, POLLIN, 0}};
		uint64_t wake = UINT64_MAX;

		for (size_t i = 0; i < w->num_entries; i++) {
			uint64_t at = entry_wake(&w->entries[i]);

			wake = at < wake ? at : wake;
		}
		if (poll(fds, w->inotify >= 0 ? 2 : 1, timeout_until(now_ms(), wake)) < 0 &&
		    errno != EINTR) {
			break;
		}
		if (fds[0].revents != 0) {
			break;
		}
		now = now_ms();
		if (w->inotify >= 0 && (fds[1].revents & POLLIN)) {
			drain_events(w, now);
		}
		for (size_t i = 0; i < w->num_entries; i++) {
			entry_run(w, &w->entries[i], now);
		}
	}
	return NULL;
}

struct watch *watch_new(char *err, size_t err_cap)
{
	struct watch *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		snprintf(err, err_cap, "out of memory");
		return NULL;
	}
	w->stop[0] = w->stop[1] = -1;
	w->inotify = -1;
	if (pipe(w->stop) != 0) {
		snprintf(err, err_cap, "cannot start a watch: %s", strerror(errno));
		watch_stop(w);
		return NULL;
	}
	fcntl(w->stop[0], F_SETFD, FD_CLOEXEC);
	fcntl(w->stop[1], F_SETFD, FD_CLOEXEC);
	/* no inotify (a container without it, too many instances): the
	 * periodic checks alone */
	w->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return w;
}

int watch_add(struct watch *w, const char *const *paths, size_t num_paths,
	      const struct watch_options *opt, watch_fn *fn, void *cls, char *err, size_t err_cap)
{
	struct watch_entry *e;

	if (w->started || w->num_entries == WATCH_MAX_ENTRIES || num_paths == 0 ||
	    num_paths > WATCH_MAX_PATHS) {
		snprintf(err, err_cap, "cannot watch %s: too many files followed",
			 num_paths > 0 ? paths[0] : "nothing");
		return -1;
	}
	e = &w->entries[w->num_entries];
	memset(e, 0, sizeof(*e));
	e->opt = *opt;
	e->opt.check_seconds = opt->check_seconds > 0 ? opt->check_seconds : 1;
	e->fn = fn;
	e->cls = cls;
	w->num_entries++; /* counted now: watch_stop frees what a failure left */
	for (size_t i = 0; i < num_paths; i++) {
		e->num_paths++;
		if (split_path(&e->paths[i], paths[i]) != 0) {
			snprintf(err, err_cap, "cannot watch %s: out of memory", paths[i]);
			return -1;
		}
	}
	add_watches(w, e);
	return (int)(w->num_entries - 1);
}

int watch_run(struct watch *w, char *err, size_t err_cap)
{
	if (pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
		snprintf(err, err_cap, "cannot start the file watch: no thread");
		return -1;
	}
	w->started = true;
	return 0;
}

struct watch *watch_start(const char *path, const struct watch_options *opt, watch_fn *fn,
			  void *cls, char *err, size_t err_cap)
{
	struct watch *w = watch_new(err, err_cap);

	if (w != NULL && (watch_add(w, &path, 1, opt, fn, cls, err, err_cap) < 0 ||
			  watch_run(w, err, err_cap) != 0)) {
		watch_stop(w);
		w = NULL;
	}
	return w;
}

bool watch_entry_inotify(const struct watch *w, int entry)
{
	const struct watch_entry *e;

	if (w == NULL || entry < 0 || (size_t)entry >= w->num_entries) {
		return false;
	}
	e = &w->entries[entry];
	for (size_t i = 0; i < e->num_paths; i++) {
		if (!atomic_load(&e->paths[i].watching)) {
			return false;
		}
	}
	return true;
}

bool watch_inotify(const struct watch *w)
{
	if (w == NULL || w->num_entries == 0) {
		return false;
	}
	for (size_t i = 0; i < w->num_entries; i++) {
		if (!watch_entry_inotify(w, (int)i)) {
			return false;
		}
	}
	return true;
}

void watch_stop(struct watch *w)
{
	if (w == NULL) {
		return;
	}
	if (w->started) {
		/* closing the write end wakes the poll for good */
		close(w->stop[1]);
		w->stop[1] = -1;
		pthread_join(w->thread, NULL);
	}
	for (int i = 0; i < 2; i++) {
		if (w->stop[i] >= 0) {
			close(w->stop[i]);
		}
	}
	if (w->inotify >= 0) {
		close(w->inotify);
	}
	for (size_t i = 0; i < w->num_entries; i++) {
		for (size_t j = 0; j < w->entries[i].num_paths; j++) {
			free(w->entries[i].paths[j].dir);
			free(w->entries[i].paths[j].name);
		}
	}
	free(w);
}
