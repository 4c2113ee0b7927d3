/* SPDX-License-Identifier: AGPL-3.0-only */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "listener.h"

/* One open stream: what its client has been told, and the bytes of the
 * event being sent. Guarded by the hub's lock. */
struct stream {
	struct stream_hub *hub;
	struct MHD_Connection *conn;
	struct stream *prev, *next;
	bool suspended;
	uint64_t told;          /* the last seq this client has heard of */
	uint64_t last_write_ns; /* listener_now_ns's clock */
	size_t off, len;        /* out[off..len) is still to send */
	char out[EVENTS_TEXT_MAX + 64]; /* the preamble and one event at most */
};

static int64_t unix_now(void)
{
	return (int64_t)time(NULL);
}

static struct events_revision current(const struct stream_hub *h)
{
	return (struct events_revision){h->seq, h->revision, h->loaded_at};
}

int stream_hub_init(struct stream_hub *h, const struct catalog *cat, unsigned max_streams,
		    unsigned heartbeat_seconds, unsigned depth)
{
	struct timespec ts;
	int ret = -1;

	memset(h, 0, sizeof(*h));
	h->depth = depth > 0 ? depth : 1;
	/* depth x EVENTS_TEXT_MAX: 512 KiB at --revisions 64 */
	h->history = calloc(h->depth, sizeof(*h->history));
	if (h->history == NULL || pthread_mutex_init(&h->lock, NULL) != 0) {
		goto done;
	}
	h->max_streams = max_streams;
	h->heartbeat_ns = (uint64_t)heartbeat_seconds * 1000000000u;
	/* Not a secret, only distinct between runs: a Last-Event-ID from an
	 * earlier run must not read as one of this run's seqs. */
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(h->boot, sizeof(h->boot), "%08x",
		 (unsigned)((uint64_t)ts.tv_sec * 2654435761u ^ (uint64_t)ts.tv_nsec ^
			    ((uint64_t)getpid() << 16)));
	h->seq = 1;
	memcpy(h->revision, cat->digest, sizeof(h->revision));
	h->loaded_at = unix_now();
	atomic_init(&h->open, 0);
	atomic_init(&h->events_sent, 0);
	ret = 0;
done:
	if (ret != 0) {
		free(h->history);
		h->history = NULL;
	}
	return ret;
}

