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

/* One open stream: what its client has been told and what it is being
 * sent. Guarded by the hub's lock. */
struct stream {
	struct stream_hub *hub;
	struct channel *ch;         /* the catalog it follows (or all of them) */
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
	struct channel_text *text;  /* being sent, from off; NULL: nothing */
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

/* A new channel (the hub's next) for `name`, at `cat`, seq 1; the first
 * is the default's, with the hub's boot, any other's derived from it.
 * NULL when out of memory or full. Under the writer lock and the lock (or
 * before any stream). */
static struct channel *hub_channel_new(struct stream_hub *h, const char *name,
				       const struct catalog *cat)
{
	struct channel *ch;

	if (h->num_channels == STREAM_MAX_CHANNELS) {
		return NULL;
	}
	ch = channel_new(name, cat->digest, h->depth, unix_now(), h->boot);
	if (ch == NULL) {
		return NULL;
	}
	if (h->num_channels > 0) {
		channel_derive_boot(ch, h->boot);
	}
	h->channels[h->num_channels++] = ch;
	return ch;
}

static void channels_free(struct stream_hub *h)
{
	for (size_t i = 0; i < h->num_channels; i++) {
		channel_free(h->channels[i]);
		h->channels[i] = NULL;
	}
	h->num_channels = 0;
}

/* The channel of `name` (NULL: the default's), or NULL. Under either lock. */
static struct channel *channel_of(const struct stream_hub *h, const char *name)
{
	if (name == NULL) {
		return h->num_channels > 0 ? h->channels[0] : NULL;
	}
	for (size_t i = 0; i < h->num_channels; i++) {
		if (strcmp(h->channels[i]->name, name) == 0) {
			return h->channels[i];
		}
	}
	return NULL;
}

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
	h->heartbeat = channel_text_new(beat, events_heartbeat(beat, sizeof(beat)));
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->heartbeat == NULL || h->epfd < 0) {
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
	if (pthread_mutex_init(&h->writer, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
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
	atomic_init(&h->open, 0);
	atomic_init(&h->events_sent, 0);
	if (hub_channel_new(h, cat->name, cat) == NULL || hub_channel_new(h, EVENTS_ALL, cat) == NULL) {
		goto done;
	}
	ret = 0;
done:
	if (ret != 0) {
		if (locked) {
			pthread_mutex_destroy(&h->lock);
			pthread_mutex_destroy(&h->writer);
		}
		channels_free(h);
		channel_text_unref(h->heartbeat);
		h->heartbeat = NULL;
		if (h->epfd >= 0) {
			close(h->epfd);
			h->epfd = -1;
		}
	}
	return ret;
}

int stream_hub_resume(struct stream_hub *h, const char *boot, uint64_t first_seq,
		      const struct catalog *const *cats, size_t n)
{
	struct channel *ch = channel_of(h, NULL);

	if (n == 0 || first_seq == 0 || strcmp(cats[n - 1]->digest, ch->revision) != 0) {
		return -1;
	}
	pthread_mutex_lock(&h->writer);
	pthread_mutex_lock(&h->lock);
	snprintf(h->boot, sizeof(h->boot), "%s", boot);
	memcpy(ch->boot, h->boot, sizeof(ch->boot));
	for (size_t i = 1; i < h->num_channels; i++) {
		channel_derive_boot(h->channels[i], h->boot); /* each from the boot taken up */
	}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&h->writer);
	return stream_hub_resume_named(h, ch->name, first_seq, cats, n);
}

int stream_hub_resume_named(struct stream_hub *h, const char *name, uint64_t first_seq,
			    const struct catalog *const *cats, size_t n)
{
	struct channel *ch;
	int ret = -1;

	pthread_mutex_lock(&h->writer);
	pthread_mutex_lock(&h->lock);
	ch = channel_of(h, name);
	if (ch != NULL) {
		ret = channel_resume(ch, first_seq, cats, n);
	}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&h->writer);
	return ret;
}

void stream_hub_cleanup(struct stream_hub *h)
{
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->writer);
	channels_free(h);
	channel_text_unref(h->heartbeat);
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

/* The stream of every catalog's hello or reset (under the lock): each
 * catalog's channel as it stands. */
static size_t all_hello(struct stream_hub *h, struct channel *ch, char *out, size_t cap,
			const char *last_id)
{
	struct events_named cats[STREAM_MAX_CHANNELS];
	size_t n = 0;

	for (size_t i = 0; i < h->num_channels; i++) {
		const struct channel *c = h->channels[i];

		if (!c->all && !c->removed) {
			cats[n++] = (struct events_named){c->name, channel_current(c)};
		}
	}
	return events_all_hello(out, cap, ch->boot, ch->seq, cats, n, last_id);
}

/* A reset for a client that stands at `seen`, out of the history's
 * reach, after `before` (what else the text starts with, `before_len`
 * bytes): a text of its own, or NULL when memory ran out. */
