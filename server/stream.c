/* SPDX-License-Identifier: AGPL-3.0-only */
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "listener.h"

/* Text a stream sends: a change (the history's, shared by every stream),
 * the heartbeat (the hub's) or a stream's own greeting or reset. refs is
 * under the hub's lock. */
struct stream_text {
	unsigned refs;
	size_t len;
	char bytes[];
};

/* One open stream: what its client has been told and what it is being
 * sent. Guarded by the hub's lock. */
struct stream {
	struct stream_hub *hub;
	void *conn;
	struct stream *prev, *next; /* the hub's list, by last write */
	int fd;                     /* watched in the hub's epoll set; -1: not */
	bool suspended;
	bool direct;                /* its heartbeats go straight to fd (stream.h) */
	bool gone;                  /* its client closed or reset the connection */
	bool behind;                /* ended for falling behind: says so, then ends */
	bool said_end;              /* its final comment is its text */
	bool cut;                   /* the engine was told to cut it */
	uint64_t behind_ns;         /* when it was found behind */
	uint64_t told;              /* the last seq this client has heard of */
	uint64_t last_write_ns;     /* listener_now_ns's clock */
	struct stream_text *text;   /* being sent, from off; NULL: nothing */
	size_t off;
};

/* What a stream ended for falling behind says last, when it still can. */
static const char end_behind[] = ": end: this stream fell behind; reconnect with Last-Event-ID\n\n";

/* The most departures one epoll_wait reads; a tick reads until none is left. */
#define DEPARTURES_PER_READ 64

static int64_t unix_now(void)
{
	return (int64_t)time(NULL);
}

static struct events_revision current(const struct stream_hub *h)
{
	return (struct events_revision){h->seq, h->revision, h->loaded_at};
}

/* A text of its own (refs 1) with `len` bytes of `bytes`, or NULL. */
static struct stream_text *text_new(const char *bytes, size_t len)
{
	struct stream_text *t = malloc(sizeof(*t) + len);

	if (t != NULL) {
		t->refs = 1;
		t->len = len;
		memcpy(t->bytes, bytes, len);
	}
	return t;
}

static struct stream_text *text_ref(struct stream_text *t)
{
	if (t != NULL) {
		t->refs++;
	}
	return t;
}

static void text_unref(struct stream_text *t)
{
	if (t != NULL && --t->refs == 0) {
		free(t);
	}
}

static void mhd_suspend(void *conn)
{
	MHD_suspend_connection(conn);
}

static void mhd_resume(void *conn)
{
	MHD_resume_connection(conn);
}

/* The socket stays open (libmicrohttpd closes it, after our free
 * callback): its next send fails and the connection closes. */
static void mhd_cut(void *conn, int fd)
{
	(void)conn;
	if (fd >= 0) {
		shutdown(fd, SHUT_RDWR);
	}
}

static ssize_t mhd_send(void *conn, int fd, const char *bytes, size_t len)
{
	(void)conn;
	return send(fd, bytes, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static const struct stream_engine mhd_engine = {mhd_suspend, mhd_resume, mhd_cut, mhd_send};

int stream_hub_init(struct stream_hub *h, const struct catalog *cat, unsigned max_streams,
		    unsigned heartbeat_seconds, unsigned depth, const struct stream_engine *engine)
{
	char beat[64];
	struct timespec ts;
	bool locked = false;
	int ret = -1;

	memset(h, 0, sizeof(*h));
	h->epfd = -1;
	h->engine = engine != NULL ? engine : &mhd_engine;
	h->depth = depth > 0 ? depth : 1;
	h->lag_max = h->depth / 2 > 0 ? h->depth / 2 : 1;
	/* pointers only: a change's text is allocated at its size */
	h->history = calloc(h->depth, sizeof(*h->history));
	h->heartbeat = text_new(beat, events_heartbeat(beat, sizeof(beat)));
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->history == NULL || h->heartbeat == NULL || h->epfd < 0) {
		goto done;
	}
	/* a chunk: its size in hex, CRLF, the bytes, CRLF (RFC 9112 7.1) */
	h->beat_chunk_len = (size_t)snprintf(h->beat_chunk, sizeof(h->beat_chunk), "%zx\r\n%.*s\r\n",
					     h->heartbeat->len, (int)h->heartbeat->len,
					     h->heartbeat->bytes);
	if (h->beat_chunk_len >= sizeof(h->beat_chunk)) {
		goto done; /* events_heartbeat grew past it: the array is to grow */
	}
	if (pthread_mutex_init(&h->lock, NULL) != 0) {
		goto done;
	}
	locked = true;
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
		if (locked) {
			pthread_mutex_destroy(&h->lock);
		}
		free(h->history);
		h->history = NULL;
		text_unref(h->heartbeat);
		h->heartbeat = NULL;
		if (h->epfd >= 0) {
			close(h->epfd);
			h->epfd = -1;
		}
	}
	return ret;
}

