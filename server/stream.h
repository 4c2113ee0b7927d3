/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * stream — the change streams of GET /v1/events, held open in
 * libmicrohttpd: who is listening, the last --revisions changes for a
 * Last-Event-ID replay (as deep as the catalogs held for revision=R), heartbeats, and the end of every stream at a drain.
 * What the events say is api/events.c's.
 *
 * Each stream is a libmicrohttpd response read by a content callback.
 * With nothing to send the callback suspends its connection
 * (MHD_suspend_connection, which libmicrohttpd 0.9.75 allows from a
 * content callback) and returns 0: a suspended connection is out of MHD's
 * poll set, so an idle stream costs no CPU (returning 0 without suspending
 * would be called again at once, a busy loop). A change, a heartbeat that
 * falls due (stream_tick, from the listener's 100 ms tick) or the drain
 * resumes it. A suspended connection neither times out nor notices a
 * client that left; the next heartbeat does.
 *
 * Streams have their own cap (--max-streams): they are not in the
 * connection table (the server releases their slot when a stream opens),
 * so they never count against --max-connections nor get reclaimed as a
 * stuck answer.
 *
 * Locking: one mutex guards the history, the list of streams and every
 * stream's state; held by the worker threads in the content callback, by
 * the main thread at a change and by the listener's tick, each for a copy
 * of an event's text at most (8 KiB). seq, revision and loaded_at are
 * written only by stream_catalog_changed's one thread, under the lock,
 * which reads them unlocked and renders the event (the diff) before it
 * takes the lock. Lock order: this mutex, then MHD's own
 * (MHD_suspend/resume take it); MHD calls no callback of ours holding it.
 * stream_hub_init/stream_hub_cleanup pair up; a stream is freed by
 * libmicrohttpd's free callback when its response is done.
 */
#ifndef SPLITKD_STREAM_H
#define SPLITKD_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "events.h"

struct MHD_Connection;
struct MHD_Response;
struct stream;

/* One change as the history holds it: its rendered text. */
struct stream_change {
	uint64_t seq;
	size_t len;
	char text[EVENTS_TEXT_MAX];
};

struct stream_hub {
	pthread_mutex_t lock;
	unsigned max_streams;
	uint64_t heartbeat_ns;
	char boot[EVENTS_BOOT_LEN + 1]; /* this process, in every event id */
	uint64_t seq;                   /* events' number of the catalog: 1 at start */
	uint64_t floor; /* the oldest seq a replay starts from (stream_hub_resume's); 0: any */
	char revision[CATALOG_DIGEST_LEN + 1]; /* its digest */
	int64_t loaded_at;
	unsigned depth;               /* changes held: --revisions */
	struct stream_change *history; /* depth of them, seq s at s % depth */
	struct stream *head;           /* open streams */
	bool closing;                  /* draining: every stream ends */
	atomic_uint open;              /* for /metrics */
	atomic_uint_fast64_t events_sent; /* heartbeats not counted */
};

/* The hub for a server serving `cat` (seq 1), replaying up to `depth`
 * changes (--revisions, at least 1). Returns 0, or -1 when the mutex or
 * the history cannot be made. */
int stream_hub_init(struct stream_hub *h, const struct catalog *cat, unsigned max_streams,
		    unsigned heartbeat_seconds, unsigned depth);
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

/* After the daemons stopped: no stream is left. */
void stream_hub_cleanup(struct stream_hub *h);

enum stream_open_status { STREAM_OPENED, STREAM_FULL, STREAM_CLOSING, STREAM_NO_MEMORY };

/*
 * A new stream on `conn` (in its request callback): a response to queue
 * with status 200, or NULL with *status saying why (the cap is reached,
 * the server is draining, out of memory). `last_event_id` (the request's
 * Last-Event-ID, or NULL) picks what it sends first: the changes since,
 * a reset when those are not held, or hello. The caller queues and
 * destroys the response as any other.
 */
struct MHD_Response *stream_open(struct stream_hub *h, struct MHD_Connection *conn,
				 const char *last_event_id, enum stream_open_status *status);

/*
 * A catalog change (reload_listener_fn's shape: cls is the hub): the next
 * seq, told to every stream with the cells that changed from `before` to
 * `after` (both alive for the call); a reload of the same digest is none.
 * Call after the swap, from one thread at a time (main's reload).
 */
void stream_catalog_changed(void *cls, const struct catalog *before, const struct catalog *after);

/* Resumes every stream whose heartbeat is due (the listener's tick). */
void stream_tick(struct stream_hub *h, uint64_t now_ns);

/* The drain: every stream sends what it has, ends, and its connection
 * closes; no stream opens after. Idempotent. */
void stream_close_all(struct stream_hub *h);

#endif /* SPLITKD_STREAM_H */