static struct channel_text *text_reset(struct stream_hub *h, struct channel *ch,
				      const char *before, size_t before_len, const char *last_id)
{
	struct events_revision cur = channel_current(ch);
	char text[2 * EVENTS_TEXT_MAX + 64];
	size_t n = before_len;

	memcpy(text, before, before_len);
	n += ch->all ? all_hello(h, ch, text + n, sizeof(text) - n, last_id)
		     : events_reset(text + n, sizeof(text) - n, ch->boot, &cur, last_id);
	return channel_text_new(text, n);
}

/* Puts the next thing to say in s->text, if there is one: a change the
 * client has not heard of (or a reset, when it fell behind what the
 * history holds), else a heartbeat when one is due. */
static void refill(struct stream *s, struct stream_hub *h, uint64_t now)
{
	struct channel_text *next = NULL;
	channel_text_unref(s->text);
	s->text = NULL;
	s->off = 0;
	struct channel *ch = s->ch;

	if (s->told < ch->seq) {
		next = channel_after(ch, s->told);
		if (next == NULL) {
			/* fell behind the history (or a change's text could not be
			 * kept): where it stands is out of reach */
			char id[EVENTS_ID_MAX];

			snprintf(id, sizeof(id), "%llu@%s", (unsigned long long)s->told, ch->boot);
			s->text = text_reset(h, ch, "", 0, id);
			s->told = ch->seq;
		} else {
			s->text = channel_text_ref(next);
			s->told++;
		}
		atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	} else if (!h->closing && now > s->last_write_ns &&
		   now - s->last_write_ns >= h->heartbeat_ns) {
		s->text = channel_text_ref(h->heartbeat);
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
		channel_text_unref(s->text);
		s->text = channel_text_new(end_behind, sizeof(end_behind) - 1);
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
	} else if (h->closing || (s->ch->removed && s->told == s->ch->seq)) {
		ret = STREAM_READ_END; /* the drain, or its catalog's last event said */
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
	channel_text_unref(s->text);
	s->ch->streams--;
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
	struct channel *ch = s->ch;
	struct events_revision cur = channel_current(ch);
	char text[2 * EVENTS_TEXT_MAX];
	uint64_t seen = 0;
	size_t n = events_preamble(text, sizeof(text));

	if (last_event_id != NULL && events_parse_id(last_event_id, ch->boot, &seen) == 0 &&
	    channel_reaches(ch, seen)) {
		s->told = seen; /* the changes since follow, from the history */
		s->text = channel_text_new(text, n);
		return s->text != NULL ? 0 : -1;
	}
	/* a hello, or a reset (the id out of reach): one event, and the
	 * client stands at the current seq */
	if (last_event_id == NULL) {
		n += ch->all ? all_hello(h, ch, text + n, sizeof(text) - n, NULL)
			     : events_hello(text + n, sizeof(text) - n, ch->boot, &cur);
		s->text = channel_text_new(text, n);
	} else {
		s->text = text_reset(h, ch, text, n, last_event_id);
	}
	s->told = ch->seq;
	atomic_fetch_add_explicit(&h->events_sent, 1, memory_order_relaxed);
	return s->text != NULL ? 0 : -1;
}

struct stream *stream_join(struct stream_hub *h, void *conn, int fd, bool direct,
			   const char *last_event_id, enum stream_open_status *status)
{
	return stream_join_named(h, NULL, conn, fd, direct, last_event_id, status);
}

struct stream *stream_join_named(struct stream_hub *h, const char *catalog, void *conn, int fd,
				 bool direct, const char *last_event_id,
				 enum stream_open_status *status)
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
	s->ch = channel_of(h, catalog);
	if (h->closing) {
		*status = STREAM_CLOSING;
	} else if (atomic_load(&h->open) >= h->max_streams) {
		*status = STREAM_FULL;
	} else if (s->ch == NULL || s->ch->removed) {
		*status = STREAM_NO_CHANNEL;
	} else if (greet(s, h, last_event_id) == 0 &&
		   (fd < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)) {
		/* a client gone before this is reported at once: epoll checks
		 * the socket as it adds it */
		s->fd = fd;
		s->ch->streams++;
		append_stream(h, s);
		atomic_fetch_add(&h->open, 1);
		*status = STREAM_OPENED;
	}
	pthread_mutex_unlock(&h->lock);
	if (*status != STREAM_OPENED) {
		channel_text_unref(s->text);
		free(s);
		s = NULL;
	}
	return s;
}

struct MHD_Response *stream_open(struct stream_hub *h, struct MHD_Connection *conn,
				 const char *catalog, const char *last_event_id, bool direct,
				 enum stream_open_status *status)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct stream *s = stream_join_named(h, catalog, conn, info != NULL ? info->connect_fd : -1,
					     direct, last_event_id, status);
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

/* Under the lock: the channel's event `seq` is `t`, and every stream of
 * it is woken (one that does not read, past lag_max, marked behind). */