/* The text of the change from `was` (catalog `from`) to `now` (catalog
 * `to`), rendered once for every stream; NULL (out of memory) reads as a
 * change not held: its streams get a reset. */
static struct stream_text *change_text(const struct stream_hub *h,
				       const struct events_revision *now,
				       const struct events_revision *was, const struct catalog *from,
				       const struct catalog *to)
{
	char text[EVENTS_TEXT_MAX];
	size_t len = events_change(text, sizeof(text), h->boot, now, was, from, to);

	return text_new(text, len);
}

/* Holds `t` as the change `seq` (under the lock): what the slot held is let
 * go (a stream still sending it keeps its own reference). */
static void history_put(struct stream_hub *h, uint64_t seq, struct stream_text *t)
{
	struct stream_text **slot = &h->history[seq % h->depth];

	text_unref(*slot);
	*slot = t;
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

		history_put(h, now.seq, change_text(h, &now, &was, cats[i - 1], cats[i]));
	}
	h->seq = first_seq + n - 1;
	h->floor = first_seq; /* before it, the changes are not held: a reset */
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void stream_hub_cleanup(struct stream_hub *h)
{
	pthread_mutex_destroy(&h->lock);
	for (unsigned i = 0; h->history != NULL && i < h->depth; i++) {
		text_unref(h->history[i]);
	}
	free(h->history);
	h->history = NULL;
	text_unref(h->heartbeat);
	h->heartbeat = NULL;
	if (h->epfd >= 0) {
		close(h->epfd);
		h->epfd = -1;
	}
}

/* The hub's list, under the lock. */
static void unlink_stream(struct stream_hub *h, struct stream *s)
{
	if (s->prev != NULL) {
		s->prev->next = s->next;
	} else {
		h->head = s->next;
	}
	if (s->next != NULL) {
		s->next->prev = s->prev;
	} else {
		h->tail = s->prev;
	}
	s->prev = s->next = NULL;
}

/* Last in the list: the list stays in order of last write, so the tick
 * finds the heartbeats due at its head. */
static void append_stream(struct stream_hub *h, struct stream *s)
{
	s->prev = h->tail;
	s->next = NULL;
	if (h->tail != NULL) {
		h->tail->next = s;
	} else {
		h->head = s;
	}
	h->tail = s;
}

/* A reset for a client that stands at `seen`, out of the history's
 * reach, after `before` (what else the text starts with, `before_len`
 * bytes): a text of its own, or NULL when memory ran out. */
static struct stream_text *text_reset(struct stream_hub *h, const char *before, size_t before_len,
				      const char *last_id)
{
	struct events_revision cur = current(h);
	char text[EVENTS_TEXT_MAX + 64];
	size_t n = before_len;

	memcpy(text, before, before_len);
	n += events_reset(text + n, sizeof(text) - n, h->boot, &cur, last_id);
	return text_new(text, n);
}

/* Puts the next thing to say in s->text, if there is one: a change the
 * client has not heard of (or a reset, when it fell behind what the
 * history holds), else a heartbeat when one is due. */
static void refill(struct stream *s, struct stream_hub *h, uint64_t now)
{
	struct stream_text *next = NULL;

	text_unref(s->text);
	s->text = NULL;
	s->off = 0;
	if (s->told < h->seq) {
		next = h->seq - s->told <= h->depth ? h->history[(s->told + 1) % h->depth] : NULL;
		if (next == NULL) {
			/* fell behind the history (or a change's text could not be
			 * kept): where it stands is out of reach */
			char id[EVENTS_ID_MAX];

			snprintf(id, sizeof(id), "%llu@%s", (unsigned long long)s->told, h->boot);
			s->text = text_reset(h, "", 0, id);
			s->told = h->seq;
		} else {
			s->text = text_ref(next);
			s->told++;
		}
		atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	} else if (!h->closing && now > s->last_write_ns &&
		   now - s->last_write_ns >= h->heartbeat_ns) {
		s->text = text_ref(h->heartbeat);
	}
}

