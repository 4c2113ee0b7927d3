/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * stream — the change streams of GET /v1/events, held open in
 * libmicrohttpd: who is listening, the last --revisions changes for a
 * Last-Event-ID replay (as deep as the catalogs held for revision=R),
 * heartbeats, a client that left, and the end of every stream at a drain.
 * What the events say is api/events.c's; each channel's numbering and
 * history ring, and the shared text of its events, are channel.c's.
 *
 * Each stream is a libmicrohttpd response read by a content callback.
 * With nothing to send the callback suspends its connection
 * (MHD_suspend_connection, which libmicrohttpd 0.9.75 allows from a
 * content callback) and returns 0: a suspended connection is out of MHD's
 * poll set, so an idle stream costs no CPU (returning 0 without suspending
 * would be called again at once, a busy loop). A change, a heartbeat that
 * falls due (stream_tick, from the listener's 100 ms tick), a client that
 * left, or the drain resumes it.
 *
 * A heartbeat on a plain HTTP/1.1 stream does not resume it: the tick
 * writes it straight to the suspended connection's socket, as one chunk
 * of the chunked body (stream_engine.send). The bytes on the wire are
 * known there: libmicrohttpd 0.9.75 sends a body of unknown size to an
 * HTTP/1.1 client chunked, and calls the content callback only with its
 * buffer empty, so a connection the callback suspended is between two
 * chunks, with nothing of its own left to send. Resuming it instead
 * costs a write to MHD's inter-thread channel, a walk of every suspended
 * connection, a poll, the callback and a suspend, for 20 bytes: with
 * 10,000 streams, a quarter of the idle CPU (bench/README.md). Where the
 * wire is not known that way (TLS, whose record layer is GnuTLS's state;
 * HTTP/1.0, whose body is not chunked) the stream is resumed as before.
 * A kernel with no room (EAGAIN: its client has left 16 KiB unread) also
 * means a resume: libmicrohttpd waits for room. A heartbeat the kernel
 * took only part of, or a socket that failed, ends the stream (its
 * client has left, or left its chunk torn: it reconnects with its
 * Last-Event-ID).
 *
 * A suspended connection neither times out nor notices a client that
 * left, so the hub keeps every stream's socket in an epoll set of its own
 * (EPOLLRDHUP, edge-triggered: a FIN, an RST or a half-close is reported
 * once), read without waiting by stream_tick: the stream is resumed and
 * ends (MHD_CONTENT_READER_END_WITH_ERROR), and its slot, memory and
 * count go at once, within a tick, not at the next heartbeat.
 *
 * Fan-out: a change is rendered once into a shared, reference-counted
 * text (channel.h) that the history holds and every stream sends from; a
 * stream holds a reference to the one text it is sending, never a copy,
 * so an idle stream costs about a hundred bytes here (libmicrohttpd's
 * connection and its memory pool are the rest: README, "Change
 * streams"). A stream whose client does not read holds one text at most
 * and holds up nobody (each write is the engine's, non-blocking). A
 * stream that has not taken more than half the history's changes
 * (lag_max: its client stopped reading and the socket's buffers are
 * full) is ended while the replay still reaches where its client stands:
 * a final comment saying why if its callback is called within
 * STREAM_CUT_GRACE_NS (the end of the response; an EventSource
 * reconnects with its Last-Event-ID and gets the changes it missed),
 * else the engine cuts its connection at the tick after that (cut).
 * Either way its slot and memory go.
 *
 * Channels (channel.h): every catalog has a stream of its own
 * (catalog=NAME), with its own seq, history and ids ("<seq>@<boot>", the
 * boot the default's for the default catalog, one derived from it and
 * the name for another, so no catalog's id reads as another's), and the
 * stream of every catalog (catalog=*, EVENTS_ALL) is one more channel:
 * each catalog's change once more, its data naming the catalog, under
 * ids of its own numbering. A catalog no longer served
 * (stream_hub_remove) ends its streams with a `removed` event; the
 * stream of every catalog says so and goes on. Heartbeats, the epoll
 * set, the lag rule and --max-streams are the hub's: over every
 * channel's streams together.
 *
 * Streams have their own cap (--max-streams): they are not in the
 * connection table (the server releases their slot when a stream opens),
 * so they never count against --max-connections nor get reclaimed as a
 * stuck answer.
 *
 * Locking: one mutex guards the history, the list of streams, the epoll
 * set's reading and every stream's state; held by the worker threads in
 * the content callback, by the reload's thread at a change and by the
 * listener's tick, each for a copy of an event's text at most (8 KiB) or
 * one pass over the streams. A channel's seq, revision and loaded_at, and
 * the list of channels, are written only under the hub's writer lock too
 * (stream_changed, stream_hub_add, stream_hub_remove: one writer at a
 * time), and then under the lock; a writer reads them unlocked and renders
 * the event (the diff) before it takes the lock.
 * Lock order: this mutex, then MHD's own (MHD_suspend/resume take it);
 * MHD calls no callback of ours holding it. stream_hub_init and
 * stream_hub_cleanup pair up; a stream is freed by libmicrohttpd's free
 * callback when its response is done (stream_join/stream_leave without
 * libmicrohttpd).
 */
#ifndef SPLITKD_STREAM_H
#define SPLITKD_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "catalog.h"
#include "channel.h"
#include "events.h"
#include "holder.h"

struct MHD_Connection;
struct MHD_Response;
struct stream;

/* Every catalog's channel and the one of them all. */
#define STREAM_MAX_CHANNELS (HOLDER_MAX_CATALOGS + 1)

/* How a stream's connection is paused and woken: libmicrohttpd's
 * suspend and resume, or a test's. Called under the hub's lock. */
struct stream_engine {
	void (*suspend)(void *conn);
	void (*resume)(void *conn);
	/* closes a stream whose client stopped reading (fd: its socket, or
	 * -1): libmicrohttpd's shuts the socket down, its connection then
	 * fails its next send and closes, and the stream is freed */
	void (*cut)(void *conn, int fd);
	/* writes a heartbeat's bytes straight to a suspended stream's socket
	 * without waiting: the count the kernel took, or -1 and errno */
	ssize_t (*send)(void *conn, int fd, const char *bytes, size_t len);
};

struct stream_hub {
	pthread_mutex_t lock;
	const struct stream_engine *engine;
	unsigned max_streams;
	uint64_t heartbeat_ns;
	pthread_mutex_t writer; /* one writer of the channels at a time (see above) */
	char boot[EVENTS_BOOT_LEN + 1]; /* this process, in every event id */
	struct channel *channels[STREAM_MAX_CHANNELS]; /* [0] the default's, [1] all (channel.h) */
	size_t num_channels;
	unsigned depth;                 /* changes held: --revisions */
	unsigned lag_max;               /* changes a stream may have not taken: depth / 2, at least 1 */
	unsigned behind;                /* streams ended for it, not yet cut nor gone */
	struct channel_text *heartbeat; /* the one comment every idle stream sends */
	char beat_chunk[32];            /* it as one HTTP/1.1 chunk, for stream_engine.send */
	size_t beat_chunk_len;
	struct stream *head, *tail;     /* open streams, the longest silent first */
	int epfd;                       /* every stream's socket, for a client that left */
	bool closing;                   /* draining: every stream ends */
	atomic_uint open;               /* for /metrics */
	atomic_uint_fast64_t events_sent; /* heartbeats not counted */
};

/* The hub for a server serving `cat` as its default catalog (seq 1) and
 * the stream of every catalog, replaying up to `depth` changes
 * (--revisions, at least 1), pausing streams through `engine` (NULL:
 * libmicrohttpd's). Returns 0, or -1 when the mutex, the epoll set or the
 * history cannot be made. */
int stream_hub_init(struct stream_hub *h, const struct catalog *cat, unsigned max_streams,
		    unsigned heartbeat_seconds, unsigned depth, const struct stream_engine *engine);
/*
 * Takes up the numbering a state directory kept (--state-dir): event ids
 * are "<seq>@<boot>" with this `boot`, and the changes between the held
 * revisions cats[0..n) (oldest first, seqs first_seq, first_seq + 1, ...;
 * the last is the catalog the hub serves) replay to a Last-Event-ID from
 * before the restart, as deep as the hub's depth. Before any stream
 * opens. Returns 0, or -1 when the last is not the hub's catalog or
 * first_seq is 0 (nothing changes).
 */
int stream_hub_resume(struct stream_hub *h, const char *boot, uint64_t first_seq,
		      const struct catalog *const *cats, size_t n);
/* The same for the channel of catalog `name` (stream_hub_add'ed), under
 * the hub's boot; with `name` EVENTS_ALL, cats is unused: the stream of
 * every catalog goes on past `first_seq` (the last it numbered), and an
 * id from before is a reset. */
int stream_hub_resume_named(struct stream_hub *h, const char *name, uint64_t first_seq,
			    const struct catalog *const *cats, size_t n);

/* A channel for catalog `name` now serving `cat` (seq 1), or, for one
 * removed earlier, its next seq (what lies before is a reset). Nothing
 * when there is one. Returns 1 (a channel new or back), 0 (there is
 * one), or -1 when out of memory or STREAM_MAX_CHANNELS have streams. */
int stream_hub_add(struct stream_hub *h, const char *name, const struct catalog *cat);
/* Catalog `name` is no longer served: its channel's last event says so
 * (and the stream of every catalog's), and its streams end after it. */
void stream_hub_remove(struct stream_hub *h, const char *name);
/* A channel's numbering now (NULL: the default's): its boot, seq and
 * revision, for the state directory. Returns false when there is none. */
bool stream_hub_numbering(struct stream_hub *h, const char *name, char boot[EVENTS_BOOT_LEN + 1],
			  uint64_t *seq, char revision[CATALOG_DIGEST_LEN + 1]);

/* After the daemons stopped: no stream is left. */
void stream_hub_cleanup(struct stream_hub *h);

enum stream_open_status {
	STREAM_OPENED,
	STREAM_FULL,
	STREAM_CLOSING,
	STREAM_NO_MEMORY,
	STREAM_NO_CHANNEL, /* the catalog has no stream (yet, or any more) */
};

/*
 * A new stream on `conn` (in its request callback): a response to queue
 * with status 200, or NULL with *status saying why (the cap is reached,
 * the server is draining, out of memory). `last_event_id` (the request's
 * Last-Event-ID, or NULL) picks what it sends first: the changes since,
 * a reset when those are not held, or hello. `direct`: its heartbeats
 * may be written straight to its socket (plain HTTP/1.1; see above). The
 * caller queues and destroys the response as any other.
 */
struct MHD_Response *stream_open(struct stream_hub *h, struct MHD_Connection *conn,
				 const char *catalog, const char *last_event_id, bool direct,
				 enum stream_open_status *status);

/*
 * What stream_open is made of, for a test without libmicrohttpd: a stream
 * on `conn` (given to the engine's suspend and resume) whose socket is
 * `fd` (watched for its client leaving; -1: not watched; with `direct`,
 * where the engine's send writes its heartbeats), or NULL with *status;
 * stream_join_named on the channel of `catalog` (NULL: the default's,
 * EVENTS_ALL: every catalog's). stream_read gives its next bytes at time
 * `now_ns` (listener_now_ns's clock): up to `max` of them, 0 when it has
 * nothing to say (it was suspended), or STREAM_READ_END (the drain: it
 * ends cleanly) or STREAM_READ_GONE (its client left). stream_leave frees
 * it.
 */
#define STREAM_READ_END ((ssize_t)-1)
#define STREAM_READ_GONE ((ssize_t)-2)
struct stream *stream_join(struct stream_hub *h, void *conn, int fd, bool direct,
			   const char *last_event_id, enum stream_open_status *status);
struct stream *stream_join_named(struct stream_hub *h, const char *catalog, void *conn, int fd,
				 bool direct, const char *last_event_id,
				 enum stream_open_status *status);
ssize_t stream_read(struct stream *s, char *buf, size_t max, uint64_t now_ns);
void stream_leave(struct stream *s);

/*
 * A catalog change (cls is the hub): the next seq, told to every stream
 * with the cells that changed from `before` to `after` (both alive for the
 * call); a reload of the same digest is none. Call after the swap (the
 * reload's notice of the default catalog's swap). stream_changed: the
 * same for catalog `name` (NULL: the default), told to its streams and to
 * those of every catalog; a catalog with no channel is none. Returns the
 * channel's seq after it (0: none).
 */
void stream_catalog_changed(void *cls, const struct catalog *before, const struct catalog *after);
uint64_t stream_changed(struct stream_hub *h, const char *name, const struct catalog *before,
			const struct catalog *after);

/* Ends every stream whose client left, sends or resumes every stream
 * whose heartbeat is due and cuts every stream ended for falling behind more
 * than STREAM_CUT_GRACE_NS ago (the listener's tick). Costs the streams
 * due, not all of them, but for a pass over them while one is behind. */
#define STREAM_CUT_GRACE_NS 1000000000u
void stream_tick(struct stream_hub *h, uint64_t now_ns);

/* The drain: every stream sends what it has, ends, and its connection
 * closes; no stream opens after. Idempotent. */
void stream_close_all(struct stream_hub *h);

#endif /* SPLITKD_STREAM_H */
