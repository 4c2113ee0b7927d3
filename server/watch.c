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

struct watch {
	char *dir;  /* the directory holding the path */
	char *name; /* the path's last component */
	struct watch_options opt;
	watch_fn *fn;
	void *cls;
	int inotify; /* -1: none (inotify unavailable) */
	int wd;      /* -1: not watching the directory now */
	atomic_bool watching;
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
static int split_path(struct watch *w, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len;

	if (slash == NULL) {
		w->dir = strdup(".");
		w->name = strdup(path);
	} else {
		dir_len = slash == path ? 1 : (size_t)(slash - path); /* "/x": the root */
		w->dir = malloc(dir_len + 1);
		if (w->dir != NULL) {
			memcpy(w->dir, path, dir_len);
			w->dir[dir_len] = '\0';
		}
		w->name = strdup(slash + 1);
	}
	return w->dir != NULL && w->name != NULL ? 0 : -1;
}

static void add_watch(struct watch *w)
{
	if (w->inotify < 0 || w->wd >= 0) {
		return;
	}
	w->wd = inotify_add_watch(w->inotify, w->dir, WATCH_EVENTS | IN_ONLYDIR);
	atomic_store(&w->watching, w->wd >= 0);
}

/* Whether an event concerns the path: its own name, a `..` entry (the
 * kubelet's `..data` and timestamped directories), or the directory. */
static bool relevant(const struct watch *w, const struct inotify_event *ev)
{
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW)) {
		return true;
	}
	if (ev->len == 0) {
		return false;
	}
	return strcmp(ev->name, w->name) == 0 || strncmp(ev->name, "..", 2) == 0;
}

/* Reads what inotify has. Returns whether any of it concerns the path. */
static bool drain_events(struct watch *w)
{
	/* aligned as inotify(7) asks */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;

	for (;;) {
		ssize_t n = read(w->inotify, buf, sizeof(buf));

		if (n <= 0) {
			break; /* EAGAIN: all read */
		}
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;

			hit = hit || relevant(w, ev);
			if (ev->mask & IN_IGNORED) {
				/* the directory went away (or was moved): the watch is
				 * gone, re-added at the next check or call */
				w->wd = -1;
				atomic_store(&w->watching, false);
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
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
	uint64_t next_check = now + (uint64_t)w->opt.check_seconds * 1000u;
	uint64_t pending_since = 0, last_event = 0, again_at = 0; /* 0: none */

	for (;;) {
		struct pollfd fds[2] = {{w->stop[0], POLLIN, 0}, {w->inotify, POLLIN, 0}};
		uint64_t wake = next_check;
		bool call = false;

		if (pending_since != 0) {
			uint64_t settle = last_event + w->opt.debounce_ms;
			uint64_t cap = pending_since + WATCH_MAX_WAIT_MS;

			wake = settle < cap ? settle : cap;
		}
		if (again_at != 0 && again_at < wake) {
			wake = again_at;
		}
		if (poll(fds, w->inotify >= 0 ? 2 : 1, timeout_until(now_ms(), wake)) < 0 &&
		    errno != EINTR) {
			break;
		}
		if (fds[0].revents != 0) {
			break;
		}
		now = now_ms();
		if (w->inotify >= 0 && (fds[1].revents & POLLIN) && drain_events(w)) {
			pending_since = pending_since != 0 ? pending_since : now;
			last_event = now;
		}
		if (pending_since != 0 && (now >= last_event + w->opt.debounce_ms ||
					   now >= pending_since + WATCH_MAX_WAIT_MS)) {
			call = true;
		}
		if (again_at != 0 && now >= again_at) {
			call = true;
		}
		if (now >= next_check) {
			add_watch(w); /* the directory may be back */
			call = true;
			next_check = now + (uint64_t)w->opt.check_seconds * 1000u;
		}
		if (call) {
			unsigned later;

			pending_since = 0;
			again_at = 0;
			later = w->fn(w->cls);
			if (later != 0) {
				again_at = now_ms() + later;
			}
		}
	}
	return NULL;
}

struct watch *watch_start(const char *path, const struct watch_options *opt, watch_fn *fn,
			  void *cls, char *err, size_t err_cap)
{
	struct watch *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		snprintf(err, err_cap, "out of memory");
		return NULL;
	}
	w->inotify = -1;
	w->wd = -1;
	w->stop[0] = w->stop[1] = -1;
	w->opt = *opt;
	w->opt.check_seconds = opt->check_seconds > 0 ? opt->check_seconds : 1;
	w->fn = fn;
	w->cls = cls;
	atomic_init(&w->watching, false);
	if (split_path(w, path) != 0 || pipe(w->stop) != 0) {
		snprintf(err, err_cap, "cannot watch %s: %s", path, strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	fcntl(w->stop[0], F_SETFD, FD_CLOEXEC);
	fcntl(w->stop[1], F_SETFD, FD_CLOEXEC);
	/* no inotify (a container without it, too many instances): the
	 * periodic check alone */
	w->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	add_watch(w);
	if (pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
		snprintf(err, err_cap, "cannot start the watch of %s: no thread", path);
		goto fail;
	}
	w->started = true;
	return w;
fail:
	watch_stop(w);
	return NULL;
}

bool watch_inotify(const struct watch *w)
{
	return w != NULL && atomic_load(&w->watching);
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
	free(w->dir);
	free(w->name);
	free(w);
}