ssize_t stream_read(struct stream *s, char *buf, size_t max, uint64_t now_ns)
{
	struct stream_hub *h = s->hub;
	ssize_t ret;

	pthread_mutex_lock(&h->lock);
	if (s->gone) {
		ret = STREAM_READ_GONE;
		goto done;
	}
	if (s->behind && (s->text == NULL || s->off == s->text->len)) {
		/* what it was sending is whole: the final comment, then the end */
		if (s->said_end) {
			ret = STREAM_READ_END;
			goto done;
		}
		text_unref(s->text);
		s->text = text_new(end_behind, sizeof(end_behind) - 1);
		s->off = 0;
		s->said_end = true;
	} else if (s->text == NULL || s->off == s->text->len) {
		refill(s, h, now_ns);
	}
	if (s->text != NULL && s->off < s->text->len) {
		size_t n = s->text->len - s->off < max ? s->text->len - s->off : max;

		memcpy(buf, s->text->bytes + s->off, n);
		s->off += n;
		s->last_write_ns = now_ns;
		unlink_stream(h, s);
		append_stream(h, s);
		ret = (ssize_t)n;
	} else if (h->closing) {
		ret = STREAM_READ_END;
	} else {
		s->suspended = true;
		h->engine->suspend(s->conn);
		ret = 0;
	}
done:
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* libmicrohttpd asks for the next bytes. */
static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
	ssize_t n = stream_read(cls, buf, max, listener_now_ns());

	(void)pos;
	if (n == STREAM_READ_END) {
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (n == STREAM_READ_GONE) {
		return MHD_CONTENT_READER_END_WITH_ERROR; /* closes the connection */
	}
	return n;
}

/* Under the lock. */
static void wake(struct stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		s->hub->engine->resume(s->conn);
	}
}

void stream_leave(struct stream *s)
{
	struct stream_hub *h;

	if (s == NULL) {
		return;
	}
	h = s->hub;
	pthread_mutex_lock(&h->lock);
	/* before the socket closes (libmicrohttpd frees the response first),
	 * and under the lock, so stream_tick never reads a freed stream */
	if (s->fd >= 0) {
		epoll_ctl(h->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	}
	unlink_stream(h, s);
	text_unref(s->text);
	if (s->behind && !s->cut) {
		h->behind--;
	}
	atomic_fetch_sub(&h->open, 1);
	pthread_mutex_unlock(&h->lock);
	free(s);
}

/* The response is done with (the stream ended, or its connection closed). */
static void free_stream(void *cls)
{
	stream_leave(cls);
}

/* What a new stream says first (under the lock): where its client stands.
 * Returns 0, or -1 when memory ran out. */
static int greet(struct stream *s, struct stream_hub *h, const char *last_event_id)
{
	struct events_revision cur = current(h);
	char text[EVENTS_TEXT_MAX];
	uint64_t seen = 0;
	size_t n = events_preamble(text, sizeof(text));

	if (last_event_id != NULL && events_parse_id(last_event_id, h->boot, &seen) == 0 &&
	    seen <= h->seq && h->seq - seen <= h->depth && seen >= h->floor) {
		s->told = seen; /* the changes since follow, from the history */
		s->text = text_new(text, n);
		return s->text != NULL ? 0 : -1;
	}
	/* a hello, or a reset (the id out of reach): one event, and the
	 * client stands at the current seq */
	if (last_event_id == NULL) {
		n += events_hello(text + n, sizeof(text) - n, h->boot, &cur);
		s->text = text_new(text, n);
	} else {
		s->text = text_reset(h, text, n, last_event_id);
	}
	s->told = h->seq;
	atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	return s->text != NULL ? 0 : -1;
}

struct stream *stream_join(struct stream_hub *h, void *conn, int fd, bool direct,
			   const char *last_event_id, enum stream_open_status *status)
{
	struct stream *s = calloc(1, sizeof(*s));
	/* edge-triggered: a departure is told once, not at every tick until
	 * the stream is freed */
	struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLET, .data.ptr = s};

	*status = STREAM_NO_MEMORY;
	if (s == NULL) {
		return NULL;
	}
	s->hub = h;
	s->conn = conn;
	s->fd = -1;
	s->direct = direct && fd >= 0;
	s->last_write_ns = listener_now_ns();
	pthread_mutex_lock(&h->lock);
	if (h->closing) {
		*status = STREAM_CLOSING;
	} else if (atomic_load(&h->open) >= h->max_streams) {
		*status = STREAM_FULL;
	} else if (greet(s, h, last_event_id) == 0 &&
		   (fd < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)) {
		/* a client gone before this is reported at once: epoll checks
		 * the socket as it adds it */
		s->fd = fd;
		append_stream(h, s);
		atomic_fetch_add(&h->open, 1);
		*status = STREAM_OPENED;
	}
	pthread_mutex_unlock(&h->lock);
	if (*status != STREAM_OPENED) {
		text_unref(s->text);
		free(s);
		s = NULL;
	}
	return s;
}