static void tell(struct stream_hub *h, struct channel *ch, uint64_t seq,
		 struct channel_text *t, uint64_t ns)
{
	channel_tell(ch, seq, t);
	for (struct stream *s = h->head; s != NULL; s = s->next) {
		if (s->ch != ch) {
			continue;
		}
		/* not reading: more changes waiting than lag_max, none taken
		 * for a grace's length (a stream replaying takes them) */
		if (!s->behind && ch->seq - s->told > h->lag_max && ns > s->last_write_ns &&
		    ns - s->last_write_ns >= STREAM_CUT_GRACE_NS) {
			s->behind = true;
			s->behind_ns = ns;
			h->behind++;
		}
		wake(s);
	}
}

/* The stream of every catalog's channel (the hub's second). */
static struct channel *all_of(const struct stream_hub *h)
{
	return h->channels[1];
}

void stream_catalog_changed(void *cls, const struct catalog *before, const struct catalog *after)
{
	(void)stream_changed(cls, NULL, before, after);
}

uint64_t stream_changed(struct stream_hub *h, const char *name, const struct catalog *before,
			const struct catalog *after)
{
	struct channel *ch, *all;
	struct channel_text *t, *ta;
	struct events_revision was, now;
	char text[EVENTS_TEXT_MAX];
	uint64_t ns = listener_now_ns(), seq = 0;

	/* One writer at a time (see the header), so it reads the channel
	 * unlocked; the event is rendered unlocked too, since diffing a
	 * large catalog must not hold up the streams. The channel's own
	 * record of `before` is what its clients were told; the catalogs are
	 * for the cells that changed. */
	pthread_mutex_lock(&h->writer);
	ch = channel_of(h, name);
	if (ch == NULL || ch->removed || strcmp(ch->revision, after->digest) == 0) {
		/* a reload of the same catalog is no change: no event, no refetch */
		goto done;
	}
	all = all_of(h);
	was = channel_current(ch);
	now = (struct events_revision){ch->seq + 1, after->digest, unix_now()};
	t = channel_change_text(ch, &now, &was, before, after);
	ta = channel_text_new(text, events_change_named(text, sizeof(text), all->boot, all->seq + 1,
						ch->name, &now, &was, before, after));
	pthread_mutex_lock(&h->lock);
	memcpy(ch->revision, after->digest, sizeof(ch->revision));
	memcpy(all->revision, after->digest, sizeof(all->revision));
	ch->loaded_at = now.loaded_at;
	tell(h, ch, now.seq, t, ns);
	tell(h, all, all->seq + 1, ta, ns);
	pthread_mutex_unlock(&h->lock);
	seq = now.seq;
done:
	pthread_mutex_unlock(&h->writer);
	return seq;
}

int stream_hub_add(struct stream_hub *h, const char *name, const struct catalog *cat)
{
	struct channel *ch;
	int ret = 0;

	pthread_mutex_lock(&h->writer);
	pthread_mutex_lock(&h->lock);
	ch = channel_of(h, name);
	if (ch == NULL) {
		/* a channel of a catalog gone that no stream follows any more
		 * makes room (names come and go in a --catalog-dir) */
		for (size_t i = 2; i < h->num_channels; i++) {
			struct channel *old = h->channels[i];

			if (h->num_channels == STREAM_MAX_CHANNELS && old->removed &&
			    old->streams == 0) {
				channel_free(old);
				h->channels[i] = h->channels[--h->num_channels];
			}
		}
		ret = hub_channel_new(h, name, cat) != NULL ? 1 : -1;
	} else if (ch->removed) {
		/* back: what it said before is out of reach (a reset) */
		channel_reopen(ch, cat->digest, unix_now());
		ret = 1;
	}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&h->writer);
	return ret;
}

void stream_hub_remove(struct stream_hub *h, const char *name)
{
	struct channel *ch, *all;
	char text[512], texta[512];
	struct events_revision last;
	uint64_t ns = listener_now_ns();

	pthread_mutex_lock(&h->writer);
	ch = channel_of(h, name);
	if (ch == NULL || ch->all || ch == h->channels[0] || ch->removed) {
		goto done; /* the default is never removed: it keeps its last good */
	}
	all = all_of(h);
	last = channel_current(ch);
	pthread_mutex_lock(&h->lock);
	ch->removed = true;
	tell(h, ch, ch->seq + 1,
	     channel_text_new(text, events_removed(text, sizeof(text), ch->boot, ch->seq + 1, ch->name,
					   &last)), ns);
	tell(h, all, all->seq + 1,
	     channel_text_new(texta, events_removed(texta, sizeof(texta), all->boot, all->seq + 1,
					    ch->name, &last)), ns);
	pthread_mutex_unlock(&h->lock);
done:
	pthread_mutex_unlock(&h->writer);
}

bool stream_hub_numbering(struct stream_hub *h, const char *name, char boot[EVENTS_BOOT_LEN + 1],
			  uint64_t *seq, char revision[CATALOG_DIGEST_LEN + 1])
{
	struct channel *ch;

	pthread_mutex_lock(&h->lock);
	ch = channel_of(h, name);
	if (ch != NULL) {
		memcpy(boot, h->boot, EVENTS_BOOT_LEN + 1);
		*seq = ch->seq;
		memcpy(revision, ch->revision, CATALOG_DIGEST_LEN + 1);
	}
	pthread_mutex_unlock(&h->lock);
	return ch != NULL;
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