int stream_hub_resume(struct stream_hub *h, const char *boot, uint64_t first_seq,
		      const struct catalog *const *cats, size_t n)
{
	if (n == 0 || first_seq == 0 || strcmp(cats[n - 1]->digest, h->revision) != 0) {
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	snprintf(h->boot, sizeof(h->boot), "%s", boot);
	/* the oldest changes first, so the newest depth of them stay */
	for (size_t i = 1; i < n; i++) {
		struct events_revision was = {first_seq + i - 1, cats[i - 1]->digest, h->loaded_at};
		struct events_revision now = {first_seq + i, cats[i]->digest, h->loaded_at};
		struct stream_change *c = &h->history[now.seq % h->depth];

		c->len = events_change(c->text, sizeof(c->text), h->boot, &now, &was, cats[i - 1], cats[i]);
		c->seq = now.seq;
	}
	h->seq = first_seq + n - 1;
	h->floor = first_seq; /* before it, the changes are not held: a reset */
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void stream_hub_cleanup(struct stream_hub *h)
{
	pthread_mutex_destroy(&h->lock);
	free(h->history);
	h->history = NULL;
}

/* Puts the next thing to say in s->out, if there is one: a change the
 * client has not heard of (or a reset, when it fell behind what the
 * history holds), else a heartbeat when one is due. */
static void refill(struct stream *s, struct stream_hub *h, uint64_t now)
{
	struct events_revision cur = current(h);

	s->off = s->len = 0;
	if (s->told < h->seq && h->seq - s->told > h->depth) {
		char id[EVENTS_ID_MAX];

		snprintf(id, sizeof(id), "%llu@%s", (unsigned long long)s->told, h->boot);
		s->len = events_reset(s->out, sizeof(s->out), h->boot, &cur, id);
		s->told = h->seq;
		atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	} else if (s->told < h->seq) {
		const struct stream_change *c = &h->history[(s->told + 1) % h->depth];

		memcpy(s->out, c->text, c->len);
		s->len = c->len;
		s->told++;
		atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	} else if (!h->closing && now > s->last_write_ns &&
		   now - s->last_write_ns >= h->heartbeat_ns) {
		s->len = events_heartbeat(s->out, sizeof(s->out));
	}
}

/* libmicrohttpd asks for the next bytes. Nothing to say: suspend (see the
 * header), or end the stream when draining. */
static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	struct stream_hub *h = s->hub;
	uint64_t now = listener_now_ns();
	ssize_t ret;

	(void)pos;
	pthread_mutex_lock(&h->lock);
	if (s->off == s->len) {
		refill(s, h, now);
	}
	if (s->off < s->len) {
		size_t n = s->len - s->off < max ? s->len - s->off : max;

		memcpy(buf, s->out + s->off, n);
		s->off += n;
		s->last_write_ns = now;
		ret = (ssize_t)n;
	} else if (h->closing) {
		ret = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		s->suspended = true;
		MHD_suspend_connection(s->conn);
		ret = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* Under the lock. */
static void wake(struct stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		MHD_resume_connection(s->conn);
	}
}

/* The response is done with (the stream ended, or its connection closed). */
static void free_stream(void *cls)
{
	struct stream *s = cls;
	struct stream_hub *h = s->hub;

	pthread_mutex_lock(&h->lock);
	if (s->prev != NULL) {
		s->prev->next = s->next;
	} else {
		h->head = s->next;
	}
	if (s->next != NULL) {
		s->next->prev = s->prev;
	}
	atomic_fetch_sub(&h->open, 1);
	pthread_mutex_unlock(&h->lock);
	free(s);
}

/* What a new stream says first (under the lock): where its client stands. */
static void greet(struct stream *s, struct stream_hub *h, const char *last_event_id)
{
	struct events_revision cur = current(h);
	uint64_t seen = 0;
	size_t n = events_preamble(s->out, sizeof(s->out));

	if (last_event_id != NULL && events_parse_id(last_event_id, h->boot, &seen) == 0 &&
	    seen <= h->seq && h->seq - seen <= h->depth && seen >= h->floor) {
		s->told = seen; /* the changes since follow, from the history */
		s->len = n;
		return;
	}
	if (last_event_id == NULL) {
		n += events_hello(s->out + n, sizeof(s->out) - n, h->boot, &cur);
	} else {
		n += events_reset(s->out + n, sizeof(s->out) - n, h->boot, &cur, last_event_id);
	}
	s->told = h->seq;
	atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	s->len = n;
}

struct MHD_Response *stream_open(struct stream_hub *h, struct MHD_Connection *conn,
				 const char *last_event_id, enum stream_open_status *status)
{
	struct MHD_Response *resp = NULL;
	struct stream *s = calloc(1, sizeof(*s));

	*status = STREAM_NO_MEMORY;
	if (s == NULL) {
		return NULL;
	}
	s->hub = h;
	s->conn = conn;
	s->last_write_ns = listener_now_ns();
	pthread_mutex_lock(&h->lock);
	if (h->closing) {
		*status = STREAM_CLOSING;
	} else if (atomic_load(&h->open) >= h->max_streams) {
		*status = STREAM_FULL;
	} else {
		/* 1: MHD calls with room for at least one byte; the size is unknown */
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, read_stream, s,
							 free_stream);
	}
	if (resp != NULL) {
		greet(s, h, last_event_id);
		s->next = h->head;
		if (h->head != NULL) {
			h->head->prev = s;
		}
		h->head = s;
		atomic_fetch_add(&h->open, 1);
		*status = STREAM_OPENED;
	}
	pthread_mutex_unlock(&h->lock);
	if (resp == NULL) {
		free(s);
	}
	return resp;
}

void stream_catalog_changed(void *cls, const struct catalog *before, const struct catalog *after)
{
	struct stream_hub *h = cls;
	struct stream_change *c;
	struct events_revision was, now;
	char text[EVENTS_TEXT_MAX];
	size_t len;

	/* Only this thread writes seq, revision and loaded_at (see the header),
	 * so it reads them unlocked; the event is rendered unlocked too, since
	 * diffing a large catalog must not hold up the streams. The hub's own
	 * record of `before` is what its clients were told; the catalogs are
	 * for the cells that changed. */
	if (strcmp(h->revision, after->digest) == 0) {
		/* a reload of the same catalog is no change: no event, no refetch */
		return;
	}
	was = current(h);
	now = (struct events_revision){h->seq + 1, after->digest, unix_now()};
	len = events_change(text, sizeof(text), h->boot, &now, &was, before, after);
	pthread_mutex_lock(&h->lock);
	c = &h->history[now.seq % h->depth];
	c->seq = now.seq;
	memcpy(c->text, text, len);
	c->len = len;
	memcpy(h->revision, after->digest, sizeof(h->revision));
	h->loaded_at = now.loaded_at;
	h->seq = now.seq;
	for (struct stream *s = h->head; s != NULL; s = s->next) {
		wake(s);
	}
	pthread_mutex_unlock(&h->lock);
}

void stream_tick(struct stream_hub *h, uint64_t now_ns)
{
	pthread_mutex_lock(&h->lock);
	for (struct stream *s = h->head; s != NULL; s = s->next) {
		if (s->suspended && now_ns > s->last_write_ns &&
		    now_ns - s->last_write_ns >= h->heartbeat_ns) {
			wake(s);
		}
	}
	pthread_mutex_unlock(&h->lock);
}

void stream_close_all(struct stream_hub *h)
{
	pthread_mutex_lock(&h->lock);
	h->closing = true;
	for (struct stream *s = h->head; s != NULL; s = s->next) {
		wake(s);
	}
	pthread_mutex_unlock(&h->lock);
}