struct MHD_Response *stream_open(struct stream_hub *h, struct MHD_Connection *conn,
				 const char *last_event_id, bool direct,
				 enum stream_open_status *status)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct stream *s = stream_join(h, conn, info != NULL ? info->connect_fd : -1, direct,
				       last_event_id, status);
	struct MHD_Response *resp;

	if (s == NULL) {
		return NULL;
	}
	/* The block is the response's own buffer, used only when a body is
	 * not chunked (an HTTP/1.0 client): an event's line or a few, not a
	 * whole event. Chunked, MHD writes into the connection's pool. */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, read_stream, s, free_stream);
	if (resp == NULL) {
		stream_leave(s);
		*status = STREAM_NO_MEMORY;
	}
	return resp;
}

void stream_catalog_changed(void *cls, const struct catalog *before, const struct catalog *after)
{
	struct stream_hub *h = cls;
	struct stream_text *t;
	struct events_revision was, now;
	uint64_t ns = listener_now_ns();

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
	t = change_text(h, &now, &was, before, after);
	pthread_mutex_lock(&h->lock);
	history_put(h, now.seq, t);
	memcpy(h->revision, after->digest, sizeof(h->revision));
	h->loaded_at = now.loaded_at;
	h->seq = now.seq;
	for (struct stream *s = h->head; s != NULL; s = s->next) {
		/* not reading: more changes waiting than lag_max, none taken
		 * for a grace's length (a stream replaying takes them) */
		if (!s->behind && h->seq - s->told > h->lag_max && ns > s->last_write_ns &&
		    ns - s->last_write_ns >= STREAM_CUT_GRACE_NS) {
			s->behind = true;
			s->behind_ns = ns;
			h->behind++;
		}
		wake(s);
	}
	pthread_mutex_unlock(&h->lock);
}

/* Under the lock: every stream whose client left since the last call is
 * marked and woken, so its callback ends it. */
static void end_departed(struct stream_hub *h)
{
	struct epoll_event ev[DEPARTURES_PER_READ];
	int n;

	do {
		n = epoll_wait(h->epfd, ev, DEPARTURES_PER_READ, 0);
		for (int i = 0; i < n; i++) {
			struct stream *s = ev[i].data.ptr;

			s->gone = true;
			wake(s);
		}
	} while (n == DEPARTURES_PER_READ);
}

/* Under the lock: every stream ended for falling behind whose callback
 * was not called in the grace (its client still reads nothing) is cut.
 * A pass over every stream, only while one is behind. */
static void cut_behind(struct stream_hub *h, uint64_t now_ns)
{
	for (struct stream *s = h->head; h->behind > 0 && s != NULL; s = s->next) {
		if (s->behind && !s->cut && now_ns > s->behind_ns &&
		    now_ns - s->behind_ns >= STREAM_CUT_GRACE_NS) {
			s->cut = true;
			h->behind--;
			h->engine->cut(s->conn, s->fd);
		}
	}
}

/* Under the lock: the heartbeat due on a suspended direct stream,
 * written to its socket (stream.h says why that is safe); it is then
 * the last written. Suspended, it has nothing else to say: a change, a
 * departure, falling behind and the drain each resume it first. Returns
 * false when it is to be resumed instead: the kernel had no room (its
 * callback sends the heartbeat when there is), or the stream ends (its
 * socket failed, or took part of the chunk, which no byte may follow). */
static bool beat_direct(struct stream_hub *h, struct stream *s, uint64_t now_ns)
{
	ssize_t n;

	if (!s->direct || !s->suspended) {
		return false;
	}
	n = h->engine->send(s->conn, s->fd, h->beat_chunk, h->beat_chunk_len);
	if (n == (ssize_t)h->beat_chunk_len) {
		s->last_write_ns = now_ns;
		unlink_stream(h, s);
		append_stream(h, s);
		return true;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		return false;
	}
	s->gone = true;
	return false;
}

void stream_tick(struct stream_hub *h, uint64_t now_ns)
{
	struct stream *next;

	pthread_mutex_lock(&h->lock);
	end_departed(h);
	/* in order of last write: past the first that is not due, none is (a
	 * heartbeat sent moves its stream to the end, after the last due) */
	for (struct stream *s = h->head; s != NULL; s = next) {
		next = s->next;
		if (now_ns <= s->last_write_ns || now_ns - s->last_write_ns < h->heartbeat_ns) {
			break;
		}
		if (!beat_direct(h, s, now_ns)) {
			wake(s);
		}
	}
	cut_behind(h, now_ns);
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
