/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * conntab — every client connection splitkd holds, from accept to close:
 * who holds how many, what each is doing, and which one gives way when the
 * table is full.
 *
 * libmicrohttpd 0.9.75 has no deadline on a request's header block, no
 * minimum rate for its body and no way to reclaim a connection when full;
 * this table is where splitkd keeps what those need. The listener thread
 * admits connections (conntab_admit) and sweeps for deadlines
 * (conntab_sweep); the engines mark each request's phase on its
 * connection (conntab_mark) with relaxed atomic stores — no lock on the
 * request path.
 *
 * Admission when the table is full, in order (nginx reclaims idle
 * keep-alive connections; a newcomer must not be starved by one client):
 *   1. an idle keep-alive connection (a request answered, nothing since,
 *      for at least CONNTAB_IDLE_RECLAIM_MS) gives way, the longest idle
 *      first, whoever holds it;
 *   2. otherwise, when the client holding the most connections holds more
 *      than the newcomer's client would, that client's oldest unfinished
 *      request gives way (one that has not finished arriving, or a
 *      connection that never sent one), else its oldest connection;
 *   3. otherwise the newcomer is held (conntab_enter): accepted, unread,
 *      in a queue of at most limits.max_held, a client holding fewer
 *      connections than the heaviest one at its front, the rest first come
 *      first served; each is admitted as soon as a slot frees (or, at the
 *      front, as soon as a request of the heaviest client has stalled long
 *      enough to give way). The queue full, the server stops accepting
 *      and the kernel's listen queue holds the rest (back-pressure, as
 *      nginx's accept_disabled): a burst of connections that will leave
 *      the table within milliseconds (change streams) waits instead of
 *      being refused. A held connection is closed unanswered only when it
 *      has been held longer than the header deadline. The queue full, the
 *      accept goes on only when pausing would starve others (the table
 *      holds a connection a newcomer of another client would take: an
 *      idle one, or the heaviest client's stalled or kept-alive one, as
 *      under one client's busy keep-alive connections or a slowloris);
 *      then a newcomer the table cannot take is refused at once, as
 *      before, so the accept keeps seeing the clients behind it.
 * Reclaiming spares what is about to finish: a request whose header block
 * or body has arrived for less than CONNTAB_SLOW_MS, or a new connection
 * that has not waited CONNTAB_IDLE_RECLAIM_MS for its request to be read,
 * is not unfinished, and a connection that has answered nothing yet (nor
 * been answering for CONNTAB_SLOW_MS) is never taken as merely the oldest.
 * A connection splitkd closes is shut down (shutdown(2), which wakes
 * libmicrohttpd) and stops counting against the limit at once; its slot
 * is freed when libmicrohttpd reports the close (conntab_release), before
 * the descriptor is closed, so a descriptor is never shut down after reuse.
 *
 * Locking: one mutex guards slots, client counts and the closing flags;
 * held by the listener for admission and sweeps and by conntab_release.
 * The phase fields are atomics.
 */
#ifndef SPLITKD_CONNTAB_H
#define SPLITKD_CONNTAB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CONNTAB_IDLE_RECLAIM_MS 1000u /* idle this long before it may be reclaimed */
#define CONNTAB_STUCK_REPLY_MS 1000u  /* an answer still being sent after this is unfinished */
#define CONNTAB_SLOW_MS 20u           /* a header block or body arriving this long is unfinished */

/* What a connection's current request is doing. */
enum conntab_phase {
	CONNTAB_WAITING, /* no request line yet: new, or between requests */
	CONNTAB_HEADERS, /* request line read, header block still arriving */
	CONNTAB_BODY,    /* headers done, body arriving */
	CONNTAB_REPLY,   /* answering */
};

/* Why splitkd closed or refused a connection; the metrics labels. */
enum conntab_reason {
	CONNTAB_HEADER_TIMEOUT,
	CONNTAB_BODY_TIMEOUT,
	CONNTAB_RECLAIMED_IDLE,
	CONNTAB_RECLAIMED_UNFINISHED,
	CONNTAB_REFUSED_FULL,
	CONNTAB_REFUSED_PER_CLIENT,
	CONNTAB_REASON_COUNT
};

/* The reason's name, as /metrics labels it ("header_timeout", ...). */
const char *conntab_reason_name(enum conntab_reason why);

struct conntab_conn {
	/* guarded by the table lock */
	int fd;
	bool live;
	bool closing; /* shut down by splitkd; no longer counted */
	unsigned client; /* index into the client table */
	unsigned engine; /* which engine serves it */
	uint64_t accepted_ns;
	/* written by the engine serving the connection, read by sweeps */
	atomic_int phase;
	atomic_uint_fast64_t since_ns;   /* when the phase began */
	atomic_uint_fast64_t body_bytes; /* of the current request's body */
	atomic_uint requests;            /* answered on this connection */
	/* the sweeper's own notes on a waiting connection */
	unsigned swept_requests;
	uint64_t rx_baseline;
	uint64_t arriving_since; /* first bytes of a request line seen; 0: none */
};

struct conntab_client {
	unsigned char addr[16]; /* IPv6, or IPv4-mapped */
	unsigned count;
};

struct conntab_limits {
	unsigned max_connections;
	unsigned per_client; /* 0: none */
	unsigned engines;    /* engines to spread connections over */
	uint64_t header_timeout_ns;
	uint64_t body_timeout_ns;
	uint64_t body_min_rate; /* bytes a second; 0: none */
	/* TLS: a connection that has not finished a request yet counts every
	 * byte since accept as its request arriving, so the handshake is
	 * under the header deadline too (nginx's client_header_timeout) */
	bool from_accept;
	/* connections held while the table is full (conntab_enter); 0: none,
	 * a newcomer the table cannot take is refused (conntab_admit) */
	unsigned max_held;
};

/* A connection accepted while the table was full, not admitted yet. */
struct conntab_held {
	int fd;
	socklen_t len;
	uint64_t since_ns; /* accepted */
	struct sockaddr_storage addr;
};

/* What became of a newcomer, or of the held queue's front. */
enum conntab_entry {
	CONNTAB_ENTERED,   /* admitted: hand it to its engine */
	CONNTAB_HELD,      /* held (the table keeps the descriptor), or the front must wait */
	CONNTAB_HOLD_FULL, /* held, and the queue is full now: accept no more */
	CONNTAB_REFUSED,   /* refused or its hold ended (counted): close the descriptor */
	CONNTAB_NONE_HELD, /* conntab_next_held: nothing is held */
};

/* Asks the accepting thread to move the held queue along (a slot freed). */
typedef void conntab_kick_fn(void *cls);

struct conntab {
	pthread_mutex_t lock;
	struct conntab_limits limits;
	struct conntab_conn *conns;
	size_t cap;     /* slots: max_connections plus room for closing ones */
	unsigned count; /* live and not closing */
	size_t live;    /* live slots, closing ones too */
	struct conntab_client *clients;
	size_t client_cap;
	unsigned *engine_load; /* connections per engine */
	unsigned heavy;        /* the client holding the most, unless heavy_stale */
	bool heavy_stale;
	uint64_t idle_check_ns; /* no connection can be idle long enough before this */
	/* the held queue: a ring of limits.max_held, its front at held_head */
	struct conntab_held *held;
	size_t held_head, held_count;
	bool shedding;          /* the held queue is full and must not stop the accept */
	uint64_t shed_check_ns; /* when to look at the table again for that */
	conntab_kick_fn *kick;  /* called under the lock, so it cannot outlive a clear */
	void *kick_cls;
	atomic_uint_fast64_t closed[CONNTAB_REASON_COUNT];
};

/* Returns 0, or -1 when out of memory. */
int conntab_init(struct conntab *t, const struct conntab_limits *limits);
void conntab_cleanup(struct conntab *t);

/* A client's key: its address without the port, IPv4 as IPv4-mapped IPv6
 * (all zero for NULL or another family). */
void conntab_client_key(const struct sockaddr *addr, unsigned char out[16]);
/* A client key's bits mixed, for a hash table of clients (its high bits
 * are the well mixed ones). */
uint64_t conntab_client_mix(const unsigned char key[16]);

/*
 * Admits a new connection from `addr` on `fd`, reclaiming one if the table
 * is full (see above). Returns the connection (its engine chosen: the
 * least loaded), or NULL when refused, with *why set. Shuts down a
 * reclaimed connection itself, under the lock.
 */
struct conntab_conn *conntab_admit(struct conntab *t, int fd, const struct sockaddr *addr,
				   uint64_t now_ns, enum conntab_reason *why);

/*
 * Admits a new connection, or holds it while the table is full (see
 * above). ENTERED: *c is its slot; HELD or HOLD_FULL: the table owns fd
 * until conntab_next_held hands it back; REFUSED: *why is counted, the
 * caller closes fd. Called by the accepting thread only.
 */
enum conntab_entry conntab_enter(struct conntab *t, int fd, const struct sockaddr *addr,
				 socklen_t len, uint64_t now_ns, struct conntab_conn **c,
				 enum conntab_reason *why);

/*
 * The held queue's front, moved along: ENTERED (admitted now: *h is its
 * descriptor and address, *c its slot), REFUSED (its hold ended, counted:
 * the caller closes h->fd), HELD (it must wait) or NONE_HELD. The
 * accepting thread calls it until it says HELD or NONE_HELD.
 */
enum conntab_entry conntab_next_held(struct conntab *t, uint64_t now_ns, struct conntab_held *h,
				     struct conntab_conn **c);

/* Whether the accepting thread may accept: the held queue has room, or a
 * pause would starve other clients (see above). *held: how many are held. */
bool conntab_may_accept(struct conntab *t, uint64_t now_ns, size_t *held);

/* Connections held now. */
size_t conntab_held(struct conntab *t);

/* Who to ask when a slot frees while connections are held; NULL: nobody
 * (from then on, also for a release running now). */
void conntab_on_room(struct conntab *t, conntab_kick_fn *kick, void *cls);

/* The connection on fd, or NULL (called once per connection, at start). */
struct conntab_conn *conntab_find(struct conntab *t, int fd);

/* Frees a connection's slot: libmicrohttpd has closed it, or never took it. */
void conntab_release(struct conntab *t, struct conntab_conn *c);

/* A request's phase changes (its engine; lock-free). */
static inline void conntab_mark(struct conntab_conn *c, enum conntab_phase phase, uint64_t now_ns)
{
	atomic_store_explicit(&c->since_ns, now_ns, memory_order_relaxed);
	atomic_store_explicit(&c->phase, (int)phase, memory_order_relaxed);
}

/* Reads the bytes a socket has received in all (TCP_INFO), for the
 * sweep's view of a request line that is still arriving; -1 when unknown.
 * A function pointer so unit tests can stand in for the kernel. */
typedef int64_t conntab_rx_fn(int fd);

/*
 * Closes every connection that missed its deadline: a header block not
 * complete within header_timeout of its first byte, a body slower than
 * body_timeout + body_bytes / body_min_rate. Returns how many it closed.
 * `rx` NULL: request lines still arriving are not checked.
 */
unsigned conntab_sweep(struct conntab *t, uint64_t now_ns, conntab_rx_fn *rx);

/* Draining: shuts down every connection between requests that has
 * answered one; with `fresh`, also those that never sent a request. */
unsigned conntab_close_idle(struct conntab *t, bool fresh);

/* Whether splitkd itself shut this connection down. */
bool conntab_closing(struct conntab *t, const struct conntab_conn *c);

/* Connections being served (not counting those splitkd is closing). */
unsigned conntab_count(struct conntab *t);

#endif /* SPLITKD_CONNTAB_H */
